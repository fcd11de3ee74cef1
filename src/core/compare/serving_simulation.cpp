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
  std::int64_t computed = 0;   ///< tokens whose keys and values are in the cache
  std::int64_t to_prefill = 0; ///< tokens to compute before it decodes (its prompt, or more)
  std::int64_t generated = 0;  ///< output tokens so far
  std::int64_t blocks = 0;     ///< KV blocks it holds (beyond the shared prefix's)
  std::int64_t shared = 0;     ///< its prompt's first tokens, held in the shared prefix's blocks
  double arrival_s = 0, first_token_s = 0, last_token_s = 0, done_s = 0;
  bool decoding() const { return computed >= to_prefill; }
};

std::int64_t blocks_for(std::int64_t tokens, std::int64_t block) {
  return (tokens + block - 1) / block;
}

/// The shared prefix's tokens a request of `prompt` tokens can take from the cache: whole
/// blocks, short of its last token.
std::int64_t cached_prefix(const scheduler_options &o, std::int64_t prompt) {
  return std::min(o.shared_prefix_tokens, prompt - 1) / o.block_tokens * o.block_tokens;
}

void check(const std::vector<simulated_request> &requests, const scheduler_options &options) {
  if (requests.empty())
    throw std::invalid_argument("a serving simulation needs at least one request");
  if (options.max_running < 1 || options.token_budget < 1 || options.block_tokens < 1 ||
      options.shared_prefix_tokens < 0 || (options.concurrency && *options.concurrency < 1) ||
      (options.kv_capacity_tokens && *options.kv_capacity_tokens < options.block_tokens))
    throw std::invalid_argument("a scheduler needs room for a request and a token a step");
  std::int64_t prefix_blocks = 0; // the most a shared prefix can hold
  for (const simulated_request &r : requests)
    if (r.prompt_tokens >= 1)
      prefix_blocks =
          std::max(prefix_blocks, cached_prefix(options, r.prompt_tokens) / options.block_tokens);
  for (const simulated_request &r : requests) {
    if (r.prompt_tokens < 1 || r.output_tokens < 1 || !(r.arrival_s >= 0))
      throw std::invalid_argument("a simulated request needs a prompt, an output token and a "
                                  "non-negative arrival");
    // Alone, it holds its prompt and every output token but the last, the cached prefix's blocks
    // among them (the longest prefix cached, where another request's reaches further).
    if (options.kv_capacity_tokens &&
        blocks_for(r.prompt_tokens + r.output_tokens - 1, options.block_tokens) -
                cached_prefix(options, r.prompt_tokens) / options.block_tokens + prefix_blocks >
            *options.kv_capacity_tokens / options.block_tokens)
      throw std::invalid_argument("a request of " + std::to_string(r.prompt_tokens) + " + " +
                                  std::to_string(r.output_tokens) +
                                  " tokens outgrows the KV cache alone (" +
                                  std::to_string(*options.kv_capacity_tokens) + " tokens)");
  }
}

/// A served request's times; its inter-token gaps are recorded as the steps run.
served_request served_of(const simulated_request &r, const in_flight &s) {
  served_request served;
  served.ttft_s = s.first_token_s - s.arrival_s;
  served.latency_s = s.done_s - s.arrival_s;
  if (r.output_tokens > 1)
    served.tpot_s = (s.done_s - s.first_token_s) / static_cast<double>(r.output_tokens - 1);
  return served;
}

/// The scheduler's state through one simulation.
class scheduler {
public:
  scheduler(const std::vector<simulated_request> &requests, const scheduler_options &options)
      : m_requests(requests), m_options(options), m_state(requests.size()),
        m_order(requests.size()) {
    // Open loop: by arrival (stable, so equal arrivals keep their order); closed: as listed.
    std::iota(m_order.begin(), m_order.end(), 0);
    if (!options.concurrency)
      std::stable_sort(m_order.begin(), m_order.end(), [&](std::size_t a, std::size_t b) {
        return requests[a].arrival_s < requests[b].arrival_s;
      });
    if (options.kv_capacity_tokens)
      m_free_blocks = *options.kv_capacity_tokens / options.block_tokens;
    m_now = options.concurrency ? 0 : requests[m_order.front()].arrival_s;
  }

