// SPDX-License-Identifier: Apache-2.0
// The GPU catalog (`roofline-advise specs`): peaks, bandwidth and ridge points.
#include "document.hpp"
#include "json_fields.hpp"
#include "roofline/model/gpu_spec.hpp"
#include "roofline/output/writers.hpp"

#include <fmt/format.h>

namespace roofline {

namespace {

using detail::align;
using detail::cell;
using detail::raw;
using detail::significant;
using detail::text_table;
using detail::tone;

/// The SM clock the peaks are held at: "1590" (boost), "900 sustained" for a power-capped card.
cell clock_cell(const gpu_spec &s) {
  std::string text = fmt::format("{:.0f}", s.clock_hz() / 1e6);
  if (s.sustained_clock_hz)
    text += " sustained";
  return {text, raw(s.clock_hz())};
}

text_table spec_table(const std::vector<gpu_spec> &specs) {
  text_table table;
  table.columns = {{"name", "name", align::left},
                   {"aliases", "aliases", align::left, true},
                   {"arch", "architecture", align::left},
                   {"SMs", "sm_count"},
                   {"MHz", "clock_hz"},
                   {"TB/s", "dram_bytes_per_s"}};
  const std::vector<precision> shown{precision::fp64, precision::fp32, precision::tf32,
                                     precision::fp16, precision::bf16, precision::fp8,
                                     precision::int8};
  // The tensor cores' precisions fit a terminal; fp64, fp32, tf32 and int8 with --wide.
  for (precision p : shown)
    table.columns.push_back({std::string(to_string(p)) + " TF/s·ridge",
                             std::string(to_string(p)) + "_dense_flop_per_s", align::right,
                             p != precision::fp16 && p != precision::bf16 && p != precision::fp8});
  for (const gpu_spec &s : specs) {
    std::string aliases;
    for (const std::string &alias : s.aliases)
      aliases += (aliases.empty() ? "" : ",") + alias;
    std::vector<cell> row{
        {s.name},         {aliases.empty() ? "—" : aliases, aliases},
        {s.architecture}, {std::to_string(s.sm_count)},
        clock_cell(s),    {significant(s.dram_bytes_per_s / 1e12), raw(s.dram_bytes_per_s)}};
    for (precision p : shown) {
      if (!s.supports(p)) {
        row.push_back({"—", "", tone::dim});
        continue;
      }
      const double peak = s.peaks.at(p).dense_flop_per_s;
      row.push_back(
          {significant(peak / 1e12) + " · " + significant(s.ridge_intensity(p)), raw(peak)});
    }
    table.rows.push_back(std::move(row));
  }
  return table;
}

constexpr std::string_view spec_note =
    "dense peaks in TFLOP/s, as the datasheet prints them (at the boost clock) · ridge = peak at "
    "the MHz column's clock / DRAM bandwidth in FLOP/B: a power-capped card's sustained clock "
    "where its spec gives one, as analyses use it; fp16/bf16/tf32/fp8/int8 are tensor-core rates "
    "with fp32 accumulate; 2:4-sparse peaks (twice the dense tensor rates) are in "
    "output_format::json";

class spec_list_document final : public detail::document {
public:
  explicit spec_list_document(const std::vector<gpu_spec> &specs) : m_specs(specs) {}

  detail::text_document text() const override {
    detail::text_document doc;
    doc.table(spec_table(m_specs));
    doc.lines({std::string(spec_note)});
    return doc;
  }
  text_table csv() const override { return spec_table(m_specs); }
  std::vector<detail::json_field> json() const override {
    nlohmann::json list = nlohmann::json::array();
    for (const gpu_spec &s : m_specs)
      list.push_back(detail::device_json(s));
    return detail::fields_of({{"gpus", std::move(list)}});
  }

private:
  const std::vector<gpu_spec> &m_specs;
};

} // namespace

void write_spec_list(const std::vector<gpu_spec> &specs, output_format format, std::ostream &out,
                     const write_options &options) {
  detail::write_document(spec_list_document(specs), format, out, options);
}

} // namespace roofline
