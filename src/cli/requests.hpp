// SPDX-License-Identifier: Apache-2.0
#pragma once

// The command line's choices, as CLI11 fills them, turned into what roofline::core takes: a
// network (or a network source), pipeline options, a compare request. Every check of a value the
// command line gives happens here or in the core, before any work.

#include "output.hpp"

#include "roofline/analysis/pipeline.hpp"
#include "roofline/cluster/cluster_spec.hpp"
#include "roofline/compare/comparison.hpp"
#include "roofline/compare/serving.hpp"
#include "roofline/input/model_config.hpp"
#include "roofline/input/network.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace roofline::cli {

/// What is wrong with a size given on the command line, "" when nothing: digits only, not zero,
/// and below 2^63 (CLI11's conversion would clamp a larger one to the largest integer).
std::string size_problem(const std::string &text);

/// What is wrong with a number given on the command line, "" when nothing: written in full as a
/// decimal (no hex, no spaces, no `inf`, no unit after it) and within [low, high].
std::string number_problem(const std::string &text, double low, double high);

/// A positive integer from a list option ("--batch 1,8,64"); input_error
/// "`option`: `text` <size_problem>" otherwise.
std::int64_t positive_from(const std::string &text, const std::string &option);

/// The entries of a comma-separated list option given once or more ("--tp 1,2 --tp 4");
/// input_error for an empty entry ("--tp 1,,2"), which CLI11 alone would skip.
std::vector<std::string> comma_list(const std::vector<std::string> &given,
                                    const std::string &option);

/// Whether `file` names a model config (config.json) rather than a network YAML.
bool is_model_config(const std::string &file);

/// What the command line says of a model config (a .json network file).
struct config_choice {
  std::string mode, optimizer, recompute; ///< --optimizer and --recompute: YAML networks' too
  std::string phase, emit_yaml, quantization, kv_cache_dtype, glue;
  std::int64_t seq_len = 0, kv_len = 0, tensor_parallel = 0;
  /// --pp, --ep, --dp (0: not given) and --zero (−1: not given).
  std::int64_t pipeline_parallel = 0, expert_parallel = 0, data_parallel = 0;
  int zero_stage = -1;
  bool last_logits = false, unfused_attention = false, sequence_parallel = false;
};

/// The network in `file`: a network YAML, or a model's config.json built as `config` says, at
/// `batch` (0: the network's own). Config options given for a YAML are refused (its attention
/// layers say their own lengths). With --emit-yaml, `output` gets the network as YAML, written
/// with the report.
network read_network(const std::string &file, const config_choice &config, std::int64_t batch,
                     output_choice &output);

/// The network in `file` as a source to build again at other batches and degrees: a network YAML
/// as read_network reads it, or a model config read once with the options `config` gives.
network_source read_network_source(const std::string &file, const config_choice &config);

/// What the command line says of measuring.
struct measure_choice {
  bool enabled = false;
  std::string engine = "cublas";
  bool cold_l2 = false, warm_l2 = false;
  bool no_counters = false;
  bool no_power = false; ///< no op held at the power limit
  std::string devices; ///< "all": every local GPU at once
};

/// The analysis pipeline as the command line asks for it (no layer yet: the caller loads it).
pipeline_options pipeline_options_of(const measure_choice &choice);

/// --cold-l2 or --warm-l2; unset: the step decides.
std::optional<cache_state> operand_cache_of(const measure_choice &choice);

/// What the command line says of a comparison.
struct compare_choice {
  std::string file;
  std::vector<std::string> gpus, batches, prices, degrees;
  bool sparse = false;
  std::string clock = "sustained"; ///< --clock
  std::optional<double> energy_usd_per_kwh; ///< --energy-price
  /// A serving question: requests of this many prompt and output tokens (0: none asked), with
  /// targets in milliseconds (0: none), eager or replayed from CUDA graphs.
  std::int64_t prompt_tokens = 0, output_tokens = 0;
  double ttft_ms = 0, tpot_ms = 0;
  bool ttft_given = false, tpot_given = false, eager = false;
  double rate = 0;              ///< --rate: requests a second to simulate (0: none)
  std::int64_t concurrency = 0; ///< --concurrency: requests in flight to simulate (0: none)
  std::int64_t num_requests = 1000;        ///< --num-requests: how many to simulate
  std::string request_file;                ///< --requests: a file of requests to simulate
  int percentile = 90;                     ///< --percentile: where the targets are held
  int pipeline_parallel = 0;               ///< --pp: pipeline stages of every setup (0: none asked)
  std::int64_t max_running = 1024;         ///< --max-running: the engine's cap on running requests
  std::int64_t shared_prefix = 0;          ///< --shared-prefix: prompt tokens every request shares
  std::optional<double> memory_reserve_gb; ///< --memory-reserve; unset: the default share
  std::string cluster;                     ///< --cluster: what joins the GPUs' nodes
};

/// A cluster (a name of clusters/ or a YAML file) and its GPU's spec; input_error for a cluster
/// whose `gpu` names no spec.
std::pair<cluster_spec, const gpu_spec *> cluster_and_gpu(const std::string &name);

/// The serving question `choice` asks, checked; none without --prompt-tokens and
/// --output-tokens. input_error for one given without the other, targets or --eager without
/// them, and the config options a serving question sets itself (--phase, --seq-len, --kv-len,
/// --last-logits, --emit-yaml) or that make no sense in serving (--mode, --optimizer,
/// --recompute).
std::optional<serving_question> serving_question_of(const compare_choice &choice,
                                                    const config_choice &config);

/// The comparison `choice` asks for (no layer yet: the caller loads it where `local` is named).
/// The command line's values are checked first, then the GPUs they name; the network is read
/// last, so that their errors do not wait on reading it. A serving question's config runs its
/// glue fused (as serving engines do) unless --glue says otherwise.
compare_request compare_request_of(const compare_choice &choice, const config_choice &config);

/// What `train` asks: a config on a cluster, steps of a global batch, and the layout dimensions
/// pinned (0: searched; zero_stage −1 and recompute "": searched).
struct train_choice {
  std::string file;
  std::vector<std::string> clusters; ///< one, or several to compare
  std::int64_t gpus = 0;
  std::int64_t global_batch = 0;
  std::int64_t seq_len = 0;
  double tokens = 0;
  int tp = 0, pp = 0, dp = 0, cp = 0, ep = 0, micro_batch = 0, virtual_stages = 0;
  int zero_stage = -1;
  std::string recompute;
  double expert_imbalance = 1;
  std::vector<std::string> prices; ///< USD/h, or CLUSTER=USD/h for several
  std::string clock = "sustained";
};

/// `train`'s --price: one figure (one cluster), or CLUSTER=USD/h for each of several, by cluster
/// as named; input_error for a malformed figure, a bare figure with several clusters, or a name
/// that is no --cluster.
std::map<std::string, double> training_prices_of(const train_choice &choice);

} // namespace roofline::cli
