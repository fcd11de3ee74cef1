// SPDX-License-Identifier: Apache-2.0
#include "roofline/report_writer.hpp"

#include "json_fields.hpp"
#include "roofline/version.hpp"
#include "text_table.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>

namespace roofline {

std::string_view version() {
  return ROOFLINE_VERSION;
}

std::optional<output_format> parse_output_format(std::string_view name) {
  if (name == "table")
    return output_format::table;
  if (name == "json")
    return output_format::json;
  if (name == "csv")
    return output_format::csv;
  if (name == "markdown" || name == "md")
    return output_format::markdown;
  return std::nullopt;
}

std::optional<output_format> format_for_file(std::string_view file_name) {
  const auto ends_with = [&](std::string_view suffix) {
    return file_name.size() >= suffix.size() &&
           file_name.substr(file_name.size() - suffix.size()) == suffix;
  };
  if (ends_with(".json"))
    return output_format::json;
  if (ends_with(".csv"))
    return output_format::csv;
  if (ends_with(".md") || ends_with(".markdown"))
    return output_format::markdown;
  if (ends_with(".txt"))
    return output_format::table;
  return std::nullopt;
}

namespace {

using detail::align;
using detail::cell;
using detail::column;
using detail::device_json;
using detail::text_table;
using detail::tone;
using nlohmann::json;

using detail::duration;
using detail::percent;
using detail::raw;
using detail::significant;

std::string raw(std::int64_t value) {
  return std::to_string(value);
}

// ------------------------------------------------------------------ the analysis as a table

std::string peak_name(precision p) {
  return (p == precision::fp32 || p == precision::fp64) ? std::string(to_string(p))
                                                        : std::string(to_string(p)) + " tensor";
}

/// One line on the GPU and how it was chosen, one on the roof the network's precision meets.
std::vector<std::string> header_lines(const report &r) {
  const gpu_spec &d = r.device;
  std::vector<std::string> lines;
  lines.push_back(
      fmt::format("{} · {} ({}, {})", r.network_name, d.display_name, d.name, r.device_selection));
  std::string roof = fmt::format("DRAM {} GB/s", significant(d.dram_bytes_per_s / 1e9));
  if (d.supports(r.precision)) {
    const bool sparse = r.options.sparse && d.peaks.at(r.precision).sparse_flop_per_s;
    roof = fmt::format("{} peak {} TFLOP/s {} · {} · ridge {} FLOP/B", peak_name(r.precision),
                       significant(d.peak_flop_per_s(r.precision, r.options.sparse) / 1e12, 4),
                       sparse ? "(2:4 sparse)" : "dense", roof,
                       significant(d.ridge_intensity(r.precision, r.options.sparse)));
  }
  lines.push_back(
      fmt::format("{} · {}, batch {}, seq_len {}", roof, to_string(r.mode), r.batch, r.seq_len));
  return lines;
}

/// A GEMM dimension; memory-bound ops have none: "—" for people, an empty CSV field.
cell dims(const std::optional<gemm_shape> &gemm, std::int64_t gemm_shape::*field) {
  if (!gemm)
    return {"—", std::string{}, tone::dim};
  return {std::to_string((*gemm).*field)};
}

/// The GEMM model's view in a few words: "256×128, 1.30 waves, 8-byte rows, L2, launch-bound".
std::string model_summary(const prediction &p) {
  if (!p.gemm)
    return p.launch_bound ? "launch-bound" : "";
  const gemm_estimate &g = *p.gemm;
  std::string text =
      fmt::format("{}×{}{}, {:.2f} waves", g.tile_m, g.tile_n,
                  g.split_k > 1 ? fmt::format(" split-K {}", g.split_k) : std::string{}, g.waves);
  if (g.alignment_bytes < 16)
    text += fmt::format(", {}-byte rows", g.alignment_bytes);
  if (g.l2_resident)
    text += ", L2";
  if (p.launch_bound)
    text += ", launch-bound";
  return text;
}

text_table ops_table(const report &r) {
  text_table table;
  table.columns = {{"layer", "layer", align::left},
                   {"pass", "pass", align::left},
                   {"kind", "kind", align::left},
                   {"prec", "precision", align::left},
                   {"M", "m"},
                   {"N", "n"},
                   {"K", "k"},
                   {"batch", "batch_count"},
                   {"runs", "count"},
                   {"GFLOP", "flops"},
                   {"MB", "bytes"},
                   {"FLOP/B", "arithmetic_intensity"},
                   {"ridge", "ridge_intensity"},
                   {"bound", "bound", align::left},
                   {"roofline", "roofline_time_us"},
                   {"device", "device_time_us"},
                   {"host floor", "host_floor_us"},
                   {"predicted", "predicted_time_us"},
                   {"TFLOP/s", "attainable_flop_per_s"},
                   {"share", "time_share"},
                   {"model", "model_summary", align::left}};
  for (const op_report &entry : r.ops) {
    const op &o = entry.op;
    const prediction &p = entry.prediction;
    const bool memory = p.bound == bound::memory;
    table.rows.push_back({
        {o.layer},
        {std::string(to_string(o.pass))},
        {o.kind},
        {std::string(to_string(o.precision))},
        dims(o.gemm, &gemm_shape::m),
        dims(o.gemm, &gemm_shape::n),
        dims(o.gemm, &gemm_shape::k),
        dims(o.gemm, &gemm_shape::batch_count),
        {std::to_string(o.count)},
        {significant(static_cast<double>(o.flops) / 1e9), raw(o.flops)},
        {significant(static_cast<double>(o.bytes) / 1e6), raw(o.bytes)},
        {significant(o.arithmetic_intensity()), raw(o.arithmetic_intensity())},
        {significant(p.ridge_intensity) + (p.sparse_peak ? "*" : ""), raw(p.ridge_intensity)},
        {std::string(to_string(p.bound)), {}, memory ? tone::warn : tone::good},
        {duration(p.roofline_time_s), raw(p.roofline_time_s * 1e6)},
        {duration(p.device_time_s), raw(p.device_time_s * 1e6)},
        {duration(p.host_floor_s), raw(p.host_floor_s * 1e6),
         p.launch_bound ? tone::warn : tone::dim},
        {duration(p.time_s), raw(p.time_s * 1e6)},
        {significant(p.attainable_flop_per_s / 1e12), raw(p.attainable_flop_per_s)},
        {percent(entry.time_share), raw(entry.time_share),
         entry.time_share < 0.01 ? tone::dim : tone::plain},
        {model_summary(p)},
    });
  }
  return table;
}

bool any_measured(const report &r) {
  for (const op_report &entry : r.ops)
    if (entry.measured)
      return true;
  return false;
}

std::string optional_number(std::optional<double> value, double scale = 1) {
  return value ? significant(*value / scale) : std::string("—");
}

/// What running the ops showed, beside what the roofline predicted.
text_table measured_table(const report &r) {
  text_table table;
  table.columns = {{"layer", "layer", align::left},
                   {"pass", "pass", align::left},
                   {"engine", "engine", align::left},
                   {"status", "status", align::left},
                   {"predicted", "predicted_time_us"},
                   {"measured", "time_us"},
                   {"pred. device", "predicted_device_time_us"},
                   {"device", "device_time_us"},
                   {"kernels µs", "kernel_time_us"},
                   {"spread", "spread"},
                   {"% roof", "roofline_fraction"},
                   {"TFLOP/s", "achieved_flop_per_s"},
                   {"DRAM MB", "dram_bytes"},
                   {"min MB", "min_bytes"},
                   {"FLOP/B", "measured_intensity"},
                   {"GB/s", "dram_bytes_per_s"},
                   {"error", "relative_error"},
                   {"kernels", "kernels", align::left}};
  for (const op_report &entry : r.ops) {
    if (!entry.measured)
      continue;
    const op &o = entry.op;
    const measurement &m = *entry.measured;
    const bool ok = m.status == measurement_status::measured;
    const bool device = ok && m.device_time_s > 0;
    const auto dram = measured_dram_bytes(m);
    std::string kernels;
    for (const std::string &name : m.kernels)
      kernels += (kernels.empty() ? "" : " + ") + name;
    const auto opt_raw = [](std::optional<double> v) { return v ? raw(*v) : std::string{}; };
    const double spread = m.time_s > 0 ? (m.max_time_s - m.min_time_s) / m.time_s : 0;
    table.rows.push_back({
        {o.layer},
        {std::string(to_string(o.pass))},
        {m.engine},
        {ok ? std::string("ok") : std::string(to_string(m.status)) + ": " + m.note,
         {},
         ok ? tone::plain : tone::warn},
        {duration(entry.prediction.time_s), raw(entry.prediction.time_s * 1e6)},
        {ok ? duration(m.time_s) : "—", ok ? raw(m.time_s * 1e6) : std::string{}},
        {duration(entry.prediction.device_time_s), raw(entry.prediction.device_time_s * 1e6)},
        {device ? duration(m.device_time_s) : "—",
         device ? raw(m.device_time_s * 1e6) : std::string{}},
        {ok && m.kernel_time_s > 0 ? duration(m.kernel_time_s) : "—",
         ok && m.kernel_time_s > 0 ? raw(m.kernel_time_s * 1e6) : std::string{}},
        {ok ? percent(spread) : "—", ok ? raw(spread) : std::string{}},
        {ok ? percent(roofline_fraction(entry.prediction, m)) : "—",
         ok ? raw(roofline_fraction(entry.prediction, m)) : std::string{}},
        {ok ? significant(achieved_flop_per_s(o, m) / 1e12) : "—",
         ok ? raw(achieved_flop_per_s(o, m)) : std::string{}},
        {optional_number(dram, 1e6), opt_raw(dram)},
        {significant(static_cast<double>(o.bytes) / 1e6), raw(o.bytes)},
        {optional_number(measured_intensity(o, m)), opt_raw(measured_intensity(o, m))},
        {ok && dram ? significant(*dram / m.time_s / 1e9) : "—",
         ok && dram ? raw(*dram / m.time_s) : std::string{}},
        {ok ? fmt::format("{:.1e}", m.relative_error) : "—",
         ok ? raw(m.relative_error) : std::string{}},
        {kernels.empty() ? "—" : kernels, kernels},
    });
  }
  return table;
}

/// One CSV row per op: the prediction's columns, then the measurement's (empty for unmeasured ops).
text_table with_measured_columns(const report &r) {
  text_table table = ops_table(r);
  const text_table measured = measured_table(r);
  constexpr std::size_t shared = 2; // layer and pass begin both tables
  for (std::size_t c = shared; c < measured.columns.size(); ++c) {
    column extra = measured.columns[c];
    extra.key = "measured_" + extra.key;
    table.columns.push_back(extra);
  }
  std::size_t next = 0;
  for (std::size_t i = 0; i < r.ops.size(); ++i) {
    auto &row = table.rows[i];
    if (r.ops[i].measured) {
      const auto &source = measured.rows[next++];
      row.insert(row.end(), source.begin() + shared, source.end());
    } else {
      row.resize(table.columns.size(), cell{"", std::string{}});
    }
  }
  return table;
}

std::string measured_line(const report &r) {
  double roofline = 0, predicted = 0, measured = 0, predicted_device = 0, device = 0,
         roofline_of_device = 0;
  int count = 0;
  for (const op_report &entry : r.ops)
    if (entry.measured && entry.measured->status == measurement_status::measured) {
      const double runs = static_cast<double>(entry.op.count);
      roofline += entry.prediction.roofline_time_s * runs;
      predicted += entry.prediction.time_s * runs;
      measured += entry.measured->time_s * runs;
      if (entry.measured->device_time_s > 0) { // graph capture can fail where eager ran
        predicted_device += entry.prediction.device_time_s * runs;
        device += entry.measured->device_time_s * runs;
        roofline_of_device += entry.prediction.roofline_time_s * runs;
      }
      ++count;
    }
  const bool cold = std::any_of(r.ops.begin(), r.ops.end(), [](const op_report &entry) {
    return entry.measured && entry.measured->cold_l2;
  });
  return fmt::format(
      "measured: {} GEMMs, {} per step eager (predicted {}), {} replayed from a CUDA graph "
      "(predicted device time {}); the roofline bound is {} (of the replayed ops: {} of their "
      "device time){}",
      count, duration(measured), duration(predicted), device > 0 ? duration(device) : "—",
      duration(predicted_device), duration(roofline),
      percent(device > 0 ? roofline_of_device / device : 0), cold ? ", cold L2" : "");
}

std::string shape_text(const gemm_shape &s) {
  return s.batch_count > 1 ? fmt::format("{}×{}×{} (×{})", s.m, s.n, s.k, s.batch_count)
                           : fmt::format("{}×{}×{}", s.m, s.n, s.k);
}

std::string speedup_text(double before_s, double after_s) {
  return fmt::format("×{:.2f} ({} → {})", before_s / after_s, duration(before_s),
                     duration(after_s));
}

text_table padding_table(const advice &a) {
  text_table table;
  table.columns = {{"pad", "layer", align::left},      {"pass", "pass", align::left},
                   {"from", "shape", align::left},     {"to", "padded_shape", align::left},
                   {"predicted", "predicted_speedup"}, {"measured", "measured_speedup"},
                   {"+FLOPs", "extra_flops"},          {"why", "reason", align::left}};
  for (const padding_advice &p : a.padding) {
    const bool measured = p.measured_time_s && p.measured_padded_time_s;
    table.rows.push_back(
        {{p.layer},
         {std::string(to_string(p.pass))},
         {shape_text(p.original)},
         {shape_text(p.padded)},
         {speedup_text(p.time_s, p.padded_time_s), raw(p.predicted_speedup())},
         {measured ? speedup_text(*p.measured_time_s, *p.measured_padded_time_s) : "—",
          measured ? raw(*p.measured_time_s / *p.measured_padded_time_s) : std::string{}},
         {fmt::format("{:+.2f}%", 100 * p.extra_flops), raw(p.extra_flops)},
         {p.reason}});
  }
  return table;
}

text_table batch_table(const advice &a) {
  text_table table;
  table.columns = {{"batch", "layer", align::left},
                   {"pass", "pass", align::left},
                   {"now", "batch"},
                   {"compute-bound from", "compute_bound_batch"},
                   {"whole waves at", "full_wave_batch"}};
  for (const batch_advice &b : a.batch)
    table.rows.push_back(
        {{b.layer},
         {std::string(to_string(b.pass))},
         {std::to_string(b.batch)},
         {b.compute_bound_batch ? std::to_string(*b.compute_bound_batch) : "never"},
         {b.full_wave_batch ? std::to_string(*b.full_wave_batch) : "—"}});
  return table;
}

json advice_json(const advice &a) {
  json padding = json::array(), batch = json::array();
  const auto shape = [](const gemm_shape &s) {
    return json{{"m", s.m}, {"n", s.n}, {"k", s.k}, {"batch_count", s.batch_count}};
  };
  const auto optional = [](std::optional<double> v, double scale) {
    return v ? json(*v * scale) : json(nullptr);
  };
  for (const padding_advice &p : a.padding)
    padding.push_back({{"layer", p.layer},
                       {"pass", to_string(p.pass)},
                       {"precision", to_string(p.prec)},
                       {"shape", shape(p.original)},
                       {"padded_shape", shape(p.padded)},
                       {"reason", p.reason},
                       {"predicted_time_us", p.time_s * 1e6},
                       {"padded_predicted_time_us", p.padded_time_s * 1e6},
                       {"predicted_speedup", p.predicted_speedup()},
                       {"extra_flops", p.extra_flops},
                       {"extra_bytes", p.extra_bytes},
                       {"measured_time_us", optional(p.measured_time_s, 1e6)},
                       {"padded_measured_time_us", optional(p.measured_padded_time_s, 1e6)}});
  for (const batch_advice &b : a.batch)
    batch.push_back(
        {{"layer", b.layer},
         {"pass", to_string(b.pass)},
         {"batch", b.batch},
         {"compute_bound_batch",
          b.compute_bound_batch ? json(*b.compute_bound_batch) : json(nullptr)},
         {"full_wave_batch", b.full_wave_batch ? json(*b.full_wave_batch) : json(nullptr)}});
  json launch = nullptr;
  if (a.launch_bound) {
    const launch_bound_advice &l = *a.launch_bound;
    launch = {{"ops", l.ops},
              {"runs", l.runs},
              {"time_us", l.time_s * 1e6},
              {"share", l.share},
              {"device_time_us", l.device_time_s * 1e6},
              {"step_time_us", l.step_time_s * 1e6},
              {"graph_step_time_us", l.graph_step_time_s * 1e6},
              {"measured_floor", l.measured_floor}};
  }
  return {{"padding", padding},
          {"launch_bound", launch},
          {"batch", batch},
          {"network_compute_bound_batch",
           a.network_compute_bound_batch ? json(*a.network_compute_bound_batch) : json(nullptr)},
          {"warnings", a.warnings}};
}

/// The advice section of the human formats.
template <class Render>
void write_advice(const report &r, std::ostream &out, bool colour, Render &&render) {
  if (!r.advice)
    return;
  const advice &a = *r.advice;
  for (const std::string &warning : a.warnings)
    out << '\n' << detail::bold("warning: " + warning, colour) << '\n';
  if (!a.padding.empty()) {
    out << '\n';
    render(padding_table(a));
  }
  if (!a.batch.empty()) {
    out << '\n';
    render(batch_table(a));
  }
}

std::string totals_line(const report &r) {
  const report_totals &t = r.totals;
  return fmt::format(
      "total: {} per step ({} on the GPU) · {} GFLOP · {} GB · {} of time memory-bound · {} "
      "launch-bound · {} GEMM runs, {} distinct ops",
      duration(t.time_s), duration(t.device_time_s), significant(t.flops / 1e9),
      significant(t.bytes / 1e9), percent(t.memory_bound_share), percent(t.launch_bound_share),
      t.gemm_count, t.op_count);
}

std::string notes_line(const report &r) {
  std::string note =
      "roofline: max(FLOPs/peak, bytes/bandwidth) per run; device: the GPU's time per run with no "
      "host gap, " +
      std::string(r.options.roofline_only ? "the roofline"
                                          : "the GEMM model (tiles, waves, alignment, L2; "
                                            "parameters: " +
                                                r.parameters_origin + ")") +
      "; host floor: " + r.host.origin +
      "; predicted: max(device, host floor), back-to-back eager calls; runs: times per step; "
      "memory-bound ops are held against the fp32 (CUDA core) peak";
  if (r.options.sparse)
    note += "; * marks a 2:4-sparse peak";
  return note;
}

// ------------------------------------------------------------------ JSON

json optional_dim(const std::optional<gemm_shape> &gemm, std::int64_t gemm_shape::*field) {
  return gemm ? json((*gemm).*field) : json(nullptr);
}

json gemm_model_json(const gemm_estimate &g) {
  return {{"kernel_family", to_string(g.family)},
          {"tile_m", g.tile_m},
          {"tile_n", g.tile_n},
          {"split_k", g.split_k},
          {"launches", g.launches},
          {"work_items", g.tiles},
          {"waves", g.waves},
          {"wave_efficiency", g.wave_efficiency},
          {"tile_efficiency", g.tile_efficiency},
          {"alignment_bytes", g.alignment_bytes},
          {"l2_resident", g.l2_resident}};
}

json measurement_json(const op &o, const prediction &p, const measurement &m) {
  const auto value = [](std::optional<double> v) { return v ? json(*v) : json(nullptr); };
  json counters = nullptr;
  if (m.counters) {
    const counter_readings &c = *m.counters;
    counters = {{"kernel_time_us", c.kernel_time_s * 1e6},
                {"dram_read_bytes", c.dram_read_bytes},
                {"dram_write_bytes", c.dram_write_bytes},
                {"l2_bytes", c.l2_bytes},
                {"tensor_flops", c.tensor_flops},
                {"fp32_flops", c.fp32_flops},
                {"fp64_flops", c.fp64_flops},
                {"sm_clock_hz", c.sm_clock_hz},
                {"passes", c.passes}};
  }
  const bool ok = m.status == measurement_status::measured;
  const bool device = ok && m.device_time_s > 0;
  return {{"engine", m.engine},
          {"status", to_string(m.status)},
          {"note", m.note},
          {"time_us", ok ? json(m.time_s * 1e6) : json(nullptr)},
          {"min_time_us", ok ? json(m.min_time_s * 1e6) : json(nullptr)},
          {"max_time_us", ok ? json(m.max_time_s * 1e6) : json(nullptr)},
          {"device_time_us", device ? json(m.device_time_s * 1e6) : json(nullptr)},
          {"device_min_time_us", device ? json(m.device_min_time_s * 1e6) : json(nullptr)},
          {"device_max_time_us", device ? json(m.device_max_time_s * 1e6) : json(nullptr)},
          {"kernel_time_us", m.kernel_time_s > 0 ? json(m.kernel_time_s * 1e6) : json(nullptr)},
          {"samples", m.samples},
          {"cold_l2", m.cold_l2},
          {"relative_error", ok ? json(m.relative_error) : json(nullptr)},
          {"achieved_flop_per_s", ok ? json(achieved_flop_per_s(o, m)) : json(nullptr)},
          {"dram_bytes", value(measured_dram_bytes(m))},
          {"measured_intensity", value(measured_intensity(o, m))},
          {"roofline_fraction", ok ? json(roofline_fraction(p, m)) : json(nullptr)},
          {"counters", counters},
          {"kernels", m.kernels},
          {"launches", m.launches == 0 ? json(nullptr) : json(m.launches)}};
}

json model_json(const report &r) {
  json parameters = json::object();
  for (const parameter_info &row : parameter_table())
    parameters[row.name] = r.parameters[row.id];
  json gemm_call = json::object(), fallback_call = json::object();
  for (precision p : all_precisions) {
    gemm_call[std::string(to_string(p))] = r.host.gemm(p) * 1e6;
    fallback_call[std::string(to_string(p))] = r.host.gemm(p, 1, true) * 1e6;
  }
  return {{"name", r.options.roofline_only ? "roofline" : "gemm-model"},
          {"sparse", r.options.sparse},
          {"parameters_origin", r.parameters_origin},
          {"parameters", parameters},
          {"host_floor",
           {{"measured", r.host.measured},
            {"origin", r.host.origin},
            {"gemm_call_us", gemm_call},
            {"fallback_call_us", fallback_call},
            {"kernel_launch_us", r.host.kernel_launch_s * 1e6}}}};
}

} // namespace

json detail::op_json(const op_report &entry) {
  const op &o = entry.op;
  const prediction &p = entry.prediction;
  return {{"layer", o.layer},
          {"pass", to_string(o.pass)},
          {"kind", o.kind},
          {"m", optional_dim(o.gemm, &gemm_shape::m)},
          {"n", optional_dim(o.gemm, &gemm_shape::n)},
          {"k", optional_dim(o.gemm, &gemm_shape::k)},
          {"batch_count", optional_dim(o.gemm, &gemm_shape::batch_count)},
          {"elements", o.is_gemm() ? json(nullptr) : json(o.elements)},
          {"count", o.count},
          {"precision", to_string(o.precision)},
          {"flops", o.flops},
          {"bytes", o.bytes},
          {"arithmetic_intensity", o.arithmetic_intensity()},
          {"ridge_intensity", p.ridge_intensity},
          {"peak_flop_per_s", p.peak_flop_per_s},
          {"sparse_peak", p.sparse_peak},
          {"bound", to_string(p.bound)},
          {"predicted_time_us", p.time_s * 1e6},
          {"device_time_us", p.device_time_s * 1e6},
          {"host_floor_us", p.host_floor_s * 1e6},
          {"launch_bound", p.launch_bound},
          {"roofline_time_us", p.roofline_time_s * 1e6},
          {"gemm_model", p.gemm ? gemm_model_json(*p.gemm) : json(nullptr)},
          {"model_summary", model_summary(p)},
          {"total_time_us", entry.total_time_s * 1e6},
          {"attainable_flop_per_s", p.attainable_flop_per_s},
          {"time_share", entry.time_share},
          {"factors", p.factors},
          {"line", o.where.line},
          {"measured", entry.measured ? measurement_json(o, p, *entry.measured) : json(nullptr)}};
}

namespace {

json report_json(const report &r) {
  json ops = json::array();
  for (const op_report &entry : r.ops)
    ops.push_back(detail::op_json(entry));
  json device = device_json(r.device);
  device["selection"] = r.device_selection;
  const report_totals &t = r.totals;
  return {{"schema_version", json_schema_version},
          {"tool", {{"name", "roofline-advise"}, {"version", version()}}},
          {"network",
           {{"name", r.network_name},
            {"origin", r.network_origin},
            {"precision", to_string(r.precision)},
            {"batch", r.batch},
            {"seq_len", r.seq_len},
            {"mode", to_string(r.mode)}}},
          {"device", device},
          {"model", model_json(r)},
          {"ops", ops},
          {"advice", r.advice ? advice_json(*r.advice) : json(nullptr)},
          {"notes", r.notes},
          {"totals",
           {{"predicted_time_us", t.time_s * 1e6},
            {"device_time_us", t.device_time_s * 1e6},
            {"flops", t.flops},
            {"bytes", t.bytes},
            {"memory_bound_time_us", t.memory_bound_time_s * 1e6},
            {"memory_bound_share", t.memory_bound_share},
            {"launch_bound_time_us", t.launch_bound_time_s * 1e6},
            {"launch_bound_share", t.launch_bound_share},
            {"launch_bound_ops", t.launch_bound_ops},
            {"gemm_time_us", t.gemm_time_s * 1e6},
            {"gemm_count", t.gemm_count},
            {"op_count", t.op_count}}}};
}

// ------------------------------------------------------------------ the catalog

text_table spec_table(const std::vector<gpu_spec> &specs) {
  text_table table;
  table.columns = {{"name", "name", align::left},
                   {"aliases", "aliases", align::left},
                   {"arch", "architecture", align::left},
                   {"SMs", "sm_count"},
                   {"TB/s", "dram_bytes_per_s"}};
  const std::vector<precision> shown{precision::fp64, precision::fp32, precision::tf32,
                                     precision::fp16, precision::bf16, precision::fp8,
                                     precision::int8};
  for (precision p : shown)
    table.columns.push_back({std::string(to_string(p)) + " TF/s·ridge",
                             std::string(to_string(p)) + "_dense_flop_per_s"});
  for (const gpu_spec &s : specs) {
    std::string aliases;
    for (const std::string &alias : s.aliases)
      aliases += (aliases.empty() ? "" : ",") + alias;
    std::vector<cell> row{{s.name},
                          {aliases.empty() ? "—" : aliases, aliases},
                          {s.architecture},
                          {std::to_string(s.sm_count)},
                          {significant(s.dram_bytes_per_s / 1e12), raw(s.dram_bytes_per_s)}};
    for (precision p : shown) {
      if (!s.supports(p)) {
        row.push_back({"—", "", tone::dim});
        continue;
      }
      const double peak = s.peaks.at(p).dense_flop_per_s;
      row.push_back(
          {significant(peak / 1e12) + " · " + significant(peak / s.dram_bytes_per_s), raw(peak)});
    }
    table.rows.push_back(std::move(row));
  }
  return table;
}

json spec_list_json(const std::vector<gpu_spec> &specs) {
  json list = json::array();
  for (const gpu_spec &s : specs)
    list.push_back(device_json(s));
  return {{"schema_version", json_schema_version},
          {"tool", {{"name", "roofline-advise"}, {"version", version()}}},
          {"gpus", list}};
}

constexpr std::string_view spec_note = "dense peaks in TFLOP/s · ridge = peak / DRAM bandwidth in "
                                       "FLOP/B; fp16/bf16/tf32/fp8/int8 are tensor-core "
                                       "rates with fp32 accumulate; 2:4-sparse peaks (twice the "
                                       "dense tensor rates) are in --format json";

} // namespace

void write_report(const report &r, output_format format, std::ostream &out,
                  const write_options &options) {
  switch (format) {
  case output_format::json: out << report_json(r).dump(2) << '\n'; return;
  case output_format::csv:
    detail::render_csv(any_measured(r) ? with_measured_columns(r) : ops_table(r), out);
    return;
  case output_format::markdown: {
    const auto lines = header_lines(r);
    out << "## " << lines[0] << "\n\n" << lines[1] << "\n\n";
    detail::render_markdown(ops_table(r), out);
    out << '\n' << totals_line(r) << "\n\n" << notes_line(r) << '\n';
    if (any_measured(r)) {
      out << '\n';
      detail::render_markdown(measured_table(r), out);
      out << '\n' << measured_line(r) << '\n';
    }
    write_advice(r, out, false, [&](const text_table &t) { detail::render_markdown(t, out); });
    for (const std::string &note : r.notes)
      out << "\nnote: " << note << '\n';
    return;
  }
  case output_format::table: {
    for (const std::string &line : header_lines(r))
      out << detail::bold(line, options.colour) << '\n';
    out << '\n';
    detail::render_aligned(ops_table(r), out, options.colour);
    out << '\n' << detail::bold(totals_line(r), options.colour) << '\n' << notes_line(r) << '\n';
    if (any_measured(r)) {
      out << '\n';
      detail::render_aligned(measured_table(r), out, options.colour);
      out << '\n' << detail::bold(measured_line(r), options.colour) << '\n';
    }
    write_advice(r, out, options.colour,
                 [&](const text_table &t) { detail::render_aligned(t, out, options.colour); });
    for (const std::string &note : r.notes)
      out << "note: " << note << '\n';
    return;
  }
  }
}

void write_spec_list(const std::vector<gpu_spec> &specs, output_format format, std::ostream &out,
                     const write_options &options) {
  switch (format) {
  case output_format::json: out << spec_list_json(specs).dump(2) << '\n'; return;
  case output_format::csv: detail::render_csv(spec_table(specs), out); return;
  case output_format::markdown:
    detail::render_markdown(spec_table(specs), out);
    out << '\n' << spec_note << '\n';
    return;
  case output_format::table:
    detail::render_aligned(spec_table(specs), out, options.colour);
    out << '\n' << spec_note << '\n';
    return;
  }
}

} // namespace roofline
