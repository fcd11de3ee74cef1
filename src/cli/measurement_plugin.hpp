// SPDX-License-Identifier: Apache-2.0
#pragma once

// The measurement layer of roofline-advise: roofline::measure as a plugin
// (libroofline_measure_layer.so, roofline/analysis/plugin_abi.hpp), loaded on the first command
// that needs the GPU, so that a datasheet analysis loads no CUDA library.

#include "roofline/analysis/measurement_layer.hpp"

namespace roofline::cli {

/// The plugin, loaded on the first call (once a process: a library whose code may have run
/// cannot be unloaded safely): `$ROOFLINE_MEASURE_LAYER`, else beside the executable (the build
/// tree), else in the installed library directory. The plugin takes roofline::core from the
/// executable, so it loads into roofline-advise only. None, with the reason, when it is not
/// built, fails to load, or is another version's.
const measurement_layer_ref &measurement_plugin();

/// The plugin for `--gpu auto`, which only asks for a local GPU: none ("no local GPU found", as
/// the plugin itself would say) without loading a CUDA library where this machine has no NVIDIA
/// device node (/dev/nvidiactl, or /dev/dxg under WSL) and $ROOFLINE_MEASURE_LAYER names no
/// layer: loading them to find no GPU took 0.2–2.4 s and 440 MB.
measurement_layer_ref local_gpu_plugin();

} // namespace roofline::cli
