// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/precision.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace roofline {

/// The knobs of the GEMM time model beyond the datasheet: how close real kernels get to the roofs
/// and what fixed costs they pay. Generic defaults; `roofline-advise calibrate` fits them per GPU.
struct model_parameters {
  /// Fraction of the dense peak that large, aligned GEMMs reach, per precision (default 0.8).
  std::map<precision, double> efficiency;
  double dram_efficiency = 0.9;      ///< fraction of the DRAM bandwidth streaming reaches
  double l2_to_dram_bandwidth = 2.5; ///< L2 bandwidth as a multiple of DRAM bandwidth
  double launch_floor_s = 5e-6;      ///< no memory op is faster: back-to-back launch overhead
  /// A GEMM call's floor per precision: cuBLAS's kernel families differ in what a launch costs
  /// the host (default: launch_floor_s).
  std::map<precision, double> gemm_launch_floor_s;
  double wave_overhead_s = 1.5e-6; ///< per wave of tiles: prologue, epilogue, pipeline fill
  double k_step_latency_s =
      0.25e-6;                      ///< per 64-deep step of one tile's K loop (latency-bound tiles)
  double split_k_overhead_s = 2e-6; ///< the extra reduction launch of a split-K GEMM
  /// Slowdown of tensor-core GEMMs whose rows break the 16-byte rule, by the alignment they do have
  /// (8, 4, 2 or 1 bytes): cuBLAS falls back to kernels without TMA/vector loads.
  std::map<int, double> misalignment_slowdown{{8, 2.0}, {4, 3.0}, {2, 5.0}, {1, 8.0}};
  /// Those fallback kernels' loads and stores are narrower too: their bandwidth is this much lower.
  double misaligned_bandwidth_slowdown = 2.0;
  double misaligned_launch_floor_s = 5e-6; ///< the fallback kernels' launch floor
  std::string origin = "generic defaults"; ///< "calibrated on <GPU> <date>", ...

  double efficiency_of(precision p) const;
  double gemm_launch_floor_of(precision p) const;
};

/// The parameter names and values as plain numbers, for fitting and for the JSON/YAML forms.
/// Order and names are stable: "efficiency.fp16", "dram_efficiency", ...,
/// "misalignment_slowdown.8".
std::vector<std::pair<std::string, double>> flatten(const model_parameters &p);
/// One named value (as flatten names it); throws std::out_of_range when the name is unknown.
double value_of(const model_parameters &p, const std::string &name);
/// Sets one named value; false when the name is unknown.
bool set_parameter(model_parameters &p, const std::string &name, double value);

} // namespace roofline
