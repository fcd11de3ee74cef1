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

/// Joules in a kilowatt-hour.
inline constexpr double joules_per_kwh = 3.6e6;

/// "sustained", "burst".
std::string_view to_string(clock_regime r);

/// What a GPU may draw and draws doing nothing, in watts.
struct power_budget {
  double cap_w = 0;  ///< the board's power limit (gpu_spec::tdp_w); 0: not known, no cap
  double idle_w = 0; ///< idle_power_share of the cap
  /// The share of the headroom a step's collectives leave that its clock-bound work spends
  /// (collective_headroom_share).
  double collective_share = 1;
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
/// energy per FLOP, its DRAM bytes at DRAM's, and the stall power (stall_power_share of the
/// limit) over `stalled_s`, the time it runs past its roofline bound at the boost clock. An
/// all-reduce's: its bytes' only (the links' own energy is not modelled).
double dynamic_energy_j(const op &o, double stalled_s, const gpu_spec &gpu,
                        const model_parameters &parameters);

/// The most the power controller slows what the SM clock sets: the lowest clocks an H200 held under
/// its limit (1230 MHz of 1980, bench/data/power) make 1.6×. Where the limit asks for more, the
/// clock-bound work alone cannot absorb it: the whole step slows.
inline constexpr double max_clock_slowdown = 2.0;

/// A step's work as the power limit sees it, at the boost clock.
struct step_work {
  double step_s = 0; ///< the step's time (host floors included)
  /// Device time the SM clock sets: compute-bound ops the host does not hold back.
  double clock_bound_s = 0;
  /// Device time that can stretch at all: every op but the launch-bound and the collectives.
  double stretchable_s = 0;
  double dynamic_j = 0;    ///< its work's energy beyond the idle draw
  double collective_s = 0; ///< the collectives' time (the GPU near idle while its links work)

  step_work &operator+=(const step_work &other);
  step_work operator*(double factor) const;
};

/// How a step holds under its power limit.
struct power_draw {
  clock_regime regime = clock_regime::sustained;
  step_work work; ///< what it was drawn from
  /// The time of the step's stretched work (its clock-bound work, or with whole_step all its
  /// stretchable work), under the limit over at the boost clock (≥ 1; 1 in a burst or where the
  /// limit does not bind).
  double slowdown = 1;
  /// The limit asks more than max_clock_slowdown of the clock-bound work: all the stretchable
  /// work slows alike.
  bool whole_step = false;
  double step_s = 0;    ///< the step's time with the slowdown
  double energy_j = 0;  ///< idle draw over the step plus its work's dynamic energy
  double average_w = 0; ///< energy_j / step_s
  bool capped = false;  ///< sustained, and the limit binds
  /// Its average draw passes the limit: a burst (it holds for power_burst_s at most), or a step
  /// with nothing that could slow (all host-bound).
  bool above_cap = false;

  /// The time of the stretched work: what `slowdown` applies to.
  double stretched_s() const { return whole_step ? work.stretchable_s : work.clock_bound_s; }
  /// A device time `device_s` of the step as drawn (sustained), at the boost clock.
  double burst_device_s(double device_s) const;
};

/// Sustained: where idle plus the work's dynamic energy over its time would pass the cap, the
/// clock-bound work stretches until the step's average draw is the cap, the collectives' time
/// counted at the budget's collective_share (its headroom only partly spent: the average stays
/// under the cap); past max_clock_slowdown, all its stretchable work does. A burst keeps the boost
/// clock.
power_draw draw_of(const step_work &work, const power_budget &budget, clock_regime regime);

} // namespace roofline
