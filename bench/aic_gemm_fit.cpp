// SPDX-License-Identifier: Apache-2.0
// Fits the GEMM model's parameters per architecture on ../shared/data/aic's GEMM tables (NVIDIA
// AIConfigurator's timings of TensorRT-LLM's `Linear`: a third party's, inside one framework
// build; weights L2-cold, fp8 rows with the activations' dynamic quantization included; its
// README says how they were timed) and scores them, per GPU and precision, on the shapes it held
// out, with the speed ratio of every GPU pair. Needs no GPU.
//
//   aic_gemm_fit DIR [--hopper-fp8 CALIBRATION.csv,FRESH.csv] [--fit-rows N] [--only ARCH]
//                [--dump FILE] [--score-h200-fp8 SWEEP.csv]
//
// DIR holds the tables as plain CSV (bench/aic_unpack.sh). Shapes (m, n, k) split into halves by
// bench::in_fit_half, the same for every GPU and precision. Per architecture, on one GPU's `fit`
// half (at most N rows per precision, by hash; default 400), from Hopper's values (what the
// architecture files inherit where they measured nothing):
//   bf16: every GEMM parameter the samples decide (fit_model; fp16 takes bf16's rate);
//   fp8:  efficiency.fp8 and wave_overhead_s.fp8 with the quantize op's floor and efficiency,
//         the layer's time being its GEMM's plus its quantize op's (fit_linear).
// Hopper is not refitted on this data: its GEMM parameters come from our own cuBLAS timings
// (specs/arch/hopper.yaml). --hopper-fp8 gives our own cuBLASLt fp8 sweep (bench/gemm_sweep ...
// fp8): its calibration rows fit Hopper's fp8 GEMM parameters and its fresh rows score them;
// the quantize op, TensorRT-LLM's kernel, is then fitted on the H100's `fit` half with those
// held. Prints each architecture's fitted `model:` lines, then the tables of
// docs/benchmarks.md: per GPU and precision the median, p90 and median signed error of the
// `score` half, with the catalog's parameters (what the tool uses now) and the ones fitted here.
// --dump writes every scored row, measured and predicted with the fitted parameters, as CSV.
// --score-h200-fp8 scores Hopper's fp8 parameters on our own sweep of an H200 (never fitted on).
#include "roofline/common/error.hpp"
#include "roofline/model/gpu_spec.hpp"
#include "roofline/model/model_fit.hpp"
#include "roofline/model/spec_catalog.hpp"

#include "aic_data.hpp"
#include "csv_fields.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace {

using namespace roofline;

/// The architectures fitted here and the GPU each is fitted on.
struct fitted_architecture {
  std::string_view architecture, gpu_files;
};
constexpr fitted_architecture fitted_architectures[] = {{"ampere", "a100_sxm"},
                                                        {"ada", "l40s"},
                                                        {"blackwell", "b200_sxm"},
                                                        {"blackwell-sm120", "rtx_pro_6000_server"}};

/// One row of a GEMM table.
struct row {
  timed_linear timed;
  bool fit = false;
  std::uint64_t order = 0; ///< a hash: which fit rows a capped fit takes
};

/// The bytes lowering gives an fp8 linear's quantize op: M·K read twice in bf16, written in fp8.
std::int64_t quantize_bytes(const gemm_shape &s) {
  return s.m * s.k * quantize_bytes_per_element(activation_bytes(precision::fp8));
}

std::uint64_t hash_of(const std::string &key) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (const char c : key)
    h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  return h;
}

/// The rows of one GPU's table the model has a kernel for, by precision: bf16 and fp8
/// (per-tensor, with its quantize op); and apart, the A100's weight-only int8 and int4 ones
/// (bf16 activations, one scale per output column: TensorRT-LLM's WeightOnlyQuantMatmul plugin)
/// by label. fp8_block, nvfp4 and SmoothQuant rows are left out.
struct gemm_table {
  std::map<precision, std::vector<row>> rows;
  std::map<std::string, std::vector<row>> weight_only; ///< "bf16+int8w", "bf16+int4w"
};

