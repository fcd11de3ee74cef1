// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/model/gemm.hpp"
#include "roofline/model/gpu_spec.hpp"
#include "roofline/model/kernel_family.hpp"
#include "roofline/model/model_parameters.hpp"
#include "roofline/model/precision.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace roofline {

/// Whether an estimate (or a prediction) also says why, in words (`factors`), or gives the numbers
/// alone: the same numbers, faster, for searches over many shapes that read only them.
enum class reasons { with, without };

/// Where a GEMM's operands are when it starts.
enum class cache_state {
  /// Called back to back on the same buffers: L2 keeps what fits of them from the last call (what
  /// a benchmark loop, `gemm --measure` and the calibration sweep time).
  warm,
  /// Every operand comes from DRAM: in a network's step each layer brings its own weights, and
  /// the rest of the step has evicted them since their last use (what `--cold-l2` times).
  cold
};
/// "warm", "cold".
std::string_view to_string(cache_state c);

/// A last wave at least this full (gemm_estimate::wave_efficiency: work items / (whole waves ×
/// SMs)) counts as full: below it the GEMM model names wave quantization among its factors, and
/// the batch advice looks for a batch that reaches it.
inline constexpr double full_last_wave_efficiency = 0.95;

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

/// The L2 bandwidth the GEMM model streams from: l2_bytes_per_sm_cycle × SMs × boost clock of
/// `gpu` (the model's basis: model_basis()).
double l2_bytes_per_s(const gpu_spec &gpu, const model_parameters &params);

/// Device time per call of cuBLAS's GEMM for `shape` (operands row-major A[M,K], B stored [N,K],
/// C[M,N]), called with no host gap and its operands where `operands` says: the fastest of the
/// kernels cuBLAS may run (kernel_family), each costed as the roofline's two terms refined by tile
/// and wave quantization, split-K, the K loop's latency and L2 residency (warm) or DRAM's cold
/// rate (cold). The host's cost of issuing the call is not in it (host_floor).
/// `peak_flop_per_s` is the precision's peak to hold it to. With reasons::without, `factors` stay
/// empty. `streamed_bytes`, where positive, replaces the operands' bytes the call streams
/// through DRAM or L2 (a convolution's implicit GEMM reads the real tensors, not the R·S-times
/// larger im2col matrix); its tiles still load their K-deep operands as the shape says.
gemm_estimate estimate_gemm(const gemm_shape &shape, precision p, double peak_flop_per_s,
                            const gpu_spec &gpu, const model_parameters &parameters,
                            cache_state operands = cache_state::warm, reasons why = reasons::with,
                            double streamed_bytes = 0);

} // namespace roofline
