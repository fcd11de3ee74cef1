// SPDX-License-Identifier: Apache-2.0
// The memory-bound ops' model (memory_op_time_s) against hand computations on an H100's basis.
#include "roofline/gemm_model.hpp"
#include "roofline/lowering.hpp"
#include "roofline/memory_op_model.hpp"
#include "roofline/network.hpp"
#include "roofline/perf_model.hpp"
#include "roofline/spec_catalog.hpp"

#include <doctest/doctest.h>

using namespace roofline;

namespace {

const gpu_spec &h100() {
  static const gpu_spec basis = model_basis(spec_catalog::builtin().resolve("h100"));
  return basis;
}

model_parameters with(memory_op_kind kind, double floor_s, double efficiency) {
  model_parameters p;
  p.set(memory_parameter_at(parameter::memory_floor_s, kind), floor_s);
  p.set(memory_parameter_at(parameter::memory_efficiency, kind), efficiency);
  return p;
}

} // namespace

TEST_CASE("a memory-bound kernel: its floor plus its bytes, from L2 when small, DRAM when not") {
  const model_parameters p = with(memory_op_kind::rmsnorm, 3e-6, 0.5);
  const double dram = h100().dram_bytes_per_s, l2 = l2_bytes_per_s(h100(), p);
  const double l2_size = static_cast<double>(h100().l2_bytes);
  REQUIRE(l2 > dram);
  // Bytes that fill L2 or more: DRAM's rate.
  const auto big = static_cast<std::int64_t>(4 * h100().l2_bytes);
  CHECK(memory_op_time_s(memory_op_kind::rmsnorm, big, h100(), p) ==
        doctest::Approx(3e-6 + static_cast<double>(big) / (0.5 * dram)));
  // A quarter of L2: three quarters of the way from DRAM's rate to L2's.
  const double quarter = l2_size / 4;
  CHECK(memory_op_time_s(memory_op_kind::rmsnorm, static_cast<std::int64_t>(quarter), h100(), p) ==
        doctest::Approx(3e-6 + quarter / (0.5 * (dram + 0.75 * (l2 - dram)))).epsilon(1e-6));
  // No bytes: the floor alone.
  CHECK(memory_op_time_s(memory_op_kind::rmsnorm, 0, h100(), p) == doctest::Approx(3e-6));
  // Each kind has its own: another kind's parameters are not read.
  CHECK(memory_op_time_s(memory_op_kind::relu, 0, h100(), p) ==
        doctest::Approx(p[memory_parameter_at(parameter::memory_floor_s, memory_op_kind::relu)]));
}

TEST_CASE("two kinds of one size are predicted each with its own parameters (the memo keeps them "
          "apart)") {
  // layernorm and gelu cost alike per element: the memo once gave the second layernorm gelu's time.
  const network net = parse_network("name: t\nbatch: 512\nlayers:\n"
                                    "  - {name: ln, type: layernorm, features: 4096}\n"
                                    "  - {name: ge, type: gelu, features: 4096}\n"
                                    "  - {name: ln2, type: layernorm, features: 4096}\n",
                                    "t.yaml");
  const std::vector<op> ops = lower(net);
  REQUIRE(ops.size() == 3);
  const perf_model model(spec_catalog::builtin().resolve("h100"));
  const double ln = model.predict(ops[0]).device_time_s, ge = model.predict(ops[1]).device_time_s;
  CHECK(ln != ge);
  CHECK(model.predict(ops[2]).device_time_s == ln);
}

TEST_CASE("an op run unfused: its kernels, each an elementwise pass over its share of the bytes") {
  model_parameters p = with(memory_op_kind::mul, 1.5e-6, 0.9);
  p.set(memory_parameter_at(parameter::memory_floor_s, memory_op_kind::rmsnorm), 3e-6);
  const auto big = static_cast<std::int64_t>(8 * h100().l2_bytes); // each kernel's share: 1 × L2
  const double share = static_cast<double>(big / 8);
  // 8 kernels at mul's floor, each streaming one L2's worth from DRAM at mul's efficiency; the
  // rmsnorm's own parameters play no part.
  CHECK(memory_op_time_s(memory_op_kind::rmsnorm, big, h100(), p, 8) ==
        doctest::Approx(8 * (1.5e-6 + share / (0.9 * h100().dram_bytes_per_s))));
  CHECK(memory_op_time_s(memory_op_kind::rmsnorm, big, h100(), p, 8) ==
        doctest::Approx(8 * memory_op_time_s(memory_op_kind::mul, big / 8, h100(), p)));
  // Unfused, a small op pays 8 floors where the fused kernel pays one.
  CHECK(memory_op_time_s(memory_op_kind::rmsnorm, 1024, h100(), p, 8) > 8 * 1.5e-6);
  CHECK(memory_op_time_s(memory_op_kind::rmsnorm, 1024, h100(), p) < 3.1e-6);
}
