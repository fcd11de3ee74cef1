// SPDX-License-Identifier: Apache-2.0
// Links roofline::measure from the installed package, as an embedder that measures in-process
// would: its headers, its library and the CUDA libraries it needs. Needs no GPU (device_count()
// is 0 without one); exits 1 on surprise.
#include <roofline/cuda/measurement_layer.hpp>

#include <iostream>

int main() {
  roofline::use_measurement_layer(&roofline::cuda::layer());
  const roofline::measurement_layer *layer = roofline::measurement_layer_in_use();
  if (layer != &roofline::cuda::layer() || layer->version().empty())
    return 1;
  std::cout << "roofline::measure " << layer->version() << ", " << layer->device_count()
            << " GPU(s)\n";
  return 0;
}
