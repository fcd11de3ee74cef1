// SPDX-License-Identifier: Apache-2.0
// The fused attention model (estimate_attention): each cost term against a hand computation on
// an H100's basis, with the parameters set so that one term shows at a time.
#include "roofline/analysis/lowering.hpp"
#include "roofline/input/network.hpp"
#include "roofline/model/attention_model.hpp"
#include "roofline/model/spec_catalog.hpp"

#include <doctest/doctest.h>

#include <cmath>

using namespace roofline;

namespace {

const gpu_spec &h100() {
  static const gpu_spec basis = model_basis(spec_catalog::builtin().resolve("h100"));
  return basis;
}

/// Every fixed cost 0, whole waves, no imbalance: the tiles' work alone.
model_parameters plain() {
  model_parameters p;
  for (const int d : attention_head_dims) {
    p.set(attention_efficiency_at(d), 0.5);
    p.set(attention_efficiency_at(d, parameter::attention_backward_efficiency), 0.5);
    p.set(attention_efficiency_at(d, parameter::attention_decode_dram_efficiency), 1);
  }
  p.set(parameter::attention_tile_overhead_s, 0);
  p.set(parameter::attention_backward_tile_overhead_s, 0);
  p.set(parameter::attention_kernel_overhead_s, 0);
  p.set(parameter::attention_wave_quantization, 1);
  p.set(parameter::attention_causal_imbalance, 0);
  p.set(parameter::attention_masked_block_cost, 1);
  p.set(parameter::attention_dram_efficiency, 1);
  p.set(parameter::attention_backward_dram_efficiency, 1);
  p.set(parameter::attention_decode_overhead_s, 0);
  p.set(parameter::attention_decode_floor_s, 0);
  p.set(parameter::attention_decode_chunk, 256);
  return p;
}

/// One SM's time for one 128 × `keys` block of head dim `d` at half the fp16 peak.
double block_s(double keys, double d) {
  return 4.0 * 128 * keys * d / (0.5 * h100().peak_flop_per_s(precision::fp16) / h100().sm_count);
}

} // namespace

TEST_CASE("prefill: one wave of tiles each walking every key block") {
  // 132 heads × 1 query tile = 132 tiles: one wave on 132 SMs; 1024 keys = 8 blocks each.
  const attention_shape s{1, 132, 132, 128, 1024, 128, false};
  const attention_estimate e = estimate_attention(s, precision::fp16, 1000, h100(), plain());
  CHECK_FALSE(e.decode);
  CHECK(e.tiles == 132);
  CHECK(e.waves == doctest::Approx(1.0));
  CHECK(e.math_s == doctest::Approx(8 * block_s(128, 128)));
  CHECK(e.device_time_s == doctest::Approx(e.math_s)); // 1000 bytes stream in no time
  // Twice the heads: two waves, twice the time; 1.5 waves cost 2 at full quantization, 1.5 at 0.
  const attention_shape twice{1, 264, 264, 128, 1024, 128, false};
  CHECK(estimate_attention(twice, precision::fp16, 1000, h100(), plain()).math_s ==
        doctest::Approx(16 * block_s(128, 128)));
  const attention_shape half_more{1, 198, 198, 128, 1024, 128, false};
  CHECK(estimate_attention(half_more, precision::fp16, 1000, h100(), plain()).math_s ==
        doctest::Approx(16 * block_s(128, 128)));
  model_parameters blunt = plain();
  blunt.set(parameter::attention_wave_quantization, 0);
  CHECK(estimate_attention(half_more, precision::fp16, 1000, h100(), blunt).math_s ==
        doctest::Approx(12 * block_s(128, 128)));
}

TEST_CASE("prefill: never faster than streaming its bytes; fixed costs added") {
  const attention_shape s{1, 132, 132, 128, 1024, 128, false};
  const double bytes = 1e9; // 1 GB at 3.35 TB/s: 298 µs, far above the products
  model_parameters p = plain();
  p.set(parameter::attention_dram_efficiency, 0.5);
  p.set(parameter::attention_kernel_overhead_s, 2e-6);
  p.set(parameter::attention_tile_overhead_s, 1e-6);
  const attention_estimate e = estimate_attention(s, precision::fp16, 1e9, h100(), p);
  CHECK(e.stream_s == doctest::Approx(bytes / (0.5 * h100().dram_bytes_per_s)));
  CHECK(e.device_time_s == doctest::Approx(e.stream_s + 2e-6 + 1 * 1e-6)); // one wave
}

