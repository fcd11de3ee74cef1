// SPDX-License-Identifier: Apache-2.0
// Analyses one layer against a built-in GPU spec, as an embedding tool would; exits 1 on surprise.
#include <roofline/analysis/pipeline.hpp>
#include <roofline/input/network.hpp>

#include <iostream>

int main() {
  const roofline::network net = roofline::parse_network(
      "name: embedded\nbatch: 512\nlayers:\n  - {name: fc, type: linear, in: 1024, out: 4096}\n",
      "inline");
  const roofline::report r = roofline::run_pipeline(net, roofline::choose_gpu("v100"));
  const roofline::analysed_op &fc = r.analysis.ops.at(0);
  std::cout << fc.op.layer << ": intensity " << fc.op.arithmetic_intensity() << " FLOP/B, "
            << roofline::to_string(fc.prediction.bound) << "-bound, " << fc.prediction.time_s * 1e6
            << " µs\n";
  return fc.prediction.bound == roofline::bound::compute && fc.prediction.time_s > 0 && r.advice
             ? 0
             : 1;
}
