// SPDX-License-Identifier: Apache-2.0
// The GEMM model's factors, each on a made-up GPU whose numbers make the arithmetic easy:
// 100 SMs at 1 GHz, fp16 dense peak 100 TFLOP/s (1 TFLOP/s per SM), DRAM 1 TB/s, L2 2.5 TB/s
// (25 bytes per SM per cycle: 25 GB/s per SM). estimate_gemm gives device time only;
// perf_model::predict adds the host's floor.
#include "kernel_choice.hpp"
#include "roofline/model/gemm_model.hpp"
#include "roofline/model/host_floor.hpp"
#include "roofline/model/memory_op_model.hpp"
#include "roofline/model/model_fit.hpp"
#include "roofline/model/op.hpp"
#include "roofline/model/perf_model.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>

using namespace roofline;

namespace {

gpu_spec easy_gpu() {
  gpu_spec g;
  g.name = "easy";
  g.compute_capability = "9.0"; // cuBLAS's Hopper kernels
  g.sm_count = 100;
  g.boost_clock_hz = 1e9;
  g.dram_bytes_per_s = 1e12;
  g.l2_bytes = 1e6; // small: the operands below do not fit
  g.peaks[precision::fp16].dense_flop_per_s = 100e12;
  g.peaks[precision::tf32].dense_flop_per_s = 50e12;
  g.peaks[precision::fp32].dense_flop_per_s = 10e12;
  return g;
}

/// Every fixed cost off and full efficiency, so that only the factor under test shapes the time.
/// Tensor-core kernels split K by cost only into slices of 65536 or more (never, for the K below):
/// with no kernel overhead, a split would cost only its partial sums. Tests of split-K lower it.
model_parameters ideal() {
  model_parameters p;
  for (precision prec : all_precisions) {
    p.set(parameter_at(parameter::efficiency, prec), 1.0);
    p.set(parameter_at(parameter::wave_overhead_s, prec), 0);
  }
  p.set(parameter::dram_efficiency, 1.0);
  p.set(parameter::l2_bytes_per_sm_cycle, 25);
  p.set(parameter::k_step_latency_s, 0);
  p.set(parameter::kernel_overhead_s, 0);
  p.set(parameter::gemv_bandwidth_slowdown, 1);
  p.set(parameter::misaligned_gemv_bandwidth_slowdown, 1);
  p.set(parameter::min_split_k_depth, info(parameter::min_split_k_depth).max);
  return p;
}

gemm_estimate estimate(const gemm_shape &s, const model_parameters &p = ideal(),
                       precision prec = precision::fp16) {
  const gpu_spec g = easy_gpu();
  return estimate_gemm(s, prec, g.peak_flop_per_s(prec), g, p);
}

/// A made-up host: 6 µs per cuBLAS call (8 µs for fp32), 3 µs per further kernel launch.
host_floor test_host() {
  host_floor h;
  h.gemm_call_s.fill(6e-6);
  h.gemm_call_s[static_cast<std::size_t>(precision::fp32)] = 8e-6;
  h.kernel_launch_s = 3e-6;
  h.origin = "test host";
  return h;
}

/// The eager prediction of one GEMM on the easy GPU with explicit parameters and host floor.
prediction predict(const gemm_shape &s, const model_parameters &p, const host_floor &host,
                   precision prec = precision::fp16) {
  const perf_model model(easy_gpu(), model_options{false, false, p, host});
  return model.predict(make_gemm_op("g", s, prec));
}

bool explains(const std::vector<std::string> &factors, const std::string &phrase) {
  for (const std::string &factor : factors)
    if (factor.find(phrase) != std::string::npos)
      return true;
  return false;
}

bool explains(const gemm_estimate &e, const std::string &phrase) {
  return explains(e.factors, phrase);
}

} // namespace

TEST_CASE("row alignment: the 16-byte rule by precision") {
  CHECK(row_alignment_bytes(4096, precision::fp16) == 16);
  CHECK(row_alignment_bytes(33712, precision::fp16) == 16); // 67424 = 16 · 4214
  CHECK(row_alignment_bytes(33708, precision::fp16) == 8);  // 67416 = 8 · 8427
  CHECK(row_alignment_bytes(30522, precision::fp16) == 4);  // 61044 = 4 · 15261
  CHECK(row_alignment_bytes(50257, precision::fp16) == 2);
  CHECK(row_alignment_bytes(1001, precision::fp32) == 4);
  CHECK(row_alignment_bytes(1001, precision::fp8) == 1);
  // A GEMM's: the narrower of its K-long and N-long rows; M does not count.
  CHECK(row_alignment_bytes(gemm_shape{7, 4096, 33708, 1}, precision::fp16) == 8);
  CHECK(row_alignment_bytes(gemm_shape{7, 50257, 4096, 1}, precision::fp16) == 2);
  CHECK(row_alignment_bytes(gemm_shape{7, 4096, 4096, 1}, precision::fp16) == 16);
  CHECK(alignment_elements(precision::fp16) == 8);
  CHECK(alignment_elements(precision::tf32) == 4);
  CHECK(alignment_elements(precision::int8) == 16);
}

TEST_CASE("a GEMM of exactly one wave of 256×128 tiles") {
  // M 256, N 12800, K 1024: 1 × 100 tiles of 256×128 = one wave on 100 SMs.
  // One tile: 2 · 256 · 128 · 1024 FLOP / 1e12 FLOP/s = 67.108864 µs; its loads (256 + 128) · 1024
  // · 2 B / 25 GB/s = 31.5 µs hide under it. DRAM: 2 · (256·1024 + 1024·12800 + 256·12800) B / 1
  // TB/s = 33.3 µs.
  const gemm_estimate e = estimate({256, 12800, 1024, 1});
  CHECK(e.device_time_s == doctest::Approx(67.108864e-6).epsilon(1e-9));
  CHECK(e.waves == doctest::Approx(1.0));
  CHECK(e.wave_efficiency == doctest::Approx(1.0));
  CHECK(e.tile_efficiency == doctest::Approx(1.0));
  CHECK(e.alignment_bytes == 16);
  CHECK(e.launches == 1);
}

TEST_CASE("wave quantization: one tile more than a wave") {
  // fp32 on the SIMT kernels (0.1 TFLOP/s per SM), M 128, N 12928 = 101 tiles of 128, K 1024.
  // 128×128: 101 work items need 2 waves of 335.5 µs; 64×64 and 32×128: 404 items, 5 waves of
  // 83.9 µs; 32×32: 1616 items, 17 waves of 2·32·32·1024 / 1e11 = 20.97152 µs (loads 64 · 4096 B /
  // 25 GB/s = 10.5 µs hide) = 356.51584 µs, the best, its last wave 16% busy.
  const gemm_estimate e = estimate({128, 12928, 1024, 1}, ideal(), precision::fp32);
  CHECK(e.family == kernel_family::simt);
  CHECK(e.device_time_s * 1e6 == doctest::Approx(17 * 20.97152));
  CHECK(e.tiles == 1616);
  CHECK(e.waves == doctest::Approx(16.16));
  CHECK(e.wave_efficiency == doctest::Approx(1616.0 / 1700.0));
  const gemm_estimate whole = estimate({128, 12800, 1024, 1}, ideal(), precision::fp32);
  CHECK(whole.device_time_s * 1e6 == doctest::Approx(335.54432)); // 100 tiles of 128×128: 1 wave
}

