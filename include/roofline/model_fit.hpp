// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/gemm.hpp"
#include "roofline/gpu_spec.hpp"
#include "roofline/model_parameters.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace roofline {

/// One measured GEMM: the shape, its precision and the steady-state time per call.
struct timed_gemm {
  gemm_shape shape;
  precision prec = precision::fp16;
  double time_s = 0;
  int launches = 0; ///< kernels one call launched; 0: not recorded
};

/// |predicted − measured| / measured of each sample, sorted ascending.
std::vector<double> relative_errors(const std::vector<timed_gemm> &samples, const gpu_spec &gpu,
                                    const model_parameters &parameters);

/// The parameters that make the GEMM model fit `samples` on `gpu` best, from `start`. cuBLAS's
/// split-K rule (reduces_split_k) is fitted first, to the launch counts the samples recorded (it
/// stays as `start` has it when none did); then the rest by coordinate descent on median + mean
/// |log(predicted / measured)|, multiplicative steps, then 8 seeded random restarts; efficiencies
/// stay ≤ 1, slowdowns ≥ 1. Deterministic.
model_parameters fit_model(const std::vector<timed_gemm> &samples, const gpu_spec &gpu,
                           model_parameters start);

/// The `model:` section of a spec file holding `parameters` (YAML).
std::string to_yaml(const model_parameters &parameters);

/// The model fitted on a GPU, saved beside its measured ceilings (cache_directory()), keyed by
/// UUID.
std::filesystem::path calibration_cache_file(const std::string &uuid);
/// Writes atomically; throws roofline::error on failure.
void save_calibration(const std::string &uuid, const model_parameters &parameters);
/// nullopt when none is saved; a damaged file throws input_error.
std::optional<model_parameters> load_calibration(const std::string &uuid);

/// A shape of the benchmark sweep: its family and whether it calibrates or scores.
struct sweep_shape {
  std::string category; ///< "transformer", "lm-head", "attention", "conv", "odd"
  gemm_shape shape;
  bool calibration = false; ///< one shape in three calibrates; the others score (disjoint sets)
};

/// The fixed, seeded set of GEMM shapes `roofline-advise calibrate` and bench/gemm_sweep measure.
std::vector<sweep_shape> sweep_shapes();

} // namespace roofline
