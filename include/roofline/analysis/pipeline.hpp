// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/analysis/advice_thresholds.hpp"
#include "roofline/analysis/measurement.hpp"
#include "roofline/analysis/measurement_layer.hpp"
#include "roofline/analysis/report.hpp"
#include "roofline/input/network.hpp"
#include "roofline/model/perf_model.hpp"

#include <optional>
#include <string>

namespace roofline {

/// The GPU an analysis runs against, and how it was chosen.
struct gpu_choice {
  perf_model model;
  std::string
      selection; ///< "choose_gpu::request h100", "local GPU NVIDIA H200, ceilings measured ..."
  std::string notice;    ///< non-empty: a line the user must see (no local GPU: the default spec)
};

/// `request` as `--gpu` takes it: a GPU name, an alias or a spec file, with this machine's cached
/// host floor (cached_host_floor: no GPU is touched; `layer` is not used); or `auto`: the local GPU
/// with its cached ceilings, calibration and host floor (through `layer`), else (no layer, or no
/// GPU) the default spec with a notice saying why. `options.host`, when set, replaces the host
/// floor.
gpu_choice choose_gpu(const std::string &request, const model_options &options = {},
                      const measurement_layer_ref &layer = {});

struct pipeline_options {
  bool advise = true;
  double min_padding_speedup =
      padding_speedup_worth_advising; ///< padding suggested only when predicted to gain this much
  /// Set: run every GEMM, and both GEMMs of each padding suggestion, on the local GPU (through
  /// `layer`; throws roofline::error when there is none). When its `stop` stops the run, the
  /// padding is not measured and the report is not complete (report::complete).
  std::optional<measure_options> measure;
  /// What measures, with `measure`; unused without it.
  measurement_layer_ref layer;
  /// GPU memory kept back from the network, in bytes; unset: the default share
  /// (memory_reserve_bytes).
  std::optional<double> memory_reserve;
};

/// The one path of an analysis: analyze → advise → measure → report.
report run_pipeline(const network &net, const gpu_choice &gpu,
                    const pipeline_options &options = {});

} // namespace roofline
