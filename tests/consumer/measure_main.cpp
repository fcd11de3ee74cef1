// SPDX-License-Identifier: Apache-2.0
// Links roofline::measure from the installed package, as an embedder that measures in-process
// would: its headers, its library and the CUDA libraries it needs. Needs no GPU (device_count()
// is 0 without one); exits 1 on surprise.
#include <roofline/analysis/pipeline.hpp>
#include <roofline/cuda/measurement_layer.hpp>

#include <iostream>

int main() {
  // Handed over as the pipeline takes it: the library finds no layer by itself.
  roofline::pipeline_options options;
  options.layer = &roofline::cuda::layer();
  const roofline::measurement_layer *layer = options.layer.layer;
  if (layer != &roofline::cuda::layer() || layer->version().empty())
    return 1;
  std::cout << "roofline::measure " << layer->version() << ", " << layer->device_count()
            << " GPU(s)\n";
  return 0;
}
