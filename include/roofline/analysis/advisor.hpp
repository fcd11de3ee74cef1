// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/analysis/advice_thresholds.hpp"
#include "roofline/analysis/analysis.hpp"
#include "roofline/analysis/batch_advice.hpp"
#include "roofline/analysis/padding_advice.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace roofline {

/// Ops the host issues more slowly than the GPU runs them: the lever is issuing fewer calls (CUDA
/// graphs, fusion), not a faster GPU.
struct launch_bound_advice {
  std::int64_t ops = 0;         ///< distinct ops (rows)
  std::int64_t runs = 0;        ///< their runs per step, counts included
  double time_s = 0;            ///< their eager time per step
  double share = 0;             ///< of the step's eager time, 0..1
  double device_time_s = 0;     ///< their device time per step (what a CUDA graph would take)
  double step_time_s = 0;       ///< the whole step, eager
  double graph_step_time_s = 0; ///< the whole step replayed from a CUDA graph: Σ device time
  bool measured_floor = false;  ///< the host floor is this machine's, not the typical one
};

/// What to change, with predicted gains: padding advice, batch advice and launch-bound advice
/// together, with their warnings.
struct advice {
  std::vector<padding_advice> padding;
  std::vector<batch_advice> batch;
  /// Smallest power-of-two batch at which less than half the GEMM time is memory-bound; unset: none
  /// ≤ 65536.
  std::optional<std::int64_t> network_compute_bound_batch;
  /// The largest batch that fits in memory, and the compute-bound batch beyond it
  /// (batch_outlook's).
  std::optional<std::int64_t> largest_fitting_batch, compute_bound_beyond_memory;
  std::optional<launch_bound_advice> launch_bound; ///< set when some op is launch-bound
  std::vector<std::string> warnings;
};

/// Padding worth at least `min_speedup` (predicted: advise_padding), batch sizes per GEMM whose
/// rows grow with the batch (advise_batch), a warning when most of the step is memory-bound and
/// one when ops are launch-bound. The advice predicts with the analysis's own model (sharing its
/// memo) and reads its network.
/// Advice whose sizes would overflow 64 bits (a padded size, a larger batch) is left out; throws
/// input_error, naming the layer, when the step's runs of launch-bound ops overflow 64 bits.
advice advise(const analysis &analysed, double min_speedup = padding_speedup_worth_advising);

} // namespace roofline
