// SPDX-License-Identifier: Apache-2.0
// Scores the GEMM model against cuBLAS timings measured on GPUs (CSV rows of bench/gemm_sweep:
// eager and graph-replayed times of the same calls). Needs no GPU.
//
//   model_accuracy --fit h200-sxm=H200-calibration.csv
//                  --gpu h200-sxm=H200-calibration.csv,H200-fresh.csv[,FLOOR]
//                  --gpu h100-sxm5=H100-calibration.csv,H100-fresh.csv[,FLOOR] [--dump FILE]
//                  [--cold h200-sxm=H200-cold-calibration.csv,H200-cold-fresh.csv ...]
//
// --fit fits the architecture's parameters to one GPU's calibration rows (device time, from the
// generic defaults) and prints them as specs/arch/<architecture>.yaml's `model:`. Each --gpu is
// scored on its fresh rows (shapes no fit saw), per precision and class, as median and p90 of
// |predicted − measured| / measured:
//   (a) the plain roofline against device time;
//   (b) the datasheet with the architecture's parameters from --fit (for a GPU other than the
//       fitted one: parameters it was not fitted on);
//   (c) calibrated on the same GPU's calibration rows (from (b)'s parameters, as `calibrate`
//       does), scored on its fresh rows;
//   eager: max((c)'s device time, the host floor) against the eager time; FLOOR is the ceilings
//       cache `device --measure` wrote on the same machine (its host floors).
// With two GPUs, (d): the per-shape ratio of device times, second GPU over first, predicted with
// (b) against measured, on the fresh shapes both measured.
// --cold gives rows timed with operands cold (gemm_sweep ... cold). The first one's calibration
// rows, of the --fit GPU, fit the cold-operand parameters on top of --fit's (fit_cold_operands),
// printed beside them; every --cold GPU's fresh rows are scored with those parameters, predicted
// cold, against the same parameters predicted warm (what the model said before it knew cold).
#include "roofline/common/error.hpp"
#include "roofline/model/ceilings.hpp"
#include "roofline/model/gemm_model.hpp"
#include "roofline/model/host_floor.hpp"
#include "roofline/model/model_fit.hpp"
#include "roofline/model/spec_catalog.hpp"

#include "csv_fields.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

