// SPDX-License-Identifier: Apache-2.0
#include "roofline/analysis/report.hpp"

#include "roofline/common/error.hpp"

namespace roofline {

const measurement *report::measured_op(std::size_t i) const {
  return i < measured.size() && measured[i] ? &*measured[i] : nullptr;
}

const padding_timing *report::measured_pad(std::size_t i) const {
  return i < measured_padding.size() && measured_padding[i] ? &*measured_padding[i] : nullptr;
}

namespace {

/// One GPU's step as measured (`measured`, per op of `a`), beside what was predicted of it.
gpu_step step_of(int gpu, const analysis &a,
                 const std::vector<std::optional<measurement>> &measured) {
  if (measured.size() != a.ops.size())
    throw error("report: GPU " + std::to_string(gpu) + " has " + std::to_string(measured.size()) +
                " measurements for " + std::to_string(a.ops.size()) + " ops");
  gpu_step s;
  s.gpu = gpu;
  for (std::size_t i = 0; i < a.ops.size(); ++i) {
    const analysed_op &entry = a.ops[i];
    const double runs = static_cast<double>(entry.op.count);
    const double predicted = entry.prediction.device_time_s * runs;
    const std::optional<measurement> &m = measured[i];
    const bool timed = m && m->status == measurement_status::measured && m->device_time_s > 0;
    s.predicted_step_time_s += predicted;
    s.step_time_s += timed ? m->device_time_s * runs : predicted;
    if (!timed)
      continue;
    if (entry.op.is_all_reduce()) {
      s.all_reduce_time_s += m->device_time_s * runs;
      s.predicted_all_reduce_time_s += predicted;
    } else if (entry.op.is_gemm()) {
      s.gemm_time_s += m->device_time_s * runs;
      s.predicted_gemm_time_s += predicted;
    }
  }
  return s;
}

} // namespace

report assemble_report(analysis a, std::optional<roofline::advice> advice,
                       std::optional<measurements> ops, std::optional<measurements> padding) {
  report r;
  r.notes = a.notes;
  r.complete = (!ops || ops->complete) && (!padding || padding->complete);
  if (ops) {
    if (ops->ops.size() != a.ops.size())
      throw error("report: " + std::to_string(ops->ops.size()) + " measurements for " +
                  std::to_string(a.ops.size()) + " ops");
    r.measured = std::move(ops->ops);
    r.notes.insert(r.notes.end(), ops->notes.begin(), ops->notes.end());
    for (std::size_t g = 0; g < ops->per_gpu.size(); ++g)
      r.gpu_steps.push_back(step_of(static_cast<int>(g), a, ops->per_gpu[g]));
  }
  if (padding) {
    const std::size_t suggestions = advice ? advice->padding.size() : 0;
    if (padding->ops.size() != 2 * suggestions)
      throw error("report: " + std::to_string(padding->ops.size()) + " padding measurements for " +
                  std::to_string(suggestions) + " suggestions");
    for (std::size_t i = 0; i < suggestions; ++i) {
      const auto &before = padding->ops[2 * i], &after = padding->ops[2 * i + 1];
      const bool both = before && after && before->status == measurement_status::measured &&
                        after->status == measurement_status::measured;
      r.measured_padding.push_back(
          both ? std::optional(padding_timing{before->time_s, after->time_s}) : std::nullopt);
    }
  }
  if (!r.measured.empty()) {
    measured_totals t;
    for (std::size_t i = 0; i < a.ops.size(); ++i) {
      const measurement *m = r.measured_op(i);
      if (m && m->status == measurement_status::skipped)
        ++t.skipped;
      if (m && m->status == measurement_status::failed)
        ++t.failed;
      if (!m || m->status != measurement_status::measured)
        continue;
      const prediction &p = a.ops[i].prediction;
      const double runs = static_cast<double>(a.ops[i].op.count);
      ++t.ops;
      t.time_s += m->time_s * runs;
      t.predicted_time_s += p.time_s * runs;
      t.roofline_time_s += p.roofline_time_s * runs;
      if (m->device_time_s > 0) {
        t.device_time_s += m->device_time_s * runs;
        t.predicted_device_time_s += p.device_time_s * runs;
        t.roofline_of_device_s += p.roofline_time_s * runs;
      }
      t.cold_l2 = t.cold_l2 || m->cold_l2;
      if (m->held) {
        ++t.held;
        t.held_time_s += m->held->time_s * runs;
        t.held_energy_j += m->held->energy_j * runs;
        t.predicted_time_of_held_s += p.device_time_s * runs;
        t.predicted_energy_of_held_j += a.ops[i].energy_j * runs;
      }
    }
    r.measured_sums = t;
  }
  r.analysis = std::move(a);
  r.advice = std::move(advice);
  return r;
}

} // namespace roofline
