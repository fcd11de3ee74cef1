// SPDX-License-Identifier: Apache-2.0
// roofline/model/gemm.hpp: FLOP and byte counts of a GEMM, overflow detection, gradient shapes.
#include "roofline/model/gemm.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <limits>

using roofline::gemm_shape;
using roofline::precision;

namespace {
constexpr std::int64_t pow2(int e) {
  return std::int64_t{1} << e;
}
} // namespace

TEST_CASE("gemm_flops is 2·M·N·K·batch_count") {
  // 2 · 128 · 256 · 512 · 3 = 2 · 16,777,216 · 3 = 100,663,296
  CHECK(roofline::gemm_flops({128, 256, 512, 3}) == std::int64_t{100'663'296});
  // batch_count defaults to 1: 2 · 4 · 5 · 6 = 240
  CHECK(roofline::gemm_flops({4, 5, 6}) == std::int64_t{240});
  CHECK(roofline::gemm_flops({1, 1, 1, 1}) == std::int64_t{2});
}

TEST_CASE("gemm_min_bytes is element size × (M·K + K·N + M·N) × batch_count") {
  const gemm_shape s{128, 256, 512, 3};
  // M·K + K·N + M·N = 65,536 + 131,072 + 32,768 = 229,376 elements per GEMM, × 3 GEMMs = 688,128
  CHECK(roofline::gemm_min_bytes(s, precision::fp64) == std::int64_t{5'505'024}); // × 8
  CHECK(roofline::gemm_min_bytes(s, precision::fp32) == std::int64_t{2'752'512}); // × 4
  CHECK(roofline::gemm_min_bytes(s, precision::tf32) == std::int64_t{2'752'512}); // × 4
  CHECK(roofline::gemm_min_bytes(s, precision::fp16) == std::int64_t{1'376'256}); // × 2
  CHECK(roofline::gemm_min_bytes(s, precision::bf16) == std::int64_t{1'376'256}); // × 2
  CHECK(roofline::gemm_min_bytes(s, precision::fp8) == std::int64_t{688'128});    // × 1
  CHECK(roofline::gemm_min_bytes(s, precision::int8) == std::int64_t{688'128});   // × 1
  // A 1024³ fp16 GEMM: 2 · 3 · 2^20 = 6,291,456 bytes
  CHECK(roofline::gemm_min_bytes({1024, 1024, 1024}, precision::fp16) == std::int64_t{6'291'456});
}

TEST_CASE("gemm_flops returns nullopt when 2·M·N·K·batch_count overflows 64 bits") {
  // m = n = k = 2^22: 2 · 2^66 = 2^67 > 2^63 - 1
  const gemm_shape huge{pow2(22), pow2(22), pow2(22), 1};
  CHECK_FALSE(roofline::gemm_flops(huge).has_value());
  // ...while its bytes still fit: 2 · 3 · 2^44 = 105,553,116,266,496
  CHECK(roofline::gemm_min_bytes(huge, precision::fp16) == std::int64_t{105'553'116'266'496});

  // The boundary: 2 · 2^60 · 2 = 2^62 fits; 2 · 2^60 · 4 = 2^63 does not (INT64_MAX = 2^63 - 1).
  CHECK(roofline::gemm_flops({pow2(20), pow2(20), pow2(20), 2}) == pow2(62));
  CHECK_FALSE(roofline::gemm_flops({pow2(20), pow2(20), pow2(20), 4}).has_value());
  // The batch count alone can overflow it: 2 · 2^62 = 2^63.
  CHECK_FALSE(roofline::gemm_flops({1, 1, 1, pow2(62)}).has_value());
}

TEST_CASE("gemm_min_bytes returns nullopt when the byte count overflows 64 bits") {
  // M = K = 2^30, N = 1 in fp64: FLOPs 2 · 2^60 = 2^61 fit, but
  // bytes 8 · (2^60 + 2^30 + 2^30) > 2^63 do not.
  const gemm_shape tall{pow2(30), 1, pow2(30), 1};
  CHECK(roofline::gemm_flops(tall) == pow2(61));
  CHECK_FALSE(roofline::gemm_min_bytes(tall, precision::fp64).has_value());
  // The same shape in fp8 fits: 2^60 + 2^31 bytes.
  CHECK(roofline::gemm_min_bytes(tall, precision::fp8) == pow2(60) + pow2(31));

  // One operand's element count overflows: M·K = 2^32 · 2^32 = 2^64.
  CHECK_FALSE(roofline::gemm_min_bytes({pow2(32), 1, pow2(32), 1}, precision::int8).has_value());
  // The sum overflows: 3 · 2^62 elements (M = N = K = 2^31) in int8.
  CHECK_FALSE(
      roofline::gemm_min_bytes({pow2(31), pow2(31), pow2(31), 1}, precision::int8).has_value());
  // The batch count overflows it: 3 elements · 2^62 GEMMs.
  CHECK_FALSE(roofline::gemm_min_bytes({1, 1, 1, pow2(62)}, precision::int8).has_value());
}

TEST_CASE("data_grad_shape of (M, N, K) is (M, K, N) with the same batch_count") {
  const gemm_shape g = roofline::data_grad_shape({128, 256, 512, 3});
  CHECK(g.m == 128);
  CHECK(g.n == 512);
  CHECK(g.k == 256);
  CHECK(g.batch_count == 3);
}

TEST_CASE("weight_grad_shape of (M, N, K) is (K, N, M) with the same batch_count") {
  const gemm_shape g = roofline::weight_grad_shape({128, 256, 512, 3});
  CHECK(g.m == 512);
  CHECK(g.n == 256);
  CHECK(g.k == 128);
  CHECK(g.batch_count == 3);
}

TEST_CASE("both gradient GEMMs have the forward GEMM's FLOPs and bytes") {
  // Each pass touches the same three matrices (M·K, K·N, M·N), only in other roles.
  for (const gemm_shape &fwd : {gemm_shape{128, 256, 512, 3}, gemm_shape{1, 4096, 11008, 1},
                                gemm_shape{512, 512, 64, 24}}) {
    CAPTURE(fwd.m);
    CAPTURE(fwd.n);
    CAPTURE(fwd.k);
    const auto flops = roofline::gemm_flops(fwd);
    const auto bytes = roofline::gemm_min_bytes(fwd, precision::fp16);
    REQUIRE(flops.has_value());
    CHECK(roofline::gemm_flops(roofline::data_grad_shape(fwd)) == flops);
    CHECK(roofline::gemm_flops(roofline::weight_grad_shape(fwd)) == flops);
    CHECK(roofline::gemm_min_bytes(roofline::data_grad_shape(fwd), precision::fp16) == bytes);
    CHECK(roofline::gemm_min_bytes(roofline::weight_grad_shape(fwd), precision::fp16) == bytes);
  }
  // By hand for the first: 100,663,296 FLOPs each.
  CHECK(roofline::gemm_flops(roofline::weight_grad_shape({128, 256, 512, 3})) ==
        std::int64_t{100'663'296});
}
