// SPDX-License-Identifier: Apache-2.0
#include "roofline/comparison.hpp"

#include "json_fields.hpp"
#include "roofline/version.hpp"
#include "text_table.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

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

verdict decide(const comparison &c, precision net_precision) {
  verdict v;
  const gpu_result &base = c.gpus.front();
  const gpu_result *fastest = &base;
  for (const gpu_result &g : c.gpus)
    if (g.speedup > fastest->speedup)
      fastest = &g;
  v.fastest = fastest->analysis.device.name;
  v.speedup = fastest->speedup;
  const std::string base_name = base.analysis.device.name;
  if (fastest == &base) {
    v.text = fmt::format("{} is the fastest of these GPUs for {} at batch {}.", base_name,
                         c.network_name, c.batch);
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
  const gpu_result *cheapest = nullptr;
  for (const gpu_result &g : c.gpus)
    if (g.usd_per_million_tokens &&
        (!cheapest || *g.usd_per_million_tokens < *cheapest->usd_per_million_tokens))
      cheapest = &g;
  if (cheapest) {
    v.cheapest = cheapest->analysis.device.name;
    v.text += fmt::format(" Cheapest per token: {} at ${:.4g} per million {}.", *v.cheapest,
                          *cheapest->usd_per_million_tokens, c.seq_len > 1 ? "tokens" : "samples");
  }
  return v;
}

} // namespace

