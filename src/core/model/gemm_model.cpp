// SPDX-License-Identifier: Apache-2.0
#include "roofline/model/gemm_model.hpp"

#include "checked_math.hpp"
#include "kernel_choice.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <iterator>
#include <limits>

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

/// std::ceil of a call's waves (non-negative) without a library call: the candidates' loop runs
/// it for every tile and split.
double ceil_waves(double waves) {
  if (!(waves >= 0 && waves < 4.0e15))
    return std::ceil(waves);
  const double whole = static_cast<double>(static_cast<std::int64_t>(waves));
  return whole < waves ? whole + 1 : whole;
}

/// Keeps the faster of `best` and `c` in `best` (the earlier one of two as fast).
void keep_faster(candidate &best, const candidate &c) {
  if (best.time_s < 0 || (c.time_s >= 0 && c.time_s < best.time_s))
    best = c;
}

/// What a kernel's candidates share, whatever their tile.
struct kind_costs {
  double sm_rate, l2_bandwidth, dram_bandwidth, memory_s, l2_bandwidth_per_sm;
};

/// What a K split shares, whatever the tile: the depth each work item reduces, its K loop's
/// latency and split-K's partial sums (written and read back in fp32).
struct split_costs {
  int split;
  std::int64_t depth;
  double k_loop_s, partial_sums_s;
};

constexpr std::size_t split_count = std::size(split_k_factors);
using split_menu = std::array<split_costs, split_count>;

/// The cost side of the GEMM model for one shape: what every candidate (kernel kind × tile ×
/// K split) of it shares, read from the parameters once, and the time of each candidate. Every
/// term is computed as the model states it; what does not change within the search's loops is
/// computed before them (same values).
class gemm_costs {
public:
  gemm_costs(const gemm_shape &s, precision p, double peak_flop_per_s, const gpu_spec &gpu,
             const model_parameters &params, cache_state operands, double streamed_bytes)
      : m_shape(s), m_gpu(gpu), m_params(params), m_peak_flop_per_s(peak_flop_per_s),
        m_element(element_bytes(p)), m_weight_element(weight_element_bytes(s, p)),
        m_sms(gpu.sm_count), m_cold(operands == cache_state::cold),
        m_efficiency(params.efficiency(p)), m_wave_overhead_s(params.wave_overhead_s(p)),
        m_kernel_overhead_s(params[parameter::kernel_overhead_s]),
        m_wave_quantization(params[parameter::wave_quantization]),
        m_k_step_latency_s(params[parameter::k_step_latency_s]) {
    // Sizes as doubles: a shape's products may pass 2^63 (the advice estimates batches beyond the
    // network's, where nothing lowered them).
    const double m = static_cast<double>(s.m), n = static_cast<double>(s.n),
                 k_depth = static_cast<double>(s.k), instances = static_cast<double>(s.batch_count);
    m_bytes =
        streamed_bytes > 0
            ? streamed_bytes
            : (m_element * (m * k_depth + m * n) + m_weight_element * k_depth * n) * instances;
    m_l2_resident = !m_cold && m_bytes <= params[parameter::l2_resident_fraction] * gpu.l2_bytes;
    m_outputs = m * n * instances;
  }

  bool l2_resident() const { return m_l2_resident; }
  bool cold() const { return m_cold; }

  kind_costs of_kind(const kernel_kind &kind) const {
    kind_costs k;
    k.sm_rate = m_peak_flop_per_s * m_efficiency / kind.slowdown / m_sms;
    k.l2_bandwidth = l2_bytes_per_s(m_gpu, m_params) / kind.bandwidth_slowdown;
    k.dram_bandwidth =
        m_params[parameter::dram_efficiency] * m_gpu.dram_bytes_per_s / kind.bandwidth_slowdown;
    // Cold operands stream at DRAM's cold rate after its latency; warm ones from L2 where they
    // fit, else at the rate back-to-back calls reach (L2 still serves part of them).
    k.memory_s =
        m_cold ? m_bytes * kind.bandwidth_slowdown /
                         (m_params[parameter::cold_dram_efficiency] * m_gpu.dram_bytes_per_s) +
                     m_params[parameter::cold_dram_latency_s]
               : m_bytes / (m_l2_resident ? k.l2_bandwidth : k.dram_bandwidth);
    k.l2_bandwidth_per_sm = k.l2_bandwidth / m_sms;
    return k;
  }

