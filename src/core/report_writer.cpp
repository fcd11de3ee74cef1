// SPDX-License-Identifier: Apache-2.0
#include "roofline/report_writer.hpp"

#include "roofline/version.hpp"
#include "json_fields.hpp"
#include "text_table.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>


namespace roofline {

std::string_view version() { return ROOFLINE_VERSION; }

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
    return file_name.size() >= suffix.size() && file_name.substr(file_name.size() - suffix.size()) == suffix;
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
using detail::text_table;
using detail::tone;
using nlohmann::json;
using detail::device_json;

using detail::duration;
using detail::percent;
using detail::raw;
using detail::significant;

std::string raw(std::int64_t value) { return std::to_string(value); }

// ------------------------------------------------------------------ the analysis as a table

std::string peak_name(precision p) {
  return (p == precision::fp32 || p == precision::fp64) ? std::string(to_string(p))
                                                        : std::string(to_string(p)) + " tensor";
}

/// One line on the GPU and how it was chosen, one on the roof the network's precision meets.
std::vector<std::string> header_lines(const report& r) {
  const gpu_spec& d = r.device;
  std::vector<std::string> lines;
  lines.push_back(fmt::format("{} · {} ({}, {})", r.network_name, d.display_name, d.name, r.device_selection));
  std::string roof = fmt::format("DRAM {} GB/s", significant(d.dram_bytes_per_s / 1e9));
  if (d.supports(r.precision)) {
    const bool sparse = r.options.sparse && d.peaks.at(r.precision).sparse_flop_per_s;
    roof = fmt::format("{} peak {} TFLOP/s {} · {} · ridge {} FLOP/B", peak_name(r.precision),
                       significant(d.peak_flop_per_s(r.precision, r.options.sparse) / 1e12, 4),
                       sparse ? "(2:4 sparse)" : "dense", roof,
                       significant(d.ridge_intensity(r.precision, r.options.sparse)));
  }
  lines.push_back(fmt::format("{} · {}, batch {}, seq_len {}", roof, to_string(r.mode), r.batch, r.seq_len));
  return lines;
}

/// A GEMM dimension; memory-bound ops have none: "—" for people, an empty CSV field.
cell dims(const std::optional<gemm_shape>& gemm, std::int64_t gemm_shape::*field) {
  if (!gemm)
    return {"—", std::string{}, tone::dim};
  return {std::to_string((*gemm).*field)};
}

text_table ops_table(const report& r) {
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
                   {"time", "predicted_time_us"},
                   {"TFLOP/s", "attainable_flop_per_s"},
                   {"share", "time_share"}};
  for (const op_report& entry : r.ops) {
    const op& o = entry.op;
    const prediction& p = entry.prediction;
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
        {duration(p.time_s), raw(p.time_s * 1e6)},
        {significant(p.attainable_flop_per_s / 1e12), raw(p.attainable_flop_per_s)},
        {percent(entry.time_share), raw(entry.time_share), entry.time_share < 0.01 ? tone::dim : tone::plain},
    });
  }
  return table;
}

std::string totals_line(const report& r) {
  const report_totals& t = r.totals;
  return fmt::format("total: {} per step · {} GFLOP · {} GB · {} of time memory-bound · {} GEMM runs, "
                     "{} distinct ops",
                     duration(t.time_s), significant(t.flops / 1e9), significant(t.bytes / 1e9),
                     percent(t.memory_bound_share), t.gemm_count, t.op_count);
}

std::string notes_line(const report& r) {
  std::string note = "time: roofline bound max(FLOPs/peak, bytes/bandwidth) per run; runs: times per step; "
                     "memory-bound ops are held against the fp32 (CUDA core) peak";
  if (r.options.sparse)
    note += "; * marks a 2:4-sparse peak";
  return note;
}

// ------------------------------------------------------------------ JSON

json optional_dim(const std::optional<gemm_shape>& gemm, std::int64_t gemm_shape::*field) {
  return gemm ? json((*gemm).*field) : json(nullptr);
}

