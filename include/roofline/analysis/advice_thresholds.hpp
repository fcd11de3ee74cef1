// SPDX-License-Identifier: Apache-2.0
#pragma once
// The thresholds that decide what the advice, the report and a comparison's verdict think worth
// saying: one home each, so that every sentence about the same fact draws the same line.
// (The GEMM model's "full last wave" is gemm_model.hpp's full_last_wave_efficiency; the prices a
// spec or a comparison may give are gpu_spec.hpp's price_in_range.)

namespace roofline {

/// The share of a step's time (0..1) from which its launch-bound part is worth a sentence: the
/// advice's warning, the serving line's clause, the comparison verdict's clause. 5%: below it a
/// CUDA graph would shorten the step by less than the model's own error.
inline constexpr double min_launch_bound_share = 0.05;

/// Whether `share` (of a step's time, 0..1) launch-bound is worth saying: at least
/// min_launch_bound_share.
constexpr bool launch_bound_worth_saying(double share) {
  return share >= min_launch_bound_share;
}

/// The least predicted speedup (padded time × this ≤ unpadded time) for which padding a GEMM is
/// advised: 3%, below which the model cannot tell a gain from its own error.
inline constexpr double padding_speedup_worth_advising = 1.03;

} // namespace roofline
