// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/common/enum_table.hpp"
#include "roofline/common/printable_text.hpp"

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace roofline {

/// svg: the document's roofline chart alone; html: one self-contained page (chart, tables,
/// advice, notes).
enum class output_format { table, json, csv, markdown, html, svg };

/// The formats' names: "table", "json", "csv", "markdown" (parsed from "md" too), "html", "svg".
template <> const enum_table<output_format> &names_of<output_format>();

/// "table", "json", "csv", "markdown" (or "md"), "html", "svg"; nullopt when unknown.
std::optional<output_format> parse_output_format(std::string_view name);

/// The format a file name's extension implies (.json, .csv, .md, .txt, .html, .svg); nullopt
/// otherwise.
std::optional<output_format> format_for_file(std::string_view file_name);

struct write_options {
  bool colour = false; ///< ANSI colour in the table format (a terminal)
  /// The table format: every column, and long lines unbroken; else the key columns, and lines
  /// wrapped at table_width.
  bool wide = false;
  /// The table format: the columns named (headers or JSON keys, in any case), after the first,
  /// in each table that has some of them; a name no table of the document has is an
  /// input_error.
  std::vector<std::string> columns;
  /// How options are named in what is written: given text in the library's words, where an
  /// option is its field (`config_options::seq_len`, `compare_request::gpus`), the text to write.
  /// Called only on text that holds `::`. Unset: as it is. roofline-advise passes its flags'
  /// names (src/cli/option_words.hpp).
  std::function<std::string(std::string_view)> words;
};

/// The width the table format keeps to unless write_options::wide: a terminal's 120 columns.
inline constexpr std::size_t table_width = 120;

/// The version of the JSON documents' layout (docs/json-schema.md).
inline constexpr int json_schema_version = 2;

} // namespace roofline