json report_json(const report& r) {
  json ops = json::array();
  for (const op_report& entry : r.ops) {
    const op& o = entry.op;
    const prediction& p = entry.prediction;
    ops.push_back({{"layer", o.layer},
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
                   {"total_time_us", entry.total_time_s * 1e6},
                   {"attainable_flop_per_s", p.attainable_flop_per_s},
                   {"time_share", entry.time_share},
                   {"factors", p.factors},
                   {"line", o.where.line}});
  }
  json device = device_json(r.device);
  device["selection"] = r.device_selection;
  const report_totals& t = r.totals;
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
          {"model", {{"name", "roofline"}, {"sparse", r.options.sparse}}},
          {"ops", ops},
          {"totals",
           {{"predicted_time_us", t.time_s * 1e6},
            {"flops", t.flops},
            {"bytes", t.bytes},
            {"memory_bound_time_us", t.memory_bound_time_s * 1e6},
            {"memory_bound_share", t.memory_bound_share},
            {"gemm_time_us", t.gemm_time_s * 1e6},
            {"gemm_count", t.gemm_count},
            {"op_count", t.op_count}}}};
}

// ------------------------------------------------------------------ the catalog

text_table spec_table(const std::vector<gpu_spec>& specs) {
  text_table table;
  table.columns = {{"name", "name", align::left},
                   {"aliases", "aliases", align::left},
                   {"arch", "architecture", align::left},
                   {"SMs", "sm_count"},
                   {"TB/s", "dram_bytes_per_s"}};
  const std::vector<precision> shown{precision::fp64, precision::fp32, precision::tf32, precision::fp16,
                                     precision::bf16, precision::fp8,  precision::int8};
  for (precision p : shown)
    table.columns.push_back({std::string(to_string(p)) + " TF/s·ridge",
                             std::string(to_string(p)) + "_dense_flop_per_s"});
  for (const gpu_spec& s : specs) {
    std::string aliases;
    for (const std::string& alias : s.aliases)
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
      row.push_back({significant(peak / 1e12) + " · " + significant(peak / s.dram_bytes_per_s), raw(peak)});
    }
    table.rows.push_back(std::move(row));
  }
  return table;
}

json spec_list_json(const std::vector<gpu_spec>& specs) {
  json list = json::array();
  for (const gpu_spec& s : specs)
    list.push_back(device_json(s));
  return {{"schema_version", json_schema_version},
          {"tool", {{"name", "roofline-advise"}, {"version", version()}}},
          {"gpus", list}};
}

constexpr std::string_view spec_note =
    "dense peaks in TFLOP/s · ridge = peak / DRAM bandwidth in FLOP/B; fp16/bf16/tf32/fp8/int8 are tensor-core "
    "rates with fp32 accumulate; 2:4-sparse peaks (twice the dense tensor rates) are in --format json";

} // namespace

void write_report(const report& r, output_format format, std::ostream& out, const write_options& options) {
  switch (format) {
  case output_format::json:
    out << report_json(r).dump(2) << '\n';
    return;
  case output_format::csv:
    detail::render_csv(ops_table(r), out);
    return;
  case output_format::markdown: {
    const auto lines = header_lines(r);
    out << "## " << lines[0] << "\n\n" << lines[1] << "\n\n";
    detail::render_markdown(ops_table(r), out);
    out << '\n' << totals_line(r) << "\n\n" << notes_line(r) << '\n';
    return;
  }
  case output_format::table: {
    for (const std::string& line : header_lines(r))
      out << detail::bold(line, options.colour) << '\n';
    out << '\n';
    detail::render_aligned(ops_table(r), out, options.colour);
    out << '\n' << detail::bold(totals_line(r), options.colour) << '\n' << notes_line(r) << '\n';
    return;
  }
  }
}

void write_spec_list(const std::vector<gpu_spec>& specs, output_format format, std::ostream& out,
                     const write_options& options) {
  switch (format) {
  case output_format::json:
    out << spec_list_json(specs).dump(2) << '\n';
    return;
  case output_format::csv:
    detail::render_csv(spec_table(specs), out);
    return;
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
