// SPDX-License-Identifier: Apache-2.0
#include "roofline/model/power_model.hpp"

#include <algorithm>

namespace roofline {

std::string_view to_string(clock_regime r) {
  return r == clock_regime::burst ? "burst" : "sustained";
}

power_budget power_budget_of(const gpu_spec &gpu, const model_parameters &parameters) {
  return {gpu.tdp_w, gpu.tdp_w * parameters[parameter::idle_power_share],
          parameters[parameter::collective_headroom_share]};
}

namespace {

double headroom_w(const gpu_spec &gpu, const model_parameters &parameters) {
  const power_budget b = power_budget_of(gpu, parameters);
  return std::max(0.0, b.cap_w - b.idle_w);
}

} // namespace

double energy_per_flop_j(precision p, const gpu_spec &gpu, const model_parameters &parameters) {
  const double fitted = parameters[parameter_at(parameter::energy_per_flop_pj, p)];
  if (fitted > 0)
    return fitted * 1e-12;
  const auto peak = gpu.peaks.find(p);
  const double flop_per_s = peak == gpu.peaks.end() ? 0 : gpu.peak_flop_per_s(p);
  return flop_per_s > 0 ? headroom_w(gpu, parameters) / flop_per_s : 0;
}

double energy_per_dram_byte_j(const gpu_spec &gpu, const model_parameters &parameters) {
  const double fitted = parameters[parameter::dram_energy_per_byte_pj];
  if (fitted > 0)
    return fitted * 1e-12;
  return gpu.dram_bytes_per_s > 0 ? headroom_w(gpu, parameters) / gpu.dram_bytes_per_s : 0;
}

bool energy_fitted(const model_parameters &parameters) {
  return parameters[parameter::dram_energy_per_byte_pj] > 0;
}

double dynamic_energy_j(const op &o, double stalled_s, const gpu_spec &gpu,
                        const model_parameters &parameters) {
  const double bytes_j = static_cast<double>(o.bytes) * energy_per_dram_byte_j(gpu, parameters);
  if (o.is_collective())
    return bytes_j;
  return static_cast<double>(o.flops) * energy_per_flop_j(o.unit(), gpu, parameters) + bytes_j +
         parameters[parameter::stall_power_share] * gpu.tdp_w * std::max(0.0, stalled_s);
}

step_work &step_work::operator+=(const step_work &other) {
  step_s += other.step_s;
  clock_bound_s += other.clock_bound_s;
  stretchable_s += other.stretchable_s;
  collective_s += other.collective_s;
  dynamic_j += other.dynamic_j;
  return *this;
}

step_work step_work::operator*(double factor) const {
  return {step_s * factor, clock_bound_s * factor, stretchable_s * factor, dynamic_j * factor,
          collective_s * factor};
}

double power_draw::burst_device_s(double device_s) const {
  return device_s - (slowdown - 1) * stretched_s();
}

power_draw draw_of(const step_work &work, const power_budget &budget, clock_regime regime) {
  power_draw d;
  d.regime = regime;
  d.work = work;
  d.step_s = work.step_s;
  const double headroom_w = budget.cap_w - budget.idle_w;
  // The time at which the step's average draw is the cap: less than that passes it. The
  // collectives' time lends only its share of the headroom.
  const double at_cap_s = headroom_w > 0 ? work.dynamic_j / headroom_w : 0;
  const double extra_s =
      at_cap_s - (work.step_s - (1 - budget.collective_share) * work.collective_s);
  if (regime == clock_regime::sustained && extra_s > 0) {
    const bool whole =
        !(work.clock_bound_s > 0) || 1 + extra_s / work.clock_bound_s > max_clock_slowdown;
    const double stretched_s = whole ? work.stretchable_s : work.clock_bound_s;
    if (stretched_s > 0) {
      d.whole_step = whole;
      d.slowdown = 1 + extra_s / stretched_s;
      d.step_s = work.step_s + extra_s;
      d.capped = true;
    }
  }
  d.energy_j = budget.idle_w * d.step_s + work.dynamic_j;
  d.average_w = d.step_s > 0 ? d.energy_j / d.step_s : budget.idle_w;
  d.above_cap = budget.cap_w > 0 && d.average_w > budget.cap_w * (1 + 1e-9);
  return d;
}

} // namespace roofline
