// SPDX-License-Identifier: Apache-2.0
// `roofline-advise compare`: totals per GPU, per-op times and speedups, the verdict.
#include "document.hpp"
#include "json_fields.hpp"
#include "roofline/compare/comparison.hpp"
#include "roofline/output/writers.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace roofline {

namespace {

using detail::align;
using detail::cell;
using detail::text_table;
using nlohmann::json;

/// "fits, 32.2 GB spare" or "needs 47.8 GB of 14.4 GB" (the GPU's memory less the reserve).
detail::cell memory_cell(const std::optional<memory_use> &m) {
  if (!m)
    return {"—", std::string{}};
  if (m->fits)
    return {"fits, " + detail::gigabytes(m->usable_bytes() - m->total_bytes) + " spare",
            detail::raw(m->total_bytes)};
  return {fmt::format("needs {} of {}", detail::gigabytes(m->total_bytes),
                      detail::gigabytes(m->usable_bytes())),
          detail::raw(m->total_bytes), detail::tone::warn};
}

/// Whether some side runs the network sharded over several GPUs.
bool sharded(const std::vector<comparison> &comparisons) {
  return std::any_of(comparisons.begin(), comparisons.end(), [](const comparison &c) {
    return std::any_of(c.gpus.begin(), c.gpus.end(),
                       [](const gpu_result &g) { return g.gpus > 1; });
  });
}

/// "×1.50 (1.21–1.86)": a speedup and its interval (none for the baseline's own ×1.00).
std::string speedup_text(const gpu_result &g) {
  const std::string speedup = fmt::format("×{:.2f}", g.speedup);
  return g.speedup_low == g.speedup_high
             ? speedup
             : speedup + fmt::format(" ({:.2f}–{:.2f})", g.speedup_low, g.speedup_high);
}

/// Whether every side runs the baseline's ops, one to one.
bool ops_compare(const comparison &c) {
  return std::all_of(c.gpus.begin(), c.gpus.end(),
                     [](const gpu_result &g) { return !g.op_speedups.empty(); });
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
                   {"$/M tokens", "usd_per_million_tokens"},
                   {"J/token", "joules_per_token", align::right, true},
                   {"memory", "memory_total_bytes"}};
  const bool per_gpu = sharded(comparisons);
  if (per_gpu) { // beside tokens/s, and the share of the step spent communicating
    table.columns.insert(table.columns.begin() + 7, {"tokens/s/GPU", "tokens_per_s_per_gpu"});
    table.columns.insert(table.columns.begin() + 9, {"collectives", "communication_share"});
  }
  // No sequence (an image model): tokens would repeat the samples; the samples take its name.
  const throughput_unit unit = comparisons.front().unit;
  const bool tokens = unit == throughput_unit::tokens;
  const auto column = [&](const std::string &key) {
    return std::find_if(table.columns.begin(), table.columns.end(),
                        [&](const detail::column &c) { return c.key == key; });
  };
  if (!tokens) {
    const std::string name(to_string(unit));
    *column("samples_per_s") = {name + "/s", name + "_per_s"};
    *column("usd_per_million_tokens") = {"$/M " + name, "usd_per_million_" + name};
  }
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
           {g.name},
           {source},
           {detail::duration_range(g.step_time_s, g.step_range.low_s, g.step_range.high_s),
            detail::raw(g.step_time_s * 1e6)},
           {speedup_text(g), detail::raw(g.speedup)},
           {detail::significant(g.samples_per_s), detail::raw(g.samples_per_s)},
           {detail::significant(g.tokens_per_s), detail::raw(g.tokens_per_s)},
           {detail::percent(g.memory_bound_share), detail::raw(g.memory_bound_share)},
           detail::usd_cell(g.usd_per_hour, detail::usd_amount::per_hour),
           detail::usd_cell(g.usd_per_million_tokens, detail::usd_amount::per_million_tokens),
           {detail::significant(g.joules_per_token), detail::raw(g.joules_per_token)},
           memory_cell(g.analysis.memory)});
      if (per_gpu) {
        std::vector<cell> &row = table.rows.back();
        row.insert(row.begin() + 7, {detail::significant(g.tokens_per_s_per_gpu),
                                     detail::raw(g.tokens_per_s_per_gpu)});
        const double share = g.analysis.totals.communication_share;
        row.insert(row.begin() + 9, {detail::percent(share), detail::raw(share)});
      }
    }
  // The key columns fit a terminal: where the numbers come from when some were measured, $/M
  // where prices are known; $/h, and samples/s beside tokens/s, with --wide.
  const auto any_gpu = [&](auto &&predicate) {
    return std::any_of(comparisons.begin(), comparisons.end(), [&](const comparison &c) {
      return std::any_of(c.gpus.begin(), c.gpus.end(), predicate);
    });
  };
  const bool measured = any_gpu([](const gpu_result &g) {
    return std::any_of(g.sources.begin(), g.sources.end(),
                       [](time_source s) { return s != time_source::predicted; });
  });
  const bool priced = any_gpu([](const gpu_result &g) { return g.usd_per_hour.has_value(); });
  column("source")->wide = !measured;
  column("usd_per_hour")->wide = true;
  const std::string samples = tokens ? "samples" : std::string(to_string(unit));
  column("usd_per_million_" + (tokens ? std::string("tokens") : samples))->wide = !priced;
  column(samples + "_per_s")->wide = tokens;
  if (per_gpu && priced) {
    // Sharded and priced, the per-GPU rate and the cost answer the question (the verdict says
    // the all-reduces' share): the whole rate and both shares go wide.
    column("tokens_per_s")->wide = tokens;
    column("memory_bound_share")->wide = true;
    column("communication_share")->wide = true;
  }
  if (!tokens) { // the tokens/s column, which would repeat the samples
    const auto at = column("tokens_per_s") - table.columns.begin();
    table.columns.erase(table.columns.begin() + at);
    for (std::vector<cell> &row : table.rows)
      row.erase(row.begin() + at);
  }
  return table;
}

