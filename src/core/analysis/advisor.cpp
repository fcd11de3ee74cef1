// SPDX-License-Identifier: Apache-2.0
#include "roofline/analysis/advisor.hpp"

#include "checked_math.hpp"
#include "roofline/common/error.hpp"
#include "text_format.hpp"

#include <fmt/format.h>

namespace roofline {

namespace {

/// The launch-bound ops of a step whose analysis found some: their runs, times and share.
/// Throws input_error, naming the layer, when their runs per step overflow 64 bits.
launch_bound_advice launch_bound_of(const analysis &analysed) {
  const step_totals &totals = analysed.totals;
  launch_bound_advice launch;
  launch.ops = totals.launch_bound_ops;
  launch.time_s = totals.launch_bound_time_s;
  for (const analysed_op &entry : analysed.ops)
    if (entry.prediction.launch_bound) {
      launch.runs =
          detail::require_no_overflow(detail::checked_sum({launch.runs, entry.op.count}),
                                      entry.op.where, "layer `" + entry.op.layer + "`",
                                      "the count of the step's runs of launch-bound ops (the "
                                      "repeat counts of every one up to it)");
      launch.device_time_s += entry.prediction.device_time_s * static_cast<double>(entry.op.count);
    }
  launch.share = totals.launch_bound_share;
  launch.step_time_s = totals.time_s;
  launch.graph_step_time_s = totals.device_time_s;
  launch.measured_floor = analysed.model.host().measured;
  return launch;
}

std::string launch_bound_warning(const launch_bound_advice &launch, std::size_t ops) {
  return fmt::format(
      "{} of {} ops ({} runs per step, {:.0f}% of the step) are launch-bound: the {} host "
      "issues each more slowly than the GPU runs it ({} of host time, {} on the GPU). A faster "
      "GPU will not shorten them; CUDA graphs (the whole step replayed: {} -> {} predicted) or "
      "fusing ops will",
      launch.ops, ops, launch.runs, 100 * launch.share,
      launch.measured_floor ? "measured" : "typical", detail::duration(launch.time_s),
      detail::duration(launch.device_time_s), detail::duration(launch.step_time_s),
      detail::duration(launch.graph_step_time_s));
}

} // namespace

advice advise(const analysis &analysed, double min_speedup) {
  advice result;
  result.padding = advise_padding(analysed, min_speedup);
  batch_outlook batch = advise_batch(analysed);
  result.batch = std::move(batch.gemms);
  result.network_compute_bound_batch = batch.network_compute_bound_batch;
  result.largest_fitting_batch = batch.largest_fitting_batch;
  result.compute_bound_beyond_memory = batch.compute_bound_beyond_memory;
  if (batch.memory_bound_warning)
    result.warnings.push_back(std::move(*batch.memory_bound_warning));
  if (analysed.totals.launch_bound_ops > 0) {
    result.launch_bound = launch_bound_of(analysed);
    if (launch_bound_worth_saying(result.launch_bound->share)) // else said without a warning
      result.warnings.push_back(launch_bound_warning(*result.launch_bound, analysed.ops.size()));
  }
  return result;
}

} // namespace roofline
