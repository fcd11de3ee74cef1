// SPDX-License-Identifier: Apache-2.0
#include "roofline/measurement_layer.hpp"

#include "roofline/version.hpp"

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
/// tree), the installed library directory relative to it, then the loader's search path.
std::vector<std::string> candidate_files() {
  if (const char *chosen = std::getenv("ROOFLINE_MEASURE_LAYER"); chosen && *chosen)
    return {chosen};
  std::vector<std::string> files;
  std::error_code ec;
  const std::filesystem::path executable = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const std::filesystem::path dir = executable.parent_path();
    files.push_back((dir / ROOFLINE_MEASURE_LAYER_FILE).string());
    files.push_back((dir / ROOFLINE_MEASURE_LAYER_RELATIVE_DIR / ROOFLINE_MEASURE_LAYER_FILE)
                        .lexically_normal()
                        .string());
  }
  files.emplace_back(ROOFLINE_MEASURE_LAYER_FILE);
  return files;
}

loaded_layer load_plugin() {
  loaded_layer result;
  for (const std::string &file : candidate_files()) {
    if (file.find('/') != std::string::npos && !std::filesystem::exists(file))
      continue;
    void *handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      result.why = std::string("cannot load the measurement layer: ") + dlerror();
      return result;
    }
    using entry_point = const measurement_layer *(*)();
    const auto entry = reinterpret_cast<entry_point>(dlsym(handle, measurement_layer_entry_point));
    if (!entry) {
      result.why = file + " is not a roofline measurement layer";
      return result; // left loaded: unloading a library whose code may have run is not safe
    }
    const measurement_layer *layer = entry();
    if (!layer || layer->version() != version()) {
      result.why = file + " is the measurement layer of roofline-advise " +
                   std::string(layer ? layer->version() : "?") + ", not " + std::string(version());
      return result;
    }
    result.layer = layer;
    return result;
  }
  const char *chosen = std::getenv("ROOFLINE_MEASURE_LAYER");
  result.why = chosen && *chosen
                   ? std::string("ROOFLINE_MEASURE_LAYER=") + chosen + " does not exist"
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

void use_measurement_layer(const measurement_layer *layer) {
  const std::lock_guard<std::mutex> lock(layer_mutex);
  if (layer)
    current = loaded_layer{layer, {}};
  else
    current.reset();
}

} // namespace roofline
