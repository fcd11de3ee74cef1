// SPDX-License-Identifier: Apache-2.0
// Fits NCCL's collectives: Hopper's all-reduce (specs/arch/hopper.yaml) and every architecture's
// reduce-scatter, all-gather and all-to-all against its all-reduce (the parameter table's
// defaults). No GPU needed.
//
//   bash bench/aic_unpack.sh                 # the plain CSVs, into build-rel/aic
//   nccl_fit [--data build-rel/aic] [--probe bench/data/h200x2-allreduce-probe.json]
//
// - The kinds' bandwidth ratios: on NVIDIA AIConfigurator's B300 nccl-tests rows (third-party,
//   ../shared/data/aic/README.md: NCCL 2.29.2, fp16, 2, 4 and 8 GPUs), each kind's bus bandwidth
//   over the all-reduce's at the same GPUs and size, 64 MiB and up (where bandwidth, not latency,
//   decides), the median of each GPU count's sizes.
// - Hopper's all-reduce over 2 GPUs: fit_all_reduce on our own NCCL probe of two H200s (--probe:
//   `allreduce_probe`, one process, 4 KiB to 1 GiB). AIConfigurator's Hopper rows are not fitted
//   on for it: below 64 MiB they time TensorRT-LLM's own kernels (3 µs where NCCL takes 12-18).
// - Over 4 and 8 GPUs, the 2-GPU fit scaled as the data say NCCL scales with the GPU count: its
//   latency as the B300 nccl-tests' all-reduce latency grows (256 KiB and below), its link
//   efficiency as AIConfigurator's H200 all-reduce bus bandwidth does (64 MiB and up, where
//   TensorRT-LLM hands the message to NCCL: the 2-GPU rows there match our probe within 2%).
//
// Prints the rule's inputs, then the values as YAML lines for specs/arch/hopper.yaml's `model:`
// and for the parameter table's defaults (src/core/model/model_parameters.cpp). The fits are
// scored elsewhere, on data none of them used: bench/parallel_score.py (our collectives of
// another day on two H200s) and docs/benchmarks.md's tensor-parallel steps.
#include "roofline/common/error.hpp"
#include "roofline/common/median.hpp"
#include "roofline/model/interconnect.hpp"
#include "roofline/model/model_fit.hpp"
#include "roofline/model/spec_catalog.hpp"

#include "aic_fit.hpp"
#include "csv_fields.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

