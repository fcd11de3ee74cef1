// SPDX-License-Identifier: Apache-2.0
#include "roofline/compare/serving.hpp"

#include "compared_setups.hpp"
#include "roofline/analysis/lowering.hpp"
#include "roofline/cluster/cluster_spec.hpp"
#include "roofline/common/error.hpp"
#include "roofline/model/collectives.hpp"
#include "text_format.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

namespace roofline {

namespace {

/// The output tokens a simulated load of `q` generates: its requests', or as many of the
/// question's as it simulates.
double simulated_outputs(const serving_question &q) {
  if (q.requests.empty())
    return static_cast<double>(q.simulated_requests) * static_cast<double>(q.output_tokens);
  double outputs = 0;
  for (const simulated_request &r : q.requests)
    outputs += static_cast<double>(r.output_tokens);
  return outputs;
}

/// The longest request `q` asks about: the question's, or a longer one of its list.
simulated_request longest_request(const serving_question &q) {
  simulated_request longest{0, q.prompt_tokens, q.output_tokens};
  for (const simulated_request &r : q.requests)
    if (r.prompt_tokens + r.output_tokens > longest.prompt_tokens + longest.output_tokens)
      longest = r;
  return longest;
}

} // namespace

void check_serving_question(const serving_question &q) {
  if (q.prompt_tokens < 1)
    throw input_error("serving_question::prompt_tokens: a request needs at least one prompt token");
  if (q.output_tokens < 1)
    throw input_error("serving_question::output_tokens: a request makes at least one output token");
  if (q.prompt_tokens > max_serving_tokens - q.output_tokens)
    throw input_error(fmt::format("serving_question::prompt_tokens {} + "
                                  "serving_question::output_tokens {}: a request is modelled "
                                  "up to {} tokens of context",
                                  q.prompt_tokens, q.output_tokens, max_serving_tokens));
  for (const auto &[target, option] :
       {std::pair{q.ttft_s, "serving_question::ttft_s"}, {q.tpot_s, "serving_question::tpot_s"}})
    if (target && !(std::isfinite(*target) && *target >= min_latency_target_s &&
                    *target <= max_latency_target_s))
      throw input_error(fmt::format("{} {:g}: a latency target must be from {:g} s (a "
                                    "microsecond) to {:g} s (an hour)",
                                    option, *target, min_latency_target_s, max_latency_target_s));
  if (q.tpot_s && q.output_tokens == 1)
    throw input_error("serving_question::tpot_s with serving_question::output_tokens 1: a request "
                      "of one output token has no time "
                      "per output token after the first; leave the TPOT target out, or ask for "
                      "more output tokens");
  // A simulated load costs a step per output token of the busiest stretch (a closed loop of one
  // request: every request's every token): bounded, so that no question runs for minutes.
  constexpr double max_simulated_tokens = 2e7;
  for (const simulated_request &r : q.requests)
    if (r.prompt_tokens < 1 || r.output_tokens < 1 ||
        r.prompt_tokens + r.output_tokens > max_serving_tokens)
      throw input_error(fmt::format("serving_question::requests: a request of {} prompt and {} "
                                    "output tokens; each needs one of each, {} in all at most",
                                    r.prompt_tokens, r.output_tokens, max_serving_tokens));
  const double outputs = simulated_outputs(q);
  if (q.simulates() && outputs > max_simulated_tokens)
    throw input_error(fmt::format(
        "serving_question::simulated_requests: a simulated load of {:g} output tokens; it is at "
        "most {:g}; simulate fewer requests",
        outputs, max_simulated_tokens));
  if (q.simulates() && q.requests.empty() && q.simulated_requests < 1)
    throw input_error("serving_question::simulated_requests: simulate at least one request");
  if (q.percentile != 50 && q.percentile != 90 && q.percentile != 99)
    throw input_error(fmt::format(
        "serving_question::percentile {}: the targets are held at p50, p90 or p99", q.percentile));
  if (q.max_running < 1 || q.max_running > max_serving_batch)
    throw input_error(fmt::format("serving_question::max_running {}: from 1 to {}", q.max_running,
                                  max_serving_batch));
  if (q.shared_prefix_tokens < 0)
    throw input_error("serving_question::shared_prefix_tokens: a prefix of no tokens or more");
  if (q.pipeline_parallel < 1 || q.pipeline_parallel > 64)
    throw input_error(fmt::format("serving_question::pipeline_parallel {}: from 1 to 64 stages",
                                  q.pipeline_parallel));
}

namespace {

/// What joins the nodes a serving pipeline spans: a 400 Gb/s NIC a GPU (InfiniBand NDR, as
/// clusters/dgx-h100.yaml says), 8 GPUs a node.
cluster_spec nodes_of_eight() {
  cluster_spec c;
  c.name = "nodes of 8 GPUs";
  c.gpus_per_node = 8;
  c.network_bytes_per_s = 50e9;
  return c;
}

/// The data-parallel attention ranks of `source` on `gpu`'s setup: its expert-parallel degree
/// where no tensor parallelism splits the attention (serving_setup::attention_ranks), else 1.
int attention_ranks(const config_source &source, const compared_gpu &gpu) {
  config_options options = source.options;
  options.tensor_parallel = gpu.tensor_parallel;
  return roofline::attention_ranks(options);
}

/// A request's two kinds of step on one setup, as an engine that batches continuously runs them:
/// `batch` requests decoding together, each new request's prompt prefilled in a step beside
/// them as one finishes (vLLM's, SGLang's and TensorRT-LLM's in-flight batching).
class request_steps {
public:
  /// `source` and `gpu` are held by reference: they outlive the search.
  request_steps(const config_source &source, const compared_gpu &gpu, serving_question q)
      : m_source(source), m_gpu(gpu), m_question(q), m_ranks(attention_ranks(source, gpu)),
        m_prefill(analyzed(prefill_network(1))),
        m_send_bytes_per_token(hidden_bytes(m_prefill.network)) {
    if (gpu.model.spec().interconnect)
      m_links = links_of(*gpu.model.spec().interconnect, gpu.model.parameters(),
                         gpu.model.options().network.value_or(network_of(nodes_of_eight())));
  }

  /// The setup's GPUs: a tensor-parallel group for each pipeline stage, or its data-parallel
  /// attention ranks.
  int gpus() const { return m_gpu.tensor_parallel * m_question.pipeline_parallel * m_ranks; }

