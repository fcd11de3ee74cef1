// SPDX-License-Identifier: Apache-2.0
// Fits the fused attention model (estimate_attention) per architecture to NVIDIA AIConfigurator's
// TensorRT-LLM attention timings (../shared/data/aic: third-party, see its README) and scores it
// on every GPU of the data. No GPU needed.
//
//   bash bench/aic_unpack.sh                         # the plain CSVs, into build-rel/aic
//   aic_attention_fit [--data build-rel/aic] [--arch ARCH] [--fit-rows 1600]
//                     [--spec GPU=FILE ...] [--dump FILE]
//
// Each row of context_attention_<gpu>_trtllm.csv (prefill: causal, no cached prefix) and
// generation_attention_<gpu>_trtllm.csv (decode: one query against past + 1 keys) becomes one
// timed call, lowered from a one-layer network so that its bytes are the analysis's own. Kept:
// bf16 attention with a bf16 or an fp8 KV cache (the model reads an fp8 cache at its size); full
// and sliding-window attention. Skipped, counted by reason: fp8 attention math (FP8 context
// FMHA: the model's efficiencies are of bf16 tensor cores) and context calls shorter than the
// model's prefill kernel (isl 1: a decode to the model, TensorRT-LLM's context kernel there). The
// shapes split by bench::in_fit_half (the key leaves the GPU and the dtypes out). Each architecture
// is fitted on the `fit` half of one GPU's bf16 rows (bf16 KV cache), deterministically subsampled
// to
// --fit-rows per phase, from the table's defaults; Hopper is not refitted (its parameters come
// from our own H100 timings, specs/arch/hopper.yaml). Every GPU with a spec is then scored on its
// `score` half with its architecture's fit. The timings include what TensorRT-LLM's op runs
// around the kernel (RoPE, the paged KV cache's write): the fitted terms absorb it.
//
// Prints a markdown table of |predicted − measured| / measured per GPU and phase, before (the
// table's defaults for attention; hopper.yaml's for Hopper) and after, then each architecture's
// fitted values as a `model:` section for specs/arch/. --spec GPU=FILE: the spec of a GPU the
// catalog does not hold yet. --dump: every scored call, measured and predicted, as CSV.
#include "roofline/analysis/lowering.hpp"
#include "roofline/common/error.hpp"
#include "roofline/input/network.hpp"
#include "roofline/model/attention_model.hpp"
#include "roofline/model/model_fit.hpp"
#include "roofline/model/spec_catalog.hpp"

#include "aic_data.hpp"
#include "aic_fit.hpp"
#include "csv_fields.hpp"
#include "lowered_attention.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace {

using namespace roofline;

/// The GPU each architecture is fitted on; Hopper: not refitted here.
constexpr bench::architecture_fit architecture_fits[] = {
    {"ampere", "a100_sxm"},
    {"ada", "l40s"},
    {"hopper", ""},
    {"blackwell", "b200_sxm"},
    {"blackwell-sm120", "rtx_pro_6000_server"}};

struct sample {
  std::string phase; ///< "prefill", "decode", each with " fp8-kv" for an fp8 cache
  std::string kind;  ///< "d128", "d64 w128": head dim and window, for the breakdown
  bool fit = false;  ///< in bench::in_fit_half
  std::string key;   ///< the shape's split key
  timed_attention timed;
};

/// Rows left out of a GPU's samples, by reason.
using skipped_rows = std::map<std::string, int>;

/// One table's rows as samples; `decode`: the generation table.
void read_table(const std::string &file, bool decode, std::vector<sample> &out,
                skipped_rows &skipped) {
  bench::csv_file csv(file, "an AIConfigurator attention table (bench/aic_unpack.sh)");
  const std::size_t c_batch = csv.column("batch_size"), c_heads = csv.column("num_heads"),
                    c_kv_heads = csv.column("num_kv_heads"), c_d = csv.column("head_dim"),
                    c_window = csv.column("window_size_tokens"),
                    c_kv_dtype = csv.column("kv_cache_dtype"), c_time = csv.column("latency_us"),
                    c_len = csv.column(decode ? "past_kv_tokens" : "isl_tokens");
  // The generation table holds no attn_dtype: bf16 in every row.
  constexpr std::size_t none = static_cast<std::size_t>(-1);
  const std::size_t c_attn_dtype = decode ? none : csv.column("attn_dtype");
  for (std::vector<std::string> f; csv.next(f);) {
    if (c_attn_dtype != none && f[c_attn_dtype] != "bfloat16") {
      ++skipped["fp8 attention math (FP8 context FMHA): no fp8 attention efficiency"];
      continue;
    }
    const std::optional<double> time_us = bench::positive_time(f[c_time]);
    if (!time_us) {
      ++skipped["no positive latency"];
      continue;
    }
    attention_shape s;
    s.batch = std::stoll(f[c_batch]);
    s.heads = std::stoll(f[c_heads]);
    s.kv_heads = std::stoll(f[c_kv_heads]);
    s.head_dim = std::stoll(f[c_d]);
    s.window = std::stoll(f[c_window]);
    s.causal = true;
    const std::int64_t length = std::stoll(f[c_len]);
    if (!decode && length < attention_decode_below_q_len) {
      ++skipped["context calls of fewer than 16 tokens: the model runs them as a decode, "
                "TensorRT-LLM as its context kernel"];
      continue;
    }
    s.q_len = decode ? 1 : length;
    s.kv_len = decode ? length + 1 : length;
    const bool fp8_kv = f[c_kv_dtype] == "fp8";
    if (fp8_kv)
      s.kv_precision = precision::fp8;
    const op o = bench::lowered_attention(s, precision::bf16);
    sample x;
    x.phase = std::string(decode ? "decode" : "prefill") + (fp8_kv ? " fp8-kv" : "");
    x.kind = fmt::format("d{}{}", s.head_dim, s.window > 0 ? fmt::format(" w{}", s.window) : "");
    x.key = fmt::format("{},{},{},{},{},{},{}", decode ? "generation" : "context", s.batch, length,
                        s.heads, s.kv_heads, s.head_dim, s.window);
    x.fit = bench::in_fit_half(x.key);
    x.timed = {*o.attention, precision::bf16, o.bytes, *time_us * 1e-6};
    out.push_back(std::move(x));
  }
}

