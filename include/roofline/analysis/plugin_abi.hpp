// SPDX-License-Identifier: Apache-2.0
#pragma once

// The ABI of libroofline_measure_layer.so, the plugin roofline-advise loads when a command needs
// the GPU: shared by the plugin (plugin.cpp; tests/cli/fake_measure_layer.cpp, a fake of it) and
// its loader (src/cli/measurement_plugin.cpp). The plugin exports these two functions and nothing
// else (plugin.map); the loader calls the version first, and the entry point only when the
// versions match. No CUDA header here: the loader is built without CUDA.

#include "roofline/analysis/measurement_layer.hpp"

namespace roofline::plugin {

/// The name of `const char *VERSION()`: the roofline version the plugin was built as.
inline constexpr const char *version_symbol = "roofline_measurement_layer_version";
/// The name of `const roofline::measurement_layer *ENTRY()`: the plugin's layer.
inline constexpr const char *entry_symbol = "roofline_measurement_layer_v1";

using version_function = const char *(*)();
using entry_function = const measurement_layer *(*)();

} // namespace roofline::plugin

// What a plugin defines, under the names above.
extern "C" const char *roofline_measurement_layer_version();
extern "C" const roofline::measurement_layer *roofline_measurement_layer_v1();
