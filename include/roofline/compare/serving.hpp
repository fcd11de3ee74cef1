// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/analysis/analysis.hpp"
#include "roofline/analysis/memory_fit.hpp"
#include "roofline/compare/compare_request.hpp"
#include "roofline/compare/serving_simulation.hpp"
#include "roofline/model/accuracy.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

// Serving a model config at a latency target: whole requests (a prompt, then output tokens) on
// each setup (a GPU at a tensor-parallel degree), at the largest batch that fits and meets the
// targets (docs/network-format.md, "Serving at a latency target").

namespace roofline {

/// What a serving question asks: requests of `prompt_tokens` in and `output_tokens` out, with
/// optional targets for the time to the first token and between output tokens.
struct serving_question {
  std::int64_t prompt_tokens = 0;
  std::int64_t output_tokens = 0;
  std::optional<double> ttft_s; ///< target: time to the first token, at most
  std::optional<double> tpot_s; ///< target: time per output token after the first, at most
  /// Every step issued eagerly (each kernel launched by the host); false: replayed from a CUDA
  /// graph, as serving engines (vLLM, SGLang, TensorRT-LLM) run their steps.
  bool eager = false;
  /// A load to simulate (serving_simulation.hpp) on each setup that fits, beside the steady
  /// state: requests arriving at this rate (Poisson), or this many in flight (a closed loop);
  /// `simulated_requests` of them.
  std::optional<double> rate_per_s;
  std::optional<std::int64_t> concurrency;
  std::int64_t simulated_requests = 1000;
  /// Requests of their own lengths (a dataset's spread, from a file): simulated in place of
  /// `simulated_requests` of the question's, arriving at their own times where neither a rate
  /// nor a concurrency is asked. The steady state still answers at prompt_tokens and
  /// output_tokens (their means, say, as the caller chooses).
  std::vector<simulated_request> requests;
  /// The percentile of a simulated load held against the targets: 50, 90 or 99.
  int percentile = 90;
  /// The simulated engine's cap on running requests (vLLM's max_num_seqs: 1024 on GPUs of 70 GB
  /// and more since V1).
  std::int64_t max_running = 1024;
  /// Prefix caching: the first this many tokens of every prompt are the same, computed once.
  std::int64_t shared_prefix_tokens = 0;
  /// Pipeline stages of every setup, each a tensor-parallel group (vLLM's and TensorRT-LLM's
  /// pipeline parallelism): a stage holds ceil(layers / stages) of the blocks and one
  /// micro-batch of the running requests at a time; a token crosses every stage.
  int pipeline_parallel = 1;
  /// Whether a load is to be simulated.
  bool simulates() const { return rate_per_s || concurrency || !requests.empty(); }
};

/// The most requests a setup is given at once. Serving engines cap their running batch (vLLM's
/// max_num_seqs, TensorRT-LLM's max_batch_size) at hundreds to a few thousand; beyond this the
/// KV cache, not the model, is the question.
inline constexpr std::int64_t max_serving_batch = 4096;

/// The longest prompt plus output a serving question may ask for: a context of 2^24 tokens.
inline constexpr std::int64_t max_serving_tokens = std::int64_t{1} << 24;

/// The bounds of a latency target (TTFT, TPOT): a microsecond, shorter than any GPU step (a
/// tinier target only prints as a long run of zeros), to an hour.
inline constexpr double min_latency_target_s = 1e-6, max_latency_target_s = 3600;

/// Throws input_error for a question no setup can be asked: no prompt or output tokens, a
/// request longer than max_serving_tokens, a target outside [min_latency_target_s,
/// max_latency_target_s], a TPOT target for requests of one output token.
void check_serving_question(const serving_question &q);

/// "TTFT ≤ 500 ms and TPOT ≤ 50.0 ms", "TPOT ≤ 50.0 ms"; "" without targets.
std::string targets_phrase(const serving_question &q);

/// Whether a simulated load's percentiles (the question's) meet its targets; none without.
std::optional<bool> meets_at_percentile(const serving_question &q, const simulation_result &r);

/// One batch of requests on one setup: `batch` requests admitted together, their prompts
/// prefilled in one step (the first token of each), then `output_tokens − 1` decode steps.
struct serving_point {
  std::int64_t batch = 1;
  double ttft_s = 0; ///< the prefill step
  /// One decode step at the mean cache length of the request (prompt + half the output):
  /// attention's cost grows linearly along the request, so this is its mean.
  double tpot_s = 0;
  /// False for a request of one output token: no token follows the first, so there is no TPOT
  /// to show or to meet (tpot_s is then the decode step the batch still runs).
  bool has_tpot = true;
  /// Their intervals from the steps' (analysis's step_totals::range or device_range), carried
  /// through the same sums.
  time_range ttft_range, tpot_range;
  double request_latency_s = 0; ///< ttft_s + (output_tokens − 1) · tpot_s
  double requests_per_s = 0;    ///< batch / request_latency_s
  double output_tokens_per_s = 0;
  double output_tokens_per_s_per_gpu = 0;
  /// output_tokens_per_s's interval: at the longest and the shortest request latency.
  double output_tokens_per_s_low = 0, output_tokens_per_s_high = 0;
  /// Energy per output token, all the setup's GPUs: a steady-state step's (a decode with its
  /// share of a prefill) over the `batch` tokens it makes; and that step's average draw per GPU.
  double joules_per_output_token = 0, average_power_w = 0;
  /// A request's: its output tokens' (each carries its share of a prefill, as the step does).
  double joules_per_request = 0;
  bool meets_ttft = true, meets_tpot = true;
  bool meets_targets() const { return meets_ttft && meets_tpot; }
};

/// One setup's answer.
struct serving_setup {
  std::string name; ///< "h100-sxm5", "h100-sxm5 ×2", "h100-sxm5 ×8 ×2 stages"
  int tensor_parallel = 1;
  int pipeline_parallel = 1;
  /// Data-parallel attention (a mixture's experts spread over GPUs without tensor parallelism,
  /// config_options::expert_parallel): as many GPUs, each running the attention for its share of
  /// the running requests, their MoE layers in lockstep (each step the slowest's). 1: none.
  int attention_ranks = 1;
  /// Its GPUs: a tensor-parallel group a stage, or its data-parallel attention ranks.
  int gpus() const { return tensor_parallel * pipeline_parallel * attention_ranks; }
  /// The decode step's network at batch 1 with its cache at prompt + output tokens, on this
  /// setup's GPU: its model and memory.
  roofline::analysis analysis;
  /// The largest batch whose KV cache (at prompt + output tokens) and prefill fit each GPU;
  /// none when not even one request does.
  std::optional<std::int64_t> largest_fitting_batch;
  /// The throughput–latency curve: powers of two up to the largest fitting batch, and it.
  std::vector<serving_point> curve;
  /// The largest fitting batch that meets the targets; else batch 1 (missing them) where one
  /// request fits; none when none fits.
  std::optional<serving_point> chosen;
  /// What keeps the chosen batch from growing: "memory", "batch cap" (max_serving_batch),
  /// "TTFT" or "TPOT" (the next batch misses that target); "" when none is chosen.
  std::string limited_by;
  /// A smaller batch that meets the targets and serves more output tokens a second than the
  /// chosen one (a tile or wave boundary just below it): the one with the most, where it beats
  /// the chosen batch by more than half a percent; none otherwise.
  std::optional<serving_point> most_throughput;
  /// The load of serving_question::rate_per_s or concurrency, simulated on this setup (its
  /// running batch capped at what fits); none where none was asked or nothing fits.
  std::optional<simulation_result> simulated;
  /// Where targets are set and the load is a rate or a concurrency: the highest of that load
  /// whose simulated percentile (serving_question::percentile) meets them, and its simulation;
  /// none where not even the least load tried meets them (or nothing was asked).
  struct load_limit {
    double load = 0; ///< requests a second, or requests in flight
    simulation_result simulated;
    std::int64_t meeting_targets = 0; ///< requests meeting both targets (goodput's numerator)
    /// Where a price is known: the setup's price (and its energy's) over this throughput.
    std::optional<double> usd_per_million_output_tokens;
    /// The next load up met the targets too, but as a burst: the simulated requests were too
    /// few for a steady state there (fewer than three times those in flight); more would search
    /// higher.
    bool limited_by_requests = false;
  };
  std::optional<load_limit> highest_load;
  /// The least load the search simulated (requests a second, or in flight); 0 where none was.
  double lowest_load_tried = 0;
  /// The KV cache the simulation ran with, in tokens: what the largest fitting batch of the
  /// question's requests holds.
  std::int64_t kv_capacity_tokens = 0;
  /// Why this GPU cannot run the model at all (a precision it has no rate for: an A100 and fp8),
  /// in words; "" where it can. Such a setup is no answer, and the others still are.
  std::string unsupported;
  /// Memory at the chosen batch (the decode step's, with the cache at its longest).
  std::optional<memory_use> memory;
  std::optional<double> usd_per_hour; ///< of all its GPUs
  /// At the chosen batch, where it meets the targets and a price is known.
  std::optional<double> usd_per_million_output_tokens;
  /// Its interval, from output_tokens_per_s's; set with it.
  std::optional<std::pair<double, double>> usd_per_million_output_tokens_range;
  bool meets_targets() const { return chosen && chosen->meets_targets(); }
};

struct serving_verdict {
  /// Setups that meet the targets: the lowest price per output token (where prices are known),
  /// and the most output tokens per second per GPU.
  std::optional<std::string> cheapest, fastest;
  /// Setups meeting the targets whose price (or throughput) interval overlaps the cheapest's (or
  /// the fastest's): within the model's error as good.
  std::vector<std::string> cheapest_within_error, fastest_within_error;
  std::string text;
};

struct serving_comparison {
  std::string network_name;
  serving_question question;
  /// The KV cache's format as the steps store it ("fp8", "bf16"), given or implied (an fp8 or
  /// fp4 model under a serving engine's kernels): every table says which; "" where no attention
  /// holds a cache.
  std::string kv_cache;
  std::vector<serving_setup> setups;
  serving_verdict verdict;
};

/// `question` on every GPU of `request` at every degree (`--tp`, else 1): each setup's batch
/// chosen up to what fits, the verdict from those that meet the targets. The network must be a
/// model config (built as a prefill and a decode step, the glue as its options say); throws
/// input_error for a network YAML, batches given, the local GPU, and what compare_gpus refuses.
serving_comparison serve(const compare_request &request, const serving_question &question);

} // namespace roofline