/// Per op: time per run on each GPU, its speedup over the baseline and its bound (m/c).
text_table ops_table(const comparison &c) {
  text_table table;
  const bool passes = detail::beyond_forward(c.gpus.front().analysis.ops,
                                     [](const analysed_op &entry) { return entry.op.pass; });
  table.columns = {
      {"layer", "layer", align::left}, {"pass", "pass", align::left, !passes}, {"runs", "count"}};
  for (const gpu_result &g : c.gpus)
    table.columns.push_back({g.name, g.name + "_time_us"});
  const gpu_result &base = c.gpus.front();
  for (std::size_t i = 0; i < base.op_times_s.size(); ++i) {
    const op &o = base.analysis.ops[i].op;
    std::vector<cell> row{{o.layer}, {std::string(to_string(o.pass))}, {std::to_string(o.count)}};
    for (const gpu_result &g : c.gpus) {
      const bool memory = g.analysis.ops[i].prediction.bound == bound::memory;
      const std::string speed =
          &g == &base ? std::string{} : fmt::format(" ×{:.2f}", g.op_speedups[i]);
      const time_range &range = g.op_ranges[i];
      row.push_back({detail::duration_range(g.op_times_s[i], range.low_s, range.high_s) + speed +
                         (memory ? " m" : " c"),
                     detail::raw(g.op_times_s[i] * 1e6),
                     memory ? detail::tone::warn : detail::tone::plain});
    }
    table.rows.push_back(std::move(row));
  }
  return table;
}

json speedup_range_json(const gpu_result &g) {
  return {{"low", g.speedup_low}, {"high", g.speedup_high}};
}

