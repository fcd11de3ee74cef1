// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/analysis/advisor.hpp"
#include "roofline/analysis/analysis.hpp"
#include "roofline/analysis/measurement.hpp"

#include <optional>
#include <string>
#include <vector>

namespace roofline {

/// A padding suggestion's two GEMMs as measured: the original and the padded one, eager, per call.
struct padding_timing {
  double time_s = 0;
  double padded_time_s = 0;

  double speedup() const { return padded_time_s > 0 ? time_s / padded_time_s : 1; }
};

/// Sums over the measured ops of one step (every op × its count), beside what was predicted of
/// them.
struct measured_totals {
  int ops = 0;                 ///< distinct ops measured
  int skipped = 0, failed = 0; ///< distinct ops that were not: their notes say why
  double time_s = 0;           ///< eager, measured
  double predicted_time_s = 0; ///< eager, predicted, of the same ops
  double roofline_time_s = 0;  ///< the roofline bound of the same ops
  /// Of the ops whose calls were also replayed from a CUDA graph (capture can fail where eager
  /// ran): measured and predicted device time and their roofline bound.
  double device_time_s = 0, predicted_device_time_s = 0, roofline_of_device_s = 0;
  bool cold_l2 = false; ///< operands were rotated through buffers larger than L2
  /// Of the ops held at the power limit (measurement::held): how many, their sustained time and
  /// energy per step, and what the analysis predicted of them in the step.
  int held = 0;
  double held_time_s = 0, held_energy_j = 0;
  double predicted_time_of_held_s = 0, predicted_energy_of_held_j = 0;
};

/// One GPU's share of a tensor-parallel step measured on every GPU at once (--devices all):
/// device times (graph-replayed), measured and predicted, of the GEMMs and all-reduces measured.
struct gpu_step {
  int gpu = 0;
  double gemm_time_s = 0, predicted_gemm_time_s = 0;
  double all_reduce_time_s = 0, predicted_all_reduce_time_s = 0;
  /// The step: the measured GEMMs and all-reduces, the other ops at their predicted device time.
  double step_time_s = 0, predicted_step_time_s = 0;
};

/// What every output format is written from, assembled last from the stages' values.
struct report {
  roofline::analysis analysis;
  std::optional<roofline::advice> advice;
  /// Per op of analysis.ops when the ops were measured (nullopt for ops the run did not take up,
  /// e.g. all-reduces on one GPU); empty when they were not.
  std::vector<std::optional<measurement>> measured;
  /// Per advice->padding when they were measured: nullopt where either GEMM did not run.
  std::vector<std::optional<roofline::padding_timing>> measured_padding;
  std::vector<std::string> notes;               ///< the analysis's, then the measurement's
  std::optional<measured_totals> measured_sums; ///< set when ops were measured
  std::vector<gpu_step> gpu_steps;              ///< measured on every GPU: one per GPU
  /// False when measuring was stopped (interrupted) before every op was measured: the ops it did
  /// not reach are marked in `measured`. True for every run that was not stopped.
  bool complete = true;

  /// The measurement of analysis.ops[i]; nullptr when it was not measured.
  const measurement *measured_op(std::size_t i) const;
  /// The measurement of advice->padding[i]; nullptr when it was not measured.
  const roofline::padding_timing *measured_pad(std::size_t i) const;
};

/// The report of an analysis, its advice and what measuring showed: `ops` measured per op of
/// `a.ops`, `padding` two per padding suggestion of `advice` (the original, then the padded GEMM).
/// Throws roofline::error when there are not as many measurements as ops they are said to be of.
/// The notes of `padding`'s run are left out (the same run's as `ops`'). The report is complete
/// when neither run was stopped.
report assemble_report(analysis a, std::optional<roofline::advice> advice = std::nullopt,
                       std::optional<measurements> ops = std::nullopt,
                       std::optional<measurements> padding = std::nullopt);

} // namespace roofline
