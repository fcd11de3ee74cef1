// SPDX-License-Identifier: Apache-2.0
// Fits the fused attention model (estimate_attention) to timed SDPA calls and scores it on calls
// it never saw. No GPU needed: the timings come from bench/sweep_kernels.py on the GPU machine.
//
//   attention_fit --gpu h100-sxm5 --fit ATTENTION.csv [--score ATTENTION.csv ...]
//                 [--backend default] [--dump FILE]
//   attention_fit --gpu h200-sxm --score ATTENTION.csv     # the GPU's parameters as they are
//
// Rows of one backend (`default`: what PyTorch picks, cuDNN's kernel on Hopper), timed by graph
// replay. A decode call whose KV cache fits in L2 reads it from there when replayed back to back;
// they are kept: a small decode is bound by its fill of the SMs more than by DRAM, and in a
// Llama decode step (issue 28's profile) the batch-1 kernel took as long as here. --fit: its rows
// of split `fit` fit the parameters; its rows of split `score` and every --score file's rows
// (another run, another GPU) score them. Each sample is lowered from a one-layer network, so its
// bytes and shape are the analysis's own. Prints the errors before (the architecture's parameters)
// and after, by kind of call, then the fitted parameters as a `model:` section for specs/arch/.
// --dump writes every scored call, measured and predicted with the fitted parameters, as CSV.
#include "roofline/analysis/lowering.hpp"
#include "roofline/common/error.hpp"
#include "roofline/input/network.hpp"
#include "roofline/model/attention_model.hpp"
#include "roofline/model/model_fit.hpp"
#include "roofline/model/spec_catalog.hpp"

#include "csv_fields.hpp"
#include "fit_bench.hpp"
#include "lowered_attention.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace {

using namespace roofline;

struct sample {
  std::string kind; ///< "prefill causal", "prefill", "decode", "backward causal", "backward"
  bool fit = false; ///< split `fit` of the --fit file
  timed_attention timed;
};

std::vector<sample> read_samples(const std::string &file, const std::string &backend,
                                 bool fitting) {
  bench::csv_file csv(file, "bench/sweep_kernels.py's attention.csv");
  const std::size_t c_backend = csv.column("backend"), c_dtype = csv.column("dtype"),
                    c_batch = csv.column("batch"), c_heads = csv.column("q_heads"),
                    c_kv_heads = csv.column("kv_heads"), c_q = csv.column("q_len"),
                    c_kv = csv.column("kv_len"), c_d = csv.column("head_dim"),
                    c_causal = csv.column("causal"), c_pass = csv.column("pass"),
                    c_time = csv.column("time_us"), c_split = csv.column("split"),
                    c_timing = csv.column("timing");
  std::vector<sample> samples;
  for (std::vector<std::string> f; csv.next(f);) {
    if (f[c_backend] != backend || f[c_timing] != "graph")
      continue;
    const std::optional<double> time_us = bench::positive_time(f[c_time]);
    if (!time_us)
      continue;
    attention_shape s;
    s.batch = std::stoll(f[c_batch]);
    s.heads = std::stoll(f[c_heads]);
    s.kv_heads = std::stoll(f[c_kv_heads]);
    s.q_len = std::stoll(f[c_q]);
    s.kv_len = std::stoll(f[c_kv]);
    s.head_dim = std::stoll(f[c_d]);
    s.causal = f[c_causal] == "1";
    const bool backward = f[c_pass] == "bwd";

    const precision p = f[c_dtype] == "bfloat16" ? precision::bf16 : precision::fp16;
    s.backward = backward;
    const op o = bench::lowered_attention(s, p);
    sample x;
    x.timed = {*o.attention, p, o.bytes, *time_us * 1e-6};
    x.fit = fitting && f[c_split] == "fit";
    x.kind = std::string(backward                                 ? "backward"
                         : s.q_len < attention_decode_below_q_len ? "decode"
                                                                  : "prefill") +
             (s.causal ? " causal" : "");
    samples.push_back(x);
  }
  return samples;
}

void dump(const std::string &file,
          const std::vector<std::pair<std::string, std::vector<sample>>> &scored,
          const gpu_spec &gpu, const model_parameters &params) {
  std::ofstream out(file);
  out << "file,kind,split,dtype,batch,heads,kv_heads,q_len,kv_len,head_dim,measured_us,"
         "predicted_us,math_us,stream_us,overhead_us,waves\n";
  for (const auto &[name, samples] : scored)
    for (const sample &x : samples) {
      const attention_shape &s = x.timed.shape;
      const attention_estimate e = estimate_attention(s, x.timed.prec, x.timed.bytes, gpu, params,
                                                      cache_state::warm, reasons::without);
      out << fmt::format(
          "{},{},{},{},{},{},{},{},{},{},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f}\n", name, x.kind,
          x.fit ? "fit" : "score", to_string(x.timed.prec), s.batch, s.heads, s.kv_heads, s.q_len,
          s.kv_len, s.head_dim, x.timed.time_s * 1e6, e.device_time_s * 1e6, e.math_s * 1e6,
          e.stream_s * 1e6, e.overhead_s * 1e6, e.waves);
    }
}

} // namespace

int main(int argc, char **argv) {
  try {
    const bench::fit_command c = bench::parse_fit_command(
        argc, argv, {{"--backend", "default"}, {"--dump", ""}},
        "attention_fit --gpu GPU [--fit ATTENTION.csv] [--score ATTENTION.csv ...] "
        "[--backend default] [--dump FILE]");
    const std::string &backend = c.extra.at("--backend");
    const gpu_spec spec = spec_catalog::builtin().resolve(c.gpu);
    const gpu_spec basis = model_basis(spec);
    const auto run = bench::fit_and_score<sample>(
        c, basis, spec.parameters, parameter_fit::attention,
        [&](const std::string &file, bool fitting) { return read_samples(file, backend, fitting); },
        fit_attention);
    if (!c.extra.at("--dump").empty())
      dump(c.extra.at("--dump"), run.scored, basis, run.after);
    bench::print_fitted(c, run,
                        fmt::format("fused attention fitted by bench/attention_fit on {} SDPA "
                                    "timings ({} backend) of {}",
                                    run.fitted, backend, c.fit_file));
    return 0;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "attention_fit: %s\n", e.what());
    return 2;
  }
}