gemm_table read_gemms(const std::string &file) {
  bench::csv_file csv(file, "an AIConfigurator GEMM table (bench/aic_unpack.sh)");
  const std::size_t dtype = csv.column("gemm_dtype"), m = csv.column("m"), n = csv.column("n"),
                    k = csv.column("k"), latency = csv.column("latency_us");
  gemm_table table;
  for (std::vector<std::string> f; csv.next(f);) {
    const bool fp8 = f[dtype] == "fp8";
    const int weight_bits = f[dtype] == "int8_wo" ? 8 : f[dtype] == "int4_wo" ? 4 : 0;
    if (!fp8 && !weight_bits && f[dtype] != "bfloat16")
      continue;
    row r;
    gemm_shape &s = r.timed.gemm.shape;
    s = {std::stoll(f[m]), std::stoll(f[n]), std::stoll(f[k]), 1};
    if (weight_bits)
      s.weights = quantized_weights{weight_bits, 0};
    r.timed.gemm.prec = fp8 ? precision::fp8 : precision::bf16;
    r.timed.gemm.time_s = std::stod(f[latency]) * 1e-6;
    r.timed.quantize_bytes = fp8 ? quantize_bytes(s) : 0;
    const std::string key = fmt::format("gemm:{},{},{}", s.m, s.n, s.k);
    r.fit = bench::in_fit_half(key);
    r.order = hash_of(key);
    if (weight_bits)
      table.weight_only[fmt::format("bf16+int{}w", weight_bits)].push_back(r);
    else
      table.rows[r.timed.gemm.prec].push_back(r);
  }
  return table;
}

/// Where a row's operands are when its call starts. The collector calls max(1, min(5,
/// ⌈L2 / weight bytes⌉)) copies of the layer in turn (collect_gemm.py l.179) on one activation
/// tensor: where the copies' weights and the activations fit in L2, each call finds them there
/// (warm: the model's L2 residency decides the rest); else its weights come from DRAM (cold).
/// (The whole L2 rather than the model's l2_resident_fraction of it: chosen on the L40S, whose
/// 96 MB L2 holds most of its rows' copies; 8.3% and 33% for bf16 against 8.8% and 42%.)
cache_state operands_of(const gemm_shape &s, precision p, const gpu_spec &gpu) {
  const double weights = static_cast<double>(s.n) * static_cast<double>(s.k) * element_bytes(p);
  const double copies = std::max(1.0, std::min(5.0, std::ceil(gpu.l2_bytes / weights)));
  const double activations =
      static_cast<double>(s.m) * static_cast<double>(s.k + s.n) * activation_bytes(p);
  return copies * weights + activations <= gpu.l2_bytes ? cache_state::warm : cache_state::cold;
}

/// Our own sweep (bench/gemm_sweep): graph-replayed device time, operands warm, no quantize op.
std::vector<timed_linear> read_sweep(const std::string &file) {
  bench::csv_file csv(file, "a bench/gemm_sweep CSV");
  const std::size_t m = csv.column("m"), n = csv.column("n"), k = csv.column("k"),
                    batch = csv.column("batch_count"), prec = csv.column("precision"),
                    status = csv.column("status"), device = csv.column("device_time_us");
  std::vector<timed_linear> rows;
  for (std::vector<std::string> f; csv.next(f);) {
    const std::optional<double> time = bench::positive_time(f[device]);
    if (f[status] != "measured" || !time)
      continue;
    timed_linear x;
    x.gemm.shape = {std::stoll(f[m]), std::stoll(f[n]), std::stoll(f[k]), std::stoll(f[batch])};
    x.gemm.prec = *parse_precision(f[prec]);
    x.gemm.time_s = *time * 1e-6;
    rows.push_back(x);
  }
  return rows;
}

/// The `fit` half's rows, at most `cap` of them (those first by hash: a sample of every size).
std::vector<timed_linear> fit_rows(std::vector<row> rows, std::size_t cap) {
  rows.erase(std::remove_if(rows.begin(), rows.end(), [](const row &r) { return !r.fit; }),
             rows.end());
  std::sort(rows.begin(), rows.end(), [](const row &a, const row &b) { return a.order < b.order; });
  std::vector<timed_linear> samples;
  for (std::size_t i = 0; i < rows.size() && i < cap; ++i)
    samples.push_back(rows[i].timed);
  return samples;
}