TEST_CASE("a partial last wave costs wave_quantization of a whole one") {
  // The fp32 case above with half the quantization: 32×32 tiles still win, 16.16 waves costing
  // 16.16 + 0.5 · 0.84 = 16.58 waves of 20.97152 µs.
  model_parameters p = ideal();
  p.set(parameter::wave_quantization, 0.5);
  const gemm_estimate e = estimate({128, 12928, 1024, 1}, p, precision::fp32);
  CHECK(e.tiles == 1616);
  CHECK(e.device_time_s * 1e6 == doctest::Approx(16.58 * 20.97152));
}

TEST_CASE("a kernel's fill and drain are paid once") {
  model_parameters p = ideal();
  p.set(parameter::kernel_overhead_s, 2e-6);
  CHECK(estimate({256, 12800, 1024, 1}, p).device_time_s * 1e6 == doctest::Approx(67.108864 + 2.0));
}

TEST_CASE("each wave pays its precision's wave overhead") {
  // The one-wave GEMM above plus 3 µs; fp32's overhead does not touch an fp16 GEMM.
  model_parameters p = ideal();
  p.set(parameter_at(parameter::wave_overhead_s, precision::fp16), 3e-6);
  p.set(parameter_at(parameter::wave_overhead_s, precision::fp32), 40e-6);
  CHECK(estimate({256, 12800, 1024, 1}, p).device_time_s * 1e6 == doctest::Approx(67.108864 + 3.0));
}

TEST_CASE("nvjet's N tiles in steps of 8 to 32 dodge wave quantization") {
  // fp16, N 12928: 101 tiles of 256×128 would need 2 waves (134 µs); 90 tiles of 256×144 fit one
  // wave of 2 · 256 · 144 · 1024 / 1e12 = 75.497472 µs.
  const gemm_estimate e = estimate({256, 12928, 1024, 1});
  CHECK(e.family == kernel_family::tensor);
  CHECK(e.device_time_s * 1e6 == doctest::Approx(75.497472));
  CHECK(e.device_time_s < estimate({256, 12800, 1024, 1}).device_time_s * 1.2);
}

TEST_CASE("tile quantization: partial tiles do wasted work") {
  // M 200 in a 256-row tile: 200/256 of the computed rows are real.
  const gemm_estimate e = estimate({200, 12800, 1024, 1});
  CHECK(e.tile_efficiency == doctest::Approx(200.0 / 256.0));
  CHECK(e.device_time_s == doctest::Approx(67.108864e-6).epsilon(1e-9)); // same wave as M = 256
}

TEST_CASE(
    "skinny GEMMs with one dimension near 2^63: tiles and their efficiency without overflow") {
  // The tiles' rows times their columns pass 2^63 (M rounded up to the tile, times N's tile): once
  // undefined behaviour, now a product of per-dimension fractions. (Run under UBSan.)
  constexpr std::int64_t huge = (std::int64_t{1} << 62) - 1;
  for (const gemm_shape &s : {gemm_shape{huge, 1, 1, 1}, gemm_shape{1, huge, 1, 1},
                              gemm_shape{3, 1537228672809129301, 1, 1}}) {
    CAPTURE(s.m);
    CAPTURE(s.n);
    for (precision p : {precision::fp16, precision::fp32}) {
      const gemm_estimate e = estimate(s, ideal(), p);
      CHECK(e.tile_efficiency > 0);
      CHECK(e.tile_efficiency <= 1);
      CHECK(e.tiles > 0);
      CHECK(std::isfinite(e.device_time_s));
      CHECK(e.device_time_s > 0);
    }
  }
  CHECK(row_alignment_bytes(std::numeric_limits<std::int64_t>::max(), precision::fp16) == 2);
  CHECK(row_alignment_bytes(std::int64_t{1} << 62, precision::fp32) == 16);
}

TEST_CASE("efficiency scales the compute-bound time") {
  model_parameters half = ideal();
  half.set(parameter_at(parameter::efficiency, precision::fp16), 0.5);
  CHECK(estimate({256, 12800, 1024, 1}, half).device_time_s ==
        doctest::Approx(2 * 67.108864e-6).epsilon(1e-9));
}

TEST_CASE("misaligned rows take the slower path and say so") {
  model_parameters p = ideal();
  p.set(misalignment_slowdown_at(2), 5.0);
  // N 12801 (2-byte rows in fp16): cuBLAS's CUTLASS fallback, its FMAs 5× slower.
  const gemm_estimate aligned = estimate({256, 12808, 1024, 1}, p);
  const gemm_estimate odd = estimate({256, 12801, 1024, 1}, p);
  CHECK(odd.alignment_bytes == 2);
  CHECK(aligned.alignment_bytes == 16);
  CHECK(odd.family == kernel_family::fallback);
  CHECK(odd.device_time_s > 1.5 * aligned.device_time_s);
  CHECK(explains(odd, "N=12801 breaks 16-byte alignment (2-byte rows): ×5.0"));
}

TEST_CASE("the eager time is max(device time, host floor); launch-bound exactly when the floor is "
          "longer") {
  const host_floor host = test_host();
  // The one-wave GEMM: 67.108864 µs on the GPU, far above the host's 6 µs.
  const prediction big = predict({256, 12800, 1024, 1}, ideal(), host);
  CHECK(big.device_time_s == estimate({256, 12800, 1024, 1}).device_time_s);
  CHECK(big.device_time_s == doctest::Approx(67.108864e-6).epsilon(1e-9));
  CHECK(big.host_floor_s == 6e-6);
  CHECK(big.time_s == big.device_time_s);
  CHECK_FALSE(big.launch_bound);
  CHECK_FALSE(explains(big.factors, "launch-bound"));

  // 64 × 64 × 512: nvjet's eight 8×64 tiles, one wave, each loading (8 + 64) · 512 · 2 B at
  // 25 GB/s = 2.94912 µs (their FMAs take 0.52 µs): under the 6 µs floor.
  const prediction tiny = predict({64, 64, 512, 1}, ideal(), host);
  REQUIRE(tiny.gemm);
  CHECK(tiny.gemm->launches == 1);
  CHECK(tiny.device_time_s * 1e6 == doctest::Approx(2.94912));
  CHECK(tiny.device_time_s == tiny.gemm->device_time_s); // no host cost in the device time
  CHECK(tiny.host_floor_s == 6e-6);
  CHECK(tiny.time_s == 6e-6);
  CHECK(tiny.launch_bound);
  CHECK(explains(tiny.factors, "launch-bound"));

  // At the boundary: a floor equal to the device time does not make it launch-bound; the next
  // double above does.
  host_floor equal = host;
  equal.gemm_call_s[static_cast<std::size_t>(precision::fp16)] = tiny.device_time_s;
  const prediction level = predict({64, 64, 512, 1}, ideal(), equal);
  CHECK_FALSE(level.launch_bound);
  CHECK(level.time_s == tiny.device_time_s);
  host_floor above = host;
  above.gemm_call_s[static_cast<std::size_t>(precision::fp16)] =
      std::nextafter(tiny.device_time_s, 1.0);
  const prediction over = predict({64, 64, 512, 1}, ideal(), above);
  CHECK(over.launch_bound);
  CHECK(over.time_s == over.host_floor_s);
  CHECK(over.device_time_s == tiny.device_time_s);
}

