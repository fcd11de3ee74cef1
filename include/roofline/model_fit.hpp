// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/gemm.hpp"
#include "roofline/gpu_spec.hpp"
#include "roofline/model_parameters.hpp"
#include "roofline/sweep_shapes.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace roofline {

/// One measured GEMM: the shape, its precision and its device time per call.
struct timed_gemm {
  gemm_shape shape;
  precision prec = precision::fp16;
  double time_s = 0; ///< device time: back-to-back calls replayed from a CUDA graph
  int launches = 0;  ///< kernels one call launched; 0: not recorded
};

/// |predicted − measured| / measured of each sample, sorted ascending.
std::vector<double> relative_errors(const std::vector<timed_gemm> &samples, const gpu_spec &gpu,
                                    const model_parameters &parameters);

/// The parameters that make the GEMM model fit `samples` on `gpu` best, from `start`. cuBLAS's
/// split-K rule (reduces_split_k) is fitted first, to the launch counts the samples recorded (it
/// stays as `start` has it when none did); then the rest by NLopt's subplex (bounded, derivative
/// free) on median + mean |log(predicted / measured)|, then 24 seeded random restarts, every value
/// inside its bounds (parameter_table). Only parameters the samples decide move (those of the
/// precisions and row alignments they have). Deterministic.
model_parameters fit_model(const std::vector<timed_gemm> &samples, const gpu_spec &gpu,
                           model_parameters start);

/// The model fitted on a GPU, saved beside its measured ceilings (cache_directory()), keyed by
/// UUID.
std::filesystem::path calibration_cache_file(const std::string &uuid);
/// Writes what a calibration fitted (changed() against its start) atomically; throws
/// roofline::error on failure.
void save_calibration(const std::string &uuid, const parameter_overrides &calibration);
/// nullopt when none is saved; a damaged file, or one from before device-time fitting, throws
/// input_error.
std::optional<parameter_overrides> load_calibration(const std::string &uuid);

} // namespace roofline