  /// The decode step at `batch` with the cache at its longest (prompt + output): what memory
  /// must hold.
  analysis longest_decode(std::int64_t batch) const {
    return analyzed(
        build(inference_phase::decode, batch, m_question.prompt_tokens + m_question.output_tokens));
  }

  /// A rank's share of `requests` (all of them without data-parallel attention), rounded up.
  std::int64_t per_rank(std::int64_t requests) const { return (requests + m_ranks - 1) / m_ranks; }

  /// The activations one prompt's prefill holds at once (its LM head at the last position),
  /// with every rank's tokens at the experts (the most a prompt's step holds, whoever sends).
  double prefill_activation_bytes() const {
    if (m_ranks == 1)
      return m_prefill.memory ? m_prefill.memory->activation_bytes : 0;
    const analysis every_rank = analyzed(build(inference_phase::prefill, m_ranks, 0));
    return every_rank.memory ? every_rank.memory->activation_bytes : 0;
  }

  const serving_point &at(std::int64_t batch) {
    if (const auto found = m_points.find(batch); found != m_points.end())
      return found->second;
    serving_point p;
    p.batch = batch;
    const analysis &decode_step = mean_decode(batch, mean_cache());
    const double decode = step_time(decode_step, batch);
    const auto requests = static_cast<double>(batch);
    const auto outputs = static_cast<double>(m_question.output_tokens);
    // In the steady state `requests / outputs` requests finish each step and as many take their
    // place, so each step carries their prompts' prefill beside the decode (an upper bound: an
    // engine fusing the two reads the weights once). The prompts a step admits are prefilled
    // together, as one batch (engines batch them); fewer than one a step, one prompt's prefill
    // every so many steps. A new request's first token comes from a step that prefills its
    // prompt. Each such step is held to the power limit as one: a decode's spare power lets a
    // prefill beside it keep more of its clock than a prefill alone would.
    const double prompts = requests / outputs;
    const std::int64_t together = std::max<std::int64_t>(1, std::llround(prompts));
    const analysis &prefill_step = prefill_of(together);
    const double prefill = step_time(prefill_step, 1); // one micro-batch, every stage once
    const time_range decode_range = step_range(decode_step, batch),
                     prefill_range = step_range(prefill_step, 1);
    const double ttft_share = std::max(1.0, prompts) / static_cast<double>(together);
    const double tpot_share = prompts / static_cast<double>(together);
    const power_draw ttft_step = held(decode_step, prefill_step, ttft_share, batch);
    const power_draw tpot_step = held(decode_step, prefill_step, tpot_share, batch);
    p.ttft_s = ttft_step.step_s;
    p.tpot_s = tpot_step.step_s;
    p.ttft_range = decode_range;
    p.ttft_range += prefill_range * ttft_share;
    p.ttft_range = p.ttft_range * (p.ttft_s / (decode + ttft_share * prefill));
    p.tpot_range = decode_range;
    p.tpot_range += prefill_range * tpot_share;
    p.tpot_range = p.tpot_range * (p.tpot_s / (decode + tpot_share * prefill));
    // A pipeline's token crosses its stages' boundaries (the prompts' tokens, a prefill's).
    p.ttft_s += sends_s(static_cast<double>(together * m_question.prompt_tokens) * ttft_share);
    p.tpot_s += sends_s(requests / m_question.pipeline_parallel);
    p.joules_per_output_token = tpot_step.energy_j * gpus() / requests;
    p.average_power_w = tpot_step.average_w;
    p.joules_per_request = p.joules_per_output_token * outputs;
    p.request_latency_s = p.ttft_s + (outputs - 1) * p.tpot_s;
    p.requests_per_s = requests / p.request_latency_s;
    p.output_tokens_per_s = p.requests_per_s * outputs;
    const auto tokens_at = [&](double ttft, double tpot) {
      return requests * outputs / (ttft + (outputs - 1) * tpot);
    };
    p.output_tokens_per_s_low = tokens_at(p.ttft_range.high_s, p.tpot_range.high_s);
    p.output_tokens_per_s_high = tokens_at(p.ttft_range.low_s, p.tpot_range.low_s);
    p.output_tokens_per_s_per_gpu = p.output_tokens_per_s / gpus();
    p.meets_ttft = !m_question.ttft_s || p.ttft_s <= *m_question.ttft_s;
    p.has_tpot = m_question.output_tokens > 1;
    // Met by the numbers the report shows, and nothing else (check_serving_question refuses a
    // TPOT target for requests of one output token).
    p.meets_tpot = !m_question.tpot_s || p.tpot_s <= *m_question.tpot_s;
    return m_points.emplace(batch, p).first->second;
  }

  /// A simulated step's time: its decodes at their mean cache beside a prefill of its prompt
  /// tokens (the busiest rank's, priced as one sequence of them at the step's mean chunk, rounded
  /// up to 256 tokens: the chunks' attention to the cache before them is left out), each
  /// memoised. A decode's time is interpolated between its batch's at the question's mean cache
  /// and at twice it: attention's cost is linear in the cache, the rest does not depend on it.
  double simulated_step_s(const scheduled_step &step) {
    double total = 0;
    if (step.decoding > 0) {
      const std::int64_t d = step.decoding;
      const double at_mean = step_time(mean_decode(d, mean_cache()), d);
      total += at_mean;
      // The second point: twice the mean cache, or the most positions a learned table has.
      std::int64_t far = 2 * mean_cache();
      if (const auto &context = m_source.config.context(); context && context->learned)
        far = std::min(far, context->positions);
      if (far > mean_cache()) {
        const double slope =
            (step_time(mean_decode(d, far), d) - at_mean) / static_cast<double>(far - mean_cache());
        const double context =
            static_cast<double>(step.decode_context_tokens) / static_cast<double>(d);
        // Never below the line's own intercept (a cache of nothing: the step without its
        // attention), nor below a tenth of the step at the mean, should the line dip below it.
        const double intercept = at_mean - slope * static_cast<double>(mean_cache());
        const double line = at_mean + slope * (context - static_cast<double>(mean_cache()));
        if (std::isfinite(line))
          total = std::max({line, intercept, at_mean / 10});
      }
      total += sends_s(static_cast<double>(step.decoding) / m_question.pipeline_parallel);
    }
    if (const std::int64_t prefill_tokens = step.prefill_tokens; prefill_tokens > 0) {
      // Data-parallel attention: each request's chunk on its own rank, the busiest rank holding
      // its share of the prefilling requests (rounded up) at the step's mean chunk, the experts
      // serving the ranks they occupy.
      const std::int64_t requests = std::max<std::int64_t>(1, step.prefilling);
      const std::int64_t busiest = (prefill_tokens * per_rank(requests) + requests - 1) / requests;
      const std::int64_t rounded = (busiest + 255) / 256 * 256;
      const int occupied = busy_ranks(requests);
      auto found = m_chunk_s.find({rounded, occupied});
      if (found == m_chunk_s.end())
        found =
            m_chunk_s
                .emplace(std::pair{rounded, occupied},
                         step_time(
                             analyzed(build(inference_phase::prefill, 1, 0, rounded, occupied)), 1))
                .first;
      total += found->second + sends_s(static_cast<double>(prefill_tokens));
    }
    return total;
  }

private:
  analysis analyzed(const network &net) const {
    return analyze(net, m_gpu.model, m_gpu.selection, m_gpu.memory_reserve);
  }

