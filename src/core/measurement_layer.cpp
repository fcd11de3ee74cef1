// SPDX-License-Identifier: Apache-2.0
#include "roofline/measurement_layer.hpp"

#include "roofline/error.hpp"
#include "roofline/version.hpp"

#include "text_table.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>

#ifndef ROOFLINE_MEASURE_LAYER_FILE
#define ROOFLINE_MEASURE_LAYER_FILE "libroofline_measure_layer.so"
#endif
#ifndef ROOFLINE_MEASURE_LAYER_RELATIVE_DIR
#define ROOFLINE_MEASURE_LAYER_RELATIVE_DIR "../lib"
#endif

namespace roofline {

namespace {

struct loaded_layer {
  const measurement_layer *layer = nullptr;
  std::string why;
};

/// Where the plugin may be, in order: the environment's choice, beside the executable (the build
/// tree), the installed library directory relative to it.
std::vector<std::string> candidate_files() {
  if (const char *chosen = std::getenv("ROOFLINE_MEASURE_LAYER"); chosen && *chosen)
    return {chosen};
  std::error_code ec;
  const std::filesystem::path executable = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec)
    return {};
  const std::filesystem::path dir = executable.parent_path();
  return {(dir / ROOFLINE_MEASURE_LAYER_FILE).string(),
          (dir / ROOFLINE_MEASURE_LAYER_RELATIVE_DIR / ROOFLINE_MEASURE_LAYER_FILE)
              .lexically_normal()
              .string()};
}

loaded_layer load_plugin() {
  loaded_layer result;
  for (const std::string &file : candidate_files()) {
    std::error_code ec;
    if (!std::filesystem::exists(file, ec)) {
      if (!ec || ec == std::errc::no_such_file_or_directory)
        continue;
      // A name too long, a directory not searchable: the layer is unusable, for this reason.
      result.why = "cannot read " + detail::shown_value(file) + ": " + ec.message();
      return result;
    }
    // Unloading a library whose code may have run is not safe: a failed one stays loaded.
    void *handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      result.why = std::string("cannot load the measurement layer: ") + dlerror() +
                   " (the plugin loads into roofline-advise only; a program embedding the library "
                   "links roofline::measure and calls use_measurement_layer)";
      return result;
    }
    using version_function = const char *(*)();
    using entry_function = const measurement_layer *(*)();
    const auto plugin_version =
        reinterpret_cast<version_function>(dlsym(handle, measurement_layer_version_symbol));
    const auto entry =
        reinterpret_cast<entry_function>(dlsym(handle, measurement_layer_entry_point));
    if (!plugin_version || !entry) {
      result.why = detail::shown_value(file) + " is not a roofline measurement layer";
      return result;
    }
    if (plugin_version() != version()) {
      result.why = detail::shown_value(file) + " is the measurement layer of roofline-advise " +
                   std::string(plugin_version()) + ", not " + std::string(version());
      return result;
    }
    result.layer = entry();
    return result;
  }
  const char *chosen = std::getenv("ROOFLINE_MEASURE_LAYER");
  result.why = chosen && *chosen
                   ? "ROOFLINE_MEASURE_LAYER=" + detail::shown_value(chosen) + " does not exist"
                   : "this build has no CUDA measurement layer (" +
                         std::string(ROOFLINE_MEASURE_LAYER_FILE) + " not found)";
  return result;
}

std::mutex layer_mutex;
std::optional<loaded_layer> current;

} // namespace

const measurement_layer *measurement_layer_in_use(std::string *why) {
  const std::lock_guard<std::mutex> lock(layer_mutex);
  if (!current)
    current = load_plugin();
  if (why)
    *why = current->why;
  return current->layer;
}

const measurement_layer &required_measurement_layer(std::string_view needing,
                                                    std::string_view advice) {
  std::string why;
  if (const measurement_layer *layer = measurement_layer_in_use(&why))
    return *layer;
  throw error(std::string(needing) + " needs the CUDA measurement layer: " + why +
              std::string(advice));
}

void use_measurement_layer(const measurement_layer *layer) {
  const std::lock_guard<std::mutex> lock(layer_mutex);
  if (layer)
    current = loaded_layer{layer, {}};
  else
    current.reset();
}

} // namespace roofline