namespace {

using namespace roofline;

constexpr std::int64_t bandwidth_from_bytes = std::int64_t{64} << 20;
constexpr std::int64_t latency_up_to_bytes = std::int64_t{256} << 10;

/// roofline::median of rows a fit cannot do without.
double median_of(const std::vector<double> &v) {
  if (v.empty())
    throw error("no rows to take a median of");
  return median(v);
}

/// Time in µs by (collective, GPUs, bytes): the median of a size's repeated rows.
using timings = std::map<std::tuple<std::string, int, std::int64_t>, double>;

/// A table's timings of `dtype` (its column `dtype_column`), each size's repeated rows' median; the
/// collective from the column `kind_column`, or `kind` where the table holds one kind.
timings read_timings(const std::string &file, const std::string &what,
                     const std::string &dtype_column, const std::string &dtype,
                     const std::string &kind_column, const std::string &kind = "") {
  bench::csv_file csv(file, what);
  const std::size_t c_dtype = csv.column(dtype_column), c_gpus = csv.column("num_gpus"),
                    c_elements = csv.column("message_size_elems"),
                    c_time = csv.column("latency_us");
  const bool kinds = !kind_column.empty();
  const std::size_t c_kind = kinds ? csv.column(kind_column) : 0;
  std::map<std::tuple<std::string, int, std::int64_t>, std::vector<double>> rows;
  for (std::vector<std::string> f; csv.next(f);)
    if (const auto t = bench::positive_time(f[c_time]); t && f[c_dtype] == dtype)
      rows[{kinds ? f[c_kind] : kind, std::stoi(f[c_gpus]), 2 * std::stoll(f[c_elements])}]
          .push_back(*t);
  timings result;
  for (const auto &[key, times] : rows)
    result[key] = median_of(times);
  return result;
}

/// nccl-tests' bus bandwidth factor: an all-reduce's 2(n − 1)/n, the others' (n − 1)/n.
double bus_factor(const std::string &kind, int gpus) {
  return (kind == "all_reduce" ? 2.0 : 1.0) * (gpus - 1) / gpus;
}

/// `kind`'s bus bandwidth over the all-reduce's over `gpus`, each size of 64 MiB and up.
std::vector<double> bandwidth_ratios(const timings &t, const std::string &kind, int gpus) {
  std::vector<double> ratios;
  for (const auto &[key, time_us] : t) {
    const auto &[k, n, bytes] = key;
    const auto all_reduce = t.find({"all_reduce", gpus, bytes});
    if (k != kind || n != gpus || bytes < bandwidth_from_bytes || all_reduce == t.end())
      continue;
    ratios.push_back(bus_factor(kind, gpus) / time_us /
                     (bus_factor("all_reduce", gpus) / all_reduce->second));
  }
  return ratios;
}

/// How the all-reduce's time at `gpus` compares with 2 GPUs' at the same size, over the sizes
/// `keep` takes; `bus`: as a bus bandwidth (2 GPUs' over n's time) rather than a time.
template <class Keep> double growth(const timings &t, int gpus, bool bus, Keep keep) {
  std::vector<double> ratios;
  for (const auto &[key, time_us] : t) {
    const auto &[kind, n, bytes] = key;
    const auto two = t.find({kind, 2, bytes});
    if (kind != "all_reduce" || n != gpus || !keep(bytes) || two == t.end())
      continue;
    ratios.push_back(bus ? bus_factor(kind, gpus) / time_us / (bus_factor(kind, 2) / two->second)
                         : time_us / two->second);
  }
  return median_of(ratios);
}

std::string read_text(const std::string &path) {
  std::ifstream in(path);
  if (!in)
    throw error("cannot open " + path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

} // namespace

int main(int argc, char **argv) {
  try {
    std::string data = "build-rel/aic", probe = "bench/data/h200x2-allreduce-probe.json";
    for (int i = 1; i + 1 < argc; i += 2) {
      const std::string flag = argv[i];
      if (flag == "--data")
        data = argv[i + 1];
      else if (flag == "--probe")
        probe = argv[i + 1];
      else
        throw error("usage: nccl_fit [--data DIR] [--probe FILE]");
    }
    if (argc % 2 == 0)
      throw error("usage: nccl_fit [--data DIR] [--probe FILE]");
    const timings b300 =
        read_timings(data + "/nccl_b300_sxm_trtllm.csv",
                     "AIConfigurator's B300 nccl-tests table (bench/aic_unpack.sh)", "nccl_dtype",
                     "half", "collective");
    const timings h200 = read_timings(data + "/custom_allreduce_h200_sxm_trtllm.csv",
                                      "an AIConfigurator all-reduce table (bench/aic_unpack.sh)",
                                      "allreduce_dtype", "bfloat16", "", "all_reduce");

    std::printf("## Bandwidth against the all-reduce's (B300 nccl-tests, 64 MiB and up)\n\n"
                "| collective | GPUs | sizes | median | least | most |\n"
                "|---|---:|---:|---:|---:|---:|\n");
    std::map<std::string, std::map<int, double>> ratios; // by kind, by GPU count
    for (const char *kind : {"reduce_scatter", "all_gather", "alltoall"})
      for (const int gpus : all_reduce_gpu_counts) {
        const std::vector<double> r = bandwidth_ratios(b300, kind, gpus);
        ratios[kind == std::string("alltoall") ? "all_to_all" : kind][gpus] = median_of(r);
        std::printf("| %s | %d | %zu | %.3f | %.3f | %.3f |\n", kind, gpus, r.size(), median_of(r),
                    *std::min_element(r.begin(), r.end()), *std::max_element(r.begin(), r.end()));
      }

    const gpu_spec &spec = *spec_catalog::builtin().find("h200-sxm");
    const nlohmann::json table = nlohmann::json::parse(read_text(probe));
    std::vector<timed_all_reduce> samples;
    for (const nlohmann::json &s : table.at("samples"))
      samples.push_back(
          {table.at("gpus").get<int>(), s.at("bytes").get<std::int64_t>(), s.at("time_s")});
    std::printf(
        "\n## Our probe against AIConfigurator's H200 rows, 2 GPUs, 64 MiB and up\n\n"
        "| bytes | probe | AIConfigurator | AIConfigurator / probe |\n|---:|---:|---:|---:|\n");
    for (const timed_all_reduce &s : samples)
      if (const auto aic = h200.find({"all_reduce", 2, s.bytes});
          s.bytes >= bandwidth_from_bytes && aic != h200.end())
        std::printf("| %lld | %.1f µs | %.1f µs | %.3f |\n", static_cast<long long>(s.bytes),
                    s.time_s * 1e6, aic->second, aic->second / (s.time_s * 1e6));
    const model_parameters start =
        bench::table_defaults(spec.parameters, parameter_fit::all_reduce);
    model_parameters fitted = fit_all_reduce(samples, spec, start);
    std::printf("\n## Hopper's all-reduce\n\n2 GPUs: fitted on %zu samples of %s (%s)\n\n"
                "| GPUs | latency × (B300 nccl-tests, ≤ 256 KiB) | bus bandwidth × (AIConfigurator "
                "H200, ≥ 64 MiB) |\n|---:|---:|---:|\n",
                samples.size(), probe.c_str(), table.at("origin").get<std::string>().c_str());
    for (const int gpus : {4, 8}) {
      const double latency =
          growth(b300, gpus, false, [](std::int64_t b) { return b <= latency_up_to_bytes; });
      const double bus =
          growth(h200, gpus, true, [](std::int64_t b) { return b >= bandwidth_from_bytes; });
      std::printf("| %d | %.3f | %.3f |\n", gpus, latency, bus);
      for (const auto &[group, scale] : {std::pair{parameter::all_reduce_latency_s, latency},
                                         std::pair{parameter::all_reduce_link_efficiency, bus}})
        fitted.set(all_reduce_parameter_at(group, gpus),
                   fitted[all_reduce_parameter_at(group, 2)] * scale);
    }
    std::printf("\n# specs/arch/hopper.yaml, model:\n%s",
                to_yaml(changed(start, fitted,
                                fmt::format("all-reduce fitted by bench/nccl_fit on {}", probe)))
                    .c_str());
    std::printf("\n# the parameter table's defaults (collectives), by GPU count\n");
    for (const auto &[kind, by_count] : ratios) {
      std::printf("%s_bandwidth_ratio: {", kind.c_str());
      for (const auto &[gpus, ratio] : by_count)
        std::printf("%s%d: %.3f", gpus == all_reduce_gpu_counts.front() ? "" : ", ", gpus, ratio);
      std::printf("}\n");
    }
    return 0;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "nccl_fit: %s\n", e.what());
    return 2;
  }
}