TEST_CASE("each precision's GEMM calls pay their own host floor") {
  model_parameters p = ideal();
  p.set(parameter_at(parameter::split_k_below_waves, precision::fp32), 0); // one kernel per call
  p.set(parameter::deep_split_k_below_waves, 0);
  const host_floor host = test_host();
  // 64 × 64 × 64: fp16 on nvjet, fp32 on four 32×32 SIMT tiles of 1.31072 µs: both under the
  // floors, 6 µs for fp16 and 8 µs for fp32.
  const prediction fp16 = predict({64, 64, 64, 1}, p, host);
  const prediction fp32 = predict({64, 64, 64, 1}, p, host, precision::fp32);
  REQUIRE(fp32.gemm);
  CHECK(fp32.gemm->launches == 1);
  CHECK(fp32.device_time_s * 1e6 == doctest::Approx(1.31072));
  CHECK(fp16.host_floor_s == 6e-6);
  CHECK(fp16.time_s == 6e-6);
  CHECK(fp32.host_floor_s == 8e-6);
  CHECK(fp32.time_s == 8e-6);
  // fp32 64 × 64 × 512 takes 8 × 1.31072 = 10.48576 µs on the GPU: over the floor.
  const prediction longer = predict({64, 64, 512, 1}, p, host, precision::fp32);
  CHECK(longer.device_time_s * 1e6 == doctest::Approx(10.48576));
  CHECK(longer.host_floor_s == 8e-6);
  CHECK(longer.time_s == longer.device_time_s);
  CHECK_FALSE(longer.launch_bound);
  // The GEMV (fp32, M ≤ 8) pays its precision's call too.
  const prediction gemv = predict({1, 64, 64, 1}, p, host, precision::fp32);
  REQUIRE(gemv.gemm);
  CHECK(gemv.gemm->family == kernel_family::gemv);
  CHECK(gemv.host_floor_s == 8e-6);
}

TEST_CASE("a split-K call pays one more kernel launch on the host for its reduction") {
  const host_floor host = test_host();
  // fp32 64 × 64 × 64: cuBLAS's rule (< 0.25 waves of 64×64 output tiles) adds a reduction
  // kernel: the host issues the call (8 µs) and one more launch (3 µs).
  const prediction forced = predict({64, 64, 64, 1}, ideal(), host, precision::fp32);
  REQUIRE(forced.gemm);
  CHECK(forced.gemm->launches == 2);
  CHECK(forced.host_floor_s * 1e6 == doctest::Approx(8.0 + 3.0));
  CHECK(forced.time_s == forced.host_floor_s);
  CHECK(forced.launch_bound);
  // fp16 64 × 64 × 512 with K slices of 256 allowed: split 2 ways by cost (see the split-K test
  // below: 1.540096 µs against one kernel's 2.94912 µs), 6 + 3 µs on the host.
  model_parameters p = ideal();
  p.set(parameter::min_split_k_depth, 256);
  const prediction split = predict({64, 64, 512, 1}, p, host);
  REQUIRE(split.gemm);
  CHECK(split.gemm->split_k == 2);
  CHECK(split.gemm->launches == 2);
  CHECK(split.device_time_s * 1e6 == doctest::Approx(1.540096));
  CHECK(split.host_floor_s * 1e6 == doctest::Approx(9.0));
  // A host whose further launches are free pays the call only.
  host_floor free_launches = host;
  free_launches.kernel_launch_s = 0;
  CHECK(predict({64, 64, 512, 1}, p, free_launches).host_floor_s == 6e-6);
}

TEST_CASE("gemmSN and GEMVs of misaligned rows stream slower than gemv2T, each at its rate") {
  model_parameters p = ideal();
  p.set(parameter::gemv_bandwidth_slowdown, 2.0);
  p.set(parameter::misaligned_gemv_bandwidth_slowdown, 4.0);
  p.set(parameter::misaligned_bandwidth_slowdown, 3.0); // the CUTLASS fallbacks', not the GEMVs'
  // fp32 4 × 100000 × 64: 4 · (256 + 6,400,000 + 400,000) B at 1 TB/s / 2 = 54.402048 µs; its 8×64
  // tiles (16 waves of 1.47 µs loads at half the L2 rate) hide under it.
  const gemm_estimate skinny = estimate({4, 100000, 64, 1}, p, precision::fp32);
  CHECK(skinny.family == kernel_family::gemv);
  CHECK(skinny.device_time_s * 1e6 == doctest::Approx(54.402048));
  // M 1: gemv2T at the full 1 TB/s, 4 · (64 + 6,400,000 + 100,000) B.
  const gemm_estimate gemv = estimate({1, 100000, 64, 1}, p, precision::fp32);
  CHECK(gemv.device_time_s * 1e6 == doctest::Approx(26.000256));
  // fp16 M 1, N 100001 (2-byte rows): 2 · (64 + 6,400,064 + 100,001) B at 1 TB/s / 4.
  const gemm_estimate misaligned = estimate({1, 100001, 64, 1}, p, precision::fp16);
  CHECK(misaligned.family == kernel_family::gemv);
  CHECK(misaligned.device_time_s * 1e6 == doctest::Approx(52.001032));
  // From M 9 on, fp32 runs SIMT tiles instead.
  CHECK(estimate({8, 100000, 64, 1}, p, precision::fp32).family == kernel_family::gemv);
  CHECK(estimate({9, 100000, 64, 1}, p, precision::fp32).family == kernel_family::simt);
}

