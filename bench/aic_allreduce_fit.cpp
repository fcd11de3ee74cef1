// SPDX-License-Identifier: Apache-2.0
// Fits the all-reduce model (modelled_all_reduce_s: a latency and a link efficiency per GPU count,
// the one-shot threshold) per architecture to NVIDIA AIConfigurator's TensorRT-LLM all-reduce
// timings (../shared/data/aic: third-party, see its README) and scores it on every GPU of the
// data whose spec gives its links. No GPU needed.
//
//   bash bench/aic_unpack.sh                         # the plain CSVs, into build-rel/aic
//   aic_allreduce_fit [--data build-rel/aic] [--arch ARCH] [--spec GPU=FILE ...] [--dump FILE]
//
// Each row of custom_allreduce_<gpu>_trtllm.csv (TensorRT-LLM's AllReduce, strategy AUTO, inside
// one host, graph-replayed) is one all-reduce of message_size_elems bf16 elements (2 bytes each)
// a GPU over num_gpus GPUs. The rows split by bench::in_fit_half on (num_gpus, message size).
// Each architecture is fitted on the `fit` half of one GPU's rows from the table's defaults
// (today's typical 15 µs and 80%) and every GPU with a spec is scored on its `score` half, by
// GPU count. Prints a markdown table (before: the table's defaults; after: the fit), then each
// architecture's fitted values as a `model:` section for specs/arch/. --spec GPU=FILE: the spec
// of a GPU the catalog does not hold yet. --dump: every scored row, measured and predicted.
// Hopper is fitted and scored but its values are not meant for specs/arch/hopper.yaml (see
// not_written below).
#include "roofline/common/error.hpp"
#include "roofline/model/interconnect.hpp"
#include "roofline/model/model_fit.hpp"

#include "aic_data.hpp"
#include "aic_fit.hpp"
#include "csv_fields.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace {

using namespace roofline;

/// The GPU each architecture's all-reduce is fitted on.
constexpr bench::architecture_fit architecture_fits[] = {
    {"ampere", "a100_sxm"},
    {"ada", "l40s"},
    {"hopper", "h100_sxm"},
    {"blackwell", "b200_sxm"},
    {"blackwell-sm120", "rtx_pro_6000_server"}};

/// Fitted and scored, but not written to specs/arch/hopper.yaml: TensorRT-LLM's custom kernels
/// take 3 µs on the H100 where NCCL's all-reduces in our own PyTorch steps on two H200s took 12-18
/// µs (docs/benchmarks.md), which the table's typical figures match.
constexpr std::string_view not_written = "hopper";

struct sample {
  bool fit = false; ///< in bench::in_fit_half
  timed_all_reduce timed;
};

std::vector<sample> read_gpu(const std::string &dir, std::string_view gpu) {
  bench::csv_file csv(fmt::format("{}/custom_allreduce_{}_trtllm.csv", dir, gpu),
                      "an AIConfigurator all-reduce table (bench/aic_unpack.sh)");
  const std::size_t c_dtype = csv.column("allreduce_dtype"), c_gpus = csv.column("num_gpus"),
                    c_elements = csv.column("message_size_elems"),
                    c_time = csv.column("latency_us");
  std::vector<sample> samples;
  for (std::vector<std::string> f; csv.next(f);) {
    const std::optional<double> time_us = bench::positive_time(f[c_time]);
    if (f[c_dtype] != "bfloat16" || !time_us)
      continue;
    sample x;
    x.timed.gpus = std::stoi(f[c_gpus]);
    x.timed.bytes = 2 * std::stoll(f[c_elements]);
    x.timed.time_s = *time_us * 1e-6;
    x.fit = bench::in_fit_half(fmt::format("allreduce,{},{}", f[c_gpus], f[c_elements]));
    samples.push_back(x);
  }
  return samples;
}

/// One architecture's parameters before (the table's defaults) and after, and the fit's GPU.
struct architecture_result {
  model_parameters before, after;
  std::string fitted_on;
  std::size_t fit_rows = 0;
  std::string written; ///< whether specs/arch/ holds the fit (bench::written_note)
};

