// SPDX-License-Identifier: Apache-2.0
// Scores predicted against measured GEMM times (the rows bench/gemm_sweep wrote on a GPU): median
// and p90 of |predicted − measured| / measured for (a) the plain roofline, (b) the GEMM model with
// generic parameters and datasheet specs, (c) the model calibrated on the "calibration" rows, all
// three scored on the "scoring" rows (no shape is in both). Prints a Markdown table and the
// calibrated `model:` section for the spec file. Needs no GPU.
//   model_accuracy bench/data/h200-sweep.csv [gpu=h200-sxm]
// ROOFLINE_WORST=1 lists the scoring rows the calibrated model misses most; ROOFLINE_DUMP=FILE
// writes every row's prediction (tile, split-K) as CSV, to join with the sweep's kernel names.
#include "roofline/error.hpp"
#include "roofline/gemm_model.hpp"
#include "roofline/model_fit.hpp"
#include "roofline/spec_catalog.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace roofline;

struct row {
  std::string set, category;
  timed_gemm sample;
};

std::vector<row> read_rows(const std::string &file) {
  std::ifstream in(file);
  if (!in)
    throw error("cannot open " + file);
  std::string line;
  std::getline(in, line); // header
  std::vector<row> rows;
  while (std::getline(in, line)) {
    std::vector<std::string> fields;
    std::stringstream stream(line);
    std::string field;
    while (std::getline(stream, field, ','))
      fields.push_back(field);
    if (fields.size() < 9 || fields[7] != "measured")
      continue;
    row r;
    r.set = fields[0];
    r.category = fields[1];
    r.sample.shape = {std::stoll(fields[2]), std::stoll(fields[3]), std::stoll(fields[4]),
                      std::stoll(fields[5])};
    r.sample.prec = *parse_precision(fields[6]);
    r.sample.time_s = std::stod(fields[8]) * 1e-6;
    // The last field names the kernels one call ran, " | " between them (quoted: names hold
    // commas, never quotes).
    if (const auto close = line.rfind('"'); close != std::string::npos && close > 0) {
      const auto open = line.rfind('"', close - 1);
      const std::string kernels = line.substr(open + 1, close - open - 1);
      if (open != std::string::npos && !kernels.empty()) {
        r.sample.launches = 1;
        for (auto at = kernels.find(" | "); at != std::string::npos; at = kernels.find(" | ", at + 3))
          ++r.sample.launches;
      }
    }
    rows.push_back(r);
  }
  return rows;
}

std::string percentiles(const std::vector<double> &sorted) {
  if (sorted.empty())
    return "— | —";
  return fmt::format("{:.1f}% | {:.1f}%", 100 * sorted[sorted.size() / 2],
                     100 * sorted[sorted.size() * 9 / 10]);
}