std::vector<timed_linear> score_rows(const std::vector<row> &rows) {
  std::vector<timed_linear> samples;
  for (const row &r : rows)
    if (!r.fit)
      samples.push_back(r.timed);
  return samples;
}

std::vector<timed_gemm> gemms_of(const std::vector<timed_linear> &samples) {
  std::vector<timed_gemm> gemms;
  for (const timed_linear &x : samples)
    gemms.push_back(x.gemm);
  return gemms;
}

/// "median | p90 | bias" of |predicted − measured| / measured, bias the median signed error.
std::string errors(const std::vector<timed_linear> &samples, const gpu_spec &gpu,
                   const model_parameters &p) {
  if (samples.empty())
    return "— | — | —";
  std::vector<double> absolute, signed_errors;
  for (const timed_linear &x : samples) {
    const double e = linear_time_s(x, gpu, p) / x.gemm.time_s - 1;
    absolute.push_back(std::fabs(e));
    signed_errors.push_back(e);
  }
  std::sort(absolute.begin(), absolute.end());
  std::sort(signed_errors.begin(), signed_errors.end());
  const std::size_t n = absolute.size();
  return fmt::format("{:.1f}% | {:.1f}% | {:+.1f}%", 100 * absolute[n / 2],
                     100 * absolute[n * 9 / 10], 100 * signed_errors[n / 2]);
}

/// The GEMM parameters of `p` (efficiency.p, wave_overhead_s.p).
std::vector<parameter> precision_parameters(precision p) {
  return {parameter_at(parameter::efficiency, p), parameter_at(parameter::wave_overhead_s, p)};
}

const std::vector<parameter> quantize_parameters{
    memory_parameter_at(parameter::memory_floor_s, memory_op_kind::quantize),
    memory_parameter_at(parameter::memory_efficiency, memory_op_kind::quantize)};

struct gpu_data {
  std::string files;
  std::optional<gpu_spec> spec; ///< the model's basis; nullopt: no spec in the catalog
  std::map<precision, std::vector<row>> rows;
  std::map<std::string, std::vector<row>> weight_only;
  model_parameters catalog, fitted;
};

/// The per-shape speed ratio of every GPU pair on the `score` half (time of the column's GPU over
/// the row's), predicted against measured: median |error| per pair.
void print_ratios(const std::vector<gpu_data> &gpus, precision p) {
  fmt::print("\n#### {}: predicted vs measured speed ratio per shape, median |error| (fitted "
             "parameters; `score` half)\n\n| |",
             to_string(p));
  std::vector<const gpu_data *> with;
  for (const gpu_data &g : gpus)
    if (g.spec && g.rows.count(p))
      with.push_back(&g);
  for (const gpu_data *g : with)
    fmt::print(" {} |", g->files);
  fmt::print("\n|---|");
  for (std::size_t i = 0; i < with.size(); ++i)
    fmt::print("---:|");
  fmt::print("\n");
  std::vector<double> all;
  for (const gpu_data *a : with) {
    std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, const timed_linear *> there;
    for (const row &r : a->rows.at(p))
      if (!r.fit)
        there[{r.timed.gemm.shape.m, r.timed.gemm.shape.n, r.timed.gemm.shape.k}] = &r.timed;
    fmt::print("| {} |", a->files);
    for (const gpu_data *b : with) {
      if (a == b) {
        fmt::print(" — |");
        continue;
      }
      std::vector<double> e;
      for (const row &r : b->rows.at(p)) {
        const auto found =
            r.fit ? there.end()
                  : there.find({r.timed.gemm.shape.m, r.timed.gemm.shape.n, r.timed.gemm.shape.k});
        if (found == there.end())
          continue;
        const double measured = r.timed.gemm.time_s / found->second->gemm.time_s;
        const double predicted = linear_time_s(r.timed, *b->spec, b->fitted) /
                                 linear_time_s(*found->second, *a->spec, a->fitted);
        e.push_back(std::fabs(predicted / measured - 1));
      }
      if (e.empty()) {
        fmt::print(" — |");
        continue;
      }
      std::sort(e.begin(), e.end());
      fmt::print(" {:.1f}% |", 100 * e[e.size() / 2]);
      if (a < b)
        all.push_back(e[e.size() / 2]);
    }
    fmt::print("\n");
  }
  if (!all.empty()) {
    std::sort(all.begin(), all.end());
    fmt::print("\nmedian over the {} pairs: {:.1f}%; worst pair {:.1f}%\n", all.size(),
               100 * all[all.size() / 2], 100 * all.back());
  }
}

