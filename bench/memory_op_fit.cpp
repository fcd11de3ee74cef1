// SPDX-License-Identifier: Apache-2.0
// Fits the memory-bound ops' model (memory_op_time_s) to timed PyTorch kernels and scores it on
// kernels it never saw. No GPU needed: the timings come from bench/sweep_kernels.py.
//
//   memory_op_fit --gpu h100-sxm5 --fit MEMOPS.csv [--score MEMOPS.csv ...]
//   memory_op_fit --gpu h200-sxm --score MEMOPS.csv     # the GPU's parameters as they are
//
// The rows of the ops the tool models (relu, gelu and its tanh form, silu, add, mul, layer_norm,
// rms_norm, softmax; batch_norm, max_pool2d and adaptive_avg_pool2d in NCHW, PyTorch's default
// layout), timed by graph replay, each with the sweep's minimum bytes (inputs read, output
// written once, as the tool counts them). --fit: its rows of split `fit` fit each kind's floor
// and efficiency from the table's defaults; its rows of split `score` and every --score file's
// rows score them. Prints the errors before (the architecture's parameters) and after, by kind,
// then the fitted parameters as a `model:` section for specs/arch/.
#include "roofline/common/error.hpp"
#include "roofline/model/memory_op.hpp"
#include "roofline/model/model_fit.hpp"
#include "roofline/model/spec_catalog.hpp"

#include "csv_fields.hpp"
#include "fit_bench.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace {

using namespace roofline;

struct sample {
  std::string kind; ///< the tool's op kind
  bool fit = false; ///< split `fit` of the --fit file
  timed_memory_op timed;
};

/// The sweep's op names of the kernels the tool models, with the layout they are read in.
const std::map<std::string, std::pair<memory_op_kind, std::string>> &modelled() {
  static const std::map<std::string, std::pair<memory_op_kind, std::string>> ops{
      {"relu", {memory_op_kind::relu, "contiguous"}},
      {"gelu", {memory_op_kind::gelu, "contiguous"}},
      {"gelu_tanh", {memory_op_kind::gelu, "contiguous"}},
      {"silu", {memory_op_kind::silu, "contiguous"}},
      {"add", {memory_op_kind::add, "contiguous"}},
      {"mul", {memory_op_kind::mul, "contiguous"}},
      {"layer_norm", {memory_op_kind::layernorm, "contiguous"}},
      {"rms_norm", {memory_op_kind::rmsnorm, "contiguous"}},
      {"softmax", {memory_op_kind::softmax, "contiguous"}},
      {"batch_norm", {memory_op_kind::batchnorm, "nchw"}},
      {"max_pool2d", {memory_op_kind::maxpool, "nchw"}},
      {"adaptive_avg_pool2d", {memory_op_kind::avgpool, "nchw"}},
      // The glue as transformers runs it: apply_rotary_pos_emb on q and k (a dozen kernels,
      // costed at a fused kernel's bytes), StaticCache's index_copy_, the embedding gather, and
      // attention's output made contiguous.
      {"rope", {memory_op_kind::rope, "q,k transposed views"}},
      {"kv_append", {memory_op_kind::kv_append, "index_copy_"}},
      {"embedding", {memory_op_kind::embedding, "gather"}},
      {"transpose_copy", {memory_op_kind::copy, "transpose(1,2)"}},
  };
  return ops;
}

/// The in-step sweep's op names (bench/memop_instep.py): all contiguous; `copy` is its
/// transposed copy of attention-shaped heads, as the tool's copy kind.
const std::map<std::string, memory_op_kind> &modelled_in_step() {
  static const std::map<std::string, memory_op_kind> ops{
      {"relu", memory_op_kind::relu},         {"gelu", memory_op_kind::gelu},
      {"silu", memory_op_kind::silu},         {"add", memory_op_kind::add},
      {"mul", memory_op_kind::mul},           {"layer_norm", memory_op_kind::layernorm},
      {"rms_norm", memory_op_kind::rmsnorm},  {"softmax", memory_op_kind::softmax},
      {"copy", memory_op_kind::copy},
  };
  return ops;
}

/// The row-wise kinds, whose rows the in-step sweep gives.
bool row_wise(memory_op_kind kind) {
  return kind == memory_op_kind::layernorm || kind == memory_op_kind::rmsnorm ||
         kind == memory_op_kind::softmax;
}

/// Rows of bench/sweep_kernels.py's memops.csv (back to back on the same buffers), or of
/// bench/memop_instep.py's memops-instep.csv: its `producer` rows only (each call behind a kernel
/// that writes its input, as in a step), with their rows for the row-wise kinds.
std::vector<sample> read_samples(const std::string &file, bool fitting) {
  bench::csv_file csv(file, "bench/sweep_kernels.py's memops.csv or bench/memop_instep.py's "
                            "memops-instep.csv");
  const bool in_step = csv.has_column("cache");
  const std::size_t c_op = csv.column("op"), c_bytes = csv.column("bytes"),
                    c_time = csv.column("time_us"), c_split = csv.column("split"),
                    c_timing = csv.column("timing");
  const std::size_t c_layout = in_step ? 0 : csv.column("layout");
  const std::size_t c_cache = in_step ? csv.column("cache") : 0;
  const std::size_t c_rows = in_step ? csv.column("rows") : 0;
  std::vector<sample> samples;
  for (std::vector<std::string> f; csv.next(f);) {
    std::optional<memory_op_kind> kind;
    if (in_step) {
      const auto op = modelled_in_step().find(f[c_op]);
      if (op != modelled_in_step().end() && f[c_cache] == "producer")
        kind = op->second;
    } else if (const auto op = modelled().find(f[c_op]);
               op != modelled().end() && f[c_layout] == op->second.second) {
      kind = op->second.first;
    }
    if (!kind || f[c_timing] != "graph")
      continue;
    const std::optional<double> time_us = bench::positive_time(f[c_time]);
    if (!time_us)
      continue;
    sample x;
    x.kind = std::string(to_string(*kind));
    x.fit = fitting && f[c_split] == "fit";
    x.timed = {*kind, std::stoll(f[c_bytes]),
               in_step && row_wise(*kind) ? std::stoll(f[c_rows]) : 0, *time_us * 1e-6};
    samples.push_back(x);
  }
  return samples;
}

} // namespace

int main(int argc, char **argv) {
  try {
    const bench::fit_command c = bench::parse_fit_command(
        argc, argv, {}, "memory_op_fit --gpu GPU [--fit MEMOPS.csv] [--score MEMOPS.csv ...]");
    const gpu_spec spec = spec_catalog::builtin().resolve(c.gpu);
    const auto run = bench::fit_and_score<sample>(
        c, model_basis(spec), spec.parameters, parameter_fit::memory, read_samples, fit_memory_ops);
    bench::print_fitted(c, run,
                        fmt::format("memory-bound ops fitted by bench/memory_op_fit on {} "
                                    "PyTorch kernels of {}",
                                    run.fitted, c.fit_file));
    return 0;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "memory_op_fit: %s\n", e.what());
    return 2;
  }
}