TEST_CASE("a tile's K loop waits on memory when too little K is in flight") {
  model_parameters p = ideal();
  p.set(parameter::k_step_latency_s, 5e-6);
  // fp16 64 × 64 × 65536, one 64×64 tile (K is not split in ideal()): FMAs 536.9 µs, loads
  // 128 · 65536 · 2 B / 25 GB/s = 671.1 µs, but nvjet keeps 256 of K in flight per memory
  // latency: 256 steps of 5 µs = 1280 µs.
  const gemm_estimate hopper = estimate({64, 64, 65536, 1}, p);
  CHECK(hopper.device_time_s * 1e6 == doctest::Approx(1280.0));
  // fp32 GEMV-like M 4: gemmSN spreads K over a tile's threads, no such wait. 4 × 64 × 65536:
  // streams 4 · (262,144 + 4,194,304 + 256) B = 17.83 µs; its 8×64 tile's FMAs 2 · 8 · 64 · 65536
  // / 1e11 = 671.1 µs and loads 72 · 65536 · 4 B / 25 GB/s = 755 µs decide.
  const gemm_estimate gemv = estimate({4, 64, 65536, 1}, p, precision::fp32);
  CHECK(gemv.family == kernel_family::gemv);
  CHECK(gemv.device_time_s * 1e6 == doctest::Approx(72.0 * 65536 * 4 / 25e9 * 1e6));
}

TEST_CASE("without TMA, cuBLAS's rule decides split-K, even where it costs") {
  model_parameters p = ideal();
  p.set(parameter_at(parameter::split_k_below_waves, precision::fp32),
        0.25);                                   // < 25 output tiles of 64×64 on 100 SMs
  p.set(parameter::deep_split_k_below_waves, 1); // < 100 tiles where K ≥ 1024
  p.set(parameter::deep_split_k_min_k, 1024);
  p.set(parameter::kernel_overhead_s, 1e-6);
  // fp32 64 × 64 × 64, one 64×64 output tile (0.01 waves): the rule adds a reduction kernel.
  // Unsplit, the best SIMT tile is 32×32: four tiles of 2 · 32 · 32 · 64 / 1e11 = 1.31072 µs
  // (loads 64 · 64 · 4 B / 25 GB/s = 0.65536 µs hide), one wave, plus 1 µs = 2.31072 µs.
  // With the reduction, K split s ways on 32×32 tiles: 4s work items (one wave) of 1.31072 / s µs,
  // partial sums 2 · 4 · s · 4096 B / 1 TB/s = 0.032768 · s µs, and two kernels' 2 µs:
  //   s = 1: 3.31072; 2: 2.720896; 4: 2.458752; 8: 0.16384 + 0.262144 + 2 = 2.425984; 16: 2.606208.
  const gemm_estimate forced = estimate({64, 64, 64, 1}, p, precision::fp32);
  CHECK(forced.family == kernel_family::simt);
  CHECK(forced.launches == 2);
  CHECK(forced.split_k == 8);
  CHECK(forced.tile_m == 32);
  CHECK(forced.tile_n == 32);
  CHECK(forced.device_time_s * 1e6 == doctest::Approx(2.425984));
  // The rule off: one kernel, 2.31072 µs, faster than what cuBLAS does.
  p.set(parameter_at(parameter::split_k_below_waves, precision::fp32), 0);
  const gemm_estimate single = estimate({64, 64, 64, 1}, p, precision::fp32);
  CHECK(single.launches == 1);
  CHECK(single.split_k == 1);
  CHECK(single.device_time_s * 1e6 == doctest::Approx(2.31072));
  // Deep K: 640 × 640 × 1024 (100 tiles of 64×64, one wave) is not split, 576 × 640 × 1024 (90)
  // is, and 576 × 640 × 1023 is not.
  CHECK(estimate({640, 640, 1024, 1}, p, precision::fp32).launches == 1);
  CHECK(estimate({576, 640, 1024, 1}, p, precision::fp32).launches == 2);
  CHECK(estimate({576, 640, 1023, 1}, p, precision::fp32).launches == 1);
  CHECK(reduces_split_k({576, 640, 1024, 1}, precision::fp32, easy_gpu(), p));
  CHECK_FALSE(reduces_split_k({576, 640, 1023, 1}, precision::fp32, easy_gpu(), p));
}

TEST_CASE("misaligned rows stream at a fraction of the bandwidth, less the narrower they are") {
  model_parameters p = ideal();
  for (int alignment : {8, 4, 2})
    p.set(misalignment_slowdown_at(alignment), 1.0);    // only the bandwidth changes
  p.set(parameter::misaligned_bandwidth_slowdown, 2.0); // per halving of the rows' alignment
  gpu_spec g = easy_gpu();
  g.l2_bytes = 0;
  const auto microseconds = [&](std::int64_t n) {
    return estimate_gemm({16, n, 16, 1}, precision::fp16, 100e12, g, p).device_time_s * 1e6;
  };
  // M 16, K 16: 2 · (256 + 32 N) B. Aligned N 100008: 6,401,024 B at 1 TB/s = 6.401 µs.
  CHECK(microseconds(100008) == doctest::Approx(6.401024));
  // 8-byte rows (N 100004), 6,400,768 B at 1 TB/s / 2; 4-byte (100002), 6,400,640 B / 4; 2-byte
  // (100001), 6,400,576 B / 8. The 1563 64×64 tiles (16 waves) load (64 + 64) · 16 · 2 B each at
  // 25 GB/s per SM / the same factor: at most 16 · 1.31 µs = 21 µs, hidden.
  CHECK(microseconds(100004) == doctest::Approx(12.801536));
  CHECK(microseconds(100002) == doctest::Approx(25.60256));
  CHECK(microseconds(100001) == doctest::Approx(51.204608));
}

TEST_CASE("rows aligned to one element have their own split-K threshold") {
  model_parameters p = ideal();
  p.set(parameter::deep_split_k_below_waves, 0);
  p.set(parameter_at(parameter::split_k_below_waves, precision::fp16), 0);
  p.set(parameter_at(parameter::narrow_split_k_below_waves, precision::fp16), 0.25);
  // Two parameters: setting one leaves the other.
  CHECK(p.split_k_below_waves(precision::fp16) == 0);
  CHECK(p.narrow_split_k_below_waves(precision::fp16) == 0.25);
  // 64 × 66 × 64 (4-byte rows, two 64×64 output tiles: 0.02 waves): one kernel. 64 × 65 × 64
  // (2-byte rows): a reduction kernel too.
  CHECK_FALSE(reduces_split_k({64, 66, 64, 1}, precision::fp16, easy_gpu(), p));
  CHECK(estimate({64, 66, 64, 1}, p).launches == 1);
  CHECK(reduces_split_k({64, 65, 64, 1}, precision::fp16, easy_gpu(), p));
  const gemm_estimate narrow = estimate({64, 65, 64, 1}, p);
  CHECK(narrow.family == kernel_family::fallback);
  CHECK(narrow.launches == 2);
  // fp32's one element is 4 bytes: N 65 is narrow, N 66 is not.
  p.set(parameter_at(parameter::split_k_below_waves, precision::fp32), 0);
  p.set(parameter_at(parameter::narrow_split_k_below_waves, precision::fp32), 0.25);
  CHECK(reduces_split_k({64, 65, 64, 1}, precision::fp32, easy_gpu(), p));
  CHECK_FALSE(reduces_split_k({64, 66, 64, 1}, precision::fp32, easy_gpu(), p));
}

