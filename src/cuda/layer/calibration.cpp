// SPDX-License-Identifier: Apache-2.0
#include "roofline/cuda/calibration.hpp"

#include "roofline/analysis/lowering.hpp"
#include "roofline/common/error.hpp"
#include "roofline/common/median.hpp"
#include "roofline/cuda/local_gpu.hpp"
#include "roofline/cuda/measurer.hpp"
#include "roofline/input/network.hpp"
#include "roofline/model/detail/sweep_shapes.hpp"
#include "roofline/model/device_report.hpp"
#include "roofline/model/gpu_spec.hpp"
#include "roofline/model/memory_op.hpp"
#include "roofline/model/model_fit.hpp"
#include "roofline/model/model_parameters.hpp"
#include "roofline/model/op.hpp"
#include "roofline/model/precision.hpp"

#include <string>
#include <vector>

namespace roofline::cuda {

namespace {

/// Every memory-bound op kind at three sizes, from a launch-bound 64 KiB tensor to a 64 MiB one
/// (past any L2), fp16, lowered as a network's are: their bytes are the model's.
std::vector<op> memory_op_sweep() {
  std::vector<op> ops;
  for (const std::int64_t rows : {8, 512, 8192}) {
    network net;
    net.name = "calibration";
    net.batch = rows;
    for (const std::string_view name : memory_op_names()) {
      const memory_op_kind kind = *parse_memory_op_kind(name);
      layer l;
      l.name = std::string(name) + "-" + std::to_string(rows);
      if (kind == memory_op_kind::maxpool || kind == memory_op_kind::avgpool)
        l.body = pool_layer{kind, 3, 2, 1, 64, 8, 8}; // ResNet's stem pool on 8×8 maps
      else
        l.body = memory_layer{kind, 4096}; // a 4096-wide row: a 7B model's hidden size
      net.layers.push_back(std::move(l));
    }
    for (op &o : lower(net))
      ops.push_back(std::move(o));
  }
  return ops;
}

} // namespace

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
  const std::size_t gemm_ops = ops.size();
  for (op &o : memory_op_sweep())
    ops.push_back(std::move(o));
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
    stopped.total = gemm_ops;
    for (std::size_t i = 0; i < gemm_ops; ++i)
      stopped.measured +=
          measured.ops[i] && measured.ops[i]->status == measurement_status::measured ? 1 : 0;
    return stopped;
  }
  // The model predicts device time (the GPU's time per call, no host gap): calls that could not
  // be replayed from a graph have none, and are left out rather than fitted to their eager time.
  std::vector<timed_gemm> samples;
  std::vector<timed_memory_op> memory_samples;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const auto &m = measured.ops[i];
    if (!m || m->status != measurement_status::measured || m->device_time_s <= 0)
      continue;
    if (ops[i].is_gemm())
      samples.push_back({*ops[i].gemm, ops[i].precision, m->device_time_s, m->launches});
    else if (const auto kind = parse_memory_op_kind(ops[i].kind))
      memory_samples.push_back({*kind, ops[i].bytes,
                                ops[i].row > 0 ? ops[i].elements / ops[i].row : 0,
                                m->device_time_s});
  }
  if (samples.size() < 20)
    throw roofline::error("calibration measured only " + std::to_string(samples.size()) +
                          " GEMMs; not enough to fit");
  calibration_result result;
  result.parameters = fit_model(samples, spec, spec.parameters);
  // The memory-bound kinds share no parameter with the GEMMs: fitted after them, each on its own.
  if (!memory_samples.empty())
    result.parameters = fit_memory_ops(memory_samples, spec, result.parameters);
  result.fitted = changed(spec.parameters, result.parameters,
                          "calibrated on " + device.device.name + " " + device.device.uuid + ", " +
                              std::to_string(samples.size()) + " cuBLAS timings and " +
                              std::to_string(memory_samples.size()) +
                              " memory-bound kernel timings (graph-replayed device time)");
  result.parameters = apply(spec.parameters, result.fitted);
  result.measured = samples.size();
  result.total = gemm_ops;
  result.memory_ops_measured = memory_samples.size();
  const std::vector<double> errors = relative_errors(samples, spec, result.parameters);
  result.median_error = upper_median(errors);
  result.p90_error = errors[errors.size() * 9 / 10];
  try {
    result.saved_to = save_calibration(device.device.uuid, result.fitted).string();
  } catch (const roofline::error &e) { // the fit still stands, for this run's output
    result.not_saved = e.what();
  }
  return result;
}

} // namespace roofline::cuda
