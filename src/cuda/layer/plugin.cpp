// SPDX-License-Identifier: Apache-2.0
// The entry points of libroofline_measure_layer.so (plugin.hpp), the plugin roofline-advise loads
// when a command needs the GPU (src/cli/measurement_plugin.cpp). The plugin takes roofline::core
// from the executable that loads it, so only roofline-advise (which exports its core) can load it.
#include "roofline/analysis/plugin_abi.hpp"

#include "roofline/cuda/measurement_layer.hpp"

/// The version the plugin was built as, compiled into the plugin itself: the loader compares it
/// with its own before it calls anything else.
extern "C" const char *roofline_measurement_layer_version() {
  return ROOFLINE_VERSION;
}

extern "C" const roofline::measurement_layer *roofline_measurement_layer_v1() {
  return &roofline::cuda::layer();
}
