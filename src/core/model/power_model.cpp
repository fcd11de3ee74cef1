// SPDX-License-Identifier: Apache-2.0
#include "roofline/model/power_model.hpp"

#include <algorithm>

namespace roofline {

std::string_view to_string(clock_regime r) {
  return r == clock_regime::burst ? "burst" : "sustained";
}

power_budget power_budget_of(const gpu_spec &gpu, const model_parameters &parameters) {
  return {gpu.tdp_w, gpu.tdp_w * parameters[parameter::idle_power_share]};
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

double dynamic_energy_j(const op &o, const gpu_spec &gpu, const model_parameters &parameters) {
  const double flops = o.is_all_reduce() ? 0 : static_cast<double>(o.flops);
  return flops * energy_per_flop_j(o.unit(), gpu, parameters) +
         static_cast<double>(o.bytes) * energy_per_dram_byte_j(gpu, parameters);
}

double power_draw::burst_device_s(double device_s) const {
  if (slowdown <= 1)
    return device_s;
  // Where nothing was clock-bound, the whole step slowed.
  return clock_bound_s > 0 ? device_s - (slowdown - 1) * clock_bound_s : device_s / slowdown;
}

power_draw draw_of(double step_s, double clock_bound_s, double dynamic_j,
                   const power_budget &budget, clock_regime regime) {
  power_draw d;
  d.regime = regime;
  d.step_s = d.burst_step_s = step_s;
  d.clock_bound_s = clock_bound_s;
  d.dynamic_j = dynamic_j;
  const double headroom_w = budget.cap_w - budget.idle_w;
  // The time at which the step's average draw is the cap: less than that passes it.
  const double at_cap_s = headroom_w > 0 ? dynamic_j / headroom_w : 0;
  if (regime == clock_regime::sustained && at_cap_s > step_s && step_s > 0) {
    const double stretched_s = clock_bound_s > 0 ? clock_bound_s : step_s;
    d.slowdown = (stretched_s + at_cap_s - step_s) / stretched_s;
    d.step_s = at_cap_s;
    d.capped = true;
  }
  d.energy_j = budget.idle_w * d.step_s + dynamic_j;
  d.average_w = d.step_s > 0 ? d.energy_j / d.step_s : budget.idle_w;
  d.above_cap = regime == clock_regime::burst && budget.cap_w > 0 && d.average_w > budget.cap_w;
  return d;
}

} // namespace roofline
