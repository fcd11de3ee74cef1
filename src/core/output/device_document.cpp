// SPDX-License-Identifier: Apache-2.0
// The local GPU (`roofline-advise device`): the device query and every roof side by side.
#include "document.hpp"
#include "json_fields.hpp"
#include "roofline/model/device_report.hpp"
#include "roofline/output/writers.hpp"

#include <fmt/format.h>

namespace roofline {

namespace {

using detail::align;
using detail::cell;
using detail::duration;
using detail::percent;
using detail::raw;
using detail::significant;
using detail::text_table;
using detail::tone;
using nlohmann::json;

std::string ratio_text(std::optional<double> numerator, std::optional<double> denominator) {
  if (!numerator || !denominator || *denominator == 0)
    return "—";
  return percent(*numerator / *denominator);
}

std::string signed_difference(std::optional<double> value, std::optional<double> reference) {
  if (!value || !reference || *reference == 0)
    return "—";
  return fmt::format("{:+.1f}%", (*value / *reference - 1) * 100);
}

struct roof_row {
  std::string name;
  std::string unit; // "TB/s" or "TFLOP/s"
  double scale;
  std::optional<double> theoretical, datasheet, measured;
  std::optional<double> ridge;
};

std::vector<roof_row> roof_rows(const device_report &r) {
  const auto measured_dram = r.ceilings ? r.ceilings->dram_bytes_per_s() : std::nullopt;
  const gpu_spec used = local_spec(r); // the ridge analyses use
  std::vector<roof_row> rows;
  rows.push_back({"DRAM bandwidth", "TB/s", 1e12, r.theoretical.dram_bytes_per_s,
                  r.datasheet ? std::optional(r.datasheet->dram_bytes_per_s) : std::nullopt,
                  measured_dram, std::nullopt});
  for (precision p : all_precisions) {
    roof_row row{std::string(to_string(p)), "TFLOP/s", 1e12};
    if (r.theoretical.supports(p))
      row.theoretical = r.theoretical.peaks.at(p).dense_flop_per_s;
    if (r.datasheet && r.datasheet->supports(p))
      row.datasheet = r.datasheet->peaks.at(p).dense_flop_per_s;
    if (r.ceilings)
      row.measured = r.ceilings->flop_per_s(p);
    if (!row.theoretical && !row.datasheet && !row.measured)
      continue;
    if (used.supports(p))
      row.ridge = used.ridge_intensity(p);
    rows.push_back(row);
  }
  return rows;
}

std::string value_text(std::optional<double> value, double scale) {
  return value ? significant(*value / scale, 4) : std::string("—");
}

text_table roof_table(const device_report &r) {
  text_table table;
  const std::string datasheet = r.datasheet ? "datasheet " + r.datasheet->name : "datasheet";
  table.columns = {{"roof", "roof", align::left},
                   {"unit", "unit", align::left},
                   {"theory", "theoretical"},
                   {datasheet, "datasheet"},
                   {"theory/sheet", "theory_vs_datasheet"},
                   {"measured", "measured"},
                   {"measured/theory", "measured_vs_theoretical"},
                   {"ridge FLOP/B", "ridge_intensity"}};
  for (const roof_row &row : roof_rows(r)) {
    const auto optional_raw = [](std::optional<double> v) {
      return v ? raw(*v) : std::string{};
    }; // empty CSV field
    table.rows.push_back(
        {{row.name},
         {row.unit, row.unit == "TB/s" ? "B/s" : "FLOP/s"},
         {value_text(row.theoretical, row.scale), optional_raw(row.theoretical)},
         {value_text(row.datasheet, row.scale), optional_raw(row.datasheet)},
         {signed_difference(row.theoretical, row.datasheet), std::string{}},
         {value_text(row.measured, row.scale), optional_raw(row.measured), tone::good},
         {ratio_text(row.measured, row.theoretical),
          row.measured && row.theoretical ? raw(*row.measured / *row.theoretical) : std::string{}},
         {row.ridge ? significant(*row.ridge) : "—", optional_raw(row.ridge)}});
  }
  return table;
}

std::string unit_of(ceiling_kind kind) {
  switch (kind) {
  case ceiling_kind::dram_bandwidth:
  case ceiling_kind::l2_bandwidth: return "TB/s";
  case ceiling_kind::flop_rate: return "TFLOP/s";
  case ceiling_kind::latency:
  case ceiling_kind::host_floor:
  case ceiling_kind::fallback_host_floor: return "µs";
  case ceiling_kind::idle_power: return "W";
  case ceiling_kind::energy_per_flop: return "pJ/FLOP";
  case ceiling_kind::energy_per_byte: return "pJ/byte";
  case ceiling_kind::sustained_flop_rate: return "TFLOP/s";
  }
  return "";
}

/// A measurement's `kind` in the JSON document: its unit and meaning.
std::string json_kind(ceiling_kind kind) {
  switch (kind) {
  case ceiling_kind::flop_rate: return "flop_per_s";
  case ceiling_kind::sustained_flop_rate: return "sustained_flop_per_s";
  case ceiling_kind::idle_power: return "idle_power_w";
  case ceiling_kind::energy_per_flop: return "energy_per_flop_j";
  case ceiling_kind::energy_per_byte: return "energy_per_byte_j";
  case ceiling_kind::dram_bandwidth:
  case ceiling_kind::l2_bandwidth: return "bytes_per_s";
  default: return std::string(to_string(kind)) + "_s"; // the times
  }
}

double display_scale(ceiling_kind kind) {
  switch (kind) {
  case ceiling_kind::idle_power: return 1;
  case ceiling_kind::energy_per_flop:
  case ceiling_kind::energy_per_byte: return 1e-12;
  default: return is_time(kind) ? 1e-6 : 1e12;
  }
}

text_table measurement_table(const measured_ceilings &ceilings) {
  text_table table;
  table.columns = {{"measurement", "name", align::left},
                   {"value", "value"},
                   {"unit", "unit", align::left},
                   {"spread", "spread"},
                   {"method", "method", align::left}};
  for (const ceiling_result &m : ceilings.results) {
    const bool failed = !m.failure.empty();
    table.rows.push_back({{m.name},
                          {failed ? "failed" : significant(m.value / display_scale(m.kind), 4),
                           raw(m.value), failed ? tone::warn : tone::plain},
                          {unit_of(m.kind)},
                          {failed ? "—" : percent(m.spread), raw(m.spread)},
                          {failed ? m.failure : m.method}});
  }
  return table;
}

std::vector<std::string> header_lines(const device_report &r) {
  const device_description &d = r.device;
  return {fmt::format(
              "{} · {} · compute capability {}.{} · {} SMs at up to {} MHz · {:.1f} GB · L2 {} MiB",
              d.name, d.uuid, d.cc_major, d.cc_minor, d.sm_count,
              significant(d.sm_clock_hz / 1e6, 4), d.memory_bytes / 1e9,
              significant(d.l2_bytes / (1024.0 * 1024.0))),
          fmt::format("memory: {} MHz × {}-bit bus × 2 (DDR) → {} TB/s · driver {} · runtime {}",
                      significant(d.memory_clock_hz / 1e6, 4), d.memory_bus_width_bits,
                      significant(theoretical_dram_bytes_per_s(d) / 1e12, 4), d.driver_version,
                      d.runtime_version)};
}

text_table all_reduce_table_of(const all_reduce_table &t) {
  text_table table;
  table.columns = {{"all-reduce", "bytes"},
                   {"time", "time_us"},
                   {"algbw GB/s", "algbw"},
                   {fmt::format("busbw GB/s ({} GPUs)", t.gpus), "busbw"}};
  for (const all_reduce_sample &s : t.samples)
    table.rows.push_back({{significant(static_cast<double>(s.bytes) / 1e6) + " MB"},
                          {duration(s.time_s)},
                          {significant(algorithm_bandwidth(s.bytes, s.time_s) / 1e9)},
                          {significant(bus_bandwidth(s.bytes, s.time_s, t.gpus) / 1e9)}});
  return table;
}

std::vector<std::string> footer(const device_report &r) {
  return {"theory: SMs × max clock × dense FLOP/clock/SM of the architecture; ridge: what analyses "
          "with choose_gpu::request auto use (measured roofs where there are any, else the "
          "datasheet's, else "
          "theory)",
          r.ceilings
              ? "ceilings: " + r.ceilings_source + " (measured " + r.ceilings->measured_at + ")"
              : "no measured ceilings yet: `describe_local_gpu::measure` measures and "
                "caches them" +
                    (r.ceilings_source.empty() ? "" : " (" + r.ceilings_source + ")")};
}

json device_report_json(const device_report &r) {
  const device_description &d = r.device;
  json roofs = json::array();
  for (const roof_row &row : roof_rows(r)) {
    const auto value = [](std::optional<double> v) { return v ? json(*v) : json(nullptr); };
    roofs.push_back({{"roof", row.name},
                     {"unit", row.unit == "TB/s" ? "bytes_per_s" : "flop_per_s"},
                     {"theoretical", value(row.theoretical)},
                     {"datasheet", value(row.datasheet)},
                     {"measured", value(row.measured)},
                     {"ridge_intensity", value(row.ridge)}});
  }
  json measurements = json::array();
  if (r.ceilings)
    for (const ceiling_result &m : r.ceilings->results)
      measurements.push_back({{"name", m.name},
                              {"kind", json_kind(m.kind)},
                              {"value", m.value},
                              {"spread", m.spread},
                              {"method", m.method},
                              {"failure", m.failure},
                              {"precision", m.precision ? json(std::string(to_string(*m.precision)))
                                                        : json(nullptr)}});
  return {{"device",
           {{"name", d.name},
            {"uuid", d.uuid},
            {"compute_capability", std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor)},
            {"sm_count", d.sm_count},
            {"sm_clock_hz", d.sm_clock_hz},
            {"memory_clock_hz", d.memory_clock_hz},
            {"memory_bus_width_bits", d.memory_bus_width_bits},
            {"l2_bytes", d.l2_bytes},
            {"memory_bytes", d.memory_bytes},
            {"driver_version", d.driver_version},
            {"runtime_version", d.runtime_version}}},
          {"datasheet", r.datasheet ? json(r.datasheet->name) : json(nullptr)},
          {"roofs", roofs},
          {"measurements", measurements},
          {"ceilings_source", r.ceilings_source},
          {"all_reduce",
           r.all_reduce ? nlohmann::json::parse(to_json_text(*r.all_reduce)) : json(nullptr)},
          {"all_reduce_source", r.all_reduce_source},
          {"local_spec", detail::device_json(local_spec(r))}};
}

class device_document final : public detail::document {
public:
  explicit device_document(const device_report &r) : m_report(r) {}

  detail::text_document text() const override {
    detail::text_document doc;
    doc.title(header_lines(m_report));
    doc.table(roof_table(m_report));
    if (m_report.ceilings)
      doc.table(measurement_table(*m_report.ceilings));
    if (m_report.all_reduce)
      doc.table(all_reduce_table_of(*m_report.all_reduce));
    doc.lines(footer(m_report));
    if (!m_report.all_reduce_source.empty())
      doc.lines({"all-reduce: " + m_report.all_reduce_source +
                 (m_report.all_reduce ? " (" + m_report.all_reduce->origin + ")" : "")});
    return doc;
  }
  text_table csv() const override { return roof_table(m_report); }
  std::vector<detail::json_field> json() const override {
    return detail::fields_of(device_report_json(m_report));
  }

private:
  const device_report &m_report;
};

} // namespace

void write_device_report(const device_report &r, output_format format, std::ostream &out,
                         const write_options &options) {
  detail::write_document(device_document(r), format, out, options);
}

} // namespace roofline
