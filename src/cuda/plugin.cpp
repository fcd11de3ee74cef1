// SPDX-License-Identifier: Apache-2.0
// The entry point of libroofline_measure_layer.so, the plugin the CLI loads when a command needs
// the GPU (roofline::measurement_layer_in_use).
#include "roofline/cuda/measurement_layer.hpp"

extern "C" __attribute__((visibility("default"))) const roofline::measurement_layer *
roofline_measurement_layer_v1() {
  return &roofline::cuda::layer();
}