std::map<std::string, architecture_result> fit_architectures(const bench::aic_command &c,
                                                             std::vector<std::string> &notes) {
  std::map<std::string, architecture_result> results;
  for (const bench::architecture_fit &a : architecture_fits) {
    if (!c.architecture.empty() && c.architecture != a.architecture)
      continue;
    const bench::aic_gpu &gpu = bench::aic_gpu_named(a.fit_gpu);
    const std::optional<gpu_spec> spec = bench::aic_spec(c, gpu);
    if (!spec || !spec->interconnect) {
      notes.push_back(fmt::format("{}: not fitted: no spec `{}` with an interconnect in specs/ "
                                  "(--spec {}=FILE)",
                                  a.architecture, gpu.spec, gpu.files));
      continue;
    }
    architecture_result r;
    r.before = bench::table_defaults(spec->parameters, parameter_fit::all_reduce);
    std::vector<timed_all_reduce> fit_set;
    for (const sample &x : read_gpu(c.data, gpu.files))
      if (x.fit)
        fit_set.push_back(x.timed);
    r.after = fit_all_reduce(fit_set, *spec, r.before);
    r.fitted_on = std::string(gpu.files);
    r.fit_rows = fit_set.size();
    r.written =
        bench::written_note(a.architecture, r.after, spec->parameters, parameter_fit::all_reduce);
    results[std::string(a.architecture)] = r;
  }
  return results;
}

bench::error_summary errors(const std::vector<const sample *> &samples, const gpu_spec &spec,
                            const model_parameters &params) {
  std::vector<std::pair<double, double>> pairs;
  for (const sample *x : samples)
    pairs.emplace_back(
        modelled_all_reduce_s(x->timed.bytes, x->timed.gpus, *spec.interconnect, params),
        x->timed.time_s);
  return bench::summarize(pairs);
}

/// One GPU's rows of the table: its score half by GPU count, before and after.
void score_gpu(const bench::aic_command &c, const bench::aic_gpu &gpu, const gpu_spec &spec,
               const architecture_result &r, std::ofstream &dump) {
  const std::vector<sample> samples = read_gpu(c.data, gpu.files);
  std::map<int, std::vector<const sample *>> by_count;
  for (const sample &x : samples)
    if (!x.fit)
      by_count[x.timed.gpus].push_back(&x);
  for (const auto &[gpus, held_out] : by_count) {
    const std::string fitted_on =
        r.fitted_on + (spec.architecture == not_written ? " (not in hopper.yaml)" : "");
    std::printf("| %s | %s | %s | %s | %d | %zu | %s | %s |\n", std::string(gpu.files).c_str(),
                spec.architecture.c_str(), fitted_on.c_str(), spec.interconnect->kind.c_str(), gpus,
                held_out.size(), bench::cells(errors(held_out, spec, r.before)).c_str(),
                bench::cells(errors(held_out, spec, r.after)).c_str());
    if (dump)
      for (const sample *x : held_out)
        dump << fmt::format(
            "{},{},{},{:.3f},{:.3f}\n", gpu.files, gpus, x->timed.bytes, x->timed.time_s * 1e6,
            modelled_all_reduce_s(x->timed.bytes, gpus, *spec.interconnect, r.after) * 1e6);
  }
}

} // namespace

int main(int argc, char **argv) {
  try {
    const bench::aic_command c = bench::parse_aic_command(
        argc, argv,
        "aic_allreduce_fit [--data DIR] [--arch ARCH] [--spec GPU=FILE ...] "
        "[--dump FILE]");
    std::vector<std::string> notes;
    const std::map<std::string, architecture_result> results = fit_architectures(c, notes);
    std::ofstream dump;
    if (!c.dump.empty()) {
      dump.open(c.dump);
      dump << "gpu,gpus,bytes,measured_us,predicted_us\n";
    }
    std::printf("| GPU | architecture | fitted on | links | GPUs | n | before: median | p90 | bias "
                "| after: median | p90 | bias |\n"
                "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    bench::score_every_gpu(c, results, true, notes,
                           [&](const bench::aic_gpu &gpu, const gpu_spec &spec,
                               const architecture_result &r) { score_gpu(c, gpu, spec, r, dump); });
    std::printf("\n");
    for (const std::string &note : notes)
      std::printf("- %s\n", note.c_str());
    for (const auto &[architecture, r] : results)
      std::printf("\n# %s: fitted on the %zu rows of %s's fit half\n%s# %s\n", architecture.c_str(),
                  r.fit_rows, r.fitted_on.c_str(),
                  to_yaml(changed(r.before, r.after,
                                  fmt::format("all-reduce fitted by bench/aic_allreduce_fit on {} "
                                              "AIConfigurator TensorRT-LLM timings of {}",
                                              r.fit_rows, r.fitted_on)))
                      .c_str(),
                  architecture == not_written
                      ? "not meant for specs/arch/hopper.yaml (not_written in this file says why)"
                      : r.written.c_str());
    return 0;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "aic_allreduce_fit: %s\n", e.what());
    return 2;
  }
}
