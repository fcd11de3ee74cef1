// SPDX-License-Identifier: Apache-2.0
// A measurement layer with no GPU, loaded by roofline-advise through ROOFLINE_MEASURE_LAYER, for
// the CLI's Ctrl-C tests (tests/cli/interrupt_test.cpp): it "measures" each GEMM by sleeping
// ROOFLINE_FAKE_MEASURE_MS milliseconds (default 50), reports progress and asks options.stop
// between GEMMs as roofline::measure does; calibrate does the same over 40 GEMMs and never saves
// anything. ROOFLINE_FAKE_SIGINT_AT=N raises SIGINT as GEMM N (from 0) starts, where a test cannot
// send it from outside at the right moment. It uses no symbol of roofline::core (only the
// headers' types), so it loads into any roofline-advise of this version.
#include "roofline/analysis/plugin_abi.hpp"

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>

namespace {

long from_environment(const char *name, long fallback) {
  const char *text = std::getenv(name);
  return text && *text ? std::strtol(text, nullptr, 10) : fallback;
}

/// One fake GEMM: SIGINT first if asked for at `index`, then the time it "takes".
void fake_gemm(std::size_t index) {
  if (from_environment("ROOFLINE_FAKE_SIGINT_AT", -1) == static_cast<long>(index))
    std::raise(SIGINT);
  std::this_thread::sleep_for(
      std::chrono::milliseconds(from_environment("ROOFLINE_FAKE_MEASURE_MS", 50)));
}

class fake_layer final : public roofline::measurement_layer {
public:
  std::string_view version() const noexcept override { return ROOFLINE_VERSION; }
  int device_count() const noexcept override { return 1; }
  std::optional<roofline::local_gpu> find_local_gpu() const override { return std::nullopt; }
  roofline::device_report
  describe_local_gpu(bool, bool, const std::function<void(const std::string &)> &) const override {
    throw std::runtime_error("the fake measurement layer describes no GPU");
  }

  roofline::measurements measure(const std::vector<roofline::op> &ops,
                                 const roofline::measure_options &options) const override {
    roofline::measurements result;
    std::size_t total = 0, done = 0;
    for (const roofline::op &o : ops)
      total += o.is_gemm() ? 1 : 0;
    for (const roofline::op &o : ops) {
      if (!o.is_gemm()) {
        result.ops.emplace_back();
        continue;
      }
      if (!result.complete || (options.stop && options.stop())) {
        result.complete = false;
        result.ops.push_back(roofline::not_reached("fake"));
        continue;
      }
      roofline::measurement m;
      m.engine = "fake";
      if (options.progress)
        options.progress(done, total, o.layer);
      fake_gemm(done++);
      m.time_s = m.min_time_s = m.max_time_s = 100e-6;
      m.device_time_s = m.device_min_time_s = m.device_max_time_s = 90e-6;
      m.samples = 1;
      result.ops.push_back(m);
    }
    result.notes.push_back("fake measurement layer");
    if (!result.complete)
      result.notes.push_back("interrupted: stopped after " + std::to_string(done) + " of " +
                             std::to_string(total) + " GEMMs");
    if (options.progress)
      options.progress(total, total, "");
    return result;
  }

  roofline::calibration_result calibrate(const roofline::progress_callback &progress,
                                         const roofline::stop_callback &stop) const override {
    constexpr std::size_t total = 40;
    roofline::calibration_result result;
    result.total = total;
    for (std::size_t i = 0; i < total; ++i) {
      if (stop && stop()) {
        result.complete = false;
        return result; // nothing fitted, nothing saved
      }
      if (progress)
        progress(i, total, "calibration");
      fake_gemm(i);
      ++result.measured;
    }
    if (progress)
      progress(total, total, "");
    result.saved_to = "(the fake measurement layer saves nothing)";
    return result;
  }
};

} // namespace

extern "C" const char *roofline_measurement_layer_version() {
  return ROOFLINE_VERSION;
}

extern "C" const roofline::measurement_layer *roofline_measurement_layer_v1() {
  static const fake_layer layer;
  return &layer;
}