namespace {

using namespace roofline;

struct row {
  std::string set, category;
  timed_gemm sample; ///< time_s: device time (graph replay)
  double eager_s = 0;
};

std::vector<std::string> split(const std::string &text, char separator) {
  std::vector<std::string> parts;
  std::stringstream stream(text);
  std::string part;
  while (std::getline(stream, part, separator))
    parts.push_back(part);
  return parts;
}

std::vector<row> read_rows(const std::string &file) {
  bench::csv_file csv(file, "a bench/gemm_sweep CSV with graph replay");
  const std::size_t set = csv.column("set"), category = csv.column("category"), m = csv.column("m"),
                    n = csv.column("n"), k = csv.column("k"), batch = csv.column("batch_count"),
                    prec = csv.column("precision"), status = csv.column("status"),
                    eager = csv.column("time_us"), device = csv.column("device_time_us"),
                    launches = csv.column("launches");
  std::vector<row> rows;
  for (std::vector<std::string> f; csv.next(f);) {
    if (f[status] != "measured" || std::stod(f[device]) <= 0)
      continue;
    row r;
    r.set = f[set];
    r.category = f[category];
    r.sample.shape = {std::stoll(f[m]), std::stoll(f[n]), std::stoll(f[k]), std::stoll(f[batch])};
    r.sample.prec = *parse_precision(f[prec]);
    r.sample.time_s = std::stod(f[device]) * 1e-6;
    r.sample.launches = f[launches].empty() ? 0 : std::stoi(f[launches]);
    r.eager_s = std::stod(f[eager]) * 1e-6;
    rows.push_back(r);
  }
  return rows;
}

/// The host floor the GPU's machine measured: its `device --measure` ceilings cache.
host_floor read_floor(const std::string &file) {
  std::ifstream in(file);
  if (!in)
    throw error("cannot open " + file);
  std::stringstream text;
  text << in.rdbuf();
  return measured_host_floor(parse_ceilings(text.str(), file));
}

struct gpu_data {
  gpu_spec spec; ///< datasheet, parameters not yet resolved
  std::vector<row> calibration, fresh;
  std::optional<host_floor> floor;
  model_parameters own; ///< (c)
};

/// Median and p90 of sorted errors.
std::string percentiles(std::vector<double> errors) {
  if (errors.empty())
    return "— | —";
  std::sort(errors.begin(), errors.end());
  return fmt::format("{:.1f}% | {:.1f}%", 100 * errors[errors.size() / 2],
                     100 * errors[errors.size() * 9 / 10]);
}

double relative(double predicted, double measured) {
  return std::fabs(predicted - measured) / measured;
}

double roofline_s(const timed_gemm &s, const gpu_spec &gpu) {
  const double flops = 2.0 * static_cast<double>(s.shape.m) * static_cast<double>(s.shape.n) *
                       static_cast<double>(s.shape.k) * static_cast<double>(s.shape.batch_count);
  const double bytes =
      element_bytes(s.prec) *
      static_cast<double>((s.shape.m * s.shape.k + s.shape.k * s.shape.n + s.shape.m * s.shape.n) *
                          s.shape.batch_count);
  return std::max(flops / gpu.peak_flop_per_s(s.prec), bytes / gpu.dram_bytes_per_s);
}

gemm_estimate estimate(const timed_gemm &s, const gpu_spec &gpu, const model_parameters &p) {
  return estimate_gemm(s.shape, s.prec, gpu.peak_flop_per_s(s.prec), gpu, p, s.operands);
}

/// The classes the issue asks errors broken down by; a row may be in several.
std::vector<std::string> classes_of(const row &r) {
  std::vector<std::string> classes;
  if (r.sample.time_s < 10e-6)
    classes.push_back("device time < 10 µs");
  if (row_alignment_bytes(r.sample.shape, r.sample.prec) < 16)
    classes.push_back("misaligned rows");
  if (r.sample.shape.m <= 16)
    classes.push_back("M ≤ 16");
  if (r.sample.time_s >= 100e-6)
    classes.push_back("large (≥ 100 µs)");
  return classes;
}

/// `rows` by the groups the tables break errors down by: all, each precision, each class and, with
/// `by_category`, each shape category.
std::map<std::string, std::vector<const row *>> groups_of(const std::vector<row> &rows,
                                                          bool by_category) {
  std::map<std::string, std::vector<const row *>> groups;
  for (const row &r : rows) {
    groups["**all**"].push_back(&r);
    groups[std::string(to_string(r.sample.prec))].push_back(&r);
    if (by_category)
      groups["category " + r.category].push_back(&r);
    for (const std::string &c : classes_of(r))
      groups[c].push_back(&r);
  }
  return groups;
}

void score(const std::string &name, const gpu_data &gpu, const model_parameters &architecture) {
  fmt::print("\n### {} ({} fresh rows; (c) calibrated on {} rows)\n\n", name, gpu.fresh.size(),
             gpu.calibration.size());
  fmt::print("| scored on | n | (a) roofline | p90 | (b) architecture | p90 | (c) calibrated | "
             "p90 | eager, measured floor | p90 |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|"
             "---:|\n");
  for (const auto &[group, rows] : groups_of(gpu.fresh, true)) {
    std::vector<double> a, b, c, eager;
    for (const row *r : rows) {
      const timed_gemm &s = r->sample;
      a.push_back(relative(roofline_s(s, gpu.spec), s.time_s));
      b.push_back(relative(estimate(s, gpu.spec, architecture).device_time_s, s.time_s));
      const gemm_estimate own = estimate(s, gpu.spec, gpu.own);
      c.push_back(relative(own.device_time_s, s.time_s));
      if (gpu.floor)
        eager.push_back(relative(std::max(own.device_time_s, gpu.floor->gemm(s.prec, own.launches)),
                                 r->eager_s));
    }
    fmt::print("| {} | {} | {} | {} | {} | {} |\n", group, rows.size(), percentiles(a),
               percentiles(b), percentiles(c), percentiles(eager));
  }
}

/// (d): the device-time ratio second / first per fresh shape both GPUs measured.
void score_ratio(const std::string &first_name, const gpu_data &first,
                 const std::string &second_name, const gpu_data &second,
                 const model_parameters &first_parameters,
                 const model_parameters &second_parameters) {
  using key = std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t, int>;
  std::map<key, const row *> there;
  for (const row &r : first.fresh)
    there[{r.sample.shape.m, r.sample.shape.n, r.sample.shape.k, r.sample.shape.batch_count,
           static_cast<int>(r.sample.prec)}] = &r;
  std::map<std::string, std::vector<double>> errors, measured_ratios, roofline_errors;
  for (const row &r : second.fresh) {
    const auto found = there.find({r.sample.shape.m, r.sample.shape.n, r.sample.shape.k,
                                   r.sample.shape.batch_count, static_cast<int>(r.sample.prec)});
    if (found == there.end())
      continue;
    const timed_gemm &s = r.sample;
    const double measured = s.time_s / found->second->sample.time_s;
    const double predicted = estimate(s, second.spec, second_parameters).device_time_s /
                             estimate(s, first.spec, first_parameters).device_time_s;
    const double roofline = roofline_s(s, second.spec) / roofline_s(s, first.spec);
    for (const std::string &group : {std::string("**all**"), std::string(to_string(s.prec))}) {
      errors[group].push_back(relative(predicted, measured));
      roofline_errors[group].push_back(relative(roofline, measured));
      measured_ratios[group].push_back(measured);
    }
  }
  fmt::print("\n### (d) device time {} / {} per fresh shape\n\n| shapes | n | measured ratio "
             "median | p90 | (d) predicted ratio error median | p90 | roofline's ratio error | "
             "p90 |\n|---|---:|---:|---:|---:|---:|---:|---:|\n",
             second_name, first_name);
  for (auto &[group, e] : errors) {
    std::vector<double> &ratios = measured_ratios[group];
    std::sort(ratios.begin(), ratios.end());
    fmt::print("| {} | {} | {:.3f} | {:.3f} | {} | {} |\n", group, e.size(),
               ratios[ratios.size() / 2], ratios[ratios.size() * 9 / 10], percentiles(e),
               percentiles(roofline_errors[group]));
  }
}

/// Fresh rows timed cold: the plain roofline, the architecture's parameters predicting them warm,
/// and predicting them cold with the cold-operand parameters fitted on the --fit GPU.
void score_cold(const std::string &name, const gpu_spec &gpu, const std::vector<row> &fresh,
                const model_parameters &architecture) {
  fmt::print("\n### {}, operands cold ({} fresh rows)\n\n| scored on | n | (a) roofline | p90 | "
             "(b) predicted warm | p90 | (b) predicted cold | p90 |\n|---|---:|---:|---:|---:|"
             "---:|---:|---:|\n",
             name, fresh.size());
  for (const auto &[group, rows] : groups_of(fresh, false)) {
    std::vector<double> a, warm, cold;
    for (const row *r : rows) {
      timed_gemm s = r->sample;
      a.push_back(relative(roofline_s(s, gpu), s.time_s));
      cold.push_back(relative(estimate(s, gpu, architecture).device_time_s, s.time_s));
      s.operands = cache_state::warm;
      warm.push_back(relative(estimate(s, gpu, architecture).device_time_s, s.time_s));
    }
    fmt::print("| {} | {} | {} | {} | {} |\n", group, rows.size(), percentiles(a),
               percentiles(warm), percentiles(cold));
  }
}

void dump(const std::string &name, const gpu_data &gpu, const model_parameters &architecture,
          std::ofstream &out) {
  for (const std::vector<row> *rows : {&gpu.calibration, &gpu.fresh})
    for (const row &r : *rows) {
      const gemm_estimate b = estimate(r.sample, gpu.spec, architecture);
      const gemm_estimate c = estimate(r.sample, gpu.spec, gpu.own);
      out << fmt::format("{},{},{},{},{},{},{},{},{},{:.3f},{:.3f},{:.3f},{:.3f},{},{},{},{},{}\n",
                         name, r.set, r.category, r.sample.shape.m, r.sample.shape.n,
                         r.sample.shape.k, r.sample.shape.batch_count, to_string(r.sample.prec),
                         r.sample.launches, r.sample.time_s * 1e6, r.eager_s * 1e6,
                         b.device_time_s * 1e6, c.device_time_s * 1e6, to_string(c.family),
                         c.tile_m, c.tile_n, c.split_k, c.launches);
    }
}

/// The command line: the GPU and file the architecture is fitted on, the GPUs scored.
struct options {
  std::optional<std::pair<std::string, std::string>> fit; // GPU, CSV
  std::vector<std::pair<std::string, std::vector<std::string>>> gpus, cold_gpus;
  std::string dump_file;
};

/// The options; nullopt (the usage printed) where --fit or --gpu is missing.
std::optional<options> parse_options(int argc, char **argv) {
  options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string option = argv[i], value = argv[i + 1];
    const auto equals = value.find('=');
    if (option == "--dump") {
      o.dump_file = value;
      continue;
    }
    if (equals == std::string::npos)
      throw error(option + " " + value + ": expected GPU=FILES");
    const std::string gpu = value.substr(0, equals);
    const std::vector<std::string> files = split(value.substr(equals + 1), ',');
    if (option == "--fit")
      o.fit = {gpu, files.at(0)};
    else if (option == "--gpu" && files.size() >= 2)
      o.gpus.push_back({gpu, files});
    else if (option == "--cold" && files.size() == 2)
      o.cold_gpus.push_back({gpu, files});
    else
      throw error("unknown or incomplete option " + option);
  }
  if (!o.fit || o.gpus.empty()) {
    std::fprintf(stderr, "usage: model_accuracy --fit GPU=CAL.csv --gpu GPU=CAL.csv,FRESH.csv"
                         "[,FLOOR] [--gpu ...] [--dump FILE]\n");
    return std::nullopt;
  }
  return o;
}