  /// The decode step at `batch` with a cache of `kv_len` (the steady state's: mean_cache(), the
  /// mean of a request's decode steps: attention reads a cache growing by one token a step, so
  /// the step at the mid-point costs what they cost on average). Memoised: the steady state and
  /// the simulation ask for the same batches.
  const analysis &mean_decode(std::int64_t batch, std::int64_t kv_len) {
    const auto key = std::pair(batch, kv_len);
    if (const auto found = m_decodes.find(key); found != m_decodes.end())
      return found->second;
    // A pipeline's stages each hold one micro-batch of the running requests at a time.
    const std::int64_t micro_batch =
        (batch + m_question.pipeline_parallel - 1) / m_question.pipeline_parallel;
    return m_decodes.emplace(key, analyzed(build(inference_phase::decode, micro_batch, kv_len)))
        .first->second;
  }

  std::int64_t mean_cache() const {
    return m_question.prompt_tokens + m_question.output_tokens / 2;
  }

  /// The prefill of `prompts` whole prompts: a rank's share of them under data-parallel
  /// attention (the busiest rank's, rounded up).
  network prefill_network(std::int64_t prompts) const {
    return build(inference_phase::prefill, prompts, 0);
  }

  /// How many ranks `requests` occupy at the busiest rank's share of them: fewer than all where
  /// there are not enough to give each that share (1 without data-parallel attention).
  int busy_ranks(std::int64_t requests) const {
    const std::int64_t share = per_rank(requests);
    return static_cast<int>(std::min<std::int64_t>(m_ranks, (requests + share - 1) / share));
  }

  /// `batch` requests' step (one attention rank's share of them, the busiest's); a prefill of
  /// `prompt_tokens` each (the question's where 0). Under data-parallel attention the experts
  /// serve the tokens of the ranks the requests occupy (`occupied`; unset: busy_ranks(batch)),
  /// each bringing as many as this one.
  network build(inference_phase phase, std::int64_t batch, std::int64_t kv_len,
                std::int64_t prompt_tokens = 0, std::optional<int> occupied = std::nullopt) const {
    config_options options = m_source.options;
    options.phase = phase;
    options.batch = per_rank(batch);
    if (const int busy = occupied.value_or(busy_ranks(batch)); m_ranks > 1 && busy < m_ranks)
      options.token_ranks = busy;
    options.tensor_parallel = m_gpu.tensor_parallel;
    options.pipeline_parallel = m_question.pipeline_parallel;
    options.last_logits = phase == inference_phase::prefill;
    options.seq_len = phase == inference_phase::prefill
                          ? (prompt_tokens > 0 ? prompt_tokens : m_question.prompt_tokens)
                          : 1;
    options.kv_len = phase == inference_phase::decode ? std::optional(kv_len) : std::nullopt;
    return m_source.config.build(options);
  }

  /// How many of a stage's steps (`a`: one stage's network, with the embedding and the LM head)
  /// a pipeline step of `running` requests takes: the slowest stage's pace, one micro-batch a
  /// stage, where there are as many as stages; else a token's crossing of every stage, each
  /// stage's blocks once and the embedding and the LM head once. 1 without a pipeline.
  double crossings(const analysis &a, std::int64_t running) const {
    const auto stages = static_cast<double>(m_question.pipeline_parallel);
    if (stages < 2 || !(a.totals.time_s > 0))
      return 1;
    return std::max(std::min(static_cast<double>(running), stages), pipeline_passes(a));
  }

  /// A pipeline step's time for `running` requests (crossings() of the stage's step).
  double step_time(const analysis &a, std::int64_t running) const {
    return crossings(a, running) * (m_question.eager ? a.totals.time_s : a.totals.device_time_s);
  }

  /// The time of `a`, as step_time counts it, at the boost clock.
  double burst_time(const analysis &a, std::int64_t running) const {
    return crossings(a, running) * (m_question.eager
                                        ? a.power.work.step_s
                                        : a.power.burst_device_s(a.totals.device_time_s));
  }

  /// `tokens`' activations sent across the pipeline's stage boundaries, one after another, each
  /// over NVLink where its two stages share a node (of the links' GPUs), else the network; and
  /// the sampled tokens back from the last stage to the first (a message of a few bytes).
  double sends_s(double tokens) const {
    const int stages = m_question.pipeline_parallel, tp = m_gpu.tensor_parallel;
    if (stages < 2 || !m_links)
      return 0;
    const int node = std::max(1, m_links->nvlink.max_gpus());
    const auto send = [&](double bytes, int from_gpu, int to_gpu) {
      return collective_s(collective::send, bytes, {2, from_gpu / node == to_gpu / node ? 2 : 1},
                          *m_links);
    };
    double total = 0;
    for (int boundary = 1; boundary < stages; ++boundary)
      total += send(tokens * m_send_bytes_per_token, boundary * tp - 1, boundary * tp);
    return total + send(tokens * 4, stages * tp - 1, 0); // int32 token ids
  }

  /// The bytes of one token's hidden state between stages: the embedding's width (the model's),
  /// at its precision.
  static double hidden_bytes(const network &net) {
    for (const layer &l : net.layers)
      if (const auto *m = std::get_if<memory_layer>(&l.body);
          m && m->kind == memory_op_kind::embedding && m->features)
        return static_cast<double>(*m->features) * element_bytes(net.precision);
    return 0;
  }

