// SPDX-License-Identifier: Apache-2.0
#include "roofline/gemm_model.hpp"

#include "kernel_choice.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace roofline {

namespace {

using detail::ceil_div;
using detail::kernel_kind;
using detail::split_k_factors;
using detail::tile;

struct candidate {
  double time_s = -1, device_s = 0;
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

gemm_estimate estimate_gemm(const gemm_shape &s, precision p, double peak_flop_per_s,
                            const gpu_spec &gpu, const model_parameters &params) {
  const double element = element_bytes(p);
  const double sms = gpu.sm_count;
  // The narrower of the rows of A, B (K long) and C (N long) decides the kernel.
  const int alignment = row_alignment_bytes(s, p);
  const double bytes = element * static_cast<double>(s.m * s.k + s.k * s.n + s.m * s.n) *
                       static_cast<double>(s.batch_count);
  const bool l2_resident = bytes <= params[parameter::l2_resident_fraction] * gpu.l2_bytes;
  const std::vector<kernel_kind> kinds = detail::kernels_for(s, p, alignment, gpu, params);

  // What a kernel's candidates share, whatever their tile.
  struct kind_costs {
    double sm_rate, l2_bandwidth, dram_bandwidth, memory_s;
  };
  const double efficiency = params.efficiency(p);
  const double wave_overhead_s = params.wave_overhead_s(p);
  const auto costs_of = [&](const kernel_kind &kind) {
    kind_costs k;
    k.sm_rate = peak_flop_per_s * efficiency / kind.slowdown / sms;
    k.l2_bandwidth = params[parameter::l2_bytes_per_sm_cycle] * sms * gpu.boost_clock_hz /
                     kind.bandwidth_slowdown;
    k.dram_bandwidth =
        params[parameter::dram_efficiency] * gpu.dram_bytes_per_s / kind.bandwidth_slowdown;
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
                  kind.k_step > 0 ? static_cast<double>(ceil_div(depth, kind.k_step)) *
                                        params[parameter::k_step_latency_s]
                                  : 0.0}) +
        wave_overhead_s;
    // A partial last wave costs `wave_quantization` of a whole one; fill and drain once.
    const double waves = static_cast<double>(c.tiles) / sms;
    c.device_s =
        (waves + params[parameter::wave_quantization] * (std::ceil(waves) - waves)) * tile_s +
        params[parameter::kernel_overhead_s];
    if (split > 1) // partial sums: written and read back in fp32
      c.device_s +=
          2.0 * 4.0 * split * static_cast<double>(s.m * s.n * s.batch_count) / k.dram_bandwidth;
    // The call is as slow as its kernels or its streaming, whichever is slower: split-K's
    // reduction is one more kernel.
    c.reduce = reduce;
    c.time_s =
        std::max(c.device_s + (reduce ? params[parameter::kernel_overhead_s] : 0.0), k.memory_s);
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
        if (split > 1 && (kind.family != kernel_family::tensor ||
                          static_cast<double>(s.k / split) < params[parameter::min_split_k_depth] ||
                          static_cast<double>(tiles * split) >
                              params[parameter::split_k_max_waves] * gpu.sm_count))
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
  e.device_time_s = chosen.time_s;
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

  std::vector<std::string> &why = e.factors;
  switch (e.family) {
  case kernel_family::tensor: why.push_back("tensor-core kernel"); break;
  case kernel_family::fallback: why.push_back("CUTLASS fallback kernel"); break;
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
  return e;
}

} // namespace roofline
