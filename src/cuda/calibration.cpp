// SPDX-License-Identifier: Apache-2.0
#include "roofline/cuda/calibration.hpp"

#include "roofline/cuda/local_gpu.hpp"
#include "roofline/cuda/measurer.hpp"
#include "roofline/device_report.hpp"
#include "roofline/error.hpp"
#include "roofline/gpu_spec.hpp"
#include "roofline/model_fit.hpp"
#include "roofline/model_parameters.hpp"
#include "roofline/op.hpp"
#include "roofline/precision.hpp"
#include "roofline/sweep_shapes.hpp"

#include <string>
#include <vector>

namespace roofline::cuda {

calibration_result calibrate_local_gpu(const progress_callback &progress,
                                       const stop_callback &stop) {
  const device_report device = local_device_report(0);
  // Fit from the architecture's parameters (local_spec's), not from an earlier local fit: the
  // calibration saves only what it moved from them.
  const gpu_spec spec = model_basis(local_spec(device));
  std::vector<op> ops;
  for (const sweep_shape &s : sweep_shapes())
    if (s.calibration)
      for (precision p : calibration_precisions)
        ops.push_back(make_gemm_op(s.category, s.shape, p));
  measure_options options;
  options.counters = false;
  options.trace_kernels = true; // launch counts: the fit learns cuBLAS's split-K rule from them
  options.time_budget_s = 0.01;
  options.rounds = 3;
  options.progress = progress;
  options.stop = stop;
  const measurements measured = measure(ops, options);
  if (!measured.complete) { // interrupted: a fit of part of the sweep is not saved
    calibration_result stopped;
    stopped.complete = false;
    stopped.total = ops.size();
    for (const auto &m : measured.ops)
      stopped.measured += m && m->status == measurement_status::measured ? 1 : 0;
    return stopped;
  }
  // The model predicts device time (the GPU's time per call, no host gap): calls that could not
  // be replayed from a graph have none, and are left out rather than fitted to their eager time.
  std::vector<timed_gemm> samples;
  for (std::size_t i = 0; i < ops.size(); ++i)
    if (const auto &m = measured.ops[i];
        m && m->status == measurement_status::measured && m->device_time_s > 0)
      samples.push_back({*ops[i].gemm, ops[i].precision, m->device_time_s, m->launches});
  if (samples.size() < 20)
    throw roofline::error("calibration measured only " + std::to_string(samples.size()) +
                          " GEMMs; not enough to fit");
  calibration_result result;
  result.parameters = fit_model(samples, spec, spec.parameters);
  result.fitted =
      changed(spec.parameters, result.parameters,
              "calibrated on " + device.device.name + " " + device.device.uuid + ", " +
                  std::to_string(samples.size()) + " cuBLAS timings (graph-replayed device time)");
  result.parameters = apply(spec.parameters, result.fitted);
  result.measured = samples.size();
  result.total = ops.size();
  const std::vector<double> errors = relative_errors(samples, spec, result.parameters);
  result.median_error = errors[errors.size() / 2];
  result.p90_error = errors[errors.size() * 9 / 10];
  try {
    result.saved_to = save_calibration(device.device.uuid, result.fitted).string();
  } catch (const roofline::error &e) { // the fit still stands, for this run's output
    result.not_saved = e.what();
  }
  return result;
}

} // namespace roofline::cuda