TEST_CASE("skinny M with misaligned rows runs CUTLASS kernels, split only for a deep K") {
  model_parameters p = ideal();
  p.set(parameter_at(parameter::split_k_below_waves, precision::fp16), 1);
  p.set(parameter::deep_split_k_below_waves, 1);
  p.set(parameter::deep_split_k_min_k, 1024);
  // M 8, 2-byte rows: no nvjet kernel; the rule's plain threshold does not apply, its deep one
  // does.
  const gemm_estimate shallow = estimate({8, 65, 64, 1}, p);
  CHECK(shallow.family == kernel_family::fallback);
  CHECK_FALSE(reduces_split_k({8, 65, 64, 1}, precision::fp16, easy_gpu(), p));
  CHECK(reduces_split_k({8, 65, 1024, 1}, precision::fp16, easy_gpu(), p));
  CHECK(reduces_split_k({9, 65, 64, 1}, precision::fp16, easy_gpu(), p));
  // Aligned rows keep Hopper's skinny tiles.
  CHECK(estimate({8, 64, 64, 1}, p).family == kernel_family::tensor);
}

TEST_CASE("tf32's misaligned rows run the CUTLASS fallback kernels") {
  model_parameters p = ideal();
  p.set(parameter_at(parameter::split_k_below_waves, precision::tf32), 0);
  p.set(parameter_at(parameter::narrow_split_k_below_waves, precision::tf32), 0);
  const gemm_estimate tf32 = estimate({64, 63, 64, 1}, p, precision::tf32); // 4-byte rows
  CHECK(tf32.alignment_bytes == 4);
  CHECK(tf32.family == kernel_family::fallback);
  CHECK(tf32.launches == 1);
  // Its rows are one element wide: the narrow threshold (here 0.25 waves) adds the reduction.
  p.set(parameter_at(parameter::narrow_split_k_below_waves, precision::tf32), 0.25);
  CHECK(estimate({64, 63, 64, 1}, p, precision::tf32).launches == 2);
}

TEST_CASE("split-K's reduction is one more kernel on the GPU: its fill and drain decide") {
  model_parameters p = ideal();
  p.set(parameter::min_split_k_depth, 256);
  // 64 × 64 × 512 fp16, K split at most 2 ways (slices ≥ 256). One kernel: nvjet's eight 8×64
  // tiles, one wave, each loading (8 + 64) · 512 · 2 B at 25 GB/s = 2.94912 µs. Split 2: sixteen
  // items of half the depth, 1.47456 µs, plus partial sums 2 · 4 · 2 · 4096 B at 1 TB/s =
  // 0.065536 µs = 1.540096 µs, and a second kernel's fill and drain.
  p.set(parameter::kernel_overhead_s, 2e-6);
  // One kernel: 2.94912 + 2 = 4.94912 µs; split: 1.540096 + 2 · 2 = 5.540096 µs.
  const gemm_estimate one = estimate({64, 64, 512, 1}, p);
  CHECK(one.split_k == 1);
  CHECK(one.launches == 1);
  CHECK(one.device_time_s * 1e6 == doctest::Approx(4.94912));
  // One kernel: 2.94912 + 0.5 = 3.44912 µs; split: 1.540096 + 2 · 0.5 = 2.540096 µs.
  p.set(parameter::kernel_overhead_s, 0.5e-6);
  const gemm_estimate two = estimate({64, 64, 512, 1}, p);
  CHECK(two.split_k == 2);
  CHECK(two.launches == 2);
  CHECK(two.device_time_s * 1e6 == doctest::Approx(2.540096));
  // 128 × 128 × 65536: the K loop of one tile would take milliseconds, so K is split; the GPU
  // pays the reduction kernel's fill and drain as it pays the first's.
  p.set(parameter::kernel_overhead_s, 0);
  const gemm_estimate deep = estimate({128, 128, 65536, 1}, p);
  CHECK(deep.split_k > 1);
  CHECK(deep.launches == 2);
  p.set(parameter::kernel_overhead_s, 1e-6);
  const gemm_estimate with_overhead = estimate({128, 128, 65536, 1}, p);
  CHECK(with_overhead.split_k == deep.split_k);
  CHECK((with_overhead.device_time_s - deep.device_time_s) * 1e6 == doctest::Approx(2.0));
}

TEST_CASE("operands that fit in half the L2 stream at L2 bandwidth") {
  // M 1, N 25600, K 1000: 2 · (1000 + 25,600,000 + 25,600) = 51,253,200 bytes: 51.25 µs from DRAM.
  // From L2 the 100 skinny 8×256 tiles (one wave) take their loads' 264 · 1000 · 2 B / 25 GB/s
  // = 21.12 µs. The L2's two partitions each keep a copy of what every SM reads: a 64 MB L2 holds
  // 32 MB of operands, too few.
  gpu_spec g = easy_gpu();
  g.l2_bytes = 64e6;
  const gemm_estimate cold =
      estimate_gemm({1, 25600, 1000, 1}, precision::fp16, 100e12, g, ideal());
  g.l2_bytes = 128e6;
  const gemm_estimate warm =
      estimate_gemm({1, 25600, 1000, 1}, precision::fp16, 100e12, g, ideal());
  CHECK_FALSE(cold.l2_resident);
  CHECK(warm.l2_resident);
  CHECK(cold.device_time_s == doctest::Approx(51.2532e-6).epsilon(1e-9));
  CHECK(warm.device_time_s == doctest::Approx(21.12e-6).epsilon(1e-9));
  // l2_resident_fraction sets the share: at 0.25 the 128 MB L2 holds 32 MB, too few again.
  model_parameters quarter = ideal();
  quarter.set(parameter::l2_resident_fraction, 0.25);
  CHECK_FALSE(estimate_gemm({1, 25600, 1000, 1}, precision::fp16, 100e12, g, quarter).l2_resident);
}

