// SPDX-License-Identifier: Apache-2.0
#pragma once

// Which kernels cuBLAS picks for a GEMM on an architecture: the kernel families, their tile menus
// and cuBLAS's split-K rule. What a kernel costs is gemm_model.cpp's.

#include "roofline/model/gemm.hpp"
#include "roofline/model/gpu_spec.hpp"
#include "roofline/model/kernel_family.hpp"
#include "roofline/model/model_parameters.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <vector>

namespace roofline {

/// Whether cuBLAS adds a split-K reduction launch to its kernels without TMA (SIMT, CUTLASS
/// fallbacks), as its heuristic does on the H200 whatever that costs: when the output, in 64×64
/// tiles, fills less than split_k_below_waves of a wave (narrow_split_k_below_waves where rows are
/// aligned to one element only), or less than deep_split_k_below_waves where K is at least
/// deep_split_k_min_k; for M ≤ 8 only the latter (cuBLAS's skinny kernels split only a deep K).
bool reduces_split_k(const gemm_shape &shape, precision p, const gpu_spec &gpu,
                     const model_parameters &parameters);

} // namespace roofline

namespace roofline::detail {

struct tile {
  int m, n;
};

inline constexpr int split_k_factors[] = {1, 2, 4, 8, 16};

/// ⌈a / b⌉ of a ≥ 0 and b > 0, without overflow near 2^63.
inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return a / b + (a % b != 0);
}

/// One kind of cuBLAS kernel as the model costs it.
struct kernel_kind {
  kernel_family family;
  double slowdown = 1;           ///< of its FMA rate against the precision's peak
  double bandwidth_slowdown = 1; ///< of its loads and stores (misaligned rows: narrower loads)
  const std::vector<tile> *menu = nullptr; ///< the output tiles it has
  /// The K depth one tile has in flight per memory latency (its K slice times its pipeline
  /// stages: nvjet 64×4, CUTLASS 32×2, SIMT 8×3); 0: the kernel spreads K over a tile's threads.
  std::int64_t k_step = 0;
};

/// A few kernel kinds, held in place (kernels_for runs once per GEMM estimate: no allocation).
class kernel_kinds {
public:
  kernel_kinds(std::initializer_list<kernel_kind> kinds) {
    if (kinds.size() > m_kinds.size())
      throw std::logic_error("kernel_kinds: more kinds than it holds");
    for (const kernel_kind &kind : kinds)
      m_kinds[m_count++] = kind;
  }
  const kernel_kind *begin() const { return m_kinds.data(); }
  const kernel_kind *end() const { return m_kinds.data() + m_count; }
  std::size_t size() const { return m_count; }

private:
  std::array<kernel_kind, 4> m_kinds{};
  std::size_t m_count = 0;
};

/// The kernels cuBLAS may run for the shape, as its kernel names on the H200 show: aligned
/// tensor-core GEMMs run the GPU's own kernels; misaligned rows older CUTLASS kernels, whatever
/// M > 1; fp32 SIMT kernels;
/// decode-like M GEMV and gemmSN kernels. `alignment` is row_alignment_bytes(s, p).
kernel_kinds kernels_for(const gemm_shape &s, precision p, int alignment, const gpu_spec &gpu,
                         const model_parameters &params);

} // namespace roofline::detail
