// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/analysis/measurement.hpp"
#include "roofline/analysis/measurement_layer.hpp"

namespace roofline::cuda {

/// Times the calibration shapes of sweep_shapes() × fp32, tf32, fp16, bf16 on GPU 0 with cuBLAS,
/// fits the GEMM model's parameters to their device times (graph-replayed; calls without one are
/// left out) with fit_model, from its architecture's parameters, and saves what the fit moved
/// beside the GPU's measured ceilings, where `--gpu auto` finds them. When `stop` stops the sweep
/// (measure_options::stop), it returns at once with complete = false, and nothing is fitted or
/// saved: an interrupted calibration leaves the cache as it was.
calibration_result calibrate_local_gpu(const progress_callback &progress,
                                       const stop_callback &stop = {});

} // namespace roofline::cuda
