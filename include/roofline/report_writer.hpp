// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/gpu_spec.hpp"
#include "roofline/report.hpp"

#include <optional>
#include <ostream>
#include <string_view>
#include <vector>

namespace roofline {

enum class output_format { table, json, csv, markdown };

/// "table", "json", "csv", "markdown" (or "md"); nullopt when unknown.
std::optional<output_format> parse_output_format(std::string_view name);

/// The format a file name's extension implies (.json, .csv, .md); nullopt otherwise.
std::optional<output_format> format_for_file(std::string_view file_name);

struct write_options {
  bool colour = false; ///< ANSI colour in the table format (a terminal)
};

/// The version of the JSON documents' layout (docs/json-schema.md).
inline constexpr int json_schema_version = 2;

/// Writes an analysis. Every format is a pure function of the report.
void write_report(const report &r, output_format format, std::ostream &out,
                  const write_options &options = {});

/// Writes the GPU catalog: peaks, bandwidth and ridge points.
void write_spec_list(const std::vector<gpu_spec> &specs, output_format format, std::ostream &out,
                     const write_options &options = {});

} // namespace roofline
