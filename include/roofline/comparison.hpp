// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/analysis.hpp"
#include "roofline/gpu_spec.hpp"
#include "roofline/measurement.hpp"
#include "roofline/measurement_layer.hpp"
#include "roofline/model_config.hpp"
#include "roofline/network.hpp"
#include "roofline/perf_model.hpp"

#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace roofline {

/// Where a number of a comparison comes from.
enum class time_source { predicted, measured, scaled_from_measured };

std::string_view to_string(time_source s);

/// One GPU's side of a comparison: its analysis and what it means per step and per dollar.
struct gpu_result {
  /// The GPU's name, and its tensor-parallel degree beside it when above 1: "h100-sxm5 ×2".
  std::string name;
  int tensor_parallel = 1;     ///< GPUs the network is sharded over (each runs `analysis`)
  roofline::analysis analysis; ///< the network on this GPU (its ops in the network's order)
  std::vector<double>
      op_times_s; ///< per op, per run: predicted, or measured / scaled from measured
  std::vector<time_source> sources; ///< per op
  double step_time_s = 0;           ///< Σ op time × count
  double memory_bound_share = 0;    ///< of step_time_s: memory-bound ops the GPU decides
  /// Of step_time_s: ops whose host floor exceeds their device time. The host is the same for
  /// every GPU of a comparison, so these take as long on each.
  double launch_bound_share = 0;
  double samples_per_s = 0;        ///< batch / step time
  double tokens_per_s = 0;         ///< batch · seq_len / step time
  double tokens_per_s_per_gpu = 0; ///< tokens_per_s / tensor_parallel
  double speedup = 1;              ///< baseline step time / this step time
  /// Per op: the baseline's time per run / this one's; empty when the two run different ops (a
  /// network sharded over another number of GPUs).
  std::vector<double> op_speedups;
  std::optional<double> usd_per_hour; ///< of all its GPUs
  /// Per million of the comparison's unit (comparison::unit): tokens, or the samples (images)
  /// of a network with no sequence.
  std::optional<double> usd_per_million_tokens;
};

/// The plain-words answer: which GPU, how much faster, and why.
struct verdict {
  std::string fastest;                 ///< GPU name
  double speedup = 1;                  ///< of the fastest over the baseline
  std::optional<std::string> cheapest; ///< per token, where prices are known
  std::string text;
};

/// One network at one batch on several GPUs; the first GPU is the baseline.
struct comparison {
  std::string network_name;
  std::int64_t batch = 1;
  std::int64_t seq_len = 1;
  std::string tokens = "seq_len 1"; ///< step_tokens of the network: what headers say
  /// What throughput counts (throughput_unit): "tokens", "images" or "samples". Without a
  /// sequence, tokens/s would repeat samples/s: the tables and JSON give samples (images) instead.
  std::string unit = "tokens";
  std::vector<gpu_result> gpus;
  roofline::verdict verdict;
  /// The network the baseline (the first GPU) ran: at this batch, sharded as it was.
  network baseline_network;
};

/// What compare() needs per GPU: its model, and (for the measured local GPU) its measurements.
struct compared_gpu {
  perf_model model;
  std::string selection; ///< how it was named: "--gpus h100", "local"
  /// The network's ops (at the same batch) measured on this GPU, in the order lower() gives.
  std::optional<measurements> measured;
  int tensor_parallel = 1;
  /// The network as one of `tensor_parallel` GPUs runs it; unset: compare()'s own.
  std::optional<network> sharded;
  /// GPU memory kept back from the network, in bytes; unset: the default share
  /// (memory_reserve_bytes).
  std::optional<double> memory_reserve;
};

/// Whether two analyses run the same ops (layer, kind and shape, in order): their per-op times
/// compare one to one.

bool same_ops(const analysis &a, const analysis &b);

/// Analyses `net` on every GPU, each with its own parameters (gpu_spec::parameters) and the same
/// host floor. Where one GPU has measurements, the others' GEMM device times are scaled from its
/// measured device times by the ratio of the two GPUs' predicted device times;
/// `prices` (USD per hour by GPU name) override the specs' prices.
comparison compare(const network &net, const std::vector<compared_gpu> &gpus,
                   const std::map<std::string, double> &prices = {});

/// Where a comparison's network comes from: a network as given (a network YAML, parsed), run at
/// each batch compared; or a model config with its options, built anew at each batch and
/// tensor-parallel degree (its last-position LM head, for one, is as tall as the batch).
using network_source = std::variant<network, config_source>;

/// What `roofline-advise compare` asks.
struct compare_request {
  network_source source;
  /// GPU names, aliases or spec files, the first the baseline; `local`: the local GPU, measured
  /// (through `layer`), the others scaled from its measurements. Two that resolve to the same
  /// spec are refused.
  std::vector<std::string> gpus;
  std::vector<std::int64_t> batches; ///< empty: the network's own
  /// USD per hour by GPU as named (in `gpus` or not); two names of the same spec are refused.
  std::map<std::string, double> prices;
  bool sparse = false;
  progress_callback progress; ///< while the local GPU measures
  /// Tensor-parallel degrees to set beside every GPU (`--tp 1,2,4`), each replacing a config
  /// source's own; empty: the network as it is (a config at one GPU). Only a config shards.
  std::vector<int> tensor_parallel;
  /// What measures `local`; unused without it.
  measurement_layer_ref layer;
  /// GPU memory kept back on every GPU, in bytes; unset: the default share
  /// (memory_reserve_bytes).
  std::optional<double> memory_reserve;
};

/// The most ops a comparison analyses in all: the network's ops times its GPUs (at each
/// tensor-parallel degree) times its batches. Two GPUs of the largest network (max_ops): about
/// 25 s and 4 GB.
inline constexpr std::int64_t max_compared_ops = 600'000;

/// The spec each GPU `request` names resolves to (in `gpus` and in `prices`, `local` left out: it
/// is found when measured), by the name given. Throws input_error for none named, an unknown GPU,
/// two names of one spec in `gpus` (`h100`, `H100` and `h100-sxm5`: a GPU compared with itself)
/// and two prices of one spec. compare_gpus() checks the same first; this tells before the
/// network is read.
std::map<std::string, gpu_spec> resolve_compared_gpus(const compare_request &request);

/// Builds the network from its source, resolves the GPUs (each with its own parameters, all with
/// this machine's host floor), measures the local one where asked, and compares them at every
/// batch. Throws input_error, before any analysis, when that would analyse more than
/// max_compared_ops ops, and for degrees check_tensor_parallel refuses, named twice, or asked of
/// a network YAML or of the local GPU.
std::vector<comparison> compare_gpus(const compare_request &request);

} // namespace roofline