/// The throughput fields of `g`: tokens where `unit` is tokens; else null tokens, and the samples
/// by the unit's name (`images_per_s`, `usd_per_million_images`).
void write_throughput(detail::json_writer &w, const gpu_result &g, throughput_unit unit) {
  const bool tokens = unit == throughput_unit::tokens;
  w.field("samples_per_s", g.samples_per_s);
  if (unit == throughput_unit::images)
    w.field("images_per_s", g.samples_per_s);
  const auto token_field = [&](const char *name, std::optional<double> value) {
    if (tokens)
      w.field(name, value);
    else
      w.null_field(name);
  };
  token_field("tokens_per_s", g.tokens_per_s);
  token_field("tokens_per_s_per_gpu", g.tokens_per_s_per_gpu);
  token_field("usd_per_million_tokens", g.usd_per_million_tokens);
  if (!tokens)
    w.field("usd_per_million_" + std::string(to_string(unit)), g.usd_per_million_tokens);
}

void write_gpu(detail::json_writer &w, const gpu_result &g, throughput_unit unit) {
  w.begin_object();
  json device = detail::device_json(g.analysis.model.spec());
  device["selection"] = g.analysis.device_selection;
  w.field("device", device);
  w.field("name", g.name);
  w.field("tensor_parallel", g.tensor_parallel);
  w.field("gpus", g.gpus);
  w.field("parameters_origin", g.analysis.model.parameters().origin);
  w.field("host_floor_origin", g.analysis.model.host().origin);
  w.key("memory");
  write_memory(w, g.analysis.memory);
  w.field("notes", g.analysis.notes);
  w.key("ops");
  w.begin_array();
  for (std::size_t i = 0; i < g.analysis.ops.size(); ++i) {
    w.begin_object();
    detail::write_op_fields(w, g.analysis.ops[i]);
    w.field("time_us", g.op_times_s[i] * 1e6);
    w.field("time_range_us", detail::range_us_json(g.op_ranges[i]));
    w.field("time_source", to_string(g.sources[i]));
    w.field("speedup", g.op_speedups.empty() ? std::nullopt : std::optional(g.op_speedups[i]));
    w.end_object();
  }
  w.end_array();
  w.key("totals");
  w.begin_object();
  w.field("predicted_time_us", g.step_time_s * 1e6);
  w.field("predicted_time_range_us", detail::range_us_json(g.step_range));
  w.field("memory_bound_share", g.memory_bound_share);
  w.field("launch_bound_share", g.launch_bound_share);
  write_throughput(w, g, unit);
  w.field("communication_share", g.analysis.totals.communication_share);
  w.field("speedup", g.speedup);
  w.field("speedup_range", speedup_range_json(g));
  w.field("usd_per_hour", g.usd_per_hour);
  w.field("energy_per_step_j", g.energy_per_step_j);
  w.field("joules_per_token", g.joules_per_token);
  w.field("energy_usd_per_million_tokens", g.energy_usd_per_million_tokens);
  w.field("average_power_w", g.average_power_w);
  w.end_object();
  w.end_object();
}

json verdict_json(const verdict &v) {
  return {{"fastest", v.fastest},
          {"speedup", v.speedup},
          {"cheapest", v.cheapest ? json(*v.cheapest) : json(nullptr)},
          {"within_error", v.within_error},
          {"text", v.text}};
}