TEST_CASE("cold operands stream from DRAM at the cold rate, after its latency, even where L2 holds "
          "them") {
  // The same GEMV as above: 51,253,200 bytes. At a cold efficiency of 0.5 and 3 µs a call:
  // 51.2532 / 0.5 + 3 = 105.5064 µs, whether or not the L2 could hold the operands; the warm
  // estimate of a 128 MB L2 read them from L2 (21.12 µs).
  gpu_spec g = easy_gpu();
  g.l2_bytes = 128e6;
  model_parameters p = ideal();
  p.set(parameter::cold_dram_efficiency, 0.5);
  p.set(parameter::cold_dram_latency_s, 3e-6);
  const gemm_estimate cold =
      estimate_gemm({1, 25600, 1000, 1}, precision::fp16, 100e12, g, p, cache_state::cold);
  CHECK_FALSE(cold.l2_resident);
  CHECK(cold.device_time_s * 1e6 == doctest::Approx(105.5064).epsilon(1e-9));
  CHECK(estimate_gemm({1, 25600, 1000, 1}, precision::fp16, 100e12, g, p).device_time_s * 1e6 ==
        doctest::Approx(21.12).epsilon(1e-9));
  // A compute-bound GEMM is as fast cold as warm: its tiles, not DRAM, decide. 4096³ at
  // 100 TFLOP/s: 1374.39 µs; 3 · 2 · 4096² bytes cold take 201.3 µs + 3 µs.
  const gemm_estimate big_cold =
      estimate_gemm({4096, 4096, 4096, 1}, precision::fp16, 100e12, g, p, cache_state::cold);
  const gemm_estimate big_warm =
      estimate_gemm({4096, 4096, 4096, 1}, precision::fp16, 100e12, g, p, cache_state::warm);
  CHECK(big_cold.device_time_s == big_warm.device_time_s);
}

TEST_CASE("split-K pays off for few tiles and a deep K") {
  model_parameters p = ideal();
  p.set(parameter::min_split_k_depth, 256);
  // 128 × 128 × 65536: one 128×128 tile would run the whole K alone on one SM (2.1 ms).
  const gemm_estimate e = estimate({128, 128, 65536, 1}, p);
  CHECK(e.split_k > 1);
  CHECK(e.device_time_s < 2.0 * 128 * 128 * 65536 / 1e12 / 4);
  // Never into slices thinner than min_split_k_depth: 65536 / 16384 = 4 ways at most.
  p.set(parameter::min_split_k_depth, 16384);
  CHECK(estimate({128, 128, 65536, 1}, p).split_k <= 4);
}

TEST_CASE("split_k_max_waves: K is split only while the work items fill at most that many waves") {
  model_parameters p = ideal();
  p.set(parameter::min_split_k_depth, 256); // 4096 / 16 = 256: every factor's slices are allowed
  // fp16 256 × 960 × 4096 (16-byte rows: nvjet). Streaming 2 · (256·4096 + 4096·960 + 256·960) =
  // 10,452,992 B from DRAM (they do not fit the 1 MB L2) takes 10.45 µs: below every tile's time.
  // A tile loads (tm + tn) · depth · 2 B at 25 GB/s and does 2 · tm · tn · depth FLOP at
  // 1 TFLOP/s; whichever is longer, times the waves of 100 work items it takes.
  const gemm_shape shape{256, 960, 4096, 1};

  // Unsplit: 64×64 tiles, 4 · 15 = 60 of them, one wave: loads 128 · 4096 · 2 B / 25 GB/s =
  // 41.94304 µs (FMAs 2 · 64 · 64 · 4096 / 1e12 = 33.554432 µs). Every other tile of one wave
  // loads tm + tn ≥ 128 rows; those of fewer need more waves: 32×64 120 tiles, 2 × 31.45728 µs;
  // 16×64 240 tiles, 3 × 26.2144 µs; 8×64 480 tiles, 5 × 23.59296 µs.
  // The menu's largest tiles leave 6 of them (256×160: 1 · 6; 128×320: 2 · 3), so any split makes
  // 12 work items or more: at split_k_max_waves 0.1 (10 items on 100 SMs) none is allowed.
  p.set(parameter::split_k_max_waves, 0.1);
  const gemm_estimate capped = estimate(shape, p);
  CHECK(capped.split_k == 1);
  CHECK(capped.launches == 1);
  CHECK(capped.tile_m == 64);
  CHECK(capped.tile_n == 64);
  CHECK(capped.tiles == 60);
  CHECK(capped.device_time_s * 1e6 == doctest::Approx(41.94304));

  // Split 4 on 64×160 tiles: 4 · 6 · 4 = 96 work items, one wave, each 1024 deep: FMAs
  // 2 · 64 · 160 · 1024 / 1e12 = 20.97152 µs (loads 224 · 1024 · 2 B / 25 GB/s = 18.35008 µs),
  // plus the partial sums written and read in fp32, 2 · 4 · 4 · 256 · 960 B / 1 TB/s = 7.86432 µs:
  // 28.83584 µs, faster than unsplit, but its 96 items exceed 0.5 waves (50). The best split
  // of at most 50 items, 64×160 split 2 (48 items, 2048 deep: FMAs 41.94304 + partial sums
  // 3.93216 = 45.8752 µs), is slower than unsplit: K stays whole.
  p.set(parameter::split_k_max_waves, 0.5);
  const gemm_estimate half = estimate(shape, p);
  CHECK(half.split_k == 1);
  CHECK(half.launches == 1);
  CHECK(half.device_time_s * 1e6 == doctest::Approx(41.94304));

  // One wave (100 items) allows the 96: split 4, a reduction kernel (free here: no kernel
  // overhead), 28.83584 µs. (Next best: 64×96 split 2, 80 items of 2048 deep: loads 160 · 2048 ·
  // 2 B / 25 GB/s = 26.2144 µs + partial sums 3.93216 µs = 30.14656 µs.)
  p.set(parameter::split_k_max_waves, 1);
  const gemm_estimate split = estimate(shape, p);
  CHECK(split.split_k == 4);
  CHECK(split.launches == 2);
  CHECK(split.tile_m == 64);
  CHECK(split.tile_n == 160);
  CHECK(split.tiles == 96);
  CHECK(split.waves == doctest::Approx(0.96));
  CHECK(split.device_time_s * 1e6 == doctest::Approx(28.83584));
  // ideal() leaves split_k_max_waves at its default, 2 waves (200 items): split as at 1.
  model_parameters defaults = ideal();
  defaults.set(parameter::min_split_k_depth, 256);
  CHECK(defaults[parameter::split_k_max_waves] == 2);
  const gemm_estimate by_default = estimate(shape, defaults);
  CHECK(by_default.split_k == 4);
  CHECK(by_default.device_time_s * 1e6 == doctest::Approx(28.83584));
}

