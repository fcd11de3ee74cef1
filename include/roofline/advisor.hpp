// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/gemm.hpp"
#include "roofline/network.hpp"
#include "roofline/op.hpp"
#include "roofline/perf_model.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace roofline {

struct report;

/// Pad a GEMM's dimensions: the 16-byte rule of the precision, or a size that fills tiles and
/// waves.
struct padding_advice {
  std::string layer;
  roofline::pass pass = pass::forward;
  precision prec = precision::fp16;
  gemm_shape original, padded;
  std::string reason; ///< "N=50257 breaks the 16-byte rule of fp16 (multiples of 8)"
  double time_s = 0, padded_time_s = 0;                          ///< predicted, per call
  double extra_flops = 0;                                        ///< padded FLOPs / original − 1
  double extra_bytes = 0;                                        ///< padded bytes / original − 1
  std::optional<double> measured_time_s, measured_padded_time_s; ///< with --measure

  double predicted_speedup() const { return padded_time_s > 0 ? time_s / padded_time_s : 1; }
};

/// Batch sizes for one GEMM whose rows grow with the batch.
struct batch_advice {
  std::string layer;
  roofline::pass pass = pass::forward;
  std::int64_t batch = 0; ///< the network's
  std::optional<std::int64_t>
      compute_bound_batch; ///< smallest batch with intensity ≥ ridge; unset: never
  std::optional<std::int64_t>
      full_wave_batch; ///< `batch` if its tiles fill ≥ 95% of the last wave, else the smallest
                       ///< multiple of 8 that does and costs ≥ 3% less time per sample
};

/// What to change, with predicted gains.
struct advice {
  std::vector<padding_advice> padding;
  std::vector<batch_advice> batch;
  /// Smallest power-of-two batch at which less than half the GEMM time is memory-bound; unset: none
  /// ≤ 65536.
  std::optional<std::int64_t> network_compute_bound_batch;
  std::vector<std::string> warnings;
};

/// Padding worth at least `min_speedup` (predicted), batch sizes per GEMM whose rows grow with the
/// batch, and a warning when most of the step is memory-bound. `analysis` is analyze(net, model,
/// ...).
advice advise(const network &net, const report &analysis, const perf_model &model,
              double min_speedup = 1.03);

} // namespace roofline