TEST_CASE("causal prefill: masked key blocks skipped, the cut one costing more") {
  // One head, 512 queries against 512 keys: 4 query tiles seeing 1, 2, 3 and 4 key blocks.
  const attention_shape s{1, 1, 1, 512, 512, 128, true};
  const attention_estimate e = estimate_attention(s, precision::fp16, 1000, h100(), plain());
  CHECK(e.tiles == 4);
  CHECK(e.skipped == doctest::Approx(1 - 10.0 / 16));
  // 4 tiles on 132 SMs: the longest tile (4 blocks) sets the time.
  CHECK(e.math_s == doctest::Approx(4 * block_s(128, 128)));
  // Over many waves the mean tile (2.5 blocks) sets it, plus the longest's excess × imbalance.
  const attention_shape many{132, 4, 4, 512, 512, 128, true}; // 2112 tiles: 16 waves
  model_parameters p = plain();
  CHECK(estimate_attention(many, precision::fp16, 1000, h100(), p).math_s ==
        doctest::Approx(2.5 * 16 * block_s(128, 128)));
  p.set(parameter::attention_causal_imbalance, 2);
  CHECK(estimate_attention(many, precision::fp16, 1000, h100(), p).math_s ==
        doctest::Approx((2.5 * 16 + 1.5 * 2) * block_s(128, 128)));
  // The block the mask cuts through at 1.5 blocks: tiles of 1.5, 2.5, 3.5 and 4.5.
  p = plain();
  p.set(parameter::attention_masked_block_cost, 1.5);
  CHECK(estimate_attention(s, precision::fp16, 1000, h100(), p).math_s ==
        doctest::Approx(4.5 * block_s(128, 128)));
}

TEST_CASE("a sliding window skips the blocks before it; head dim 256 takes blocks of 64 keys") {
  // Causal, window 128, 256 queries of 256 keys (blocks of 64 at head dim 256): the tile of rows
  // 0-127 sees keys 0-127 (2 blocks), the tile of rows 128-255 keys 1-255 (4 blocks, from 0).
  const attention_shape s{1, 1, 1, 256, 256, 256, true, 128};
  const attention_estimate e = estimate_attention(s, precision::fp16, 1000, h100(), plain());
  CHECK(e.math_s == doctest::Approx(4 * block_s(64, 256)));
  CHECK(e.skipped == doctest::Approx(1 - 6.0 / 8));
}

TEST_CASE("head dims between the fitted ones interpolate in log2") {
  model_parameters p = plain();
  p.set(attention_efficiency_at(64), 0.4);
  p.set(attention_efficiency_at(128), 0.6);
  const attention_shape d96{1, 132, 132, 128, 1024, 96, false};
  const double efficiency = 0.4 + (std::log2(96.0) - 6) * 0.2; // 0.517
  const double expected =
      8 * 4.0 * 128 * 128 * 96 / (efficiency * h100().peak_flop_per_s(precision::fp16) / 132);
  CHECK(estimate_attention(d96, precision::fp16, 1000, h100(), p).math_s ==
        doctest::Approx(expected));
}

