// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/gemm.hpp"
#include "roofline/gpu_spec.hpp"
#include "roofline/model_parameters.hpp"
#include "roofline/precision.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace roofline {

/// The kinds of kernel cuBLAS runs for a GEMM, each with its own rate, floor and tiles.
enum class kernel_family {
  tensor,   ///< the GPU's own tensor-core kernels (Hopper: nvjet, xmma sm90): aligned rows
  fallback, ///< older CUTLASS tensor-core kernels: rows breaking the 16-byte rule
  simt,     ///< CUDA-core FMA kernels: fp32
  gemv,     ///< GEMV and gemmSN kernels: decode-like M
};

std::string_view to_string(kernel_family f);

/// How the model sees one GEMM on one GPU: the kernel and tile it expects cuBLAS to pick, the
/// quantization that tile brings, and the GPU's resulting time per call.
struct gemm_estimate {
  /// The GPU's time per call when calls follow each other with no host gap (all kernels of the
  /// call, split-K's reduction included): what graph-replayed calls take. No host cost.
  double device_time_s = 0;
  kernel_family family = kernel_family::tensor;
  int tile_m = 0, tile_n = 0; ///< output tile along M and N
  int split_k = 1;
  int launches = 1;                 ///< kernels per call: 2 with split-K's reduction
  std::int64_t tiles = 0;           ///< tiles × split_k × batch_count: the work items
  double waves = 0;                 ///< work items / SMs
  double wave_efficiency = 1;       ///< work items / (whole waves × SMs): the last wave's idle SMs
  double tile_efficiency = 1;       ///< M·N / (padded M · padded N): partial tiles' wasted work
  int alignment_bytes = 16;         ///< of the rows of A, B and C (16: meets the rule)
  bool l2_resident = false;         ///< operands fit in L2: back-to-back calls stream them from L2
  std::vector<std::string> factors; ///< the effects above, in words
};

/// The largest power of two ≤ 16 dividing a row of `elements` elements of `p`, in bytes.
int row_alignment_bytes(std::int64_t elements, precision p);
/// The GEMM's row alignment: the narrower of its K-long rows (A and B) and its N-long rows (C).
int row_alignment_bytes(const gemm_shape &shape, precision p);

/// The elements a row must be a multiple of to meet the 16-byte rule: 8 for fp16/bf16, 4 for
/// fp32/tf32, 16 for fp8/int8, 2 for fp64.
std::int64_t alignment_elements(precision p);

/// Whether cuBLAS adds a split-K reduction launch to its kernels without TMA (SIMT, CUTLASS
/// fallbacks), as its heuristic does on the H200 whatever that costs: when the output, in 64×64
/// tiles, fills less than split_k_below_waves of a wave (narrow_split_k_below_waves where rows are
/// aligned to one element only), or less than deep_split_k_below_waves where K is at least
/// deep_split_k_min_k; for M ≤ 8 only the latter (cuBLAS's skinny kernels split only a deep K).
bool reduces_split_k(const gemm_shape &shape, precision p, const gpu_spec &gpu,
                     const model_parameters &parameters);

/// Device time per call of cuBLAS's GEMM for `shape` (operands row-major A[M,K], B stored [N,K],
/// C[M,N]), called back-to-back on the same buffers with no host gap: the fastest of the kernels
/// cuBLAS may run (kernel_family), each costed as the roofline's two terms refined by tile and
/// wave quantization, split-K, the K loop's latency and L2 residency. The host's cost of issuing
/// the call is not in it (host_floor).
/// `peak_flop_per_s` is the precision's peak to hold it to.
gemm_estimate estimate_gemm(const gemm_shape &shape, precision p, double peak_flop_per_s,
                            const gpu_spec &gpu, const model_parameters &parameters);

} // namespace roofline