  simulation_result run(const step_time_function &step_time) {
    simulation_result result;
    const double start = m_now;
    while (m_finished < m_requests.size()) {
      arrive();
      if (m_running.empty() && m_waiting.empty()) { // nothing to run until the next arrival
        m_now = m_requests[m_order[m_next]].arrival_s;
        continue;
      }
      const scheduled_step step = schedule();
      if (step.decoding + step.prefill_tokens == 0)
        throw std::logic_error("a serving step scheduled nothing while requests wait");
      const double took = step_time(step);
      m_now += took;
      ++result.steps;
      advance();
    }
    double tokens = 0;
    for (std::size_t i = 0; i < m_requests.size(); ++i) {
      result.requests.push_back(served_of(m_requests[i], m_state[i]));
      tokens += static_cast<double>(m_requests[i].output_tokens);
    }
    result.duration_s = m_last_s - start;
    result.output_tokens_per_s = result.duration_s > 0 ? tokens / result.duration_s : 0;
    result.preemptions = m_preemptions;
    summarize(result);
    return result;
  }

private:
  void arrive() {
    for (; m_next < m_order.size(); ++m_next) {
      const std::size_t r = m_order[m_next];
      if (m_options.concurrency ? m_live >= *m_options.concurrency
                                : m_requests[r].arrival_s > m_now)
        break;
      m_state[r].arrival_s = m_options.concurrency ? m_now : m_requests[r].arrival_s;
      m_state[r].to_prefill = m_requests[r].prompt_tokens;
      m_waiting.push_back(r);
      ++m_live;
    }
  }

  /// This step's tokens for each running request (decodes first, then chunks, the oldest
  /// first), blocks allocated (preempting the newest where none are free), then admissions.
  scheduled_step schedule() {
    m_planned.clear();
    m_preempted_now = false;
    m_room = m_options.token_budget;
    for (int pass = 0; pass < 2; ++pass)
      for (std::size_t i = 0; i < m_running.size() && m_room > 0; ++i) {
        const std::size_t r = m_running[i];
        if (m_state[r].decoding() != (pass == 0))
          continue;
        const std::int64_t tokens =
            pass == 0 ? 1 : std::min(m_room, m_state[r].to_prefill - m_state[r].computed);
        if (!allocate_preempting(r, tokens))
          continue;
        m_planned.emplace_back(r, tokens);
        m_room -= tokens;
      }
    // As vLLM, no admission in a step that preempted: the blocks just freed go to the running.
    while (!m_preempted_now && m_room > 0 && !m_waiting.empty() &&
           static_cast<std::int64_t>(m_running.size()) < m_options.max_running) {
      const std::size_t r = m_waiting.front();
      start_prefill(r);
      const std::int64_t tokens = std::min(m_room, m_state[r].to_prefill - m_state[r].computed);
      if (!allocate(r, tokens))
        break;
      m_waiting.pop_front();
      m_running.push_back(r);
      m_planned.emplace_back(r, tokens);
      m_room -= tokens;
    }
    scheduled_step step;
    for (const auto &[r, tokens] : m_planned)
      if (m_state[r].decoding()) {
        ++step.decoding;
        step.decode_context_tokens += m_state[r].computed;
      } else {
        step.prefill_tokens += tokens;
        ++step.prefilling;
      }
    return step;
  }

  /// A request about to be admitted starts its prefill after the cached prefix, where cached.
  void start_prefill(std::size_t r) {
    in_flight &s = m_state[r];
    if (s.computed == 0 && s.shared == 0 && m_prefix_tokens > 0)
      s.computed = s.shared =
          std::min(cached_prefix(m_options, m_requests[r].prompt_tokens), m_prefix_tokens);
  }

  /// Blocks for `tokens` more of request r; false (nothing taken) where too few are free.
  bool allocate(std::size_t r, std::int64_t tokens) {
    if (!m_options.kv_capacity_tokens)
      return true;
    in_flight &s = m_state[r];
    const std::int64_t own = s.computed + tokens - s.shared;
    const std::int64_t needed = blocks_for(own, m_options.block_tokens) - s.blocks;
    if (needed > m_free_blocks)
      return false;
    m_free_blocks -= needed;
    s.blocks += needed;
    return true;
  }

  /// allocate, preempting the newest running request (r itself last) until it can; false
  /// where r was preempted.
  bool allocate_preempting(std::size_t r, std::int64_t tokens) {
    while (!allocate(r, tokens)) {
      const std::size_t victim = m_running.back();
      preempt(victim);
      if (victim == r)
        return false;
    }
    return true;
  }

  void preempt(std::size_t r) {
    in_flight &s = m_state[r];
    m_free_blocks += s.blocks;
    s.blocks = 0;
    s.computed = s.shared; // the shared prefix stays cached
    s.to_prefill = m_requests[r].prompt_tokens + s.generated;
    m_running.pop_back();
    // Its tokens planned this step, if any, go back to the step's budget.
    for (const auto &[planned, tokens] : m_planned)
      if (planned == r)
        m_room += tokens;
    m_planned.erase(std::remove_if(m_planned.begin(), m_planned.end(),
                                   [&](const auto &p) { return p.first == r; }),
                    m_planned.end());
    m_waiting.push_front(r);
    ++m_preemptions;
    m_preempted_now = true;
  }