TEST_CASE("decode: the KV cache streamed by its chunks, slower when they do not fill the SMs") {
  // 8 key/value heads × 4096 keys in chunks of 256 = 128 chunks: 128/132 of the SMs.
  const attention_shape s{1, 32, 8, 1, 4096, 128, false};
  const double bytes = 2.0 * 8 * 4096 * 128 * 2; // K and V, fp16
  const attention_estimate e =
      estimate_attention(s, precision::fp16, static_cast<std::int64_t>(bytes), h100(), plain());
  CHECK(e.decode);
  CHECK(e.tiles == 128);
  CHECK(e.stream_s == doctest::Approx(bytes / (h100().dram_bytes_per_s * 128.0 / 132)));
  // A batch of 2 fills them: the full rate.
  const attention_shape two{2, 32, 8, 1, 4096, 128, false};
  CHECK(estimate_attention(two, precision::fp16, static_cast<std::int64_t>(2 * bytes), h100(),
                           plain())
            .stream_s == doctest::Approx(2 * bytes / h100().dram_bytes_per_s));
  // Its own streaming rate by head dim: half the rate, twice the time.
  model_parameters slow = plain();
  slow.set(attention_efficiency_at(128, parameter::attention_decode_dram_efficiency), 0.5);
  CHECK(estimate_attention(two, precision::fp16, static_cast<std::int64_t>(2 * bytes), h100(), slow)
            .stream_s == doctest::Approx(4 * bytes / h100().dram_bytes_per_s));
  // The floor holds a tiny call; the combine is added to a long one.
  model_parameters p = plain();
  p.set(parameter::attention_decode_floor_s, 5e-6);
  p.set(parameter::attention_decode_overhead_s, 1e-6);
  const attention_shape tiny{1, 8, 1, 1, 128, 128, false};
  CHECK(estimate_attention(tiny, precision::fp16, 65536, h100(), p).device_time_s ==
        doctest::Approx(5e-6));
  CHECK(estimate_attention(two, precision::fp16, static_cast<std::int64_t>(2 * bytes), h100(), p)
            .device_time_s == doctest::Approx(2 * bytes / h100().dram_bytes_per_s + 1e-6));
}

TEST_CASE("decode: a cost per wave of chunks, a grouped CTA's own, and a group too large run a "
          "CTA per query head") {
  // 33 samples × 8 key/value heads of 256 keys: 264 one-chunk CTAs, 2 waves on 132 SMs.
  model_parameters p = plain();
  p.set(parameter::attention_decode_wave_overhead_s, 1e-6);
  p.set(parameter::attention_decode_group_wave_overhead_s, 3e-6);
  const attention_shape mha{33, 8, 8, 1, 256, 128, false};
  const attention_estimate e = estimate_attention(mha, precision::fp16, 1000, h100(), p);
  CHECK(e.tiles == 264);
  CHECK(e.overhead_s == doctest::Approx(2 * 1e-6));
  // 32 query heads on the 8: groups of 4, the same CTAs at the grouped kernel's cost.
  const attention_shape gqa{33, 32, 8, 1, 256, 128, false};
  CHECK(estimate_attention(gqa, precision::fp16, 1000, h100(), p).overhead_s ==
        doctest::Approx(2 * 3e-6));
  // Groups above attention_decode_max_group: a CTA per query head, 33 × 32 = 1056 (8 waves).
  p.set(parameter::attention_decode_max_group, 2);
  const attention_estimate per_head = estimate_attention(gqa, precision::fp16, 1000, h100(), p);
  CHECK(per_head.tiles == 1056);
  CHECK(per_head.overhead_s == doctest::Approx(8 * 1e-6));
}

TEST_CASE("prefill: streaming not hidden under the math but for attention_stream_overlap") {
  // One wave of 132 tiles of 8 key blocks; 1 GB streamed at the DRAM's rate, longer than the math.
  const attention_shape s{1, 132, 132, 128, 1024, 128, false};
  model_parameters p = plain();
  const double bytes = 1e9;
  const double math = 8 * block_s(128, 128), stream = bytes / h100().dram_bytes_per_s;
  REQUIRE(stream > math);
  CHECK(estimate_attention(s, precision::fp16, 1000000000, h100(), p).device_time_s ==
        doctest::Approx(stream));
  p.set(parameter::attention_stream_overlap, 0.25);
  CHECK(estimate_attention(s, precision::fp16, 1000000000, h100(), p).device_time_s ==
        doctest::Approx(stream + 0.75 * math));
}

TEST_CASE("a warm call whose bytes fit in L2 streams attention_l2_speedup times faster") {
  // Decode of 2 × 8 heads × 4096 keys: 33.5 MB of K and V, under the H100's 50 MiB of L2.
  const attention_shape two{2, 32, 8, 1, 4096, 128, false};
  const double bytes = 2 * 2.0 * 8 * 4096 * 128 * 2;
  REQUIRE(bytes < h100().l2_bytes);
  model_parameters p = plain();
  p.set(parameter::attention_l2_speedup, 4);
  const auto stream = [&](const attention_shape &s, double b, cache_state cache) {
    return estimate_attention(s, precision::fp16, static_cast<std::int64_t>(b), h100(), p, cache)
        .stream_s;
  };
  CHECK(stream(two, bytes, cache_state::warm) ==
        doctest::Approx(bytes / (4 * h100().dram_bytes_per_s)));
  // Cold (a step's other layers evicted it), or larger than L2: from DRAM.
  CHECK(stream(two, bytes, cache_state::cold) == doctest::Approx(bytes / h100().dram_bytes_per_s));
  const attention_shape eight{8, 32, 8, 1, 4096, 128, false};
  CHECK(stream(eight, 4 * bytes, cache_state::warm) ==
        doctest::Approx(4 * bytes / h100().dram_bytes_per_s));
}

