// SPDX-License-Identifier: Apache-2.0
#include "roofline/compare/comparison.hpp"

#include "compared_setups.hpp"
#include "roofline/analysis/advice_thresholds.hpp"
#include "roofline/analysis/lowering.hpp"
#include "roofline/common/error.hpp"
#include "text_format.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <variant>

namespace roofline {

std::string_view to_string(time_source s) {
  switch (s) {
  case time_source::predicted: return "predicted";
  case time_source::measured: return "measured";
  case time_source::scaled_from_measured: return "scaled from measured";
  }
  return "?";
}

namespace {

double sum_where(const gpu_result &g, const std::vector<bool> &selected) {
  double total = 0;
  for (std::size_t i = 0; i < g.op_times_s.size(); ++i)
    if (selected[i])
      total += g.op_times_s[i] * static_cast<double>(g.analysis.ops[i].op.count);
  return total;
}

/// A GPU the network does not fit in is no answer, however fast its (hypothetical) time.
bool fits(const gpu_result &g) {
  return !g.analysis.memory || g.analysis.memory->fits;
}

/// The fastest GPU the network fits on; the baseline when it fits on none.
const gpu_result &fastest_fitting(const comparison &c) {
  const gpu_result *fastest = &c.gpus.front();
  for (const gpu_result &g : c.gpus)
    if (fits(g) && (!fits(*fastest) || g.speedup > fastest->speedup))
      fastest = &g;
  return *fastest;
}

/// "X is 1.50× faster than Y here (1 ms → 667 µs per step)", no full stop.
std::string faster_than(const gpu_result &fastest, const gpu_result &base) {
  return fmt::format("{} is {:.2f}× faster than {} here ({} → {} per step)", fastest.name,
                     fastest.speedup, base.name, detail::duration(base.step_time_s),
                     detail::duration(fastest.step_time_s));
}

/// Sharded over another number of GPUs, the fastest runs another set of ops: what it costs in
/// GPUs and in communication says whether the speed pays.
std::string sharded_cost(const gpu_result &fastest, const gpu_result &base) {
  std::string text = faster_than(fastest, base);
  const double gpus = static_cast<double>(fastest.gpus) / base.gpus;
  if (gpus != 1)
    text += fmt::format(" at {:.3g}× the GPUs: {:.3g}× the tokens per second per GPU", gpus,
                        fastest.tokens_per_s_per_gpu / base.tokens_per_s_per_gpu);
  if (fastest.analysis.totals.communication_share > 0.005)
    text += fmt::format("; collectives between GPUs take {:.0f}% of its step",
                        100 * fastest.analysis.totals.communication_share);
  if (launch_bound_worth_saying(fastest.launch_bound_share))
    text += fmt::format("; {:.0f}% of it is launch-bound (the host, not the GPUs: CUDA graphs "
                        "shorten it)",
                        100 * fastest.launch_bound_share);
  return text + ".";
}

/// " The most tokens per second per GPU: ..." where another GPU that fits gives more than the
/// fastest; "" otherwise.
std::string thriftiest_sentence(const comparison &c, const gpu_result &fastest) {
  const gpu_result *thriftiest = &c.gpus.front();
  for (const gpu_result &g : c.gpus)
    if (fits(g) &&
        (!fits(*thriftiest) || g.tokens_per_s_per_gpu > thriftiest->tokens_per_s_per_gpu))
      thriftiest = &g;
  if (thriftiest == &fastest || !fits(*thriftiest))
    return {};
  return fmt::format(" The most tokens per second per GPU: {} ({:.4g}, {:.2f}× {}'s).",
                     thriftiest->name, thriftiest->tokens_per_s_per_gpu,
                     thriftiest->tokens_per_s_per_gpu / fastest.tokens_per_s_per_gpu, fastest.name);
}

/// Where communication takes over: the first setup, in the order given, whose collectives are
/// most of its step; "" when none.
std::string communication_sentence(const comparison &c) {
  for (const gpu_result &g : c.gpus)
    if (g.analysis.totals.communication_share > 0.5)
      return fmt::format(
          " From {} on, collectives between GPUs are most of the step ({:.0f}%): more GPUs buy "
          "little there.",
          g.name, 100 * g.analysis.totals.communication_share);
  return {};
}

/// Why the fastest is faster, running the same ops as the baseline: the baseline's step split
/// into its memory- and compute-bound ops and what each gains. Launch-bound ops take the host's
/// time on every GPU: they are neither side.
std::vector<std::string> reasons_faster(const gpu_result &fastest, const gpu_result &base,
                                        precision net_precision) {
  std::vector<bool> memory(base.op_times_s.size()), compute(base.op_times_s.size());
  std::size_t turned = 0;
  for (std::size_t i = 0; i < memory.size(); ++i) {
    const prediction &p = base.analysis.ops[i].prediction;
    memory[i] = !p.launch_bound && p.bound == bound::memory;
    compute[i] = !p.launch_bound && p.bound == bound::compute;
    turned += memory[i] && fastest.analysis.ops[i].prediction.bound == bound::compute;
  }
  const double base_memory = sum_where(base, memory), fast_memory = sum_where(fastest, memory);
  const double base_compute = sum_where(base, compute), fast_compute = sum_where(fastest, compute);
  const gpu_spec &b = base.analysis.model.spec();
  const gpu_spec &f = fastest.analysis.model.spec();
  std::vector<std::string> why;
  if (base_memory > 0 && fast_memory > 0)
    why.push_back(fmt::format(
        "{:.0f}% of {}'s time is memory-bound and gains {:.2f}× (DRAM bandwidth ×{:.2f})",
        100 * base_memory / base.step_time_s, base.name, base_memory / fast_memory,
        f.dram_bytes_per_s / b.dram_bytes_per_s));
  if (base_compute > 0 && fast_compute > 0) {
    const std::string peak =
        b.supports(net_precision) && f.supports(net_precision)
            ? fmt::format(" ({} peak ×{:.2f})", to_string(net_precision),
                          f.peak_flop_per_s(net_precision) / b.peak_flop_per_s(net_precision))
            : std::string{};
    why.push_back(fmt::format("the compute-bound {:.0f}% gains {:.2f}×{}",
                              100 * base_compute / base.step_time_s, base_compute / fast_compute,
                              peak));
  }
  if (base.launch_bound_share > 0.005)
    why.push_back(fmt::format(
        "{:.0f}% of {}'s step is launch-bound (the host issues those ops slower than the GPU "
        "runs them) and stays as long on any GPU: CUDA graphs or fusion shorten it, not a "
        "faster GPU",
        100 * base.launch_bound_share, base.name));
  if (turned > 0)
    why.push_back(fmt::format("{} op{} turn{} compute-bound on {}", turned, turned == 1 ? "" : "s",
                              turned == 1 ? "s" : "", fastest.name));
  return why;
}

/// The first sentences: which GPU is fastest, and why (or at what cost, sharded).
std::string fastest_sentence(const comparison &c, const gpu_result &fastest,
                             precision net_precision) {
  const gpu_result &base = c.gpus.front();
  if (!fits(fastest))
    return fmt::format("{} fits on none of these GPUs at batch {}.", c.network_name, c.batch);
  if (&fastest != &base && fastest.speedup <= 1)
    return fmt::format("{} is the fastest GPU {} fits on: {} per step, {:.2f}× the speed {} "
                       "would have if the network fitted it.",
                       fastest.name, c.network_name, detail::duration(fastest.step_time_s),
                       fastest.speedup, base.name);
  if (&fastest == &base) // more GPUs slower than one: the collectives say why, where they are most
    return fmt::format("{} is the fastest of these GPUs for {} at batch {}.", base.name,
                       c.network_name, c.batch) +
           communication_sentence(c);
  if (!same_ops(base.analysis, fastest.analysis))
    return sharded_cost(fastest, base) + thriftiest_sentence(c, fastest) +
           communication_sentence(c);
  std::string text = faster_than(fastest, base);
  const std::vector<std::string> why = reasons_faster(fastest, base, net_precision);
  for (std::size_t i = 0; i < why.size(); ++i)
    text += (i == 0 ? ": " : "; ") + why[i];
  return text + ".";
}

/// " Does not fit: ..." for the GPUs the network does not fit in; "" when it fits on all.
std::string too_small_sentence(const comparison &c) {
  std::vector<std::string> too_small;
  for (const gpu_result &g : c.gpus)
    if (!fits(g))
      too_small.push_back(fmt::format("{} ({} needed of {})", g.name,
                                      detail::gigabytes(g.analysis.memory->total_bytes),
                                      detail::gigabytes(g.analysis.memory->usable_bytes())));
  if (too_small.empty())
    return {};
  std::string list;
  for (std::size_t i = 0; i < too_small.size(); ++i)
    list += (i == 0 ? "" : ", ") + too_small[i];
  const bool one = too_small.size() == 1;
  return fmt::format(" Does not fit: {}; {} time{} what {} would take if {} did.", list,
                     one ? "its" : "their", one ? " is" : "s are", one ? "it" : "they",
                     one ? "it" : "they");
}

/// The GPU that fits with the lowest price per token; none where no price is known.
const gpu_result *cheapest_fitting(const comparison &c) {
  const gpu_result *cheapest = nullptr;
  for (const gpu_result &g : c.gpus)
    if (fits(g) && g.usd_per_million_tokens &&
        (!cheapest || *g.usd_per_million_tokens < *cheapest->usd_per_million_tokens))
      cheapest = &g;
  return cheapest;
}

/// The baseline and the runner-up (the fastest fitting GPU after `fastest`) where their step
/// ranges overlap `fastest`'s; none when `fastest` does not fit.
std::vector<const gpu_result *> within_error_of(const comparison &c, const gpu_result &fastest) {
  std::vector<const gpu_result *> close;
  if (!fits(fastest))
    return close;
  const gpu_result *runner_up = nullptr;
  for (const gpu_result &g : c.gpus)
    if (&g != &fastest && fits(g) && (!runner_up || g.speedup > runner_up->speedup))
      runner_up = &g;
  for (const gpu_result *g : {&c.gpus.front(), runner_up})
    if (g && g != &fastest && fits(*g) && g->step_range.overlaps(fastest.step_range) &&
        std::find(close.begin(), close.end(), g) == close.end())
      close.push_back(g);
  return close;
}

/// " Within the model's error: …": which GPUs' step ranges overlap the fastest's; "" for none.
std::string within_error_sentence(const gpu_result &fastest,
                                  const std::vector<const gpu_result *> &close) {
  const auto range = [](const gpu_result &g) {
    return detail::duration(g.step_range.low_s) + "–" + detail::duration(g.step_range.high_s);
  };
  std::string others;
  for (const gpu_result *g : close)
    others += fmt::format("{}{}'s ({})", others.empty() ? "" : " and ", g->name, range(*g));
  return others.empty() ? others
                        : fmt::format(" Within the model's error: {}'s step ({}) overlaps {}, so "
                                      "{} is not surely the faster.",
                                      fastest.name, range(fastest), others, fastest.name);
}

/// The GPU that fits with the least energy per token; none where no energy is known.
const gpu_result *least_energy_fitting(const comparison &c) {
  const gpu_result *least = nullptr;
  for (const gpu_result &g : c.gpus)
    if (fits(g) && g.joules_per_token > 0 && g.analysis.budget.cap_w > 0 &&
        (!least || g.joules_per_token < least->joules_per_token))
      least = &g;
  return least;
}

verdict decide(const comparison &c, precision net_precision) {
  const gpu_result &fastest = fastest_fitting(c);
  verdict v;
  v.fastest = fits(fastest) ? fastest.name : std::string{};
  v.speedup = fastest.speedup;
  const std::vector<const gpu_result *> close = within_error_of(c, fastest);
  for (const gpu_result *g : close)
    v.within_error.push_back(g->name);
  v.text = fastest_sentence(c, fastest, net_precision) + within_error_sentence(fastest, close) +
           too_small_sentence(c);
  if (const gpu_result *cheapest = cheapest_fitting(c)) {
    v.cheapest = cheapest->name;
    const std::string_view unit = to_string(c.unit); // "per token", "per million tokens"
    v.text += fmt::format(" Cheapest per {}: {} at ${:.4g} per million {}.",
                          unit.substr(0, unit.size() - 1), *v.cheapest,
                          *cheapest->usd_per_million_tokens, unit);
  }
  if (const gpu_result *least = least_energy_fitting(c)) {
    v.least_energy = least->name;
    const std::string_view unit = to_string(c.unit);
    v.text += fmt::format(" Least energy per {}: {} at {} J ({} W a GPU).",
                          unit.substr(0, unit.size() - 1), least->name,
                          detail::significant(least->joules_per_token),
                          detail::significant(least->average_power_w));
  }
  return v;
}

} // namespace

bool same_ops(const analysis &a, const analysis &b) {
  return a.ops.size() == b.ops.size() &&
         std::equal(a.ops.begin(), a.ops.end(), b.ops.begin(),
                    [](const analysed_op &x, const analysed_op &y) {
                      const gemm_shape none{};
                      const gemm_shape &sx = x.op.gemm.value_or(none),
                                       &sy = y.op.gemm.value_or(none);
                      return x.op.layer == y.op.layer && x.op.kind == y.op.kind &&
                             x.op.pass == y.op.pass && sx.m == sy.m && sx.n == sy.n &&
                             sx.k == sy.k && sx.batch_count == sy.batch_count &&
                             x.op.bytes == y.op.bytes && x.op.flops == y.op.flops;
                    });
}

namespace {

/// The GPU whose ops were measured, with its own predictions to scale the others' from.
struct measured_gpu {
  const compared_gpu &gpu;
  analysis predicted;
};

/// The measured GPU of `gpus`, if any, predicted on `net`; roofline::error for two, for one that
/// is sharded, and for measurements of another op list.
std::optional<measured_gpu> measured_of(const network &net, const std::vector<compared_gpu> &gpus) {
  const compared_gpu *measured = nullptr;
  for (const compared_gpu &g : gpus)
    if (g.measured) {
      if (measured)
        throw error("compare: more than one GPU measured; the others scale from one");
      measured = &g;
    }
  if (!measured)
    return std::nullopt;
  if (measured->sharded)
    throw error("compare: a measured GPU runs the network as given, not sharded");
  measured_gpu result{*measured,
                      analyze(net, measured->model, measured->selection, measured->memory_reserve)};
  if (measured->measured->ops.size() != result.predicted.ops.size())
    throw error("compare: the measurements have " + std::to_string(measured->measured->ops.size()) +
                " ops, the network " + std::to_string(result.predicted.ops.size()) +
                ": it was measured on another network or batch");
  return result;
}

/// Each op's time per run on `g` (result.analysis) and where it comes from, and the step's time:
/// predicted, or carried over op by op from the measured GPU's measurements where `g` runs the
/// same ops.
void time_ops(gpu_result &result, const compared_gpu &g,
              const std::optional<measured_gpu> &measured) {
  const bool scalable = measured && same_ops(result.analysis, measured->predicted);
  for (std::size_t i = 0; i < result.analysis.ops.size(); ++i) {
    const analysed_op &entry = result.analysis.ops[i];
    double time = entry.prediction.time_s;
    time_range range = entry.prediction.range;
    time_source source = time_source::predicted;
    const std::optional<measurement> &m = scalable ? measured->gpu.measured->ops[i] : std::nullopt;
    if (m && m->status == measurement_status::measured) {
      if (&g == &measured->gpu) {
        time = m->time_s;
        range = time_range::exactly(time);
        source = time_source::measured;
      } else {
        // What the two GPUs' models say of each other's device time, applied to what was
        // measured on the GPU; the host's floor is the same for both.
        const prediction &there = measured->predicted.ops[i].prediction;
        time =
            m->device_time_s > 0
                ? std::max(m->device_time_s * entry.prediction.device_time_s / there.device_time_s,
                           entry.prediction.host_floor_s)
                : m->time_s * entry.prediction.time_s / there.time_s;
        source = time_source::scaled_from_measured;
        range = range * (time / entry.prediction.time_s);
      }
    }
    result.op_times_s.push_back(time);
    result.sources.push_back(source);
    result.op_ranges.push_back(range);
    result.step_time_s += time * static_cast<double>(entry.op.count);
    result.step_range += range * static_cast<double>(entry.op.count);
  }
}

/// What the step's time means: its memory- and launch-bound shares, its throughput per GPU, and
/// its price (`prices` by spec name over the spec's own) and its energy, priced at
/// `energy_usd_per_kwh` where given.
void add_rates(gpu_result &result, const network &net, const std::map<std::string, double> &prices,
               std::optional<double> energy_usd_per_kwh) {
  double memory = 0, launch = 0;
  for (std::size_t i = 0; i < result.op_times_s.size(); ++i) {
    const prediction &p = result.analysis.ops[i].prediction;
    const double total =
        result.op_times_s[i] * static_cast<double>(result.analysis.ops[i].op.count);
    if (p.launch_bound)
      launch += total;
    else if (p.bound == bound::memory)
      memory += total;
  }
  result.memory_bound_share = result.step_time_s > 0 ? memory / result.step_time_s : 0;
  result.launch_bound_share = result.step_time_s > 0 ? launch / result.step_time_s : 0;
  // A served pipeline's stage: one batch in flight passes every stage in turn (a training
  // stage's micro-batches keep them all busy: 1F1B), each GPU idle while the others work.
  const double through_s = pipeline_passes(result.analysis) * result.step_time_s;
  result.samples_per_s = static_cast<double>(net.batch) / through_s;
  result.tokens_per_s =
      static_cast<double>(net.batch) * static_cast<double>(net.seq_len) / through_s;
  result.tokens_per_s_per_gpu = result.tokens_per_s / result.gpus;
  // The predicted step's dynamic energy over the step as timed (a measured one's time), each GPU.
  const analysis &a = result.analysis;
  const double per_gpu_j = a.budget.idle_w * through_s + a.power.work.dynamic_j;
  result.energy_per_step_j = per_gpu_j * result.gpus;
  result.average_power_w = through_s > 0 ? per_gpu_j / through_s : 0;
  const double processed = result.tokens_per_s > 0 ? result.tokens_per_s * through_s : 0;
  result.joules_per_token = processed > 0 ? result.energy_per_step_j / processed : 0;
  result.usd_per_hour = detail::price_per_hour(result.analysis.model.spec(), prices, result.gpus);
  if (result.usd_per_hour)
    result.usd_per_million_tokens =
        detail::usd_per_million(*result.usd_per_hour, result.tokens_per_s);
  if (energy_usd_per_kwh) {
    result.energy_usd_per_million_tokens =
        energy_usd_per_million(result.joules_per_token, *energy_usd_per_kwh);
    if (result.usd_per_million_tokens)
      *result.usd_per_million_tokens += *result.energy_usd_per_million_tokens;
  }
}

} // namespace

comparison compare(const network &net, const std::vector<compared_gpu> &gpus,
                   const std::map<std::string, double> &prices) {
  comparison c;
  c.network_name = net.name;
  c.batch = net.batch;
  c.seq_len = net.seq_len;
  c.tokens = step_tokens(net);
  c.unit = throughput_unit_of(net);
  if (gpus.empty())
    throw error("compare: no GPU to compare");
  const std::optional<measured_gpu> measured = measured_of(net, gpus);
  for (const compared_gpu &g : gpus) {
    gpu_result result;
    result.tensor_parallel = g.tensor_parallel;
    const network &run = g.sharded ? *g.sharded : net;
    result.analysis = analyze(run, g.model, g.selection, g.memory_reserve);
    result.gpus = g.tensor_parallel * run.pipeline_stages;
    result.name = detail::setup_name(result.analysis.model.spec(), result.gpus);
    time_ops(result, g, measured);
    add_rates(result, net, prices, g.energy_usd_per_kwh);
    c.gpus.push_back(std::move(result));
  }
  for (gpu_result &g : c.gpus) {
    g.speedup = c.gpus.front().step_time_s / g.step_time_s;
    // The baseline against itself is exactly 1.
    if (&g != &c.gpus.front()) {
      g.speedup_low = c.gpus.front().step_range.low_s / g.step_range.high_s;
      g.speedup_high = c.gpus.front().step_range.high_s / g.step_range.low_s;
    }
    if (same_ops(c.gpus.front().analysis, g.analysis))
      for (std::size_t i = 0; i < g.op_times_s.size(); ++i)
        g.op_speedups.push_back(c.gpus.front().op_times_s[i] / g.op_times_s[i]);
  }
  c.verdict = decide(c, net.precision);
  c.baseline_network = gpus.front().sharded ? *gpus.front().sharded : net;
  return c;
}

namespace {

/// The network as its source gives it: a config at its own options.
network network_of(const network_source &source) {
  if (const auto *config = std::get_if<config_source>(&source))
    return config->config.build(config->options);
  return std::get<network>(source);
}

} // namespace

namespace {

/// The local GPU's measurements of `ops`, timed where its model predicts the operands to be, as
/// run_pipeline times them.
measurements measured_locally(const compare_request &request, const compared_gpu &local,
                              const std::vector<op> &ops) {
  measure_options measuring;
  measuring.counters = false;
  measuring.rounds = 3;
  measuring.progress = request.progress;
  measuring.cold_l2 = operand_cache_for(local.model, ops) == cache_state::cold;
  return request.layer.layer->measure(ops, measuring);
}

} // namespace

std::vector<comparison> compare_gpus(const compare_request &request) {
  const std::map<std::string, gpu_spec> specs = resolve_compared_gpus(request);
  const network given = network_of(request.source);
  detail::check_prices_and_degrees(request);
  detail::compared_sides sides = detail::sides_of(request, specs);
  const std::map<std::string, double> prices =
      detail::prices_by_spec(request, specs, sides.local_name);
  std::vector<std::int64_t> batches = request.batches;
  if (batches.empty())
    batches.push_back(given.batch);
  // Before any analysis: the work is the network's ops at every GPU, degree and batch.
  const auto analyses = static_cast<std::int64_t>(sides.gpus.size() * batches.size());
  if (const std::int64_t ops = op_count(given); ops > max_compared_ops / analyses)
    throw input_error({given.origin},
                      fmt::format("compare: {} GPUs (each compare_request::tensor_parallel degree "
                                  "one) × {} batches × the network's {} ops would "
                                  "analyse more than {} ops, the limit; compare fewer at once",
                                  sides.gpus.size(), batches.size(), ops, max_compared_ops));
  std::vector<comparison> comparisons;
  for (std::int64_t batch : batches) {
    // The network one GPU of each degree runs, built once per degree and batch.
    std::map<int, network> shards;
    for (int tp : request.tensor_parallel)
      shards.emplace(tp, detail::network_at(request.source, tp, batch));
    const network at =
        shards.count(1) ? shards.at(1) : detail::network_at(request.source, 1, batch);
    for (compared_gpu &g : sides.gpus)
      if (!request.tensor_parallel.empty())
        g.sharded = shards.at(g.tensor_parallel);
    if (sides.local)
      sides.gpus[*sides.local].measured =
          measured_locally(request, sides.gpus[*sides.local], lower(at));
    comparisons.push_back(compare(at, sides.gpus, prices));
  }
  return comparisons;
}

} // namespace roofline