/// `file`'s rows, their operands cold.
std::vector<row> cold_rows(const std::string &file) {
  std::vector<row> rows = read_rows(file);
  for (row &r : rows)
    r.sample.operands = cache_state::cold;
  return rows;
}

/// `architecture` with its cold-operand parameters fitted on the first --cold pair (the fitted
/// GPU's) calibration rows, printed; `architecture` itself without --cold.
model_parameters fit_cold(const options &o, const gpu_spec &fit_gpu,
                          const model_parameters &architecture) {
  if (o.cold_gpus.empty())
    return architecture;
  if (o.cold_gpus.front().first != o.fit->first)
    throw error("the first --cold is the --fit GPU's: its calibration rows fit the cold "
                "parameters");
  std::vector<timed_gemm> cold_samples;
  for (const row &r : cold_rows(o.cold_gpus.front().second[0]))
    if (r.set == "calibration")
      cold_samples.push_back(r.sample);
  const model_parameters cold = fit_cold_operands(cold_samples, fit_gpu, architecture);
  fmt::print("\ncold operands, fitted on {} cold calibration rows ({}):\n```yaml\n"
             "  cold_dram_efficiency: {}\n  cold_dram_latency_s: {}\n```\n",
             cold_samples.size(), o.cold_gpus.front().second[0],
             cold[parameter::cold_dram_efficiency], cold[parameter::cold_dram_latency_s]);
  return cold;
}

} // namespace

