// SPDX-License-Identifier: Apache-2.0
#include "roofline/compare/serving_simulation.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <numeric>
#include <random>
#include <stdexcept>

namespace roofline {

namespace {

/// One request as the scheduler sees it.
struct in_flight {
  std::int64_t prefilled = 0; ///< prompt tokens prefilled so far
  std::int64_t generated = 0; ///< output tokens so far (the first with the prompt's last chunk)
  double arrival_s = 0, first_token_s = 0, done_s = 0;
};

void check(const std::vector<simulated_request> &requests, const scheduler_options &options) {
  if (requests.empty())
    throw std::invalid_argument("a serving simulation needs at least one request");
  for (const simulated_request &r : requests)
    if (r.prompt_tokens < 1 || r.output_tokens < 1 || !(r.arrival_s >= 0))
      throw std::invalid_argument("a simulated request needs a prompt, an output token and a "
                                  "non-negative arrival");
  if (options.max_running < 1 || options.token_budget < 1 ||
      (options.concurrency && *options.concurrency < 1))
    throw std::invalid_argument("a scheduler needs room for a request and a token a step");
}

/// Each request's times from its state, and their percentiles, into `result`.
void summarize(const std::vector<simulated_request> &requests, const std::vector<in_flight> &state,
               double start, simulation_result &result) {
  double last = start, tokens = 0;
  std::vector<double> ttft, tpot, latency;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const in_flight &s = state[i];
    served_request served;
    served.ttft_s = s.first_token_s - s.arrival_s;
    served.latency_s = s.done_s - s.arrival_s;
    if (requests[i].output_tokens > 1)
      served.tpot_s =
          (s.done_s - s.first_token_s) / static_cast<double>(requests[i].output_tokens - 1);
    result.requests.push_back(served);
    ttft.push_back(served.ttft_s);
    latency.push_back(served.latency_s);
    if (requests[i].output_tokens > 1)
      tpot.push_back(served.tpot_s);
    last = std::max(last, s.done_s);
    tokens += static_cast<double>(requests[i].output_tokens);
  }
  result.duration_s = last - start;
  result.output_tokens_per_s = result.duration_s > 0 ? tokens / result.duration_s : 0;
  result.ttft = percentiles_of(std::move(ttft));
  result.tpot = percentiles_of(std::move(tpot));
  result.latency = percentiles_of(std::move(latency));
}

} // namespace

percentiles percentiles_of(std::vector<double> values) {
  if (values.empty())
    return {};
  std::sort(values.begin(), values.end());
  const auto rank = [&](double p) {
    const auto at = static_cast<std::size_t>(std::ceil(p * static_cast<double>(values.size())));
    return values[std::min(values.size(), std::max<std::size_t>(at, 1)) - 1];
  };
  return {rank(0.5), rank(0.9), rank(0.99)};
}

std::vector<simulated_request> poisson_requests(double rate_per_s, std::int64_t count,
                                                std::int64_t prompt_tokens,
                                                std::int64_t output_tokens, unsigned seed) {
  if (!(rate_per_s > 0) || count < 1)
    throw std::invalid_argument("Poisson arrivals need a positive rate and at least one request");
  std::mt19937_64 generator(seed);
  std::exponential_distribution<double> gap(rate_per_s);
  std::vector<simulated_request> requests(static_cast<std::size_t>(count));
  double now = 0;
  for (simulated_request &r : requests) {
    r = {now, prompt_tokens, output_tokens};
    now += gap(generator);
  }
  return requests;
}

simulation_result simulate_serving(const std::vector<simulated_request> &requests,
                                   const scheduler_options &options,
                                   const step_time_function &step_time) {
  check(requests, options);
  const std::size_t n = requests.size();
  std::vector<in_flight> state(n);
  // Open loop: by arrival (stable, so equal arrivals keep their order); closed loop: as listed.
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  if (!options.concurrency)
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return requests[a].arrival_s < requests[b].arrival_s;
    });
  std::size_t next = 0, finished = 0;
  std::int64_t live = 0; // closed loop: requests in flight
  std::deque<std::size_t> waiting;
  std::vector<std::size_t> running;
  simulation_result result;
  double now = options.concurrency ? 0 : requests[order.front()].arrival_s;
  const double start = now;
  while (finished < n) {
    if (options.concurrency) {
      for (; next < n && live < *options.concurrency; ++next, ++live) {
        state[order[next]].arrival_s = now;
        waiting.push_back(order[next]);
      }
    } else {
      for (; next < n && requests[order[next]].arrival_s <= now; ++next) {
        state[order[next]].arrival_s = requests[order[next]].arrival_s;
        waiting.push_back(order[next]);
      }
    }
    while (static_cast<std::int64_t>(running.size()) < options.max_running && !waiting.empty()) {
      running.push_back(waiting.front());
      waiting.pop_front();
    }
    if (running.empty()) { // nothing to run until the next arrival
      now = requests[order[next]].arrival_s;
      continue;
    }
    // The step: every decoding request's token first, then prompt chunks in the budget left.
    std::int64_t decoding = 0;
    for (const std::size_t r : running)
      decoding += state[r].prefilled == requests[r].prompt_tokens;
    std::int64_t room = std::max<std::int64_t>(0, options.token_budget - decoding);
    std::vector<std::pair<std::size_t, std::int64_t>> chunks;
    for (const std::size_t r : running) {
      const std::int64_t left = requests[r].prompt_tokens - state[r].prefilled;
      if (left == 0 || room == 0)
        continue;
      const std::int64_t chunk = std::min(left, room);
      chunks.emplace_back(r, chunk);
      room -= chunk;
    }
    const std::int64_t prefill_tokens = options.token_budget - decoding - room;
    now += step_time(decoding, std::max<std::int64_t>(0, prefill_tokens));
    ++result.steps;
    for (const std::size_t r : running)
      if (state[r].prefilled == requests[r].prompt_tokens && state[r].generated > 0)
        ++state[r].generated;
    for (const auto &[r, chunk] : chunks) {
      state[r].prefilled += chunk;
      if (state[r].prefilled == requests[r].prompt_tokens) { // its first token, with the chunk
        state[r].generated = 1;
        state[r].first_token_s = now;
      }
    }
    const auto done = [&](std::size_t r) {
      return state[r].generated >= requests[r].output_tokens;
    };
    for (const std::size_t r : running)
      if (done(r)) {
        state[r].done_s = now;
        ++finished;
        --live;
      }
    running.erase(std::remove_if(running.begin(), running.end(), done), running.end());
  }
  summarize(requests, state, start, result);
  return result;
}

} // namespace roofline
