// SPDX-License-Identifier: Apache-2.0
#include "roofline/gemm_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace roofline {

int row_alignment_bytes(std::int64_t elements, precision p) {
  const std::int64_t bytes = elements * element_bytes(p);
  int alignment = 16;
  while (alignment > 1 && bytes % alignment != 0)
    alignment /= 2;
  return alignment;
}

std::int64_t alignment_elements(precision p) {
  return 16 / element_bytes(p);
}

namespace {

struct tile {
  int m, n;
};

// Output tiles of Hopper-class cuBLAS kernels (nvjet_sm90_*: 256×128, 128×256, 192×192 ... and the
// skinny 8-, 16- and 32-row tiles it picks for decode-like M), as (M, N). A model needs the menu,
// not the heuristic: it takes the fastest tile, as a good heuristic would.
const std::vector<tile> tensor_tiles{{128, 256}, {256, 128}, {128, 128}, {128, 64}, {64, 128},
                                     {64, 64},   {64, 256},  {256, 64},  {8, 64},   {8, 128},
                                     {8, 256},   {16, 64},   {16, 128},  {32, 64},  {32, 128}};
// CUDA-core (SIMT) GEMMs use mid-sized tiles; skinny ones only for GEMV-like M.
const std::vector<tile> simt_tiles{{128, 128}, {64, 128}, {128, 64}, {64, 64},
                                   {32, 128},  {128, 32}, {32, 32}};
// The older tensor-core kernels cuBLAS falls back to for misaligned rows (Ampere/Turing CUTLASS).
const std::vector<tile> fallback_tiles{{64, 64}, {128, 128}, {128, 256}, {256, 128}};
const std::vector<tile> simt_and_skinny_tiles{{128, 128}, {64, 128}, {128, 64}, {64, 64},
                                              {8, 64},    {8, 128},  {8, 256},  {16, 64},
                                              {16, 128},  {32, 64},  {32, 128}};
constexpr int split_k_factors[] = {1, 2, 4, 8, 16};
constexpr std::int64_t min_split_k_depth =
    256; // cuBLAS does not split K below a few pipeline stages
constexpr std::int64_t k_step = 64;

bool runs_on_tensor_cores(precision p) {
  return p != precision::fp32 && p != precision::fp64;
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

} // namespace

gemm_estimate estimate_gemm(const gemm_shape &s, precision p, double peak_flop_per_s,
                            const gpu_spec &gpu, const model_parameters &params) {
  gemm_estimate best;
  const double element = element_bytes(p);
  const double sms = gpu.sm_count;
  double sm_rate = peak_flop_per_s * params.efficiency_of(p) / sms;
  double l2_bandwidth = params.l2_to_dram_bandwidth * gpu.dram_bytes_per_s;
  double dram_bandwidth = params.dram_efficiency * gpu.dram_bytes_per_s;

  // Rows of A and B are K long, rows of C are N long: the narrower alignment decides the kernel.
  const int alignment = std::min(row_alignment_bytes(s.k, p), row_alignment_bytes(s.n, p));
  // Skinny (GEMV-like) M reads rows one by one anyway: alignment costs little there.
  const bool misaligned = alignment < 16 && runs_on_tensor_cores(p) && s.m > 8;
  const double slowdown = misaligned && params.misalignment_slowdown.count(alignment)
                              ? params.misalignment_slowdown.at(alignment)
                              : 1.0;

  const double bytes = element * static_cast<double>(s.m * s.k + s.k * s.n + s.m * s.n) *
                       static_cast<double>(s.batch_count);
  const bool l2_resident = bytes <= gpu.l2_bytes;
  // Misaligned rows rule out the TMA/wide-load kernels: cuBLAS falls back to older kernels whose
  // tensor-core rate is a fraction of the peak and whose loads and stores are narrower.
  sm_rate /= slowdown;
  if (misaligned) {
    l2_bandwidth /= params.misaligned_bandwidth_slowdown;
    dram_bandwidth /= params.misaligned_bandwidth_slowdown;
  }
  const double memory_s = bytes / (l2_resident ? l2_bandwidth : dram_bandwidth);
  const double floor_s =
      misaligned ? params.misaligned_launch_floor_s : params.gemm_launch_floor_of(p);

  const std::vector<tile> &menu = misaligned                ? fallback_tiles
                                  : runs_on_tensor_cores(p) ? tensor_tiles
                                  : s.m <= 8                ? simt_and_skinny_tiles
                                                            : simt_tiles;
  double best_time = -1;
  for (const tile &t : menu) {
    const std::int64_t tiles = ceil_div(s.m, t.m) * ceil_div(s.n, t.n) * s.batch_count;
    for (int split : split_k_factors) {
      if (split > 1 && (s.k / split < min_split_k_depth || tiles * split > 2 * gpu.sm_count))
        continue;
      const std::int64_t depth = ceil_div(s.k, split);
      const double work_items = static_cast<double>(tiles * split);
      // One tile: its FMAs, its operand loads through L2, or its K loop's latency, whichever is
      // longest, plus the fixed cost every wave pays.
      const double tile_s =
          std::max({2.0 * t.m * t.n * static_cast<double>(depth) / sm_rate,
                    static_cast<double>(t.m + t.n) * static_cast<double>(depth) * element /
                        (l2_bandwidth / sms),
                    static_cast<double>(ceil_div(depth, k_step)) * params.k_step_latency_s}) +
          params.wave_overhead_s;
      const double whole_waves = std::ceil(work_items / sms);
      double device_s = whole_waves * tile_s;
      if (split > 1) // partial sums: written and read back in fp32
        device_s +=
            2.0 * 4.0 * split * static_cast<double>(s.m * s.n * s.batch_count) / dram_bandwidth;
      // The call is as slow as its kernels or its launch, whichever is slower; split-K's reduction
      // is a second launch on top.
      const double time_s =
          std::max({device_s, memory_s, floor_s}) + (split > 1 ? params.split_k_overhead_s : 0.0);
      if (best_time < 0 || time_s < best_time) {
        best_time = time_s;
        best.launch_bound = floor_s > std::max(device_s, memory_s);
        best.tile_m = t.m;
        best.tile_n = t.n;
        best.split_k = split;
        best.tiles = tiles * split;
        best.waves = work_items / sms;
        best.wave_efficiency = work_items / (whole_waves * sms);
        best.tile_efficiency =
            static_cast<double>(s.m * s.n) /
            static_cast<double>(ceil_div(s.m, t.m) * t.m * ceil_div(s.n, t.n) * t.n);
      }
    }
  }
  best.alignment_bytes = alignment;
  best.l2_resident = l2_resident;
  best.time_s = best_time;

  std::vector<std::string> &why = best.factors;
  why.push_back(
      fmt::format("tile {}×{}{}: {} work items, {:.2f} waves on {} SMs", best.tile_m, best.tile_n,
                  best.split_k > 1 ? fmt::format(", split-K {}", best.split_k) : std::string{},
                  best.tiles, best.waves, gpu.sm_count));
  if (best.wave_efficiency < 0.95)
    why.push_back(fmt::format("wave quantization: the last wave keeps {:.0f}% of the SMs busy",
                              100 * (best.waves - std::floor(best.waves) > 0
                                         ? best.waves - std::floor(best.waves)
                                         : 1.0)));
  if (best.tile_efficiency < 0.97)
    why.push_back(fmt::format("partial tiles: {:.0f}% of the computed outputs are real",
                              100 * best.tile_efficiency));
  if (misaligned) {
    const bool n_breaks = row_alignment_bytes(s.n, p) < 16;
    why.push_back(fmt::format("{}={} breaks 16-byte alignment ({}-byte rows): ×{:.1f} slower path",
                              n_breaks ? "N" : "K", n_breaks ? s.n : s.k, alignment, slowdown));
  }
  if (l2_resident)
    why.push_back("operands fit in L2: back-to-back calls read them from L2");
  if (best.launch_bound)
    why.push_back(fmt::format("launch floor {:.1f} µs", floor_s * 1e6));
  return best;
}

} // namespace roofline