std::vector<sample> read_gpu(const std::string &dir, std::string_view gpu, skipped_rows &skipped) {
  std::vector<sample> samples;
  read_table(fmt::format("{}/context_attention_{}_trtllm.csv", dir, gpu), false, samples, skipped);
  read_table(fmt::format("{}/generation_attention_{}_trtllm.csv", dir, gpu), true, samples,
             skipped);
  return samples;
}

/// The fit half's bf16-cache rows, at most `per_phase` of each phase: those of the smallest
/// second hash, so that the choice is the same on every machine and spreads over the shapes.
std::vector<timed_attention> fit_set(const std::vector<sample> &samples, std::size_t per_phase) {
  std::vector<timed_attention> chosen;
  for (const std::string phase : {"prefill", "decode"}) {
    std::vector<std::pair<std::uint64_t, const sample *>> ranked;
    for (const sample &x : samples)
      if (x.fit && x.phase == phase)
        ranked.emplace_back(bench::subsample_hash(x.key), &x);
    std::sort(ranked.begin(), ranked.end(),
              [](const auto &a, const auto &b) { return a.first < b.first; });
    ranked.resize(std::min(ranked.size(), per_phase));
    for (const auto &[hash, x] : ranked)
      chosen.push_back(x->timed);
  }
  return chosen;
}

/// One architecture's parameters before (the table's defaults for attention) and after (fitted
/// here; Hopper's own), and what they were fitted on.
struct architecture_result {
  model_parameters before, after;
  std::string fitted_on; ///< "" where not refitted
  std::size_t fit_rows = 0, fit_half_rows = 0;
  double seconds = 0;
  std::string written; ///< whether specs/arch/ holds the fit (bench::written_note)
};

architecture_result fit_architecture(const bench::aic_command &c, const bench::architecture_fit &a,
                                     const gpu_spec &spec) {
  architecture_result r;
  r.before = bench::table_defaults(spec.parameters, parameter_fit::attention);
  r.after = spec.parameters;
  if (a.fit_gpu.empty())
    return r;
  skipped_rows ignored;
  const std::vector<sample> samples = read_gpu(c.data, a.fit_gpu, ignored);
  r.fit_half_rows =
      static_cast<std::size_t>(std::count_if(samples.begin(), samples.end(), [](const sample &x) {
        return x.fit && (x.phase == "prefill" || x.phase == "decode");
      }));
  const std::vector<timed_attention> chosen = fit_set(samples, c.fit_rows);
  const auto start = std::chrono::steady_clock::now();
  r.after = fit_attention(chosen, model_basis(spec), r.before);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.fitted_on = std::string(a.fit_gpu);
  r.fit_rows = chosen.size();
  r.written =
      bench::written_note(a.architecture, r.after, spec.parameters, parameter_fit::attention);
  return r;
}

/// Every architecture's fit (only --arch's when given), by architecture; an architecture whose
/// GPU has no spec is left out with a note.
std::map<std::string, architecture_result> fit_architectures(const bench::aic_command &c,
                                                             std::vector<std::string> &notes) {
  std::map<std::string, architecture_result> results;
  for (const bench::architecture_fit &a : architecture_fits) {
    if (!c.architecture.empty() && c.architecture != a.architecture)
      continue;
    const bench::aic_gpu &gpu = bench::aic_gpu_named(a.fit_gpu.empty() ? "h100_sxm" : a.fit_gpu);
    if (const std::optional<gpu_spec> spec = bench::aic_spec(c, gpu))
      results[std::string(a.architecture)] = fit_architecture(c, a, *spec);
    else
      notes.push_back(fmt::format("{}: not fitted: no spec `{}` in specs/ (--spec {}=FILE)",
                                  a.architecture, gpu.spec, gpu.files));
  }
  return results;
}