comparison compare(const network &net, const std::vector<compared_gpu> &gpus,
                   const std::map<std::string, double> &prices) {
  comparison c;
  c.network_name = net.name;
  c.batch = net.batch;
  c.seq_len = net.seq_len;
  const compared_gpu *measured = nullptr;
  for (const compared_gpu &g : gpus)
    if (g.measured)
      measured = &g;
  std::optional<report> measured_prediction; // the measured GPU's own predictions, to scale from
  if (measured) {
    measured_prediction = analyze(net, measured->model, measured->selection);
    if (measured->measured->ops.size() != measured_prediction->ops.size())
      throw error("compare: the measured report has " +
                  std::to_string(measured->measured->ops.size()) + " ops, the network " +
                  std::to_string(measured_prediction->ops.size()) +
                  ": it was measured on another network or batch");
  }
  for (const compared_gpu &g : gpus) {
    gpu_result result;
    result.analysis = analyze(net, g.model, g.selection);
    const std::size_t ops = result.analysis.ops.size();
    for (std::size_t i = 0; i < ops; ++i) {
      const op_report &entry = result.analysis.ops[i];
      double time = entry.prediction.time_s;
      time_source source = time_source::predicted;
      const std::optional<measurement> &m =
          measured ? measured->measured->ops[i].measured : std::nullopt;
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
    result.tokens_per_s = static_cast<double>(net.batch * net.seq_len) / result.step_time_s;
    const gpu_spec &spec = result.analysis.device;
    if (auto price = prices.find(spec.name); price != prices.end())
      result.usd_per_hour = price->second;
    else
      result.usd_per_hour = spec.price_per_hour_usd;
    if (result.usd_per_hour)
      result.usd_per_million_tokens = *result.usd_per_hour / 3600.0 / result.tokens_per_s * 1e6;
    c.gpus.push_back(std::move(result));
  }
  for (gpu_result &g : c.gpus)
    g.speedup = c.gpus.front().step_time_s / g.step_time_s;
  c.verdict = decide(c, net.precision);
  return c;
}

namespace {

using detail::align;
using detail::cell;
using detail::text_table;
using nlohmann::json;

std::string optional_money(std::optional<double> value, const char *format) {
  return value ? fmt::format(fmt::runtime(format), *value) : std::string("—");
}

text_table totals_table(const std::vector<comparison> &comparisons) {
  text_table table;
  table.columns = {{"batch", "batch"},
                   {"gpu", "gpu", align::left},
                   {"numbers", "source", align::left},
                   {"time/step", "step_time_us"},
                   {"speedup", "speedup"},
                   {"samples/s", "samples_per_s"},
                   {"tokens/s", "tokens_per_s"},
                   {"memory-bound", "memory_bound_share"},
                   {"$/h", "usd_per_hour"},
                   {"$/M tokens", "usd_per_million_tokens"}};
  for (const comparison &c : comparisons)
    for (const gpu_result &g : c.gpus) {
      const bool any_measured = std::any_of(g.sources.begin(), g.sources.end(), [](time_source s) {
        return s != time_source::predicted;
      });
      // Only GEMMs run on the GPU: the memory-bound ops of a measured side stay predicted.
      const bool own =
          std::find(g.sources.begin(), g.sources.end(), time_source::measured) != g.sources.end();
      const std::string source = !any_measured ? "predicted"
                                 : own         ? "GEMMs measured"
                                               : "GEMMs scaled from measured";
      table.rows.push_back(
          {{std::to_string(c.batch)},
           {g.analysis.device.name},
           {source},
           {detail::duration(g.step_time_s), detail::raw(g.step_time_s * 1e6)},
           {fmt::format("×{:.2f}", g.speedup), detail::raw(g.speedup)},
           {detail::significant(g.samples_per_s), detail::raw(g.samples_per_s)},
           {detail::significant(g.tokens_per_s), detail::raw(g.tokens_per_s)},
           {detail::percent(g.memory_bound_share), detail::raw(g.memory_bound_share)},
           {optional_money(g.usd_per_hour, "{:.2f}"),
            g.usd_per_hour ? detail::raw(*g.usd_per_hour) : std::string{}},
           {optional_money(g.usd_per_million_tokens, "{:.4g}"),
            g.usd_per_million_tokens ? detail::raw(*g.usd_per_million_tokens) : std::string{}}});
    }
  return table;
}

/// Per op: time per run on each GPU, its speedup over the baseline and its bound (m/c).
text_table ops_table(const comparison &c) {
  text_table table;
  table.columns = {
      {"layer", "layer", align::left}, {"pass", "pass", align::left}, {"runs", "count"}};
  for (const gpu_result &g : c.gpus)
    table.columns.push_back({g.analysis.device.name, g.analysis.device.name + "_time_us"});
  const gpu_result &base = c.gpus.front();
  for (std::size_t i = 0; i < base.op_times_s.size(); ++i) {
    const op &o = base.analysis.ops[i].op;
    std::vector<cell> row{{o.layer}, {std::string(to_string(o.pass))}, {std::to_string(o.count)}};
    for (const gpu_result &g : c.gpus) {
      const bool memory = g.analysis.ops[i].prediction.bound == bound::memory;
      const std::string speed = &g == &base
                                    ? std::string{}
                                    : fmt::format(" ×{:.2f}", base.op_times_s[i] / g.op_times_s[i]);
      row.push_back({detail::duration(g.op_times_s[i]) + speed + (memory ? " m" : " c"),
                     detail::raw(g.op_times_s[i] * 1e6),
                     memory ? detail::tone::warn : detail::tone::plain});
    }
    table.rows.push_back(std::move(row));
  }
  return table;
}

json gpu_json(const comparison &c, const gpu_result &g) {
  json ops = json::array();
  for (std::size_t i = 0; i < g.analysis.ops.size(); ++i) {
    json entry = detail::op_json(g.analysis.ops[i]);
    entry["time_us"] = g.op_times_s[i] * 1e6;
    entry["time_source"] = to_string(g.sources[i]);
    entry["speedup"] = c.gpus.front().op_times_s[i] / g.op_times_s[i];
    ops.push_back(entry);
  }
  json device = detail::device_json(g.analysis.device);
  device["selection"] = g.analysis.device_selection;
  const auto optional = [](std::optional<double> v) { return v ? json(*v) : json(nullptr); };
  return {{"device", device},
          {"parameters_origin", g.analysis.parameters_origin},
          {"host_floor_origin", g.analysis.host.origin},
          {"ops", ops},
          {"totals",
           {{"predicted_time_us", g.step_time_s * 1e6},
            {"memory_bound_share", g.memory_bound_share},
            {"launch_bound_share", g.launch_bound_share},
            {"samples_per_s", g.samples_per_s},
            {"tokens_per_s", g.tokens_per_s},
            {"speedup", g.speedup},
            {"usd_per_hour", optional(g.usd_per_hour)},
            {"usd_per_million_tokens", optional(g.usd_per_million_tokens)}}}};
}

json verdict_json(const verdict &v) {
  return {{"fastest", v.fastest},
          {"speedup", v.speedup},
          {"cheapest", v.cheapest ? json(*v.cheapest) : json(nullptr)},
          {"text", v.text}};
}

json comparison_json(const std::vector<comparison> &comparisons) {
  const comparison &first = comparisons.front();
  json gpus = json::array();
  for (const gpu_result &g : first.gpus)
    gpus.push_back(gpu_json(first, g));
  json sweep = json::array();
  for (const comparison &c : comparisons) {
    json summary = json::array();
    for (const gpu_result &g : c.gpus)
      summary.push_back({{"name", g.analysis.device.name},
                         {"predicted_time_us", g.step_time_s * 1e6},
                         {"speedup", g.speedup},
                         {"samples_per_s", g.samples_per_s},
                         {"tokens_per_s", g.tokens_per_s},
                         {"memory_bound_share", g.memory_bound_share}});
    sweep.push_back({{"batch", c.batch}, {"gpus", summary}, {"verdict", verdict_json(c.verdict)}});
  }
  return {{"schema_version", json_schema_version},
          {"tool", {{"name", "roofline-advise"}, {"version", version()}}},
          {"kind", "comparison"},
          {"network",
           {{"name", first.network_name}, {"batch", first.batch}, {"seq_len", first.seq_len}}},
          {"baseline", first.gpus.front().analysis.device.name},
          {"gpus", gpus},
          {"verdict", verdict_json(first.verdict)},
          {"batch_sweep", sweep}};
}

} // namespace

void write_comparison(const std::vector<comparison> &comparisons, output_format format,
                      std::ostream &out, const write_options &options) {
  if (comparisons.empty())
    return;
  if (format == output_format::json) {
    out << comparison_json(comparisons).dump(2) << '\n';
    return;
  }
  if (format == output_format::csv) {
    detail::render_csv(totals_table(comparisons), out);
    return;
  }
  const bool markdown = format == output_format::markdown;
  const auto render = [&](const text_table &t) {
    markdown ? detail::render_markdown(t, out) : detail::render_aligned(t, out, options.colour);
  };
  const comparison &first = comparisons.front();
  const std::string title =
      fmt::format("{} on {} GPUs, baseline {} (seq_len {})", first.network_name, first.gpus.size(),
                  first.gpus.front().analysis.device.name, first.seq_len);
  out << (markdown ? "## " + title : detail::bold(title, options.colour)) << "\n\n";
  render(totals_table(comparisons));
  for (const comparison &c : comparisons)
    out << '\n'
        << (markdown ? "" : "")
        << detail::bold("batch " + std::to_string(c.batch) + ": " + c.verdict.text,
                        options.colour && !markdown)
        << '\n';
  if (comparisons.size() == 1) {
    out << '\n';
    render(ops_table(first));
    out << "\nper op: time per run, ×speedup over " << first.gpus.front().analysis.device.name
        << ", m/c: memory- or compute-bound on that GPU\n";
  }
  out << '\n';
  for (const gpu_result &g : first.gpus)
    out << "model parameters of " << g.analysis.device.name << ": " << g.analysis.parameters_origin
        << '\n';
  out << "host floor (every GPU): " << first.gpus.front().analysis.host.origin << '\n';
}

} // namespace roofline
