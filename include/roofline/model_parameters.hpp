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
  /// The floor of a call to cuBLAS's own tensor-core and SIMT kernels, per precision: what a launch
  /// costs the host differs by kernel (default: launch_floor_s).
  std::map<precision, double> gemm_launch_floor_s;
  /// The floor of the lighter CUTLASS fallback and GEMV kernels (tf32's misaligned rows run on
  /// fp32's kernels and pay fp32's floor).
  double fallback_launch_floor_s = 5e-6;
  /// Per wave of tiles, per precision: prologue, epilogue, pipeline fill (default 1.5 µs).
  std::map<precision, double> wave_overhead_s;
  /// One memory latency: a tile whose K loop has too little in flight waits this long per step.
  double k_step_latency_s = 0.5e-6;
  /// cuBLAS's split-K rule for kernels without TMA (SIMT, CUTLASS fallbacks): a reduction launch
  /// when their output, in 64×64 tiles, fills less than this many waves, whatever K, per
  /// precision (default 0.25; 0: never) ...
  std::map<precision, double> split_k_below_waves;
  /// ... or, where rows are aligned to one element only (2-byte rows of fp16, 4-byte of fp32), less
  /// than this many
  /// (cuBLAS reaches sooner for split-K and for kernels that write fp32 and convert; default: as
  /// wider rows) ...
  std::map<precision, double> narrow_split_k_below_waves;
  /// ... or less than this many waves where K is at least deep_split_k_min_k.
  double deep_split_k_below_waves = 1.0;
  double deep_split_k_min_k = 1024;
  /// The host's cost of split-K's reduction launch, on top of the floor (on the GPU the reduction
  /// kernel costs kernel_overhead_s).
  double split_k_overhead_s = 2e-6;
  /// Slowdown of tensor-core GEMMs whose rows break the 16-byte rule, by the alignment they do have
  /// (8, 4, 2 or 1 bytes): cuBLAS falls back to kernels without TMA/vector loads.
  std::map<int, double> misalignment_slowdown{{8, 2.0}, {4, 3.0}, {2, 5.0}, {1, 8.0}};
  /// Those fallback kernels' loads and stores are narrower too: their bandwidth is this much lower
  /// per halving of the rows' alignment (8-byte rows once, 4-byte twice, 2-byte three times).
  /// Warps still coalesce narrow accesses: a modest factor.
  double misaligned_bandwidth_slowdown = 1.5;
  /// The Ampere-class kernels' rate with aligned rows, as a slowdown against the peak (cuBLAS
  /// runs them for small tf32 GEMMs: they launch faster than Hopper's).
  double ampere_slowdown = 2.0;
  /// gemmSN, cuBLAS's GEMV for a few rows (fp32, 2 ≤ M ≤ 8), streams this much slower than DRAM
  /// allows ...
  double gemv_bandwidth_slowdown = 1.5;
  /// ... and its GEMV (M = 1) of misaligned 2-byte rows, with narrower loads, this much.
  double misaligned_gemv_bandwidth_slowdown = 1.5;
  /// How much of a partial last wave costs a whole one: 1 for kernels of one tile per SM at a
  /// time; persistent kernels and several tiles per SM blunt it.
  double wave_quantization = 1.0;
  double kernel_overhead_s = 1e-6; ///< per kernel: pipeline fill and drain once, on top of waves
  std::string origin = "generic defaults"; ///< "calibrated on <GPU> <date>", ...

  double efficiency_of(precision p) const;
  double gemm_launch_floor_of(precision p) const;
  double wave_overhead_of(precision p) const;
  double split_k_below_waves_of(precision p) const;
  double narrow_split_k_below_waves_of(precision p) const;
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