  /// The step's tokens computed: a prefill that completes, or a decode, yields a token.
  void advance() {
    for (const auto &[r, tokens] : m_planned) {
      in_flight &s = m_state[r];
      s.computed += tokens;
      if (!s.decoding())
        continue;
      if (s.generated++ == 0)
        s.first_token_s = m_now;
      else // the gap since its last token: its steps, and any wait preempted or unscheduled
        m_gaps.push_back(static_cast<float>(m_now - s.last_token_s));
      s.last_token_s = m_now;
      if (m_options.shared_prefix_tokens > 0)
        cache_prefix(r);
    }
    const auto done = [&](std::size_t r) {
      return m_state[r].generated >= m_requests[r].output_tokens;
    };
    for (const std::size_t r : m_running)
      if (done(r)) {
        m_state[r].done_s = m_last_s = m_now;
        m_free_blocks += m_state[r].blocks;
        m_state[r].blocks = 0;
        ++m_finished;
        --m_live;
      }
    m_running.erase(std::remove_if(m_running.begin(), m_running.end(), done), m_running.end());
  }

  /// A prompt through more of the shared prefix than the cache holds leaves those blocks in
  /// it: request r hands them over, kept from then on (the first prompt, then any longer one).
  void cache_prefix(std::size_t r) {
    in_flight &s = m_state[r];
    const std::int64_t reach = cached_prefix(m_options, m_requests[r].prompt_tokens);
    if (reach <= m_prefix_tokens)
      return;
    // The blocks beyond what the cache held become the cache's; its own copies of those the
    // cache held already are freed at its next allocation (allocate() counts past `shared`).
    if (m_options.kv_capacity_tokens)
      s.blocks -= (reach - std::max(s.shared, m_prefix_tokens)) / m_options.block_tokens;
    s.shared = m_prefix_tokens = reach;
  }

  void summarize(simulation_result &result) {
    std::vector<double> ttft, tpot, latency;
    for (std::size_t i = 0; i < m_requests.size(); ++i) {
      ttft.push_back(result.requests[i].ttft_s);
      latency.push_back(result.requests[i].latency_s);
      if (m_requests[i].output_tokens > 1)
        tpot.push_back(result.requests[i].tpot_s);
    }
    result.ttft = percentiles_of(std::move(ttft));
    result.tpot = percentiles_of(std::move(tpot));
    result.latency = percentiles_of(std::move(latency));
    result.itl = percentiles_of(std::vector<double>(m_gaps.begin(), m_gaps.end()));
  }

  const std::vector<simulated_request> &m_requests;
  const scheduler_options &m_options;
  std::vector<in_flight> m_state;
  std::vector<std::size_t> m_order;
  std::size_t m_next = 0, m_finished = 0;
  std::int64_t m_live = 0, m_free_blocks = 0, m_preemptions = 0;
  std::int64_t m_prefix_tokens = 0; ///< the shared prefix's tokens in the cache
  bool m_preempted_now = false;     ///< this step preempted a request
  std::int64_t m_room = 0;          ///< this step's token budget left while it is scheduled
  double m_now = 0, m_last_s = 0;
  std::deque<std::size_t> m_waiting;
  std::vector<std::size_t> m_running;                          ///< in admission order
  std::vector<std::pair<std::size_t, std::int64_t>> m_planned; ///< this step's (request, tokens)
  std::vector<float> m_gaps; ///< every token's gap after its request's first, in seconds
};

} // namespace

double percentiles::at(int percentile) const {
  switch (percentile) {
  case 50: return p50;
  case 90: return p90;
  case 99: return p99;
  default: throw std::invalid_argument("a percentile is 50, 90 or 99");
  }
}

std::int64_t requests_meeting(const simulation_result &result, std::optional<double> ttft_s,
                              std::optional<double> tpot_s) {
  return std::count_if(
      result.requests.begin(), result.requests.end(), [&](const served_request &r) {
        return (!ttft_s || r.ttft_s <= *ttft_s) && (!tpot_s || r.tpot_s <= *tpot_s);
      });
}

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

std::vector<simulated_request> poisson_arrivals(std::vector<simulated_request> requests,
                                                double rate_per_s, unsigned seed) {
  if (!(rate_per_s > 0))
    throw std::invalid_argument("Poisson arrivals need a positive rate");
  std::mt19937_64 generator(seed);
  std::exponential_distribution<double> gap(rate_per_s);
  double now = 0;
  for (simulated_request &r : requests) {
    r.arrival_s = now;
    now += gap(generator);
  }
  return requests;
}

std::vector<simulated_request> poisson_requests(double rate_per_s, std::int64_t count,
                                                std::int64_t prompt_tokens,
                                                std::int64_t output_tokens, unsigned seed) {
  if (count < 1)
    throw std::invalid_argument("Poisson arrivals need at least one request");
  return poisson_arrivals(std::vector<simulated_request>(static_cast<std::size_t>(count),
                                                         {0, prompt_tokens, output_tokens}),
                          rate_per_s, seed);
}

simulation_result simulate_serving(const std::vector<simulated_request> &requests,
                                   const scheduler_options &options,
                                   const step_time_function &step_time) {
  check(requests, options);
  return scheduler(requests, options).run(step_time);
}

} // namespace roofline