std::vector<double> roofline_errors(const std::vector<timed_gemm> &samples, const gpu_spec &gpu) {
  std::vector<double> errors;
  for (const timed_gemm &s : samples) {
    const double flops =
        2.0 * static_cast<double>(s.shape.m * s.shape.n * s.shape.k * s.shape.batch_count);
    const double bytes =
        element_bytes(s.prec) * static_cast<double>((s.shape.m * s.shape.k + s.shape.k * s.shape.n +
                                                     s.shape.m * s.shape.n) *
                                                    s.shape.batch_count);
    const double t = std::max(flops / gpu.peak_flop_per_s(s.prec), bytes / gpu.dram_bytes_per_s);
    errors.push_back(std::fabs(t - s.time_s) / s.time_s);
  }
  std::sort(errors.begin(), errors.end());
  return errors;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: model_accuracy SWEEP.csv [gpu]\n");
    return 2;
  }
  try {
    const std::vector<row> rows = read_rows(argv[1]);
    gpu_spec gpu = *spec_catalog::builtin().find(argc > 2 ? argv[2] : "h200-sxm");
    // The spec's own calibration, fitted on another sweep (another session), scored below as a
    // check across sessions; (b) must see the datasheet alone.
    const std::optional<model_parameters> shipped = gpu.calibration;
    gpu.calibration.reset();
    std::vector<timed_gemm> calibration, scoring;
    std::map<std::string, std::vector<timed_gemm>> by_category, by_precision, by_alignment;
    for (const row &r : rows) {
      (r.set == "calibration" ? calibration : scoring).push_back(r.sample);
      if (r.set != "calibration") {
        by_category[r.category].push_back(r.sample);
        by_precision[std::string(to_string(r.sample.prec))].push_back(r.sample);
        const int alignment = row_alignment_bytes(r.sample.shape, r.sample.prec);
        by_alignment[alignment == 16 ? "rows 16-byte aligned" : "rows misaligned"].push_back(
            r.sample);
      }
    }
    model_parameters generic;
    model_parameters fitted = fit_model(calibration, gpu, generic);
    fitted.origin =
        "fitted by bench/model_accuracy on the calibration rows of " + std::string(argv[1]);
    fmt::print("{} measurements: {} calibrate, {} score; GPU spec {}\n\n", rows.size(),
               calibration.size(), scoring.size(), gpu.name);
    fmt::print("| scored on | n | (a) roofline median | p90 | (b) datasheet model median | p90 | "
               "(c) calibrated "
               "median | p90 |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    const auto line = [&](const std::string &name, const std::vector<timed_gemm> &samples) {
      fmt::print("| {} | {} | {} | {} | {} |\n", name, samples.size(),
                 percentiles(roofline_errors(samples, gpu)),
                 percentiles(relative_errors(samples, gpu, generic)),
                 percentiles(relative_errors(samples, gpu, fitted)));
    };
    line("**all scoring shapes**", scoring);
    for (const auto &[name, samples] : by_category)
      line(name, samples);
    for (const auto &[name, samples] : by_precision)
      line(name, samples);
    for (const auto &[name, samples] : by_alignment)
      line(name, samples);
    if (shipped)
      fmt::print("\nThe spec's calibration ({}) on the scoring rows: {}\n", shipped->origin,
                 percentiles(relative_errors(scoring, gpu, *shipped)));
    fmt::print("\ncalibrated parameters (calibration rows only):\n\n{}", to_yaml(fitted));
    const char *dump = std::getenv("ROOFLINE_DUMP");
    if (!dump && !std::getenv("ROOFLINE_WORST"))
      return 0;
    std::vector<gemm_estimate> estimates; // the calibrated model's, one per row
    for (const row &r : rows)
      estimates.push_back(estimate_gemm(r.sample.shape, r.sample.prec,
                                        gpu.peak_flop_per_s(r.sample.prec), gpu, fitted));
    if (dump) { // every row's prediction, for analysis
      std::ofstream out(dump);
      out << "set,m,n,k,batch_count,precision,measured_us,predicted_us,kernel_family,tile_m,tile_n,"
             "split_k,launches\n";
      for (std::size_t i = 0; i < rows.size(); ++i) {
        const row &r = rows[i];
        const gemm_estimate &e = estimates[i];
        out << fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{}\n", r.set, r.sample.shape.m,
                           r.sample.shape.n, r.sample.shape.k, r.sample.shape.batch_count,
                           to_string(r.sample.prec), r.sample.time_s * 1e6, e.time_s * 1e6,
                           to_string(e.family), e.tile_m, e.tile_n, e.split_k, e.launches);
      }
    }
    if (std::getenv("ROOFLINE_WORST")) { // the scoring rows the calibrated model misses most
      std::vector<std::pair<double, std::size_t>> misses; // predicted / measured, row
      for (std::size_t i = 0; i < rows.size(); ++i)
        if (rows[i].set != "calibration")
          misses.emplace_back(estimates[i].time_s / rows[i].sample.time_s, i);
      std::sort(misses.begin(), misses.end());
      for (std::size_t i = 0; i < misses.size(); ++i)
        if (i < 15 || i + 15 >= misses.size()) {
          const row &r = rows[misses[i].second];
          fmt::print("{:5.2f} {:>6} {:>6} {:>6} {:>4} {} {:<11} measured {:9.1f} µs  {}\n",
                     misses[i].first, r.sample.shape.m, r.sample.shape.n, r.sample.shape.k,
                     r.sample.shape.batch_count, to_string(r.sample.prec), r.category,
                     r.sample.time_s * 1e6, estimates[misses[i].second].factors.front());
        }
    }
  } catch (const std::exception &e) {
    std::fprintf(stderr, "model_accuracy: %s\n", e.what());
    return 1;
  }
  return 0;
}
