// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/analysis/measurement.hpp"
#include "roofline/analysis/measurement_layer.hpp"
#include "roofline/input/model_config.hpp"
#include "roofline/input/network.hpp"
#include "roofline/model/gpu_spec.hpp"
#include "roofline/model/perf_model.hpp"

#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

// What a comparison of GPUs (roofline::compare_gpus) and a serving question (roofline::serve)
// are asked: a network source, GPUs, degrees and prices.

namespace roofline {

/// What compare() needs per GPU: its model, and (for the measured local GPU) its measurements.
struct compared_gpu {
  perf_model model;
  std::string selection; ///< how it was named: "compare_request::gpus h100", "local"
  /// The network's ops (at the same batch) measured on this GPU, in the order lower() gives.
  std::optional<measurements> measured;
  int tensor_parallel = 1;
  /// The network as one of `tensor_parallel` GPUs runs it; unset: compare()'s own.
  std::optional<network> sharded;
  /// GPU memory kept back from the network, in bytes; unset: the default share
  /// (memory_reserve_bytes).
  std::optional<double> memory_reserve;
  /// USD per kWh of the energy it draws: added to its cost per token; unset: none.
  std::optional<double> energy_usd_per_kwh;
};

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
  clock_regime clock = clock_regime::sustained; ///< model_options::clock of every setup
  progress_callback progress; ///< while the local GPU measures
  /// Tensor-parallel degrees to set beside every GPU (`--tp 1,2,4`), each replacing a config
  /// source's own; empty: the network as it is (a config at one GPU). Only a config shards.
  std::vector<int> tensor_parallel;
  /// What measures `local`; unused without it.
  measurement_layer_ref layer;
  /// GPU memory kept back on every GPU, in bytes; unset: the default share
  /// (memory_reserve_bytes).
  std::optional<double> memory_reserve;
  /// USD per kWh of the energy the GPUs draw (compared_gpu::energy_usd_per_kwh); unset: none.
  std::optional<double> energy_usd_per_kwh;
  /// What joins the nodes of every setup (a cluster's network, model_options::network): for
  /// collectives that span nodes and a serving pipeline's sends between them. Unset: every
  /// collective inside one host; a serving pipeline's nodes of 8 GPUs with a 400 Gb/s NIC each.
  std::optional<node_network> network;
};

/// USD per million of what a step processes (tokens, samples) for the energy of `joules_per_item`
/// at `usd_per_kwh`.
inline double energy_usd_per_million(double joules_per_item, double usd_per_kwh) {
  return joules_per_item * 1e6 / joules_per_kwh * usd_per_kwh;
}

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

} // namespace roofline
