// SPDX-License-Identifier: Apache-2.0
// Measures cuBLAS's steady-state time per call for a fixed, seeded set of GEMM shapes (transformer,
// convolution, attention and odd random sizes) × fp32, tf32, fp16, bf16, through the measurement
// layer (each result checked against a reference first). Writes one CSV row per (shape, precision).
// The performance model is calibrated on the rows of set "calibration" and scored on "scoring"
// (bench/model_accuracy): the two sets share no shape. The shapes are roofline::sweep_shapes().
// Each shape is timed in three rounds over the whole sweep, the median round kept. Each row also
// names the kernels cuBLAS launched and their summed duration (CUPTI activity), so the model's
// tile and split-K choices can be checked against cuBLAS's.
//   gemm_sweep OUT.csv
#include "roofline/cuda/measurer.hpp"
#include "roofline/model_fit.hpp"
#include "roofline/spec_catalog.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>

namespace {

std::string quoted_field(std::string text) {
  std::replace(text.begin(), text.end(), '"', '\'');
  return text;
}

} // namespace

int main(int argc, char **argv) {
  using namespace roofline;
  if (argc != 2) {
    std::fprintf(stderr, "usage: gemm_sweep OUT.csv\n");
    return 2;
  }
  try {
    const std::vector<sweep_shape> list = sweep_shapes();
    std::vector<op> ops;
    std::vector<std::string> categories, sets;
    // Precision outermost: the counter session is rebuilt only when the precision changes.
    for (precision p : {precision::fp32, precision::tf32, precision::fp16, precision::bf16})
      for (const sweep_shape &s : list) {
        ops.push_back(make_gemm_op(s.category, s.shape, p));
        categories.push_back(s.category);
        sets.push_back(s.calibration ? "calibration" : "scoring");
      }
    const gpu_spec spec = *spec_catalog::builtin().find("h200-sxm");
    report r = analyze_ops("sweep", ops, perf_model(spec), "sweep");
    cuda::measure_options options;
    options.time_budget_s = 0.01;
    options.rounds = 3; // the median of three rounds over the sweep
    options.progress = [](std::size_t done, std::size_t total, const std::string &) {
      if (done % 100 == 0)
        std::cerr << done << "/" << total << "\n";
    };
    cuda::measure_report(r, options);
    std::ofstream out(argv[1]);
    out << "set,category,m,n,k,batch_count,precision,status,time_us,min_time_us,max_time_us,"
           "relative_error,note,kernel_time_us,kernels\n";
    for (std::size_t i = 0; i < r.ops.size(); ++i) {
      const op &o = r.ops[i].op;
      const measurement &m = *r.ops[i].measured;
      out << sets[i] << ',' << categories[i] << ',' << o.gemm->m << ',' << o.gemm->n << ','
          << o.gemm->k << ',' << o.gemm->batch_count << ',' << to_string(o.precision) << ','
          << to_string(m.status) << ',' << m.time_s * 1e6 << ',' << m.min_time_s * 1e6 << ','
          << m.max_time_s * 1e6 << ',' << m.relative_error << ",\"" << m.note << "\","
          << (m.counters ? m.counters->kernel_time_s * 1e6 : 0.0) << ",\"";
      for (std::size_t k = 0; k < m.kernels.size(); ++k) // demangled names hold commas
        out << (k ? " | " : "") << quoted_field(m.kernels[k]);
      out << "\"\n";
    }
    std::cerr << list.size() << " shapes, " << r.ops.size() << " measurements written to "
              << argv[1] << "\n";
  } catch (const std::exception &e) {
    std::fprintf(stderr, "gemm_sweep: %s\n", e.what());
    return 1;
  }
  return 0;
}
