// SPDX-License-Identifier: Apache-2.0
#include "roofline/comparison.hpp"

#include "roofline/error.hpp"
#include "roofline/host_floor.hpp"
#include "roofline/lowering.hpp"
#include "roofline/measurement_layer.hpp"
#include "roofline/spec_catalog.hpp"
#include "text_table.hpp"

#include <fmt/format.h>

#include <algorithm>

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

/// Where communication takes over: " From <setup> on, all-reduces are most of the step ...", for
/// the first setup, in the order given, whose all-reduces are most of its step; "" for none.
std::string communication_takeover(const comparison &c) {
  for (const gpu_result &g : c.gpus)
    if (g.analysis.totals.communication_share > 0.5)
      return fmt::format(" From {} on, all-reduces are most of the step ({:.0f}%): more GPUs buy "
                         "little there.",
                         g.name, 100 * g.analysis.totals.communication_share);
  return "";
}

verdict decide(const comparison &c, precision net_precision) {
  verdict v;
  const gpu_result &base = c.gpus.front();
  // A GPU the network does not fit in is no answer, however fast its (hypothetical) time.
  const auto fits = [](const gpu_result &g) {
    return !g.analysis.memory || g.analysis.memory->fits;
  };
  const gpu_result *fastest = &base;
  for (const gpu_result &g : c.gpus)
    if (fits(g) && (!fits(*fastest) || g.speedup > fastest->speedup))
      fastest = &g;
  const bool fits_any = fits(*fastest);
  v.fastest = fits_any ? fastest->name : std::string{};
  v.speedup = fastest->speedup;
  const std::string base_name = base.name;
  if (!fits_any) {
    v.text = fmt::format("{} fits on none of these GPUs at batch {}.", c.network_name, c.batch);
  } else if (fastest != &base && fastest->speedup <= 1) {
    v.text = fmt::format("{} is the fastest GPU {} fits on: {} per step, {:.2f}× the speed {} "
                         "would have if the network fitted it.",
                         v.fastest, c.network_name, detail::duration(fastest->step_time_s),
                         fastest->speedup, base_name);
  } else if (fastest == &base) {
    // More GPUs slower than one: the all-reduces are why, where they are most of a step.
    v.text = fmt::format("{} is the fastest of these GPUs for {} at batch {}.", base_name,
                         c.network_name, c.batch) +
             communication_takeover(c);
  } else if (!same_ops(base.analysis, fastest->analysis)) {
    // Sharded over another number of GPUs: the step is another set of ops; what it costs in GPUs
    // and in communication says whether the speed pays.
    const double gpus = static_cast<double>(fastest->tensor_parallel) / base.tensor_parallel;
    v.text = fmt::format("{} is {:.2f}× faster than {} here ({} → {} per step)", v.fastest,
                         v.speedup, base_name, detail::duration(base.step_time_s),
                         detail::duration(fastest->step_time_s));
    if (gpus != 1)
      v.text += fmt::format(" at {:.3g}× the GPUs: {:.3g}× the tokens per second per GPU", gpus,
                            fastest->tokens_per_s_per_gpu / base.tokens_per_s_per_gpu);
    if (fastest->analysis.totals.communication_share > 0.005)
      v.text += fmt::format("; all-reduces take {:.0f}% of its step",
                            100 * fastest->analysis.totals.communication_share);
    if (fastest->launch_bound_share > 0.05)
      v.text += fmt::format("; {:.0f}% of it is launch-bound (the host, not the GPUs: CUDA graphs "
                            "shorten it)",
                            100 * fastest->launch_bound_share);
    v.text += ".";
    const gpu_result *thriftiest = &base; // the most tokens per second per GPU, of those that fit
    for (const gpu_result &g : c.gpus)
      if (fits(g) &&
          (!fits(*thriftiest) || g.tokens_per_s_per_gpu > thriftiest->tokens_per_s_per_gpu))
        thriftiest = &g;
    if (thriftiest != fastest && fits(*thriftiest))
      v.text +=
          fmt::format(" The most tokens per second per GPU: {} ({:.4g}, {:.2f}× {}'s).",
                      thriftiest->name, thriftiest->tokens_per_s_per_gpu,
                      thriftiest->tokens_per_s_per_gpu / fastest->tokens_per_s_per_gpu, v.fastest);
    v.text += communication_takeover(c);
  } else {
    // Split the baseline's step into its memory- and compute-bound ops and see what each gains.
    // Launch-bound ops take the host's time on every GPU: they are neither side.
    std::vector<bool> memory(base.op_times_s.size()), compute(base.op_times_s.size());
    std::size_t turned = 0;
    for (std::size_t i = 0; i < memory.size(); ++i) {
      const prediction &p = base.analysis.ops[i].prediction;
      memory[i] = !p.launch_bound && p.bound == bound::memory;
      compute[i] = !p.launch_bound && p.bound == bound::compute;
      turned += memory[i] && fastest->analysis.ops[i].prediction.bound == bound::compute;
    }
    const double base_memory = sum_where(base, memory), fast_memory = sum_where(*fastest, memory);
    const double base_compute = sum_where(base, compute),
                 fast_compute = sum_where(*fastest, compute);
    const gpu_spec &b = base.analysis.device;
    const gpu_spec &f = fastest->analysis.device;
    std::vector<std::string> why;
    if (base_memory > 0 && fast_memory > 0)
      why.push_back(fmt::format(
          "{:.0f}% of {}'s time is memory-bound and gains {:.2f}× (DRAM bandwidth ×{:.2f})",
          100 * base_memory / base.step_time_s, base_name, base_memory / fast_memory,
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
          100 * base.launch_bound_share, base_name));
    if (turned > 0)
      why.push_back(fmt::format("{} op{} turn{} compute-bound on {}", turned,
                                turned == 1 ? "" : "s", turned == 1 ? "s" : "", v.fastest));
    v.text = fmt::format("{} is {:.2f}× faster than {} here ({} → {} per step)", v.fastest,
                         v.speedup, base_name, detail::duration(base.step_time_s),
                         detail::duration(fastest->step_time_s));
    for (std::size_t i = 0; i < why.size(); ++i)
      v.text += (i == 0 ? ": " : "; ") + why[i];
    v.text += ".";
  }
  std::vector<std::string> too_small;
  for (const gpu_result &g : c.gpus)
    if (!fits(g))
      too_small.push_back(fmt::format("{} ({} needed of {})", g.name,
                                      detail::gigabytes(g.analysis.memory->total_bytes),
                                      detail::gigabytes(g.analysis.memory->capacity_bytes)));
  if (!too_small.empty()) {
    std::string list;
    for (std::size_t i = 0; i < too_small.size(); ++i)
      list += (i == 0 ? "" : ", ") + too_small[i];
    v.text += fmt::format(
        " Does not fit: {}; {} time{} what {} would take if {} did.", list,
        too_small.size() == 1 ? "its" : "their", too_small.size() == 1 ? " is" : "s are",
        too_small.size() == 1 ? "it" : "they", too_small.size() == 1 ? "it" : "they");
  }
  const gpu_result *cheapest = nullptr;
  for (const gpu_result &g : c.gpus)
    if (fits(g) && g.usd_per_million_tokens &&
        (!cheapest || *g.usd_per_million_tokens < *cheapest->usd_per_million_tokens))
      cheapest = &g;
  if (cheapest) {
    v.cheapest = cheapest->name;
    v.text += fmt::format(" Cheapest per token: {} at ${:.4g} per million {}.", *v.cheapest,
                          *cheapest->usd_per_million_tokens, c.seq_len > 1 ? "tokens" : "samples");
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

comparison compare(const network &net, const std::vector<compared_gpu> &gpus,
                   const std::map<std::string, double> &prices) {
  comparison c;
  c.network_name = net.name;
  c.batch = net.batch;
  c.seq_len = net.seq_len;
  if (gpus.empty())
    throw error("compare: no GPU to compare");
  const compared_gpu *measured = nullptr;
  for (const compared_gpu &g : gpus)
    if (g.measured) {
      if (measured)
        throw error("compare: more than one GPU measured; the others scale from one");
      measured = &g;
    }
  std::optional<analysis> measured_prediction; // the measured GPU's own predictions, to scale from
  if (measured) {
    if (measured->sharded)
      throw error("compare: a measured GPU runs the network as given, not sharded");
    measured_prediction = analyze(net, measured->model, measured->selection);
    if (measured->measured->ops.size() != measured_prediction->ops.size())
      throw error("compare: the measurements have " +
                  std::to_string(measured->measured->ops.size()) + " ops, the network " +
                  std::to_string(measured_prediction->ops.size()) +
                  ": it was measured on another network or batch");
  }
  for (const compared_gpu &g : gpus) {
    const network &mine = g.sharded ? *g.sharded : net;
    gpu_result result;
    result.tensor_parallel = g.tensor_parallel;
    result.analysis = analyze(mine, g.model, g.selection);
    result.name = result.analysis.device.name +
                  (g.tensor_parallel > 1 ? fmt::format(" ×{}", g.tensor_parallel) : std::string{});
    const std::size_t ops = result.analysis.ops.size();
    // Measured ops carry over op by op, to a GPU that runs the same ops.
    const bool scalable = measured && same_ops(result.analysis, *measured_prediction);
    for (std::size_t i = 0; i < ops; ++i) {
      const analysed_op &entry = result.analysis.ops[i];
      double time = entry.prediction.time_s;
      time_source source = time_source::predicted;
      const std::optional<measurement> &m = scalable ? measured->measured->ops[i] : std::nullopt;
      if (m && m->status == measurement_status::measured) {
        if (&g == measured) {
          time = m->time_s;
          source = time_source::measured;
        } else {
          // What the two GPUs' models say of each other's device time, applied to what was
          // measured on the GPU; the host's floor is the same for both.
          const prediction &there = measured_prediction->ops[i].prediction;
          time = m->device_time_s > 0 ? std::max(m->device_time_s * entry.prediction.device_time_s /
                                                     there.device_time_s,
                                                 entry.prediction.host_floor_s)
                                      : m->time_s * entry.prediction.time_s / there.time_s;
          source = time_source::scaled_from_measured;
        }
      }
      result.op_times_s.push_back(time);
      result.sources.push_back(source);
      result.step_time_s += time * static_cast<double>(entry.op.count);
    }
    double memory = 0, launch = 0;
    for (std::size_t i = 0; i < ops; ++i) {
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
    result.samples_per_s = static_cast<double>(net.batch) / result.step_time_s;
    result.tokens_per_s =
        static_cast<double>(net.batch) * static_cast<double>(net.seq_len) / result.step_time_s;
    result.tokens_per_s_per_gpu = result.tokens_per_s / g.tensor_parallel;
    const gpu_spec &spec = result.analysis.device;
    if (auto price = prices.find(spec.name); price != prices.end())
      result.usd_per_hour = price->second * g.tensor_parallel;
    else if (spec.price_per_hour_usd)
      result.usd_per_hour = *spec.price_per_hour_usd * g.tensor_parallel;
    if (result.usd_per_hour)
      result.usd_per_million_tokens = *result.usd_per_hour / 3600.0 / result.tokens_per_s * 1e6;
    c.gpus.push_back(std::move(result));
  }
  for (gpu_result &g : c.gpus) {
    g.speedup = c.gpus.front().step_time_s / g.step_time_s;
    if (same_ops(c.gpus.front().analysis, g.analysis))
      for (std::size_t i = 0; i < g.op_times_s.size(); ++i)
        g.op_speedups.push_back(c.gpus.front().op_times_s[i] / g.op_times_s[i]);
  }
  c.verdict = decide(c, net.precision);
  c.baseline_network = gpus.front().sharded ? *gpus.front().sharded : net;
  return c;
}

namespace {

/// Remembers the name given for each spec (by the name its results carry): a second name of one
/// spec (an alias, another case) is refused, as `what` (--gpus: a GPU compared with itself;
/// --price: a price silently replaced).
class spelled_once {
public:
  spelled_once(std::string what, std::string advice)
      : m_what(std::move(what)), m_advice(std::move(advice)) {}
  void add(const std::string &spec, const std::string &given) {
    const auto [first, fresh] = m_given.emplace(spec, given);
    if (!fresh)
      throw input_error(fmt::format("{}: `{}` and `{}` are the same GPU ({}); {}", m_what,
                                    first->second, given, spec, m_advice));
  }

private:
  std::string m_what, m_advice;
  std::map<std::string, std::string> m_given; // spec name → the name given
};

} // namespace

std::map<std::string, gpu_spec> resolve_compared_gpus(const compare_request &request) {
  if (request.gpus.empty())
    throw input_error("--gpus: name at least one GPU");
  for (std::size_t i = 0; i < request.gpus.size(); ++i)
    if (std::find(request.gpus.begin(), request.gpus.begin() + static_cast<std::ptrdiff_t>(i),
                  request.gpus[i]) != request.gpus.begin() + static_cast<std::ptrdiff_t>(i))
      throw input_error("--gpus: `" + request.gpus[i] + "` is named twice");
  const spec_catalog &catalog = spec_catalog::builtin();
  std::map<std::string, gpu_spec> specs;
  const auto spec_of = [&](const std::string &name) -> const gpu_spec & {
    const auto found = specs.find(name);
    return found != specs.end() ? found->second
                                : specs.emplace(name, catalog.resolve(name)).first->second;
  };
  spelled_once gpus("--gpus", "name each GPU once"), prices("--price", "give it one price");
  for (const std::string &name : request.gpus)
    if (name != "local")
      gpus.add(spec_of(name).name, name);
  for (const auto &[name, price] : request.prices)
    if (name != "local")
      prices.add(spec_of(name).name, name);
  return specs;
}

std::vector<comparison> compare_gpus(const compare_request &request) {
  const std::map<std::string, gpu_spec> specs = resolve_compared_gpus(request);
  for (const auto &[name, price] : request.prices)
    if (!(price >= min_price_per_hour_usd && price <= max_price_per_hour_usd))
      throw input_error(fmt::format("--price {}={}: a GPU's price must be from {:g} to {:g} USD "
                                    "per hour",
                                    name, price, min_price_per_hour_usd, max_price_per_hour_usd));
  // Each GPU runs with its own parameters (its architecture's, overridden by what was fitted on
  // it) and all with this machine's host floor: the host does not change with the GPU.
  const model_options options{request.sparse, false, {}, cached_host_floor()};
  const bool sharding = !request.tensor_parallel.empty();
  if (sharding && !request.build)
    throw input_error("--tp: only a model config can be sharded (a network YAML says its own "
                      "all_reduce layers)");
  if (sharding &&
      std::find(request.gpus.begin(), request.gpus.end(), "local") != request.gpus.end())
    throw input_error("--tp with --gpus local: the local GPU is measured running the network as "
                      "given; name its spec instead");
  for (std::size_t i = 0; i < request.tensor_parallel.size(); ++i)
    if (std::find(request.tensor_parallel.begin(),
                  request.tensor_parallel.begin() + static_cast<std::ptrdiff_t>(i),
                  request.tensor_parallel[i]) !=
        request.tensor_parallel.begin() + static_cast<std::ptrdiff_t>(i))
      throw input_error("--tp: " + std::to_string(request.tensor_parallel[i]) + " is named twice");
  std::vector<compared_gpu> gpus;
  std::optional<std::size_t> local; ///< the side measured on the local GPU
  const measurement_layer *layer = nullptr;
  std::string local_name = "local"; // the local GPU's spec, once found
  for (const std::string &name : request.gpus) {
    std::optional<gpu_spec> spec;
    std::string selection = "--gpus " + name;
    if (name == "local") {
      layer = &required_measurement_layer("--gpus local");
      const auto local_gpu = layer->find_local_gpu();
      if (!local_gpu)
        throw error("--gpus local: no GPU found; name a spec instead (roofline-advise specs)");
      // Its ops are measured; the other GPUs are scaled from them by datasheet-to-datasheet
      // ratios, so the local side is held to its datasheet too (a measured ceiling would make its
      // own spec look faster).
      spec = local_gpu->datasheet;
      selection = "local: " + local_gpu->selection;
      local = gpus.size();
      local_name = spec->name;
    } else {
      spec = specs.at(name);
    }
    // Each GPU at every tensor-parallel degree asked for, in the order given.
    for (int tp : sharding ? request.tensor_parallel : std::vector<int>{1})
      gpus.push_back({perf_model(*spec, options), selection, std::nullopt, tp, std::nullopt});
  }
  std::map<std::string, double> prices; // by spec name
  spelled_once priced("--price",
                      "give it one price"); // the local GPU's spec too, now that it is known
  for (const auto &[name, price] : request.prices) {
    const std::string spec = name == "local" ? local_name : specs.at(name).name;
    priced.add(spec, name);
    prices[spec] = price;
  }

  std::vector<std::int64_t> batches = request.batches;
  if (batches.empty())
    batches.push_back(request.net.batch);
  // Before any analysis: the work is the network's ops at every GPU, degree and batch.
  const auto analyses = static_cast<std::int64_t>(gpus.size() * batches.size());
  if (const std::int64_t ops = op_count(request.net); ops > max_compared_ops / analyses)
    throw input_error(
        {request.net.origin},
        fmt::format(
            "compare: {} GPUs (each --tp degree one) × {} batches × the network's {} ops would "
            "analyse more than {} ops, the limit; compare fewer at once",
            gpus.size(), batches.size(), ops, max_compared_ops));
  std::vector<comparison> comparisons;
  for (std::int64_t batch : batches) {
    // The network one GPU of each degree runs, built once per degree and batch.
    std::map<int, network> shards;
    for (int tp : request.tensor_parallel)
      shards.emplace(tp, request.build(tp, batch));
    network at = shards.count(1) ? shards.at(1)
                 : request.build ? request.build(1, batch)
                                 : request.net;
    at.batch = batch;
    for (compared_gpu &g : gpus)
      if (sharding)
        g.sharded = shards.at(g.tensor_parallel);
    if (local) {
      const std::vector<op> ops = lower(at);
      measure_options measuring;
      measuring.counters = false;
      measuring.rounds = 3;
      measuring.progress = request.progress;
      // Timed where its model predicts the operands to be, as run_pipeline times them.
      measuring.cold_l2 = operand_cache_for(gpus[*local].model, ops) == cache_state::cold;
      gpus[*local].measured = layer->measure(ops, measuring);
    }
    comparisons.push_back(compare(at, gpus, prices));
  }
  return comparisons;
}

} // namespace roofline
