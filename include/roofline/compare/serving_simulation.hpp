// SPDX-License-Identifier: Apache-2.0
#pragma once
// Requests served as an engine serves them, step by step (issue 41 part 2, its core): requests
// arrive (at a rate, or as a closed loop keeps a concurrency), a scheduler batches them
// continuously (each step decodes one token of every running request and prefills up to a token
// budget of prompts, in chunks), and each step takes what the step-time function says. Out come
// every request's time to first token, time per output token and latency, and their percentiles.
// Not yet wired to `compare` (the steady-state formula of serving.hpp answers there).

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
/// step prefills at most `token_budget` tokens (its decodes counted first, one each), chunking a
/// prompt longer than what is left; the oldest request first.
struct scheduler_options {
  std::int64_t max_running = 256;
  std::int64_t token_budget = 8192;
  /// Closed loop: this many requests in flight, each finished one replaced at once by the next
  /// of the list (whose arrival times are then ignored); none: the list's arrival times.
  std::optional<std::int64_t> concurrency;
};

/// A step's time for `decoding` requests generating a token each beside `prefill_tokens`
/// prompt tokens, in seconds (positive).
using step_time_function =
    std::function<double(std::int64_t decoding, std::int64_t prefill_tokens)>;

struct served_request {
  double ttft_s = 0;    ///< arrival to its first token
  double tpot_s = 0;    ///< first token to last, per token after the first (0 for one token)
  double latency_s = 0; ///< arrival to its last token
};

/// The p50, p90 and p99 of a set of times (nearest rank).
struct percentiles {
  double p50 = 0, p90 = 0, p99 = 0;
};

struct simulation_result {
  std::vector<served_request> requests; ///< in the order given
  double duration_s = 0;                ///< the first arrival to the last token
  double output_tokens_per_s = 0;       ///< every request's output tokens over the duration
  percentiles ttft, tpot, latency;
  std::int64_t steps = 0;
};

/// Serves `requests` under `options`, each step `step_time` long. Throws std::invalid_argument
/// for an empty list, a request of no prompt or no output, or options of no room (no running
/// request, no token budget, a concurrency below 1).
simulation_result simulate_serving(const std::vector<simulated_request> &requests,
                                   const scheduler_options &options,
                                   const step_time_function &step_time);

/// `count` requests of `prompt_tokens` and `output_tokens` arriving as a Poisson process of
/// `rate_per_s` (exponential gaps, seeded: the same seed, the same arrivals).
std::vector<simulated_request> poisson_requests(double rate_per_s, std::int64_t count,
                                                std::int64_t prompt_tokens,
                                                std::int64_t output_tokens, unsigned seed = 41);

/// The nearest-rank percentiles of `values` (none: zeros).
percentiles percentiles_of(std::vector<double> values);

} // namespace roofline