/// The command line: `aic_gemm_fit DIR [--hopper-fp8 CALIBRATION.csv,FRESH.csv] ...`.
struct options {
  std::string dir, hopper_fp8, only, dump, h200_fp8;
  std::size_t cap = 400;
};

options parse_options(int argc, char **argv) {
  if (argc < 2)
    throw error("usage: aic_gemm_fit DIR [--hopper-fp8 CALIBRATION.csv,FRESH.csv] "
                "[--fit-rows N] [--only ARCH]");
  options o;
  o.dir = argv[1];
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--hopper-fp8")
      o.hopper_fp8 = value;
    else if (flag == "--fit-rows")
      o.cap = static_cast<std::size_t>(std::stoul(value));
    else if (flag == "--only")
      o.only = value;
    else if (flag == "--dump")
      o.dump = value;
    else if (flag == "--score-h200-fp8")
      o.h200_fp8 = value;
    else
      throw error("unknown option " + flag);
  }
  return o;
}

/// Every AIConfigurator GPU's GEMM table, with its spec where the catalog has one.
std::vector<gpu_data> load_gpus(const std::string &dir) {
  const spec_catalog &catalog = spec_catalog::builtin();
  std::vector<gpu_data> gpus;
  for (const bench::aic_gpu &g : bench::aic_gpus()) {
    gpu_data d;
    d.files = std::string(g.files);
    gemm_table table = read_gemms(dir + "/gemm_" + d.files + "_trtllm.csv");
    d.rows = std::move(table.rows);
    d.weight_only = std::move(table.weight_only);
    try {
      const gpu_spec spec = catalog.resolve(std::string(g.spec));
      d.catalog = spec.parameters;
      d.fitted = spec.parameters;
      d.spec = model_basis(spec);
      for (auto &[p, rows] : d.rows)
        for (row &r : rows)
          r.timed.gemm.operands = operands_of(r.timed.gemm.shape, p, *d.spec);
      for (auto &[label, rows] : d.weight_only)
        for (row &r : rows) // the plugin's engine was timed on one inference: weights cold
          r.timed.gemm.operands = cache_state::cold;
    } catch (const std::exception &e) {
      std::fprintf(stderr, "%s: no spec `%s` in the catalog, not scored (%s)\n", d.files.c_str(),
                   std::string(g.spec).c_str(), e.what());
    }
    gpus.push_back(std::move(d));
  }
  return gpus;
}

gpu_data &gpu_named(std::vector<gpu_data> &gpus, std::string_view files) {
  for (gpu_data &g : gpus)
    if (g.files == files)
      return g;
  throw error("no GPU " + std::string(files));
}