  split_menu splits(const kernel_kind &kind, const kind_costs &k) const {
    split_menu splits{};
    for (std::size_t i = 0; i < split_count; ++i) {
      split_costs &c = splits[i];
      c.split = split_k_factors[i];
      c.depth = ceil_div(m_shape.k, c.split);
      c.k_loop_s = kind.k_step > 0
                       ? static_cast<double>(ceil_div(c.depth, kind.k_step)) * m_k_step_latency_s
                       : 0.0;
      c.partial_sums_s = c.split > 1 ? 2.0 * 4.0 * c.split * m_outputs / k.dram_bandwidth : 0.0;
    }
    return splits;
  }

  /// The output tiles of `t`, saturated past 2^63 (no shape that large is lowered; a caller may
  /// still ask).
  std::int64_t output_tiles(const tile &t) const {
    return detail::checked_product(
               {ceil_div(m_shape.m, t.m), ceil_div(m_shape.n, t.n), m_shape.batch_count})
        .value_or(std::numeric_limits<std::int64_t>::max());
  }

  /// One call of `kind` with tile `t` (`output_tiles` of them), K split as `sc` says.
  candidate cost(const kernel_kind &kind, const kind_costs &k, const tile &t,
                 std::int64_t output_tiles, const split_costs &sc, bool reduce) const {
    candidate c;
    c.kind = &kind;
    c.t = t;
    c.split = sc.split;
    c.tiles = detail::checked_product({output_tiles, sc.split})
                  .value_or(std::numeric_limits<std::int64_t>::max()); // as output_tiles saturates
    const double depth = static_cast<double>(sc.depth);
    // One tile: its FMAs, its operand loads through L2, or its K loop's latency, whichever is
    // longest, plus the fixed cost every wave pays.
    const double tile_s =
        std::max({2.0 * t.m * t.n * depth / k.sm_rate,
                  (t.m * m_element + t.n * m_weight_element) * depth / k.l2_bandwidth_per_sm,
                  sc.k_loop_s}) +
        m_wave_overhead_s;
    // A partial last wave costs `wave_quantization` of a whole one; fill and drain once.
    const double waves = static_cast<double>(c.tiles) / m_sms;
    c.device_s =
        (waves + m_wave_quantization * (ceil_waves(waves) - waves)) * tile_s + m_kernel_overhead_s;
    if (sc.split > 1) // partial sums: written and read back in fp32
      c.device_s += sc.partial_sums_s;
    // The call is as slow as its kernels or its streaming, whichever is slower: split-K's
    // reduction is one more kernel.
    c.reduce = reduce;
    c.time_s = std::max(c.device_s + (reduce ? m_kernel_overhead_s : 0.0), k.memory_s);
    return c;
  }

private:
  const gemm_shape &m_shape;
  const gpu_spec &m_gpu;
  const model_parameters &m_params;
  double m_peak_flop_per_s, m_element, m_weight_element, m_sms;
  bool m_cold;
  double m_efficiency, m_wave_overhead_s, m_kernel_overhead_s, m_wave_quantization,
      m_k_step_latency_s;
  double m_bytes = 0, m_outputs = 0;
  bool m_l2_resident = false;
};

/// The fastest candidate of one kernel kind: every tile of its menu, K whole or split.
candidate fastest_of_kind(const gemm_costs &costs, const kernel_kind &kind, const gemm_shape &s,
                          precision p, const gpu_spec &gpu, const model_parameters &params) {
  const kind_costs k = costs.of_kind(kind);
  const split_menu splits = costs.splits(kind, k);
  const double min_split_k_depth = params[parameter::min_split_k_depth];
  const double split_k_max_tiles = params[parameter::split_k_max_waves] * gpu.sm_count;
  // Only the tensor-core kernels split K by cost: GEMVs never do, and the kernels without
  // TMA follow cuBLAS's rule below. A split must leave each work item deep enough.
  std::size_t splits_by_cost = 1;
  if (kind.family == kernel_family::tensor)
    while (splits_by_cost < split_count &&
           !(static_cast<double>(s.k / splits[splits_by_cost].split) < min_split_k_depth))
      ++splits_by_cost;
  candidate best, unsplit;
  for (const tile &t : *kind.menu) {
    const std::int64_t tiles = costs.output_tiles(t);
    const candidate whole = costs.cost(kind, k, t, tiles, splits[0], false);
    keep_faster(best, whole);
    keep_faster(unsplit, whole);
    // ... and not into more work items than split_k_max_waves waves hold (more with each split).
    for (std::size_t i = 1;
         i < splits_by_cost && !(static_cast<double>(tiles) * splits[i].split > split_k_max_tiles);
         ++i)
      keep_faster(best, costs.cost(kind, k, t, tiles, splits[i], true));
  }
  // Without TMA, cuBLAS's rule decides split-K, not its cost: a reduction launch, K split as
  // the unsplit kernel's best tile does best.
  if ((kind.family == kernel_family::fallback || kind.family == kernel_family::simt) &&
      reduces_split_k(s, p, gpu, params)) {
    candidate split;
    const std::int64_t tiles = costs.output_tiles(unsplit.t);
    for (const split_costs &sc : splits)
      if (s.k >= sc.split)
        keep_faster(split, costs.cost(kind, k, unsplit.t, tiles, sc, true));
    best = split;
  }
  return best;
}