TEST_CASE("fit_cold_operands recovers the cold rate and latency, and moves nothing else") {
  const gpu_spec g = easy_gpu();
  model_parameters truth = ideal();
  truth.set(parameter::cold_dram_efficiency, 0.6);
  truth.set(parameter::cold_dram_latency_s, 4e-6);
  std::vector<timed_gemm> samples;
  for (std::int64_t m : {1, 8, 64, 2048})
    for (std::int64_t n : {1024, 4096, 16384})
      for (std::int64_t k : {1024, 8192}) {
        const gemm_shape s{m, n, k, 1};
        timed_gemm sample{s, precision::fp16, 0, 0, cache_state::cold};
        sample.time_s =
            estimate_gemm(s, precision::fp16, 100e12, g, truth, cache_state::cold).device_time_s;
        samples.push_back(sample);
      }
  model_parameters start = ideal();
  start.set(parameter_at(parameter::efficiency, precision::fp16), 0.7); // wrong, and kept
  const model_parameters fitted = fit_cold_operands(samples, g, start);
  CHECK(fitted[parameter::cold_dram_efficiency] == doctest::Approx(0.6).epsilon(0.02));
  CHECK(fitted[parameter::cold_dram_latency_s] * 1e6 == doctest::Approx(4.0).epsilon(0.05));
  for (const parameter_info &row : parameter_table())
    if (row.id != parameter::cold_dram_efficiency && row.id != parameter::cold_dram_latency_s)
      CHECK_MESSAGE(fitted[row.id] == start[row.id], row.name);
  // fit_model on warm samples leaves the cold parameters alone: no sample decides them.
  std::vector<timed_gemm> warm = samples;
  for (timed_gemm &sample : warm) {
    sample.operands = cache_state::warm;
    sample.time_s = estimate_gemm(sample.shape, precision::fp16, 100e12, g, truth).device_time_s;
  }
  const model_parameters warm_fit = fit_model(warm, g, start);
  CHECK(warm_fit[parameter::cold_dram_efficiency] == start[parameter::cold_dram_efficiency]);
  CHECK(warm_fit[parameter::cold_dram_latency_s] == start[parameter::cold_dram_latency_s]);
}

TEST_CASE("fit_model recovers the parameters that generated the samples") {
  const gpu_spec g = easy_gpu();
  model_parameters truth = ideal();
  truth.set(parameter_at(parameter::efficiency, precision::fp16), 0.6);
  truth.set(parameter::kernel_overhead_s, 4e-6);
  std::vector<timed_gemm> samples;
  for (std::int64_t m : {1, 64, 256, 1024, 4096})
    for (std::int64_t n : {1024, 4096, 12800})
      for (std::int64_t k : {512, 4096}) {
        const gemm_shape s{m, n, k, 1};
        samples.push_back({s, precision::fp16,
                           estimate_gemm(s, precision::fp16, 100e12, g, truth).device_time_s});
      }
  model_parameters start = ideal();
  start.set(parameter_at(parameter::efficiency, precision::fp16), 0.8);
  start.set(parameter::kernel_overhead_s, 5e-6);
  const model_parameters fitted = fit_model(samples, g, start);
  CHECK(fitted.efficiency(precision::fp16) == doctest::Approx(0.6).epsilon(0.08));
  // In µs: doctest's Approx would let any two values below its unit scale pass.
  CHECK(fitted[parameter::kernel_overhead_s] * 1e6 == doctest::Approx(4.0).epsilon(0.1));
  // No sample of fp32 or of misaligned rows: their parameters stay where they started.
  CHECK(fitted.efficiency(precision::fp32) == start.efficiency(precision::fp32));
  CHECK(fitted[misalignment_slowdown_at(2)] == start[misalignment_slowdown_at(2)]);
  const std::vector<double> errors = relative_errors(samples, g, fitted);
  CHECK(errors[errors.size() / 2] < 0.05);
}

TEST_CASE("fit_model returns the parameters no sample decides to where they started") {
  // Aligned fp16 GEMMs timed with ±15% of made-up noise: a rugged loss, where the restarts find
  // better valleys and carry their jittered values of every parameter along. No sample runs a GEMV
  // or a CUTLASS fallback: their parameters go back to the start.
  const gpu_spec g = easy_gpu();
  model_parameters truth = ideal();
  truth.set(parameter_at(parameter::efficiency, precision::fp16), 0.6);
  std::vector<timed_gemm> samples;
  int i = 0;
  for (std::int64_t m : {64, 256, 1024, 4096})
    for (std::int64_t n : {1024, 4096, 12800})
      for (std::int64_t k : {512, 4096}) {
        const gemm_shape s{m, n, k, 1};
        const double noise = 1.0 + 0.15 * std::sin(1.7 * ++i);
        samples.push_back(
            {s, precision::fp16,
             noise * estimate_gemm(s, precision::fp16, 100e12, g, truth).device_time_s});
      }
  const model_parameters start;
  const model_parameters fitted = fit_model(samples, g, start);
  for (parameter id :
       {parameter::gemv_bandwidth_slowdown, parameter::misaligned_gemv_bandwidth_slowdown,
        parameter::misaligned_bandwidth_slowdown}) {
    CAPTURE(info(id).name);
    CHECK(fitted[id] == start[id]);
  }
  CHECK(fitted.efficiency(precision::fp16) != start.efficiency(precision::fp16));
}

TEST_CASE("fit_model keeps efficiencies at or below 1") {
  const gpu_spec g = easy_gpu();
  const model_parameters truth = ideal();
  std::vector<timed_gemm> samples;
  for (std::int64_t n : {4096, 12800}) // compute-bound, then timed 20% faster than the peak allows
    samples.push_back(
        {{4096, n, 4096, 1},
         precision::fp16,
         0.8 * estimate_gemm({4096, n, 4096, 1}, precision::fp16, 100e12, g, truth).device_time_s});
  const model_parameters fitted = fit_model(samples, g, ideal());
  CHECK(fitted.efficiency(precision::fp16) <= 1.0);
}

TEST_CASE("fit_model keeps slowdowns at or above 1") {
  const gpu_spec g = easy_gpu();
  model_parameters truth = ideal();
  truth.set(misalignment_slowdown_at(2), 1.0);
  std::vector<timed_gemm> samples;
  for (std::int64_t n : {4097, 12801}) // 2-byte rows, timed twice as fast as the peak allows
    samples.push_back(
        {{4096, n, 4096, 1},
         precision::fp16,
         0.5 * estimate_gemm({4096, n, 4096, 1}, precision::fp16, 100e12, g, truth).device_time_s});
  const model_parameters fitted = fit_model(samples, g, ideal());
  CHECK(fitted[misalignment_slowdown_at(2)] >= 1.0);
  CHECK(fitted[parameter::misaligned_bandwidth_slowdown] >= 1.0);
}

TEST_CASE("fit_model keeps every parameter inside the table's bounds") {
  // Samples 5× slower and 5× faster than the model can be: the fit pushes against the bounds.
  const gpu_spec g = easy_gpu();
  const model_parameters truth = ideal();
  std::vector<timed_gemm> samples;
  for (double factor : {0.2, 5.0})
    for (std::int64_t m : {1, 64, 4096})
      for (std::int64_t n : {1024, 12801}) {
        const gemm_shape s{m, n, 1024, 1};
        samples.push_back(
            {s, precision::fp16,
             factor * estimate_gemm(s, precision::fp16, 100e12, g, truth).device_time_s});
      }
  const model_parameters fitted = fit_model(samples, g, model_parameters{});
  for (const parameter_info &row : parameter_table()) {
    CAPTURE(row.name);
    CHECK(fitted[row.id] >= row.min);
    CHECK(fitted[row.id] <= row.max);
    if (row.fit == parameter_fit::none) // never fitted
      CHECK(fitted[row.id] == row.default_value);
  }
}

