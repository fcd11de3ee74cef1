// SPDX-License-Identifier: Apache-2.0
// The GEMM model's factors, each on a made-up GPU whose numbers make the arithmetic easy:
// 100 SMs, fp16 dense peak 100 TFLOP/s (1 TFLOP/s per SM), DRAM 1 TB/s, L2 2.5 TB/s (25 GB/s per
// SM).
#include "roofline/gemm_model.hpp"
#include "roofline/model_fit.hpp"

#include <doctest/doctest.h>

#include <cmath>

using namespace roofline;

namespace {

gpu_spec easy_gpu() {
  gpu_spec g;
  g.name = "easy";
  g.compute_capability = "9.0"; // cuBLAS's Hopper kernels
  g.sm_count = 100;
  g.dram_bytes_per_s = 1e12;
  g.l2_bytes = 1e6; // small: the operands below do not fit
  g.peaks[precision::fp16].dense_flop_per_s = 100e12;
  g.peaks[precision::tf32].dense_flop_per_s = 50e12;
  g.peaks[precision::fp32].dense_flop_per_s = 10e12;
  return g;
}

/// Every fixed cost off and full efficiency, so that only the factor under test shapes the time.
model_parameters ideal() {
  model_parameters p;
  for (precision prec : all_precisions) {
    p.efficiency[prec] = 1.0;
    p.wave_overhead_s[prec] = 0;
  }
  p.dram_efficiency = 1.0;
  p.launch_floor_s = 0;
  p.fallback_launch_floor_s = 0;
  p.k_step_latency_s = 0;
  p.kernel_overhead_s = 0;
  p.gemv_bandwidth_slowdown = 1;
  p.misaligned_gemv_bandwidth_slowdown = 1;
  p.split_k_overhead_s = 1.0; // a second: never worth it
  return p;
}

gemm_estimate estimate(const gemm_shape &s, const model_parameters &p = ideal(),
                       precision prec = precision::fp16) {
  const gpu_spec g = easy_gpu();
  return estimate_gemm(s, prec, g.peak_flop_per_s(prec), g, p);
}

bool explains(const gemm_estimate &e, const std::string &phrase) {
  for (const std::string &factor : e.factors)
    if (factor.find(phrase) != std::string::npos)
      return true;
  return false;
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
  CHECK(e.time_s == doctest::Approx(67.108864e-6).epsilon(1e-9));
  CHECK(e.waves == doctest::Approx(1.0));
  CHECK(e.wave_efficiency == doctest::Approx(1.0));
  CHECK(e.tile_efficiency == doctest::Approx(1.0));
  CHECK(e.alignment_bytes == 16);
  CHECK_FALSE(e.launch_bound);
}

TEST_CASE("wave quantization: one tile more than a wave") {
  // fp32 on the SIMT kernels (0.1 TFLOP/s per SM), M 128, N 12928 = 101 tiles of 128, K 1024.
  // 128×128: 101 work items need 2 waves of 335.5 µs; 64×64 and 32×128: 404 items, 5 waves of
  // 83.9 µs; 32×32: 1616 items, 17 waves of 2·32·32·1024 / 1e11 = 20.97152 µs (loads 64 · 4096 B /
  // 25 GB/s = 10.5 µs hide) = 356.51584 µs, the best, its last wave 16% busy.
  const gemm_estimate e = estimate({128, 12928, 1024, 1}, ideal(), precision::fp32);
  CHECK(e.family == kernel_family::simt);
  CHECK(e.time_s * 1e6 == doctest::Approx(17 * 20.97152));
  CHECK(e.tiles == 1616);
  CHECK(e.waves == doctest::Approx(16.16));
  CHECK(e.wave_efficiency == doctest::Approx(1616.0 / 1700.0));
  const gemm_estimate whole = estimate({128, 12800, 1024, 1}, ideal(), precision::fp32);
  CHECK(whole.time_s * 1e6 == doctest::Approx(335.54432)); // 100 tiles of 128×128: one wave
}

TEST_CASE("a partial last wave costs wave_quantization of a whole one") {
  // The fp32 case above with half the quantization: 32×32 tiles still win, 16.16 waves costing
  // 16.16 + 0.5 · 0.84 = 16.58 waves of 20.97152 µs.
  model_parameters p = ideal();
  p.wave_quantization = 0.5;
  const gemm_estimate e = estimate({128, 12928, 1024, 1}, p, precision::fp32);
  CHECK(e.tiles == 1616);
  CHECK(e.time_s * 1e6 == doctest::Approx(16.58 * 20.97152));
}

TEST_CASE("a kernel's fill and drain are paid once") {
  model_parameters p = ideal();
  p.kernel_overhead_s = 2e-6;
  CHECK(estimate({256, 12800, 1024, 1}, p).time_s * 1e6 == doctest::Approx(67.108864 + 2.0));
}

TEST_CASE("nvjet's N tiles in steps of 8 to 32 dodge wave quantization") {
  // fp16, N 12928: 101 tiles of 256×128 would need 2 waves (134 µs); 90 tiles of 256×144 fit one
  // wave of 2 · 256 · 144 · 1024 / 1e12 = 75.497472 µs.
  const gemm_estimate e = estimate({256, 12928, 1024, 1});
  CHECK(e.family == kernel_family::tensor);
  CHECK(e.time_s * 1e6 == doctest::Approx(75.497472));
  CHECK(e.time_s < estimate({256, 12800, 1024, 1}).time_s * 1.2);
}

TEST_CASE("tile quantization: partial tiles do wasted work") {
  // M 200 in a 256-row tile: 200/256 of the computed rows are real.
  const gemm_estimate e = estimate({200, 12800, 1024, 1});
  CHECK(e.tile_efficiency == doctest::Approx(200.0 / 256.0));
  CHECK(e.time_s == doctest::Approx(67.108864e-6).epsilon(1e-9)); // same wave as M = 256
}

TEST_CASE("efficiency scales the compute-bound time") {
  model_parameters half = ideal();
  half.efficiency[precision::fp16] = 0.5;
  CHECK(estimate({256, 12800, 1024, 1}, half).time_s ==
        doctest::Approx(2 * 67.108864e-6).epsilon(1e-9));
}

TEST_CASE("misaligned rows take the slower path and say so") {
  model_parameters p = ideal();
  p.misalignment_slowdown[2] = 5.0;
  // N 12801 (2-byte rows in fp16): cuBLAS's CUTLASS fallback, its FMAs 5× slower.
  const gemm_estimate aligned = estimate({256, 12808, 1024, 1}, p);
  const gemm_estimate odd = estimate({256, 12801, 1024, 1}, p);
  CHECK(odd.alignment_bytes == 2);
  CHECK(aligned.alignment_bytes == 16);
  CHECK(odd.family == kernel_family::fallback);
  CHECK(odd.time_s > 1.5 * aligned.time_s);
  CHECK(explains(odd, "N=12801 breaks 16-byte alignment (2-byte rows): ×5.0"));
}

TEST_CASE("the launch floor bounds tiny GEMMs") {
  model_parameters p = ideal();
  p.launch_floor_s = 5e-6;
  const gemm_estimate e = estimate({8, 8, 8, 1}, p);
  CHECK(e.time_s * 1e6 == doctest::Approx(5.0));
  CHECK(e.launch_bound);
}

TEST_CASE("each precision's GEMMs have their own floor") {
  model_parameters p = ideal();
  p.launch_floor_s = 5e-6;
  p.gemm_launch_floor_s[precision::fp16] = 7e-6;
  const gemm_estimate e = estimate({8, 8, 8, 1}, p);
  CHECK(e.time_s * 1e6 == doctest::Approx(7.0));
  CHECK(p.gemm_launch_floor_of(precision::fp32) * 1e6 == doctest::Approx(5.0));
}

TEST_CASE("GEMV and CUTLASS fallback kernels have their own, lighter floor") {
  model_parameters p = ideal();
  p.launch_floor_s = 7e-6;
  p.fallback_launch_floor_s = 4e-6;
  p.split_k_below_waves[precision::fp16] = 0;
  const gemm_estimate gemv = estimate({1, 1, 1, 1}, p); // 2-byte rows, M 1: a GEMV
  CHECK(gemv.family == kernel_family::gemv);
  CHECK(gemv.time_s * 1e6 == doctest::Approx(4.0));
  const gemm_estimate fallback = estimate({64, 9, 8, 1}, p); // 2-byte rows: CUTLASS
  CHECK(fallback.family == kernel_family::fallback);
  CHECK(fallback.time_s * 1e6 == doctest::Approx(4.0));
}

TEST_CASE("gemmSN and GEMVs of misaligned rows stream slower than gemv2T, each at its rate") {
  model_parameters p = ideal();
  p.gemv_bandwidth_slowdown = 2.0;
  p.misaligned_gemv_bandwidth_slowdown = 4.0;
  p.misaligned_bandwidth_slowdown = 3.0; // the CUTLASS fallbacks', not the GEMVs'
  // fp32 4 × 100000 × 64: 4 · (256 + 6,400,000 + 400,000) B at 1 TB/s / 2 = 54.402048 µs; its 8×64
  // tiles (16 waves of 1.47 µs loads at half the L2 rate) hide under it.
  const gemm_estimate skinny = estimate({4, 100000, 64, 1}, p, precision::fp32);
  CHECK(skinny.family == kernel_family::gemv);
  CHECK(skinny.time_s * 1e6 == doctest::Approx(54.402048));
  // M 1: gemv2T at the full 1 TB/s, 4 · (64 + 6,400,000 + 100,000) B.
  const gemm_estimate gemv = estimate({1, 100000, 64, 1}, p, precision::fp32);
  CHECK(gemv.time_s * 1e6 == doctest::Approx(26.000256));
  // fp16 M 1, N 100001 (2-byte rows): 2 · (64 + 6,400,064 + 100,001) B at 1 TB/s / 4.
  const gemm_estimate misaligned = estimate({1, 100001, 64, 1}, p, precision::fp16);
  CHECK(misaligned.family == kernel_family::gemv);
  CHECK(misaligned.time_s * 1e6 == doctest::Approx(52.001032));
  // From M 9 on, fp32 runs SIMT tiles instead.
  CHECK(estimate({8, 100000, 64, 1}, p, precision::fp32).family == kernel_family::gemv);
  CHECK(estimate({9, 100000, 64, 1}, p, precision::fp32).family == kernel_family::simt);
}

TEST_CASE("tf32's small GEMMs run the Ampere kernels, which launch faster") {
  model_parameters p = ideal();
  p.gemm_launch_floor_s[precision::tf32] = 9e-6; // Hopper's xmma kernels
  p.fallback_launch_floor_s = 5e-6;
  p.ampere_slowdown = 2.0;
  p.split_k_below_waves[precision::tf32] = 0;
  const gemm_estimate tiny = estimate({64, 64, 64, 1}, p, precision::tf32);
  CHECK(tiny.family == kernel_family::fallback);
  CHECK(tiny.time_s * 1e6 == doctest::Approx(5.0));
  // 256 × 25600 × 1024: Hopper's 200 tiles of 128×256 take two waves of 134 µs at 0.5 TFLOP/s
  // per SM; Ampere's half rate would cost far more than its lighter launch saves.
  const gemm_estimate large = estimate({256, 25600, 1024, 1}, p, precision::tf32);
  CHECK(large.family == kernel_family::tensor);
}

TEST_CASE("a tile's K loop waits on memory when too little K is in flight") {
  model_parameters p = ideal();
  p.k_step_latency_s = 5e-6;
  // fp16 64 × 64 × 65536, one 64×64 tile (splitting costs a second here): FMAs 536.9 µs, loads
  // 128 · 65536 · 2 B / 25 GB/s = 671.1 µs, but nvjet keeps 256 of K in flight per memory
  // latency: 256 steps of 5 µs = 1280 µs.
  const gemm_estimate hopper = estimate({64, 64, 65536, 1}, p);
  CHECK(hopper.time_s * 1e6 == doctest::Approx(1280.0));
  // fp32 GEMV-like M 4: gemmSN spreads K over a tile's threads, no such wait. 4 × 64 × 65536:
  // streams 4 · (262,144 + 4,194,304 + 256) B = 17.83 µs; its 8×64 tile's FMAs 2 · 8 · 64 · 65536
  // / 1e11 = 671.1 µs and loads 72 · 65536 · 4 B / 25 GB/s = 755 µs decide.
  const gemm_estimate gemv = estimate({4, 64, 65536, 1}, p, precision::fp32);
  CHECK(gemv.family == kernel_family::gemv);
  CHECK(gemv.time_s * 1e6 == doctest::Approx(72.0 * 65536 * 4 / 25e9 * 1e6));
}

TEST_CASE("without TMA, cuBLAS's rule decides split-K, even where it costs") {
  model_parameters p = ideal();
  p.launch_floor_s = 5e-6;
  p.split_k_overhead_s = 3e-6;
  p.split_k_below_waves[precision::fp32] = 0.25; // < 25 output tiles of 64×64 on 100 SMs
  p.deep_split_k_below_waves = 1;                // < 100 tiles where K ≥ 1024
  p.deep_split_k_min_k = 1024;
  // fp32 64 × 64 × 64: four 32×32 tiles of 1.31 µs, under the 5 µs floor; the reduction's launch
  // adds 3 µs even though K stays whole.
  const gemm_estimate forced = estimate({64, 64, 64, 1}, p, precision::fp32);
  CHECK(forced.launches == 2);
  CHECK(forced.split_k == 1);
  CHECK(forced.time_s * 1e6 == doctest::Approx(8.0));
  p.split_k_below_waves[precision::fp32] = 0;
  const gemm_estimate single = estimate({64, 64, 64, 1}, p, precision::fp32);
  CHECK(single.launches == 1);
  CHECK(single.time_s * 1e6 == doctest::Approx(5.0));
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
    p.misalignment_slowdown[alignment] = 1.0; // only the bandwidth changes
  p.misaligned_bandwidth_slowdown = 2.0;      // per halving of the rows' alignment
  gpu_spec g = easy_gpu();
  g.l2_bytes = 0;
  const auto microseconds = [&](std::int64_t n) {
    return estimate_gemm({16, n, 16, 1}, precision::fp16, 100e12, g, p).time_s * 1e6;
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
  p.fallback_launch_floor_s = 5e-6;
  p.split_k_overhead_s = 3e-6;
  p.deep_split_k_below_waves = 0;
  p.split_k_below_waves[precision::fp16] = 0;
  // Unset, the narrow rows' threshold is the wider rows'.
  CHECK(p.narrow_split_k_below_waves_of(precision::fp16) == 0);
  p.narrow_split_k_below_waves[precision::fp16] = 0.25;
  // 64 × 66 × 64 (4-byte rows, two 64×64 output tiles: 0.02 waves): one launch. 64 × 65 × 64
  // (2-byte rows): the reduction's too, 5 + 3 µs.
  CHECK_FALSE(reduces_split_k({64, 66, 64, 1}, precision::fp16, easy_gpu(), p));
  CHECK(estimate({64, 66, 64, 1}, p).launches == 1);
  CHECK(reduces_split_k({64, 65, 64, 1}, precision::fp16, easy_gpu(), p));
  const gemm_estimate narrow = estimate({64, 65, 64, 1}, p);
  CHECK(narrow.launches == 2);
  CHECK(narrow.time_s * 1e6 == doctest::Approx(8.0));
  // fp32's one element is 4 bytes: N 65 is narrow, N 66 is not.
  p.split_k_below_waves[precision::fp32] = 0;
  p.narrow_split_k_below_waves[precision::fp32] = 0.25;
  CHECK(reduces_split_k({64, 65, 64, 1}, precision::fp32, easy_gpu(), p));
  CHECK_FALSE(reduces_split_k({64, 66, 64, 1}, precision::fp32, easy_gpu(), p));
}

TEST_CASE("skinny M with misaligned rows runs CUTLASS kernels, split only for a deep K") {
  model_parameters p = ideal();
  p.split_k_below_waves[precision::fp16] = 1;
  p.deep_split_k_below_waves = 1;
  p.deep_split_k_min_k = 1024;
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

TEST_CASE("tf32's misaligned rows run on fp32's kernels and pay fp32's floor") {
  model_parameters p = ideal();
  p.gemm_launch_floor_s[precision::tf32] = 9e-6;
  p.gemm_launch_floor_s[precision::fp32] = 7e-6;
  p.fallback_launch_floor_s = 5e-6;
  p.split_k_below_waves[precision::tf32] = 0;
  p.split_k_below_waves[precision::fp16] = 0;
  const gemm_estimate tf32 = estimate({64, 63, 64, 1}, p, precision::tf32); // 4-byte rows
  CHECK(tf32.family == kernel_family::fallback);
  CHECK(tf32.time_s * 1e6 == doctest::Approx(7.0));
  // fp16's misaligned rows run CUTLASS kernels, at the lighter floor.
  CHECK(estimate({64, 63, 64, 1}, p).time_s * 1e6 == doctest::Approx(5.0));
}

TEST_CASE("split-K's reduction: one more launch for the host, one more kernel for the GPU") {
  model_parameters p = ideal();
  p.launch_floor_s = 5e-6;
  p.split_k_overhead_s = 3e-6;
  // 64 × 64 × 512: one 64×64 tile takes 2 · 64 · 64 · 512 / 1e12 = 4.19 µs, under the 5 µs floor.
  // Splitting K could only add the reduction's 3 µs launch: the model keeps one kernel.
  const gemm_estimate small = estimate({64, 64, 512, 1}, p);
  CHECK(small.split_k == 1);
  CHECK(small.launches == 1);
  CHECK(small.time_s * 1e6 == doctest::Approx(5.0));
  CHECK(small.launch_bound);
  // 128 × 128 × 65536: the K loop of one tile would take milliseconds, so K is split. The host
  // issues the second launch while the first kernel runs; the GPU pays the reduction kernel's
  // fill and drain, as it pays the first's.
  const gemm_estimate deep = estimate({128, 128, 65536, 1}, p);
  CHECK(deep.split_k > 1);
  CHECK(deep.launches == 2);
  p.kernel_overhead_s = 1e-6;
  const gemm_estimate with_overhead = estimate({128, 128, 65536, 1}, p);
  CHECK(with_overhead.split_k == deep.split_k);
  CHECK((with_overhead.time_s - deep.time_s) * 1e6 == doctest::Approx(2.0));
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
  CHECK(cold.time_s == doctest::Approx(51.2532e-6).epsilon(1e-9));
  CHECK(warm.time_s == doctest::Approx(21.12e-6).epsilon(1e-9));
}

TEST_CASE("split-K pays off for few tiles and a deep K") {
  model_parameters p = ideal();
  p.split_k_overhead_s = 1e-6;
  // 128 × 128 × 65536: one 128×128 tile would run the whole K alone on one SM (2.1 ms).
  const gemm_estimate e = estimate({128, 128, 65536, 1}, p);
  CHECK(e.split_k > 1);
  CHECK(e.time_s < 2.0 * 128 * 128 * 65536 / 1e12 / 4);
}

TEST_CASE("fit_model recovers the parameters that generated the samples") {
  const gpu_spec g = easy_gpu();
  model_parameters truth = ideal();
  truth.efficiency[precision::fp16] = 0.6;
  truth.launch_floor_s = 4e-6;
  std::vector<timed_gemm> samples;
  for (std::int64_t m : {1, 64, 256, 1024, 4096})
    for (std::int64_t n : {1024, 4096, 12800})
      for (std::int64_t k : {512, 4096}) {
        const gemm_shape s{m, n, k, 1};
        samples.push_back(
            {s, precision::fp16, estimate_gemm(s, precision::fp16, 100e12, g, truth).time_s});
      }
  model_parameters start = ideal();
  start.efficiency[precision::fp16] = 0.8;
  start.launch_floor_s = 5e-6;
  const model_parameters fitted = fit_model(samples, g, start);
  CHECK(fitted.efficiency_of(precision::fp16) == doctest::Approx(0.6).epsilon(0.08));
  // In µs: doctest's Approx would let any two values below its unit scale pass.
  CHECK(fitted.gemm_launch_floor_of(precision::fp16) * 1e6 == doctest::Approx(4.0).epsilon(0.1));
  CHECK(fitted.launch_floor_s * 1e6 == doctest::Approx(5.0)); // memory ops' floor: no sample
  const std::vector<double> errors = relative_errors(samples, g, fitted);
  CHECK(errors[errors.size() / 2] < 0.05);
}

TEST_CASE("fit_model returns the parameters no sample decides to where they started") {
  // Aligned fp16 GEMMs timed with ±15% of made-up noise: a rugged loss, where the restarts find
  // better valleys and carry their jittered values of every parameter along. No sample runs a GEMV
  // or a CUTLASS fallback: their parameters go back to the start.
  const gpu_spec g = easy_gpu();
  model_parameters truth = ideal();
  truth.efficiency[precision::fp16] = 0.6;
  std::vector<timed_gemm> samples;
  int i = 0;
  for (std::int64_t m : {64, 256, 1024, 4096})
    for (std::int64_t n : {1024, 4096, 12800})
      for (std::int64_t k : {512, 4096}) {
        const gemm_shape s{m, n, k, 1};
        const double noise = 1.0 + 0.15 * std::sin(1.7 * ++i);
        samples.push_back({s, precision::fp16,
                           noise * estimate_gemm(s, precision::fp16, 100e12, g, truth).time_s});
      }
  const model_parameters start;
  const model_parameters fitted = fit_model(samples, g, start);
  CHECK(fitted.gemv_bandwidth_slowdown == start.gemv_bandwidth_slowdown);
  CHECK(fitted.misaligned_gemv_bandwidth_slowdown == start.misaligned_gemv_bandwidth_slowdown);
  CHECK(fitted.misaligned_bandwidth_slowdown == start.misaligned_bandwidth_slowdown);
  CHECK(fitted.efficiency_of(precision::fp16) != start.efficiency_of(precision::fp16));
}

TEST_CASE("fit_model keeps efficiencies at or below 1") {
  const gpu_spec g = easy_gpu();
  model_parameters truth = ideal();
  std::vector<timed_gemm> samples;
  for (std::int64_t n : {4096, 12800}) // compute-bound, then timed 20% faster than the peak allows
    samples.push_back(
        {{4096, n, 4096, 1},
         precision::fp16,
         0.8 * estimate_gemm({4096, n, 4096, 1}, precision::fp16, 100e12, g, truth).time_s});
  const model_parameters fitted = fit_model(samples, g, ideal());
  CHECK(fitted.efficiency_of(precision::fp16) <= 1.0);
}

TEST_CASE("fit_model keeps slowdowns at or above 1") {
  const gpu_spec g = easy_gpu();
  model_parameters truth = ideal();
  truth.misalignment_slowdown[2] = 1.0;
  std::vector<timed_gemm> samples;
  for (std::int64_t n : {4097, 12801}) // 2-byte rows, timed twice as fast as the peak allows
    samples.push_back(
        {{4096, n, 4096, 1},
         precision::fp16,
         0.5 * estimate_gemm({4096, n, 4096, 1}, precision::fp16, 100e12, g, truth).time_s});
  const model_parameters fitted = fit_model(samples, g, ideal());
  CHECK(value_of(fitted, "misalignment_slowdown.2") >= 1.0);
  CHECK(fitted.misaligned_bandwidth_slowdown >= 1.0);
}

TEST_CASE("fit_model learns cuBLAS's split-K rule from the launch counts, not from time") {
  const gpu_spec g = easy_gpu(); // 100 SMs
  model_parameters truth = ideal();
  truth.split_k_below_waves[precision::fp32] = 0.1;
  truth.narrow_split_k_below_waves[precision::fp32] = 0.3;
  truth.deep_split_k_below_waves = 1.5;
  truth.deep_split_k_min_k = 768;
  std::vector<timed_gemm> samples;
  // 5 to 400 tiles of 64×64: 0.05 to 4 waves, on either side of each threshold.
  for (std::int64_t m : {64, 320, 640, 896, 1024, 2560})
    for (std::int64_t n : {320, 640, 321, 641}) // 16-byte rows, then 4-byte rows (narrow)
      for (std::int64_t k : {64, 512, 768, 4096}) {
        const gemm_shape s{m, n, k, 1};
        const gemm_estimate e = estimate_gemm(s, precision::fp32, 10e12, g, truth);
        samples.push_back({s, precision::fp32, e.time_s, e.launches});
      }
  const model_parameters fitted = fit_model(samples, g, ideal());
  CHECK(value_of(fitted, "split_k_below_waves.fp32") == doctest::Approx(0.1));
  CHECK(fitted.deep_split_k_below_waves == doctest::Approx(1.5));
  CHECK(fitted.deep_split_k_min_k == doctest::Approx(768));
  // The narrow rows' samples lie at 0.06 and 0.11 waves (reduced), 0.3 and more (not): the fit
  // takes the middle of the grid's thresholds that tell them apart (0.15 to 0.3).
  CHECK(value_of(fitted, "narrow_split_k_below_waves.fp32") == doctest::Approx(0.25));
  for (const timed_gemm &sample : samples)
    CHECK(reduces_split_k(sample.shape, precision::fp32, g, fitted) == (sample.launches > 1));
  // Without launch counts the rule stays where it started.
  for (timed_gemm &sample : samples)
    sample.launches = 0;
  const model_parameters untraced = fit_model(samples, g, ideal());
  CHECK(untraced.deep_split_k_below_waves == doctest::Approx(ideal().deep_split_k_below_waves));
  CHECK(untraced.deep_split_k_min_k == doctest::Approx(ideal().deep_split_k_min_k));
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