/// The estimate's numbers from the candidate chosen.
gemm_estimate estimate_of(const candidate &chosen, const gemm_shape &s, double sms, int alignment,
                          bool l2_resident) {
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
  // Per dimension, as doubles: the tiles' rows times their columns may pass 2^63.
  const auto covered = [](std::int64_t size, int tile_size) {
    return static_cast<double>(size) /
           (static_cast<double>(ceil_div(size, tile_size)) * static_cast<double>(tile_size));
  };
  e.tile_efficiency = covered(s.m, chosen.t.m) * covered(s.n, chosen.t.n);
  e.alignment_bytes = alignment;
  e.l2_resident = l2_resident;
  return e;
}

/// The estimate's factors in words: the kernel and its tile, then each effect that costs time.
std::vector<std::string> explanation(const gemm_estimate &e, const candidate &chosen,
                                     const gemm_shape &s, precision p, const gpu_spec &gpu,
                                     const model_parameters &params, bool cold) {
  std::vector<std::string> why;
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
  if (e.wave_efficiency < full_last_wave_efficiency)
    why.push_back(fmt::format(
        "wave quantization: the last wave keeps {:.0f}% of the SMs busy",
        100 * (e.waves - std::floor(e.waves) > 0 ? e.waves - std::floor(e.waves) : 1.0)));
  if (e.tile_efficiency < 0.97)
    why.push_back(fmt::format("partial tiles: {:.0f}% of the computed outputs are real",
                              100 * e.tile_efficiency));
  if (e.family == kernel_family::fallback && e.alignment_bytes < 16) {
    const bool n_breaks = row_alignment_bytes(s.n, p) < 16;
    why.push_back(fmt::format("{}={} breaks 16-byte alignment ({}-byte rows): ×{:.1f} slower path",
                              n_breaks ? "N" : "K", n_breaks ? s.n : s.k, e.alignment_bytes,
                              chosen.kind->slowdown));
  }
  if (e.l2_resident)
    why.push_back("operands fit in L2: back-to-back calls read them from L2");
  if (cold)
    why.push_back(fmt::format("operands cold: read from DRAM at {:.0f}% of its bandwidth",
                              100 * params[parameter::cold_dram_efficiency]));
  return why;
}

} // namespace

std::string_view to_string(cache_state c) {
  return c == cache_state::warm ? "warm" : "cold";
}

double l2_bytes_per_s(const gpu_spec &gpu, const model_parameters &params) {
  return params[parameter::l2_bytes_per_sm_cycle] * gpu.sm_count * gpu.boost_clock_hz;
}

gemm_estimate estimate_gemm(const gemm_shape &s, precision p, double peak_flop_per_s,
                            const gpu_spec &gpu, const model_parameters &params,
                            cache_state operands, reasons why_too, double streamed_bytes) {
  // The narrower of the rows of A, B (K long) and C (N long) decides the kernel.
  const int alignment = row_alignment_bytes(s, p);
  const gemm_costs costs(s, p, peak_flop_per_s, gpu, params, operands, streamed_bytes);
  const detail::kernel_kinds kinds = detail::kernels_for(s, p, alignment, gpu, params);
  candidate chosen;
  for (const kernel_kind &kind : kinds)
    keep_faster(chosen, fastest_of_kind(costs, kind, s, p, gpu, params));
  gemm_estimate e = estimate_of(chosen, s, gpu.sm_count, alignment, costs.l2_resident());
  if (why_too == reasons::with)
    e.factors = explanation(e, chosen, s, p, gpu, params, costs.cold());
  return e;
}

} // namespace roofline