TEST_CASE("fit_model learns cuBLAS's split-K rule from the launch counts, not from time") {
  const gpu_spec g = easy_gpu(); // 100 SMs
  model_parameters truth = ideal();
  truth.set(parameter_at(parameter::split_k_below_waves, precision::fp32), 0.1);
  truth.set(parameter_at(parameter::narrow_split_k_below_waves, precision::fp32), 0.3);
  truth.set(parameter::deep_split_k_below_waves, 1.5);
  truth.set(parameter::deep_split_k_min_k, 768);
  std::vector<timed_gemm> samples;
  // 5 to 400 tiles of 64×64: 0.05 to 4 waves, on either side of each threshold.
  for (std::int64_t m : {64, 320, 640, 896, 1024, 2560})
    for (std::int64_t n : {320, 640, 321, 641}) // 16-byte rows, then 4-byte rows (narrow)
      for (std::int64_t k : {64, 512, 768, 4096}) {
        const gemm_shape s{m, n, k, 1};
        const gemm_estimate e = estimate_gemm(s, precision::fp32, 10e12, g, truth);
        samples.push_back({s, precision::fp32, e.device_time_s, e.launches});
      }
  const model_parameters fitted = fit_model(samples, g, ideal());
  CHECK(fitted.split_k_below_waves(precision::fp32) == doctest::Approx(0.1));
  CHECK(fitted[parameter::deep_split_k_below_waves] == doctest::Approx(1.5));
  CHECK(fitted[parameter::deep_split_k_min_k] == doctest::Approx(768));
  // The narrow rows' samples lie at 0.06 and 0.11 waves (reduced), 0.3 and more (not): the fit
  // takes the middle of the grid's thresholds that tell them apart (0.15 to 0.3).
  CHECK(fitted.narrow_split_k_below_waves(precision::fp32) == doctest::Approx(0.25));
  for (const timed_gemm &sample : samples)
    CHECK(reduces_split_k(sample.shape, precision::fp32, g, fitted) == (sample.launches > 1));
  // Without launch counts the rule stays where it started.
  for (timed_gemm &sample : samples)
    sample.launches = 0;
  const model_parameters untraced = fit_model(samples, g, ideal());
  CHECK(untraced[parameter::deep_split_k_below_waves] ==
        doctest::Approx(ideal()[parameter::deep_split_k_below_waves]));
  CHECK(untraced[parameter::deep_split_k_min_k] ==
        doctest::Approx(ideal()[parameter::deep_split_k_min_k]));
}

TEST_CASE("sweep shapes: fixed, disjoint calibration and scoring sets") {
  const std::vector<sweep_shape> a = sweep_shapes(), b = sweep_shapes();
  REQUIRE(a.size() == b.size());
  CHECK(a.size() > 250);
  std::size_t calibration = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].shape.m == b[i].shape.m);
    CHECK(a[i].shape.k == b[i].shape.k);
    calibration += a[i].calibration ? 1 : 0;
  }
  CHECK(calibration * 3 >= a.size() - 2);
  CHECK(calibration * 3 <= a.size() + 2);
}

TEST_CASE("an fp8 linear's time is its GEMM's plus its quantize op's; fit_linear recovers both "
          "and moves nothing else") {
  gpu_spec g = easy_gpu();
  g.peaks[precision::fp8].dense_flop_per_s = 200e12;
  const parameter quantize_floor =
      memory_parameter_at(parameter::memory_floor_s, memory_op_kind::quantize);
  const parameter quantize_efficiency =
      memory_parameter_at(parameter::memory_efficiency, memory_op_kind::quantize);
  model_parameters truth = ideal();
  truth.set(parameter_at(parameter::efficiency, precision::fp8), 0.7);
  truth.set(quantize_floor, 8e-6);
  truth.set(quantize_efficiency, 0.5);
  // Hand-computed: M·K = 4096 · 4096 elements quantized at 5 bytes each (bigger than this GPU's
  // L2, so at DRAM's rate): 8 µs + 83,886,080 B / (0.5 · 1 TB/s) = 175.77216 µs on top of the
  // GEMM's own time; a sample of no quantize bytes is its GEMM alone.
  const gemm_shape s{4096, 4096, 4096, 1};
  const std::int64_t bytes = 4096LL * 4096 * 5;
  REQUIRE(static_cast<double>(bytes) > g.l2_bytes);
  const double gemm =
      estimate_gemm(s, precision::fp8, g.peak_flop_per_s(precision::fp8), g, truth).device_time_s;
  timed_linear with{{s, precision::fp8, 0}, bytes}, without{{s, precision::fp8, 0}, 0};
  CHECK(linear_time_s(with, g, truth) * 1e6 ==
        doctest::Approx(gemm * 1e6 + 8 + 83886080.0 / 0.5e12 * 1e6));
  CHECK(linear_time_s(without, g, truth) == doctest::Approx(gemm));

  std::vector<timed_linear> samples;
  for (std::int64_t m : {1, 2, 4, 8, 16, 256, 4096})
    for (std::int64_t n : {1024, 8192})
      for (std::int64_t k : {1024, 8192}) {
        timed_linear x{{{m, n, k, 1}, precision::fp8, 0}, m * k * 5};
        x.gemm.time_s = linear_time_s(x, g, truth);
        samples.push_back(x);
      }
  model_parameters start = ideal(); // the rest as the truth has it: only the free ones differ
  start.set(parameter_at(parameter::efficiency, precision::fp8), 0.9);
  const std::vector<parameter> free{parameter_at(parameter::efficiency, precision::fp8),
                                    quantize_floor, quantize_efficiency};
  const model_parameters fitted = fit_linear(samples, g, start, free);
  CHECK(fitted.efficiency(precision::fp8) == doctest::Approx(0.7).epsilon(0.05));
  CHECK(fitted[quantize_floor] * 1e6 == doctest::Approx(8.0).epsilon(0.1));
  CHECK(fitted[quantize_efficiency] == doctest::Approx(0.5).epsilon(0.1));
  for (const parameter_info &row : parameter_table())
    if (std::find(free.begin(), free.end(), row.id) == free.end())
      CHECK_MESSAGE(fitted[row.id] == start[row.id], row.name);
  const std::vector<double> errors = relative_errors(samples, g, fitted);
  CHECK(errors[errors.size() / 2] < 0.03);
}