int main(int argc, char **argv) {
  try {
    const std::optional<options> parsed = parse_options(argc, argv);
    if (!parsed)
      return 2;
    const options &o = *parsed;
    const auto &fit = o.fit;
    const auto &gpus = o.gpus;
    const spec_catalog &catalog = spec_catalog::builtin();
    const auto datasheet = [&](const std::string &name) {
      gpu_spec spec = catalog.resolve(name);
      spec.parameters = model_parameters{}; // the datasheet alone: parameters come from the fit
      return spec;
    };

    // The architecture's parameters: fitted to one GPU's calibration rows from the defaults.
    const gpu_spec fit_gpu = datasheet(fit->first);
    std::vector<timed_gemm> fit_samples;
    for (const row &r : read_rows(fit->second))
      if (r.set == "calibration")
        fit_samples.push_back(r.sample);
    model_parameters architecture = fit_model(fit_samples, fit_gpu, model_parameters{});
    const parameter_overrides fitted =
        changed(model_parameters{}, architecture,
                fmt::format("fitted on an {} by bench/model_accuracy: {} graph-replayed cuBLAS "
                            "timings of the calibration shapes ({})",
                            fit_gpu.display_name, fit_samples.size(), fit->second));
    fmt::print("## {} architecture parameters ({} of {} fitted)\n\n```yaml\narchitecture: {}\n{}"
               "```\n",
               fit_gpu.architecture, fitted.values.size(), parameter_count, fit_gpu.architecture,
               to_yaml(fitted));
    const model_parameters cold_architecture = fit_cold(o, fit_gpu, architecture);
    std::vector<gpu_data> data;
    for (const auto &[name, files] : gpus) {
      gpu_data g;
      g.spec = datasheet(name);
      for (const row &r : read_rows(files[0]))
        if (r.set == "calibration")
          g.calibration.push_back(r);
      g.fresh = read_rows(files[1]);
      if (files.size() > 2)
        g.floor = read_floor(files[2]);
      std::vector<timed_gemm> samples;
      for (const row &r : g.calibration)
        samples.push_back(r.sample);
      g.own = fit_model(samples, g.spec, architecture);
      data.push_back(std::move(g));
    }
    for (std::size_t i = 0; i < data.size(); ++i)
      score(gpus[i].first, data[i], architecture);
    for (const auto &[name, files] : o.cold_gpus)
      score_cold(name, datasheet(name), cold_rows(files[1]), cold_architecture);
    for (std::size_t i = 1; i < data.size(); ++i)
      score_ratio(gpus[0].first, data[0], gpus[i].first, data[i], architecture, architecture);
    if (!o.dump_file.empty()) {
      std::ofstream out(o.dump_file);
      out << "gpu,set,category,m,n,k,batch_count,precision,launches,device_us,eager_us,"
             "architecture_us,calibrated_us,family,tile_m,tile_n,split_k,predicted_launches\n";
      for (std::size_t i = 0; i < data.size(); ++i)
        dump(gpus[i].first, data[i], architecture, out);
    }
  } catch (const std::exception &e) {
    std::fprintf(stderr, "model_accuracy: %s\n", e.what());
    return 1;
  }
  return 0;
}