/// Each fitted architecture's parameters, printed as a spec's `model:` section.
std::map<std::string, model_parameters> fit_architectures(std::vector<gpu_data> &gpus,
                                                          const options &o) {
  const spec_catalog &catalog = spec_catalog::builtin();
  // Each architecture fitted on its GPU, from what it inherits (specs/arch/*.yaml `inherits:
  // hopper`), so that its values go with the ones it does not fit.
  const architecture_parameters *hopper = catalog.architecture("hopper");
  if (!hopper)
    throw error("no hopper architecture file in the catalog");
  const model_parameters inherited = apply(model_parameters{}, hopper->parameters);
  std::map<std::string, model_parameters> by_architecture;
  for (const fitted_architecture &a : fitted_architectures) {
    const std::string architecture(a.architecture);
    if (!o.only.empty() && o.only != architecture)
      continue;
    gpu_data &g = gpu_named(gpus, a.gpu_files);
    if (!g.spec)
      continue;
    model_parameters p = inherited;
    const std::vector<timed_linear> bf16 = fit_rows(g.rows[precision::bf16], o.cap);
    p = fit_model(gemms_of(bf16), *g.spec, p);
    // The tables hold no fp16 GEMM: fp16 runs at bf16's tensor-core rate on these
    // architectures, so it takes bf16's values rather than the generic defaults.
    for (const parameter group : {parameter::efficiency, parameter::wave_overhead_s})
      p.set(parameter_at(group, precision::fp16), p[parameter_at(group, precision::bf16)]);
    std::size_t fp8_rows = 0;
    if (g.rows.count(precision::fp8) && g.spec->peak_flop_per_s(precision::fp8) > 0) {
      const std::vector<timed_linear> fp8 = fit_rows(g.rows[precision::fp8], o.cap);
      std::vector<parameter> free = precision_parameters(precision::fp8);
      free.insert(free.end(), quantize_parameters.begin(), quantize_parameters.end());
      p = fit_linear(fp8, *g.spec, p, free);
      fp8_rows = fp8.size();
    }
    by_architecture[architecture] = p;
    const parameter_overrides fitted = changed(
        inherited, p,
        fmt::format("fitted by bench/aic_gemm_fit on NVIDIA AIConfigurator's TensorRT-LLM GEMM "
                    "timings of an {} (third-party: ai-dynamo/aiconfigurator 095f58a, "
                    "gemm_{}_trtllm): {} bf16 and {} fp8 rows of the `fit` half",
                    g.spec->display_name, g.files, bf16.size(), fp8_rows));
    fmt::print("## {} (fitted on {}: {} bf16, {} fp8 rows)\n\n```yaml\n{}```\n\n", architecture,
               g.files, bf16.size(), fp8_rows, to_yaml(fitted));
  }
  return by_architecture;
}

/// Hopper's fp8: the GEMM on our own sweep, then TensorRT-LLM's quantize op on the H100's fit
/// half (printed with its scores); nullopt without --hopper-fp8.
std::optional<model_parameters> fit_hopper_fp8(std::vector<gpu_data> &gpus, const options &o) {
  if (o.hopper_fp8.empty() || !(o.only.empty() || o.only == "hopper"))
    return std::nullopt;
  gpu_data &h100 = gpu_named(gpus, "h100_sxm");
  const std::size_t comma = o.hopper_fp8.find(',');
  if (comma == std::string::npos)
    throw error("--hopper-fp8 CALIBRATION.csv,FRESH.csv");
  const std::vector<timed_linear> calibration = read_sweep(o.hopper_fp8.substr(0, comma));
  const std::vector<timed_linear> fresh = read_sweep(o.hopper_fp8.substr(comma + 1));
  model_parameters p = h100.catalog;
  for (const parameter id : precision_parameters(precision::fp8)) // not from an earlier fit
    p.set(id, info(id).default_value);
  for (const parameter id : quantize_parameters)
    p.set(id, info(id).default_value);
  const model_parameters before = p;
  p = fit_linear(calibration, *h100.spec, p, precision_parameters(precision::fp8));
  const std::vector<timed_linear> quantized = fit_rows(h100.rows[precision::fp8], o.cap);
  p = fit_linear(quantized, *h100.spec, p, quantize_parameters);
  fmt::print("## hopper fp8 (GEMM on our {} cuBLASLt rows, quantize op on {} H100 fit rows)"
             "\n\n```yaml\n{}```\n\n| our fp8 sweep | n | median | p90 | bias |\n|---|---:|"
             "---:|---:|---:|\n| fitted on (calibration) | {} | {} |\n| held out (fresh) | {} "
             "| {} |\n| fresh, table defaults | {} | {} |\n\n",
             calibration.size(), quantized.size(), to_yaml(changed(before, p, "hopper fp8")),
             calibration.size(), errors(calibration, *h100.spec, p), fresh.size(),
             errors(fresh, *h100.spec, p), fresh.size(), errors(fresh, *h100.spec, before));
  return p;
}

