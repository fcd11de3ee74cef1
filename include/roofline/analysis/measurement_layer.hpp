// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/analysis/measurement.hpp"
#include "roofline/model/device_report.hpp"
#include "roofline/model/gpu_spec.hpp"
#include "roofline/model/host_floor.hpp"
#include "roofline/model/model_parameters.hpp"

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace roofline {

/// What `roofline-advise calibrate` did: the fitted parameters and how well they fit.
struct calibration_result {
  model_parameters parameters; ///< as analyses will use them: the architecture's, then `fitted`
  parameter_overrides fitted;  ///< what the fit moved from the architecture's: what is saved
  std::size_t measured = 0;    ///< GEMM timings the fit used (stopped: the GEMMs measured)
  double median_error = 0, p90_error = 0; ///< |predicted − measured| / measured on them
  std::string saved_to;                   ///< the calibration cache file; empty when not saved
  std::string not_saved; ///< why it was not saved (no cache directory, a write that failed)
  /// False when the sweep was stopped before its end: then nothing was fitted or saved, and
  /// `measured` of `total` GEMMs had been measured.
  bool complete = true;
  std::size_t total = 0; ///< GEMMs in the sweep
  /// Memory-bound kernels (our own, every kind at three sizes) whose timings fitted their kinds'
  /// parameters beside the GEMM model's.
  std::size_t memory_ops_measured = 0;
};

/// roofline::measure as the rest of the tool sees it: everything that needs a GPU, behind one
/// interface, so that roofline::core and the CLI load the CUDA libraries only when a command needs
/// the GPU. roofline::measure implements it (roofline::cuda::layer()); roofline-advise loads it as
/// a plugin. Callers hand it on as a measurement_layer_ref: choose_gpu, pipeline_options::layer,
/// compare_request::layer.
class measurement_layer {
public:
  virtual ~measurement_layer() = default;

  /// The roofline version it was built as; the loader refuses any other.
  virtual std::string_view version() const noexcept = 0;
  /// GPUs the CUDA runtime sees; 0 when there is none or no usable driver. Never throws.
  virtual int device_count() const noexcept = 0;
  /// GPU 0 as `--gpu auto` analyses against it; nullopt when there is no GPU.
  virtual std::optional<local_gpu> find_local_gpu() const = 0;
  /// GPU 0: the device query and its roofs; with `measure`, its measured ceilings (cached, or
  /// measured now when none are cached or `refresh`). `progress` sees each measurement's name.
  virtual device_report
  describe_local_gpu(bool measure, bool refresh,
                     const std::function<void(const std::string &)> &progress) const = 0;
  /// Runs the ops of `ops` on GPU 0 (roofline::cuda::measure says which, and how): checked
  /// against a reference, timed (eager and graph
  /// replayed) and, with options.counters, read through hardware counters. One entry per op.
  virtual measurements measure(const std::vector<op> &ops,
                               const measure_options &options) const = 0;
  /// Times the calibration sweep on GPU 0, fits the GEMM model to it and saves the fit. When
  /// `stop` stops the sweep, nothing is fitted or saved (calibration_result::complete is false).
  virtual calibration_result calibrate(const progress_callback &progress,
                                       const stop_callback &stop) const = 0;
};

/// The measurement layer a call may use, or why there is none: a plain value the caller hands on
/// (roofline-advise: the plugin it loaded; an embedder that links roofline::measure:
/// `&roofline::cuda::layer()`, which converts to it). Nothing in the library finds a layer by
/// itself.
struct measurement_layer_ref {
  const measurement_layer *layer = nullptr;
  /// Why there is none (when `layer` is null): what messages say after "needs the CUDA
  /// measurement layer: ".
  std::string missing = "none was given (link roofline::measure and pass "
                        "&roofline::cuda::layer())";

  measurement_layer_ref() = default;
  /// `layer` itself (nullptr: none, for the default reason).
  measurement_layer_ref(const measurement_layer *given) : layer(given) {}
  /// No layer, for `why`.
  static measurement_layer_ref none(std::string why);

  explicit operator bool() const noexcept { return layer != nullptr; }
  /// The layer, for work that cannot go on without it: throws roofline::error "`needing` needs the
  /// CUDA measurement layer: <missing>`advice`" when there is none.
  const measurement_layer &required(std::string_view needing, std::string_view advice = {}) const;
};

} // namespace roofline
