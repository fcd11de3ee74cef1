// SPDX-License-Identifier: Apache-2.0
// roofline::measure behind the measurement_layer interface.
#include "roofline/cuda/measurement_layer.hpp"
#include "roofline/cuda/calibration.hpp"
#include "roofline/cuda/device.hpp"
#include "roofline/cuda/local_gpu.hpp"
#include "roofline/cuda/measurer.hpp"

namespace roofline::cuda {

namespace {

class cuda_measurement_layer final : public measurement_layer {
public:
  // This library's own version, not the core's: in the plugin, the core is the executable's.
  std::string_view version() const noexcept override { return ROOFLINE_VERSION; }
  int device_count() const noexcept override { return cuda::device_count(); }
  std::optional<local_gpu> find_local_gpu() const override { return cuda::find_local_gpu(); }
  device_report
  describe_local_gpu(bool measure, bool refresh,
                     const std::function<void(const std::string &)> &progress) const override {
    return measure || refresh ? measured_device_report(0, refresh, progress)
                              : local_device_report(0);
  }
  measurements measure(const std::vector<op> &ops, const measure_options &options) const override {
    return cuda::measure(ops, options);
  }
  calibration_result calibrate(const progress_callback &progress,
                               const stop_callback &stop) const override {
    return calibrate_local_gpu(progress, stop);
  }
};

} // namespace

const measurement_layer &layer() {
  static const cuda_measurement_layer instance;
  return instance;
}

} // namespace roofline::cuda
