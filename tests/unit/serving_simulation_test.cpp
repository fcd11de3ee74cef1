// SPDX-License-Identifier: Apache-2.0
// The serving simulation's scheduler by hand: a few requests whose TTFT and TPOT can be worked out
// on paper, each step 10 ms (or a time that says what the step held).
#include "roofline/compare/serving_simulation.hpp"

#include <doctest/doctest.h>

#include <stdexcept>

using namespace roofline;

namespace {

const step_time_function ten_ms = [](const scheduled_step &) { return 0.010; };

} // namespace

TEST_CASE("one request: its prompt in one step, its first token with it, one token a step after") {
  const simulation_result r = simulate_serving({{0, 100, 3}}, {}, ten_ms);
  REQUIRE(r.requests.size() == 1);
  CHECK(r.requests[0].ttft_s == doctest::Approx(0.010));
  CHECK(r.requests[0].latency_s == doctest::Approx(0.030));
  CHECK(r.requests[0].tpot_s == doctest::Approx(0.010));
  CHECK(r.steps == 3);
  CHECK(r.output_tokens_per_s == doctest::Approx(3 / 0.030));
}

TEST_CASE("a prompt longer than the step's token budget is prefilled in chunks") {
  scheduler_options options;
  options.token_budget = 128;
  // 300 tokens: 128, 128, then 44 with the first token.
  const simulation_result r = simulate_serving({{0, 300, 2}}, options, ten_ms);
  CHECK(r.requests[0].ttft_s == doctest::Approx(0.030));
  CHECK(r.requests[0].latency_s == doctest::Approx(0.040));
}

TEST_CASE("one running request at a time: the second waits for the first, then its prefill") {
  scheduler_options options;
  options.max_running = 1;
  const simulation_result r = simulate_serving({{0, 10, 3}, {0, 10, 3}}, options, ten_ms);
  CHECK(r.requests[0].ttft_s == doctest::Approx(0.010));
  CHECK(r.requests[1].ttft_s == doctest::Approx(0.040)); // after 30 ms, its own prefill step
  CHECK(r.requests[1].latency_s == doctest::Approx(0.060));
  CHECK(r.ttft.p50 == doctest::Approx(0.010));
  CHECK(r.ttft.p99 == doctest::Approx(0.040));
}

TEST_CASE("continuous batching: a request arriving mid-decode is prefilled beside the decodes, "
          "and the step takes what it holds") {
  // A step costs 10 ms plus 1 ms a decoding request plus 1 µs a prompt token.
  const step_time_function priced = [](const scheduled_step &s) {
    return 0.010 + 0.001 * static_cast<double>(s.decoding) +
           1e-6 * static_cast<double>(s.prefill_tokens);
  };
  const simulation_result r = simulate_serving({{0, 1000, 4}, {0.015, 1000, 2}}, {}, priced);
  // Step 1 (0 → 11 ms): the first prompt. Step 2 (→ 22 ms): its decode alone (the second has not
  // arrived at 11 ms). Step 3 (→ 34 ms): its decode and the second's prompt. Step 4 (→ 46 ms):
  // both decode; the first is done (4 tokens), the second too (2).
  CHECK(r.requests[0].ttft_s == doctest::Approx(0.011));
  CHECK(r.requests[0].latency_s == doctest::Approx(0.011 + 0.011 + 0.012 + 0.012));
  CHECK(r.requests[1].ttft_s == doctest::Approx(0.034 - 0.015));
  CHECK(r.requests[1].latency_s == doctest::Approx(0.046 - 0.015));
  CHECK(r.requests[1].tpot_s == doctest::Approx(0.012));
}

TEST_CASE("a step says how many requests its prompt tokens are of") {
  // Two prompts of 1000 arriving together share the first step; its prefill is of 2 requests.
  std::vector<scheduled_step> steps;
  const step_time_function recorded = [&](const scheduled_step &s) {
    steps.push_back(s);
    return 0.010;
  };
  simulate_serving({{0, 1000, 2}, {0, 1000, 2}}, {}, recorded);
  REQUIRE_FALSE(steps.empty());
  CHECK(steps.front().prefill_tokens == 2000);
  CHECK(steps.front().prefilling == 2);
  CHECK(steps.back().prefilling == 0);
}

TEST_CASE("a closed loop keeps its concurrency: each finished request replaced at once") {
  scheduler_options options;
  options.concurrency = 1;
  const simulation_result r =
      simulate_serving({{5, 10, 2}, {9, 10, 2}, {1, 10, 2}}, options, ten_ms);
  // One at a time, back to back, arrival times ignored: each 20 ms from its start.
  for (const served_request &s : r.requests) {
    CHECK(s.ttft_s == doctest::Approx(0.010));
    CHECK(s.latency_s == doctest::Approx(0.020));
  }
  CHECK(r.duration_s == doctest::Approx(0.060));
}