  /// `decode` of `running` requests with `share` of `prefill` beside it, as one step under the
  /// power limit: in a pipeline each GPU runs its stage's micro-batches (one each, as many as
  /// stages at most) and its stage's share of the prefill once.
  power_draw held(const analysis &decode, const analysis &prefill, double share,
                  std::int64_t running) const {
    step_work work =
        decode.power.work *
        static_cast<double>(std::min<std::int64_t>(running, m_question.pipeline_parallel));
    work += prefill.power.work * share;
    work.step_s = burst_time(decode, running) + share * burst_time(prefill, 1);
    return draw_of(work, decode.budget, decode.power.regime);
  }

  /// The prefill of `prompts` prompts batched into one step (one prompt's: m_prefill). Under
  /// data-parallel attention each prompt is prefilled whole on its own rank, the busiest rank
  /// holding its share of them rounded up; the ranks' MoE layers run in lockstep, their experts
  /// serving the tokens of every rank that has a prompt.
  const analysis &prefill_of(std::int64_t prompts) {
    if (prompts == 1)
      return m_prefill;
    if (const auto found = m_prefills.find(prompts); found != m_prefills.end())
      return found->second;
    return m_prefills.emplace(prompts, analyzed(prefill_network(prompts))).first->second;
  }

  time_range step_range(const analysis &a, std::int64_t running) const {
    return (m_question.eager ? a.totals.range : a.totals.device_range) * crossings(a, running);
  }