std::vector<detail::json_field> comparison_fields(const std::vector<comparison> &comparisons) {
  const comparison &first = comparisons.front();
  json sweep = json::array();
  for (const comparison &c : comparisons) {
    json summary = json::array();
    const bool tokens = c.unit == throughput_unit::tokens;
    const auto token_value = [&](double value) { return tokens ? json(value) : json(nullptr); };
    for (const gpu_result &g : c.gpus) {
      summary.push_back({{"name", g.name},
                         {"tensor_parallel", g.tensor_parallel},
                         {"gpus", g.gpus},
                         {"tokens_per_s_per_gpu", token_value(g.tokens_per_s_per_gpu)},
                         {"predicted_time_us", g.step_time_s * 1e6},
                         {"predicted_time_range_us", detail::range_us_json(g.step_range)},
                         {"speedup", g.speedup},
                         {"speedup_range", speedup_range_json(g)},
                         {"samples_per_s", g.samples_per_s},
                         {"tokens_per_s", token_value(g.tokens_per_s)},
                         {"memory_bound_share", g.memory_bound_share}});
      if (c.unit == throughput_unit::images)
        summary.back()["images_per_s"] = g.samples_per_s;
    }
    sweep.push_back({{"batch", c.batch}, {"gpus", summary}, {"verdict", verdict_json(c.verdict)}});
  }
  std::vector<detail::json_field> fields =
      detail::fields_of({{"kind", "comparison"},
                         {"network",
                          {{"name", first.network_name},
                           {"batch", first.batch},
                           {"seq_len", first.seq_len},
                           {"throughput_unit", to_string(first.unit)}}},
                         {"baseline", first.gpus.front().name},
                         {"verdict", verdict_json(first.verdict)},
                         {"batch_sweep", std::move(sweep)}});
  fields.push_back({"gpus", [&first](detail::json_writer &w) {
                      w.begin_array();
                      for (const gpu_result &g : first.gpus)
                        write_gpu(w, g, first.unit);
                      w.end_array();
                    }});
  return fields;
}

class comparison_document final : public detail::document {
public:
  explicit comparison_document(const std::vector<comparison> &comparisons)
      : m_comparisons(comparisons) {}

  detail::text_document text() const override {
    detail::text_document doc;
    const comparison &first = m_comparisons.front();
    const std::string baseline = first.gpus.front().name;
    // A network with no sequence has no tokens to name ("seq_len 1" of an image model).
    doc.title({fmt::format("{} on {} {}, baseline {}{}", first.network_name, first.gpus.size(),
                           sharded(m_comparisons) ? "setups" : "GPUs", baseline,
                           first.unit == throughput_unit::tokens ? " (" + first.tokens + ")"
                                                                 : std::string{})});
    doc.table(totals_table(m_comparisons));
    for (const comparison &c : m_comparisons)
      doc.lines({"batch " + std::to_string(c.batch) + ": " + c.verdict.text}, true);
    if (m_comparisons.size() == 1 && !ops_compare(first))
      doc.lines({"per op: left out, the setups shard the network differently (JSON `gpus` holds "
                 "each one's ops)"});
    if (m_comparisons.size() == 1 && ops_compare(first)) {
      doc.table(ops_table(first));
      doc.lines({"per op: time per run (its p10–p90 interval), ×speedup over " + baseline +
                 ", m/c: memory- or compute-bound on that GPU"});
    }
    std::vector<std::string> origins = detail::parameter_origins(
        first.gpus, [](const gpu_result &g) -> const perf_model & { return g.analysis.model; });
    origins.push_back("host floor (every GPU): " + first.gpus.front().analysis.model.host().origin);
    doc.lines(origins);
    // A note every GPU's analysis gives (of the network, not the GPU) once; the others by GPU.
    const auto everywhere = [&](const std::string &note) {
      return std::all_of(first.gpus.begin(), first.gpus.end(), [&](const gpu_result &g) {
        return std::find(g.analysis.notes.begin(), g.analysis.notes.end(), note) !=
               g.analysis.notes.end();
      });
    };
    for (const std::string &note : first.gpus.front().analysis.notes)
      if (everywhere(note))
        doc.note(note);
    for (const gpu_result &g : first.gpus)
      for (const std::string &note : g.analysis.notes)
        if (!everywhere(note))
          doc.note(g.name + ": " + note);
    return doc;
  }
  text_table csv() const override { return totals_table(m_comparisons); }
  std::vector<detail::json_field> json() const override { return comparison_fields(m_comparisons); }

  std::optional<detail::chart> roofline() const override {
    return detail::comparison_chart(m_comparisons);
  }

private:
  const std::vector<comparison> &m_comparisons;
};

} // namespace

void write_comparison(const std::vector<comparison> &comparisons, output_format format,
                      std::ostream &out, const write_options &options) {
  if (!comparisons.empty())
    detail::write_document(comparison_document(comparisons), format, out, options);
}

} // namespace roofline
