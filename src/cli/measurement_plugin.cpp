// SPDX-License-Identifier: Apache-2.0
#include "measurement_plugin.hpp"

#include "roofline/analysis/plugin_abi.hpp"

#include "roofline/common/version.hpp"
#include "roofline/output/output_format.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

// The plugin's file name and where it is installed relative to the executable (CMakeLists.txt).
#ifndef ROOFLINE_MEASURE_LAYER_FILE
#define ROOFLINE_MEASURE_LAYER_FILE "libroofline_measure_layer.so"
#endif
#ifndef ROOFLINE_MEASURE_LAYER_RELATIVE_DIR
#define ROOFLINE_MEASURE_LAYER_RELATIVE_DIR "../lib"
#endif

namespace roofline::cli {

namespace {

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

/// The plugin in `file`, which exists: its layer, or why it cannot be used.
measurement_layer_ref load(const std::string &file) {
  // Unloading a library whose code may have run is not safe: a failed one stays loaded.
  void *handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    return measurement_layer_ref::none(
        std::string("cannot load the measurement layer: ") + dlerror() +
        " (the plugin loads into roofline-advise only; a program embedding the library links "
        "roofline::measure and hands over roofline::cuda::layer())");
  const auto plugin_version =
      reinterpret_cast<plugin::version_function>(dlsym(handle, plugin::version_symbol));
  const auto entry = reinterpret_cast<plugin::entry_function>(dlsym(handle, plugin::entry_symbol));
  if (!plugin_version || !entry)
    return measurement_layer_ref::none(shown_value(file) + " is not a roofline measurement layer");
  if (plugin_version() != version())
    return measurement_layer_ref::none(
        shown_value(file) + " is the measurement layer of roofline-advise " +
        std::string(plugin_version()) + ", not " + std::string(version()));
  return entry();
}

measurement_layer_ref find_and_load() {
  for (const std::string &file : candidate_files()) {
    std::error_code ec;
    if (std::filesystem::exists(file, ec))
      return load(file);
    // A name too long, a directory not searchable: the layer is unusable, for this reason.
    if (ec && ec != std::errc::no_such_file_or_directory)
      return measurement_layer_ref::none("cannot read " + shown_value(file) + ": " + ec.message());
  }
  const char *chosen = std::getenv("ROOFLINE_MEASURE_LAYER");
  return measurement_layer_ref::none(
      chosen && *chosen ? "ROOFLINE_MEASURE_LAYER=" + shown_value(chosen) + " does not exist"
                        : "this build has no CUDA measurement layer (" +
                              std::string(ROOFLINE_MEASURE_LAYER_FILE) + " not found)");
}

} // namespace

const measurement_layer_ref &measurement_plugin() {
  static const measurement_layer_ref plugin = find_and_load();
  return plugin;
}

measurement_layer_ref local_gpu_plugin() {
  const char *chosen = std::getenv("ROOFLINE_MEASURE_LAYER");
  std::error_code ec;
  const bool device =
      std::filesystem::exists("/dev/nvidiactl", ec) || std::filesystem::exists("/dev/dxg", ec);
  if (!device && !(chosen && *chosen))
    return measurement_layer_ref::none("no local GPU found");
  return measurement_plugin();
}

} // namespace roofline::cli