  const config_source &m_source;
  const compared_gpu &m_gpu;
  serving_question m_question;
  int m_ranks = 1; ///< data-parallel attention ranks (serving_setup::attention_ranks)
  analysis m_prefill;
  std::map<std::int64_t, analysis> m_prefills; ///< batched prefills, by their prompts
  /// mean_decode's, by batch and cache.
  std::map<std::pair<std::int64_t, std::int64_t>, analysis> m_decodes;
  /// Simulated prefill chunks' times, by the busiest rank's tokens and the ranks occupied.
  std::map<std::pair<std::int64_t, int>, double> m_chunk_s;
  std::map<std::int64_t, serving_point> m_points;
  double m_send_bytes_per_token = 0; ///< the hidden state of a token
  std::optional<cluster_links> m_links;
};

/// The prompts a step prefills at once, for memory: one, or all of those admitted together.
std::int64_t prompts_per_step(std::int64_t batch, std::int64_t outputs) {
  return std::max<std::int64_t>(1, (batch + outputs - 1) / outputs);
}

/// Memory of a setup at `batch`: `decode`, the decode step's at that batch with every cache at
/// its longest, and the activations of the prompts a step prefills beside it (both held at once,
/// an upper bound).
memory_use serving_memory(const memory_use &decode, double prefill_activations, std::int64_t batch,
                          std::int64_t outputs) {
  memory_use m = decode;
  m.activation_bytes += prefill_activations * static_cast<double>(prompts_per_step(batch, outputs));
  m.total_bytes = decode.total_bytes - decode.activation_bytes + m.activation_bytes;
  m.fits = m.total_bytes <= m.usable_bytes();
  m.max_batch = std::nullopt; // a serving setup's is serving_setup::largest_fitting_batch
  return m;
}

/// The largest batch whose serving_memory fits, none when not one request's does: the decode
/// step's bytes grow in proportion to the batch (memory_of's rule), the prompts prefilled with
/// it in steps of `outputs` requests; by bisection.
std::optional<std::int64_t> largest_fitting(const memory_use &one, double prefill_activations,
                                            std::int64_t outputs, const request_steps &steps) {
  const double fixed = one.total_bytes - one.kv_cache_bytes - one.activation_bytes;
  const double per_request = one.kv_cache_bytes + one.activation_bytes;
  const auto fits = [&](std::int64_t batch) { // each GPU its rank's share of the batch
    const std::int64_t mine = steps.per_rank(batch);
    return fixed + per_request * static_cast<double>(mine) +
               prefill_activations * static_cast<double>(prompts_per_step(mine, outputs)) <=
           one.usable_bytes();
  };
  if (!fits(1))
    return std::nullopt;
  std::int64_t low = 1, high = 2;
  while (high < (std::int64_t{1} << 40) && fits(high))
    low = high, high *= 2;
  while (high - low > 1) {
    const std::int64_t middle = low + (high - low) / 2;
    (fits(middle) ? low : high) = middle;
  }
  return low;
}

/// The throughput–latency curve up to `largest` (powers of two, and `largest`), and the largest
/// batch meeting the targets: between the last curve point that meets them and the next, by
/// bisection (a step's time grows with its batch).
void search(serving_setup &setup, request_steps &steps, std::int64_t largest) {
  for (std::int64_t b = 1;; b *= 2) {
    setup.curve.push_back(steps.at(std::min(b, largest)));
    if (b >= largest || b > largest / 2)
      break;
  }
  if (setup.curve.back().batch != largest)
    setup.curve.push_back(steps.at(largest));
  const auto first_miss = std::find_if(setup.curve.begin(), setup.curve.end(),
                                       [](const serving_point &p) { return !p.meets_targets(); });
  const auto missed = [](const serving_point &p) { return p.meets_ttft ? "TPOT" : "TTFT"; };
  if (first_miss == setup.curve.begin()) {
    setup.chosen = setup.curve.front();
    setup.limited_by = missed(setup.curve.front());
    return;
  }
  std::int64_t good = std::prev(first_miss)->batch;
  if (first_miss == setup.curve.end()) {
    setup.chosen = steps.at(good);
    setup.limited_by = largest < *setup.largest_fitting_batch ? "batch cap" : "memory";
    return;
  }
  std::int64_t bad = first_miss->batch;
  while (bad - good > 1) {
    const std::int64_t mid = good + (bad - good) / 2;
    (steps.at(mid).meets_targets() ? good : bad) = mid;
  }
  setup.chosen = steps.at(good);
  setup.limited_by = missed(steps.at(bad));
}

/// The ops of a request's last decode step, alone (batch 1, its cache at prompt + output), at
/// `tensor_parallel` GPUs: what a setup must have a unit for, and where its cache's format shows.
std::vector<op> request_decode_ops(const config_source &source, const serving_question &q,
                                   int tensor_parallel) {
  config_options options = source.options;
  options.tensor_parallel = tensor_parallel;
  options.phase = inference_phase::decode;
  options.batch = 1;
  options.seq_len = 1;
  options.kv_len = q.prompt_tokens + q.output_tokens;
  return lower(source.config.build(options));
}

/// Why `gpu` cannot run the request's steps (a unit it has no rate for), in words; "" where it
/// can: checked on the decode step, whose ops are the prefill's.
std::string unsupported_on(const config_source &source, const compared_gpu &gpu,
                           const serving_question &q) {
  const gpu_spec &spec = gpu.model.spec();
  for (const op &o : request_decode_ops(source, q, gpu.tensor_parallel))
    if (!spec.supports(o.unit()))
      return spec.unsupported_message(o.unit());
  return {};
}

/// The format the request's decode step stores its KV cache in; "" where it has no fused
/// attention with a cache.
std::string kv_cache_format(const config_source &source, const serving_question &q) {
  for (const op &o : request_decode_ops(source, q, 1))
    if (o.attention)
      return std::string(to_string(o.attention->kv_precision.value_or(o.precision)));
  return {};
}

/// A batch just below `chosen` on a boundary GEMM tiles fill whole (a multiple of 64, 128 or
/// 256 requests) that serves more output tokens a second and still meets the targets; none where
/// no such batch beats it by more than half a percent.
std::optional<serving_point> more_throughput_below(const serving_point &chosen,
                                                   request_steps &steps) {
  std::optional<serving_point> best;
  for (const std::int64_t multiple : {64, 128, 256}) {
    const std::int64_t batch = chosen.batch / multiple * multiple;
    if (batch <= 0 || batch == chosen.batch)
      continue;
    const serving_point &p = steps.at(batch);
    if (p.meets_targets() && p.output_tokens_per_s > 1.005 * chosen.output_tokens_per_s &&
        (!best || p.output_tokens_per_s > best->output_tokens_per_s))
      best = p;
  }
  return best;
}

/// The question's requests at a load: `rate` requests a second (Poisson), `concurrency` in
/// flight, or the requests' own arrivals; their lengths the list's, else the question's.
simulation_result simulated_load(const serving_question &q, request_steps &steps,
                                 std::int64_t kv_capacity_tokens, std::optional<double> rate,
                                 std::optional<std::int64_t> concurrency) {
  scheduler_options options;
  options.max_running = q.max_running;
  options.concurrency = concurrency;
  options.kv_capacity_tokens = kv_capacity_tokens;
  options.shared_prefix_tokens = q.shared_prefix_tokens;
  std::vector<simulated_request> requests =
      q.requests.empty()
          ? std::vector<simulated_request>(static_cast<std::size_t>(q.simulated_requests),
                                           {0, q.prompt_tokens, q.output_tokens})
          : q.requests;
  if (rate)
    requests = poisson_arrivals(std::move(requests), *rate);
  try {
    return simulate_serving(requests, options, [&](const scheduled_step &step) {
      return steps.simulated_step_s(step);
    });
  } catch (const std::invalid_argument &e) { // what the question asked cannot be simulated
    throw input_error(std::string("serving_question::requests: ") + e.what());
  }
}

/// Whether a simulated load is a steady state, not a burst: its requests outnumber three times
/// those in flight at it (by Little's law, the rate times the median latency; a concurrency
/// itself), so that most of them meet a full server.
bool steady(const simulation_result &r, double load, bool by_rate) {
  const double in_flight = by_rate ? load * r.latency.p50 : load;
  return static_cast<double>(r.requests.size()) >= 3 * in_flight;
}

/// The highest rate (or concurrency, as the question's load is given) whose simulated
/// percentile meets the targets in a steady state (steady()): from the asked load, doubled or
/// halved until it brackets the limit (at most thirty times), then bisected to 2% (a rate) or to
/// one request (a concurrency); the probes together simulate at most 2e8 output tokens (about as
/// many seconds as ten loads of check_serving_question's bound), the best found by then kept;
/// `lowest_tried`, the least load simulated.
std::optional<serving_setup::load_limit> highest_load(const serving_question &q,
                                                      request_steps &steps,
                                                      std::int64_t kv_capacity_tokens,
                                                      double &lowest_tried) {
  if (!(q.ttft_s || q.tpot_s) || !(q.rate_per_s || q.concurrency))
    return std::nullopt;
  const bool by_rate = q.rate_per_s.has_value();
  const auto probe = [&](double load) {
    serving_setup::load_limit at;
    at.load = load;
    at.simulated = by_rate ? simulated_load(q, steps, kv_capacity_tokens, load, std::nullopt)
                           : simulated_load(q, steps, kv_capacity_tokens, std::nullopt,
                                            static_cast<std::int64_t>(load));
    at.meeting_targets = requests_meeting(at.simulated, q.ttft_s, q.tpot_s);
    return at;
  };
  const double asked = by_rate ? *q.rate_per_s : static_cast<double>(*q.concurrency);
  const double most =
      by_rate ? 1e6
              : std::max(asked, static_cast<double>(std::min(q.max_running, max_serving_batch)));
  const double outputs_per_probe = simulated_outputs(q);
  double budget = 2e8;
  std::optional<serving_setup::load_limit> good;
  std::optional<double> bad;
  bool bad_unsteady = false; // the lowest load that failed met the targets, but as a burst
  const auto try_load = [&](double load) {
    budget -= outputs_per_probe;
    lowest_tried = lowest_tried > 0 ? std::min(lowest_tried, load) : load;
    serving_setup::load_limit at = probe(load);
    const bool targets = *meets_at_percentile(q, at.simulated);
    const bool met = targets && steady(at.simulated, load, by_rate);
    if (met && (!good || load > good->load)) {
      good = std::move(at);
    } else if (!met && (!bad || load < *bad)) {
      bad = load;
      bad_unsteady = targets;
    }
  };
  try_load(asked);
  for (int i = 0; i < 30 && !(good && bad) && budget > 0; ++i) {
    const double next =
        good ? std::min(most, good->load * 2) : (by_rate ? *bad / 2 : std::floor(*bad / 2));
    if (next < 1e-6 || next == (good ? good->load : *bad))
      break; // nothing meets the targets, or the greatest load does
    try_load(next);
  }
  if (!good || !bad)
    return good;
  while (budget > 0 && *bad > good->load &&
         (by_rate ? *bad - good->load > 0.02 * good->load : *bad - good->load > 1))
    try_load(by_rate ? (good->load + *bad) / 2 : std::floor((good->load + *bad) / 2));
  good->limited_by_requests = bad_unsteady;
  return good;
}

/// "h100-sxm5 ×8", and " ×2 stages" where it is a pipeline.
std::string setup_name_of(const gpu_spec &spec, const serving_setup &setup) {
  if (setup.attention_ranks > 1)
    return fmt::format("{} ×{} EP", spec.name, setup.attention_ranks);
  const std::string name = detail::setup_name(spec, setup.tensor_parallel);
  return setup.pipeline_parallel > 1 ? fmt::format("{} ×{} stages", name, setup.pipeline_parallel)
                                     : name;
}

serving_setup serve_on(const config_source &source, const compared_gpu &gpu,
                       const serving_question &q, const std::map<std::string, double> &prices) {
  serving_setup setup;
  setup.tensor_parallel = gpu.tensor_parallel;
  setup.pipeline_parallel = q.pipeline_parallel;
  setup.attention_ranks = attention_ranks(source, gpu);
  setup.unsupported = unsupported_on(source, gpu, q);
  if (!setup.unsupported.empty()) {
    setup.analysis.model = gpu.model;
    setup.analysis.device_selection = gpu.selection;
    setup.name = setup_name_of(gpu.model.spec(), setup);
    setup.usd_per_hour = detail::price_per_hour(gpu.model.spec(), prices, setup.gpus());
    return setup;
  }
  request_steps steps(source, gpu, q);
  setup.analysis = steps.longest_decode(1);
  const gpu_spec &spec = setup.analysis.model.spec();
  setup.name = setup_name_of(spec, setup);
  setup.usd_per_hour = detail::price_per_hour(spec, prices, setup.gpus());
  const double prefill_activations = steps.prefill_activation_bytes();
  setup.memory = serving_memory(*setup.analysis.memory, prefill_activations, 1, q.output_tokens);
  setup.largest_fitting_batch =
      largest_fitting(*setup.analysis.memory, prefill_activations, q.output_tokens, steps);
  if (!setup.largest_fitting_batch)
    return setup;
  search(setup, steps, std::min(*setup.largest_fitting_batch, max_serving_batch));
  setup.most_throughput = more_throughput_below(*setup.chosen, steps);
  if (q.simulates()) {
    // What the largest fitting batch of the question's requests holds, in whole blocks of 16
    // tokens as the scheduler counts them (each request's prompt whole: a shared prefix cached
    // once leaves room for more of them, which the scheduler sees).
    const scheduler_options blocks;
    const std::int64_t block = blocks.block_tokens;
    const auto whole = [&](std::int64_t tokens) { return (tokens + block - 1) / block * block; };
    setup.kv_capacity_tokens =
        *setup.largest_fitting_batch * whole(q.prompt_tokens + q.output_tokens);
    // A request whose cache alone outgrows the setup's cannot be served there: no load is.
    const simulated_request longest_one = longest_request(q);
    const std::int64_t longest = longest_one.prompt_tokens + longest_one.output_tokens;
    if (whole(longest) > setup.kv_capacity_tokens) {
      setup.analysis.notes.push_back(fmt::format(
          "{}: no load simulated: a request of {} tokens outgrows the KV cache it holds ({} "
          "tokens)",
          setup.name, longest, setup.kv_capacity_tokens));
    } else {
      setup.simulated =
          simulated_load(q, steps, setup.kv_capacity_tokens, q.rate_per_s, q.concurrency);
      setup.highest_load =
          highest_load(q, steps, setup.kv_capacity_tokens, setup.lowest_load_tried);
    }
  }
  if (const std::int64_t batch = setup.chosen->batch; batch > 1)
    setup.memory = serving_memory(*steps.longest_decode(batch).memory, prefill_activations,
                                  steps.per_rank(batch), q.output_tokens);
  // The energy's cost per token, where priced, on top of the hourly price's.
  const double energy_usd =
      gpu.energy_usd_per_kwh
          ? energy_usd_per_million(setup.chosen->joules_per_output_token, *gpu.energy_usd_per_kwh)
          : 0;
  const auto usd_per_million = [&](double tokens_per_s) {
    return detail::usd_per_million(*setup.usd_per_hour, tokens_per_s) + energy_usd;
  };
  if (setup.highest_load && setup.usd_per_hour)
    setup.highest_load->usd_per_million_output_tokens =
        usd_per_million(setup.highest_load->simulated.output_tokens_per_s);
  if (setup.meets_targets() && setup.usd_per_hour) {
    setup.usd_per_million_output_tokens = usd_per_million(setup.chosen->output_tokens_per_s);
    setup.usd_per_million_output_tokens_range =
        std::pair(usd_per_million(setup.chosen->output_tokens_per_s_high),
                  usd_per_million(setup.chosen->output_tokens_per_s_low));
  }
  return setup;
}

} // namespace

std::string targets_phrase(const serving_question &q) {
  std::vector<std::string> parts;
  if (q.ttft_s)
    parts.push_back("TTFT ≤ " + detail::duration(*q.ttft_s));
  if (q.tpot_s)
    parts.push_back("TPOT ≤ " + detail::duration(*q.tpot_s));
  return parts.empty()       ? std::string{}
         : parts.size() == 1 ? parts[0]
                             : parts[0] + " and " + parts[1];
}

std::optional<bool> meets_at_percentile(const serving_question &q, const simulation_result &r) {
  if (!q.ttft_s && !q.tpot_s)
    return std::nullopt;
  return (!q.ttft_s || r.ttft.at(q.percentile) <= *q.ttft_s) &&
         (!q.tpot_s || r.tpot.at(q.percentile) <= *q.tpot_s);
}

namespace {

/// "batch 64 (TTFT 210 ms, TPOT 38.1 ms, 1650 output tokens/s per GPU)"
std::string point_phrase(const serving_point &p) {
  const std::string tpot = p.has_tpot ? ", TPOT " + detail::duration(p.tpot_s) : "";
  return fmt::format("batch {} (TTFT {}{}, {} output tokens/s per GPU)", p.batch,
                     detail::duration(p.ttft_s), tpot,
                     detail::significant(p.output_tokens_per_s_per_gpu));
}

/// Why a setup that fits meets no target at batch 1.
std::string missed_phrase(const serving_setup &s, const serving_question &q) {
  const serving_point &p = *s.chosen;
  std::vector<std::string> missed;
  if (!p.meets_ttft)
    missed.push_back(
        fmt::format("TTFT {} > {}", detail::duration(p.ttft_s), detail::duration(*q.ttft_s)));
  if (!p.meets_tpot)
    missed.push_back(
        fmt::format("TPOT {} > {}", detail::duration(p.tpot_s), detail::duration(*q.tpot_s)));
  std::string text = s.name + " (";
  for (std::size_t i = 0; i < missed.size(); ++i)
    text += (i == 0 ? "" : ", ") + missed[i];
  return text + " at batch 1)";
}

std::string joined(const std::vector<std::string> &items) {
  std::string text;
  for (std::size_t i = 0; i < items.size(); ++i)
    text += (i == 0 ? "" : "; ") + items[i];
  return text;
}

/// " Within the model's error (p10–p90), …" naming the setups meeting the targets whose price
/// or throughput interval overlaps the cheapest's or the fastest's (recorded in `v`); "" when
/// none does.
std::string within_error_sentence(const serving_comparison &c, const serving_setup *cheapest,
                                  const serving_setup *fastest, serving_verdict &v) {
  std::vector<std::string> parts;
  const auto price = [](const serving_setup &s) {
    return fmt::format("${:.3g}–{:.3g}", s.usd_per_million_output_tokens_range->first,
                       s.usd_per_million_output_tokens_range->second);
  };
  const auto tokens = [](const serving_setup &s) {
    return fmt::format("{}–{}", detail::significant(s.chosen->output_tokens_per_s_low / s.gpus()),
                       detail::significant(s.chosen->output_tokens_per_s_high / s.gpus()));
  };
  for (const serving_setup &s : c.setups) {
    if (!s.meets_targets())
      continue;
    if (cheapest && &s != cheapest && s.usd_per_million_output_tokens_range &&
        s.usd_per_million_output_tokens_range->first <=
            cheapest->usd_per_million_output_tokens_range->second) {
      v.cheapest_within_error.push_back(s.name);
      parts.push_back(fmt::format("{} ({} per million) may be as cheap as {} ({})", s.name,
                                  price(s), cheapest->name, price(*cheapest)));
    }
    if (fastest && &s != fastest &&
        s.chosen->output_tokens_per_s_high / s.gpus() >=
            fastest->chosen->output_tokens_per_s_low / fastest->gpus()) {
      v.fastest_within_error.push_back(s.name);
      parts.push_back(fmt::format("{} ({} output tokens/s per GPU) may serve as many as {} ({})",
                                  s.name, tokens(s), fastest->name, tokens(*fastest)));
    }
  }
  return parts.empty() ? std::string{}
                       : " Within the model's error (p10–p90): " + joined(parts) + ".";
}

/// " Simulated, meeting … at p90: cheapest …; most output per GPU …": the setups compared at
/// their highest load meeting the targets (where one was searched); "" where none was.
std::string under_load_sentence(const serving_comparison &c) {
  const serving_setup *cheapest = nullptr, *fastest = nullptr;
  const auto per_gpu = [](const serving_setup &s) {
    return s.highest_load->simulated.output_tokens_per_s / s.gpus();
  };
  for (const serving_setup &s : c.setups) {
    if (!s.highest_load)
      continue;
    if (const auto &usd = s.highest_load->usd_per_million_output_tokens;
        usd && (!cheapest || *usd < *cheapest->highest_load->usd_per_million_output_tokens))
      cheapest = &s;
    if (!fastest || per_gpu(s) > per_gpu(*fastest))
      fastest = &s;
  }
  if (!fastest)
    return {};
  const auto load = [&](const serving_setup &s) {
    return c.question.rate_per_s ? detail::significant(s.highest_load->load) + " requests/s"
                                 : fmt::format("{} requests at a time", s.highest_load->load);
  };
  std::string text = fmt::format(" Simulated, meeting {} at p{} (the steady state above is a "
                                 "quick bound):",
                                 targets_phrase(c.question), c.question.percentile);
  if (cheapest)
    text += fmt::format(" cheapest {} up to {}, ${:.4g} per million output tokens;", cheapest->name,
                        load(*cheapest), *cheapest->highest_load->usd_per_million_output_tokens);
  return text + fmt::format(" most output per GPU {} up to {}, {} output tokens/s per GPU.",
                            fastest->name, load(*fastest), detail::significant(per_gpu(*fastest)));
}

serving_verdict decide(const serving_comparison &c) {
  serving_verdict v;
  const std::string targets = targets_phrase(c.question);
  const serving_setup *cheapest = nullptr, *fastest = nullptr;
  std::vector<std::string> too_small, missing, cannot_run;
  for (const serving_setup &s : c.setups) {
    if (!s.unsupported.empty()) {
      cannot_run.push_back(fmt::format("{} ({})", s.name, s.unsupported));
      continue;
    }
    if (!s.chosen) {
      too_small.push_back(fmt::format("{} (one request needs {} of {})", s.name,
                                      detail::gigabytes(s.memory->total_bytes),
                                      detail::gigabytes(s.memory->usable_bytes())));
      continue;
    }
    if (!s.meets_targets()) {
      missing.push_back(missed_phrase(s, c.question));
      continue;
    }
    if (s.usd_per_million_output_tokens &&
        (!cheapest || *s.usd_per_million_output_tokens < *cheapest->usd_per_million_output_tokens))
      cheapest = &s;
    if (!fastest ||
        s.chosen->output_tokens_per_s_per_gpu > fastest->chosen->output_tokens_per_s_per_gpu)
      fastest = &s;
  }
  const std::string meeting =
      targets.empty() ? std::string("at the largest batch that fits") : "meeting " + targets;
  if (!fastest)
    v.text =
        targets.empty() ? "No setup fits one request." : fmt::format("No setup meets {}.", targets);
  if (cheapest) {
    v.cheapest = cheapest->name;
    v.text += fmt::format("Cheapest {}: {} at {}, ${:.4g} per million output tokens.", meeting,
                          cheapest->name, point_phrase(*cheapest->chosen),
                          *cheapest->usd_per_million_output_tokens);
  }
  if (fastest) {
    v.fastest = fastest->name;
    if (fastest == cheapest)
      v.text += " It also serves the most output tokens per second per GPU.";
    else
      v.text +=
          fmt::format("{}Most output tokens per second per GPU {}: {} at {}.", cheapest ? " " : "",
                      meeting, fastest->name, point_phrase(*fastest->chosen));
  }
  if (cheapest || fastest)
    v.text += within_error_sentence(c, cheapest, fastest, v);
  // The least energy per output token, meeting the targets (where the power limit is known).
  const serving_setup *frugal = nullptr;
  for (const serving_setup &s : c.setups)
    if (s.meets_targets() && s.chosen->joules_per_output_token > 0 && s.analysis.budget.cap_w > 0 &&
        (!frugal || s.chosen->joules_per_output_token < frugal->chosen->joules_per_output_token))
      frugal = &s;
  if (frugal)
    v.text += fmt::format(
        " Least energy per output token {}: {} at {} J ({} output tokens per "
        "kWh).",
        meeting, frugal->name, detail::significant(frugal->chosen->joules_per_output_token),
        detail::significant(joules_per_kwh / frugal->chosen->joules_per_output_token));
  for (const serving_setup &s : c.setups)
    if (s.meets_targets() && s.most_throughput)
      v.text += fmt::format(
          " {} serves {} more output tokens a second at batch {} than at its largest, {} (GEMM "
          "tiles filled whole).",
          s.name,
          detail::percent(s.most_throughput->output_tokens_per_s / s.chosen->output_tokens_per_s -
                          1),
          s.most_throughput->batch, s.chosen->batch);
  v.text += under_load_sentence(c);
  if (fastest && !cheapest) // specs carry no prices: they change by the week and by the buyer
    v.text +=
        " No price is known: give compare_request::prices GPU=USD/h to rank the setups by cost.";
  if (!missing.empty())
    v.text += " Misses the targets even one request at a time: " + joined(missing) + ".";
  if (!too_small.empty())
    v.text += " Does not fit: " + joined(too_small) + ".";
  if (!cannot_run.empty())
    v.text += " Cannot run the model: " + joined(cannot_run) + ".";
  return v;
}

} // namespace

serving_comparison serve(const compare_request &request, const serving_question &question) {
  check_serving_question(question);
  const auto *source = std::get_if<config_source>(&request.source);
  if (!source)
    throw input_error("serving_question::prompt_tokens and serving_question::output_tokens need a "
                      "model config (a .json file): a "
                      "network YAML is one step, not a prefill and its decode steps");
  if (!request.batches.empty())
    throw input_error("compare_request::batches with serving_question::prompt_tokens: a serving "
                      "question chooses each setup's "
                      "batch (the largest that fits and meets the targets)");
  if (std::find(request.gpus.begin(), request.gpus.end(), "local") != request.gpus.end())
    throw input_error("compare_request::gpus local with serving_question::prompt_tokens: a serving "
                      "question is predicted; name "
                      "the local GPU's spec instead");
  if (source->options.mode == run_mode::training)
    throw input_error("a serving question is of a model served, not trained: build its config "
                      "in inference (config_options::mode)");
  if (const int ep = source->options.expert_parallel; ep > 1) {
    for (const int tp :
         request.tensor_parallel.empty() ? std::vector<int>{1} : request.tensor_parallel)
      if (tp != ep && tp != 1)
        throw input_error(fmt::format(
            "config_options::expert_parallel {} with compare_request::tensor_parallel {}: a "
            "served setup spreads its experts over its tensor-parallel GPUs, as vLLM's expert "
            "parallelism does (the same degree), or without tensor parallelism over as many "
            "GPUs of data-parallel attention",
            ep, tp));
    if (question.pipeline_parallel > 1)
      throw input_error("config_options::expert_parallel with serving_question::"
                        "pipeline_parallel: a pipeline of experts spread over GPUs is not "
                        "modelled; serve a stage's experts by tensor parallelism");
  }
  // A rotary model runs on past its context (noted); a learned position table cannot. The
  // longest request is the question's or a simulated one's.
  const simulated_request longest = longest_request(question);
  std::int64_t past_context = 0;
  const auto &context = source->config.context();
  for (const simulated_request &r : question.requests)
    past_context += context && r.prompt_tokens + r.output_tokens > context->positions;
  if (context && context->learned &&
      longest.prompt_tokens + longest.output_tokens > context->positions)
    throw input_error({source->config.origin()},
                      fmt::format("a request of {} prompt and {} output tokens is longer than the "
                                  "model's context: {}",
                                  longest.prompt_tokens, longest.output_tokens,
                                  context->describe()));
  const std::map<std::string, gpu_spec> specs = resolve_compared_gpus(request);
  detail::check_prices_and_degrees(request);
  // Before any analysis: each setup analyses its steps at about 3 · log2(max_serving_batch)
  // batches (the curve and the bisection), each the network's ops.
  const auto setups = static_cast<std::int64_t>(
      request.gpus.size() * std::max<std::size_t>(1, request.tensor_parallel.size()));
  constexpr std::int64_t analyses_per_setup = 40;
  if (const std::int64_t ops = op_count(source->config.build(source->options));
      ops > max_compared_ops / (setups * analyses_per_setup))
    throw input_error(fmt::format(
        "compare: {} setups (each compare_request::tensor_parallel degree one) of a serving "
        "question × about {} steps each × the network's {} ops would "
        "analyse more than {} ops, the limit; ask about fewer at once",
        setups, analyses_per_setup, ops, max_compared_ops));
  const detail::compared_sides sides = detail::sides_of(request, specs);
  const std::map<std::string, double> prices =
      detail::prices_by_spec(request, specs, sides.local_name);
  serving_comparison c;
  c.network_name = std::filesystem::path(source->config.origin()).stem().string();
  c.question = question;
  c.kv_cache = kv_cache_format(*source, question);
  for (const compared_gpu &gpu : sides.gpus)
    c.setups.push_back(serve_on(*source, gpu, question, prices));
  if (past_context > 0)
    for (serving_setup &setup : c.setups)
      setup.analysis.notes.push_back(fmt::format(
          "{} of the {} simulated requests run past the model's context ({}): their rotary "
          "positions there were never trained; the cost is modelled, the answers' quality is not",
          past_context, question.requests.size(), context->describe()));
  c.verdict = decide(c);
  return c;
}

} // namespace roofline