TEST_CASE("backward: 2.5x the products at its own rate, its traffic added, not overlapped") {
  attention_shape s{1, 132, 132, 128, 1024, 128, false};
  s.backward = true;
  model_parameters p = plain();
  p.set(attention_efficiency_at(128, parameter::attention_backward_efficiency), 0.25);
  p.set(parameter::attention_backward_dram_efficiency, 0.5);
  const double bytes = 1e8;
  const attention_estimate e = estimate_attention(s, precision::fp16, 1e8, h100(), p);
  CHECK(e.math_s == doctest::Approx(8 * block_s(128, 128) * 2.5 / 0.25));
  CHECK(e.device_time_s == doctest::Approx(e.math_s + bytes / (0.5 * h100().dram_bytes_per_s)));
}

TEST_CASE("training lowers fused attention to its kernel and its backward kernel") {
  const network net = parse_network("name: t\nmode: training\nbatch: 2\nseq_len: 256\nlayers:\n"
                                    "  - {name: attn, type: attention, heads: 8, kv_heads: 2, "
                                    "head_dim: 64, causal: true, fused: true}\n",
                                    "t.yaml");
  const std::vector<op> ops = lower(net);
  REQUIRE(ops.size() == 2);
  const op &forward = ops[0], &backward = ops[1];
  REQUIRE(forward.attention);
  REQUIRE(backward.attention);
  CHECK_FALSE(forward.attention->backward);
  CHECK(backward.attention->backward);
  CHECK(backward.pass == pass::data_grad);
  // Causal pairs per head: 256·257/2 = 32896; forward 4·2·8·32896·64 FLOPs, backward 2.5×.
  CHECK(forward.flops == 4LL * 2 * 8 * 32896 * 64);
  CHECK(backward.flops == 10LL * 2 * 8 * 32896 * 64);
  // Q, O, dO, dQ: 4 × 2·8·256·64 elements; K, V, dK, dV: 2 × (2 × 2·2·256·64); fp16.
  CHECK(backward.bytes == (4LL * 2 * 8 * 256 * 64 + 2LL * 2 * 2 * 2 * 256 * 64) * 2);
  CHECK(forward.attention->kv_heads == 2);
  CHECK(forward.attention->q_len == 256);
}

TEST_CASE("decode under a sliding window reads only the window's keys") {
  // 1M cached keys, a window of 4096: the same call as 4096 keys (the review's reproducer).
  const attention_shape windowed{1, 32, 4, 1, 1 << 20, 128, false, 4096};
  const attention_shape short_cache{1, 32, 4, 1, 4096, 128, false};
  const std::int64_t bytes = 2LL * 4 * 4096 * 128 * 2;
  CHECK(
      estimate_attention(windowed, precision::fp16, bytes, h100(), plain()).device_time_s ==
      doctest::Approx(
          estimate_attention(short_cache, precision::fp16, bytes, h100(), plain()).device_time_s));
}

TEST_CASE("causal with fewer keys than queries is unmasked, as lowering counts its pairs") {
  const attention_shape causal{1, 8, 8, 16384, 1024, 128, true};
  const attention_shape plain_call{1, 8, 8, 16384, 1024, 128, false};
  CHECK(estimate_attention(causal, precision::fp16, 1000, h100(), plain()).math_s ==
        doctest::Approx(
            estimate_attention(plain_call, precision::fp16, 1000, h100(), plain()).math_s));
}

TEST_CASE("extreme shapes give finite times (the tiles sampled without overflow)") {
  const attention_shape huge{1, 1, 1, std::int64_t{1} << 59, std::int64_t{1} << 59, 1, true, 1};
  const attention_estimate e = estimate_attention(huge, precision::fp16, 1000, h100(), plain());
  CHECK(std::isfinite(e.device_time_s));
  CHECK(e.device_time_s > 0);
}
