// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a GPU's power limit does to a step, and what the step costs in energy (issue 39). Work
// running back to back draws its idle power plus each FLOP's and each DRAM byte's energy per
// second; where that would pass the board's limit, the power controller lowers the SM clock
// until it does not, and the work the SM clock sets (compute-bound ops) runs that much slower.
// Short work from idle runs at the boost clock first (a burst: model_parameters'
// power_burst_s).

#include "roofline/model/gpu_spec.hpp"
#include "roofline/model/model_parameters.hpp"
#include "roofline/model/op.hpp"

#include <string_view>

namespace roofline {

/// The clock a prediction assumes: what the power limit lets a GPU hold under load (real
/// programs, run for longer than a burst), or its boost clock (one short call from idle).
enum class clock_regime { sustained, burst };

/// "sustained", "burst".
std::string_view to_string(clock_regime r);

/// What a GPU may draw and draws doing nothing, in watts.
struct power_budget {
  double cap_w = 0;  ///< the board's power limit (gpu_spec::tdp_w); 0: not known, no cap
  double idle_w = 0; ///< idle_power_share of the cap
};

power_budget power_budget_of(const gpu_spec &gpu, const model_parameters &parameters);

/// Energy per FLOP of `p`'s unit and per DRAM byte beyond the idle draw, in joules: the
/// parameters' where fitted (non-zero), else the datasheet's: the limit's headroom over the
/// unit's dense peak, over DRAM's bandwidth.
double energy_per_flop_j(precision p, const gpu_spec &gpu, const model_parameters &parameters);
double energy_per_dram_byte_j(const gpu_spec &gpu, const model_parameters &parameters);

/// Whether `gpu`'s energies come from a fit (its architecture's parameters), not its datasheet.
bool energy_fitted(const model_parameters &parameters);

/// The energy one run of `o` takes beyond the idle draw, in joules: its FLOPs at its unit's
/// energy per FLOP, its DRAM bytes at DRAM's. An all-reduce's: its bytes' only (the links' own
/// energy is not modelled).
double dynamic_energy_j(const op &o, const gpu_spec &gpu, const model_parameters &parameters);

/// How a step holds under its power limit.
struct power_draw {
  clock_regime regime = clock_regime::sustained;
  /// The time of the step's clock-bound work, under the limit over at the boost clock (≥ 1;
  /// 1 in a burst or where the limit does not bind).
  double slowdown = 1;
  double step_s = 0;    ///< the step's time with the slowdown
  double energy_j = 0;  ///< idle draw over the step plus its work's dynamic energy
  double average_w = 0; ///< energy_j / step_s
  bool capped = false;  ///< sustained, and the limit binds
  /// A burst whose average draw passes the limit: it holds for power_burst_s at most.
  bool above_cap = false;
  /// What it was drawn from (draw_of's arguments): the step at the boost clock, the device time
  /// of its clock-bound work, its work's dynamic energy.
  double burst_step_s = 0, clock_bound_s = 0, dynamic_j = 0;

  /// A device time `device_s` of the step as drawn (sustained) at the boost clock.
  double burst_device_s(double device_s) const;
};

/// `step_s`: the step's time at the boost clock (host floors included); `clock_bound_s`: of it,
/// the device time of the work the SM clock sets; `dynamic_j`: its work's dynamic energy.
/// Sustained: where idle plus dynamic_j over step_s would pass the cap, the clock-bound work
/// stretches until the step's average draw is the cap (all of it, where there is none).
power_draw draw_of(double step_s, double clock_bound_s, double dynamic_j,
                   const power_budget &budget, clock_regime regime);

} // namespace roofline
