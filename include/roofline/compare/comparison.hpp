// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/analysis/analysis.hpp"
#include "roofline/analysis/measurement.hpp"
#include "roofline/analysis/measurement_layer.hpp"
#include "roofline/compare/compare_request.hpp"
#include "roofline/input/model_config.hpp"
#include "roofline/input/network.hpp"
#include "roofline/model/gpu_spec.hpp"
#include "roofline/model/perf_model.hpp"

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
  /// GPUs the step's throughput takes: the tensor-parallel degree times the pipeline's stages
  /// (network::pipeline_stages: `analysis` is one stage's, and the stages run at once).
  int gpus = 1;
  roofline::analysis analysis; ///< the network on this GPU (its ops in the network's order)
  std::vector<double>
      op_times_s; ///< per op, per run: predicted, or measured / scaled from measured
  std::vector<time_source> sources; ///< per op
  /// Per op, per run: op_times_s's interval (a measured op's is its time alone).
  std::vector<time_range> op_ranges;
  double step_time_s = 0; ///< Σ op time × count
  /// Σ of the ops' intervals × count, end by end: a predicted op's prediction::range, one
  /// scaled from a measurement that range scaled alike (the two GPUs' ratio is surer than either
  /// prediction: this errs wide), a measured one its time alone.
  time_range step_range;
  double memory_bound_share = 0; ///< of step_time_s: memory-bound ops the GPU decides
  /// Of step_time_s: ops whose host floor exceeds their device time. The host is the same for
  /// every GPU of a comparison, so these take as long on each.
  double launch_bound_share = 0;
  double samples_per_s = 0;        ///< batch / step time
  double tokens_per_s = 0;         ///< batch · seq_len / step time
  double tokens_per_s_per_gpu = 0; ///< tokens_per_s / gpus
  double speedup = 1;              ///< baseline step time / this step time
  /// The speedup's interval from the two step ranges: baseline low / this high to baseline high
  /// / this low.
  double speedup_low = 1, speedup_high = 1;
  /// Per op: the baseline's time per run / this one's; empty when the two run different ops (a
  /// network sharded over another number of GPUs).
  std::vector<double> op_speedups;
  std::optional<double> usd_per_hour; ///< of all its GPUs
  /// Per million of the comparison's unit (comparison::unit): tokens, or the samples (images)
  /// of a network with no sequence.
  std::optional<double> usd_per_million_tokens;
  /// A step's energy, all its GPUs (each GPU's idle draw over step_time_s plus its work's), per
  /// unit processed (a token, or a sample or image), and each GPU's average draw.
  double energy_per_step_j = 0, joules_per_token = 0, average_power_w = 0;
  /// The energy's cost per million tokens at compare_request::energy_usd_per_kwh (also in
  /// usd_per_million_tokens, where that is known); unset without an energy price.
  std::optional<double> energy_usd_per_million_tokens;
};

/// The plain-words answer: which GPU, how much faster, and why.
struct verdict {
  std::string fastest;                 ///< GPU name
  double speedup = 1;                  ///< of the fastest over the baseline
  std::optional<std::string> cheapest; ///< per token, where prices are known
  std::string least_energy;            ///< per token, of those that fit; "" for none
  /// The baseline and the runner-up, where the fastest's step range overlaps theirs: within the
  /// model's error, the fastest is not surely faster than these.
  std::vector<std::string> within_error;
  std::string text;
};

/// One network at one batch on several GPUs; the first GPU is the baseline.
struct comparison {
  std::string network_name;
  std::int64_t batch = 1;
  std::int64_t seq_len = 1;
  std::string tokens = "seq_len 1"; ///< step_tokens of the network: what headers say
  /// What throughput counts (throughput_unit_of the network). Without a sequence, tokens/s would
  /// repeat samples/s: the tables and JSON give samples (images) instead.
  throughput_unit unit = throughput_unit::tokens;
  std::vector<gpu_result> gpus;
  roofline::verdict verdict;
  /// The network the baseline (the first GPU) ran: at this batch, sharded as it was.
  network baseline_network;
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

/// Builds the network from its source, resolves the GPUs (each with its own parameters, all with
/// this machine's host floor), measures the local one where asked, and compares them at every
/// batch. Throws input_error, before any analysis, when that would analyse more than
/// max_compared_ops ops, and for degrees check_tensor_parallel refuses, named twice, or asked of
/// a network YAML or of the local GPU.
std::vector<comparison> compare_gpus(const compare_request &request);

} // namespace roofline