double predicted_s(const sample &x, const gpu_spec &basis, const model_parameters &params) {
  return estimate_attention(x.timed.shape, x.timed.prec, x.timed.bytes, basis, params,
                            cache_state::warm, reasons::without)
      .device_time_s;
}

bench::error_summary errors(const std::vector<const sample *> &samples, const gpu_spec &basis,
                            const model_parameters &params) {
  std::vector<std::pair<double, double>> pairs;
  for (const sample *x : samples)
    pairs.emplace_back(predicted_s(*x, basis, params), x->timed.time_s);
  return bench::summarize(pairs);
}

/// One GPU's rows of the table: its score half by phase, before and after; every scored call
/// to `dump` when it is open.
void score_gpu(const bench::aic_command &c, const bench::aic_gpu &gpu, const gpu_spec &spec,
               const architecture_result &r, skipped_rows &skipped, std::ofstream &dump) {
  const gpu_spec basis = model_basis(spec);
  const std::vector<sample> samples = read_gpu(c.data, gpu.files, skipped);
  std::map<std::string, std::vector<const sample *>> by_phase;
  for (const sample &x : samples)
    if (!x.fit)
      by_phase[x.phase].push_back(&x);
  for (const auto &[phase, held_out] : by_phase) {
    std::printf("| %s | %s | %s | %s | %zu | %s | %s |\n", std::string(gpu.files).c_str(),
                spec.architecture.c_str(),
                r.fitted_on.empty() ? "(hopper.yaml)" : r.fitted_on.c_str(), phase.c_str(),
                held_out.size(), bench::cells(errors(held_out, basis, r.before)).c_str(),
                bench::cells(errors(held_out, basis, r.after)).c_str());
    if (dump)
      for (const sample *x : held_out) {
        const attention_shape &s = x->timed.shape;
        dump << fmt::format("{},{},{},{},{},{},{},{},{},{},{:.3f},{:.3f}\n", gpu.files, phase,
                            x->kind, s.batch, s.heads, s.kv_heads, s.q_len, s.kv_len, s.head_dim,
                            s.window, x->timed.time_s * 1e6, predicted_s(*x, basis, r.after) * 1e6);
      }
  }
}

/// Each fitted architecture's values as a `model:` section, with what they were fitted on.
void print_fitted(const std::map<std::string, architecture_result> &results) {
  for (const auto &[architecture, r] : results) {
    if (r.fitted_on.empty())
      continue;
    std::printf("\n# %s: fitted on %zu rows (of the %zu bf16 rows of %s's fit half) in %.0f s\n",
                architecture.c_str(), r.fit_rows, r.fit_half_rows, r.fitted_on.c_str(), r.seconds);
    std::printf("%s",
                to_yaml(bench::all_of_kind(
                            r.after, parameter_fit::attention,
                            fmt::format("fused attention fitted by bench/aic_attention_fit on {} "
                                        "AIConfigurator TensorRT-LLM timings of {}",
                                        r.fit_rows, r.fitted_on)))
                    .c_str());
    std::printf("# %s\n", r.written.c_str());
  }
}

} // namespace

int main(int argc, char **argv) {
  try {
    const bench::aic_command c = bench::parse_aic_command(
        argc, argv,
        "aic_attention_fit [--data DIR] [--arch ARCH] [--fit-rows N] [--spec GPU=FILE ...] "
        "[--dump FILE]");
    std::vector<std::string> notes;
    const std::map<std::string, architecture_result> results = fit_architectures(c, notes);
    std::ofstream dump;
    if (!c.dump.empty()) {
      dump.open(c.dump);
      dump << "gpu,phase,kind,batch,heads,kv_heads,q_len,kv_len,head_dim,window,measured_us,"
              "predicted_us\n";
    }
    std::printf("| GPU | architecture | fitted on | phase | n | before: median | p90 | bias | "
                "after: median | p90 | bias |\n|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|"
                "\n");
    std::map<std::string, skipped_rows> skipped;
    bench::score_every_gpu(
        c, results, false, notes,
        [&](const bench::aic_gpu &gpu, const gpu_spec &spec, const architecture_result &r) {
          score_gpu(c, gpu, spec, r, skipped[std::string(gpu.files)], dump);
        });
    std::printf("\n");
    for (const auto &[gpu, reasons] : skipped)
      for (const auto &[why, count] : reasons)
        std::printf("- %s: %d rows skipped: %s\n", gpu.c_str(), count, why.c_str());
    for (const std::string &note : notes)
      std::printf("- %s\n", note.c_str());
    print_fitted(results);
    return 0;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "aic_attention_fit: %s\n", e.what());
    return 2;
  }
}
