// SPDX-License-Identifier: Apache-2.0
// Measures cuBLAS GEMMs for a fixed, seeded set of shapes × fp32, tf32, fp16, bf16 through the
// measurement layer (each result checked against a reference first) and writes one CSV row per
// (shape, precision). Every call is timed two ways: eager (time_us: back-to-back calls issued from
// the host, the larger of the GPU's time and the host's cost of a call) and replayed from a CUDA
// graph (device_time_us: the GPU's time per call, no host gap; what the performance model
// predicts). Each shape is timed in three rounds over the whole sweep and the median round kept,
// for each of the two. Each row also names the kernels cuBLAS launched, how many launches one call
// made and their summed duration (CUPTI activity), so the model's tile and split-K choices can be
// checked against cuBLAS's. Sets: "calibration" and "scoring" are roofline::sweep_shapes() (the
// model is calibrated on the first, scored on the second; they share no shape; bench/data/*.csv
// hold them); "fresh" is roofline::accuracy_shapes(), shapes neither of those holds, to score a
// calibrated model on. `cold` rotates every call's operands through buffers larger than L2 (as
// `--cold-l2` does), for the model's cold-operand parameters; it times fp16 and bf16 only (what
// networks' weights are stored in; the rotation makes each op several times dearer to time).
// A precision in place of `cold` (`fp8`) times that precision alone, through cuBLASLt, on the
// shapes whose rows meet its 16-byte rule (cuBLASLt has no fp8 kernel for the others).
// SIGTERM (what `timeout` sends) or SIGINT stops the sweep after the op in flight, and the rows
// are written all the same: those it did not reach say so (status skipped).
//   gemm_sweep OUT.csv [calibration|scoring|fresh|all [cold|PRECISION]]   (all: calibration +
//   scoring)
#include "roofline/cuda/measurer.hpp"
#include "roofline/model/detail/sweep_shapes.hpp"
#include "roofline/model/spec_catalog.hpp"

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

namespace {

std::atomic<bool> stop_requested{false}; // lock-free: set by the signal handler
static_assert(std::atomic<bool>::is_always_lock_free);

void request_stop(int) {
  stop_requested.store(true);
}

std::string quoted_field(std::string text) {
  std::replace(text.begin(), text.end(), '"', '\'');
  return text;
}

/// One shape to measure and the set its rows belong to.
struct selected_shape {
  std::string set;
  roofline::sweep_shape shape;
};

/// The shapes of `which`; empty when `which` names no set.
std::vector<selected_shape> select(const std::string &which) {
  std::vector<selected_shape> selected;
  if (which == "fresh") {
    for (const roofline::sweep_shape &s : roofline::accuracy_shapes())
      selected.push_back({"fresh", s});
    return selected;
  }
  if (which != "all" && which != "calibration" && which != "scoring")
    return selected;
  for (const roofline::sweep_shape &s : roofline::sweep_shapes()) {
    const std::string set = s.calibration ? "calibration" : "scoring";
    if (which == "all" || which == set)
      selected.push_back({set, s});
  }
  return selected;
}

} // namespace

int main(int argc, char **argv) {
  using namespace roofline;
  const std::string which = argc >= 3 ? argv[2] : "all";
  const bool cold = argc == 4 && std::string(argv[3]) == "cold";
  const std::optional<precision> only =
      argc == 4 && !cold ? parse_precision(argv[3]) : std::nullopt;
  std::vector<selected_shape> list;
  if (argc == 2 || argc == 3 || cold || only)
    list = select(which);
  if (list.empty()) {
    std::fprintf(stderr,
                 "usage: gemm_sweep OUT.csv [calibration|scoring|fresh|all [cold|PRECISION]]\n");
    return 2;
  }
  try {
    std::vector<op> ops;
    std::vector<const selected_shape *> origin;
    // Precision outermost, as calibrate measures them.
    std::vector<precision> precisions(calibration_precisions.begin(), calibration_precisions.end());
    if (only)
      precisions = {*only};
    for (precision p : precisions)
      for (const selected_shape &s : list) {
        if (cold && p != precision::fp16 && p != precision::bf16)
          continue;
        if (only && row_alignment_bytes(s.shape.shape, p) < 16)
          continue;
        ops.push_back(make_gemm_op(s.shape.category, s.shape.shape, p));
        origin.push_back(&s);
      }
    // As calibrate_local_gpu measures, so that the calibration rows are what a calibration fits:
    // no counters (their replay passes would double the sweep), kernels traced for their names and
    // launch counts (the fit learns cuBLAS's split-K rule from them), three rounds of ~10 ms of
    // timed calls per op (eager, and as much again graph-replayed, which takes the GPU no longer).
    measure_options options;
    options.counters = false;
    options.trace_kernels = true;
    options.time_budget_s = 0.01;
    options.rounds = 3;
    options.cold_l2 = cold;
    options.stop = [] { return stop_requested.load(); };
    options.progress = [](std::size_t done, std::size_t total, const std::string &) {
      if (done % 100 == 0)
        std::cerr << done << "/" << total << "\n";
    };
    std::signal(SIGTERM, request_stop);
    std::signal(SIGINT, request_stop);
    const measurements measured = cuda::measure(ops, options);
    std::ofstream out(argv[1]);
    out << "set,category,m,n,k,batch_count,precision,status,time_us,min_time_us,max_time_us,"
           "device_time_us,device_min_time_us,device_max_time_us,relative_error,note,"
           "kernel_time_us,launches,kernels\n";
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const op &o = ops[i];
      const measurement &m = *measured.ops[i];
      out << origin[i]->set << ',' << origin[i]->shape.category << ',' << o.gemm->m << ','
          << o.gemm->n << ',' << o.gemm->k << ',' << o.gemm->batch_count << ','
          << to_string(o.precision) << ',' << to_string(m.status) << ',' << m.time_s * 1e6 << ','
          << m.min_time_s * 1e6 << ',' << m.max_time_s * 1e6 << ',' << m.device_time_s * 1e6 << ','
          << m.device_min_time_s * 1e6 << ',' << m.device_max_time_s * 1e6 << ','
          << m.relative_error << ",\"" << quoted_field(m.note) << "\"," << m.kernel_time_s * 1e6
          << ',' << m.launches << ",\"";
      for (std::size_t k = 0; k < m.kernels.size(); ++k) // demangled names hold commas
        out << (k ? " | " : "") << quoted_field(m.kernels[k]);
      out << "\"\n";
    }
    if (!out.flush()) {
      std::fprintf(stderr, "gemm_sweep: cannot write %s\n", argv[1]);
      return 1;
    }
    if (!measured.complete)
      std::cerr << "stopped before the end: the rows not reached say so\n";
    std::cerr << list.size() << " shapes (" << which << "), " << ops.size()
              << " measurements written to " << argv[1] << "\n";
  } catch (const std::exception &e) {
    std::fprintf(stderr, "gemm_sweep: %s\n", e.what());
    return 1;
  }
  return 0;
}