/// Every GPU's and precision's scores on the `score` half; the weight-only rows; the ratios.
void print_scores(const std::vector<gpu_data> &gpus) {
  fmt::print("### Per GPU, `score` half (shapes no fit saw)\n\n| GPU | architecture | "
             "precision | n | catalog: median | p90 | bias | fitted: median | p90 | bias |\n"
             "|---|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const gpu_data &g : gpus) {
    if (!g.spec)
      continue;
    for (const auto &[p, rows] : g.rows) {
      const std::vector<timed_linear> scored = score_rows(rows);
      fmt::print("| {} | {} | {} | {} | {} | {} |\n", g.files, g.spec->architecture, to_string(p),
                 scored.size(), errors(scored, *g.spec, g.catalog),
                 errors(scored, *g.spec, g.fitted));
    }
  }
  fmt::print("\n### Weight-only quantized weights, `score` half (no parameter of their own: "
             "cuBLAS's bf16 kernel reading the quantized bytes; TensorRT's per-layer profiler on "
             "one inference, not a graph replay)\n\n| GPU | weights | n | median | p90 | bias "
             "|\n|---|---|---:|---:|---:|---:|\n");
  for (const gpu_data &g : gpus)
    if (g.spec)
      for (const auto &[label, rows] : g.weight_only) {
        const std::vector<timed_linear> scored = score_rows(rows);
        fmt::print("| {} | {} | {} | {} |\n", g.files, label, scored.size(),
                   errors(scored, *g.spec, g.fitted));
      }
  for (const precision p : {precision::bf16, precision::fp8})
    print_ratios(gpus, p);
}

/// The `score` half's rows, measured and predicted, as CSV.
void dump_scores(const std::vector<gpu_data> &gpus, const std::string &dump) {
  std::FILE *out = std::fopen(dump.c_str(), "w");
  if (!out)
    throw error("cannot write " + dump);
  std::fprintf(out, "gpu,precision,m,n,k,measured_us,predicted_us\n");
  for (const gpu_data &g : gpus)
    if (g.spec)
      for (const auto &[p, rows] : g.rows)
        for (const timed_linear &x : score_rows(rows))
          std::fprintf(out, "%s,%s,%lld,%lld,%lld,%.4g,%.4g\n", g.files.c_str(),
                       std::string(to_string(p)).c_str(), static_cast<long long>(x.gemm.shape.m),
                       static_cast<long long>(x.gemm.shape.n),
                       static_cast<long long>(x.gemm.shape.k), x.gemm.time_s * 1e6,
                       linear_time_s(x, *g.spec, g.fitted) * 1e6);
  std::fclose(out);
}

} // namespace

int main(int argc, char **argv) {
  try {
    const options o = parse_options(argc, argv);
    std::vector<gpu_data> gpus = load_gpus(o.dir);
    std::map<std::string, model_parameters> by_architecture = fit_architectures(gpus, o);
    if (auto hopper = fit_hopper_fp8(gpus, o))
      by_architecture["hopper"] = *hopper;
    if (!o.h200_fp8.empty()) {
      const gpu_data &h200 = gpu_named(gpus, "h200_sxm");
      const auto found = by_architecture.find("hopper");
      const model_parameters &p = found != by_architecture.end() ? found->second : h200.catalog;
      const std::vector<timed_linear> rows = read_sweep(o.h200_fp8);
      fmt::print(
          "## hopper fp8 on our own H200 sweep (never fitted on)\n\n| {} | n | median | "
          "p90 | bias |\n|---|---:|---:|---:|---:|\n| Hopper's fp8 parameters | {} | {} |\n\n",
          o.h200_fp8, rows.size(), errors(rows, *h200.spec, p));
    }
    for (gpu_data &g : gpus)
      if (g.spec) {
        const auto found = by_architecture.find(g.spec->architecture);
        if (found != by_architecture.end())
          g.fitted = found->second;
      }

    print_scores(gpus);
    if (!o.dump.empty())
      dump_scores(gpus, o.dump);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "aic_gemm_fit: %s\n", e.what());
    return 1;
  }
  return 0;
}
