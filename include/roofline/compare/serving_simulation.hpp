// SPDX-License-Identifier: Apache-2.0
#pragma once
// Requests served as an engine serves them, step by step (issue 41 part 2, its core): requests
// arrive (at a rate, or as a closed loop keeps a concurrency), a scheduler batches them
// continuously (each step decodes one token of every running request and prefills up to a token
// budget of prompts, in chunks), and each step takes what the step-time function says. Out come
// every request's time to first token, time per output token and latency, and their percentiles.

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace roofline {

/// One request: when it arrives, its prompt and how many tokens it generates (at least 1).
struct simulated_request {
  double arrival_s = 0;
  std::int64_t prompt_tokens = 1;
  std::int64_t output_tokens = 1;
};

/// The scheduler, as vLLM's and TensorRT-LLM's run: at most `max_running` requests at once; a
/// step computes at most `token_budget` tokens, its decodes (one each) first, then prompt chunks
/// in the room left, the oldest request first. The KV cache is held in blocks: a request holds
/// the blocks of the tokens it has computed, and where a step's new tokens find no free block the
/// request admitted last is preempted (its blocks freed, itself queued first, its prompt and the
/// tokens it generated recomputed when it is admitted again), as vLLM does.
struct scheduler_options {
  std::int64_t max_running = 256;
  std::int64_t token_budget = 8192;
  /// Closed loop: this many requests in flight, each finished one replaced at once by the next
  /// of the list (whose arrival times are then ignored); none: the list's arrival times.
  std::optional<std::int64_t> concurrency;
  /// The KV cache's room in tokens (whole blocks of `block_tokens` count); none: unbounded.
  std::optional<std::int64_t> kv_capacity_tokens;
  std::int64_t block_tokens = 16;
  /// Prefix caching: the first `shared_prefix_tokens` of every prompt are the same. Their whole
  /// blocks are computed once, by the first request to reach them, and kept: a later request's
  /// prefill starts after them (a prompt's last token is always computed, for its logits).
  std::int64_t shared_prefix_tokens = 0;
};

/// What one step computes: `decoding` requests generating a token each, whose caches hold
/// `decode_context_tokens` tokens together before the step, beside `prefill_tokens` tokens of
/// prompt chunks.
struct scheduled_step {
  std::int64_t decoding = 0;
  std::int64_t prefill_tokens = 0;
  std::int64_t prefilling = 0; ///< the requests those prompt tokens are of
  std::int64_t decode_context_tokens = 0;
};

/// A step's time in seconds (positive).
using step_time_function = std::function<double(const scheduled_step &)>;

struct served_request {
  double ttft_s = 0;    ///< arrival to its first token
  double tpot_s = 0;    ///< first token to last, per token after the first (0 for one token)
  double latency_s = 0; ///< arrival to its last token
};

/// The p50, p90 and p99 of a set of times (nearest rank).
struct percentiles {
  double p50 = 0, p90 = 0, p99 = 0;
  /// p50, p90 or p99 by its number (50, 90, 99).
  double at(int percentile) const;
};

struct simulation_result {
  std::vector<served_request> requests; ///< in the order given
  double duration_s = 0;                ///< the first arrival to the last token
  double output_tokens_per_s = 0;       ///< every request's output tokens over the duration
  /// ttft, tpot, latency: over requests; itl: over every token after a request's first (the
  /// time since the request's token before it: the steps that made it, and any wait preempted).
  percentiles ttft, tpot, itl, latency;
  std::int64_t steps = 0;
  std::int64_t preemptions = 0; ///< requests preempted for want of KV blocks
};

/// The requests of `result` (served from `requests`) whose TTFT and TPOT meet both targets
/// (an absent target is met; TPOT is met by a request of one output token).
std::int64_t requests_meeting(const simulation_result &result, std::optional<double> ttft_s,
                              std::optional<double> tpot_s);

/// Serves `requests` under `options`, each step `step_time` long. Throws std::invalid_argument
/// for an empty list, a request of no prompt or no output, options of no room (no running
/// request, no token budget, a concurrency below 1, no block), or a request whose cache alone
/// outgrows kv_capacity_tokens.
simulation_result simulate_serving(const std::vector<simulated_request> &requests,
                                   const scheduler_options &options,
                                   const step_time_function &step_time);

/// `requests` arriving as a Poisson process of `rate_per_s` in their order (exponential gaps,
/// seeded: the same seed, the same arrivals; the first at 0).
std::vector<simulated_request> poisson_arrivals(std::vector<simulated_request> requests,
                                                double rate_per_s, unsigned seed = 41);

/// `count` requests of `prompt_tokens` and `output_tokens` arriving as a Poisson process of
/// `rate_per_s` (exponential gaps, seeded: the same seed, the same arrivals).
std::vector<simulated_request> poisson_requests(double rate_per_s, std::int64_t count,
                                                std::int64_t prompt_tokens,
                                                std::int64_t output_tokens, unsigned seed = 41);

/// The nearest-rank percentiles of `values` (none: zeros).
percentiles percentiles_of(std::vector<double> values);

} // namespace roofline