TEST_CASE("Poisson arrivals are seeded, and nonsense is refused") {
  const auto a = poisson_requests(10, 1000, 128, 128, 7),
             b = poisson_requests(10, 1000, 128, 128, 7);
  REQUIRE(a.size() == 1000);
  CHECK(a[999].arrival_s == b[999].arrival_s);
  // 999 gaps of 100 ms on average.
  CHECK(a[999].arrival_s == doctest::Approx(99.9).epsilon(0.15));
  CHECK_THROWS_AS(simulate_serving({}, {}, ten_ms), std::invalid_argument);
  CHECK_THROWS_AS(simulate_serving({{0, 0, 1}}, {}, ten_ms), std::invalid_argument);
  scheduler_options none;
  none.token_budget = 0;
  CHECK_THROWS_AS(simulate_serving({{0, 1, 1}}, none, ten_ms), std::invalid_argument);
  const percentiles p = percentiles_of({1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
  CHECK(p.p50 == 5);
  CHECK(p.p90 == 9);
  CHECK(p.p99 == 10);
}

TEST_CASE("a full KV cache preempts the request admitted last: its blocks freed, its prompt and "
          "first token recomputed when the first is done") {
  scheduler_options options;
  options.kv_capacity_tokens = 32; // two blocks of 16
  // Step 1: both prompts (a block each). Step 2: A's 17th token needs a second block: B is
  // preempted. Steps 2–10: A decodes alone to its 10th token. Step 11: B's 16 + 1 tokens again
  // (two blocks), its second token with them; steps 12–19: its 3rd to 10th.
  const simulation_result r = simulate_serving({{0, 16, 10}, {0, 16, 10}}, options, ten_ms);
  CHECK(r.preemptions == 1);
  CHECK(r.requests[0].ttft_s == doctest::Approx(0.010));
  CHECK(r.requests[0].latency_s == doctest::Approx(0.100));
  CHECK(r.requests[1].ttft_s == doctest::Approx(0.010));
  CHECK(r.requests[1].latency_s == doctest::Approx(0.190));
  CHECK(r.steps == 19);
  // A request that could not fit even alone is refused, not left to loop.
  CHECK_THROWS_AS(simulate_serving({{0, 30, 4}}, options, ten_ms), std::invalid_argument);
}

TEST_CASE("prefix caching: a prompt after the first starts past the shared prefix's whole "
          "blocks") {
  scheduler_options options;
  options.shared_prefix_tokens = 40; // two whole blocks of 16 are cached: 32 tokens
  // 10 ms a step and 1 µs a prompt token.
  const step_time_function priced = [](const scheduled_step &s) {
    return 0.010 + 1e-6 * static_cast<double>(s.prefill_tokens);
  };
  const simulation_result r = simulate_serving({{0, 100, 2}, {1, 100, 2}}, options, priced);
  CHECK(r.requests[0].ttft_s == doctest::Approx(0.010 + 100e-6));
  CHECK(r.requests[1].ttft_s == doctest::Approx(0.010 + 68e-6));
  // A cache of 7 blocks (112 tokens) holds one such request alone: its 100 + 2 − 1 tokens in 7
  // blocks, the prefix's 2 among them (once counted twice: 9 blocks, refused).
  options.kv_capacity_tokens = 112;
  CHECK_NOTHROW(simulate_serving({{0, 100, 2}}, options, priced));
  options.kv_capacity_tokens = 96;
  CHECK_THROWS_AS(simulate_serving({{0, 100, 2}}, options, priced), std::invalid_argument);
}

TEST_CASE("inter-token latency: each step's time once for each request it decodes; the targets "
          "met request by request") {
  // 10 ms plus 10 ms a decoding request: one alone decodes in 20 ms, two together in 30 ms.
  const step_time_function priced = [](const scheduled_step &s) {
    return 0.010 + 0.010 * static_cast<double>(s.decoding);
  };
  // Step 1 (→ 10 ms): A's prompt. Steps 2–3 (→ 50 ms): A decodes alone (B arrives at 35 ms, in
  // step 3). Step 4 (→ 70 ms): A decodes beside B's prompt. Step 5 (→ 100 ms): both decode; A is
  // done (5 tokens). Step 6 (→ 120 ms): B alone, done (3 tokens).
  const simulation_result r = simulate_serving({{0, 8, 5}, {0.035, 8, 3}}, {}, priced);
  REQUIRE(r.steps == 6);
  // Gaps: 20, 20, 20 (A), 30 (A), 30 (B), 20 (B): p50 20 ms, p90 and p99 30 ms.
  CHECK(r.itl.p50 == doctest::Approx(0.020));
  CHECK(r.itl.p90 == doctest::Approx(0.030));
  CHECK(r.requests[1].ttft_s == doctest::Approx(0.070 - 0.035));
  CHECK(requests_meeting(r, 0.020, std::nullopt) == 1); // A's 10 ms, not B's 35
  CHECK(requests_meeting(r, std::nullopt, 0.023) == 1); // A's 90/4 = 22.5 ms, not B's 50/2
  CHECK(requests_meeting(r, std::nullopt, std::nullopt) == 2);
}
