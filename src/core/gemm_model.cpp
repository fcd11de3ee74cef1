// SPDX-License-Identifier: Apache-2.0
#include "roofline/gemm_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace roofline {

int row_alignment_bytes(std::int64_t elements, precision p) {
  const std::int64_t bytes = elements * element_bytes(p);
  int alignment = 16;
  while (alignment > 1 && bytes % alignment != 0)
    alignment /= 2;
  return alignment;
}

int row_alignment_bytes(const gemm_shape &s, precision p) {
  return std::min(row_alignment_bytes(s.k, p), row_alignment_bytes(s.n, p));
}

std::int64_t alignment_elements(precision p) {
  return 16 / element_bytes(p);
}

std::string_view to_string(kernel_family f) {
  switch (f) {
  case kernel_family::tensor: return "tensor";
  case kernel_family::fallback: return "fallback";
  case kernel_family::simt: return "simt";
  case kernel_family::gemv: return "gemv";
  }
  return "?";
}

namespace {

struct tile {
  int m, n;
};

// Output tiles as (M, N). A model needs the menu, not the heuristic: it takes the fastest tile, as
// a good heuristic would.
// nvjet_sm90 (fp16/bf16/fp8/int8) sizes its N tile in steps of 8–32 (144, 168, 320 ...) so that
// tiles divide N well, and has skinny 8- to 32-row tiles for decode-like M.
const std::vector<tile> nvjet_tiles = [] {
  std::vector<tile> menu;
  for (int n : {64, 96, 128, 144, 160, 168, 192, 224, 256, 320})
    for (int m : {64, 128, 256})
      if (m * n <= 128 * 320)
        menu.push_back({m, n});
  for (int m : {8, 16, 32})
    for (int n : {64, 128, 256})
      menu.push_back({m, n});
  // Largest first: of equally fast tiles, the largest loads least.
  std::stable_sort(menu.begin(), menu.end(), [](tile a, tile b) { return a.m * a.n > b.m * b.n; });
  return menu;
}();
// xmma sm90 (tf32) and the kernels of GPUs before Hopper have the classic power-of-two tiles.
const std::vector<tile> classic_tiles{{128, 256}, {256, 128}, {128, 128}, {128, 64}, {64, 128},
                                      {64, 64},   {64, 256},  {256, 64},  {8, 64},   {8, 128},
                                      {8, 256},   {16, 64},   {16, 128},  {32, 64},  {32, 128}};
// The Ampere/Turing CUTLASS kernels cuBLAS falls back to.
const std::vector<tile> fallback_tiles{{64, 64}, {128, 128}, {128, 256}, {256, 128}};
// CUDA-core (SIMT) GEMMs use mid-sized tiles.
const std::vector<tile> simt_tiles{{128, 128}, {64, 128}, {128, 64}, {64, 64},
                                   {32, 128},  {128, 32}, {32, 32}};
// GEMV and gemmSN kernels: a few rows of A against column blocks of B.
const std::vector<tile> gemv_tiles{{8, 64},  {8, 128},  {8, 256}, {16, 64}, {16, 128},
                                   {32, 32}, {32, 128}, {64, 64}, {64, 128}};
constexpr int split_k_factors[] = {1, 2, 4, 8, 16};
constexpr std::int64_t min_split_k_depth =
    256; // cuBLAS does not split K below a few pipeline stages

bool runs_on_tensor_cores(precision p) {
  return p != precision::fp32 && p != precision::fp64;
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

/// One kind of cuBLAS kernel as the model costs it.
struct kernel_kind {
  kernel_family family;
  double slowdown = 1;           ///< of its FMA rate against the precision's peak
  double bandwidth_slowdown = 1; ///< of its loads and stores (misaligned rows: narrower loads)
  const std::vector<tile> *menu = nullptr;
  /// The K depth one tile has in flight per memory latency (its K slice times its pipeline
  /// stages: nvjet 64×4, CUTLASS 32×2, SIMT 8×3); 0: the kernel spreads K over a tile's threads.
  std::int64_t k_step = 0;
  double launch_floor_s = 0; ///< what one call costs the host: it differs by kernel library
};

/// cuBLAS's kernels for Hopper and newer (nvjet): TMA loads, N tiles in steps of 8 to 32.
bool has_nvjet(const gpu_spec &gpu) {
  return std::strtod(gpu.compute_capability.c_str(), nullptr) >= 9.0;
}

/// The kernels cuBLAS may run for the shape, as its kernel names on the H200 show: aligned
/// tensor-core GEMMs run the GPU's own kernels (on Hopper, tf32's small ones also the older
/// CUTLASS kernels, which launch faster); misaligned rows older CUTLASS kernels, whatever M > 1;
/// fp32 SIMT kernels; decode-like M GEMV and gemmSN kernels.
std::vector<kernel_kind> kernels_for(const gemm_shape &s, precision p, int alignment,
                                     const gpu_spec &gpu, const model_parameters &params) {
  const bool tensor = runs_on_tensor_cores(p);
  const bool aligned = alignment == 16;
  if ((!tensor && s.m <= 8) || (s.m == 1 && (!aligned || p == precision::tf32))) {
    // gemv2T streams 4-byte elements at full bandwidth; the GEMVs of misaligned 2-byte rows
    // (narrower loads) and gemmSN (M > 1) stream slower, each at its own rate.
    const double slowdown = s.m > 1                 ? params.gemv_bandwidth_slowdown
                            : element_bytes(p) == 4 ? 1.0
                                                    : params.misaligned_gemv_bandwidth_slowdown;
    return {{kernel_family::gemv, 1, slowdown, &gemv_tiles, 0, params.fallback_launch_floor_s}};
  }
  if (!tensor)
    return {{kernel_family::simt, 1, 1, &simt_tiles, 24, params.gemm_launch_floor_of(p)}};
  if (aligned) {
    const bool nvjet = has_nvjet(gpu) && p != precision::tf32;
    std::vector<kernel_kind> kinds{{kernel_family::tensor, 1, 1,
                                    nvjet ? &nvjet_tiles : &classic_tiles, 256,
                                    params.gemm_launch_floor_of(p)}};
    if (p == precision::tf32 && has_nvjet(gpu))
      kinds.push_back({kernel_family::fallback, params.ampere_slowdown, 1, &fallback_tiles, 64,
                       params.fallback_launch_floor_s});
    return kinds;
  }
  // Misaligned rows: rate by alignment; each halving of the loads' width costs bandwidth again.
  // cuBLAS runs tf32's on fp32's Ampere xmma kernels (some of them SIMT): they launch like fp32's.
  const auto slowdown = params.misalignment_slowdown.find(alignment);
  return {{kernel_family::fallback,
           slowdown == params.misalignment_slowdown.end() ? 1.0 : slowdown->second,
           std::pow(params.misaligned_bandwidth_slowdown, std::log2(16.0 / alignment)),
           &fallback_tiles, 64,
           p == precision::tf32 ? params.gemm_launch_floor_of(precision::fp32)
                                : params.fallback_launch_floor_s}};
}

struct candidate {
  double time_s = -1, device_s = 0;
  double launch_s = 0; ///< the host's launches: the kernel's floor, plus the reduction's
  tile t{};
  int split = 1;
  std::int64_t tiles = 0; ///< work items: output tiles × split
  const kernel_kind *kind = nullptr;
  bool reduce = false;
};

candidate faster(const candidate &a, const candidate &b) {
  return a.time_s < 0 || (b.time_s >= 0 && b.time_s < a.time_s) ? b : a;
}

} // namespace

bool reduces_split_k(const gemm_shape &s, precision p, const gpu_spec &gpu,
                     const model_parameters &params) {
  const double output_waves =
      static_cast<double>(ceil_div(s.m, 64) * ceil_div(s.n, 64) * s.batch_count) / gpu.sm_count;
  const bool deep = output_waves < params.deep_split_k_below_waves &&
                    static_cast<double>(s.k) >= params.deep_split_k_min_k;
  if (s.m <= 8) // cuBLAS's skinny kernels (gemmSN, 16×16 wmma tiles) split only a deep K
    return deep;
  const bool narrow_rows = row_alignment_bytes(s, p) <= element_bytes(p);
  return deep || output_waves < (narrow_rows ? params.narrow_split_k_below_waves_of(p)
                                             : params.split_k_below_waves_of(p));
}

gemm_estimate estimate_gemm(const gemm_shape &s, precision p, double peak_flop_per_s,
                            const gpu_spec &gpu, const model_parameters &params) {
  const double element = element_bytes(p);
  const double sms = gpu.sm_count;
  // The narrower of the rows of A, B (K long) and C (N long) decides the kernel.
  const int alignment = row_alignment_bytes(s, p);
  const double bytes = element * static_cast<double>(s.m * s.k + s.k * s.n + s.m * s.n) *
                       static_cast<double>(s.batch_count);
  const bool l2_resident = bytes <= 0.5 * gpu.l2_bytes;
  const std::vector<kernel_kind> kinds = kernels_for(s, p, alignment, gpu, params);

  // What a kernel's candidates share, whatever their tile.
  struct kind_costs {
    double sm_rate, l2_bandwidth, dram_bandwidth, memory_s;
  };
  const double efficiency = params.efficiency_of(p);
  const double wave_overhead_s = params.wave_overhead_of(p);
  const auto costs_of = [&](const kernel_kind &kind) {
    kind_costs k;
    k.sm_rate = peak_flop_per_s * efficiency / kind.slowdown / sms;
    k.l2_bandwidth = params.l2_to_dram_bandwidth * gpu.dram_bytes_per_s / kind.bandwidth_slowdown;
    k.dram_bandwidth = params.dram_efficiency * gpu.dram_bytes_per_s / kind.bandwidth_slowdown;
    k.memory_s = bytes / (l2_resident ? k.l2_bandwidth : k.dram_bandwidth);
    return k;
  };

  // One call of `kind` with tile `t`, K split `split` ways.
  const auto cost = [&](const kernel_kind &kind, const kind_costs &k, const tile &t, int split,
                        bool reduce) {
    candidate c;
    c.kind = &kind;
    c.t = t;
    c.split = split;
    c.tiles = ceil_div(s.m, t.m) * ceil_div(s.n, t.n) * s.batch_count * split;
    const std::int64_t depth = ceil_div(s.k, split);
    // One tile: its FMAs, its operand loads through L2, or its K loop's latency, whichever is
    // longest, plus the fixed cost every wave pays.
    const double tile_s =
        std::max({2.0 * t.m * t.n * static_cast<double>(depth) / k.sm_rate,
                  static_cast<double>(t.m + t.n) * static_cast<double>(depth) * element /
                      (k.l2_bandwidth / sms),
                  kind.k_step > 0
                      ? static_cast<double>(ceil_div(depth, kind.k_step)) * params.k_step_latency_s
                      : 0.0}) +
        wave_overhead_s;
    // A partial last wave costs `wave_quantization` of a whole one; fill and drain once.
    const double waves = static_cast<double>(c.tiles) / sms;
    c.device_s = (waves + params.wave_quantization * (std::ceil(waves) - waves)) * tile_s +
                 params.kernel_overhead_s;
    if (split > 1) // partial sums: written and read back in fp32
      c.device_s +=
          2.0 * 4.0 * split * static_cast<double>(s.m * s.n * s.batch_count) / k.dram_bandwidth;
    // The call is as slow as its kernels, its streaming or its launches, whichever is slowest:
    // split-K's reduction is one more kernel on the GPU and one more launch on the host.
    c.reduce = reduce;
    c.launch_s = kind.launch_floor_s + (reduce ? params.split_k_overhead_s : 0.0);
    c.time_s =
        std::max({c.device_s + (reduce ? params.kernel_overhead_s : 0.0), k.memory_s, c.launch_s});
    return c;
  };

  candidate chosen;
  for (const kernel_kind &kind : kinds) {
    const kind_costs k = costs_of(kind);
    candidate best, unsplit;
    for (const tile &t : *kind.menu) {
      const std::int64_t tiles = ceil_div(s.m, t.m) * ceil_div(s.n, t.n) * s.batch_count;
      for (int split : split_k_factors) {
        // Only the tensor-core kernels split K by cost: GEMVs never do, and the kernels without
        // TMA follow cuBLAS's rule below.
        if (split > 1 && (kind.family != kernel_family::tensor || s.k / split < min_split_k_depth ||
                          tiles * split > 2 * gpu.sm_count))
          continue;
        const candidate c = cost(kind, k, t, split, split > 1);
        best = faster(best, c);
        if (split == 1)
          unsplit = faster(unsplit, c);
      }
    }
    // Without TMA, cuBLAS's rule decides split-K, not its cost: a reduction launch, K split as
    // the unsplit kernel's best tile does best.
    if ((kind.family == kernel_family::fallback || kind.family == kernel_family::simt) &&
        reduces_split_k(s, p, gpu, params)) {
      candidate split;
      for (int factor : split_k_factors)
        if (s.k >= factor)
          split = faster(split, cost(kind, k, unsplit.t, factor, true));
      best = split;
    }
    chosen = faster(chosen, best);
  }

  gemm_estimate e;
  e.time_s = chosen.time_s;
  e.family = chosen.kind->family;
  e.tile_m = chosen.t.m;
  e.tile_n = chosen.t.n;
  e.split_k = chosen.split;
  e.launches = chosen.reduce ? 2 : 1;
  e.tiles = chosen.tiles;
  e.waves = static_cast<double>(chosen.tiles) / sms;
  e.wave_efficiency = static_cast<double>(chosen.tiles) / (std::ceil(e.waves) * sms);
  e.tile_efficiency =
      static_cast<double>(s.m * s.n) / static_cast<double>(ceil_div(s.m, chosen.t.m) * chosen.t.m *
                                                           ceil_div(s.n, chosen.t.n) * chosen.t.n);
  e.alignment_bytes = alignment;
  e.l2_resident = l2_resident;
  e.launch_bound = chosen.launch_s >= chosen.time_s;

  std::vector<std::string> &why = e.factors;
  switch (e.family) {
  case kernel_family::tensor: why.push_back("tensor-core kernel"); break;
  case kernel_family::fallback:
    why.push_back(alignment < 16 ? "CUTLASS fallback kernel"
                                 : "Ampere CUTLASS kernel (launches faster than Hopper's)");
    break;
  case kernel_family::simt: why.push_back("CUDA-core (SIMT) kernel"); break;
  case kernel_family::gemv: why.push_back("GEMV kernel: streams the rows of B"); break;
  }
  why.back() +=
      fmt::format(", tile {}×{}{}: {} work items, {:.2f} waves on {} SMs", e.tile_m, e.tile_n,
                  e.split_k > 1   ? fmt::format(", split-K {}", e.split_k)
                  : chosen.reduce ? std::string(", K whole but a reduction kernel after")
                                  : std::string{},
                  e.tiles, e.waves, gpu.sm_count);
  if (e.wave_efficiency < 0.95)
    why.push_back(fmt::format(
        "wave quantization: the last wave keeps {:.0f}% of the SMs busy",
        100 * (e.waves - std::floor(e.waves) > 0 ? e.waves - std::floor(e.waves) : 1.0)));
  if (e.tile_efficiency < 0.97)
    why.push_back(fmt::format("partial tiles: {:.0f}% of the computed outputs are real",
                              100 * e.tile_efficiency));
  if (e.family == kernel_family::fallback && alignment < 16) {
    const bool n_breaks = row_alignment_bytes(s.n, p) < 16;
    why.push_back(fmt::format("{}={} breaks 16-byte alignment ({}-byte rows): ×{:.1f} slower path",
                              n_breaks ? "N" : "K", n_breaks ? s.n : s.k, alignment,
                              chosen.kind->slowdown));
  }
  if (l2_resident)
    why.push_back("operands fit in L2: back-to-back calls read them from L2");
  if (e.launch_bound)
    why.push_back(fmt::format("launch floor {:.1f} µs{}", chosen.kind->launch_floor_s * 1e6,
                              chosen.reduce ? " plus the split-K reduction's launch" : ""));
  return e;
}

} // namespace roofline
