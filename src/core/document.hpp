// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/output_format.hpp"
#include "text_table.hpp"

#include <nlohmann/json.hpp>

#include <ostream>
#include <string>
#include <vector>

// What every writer shares: a document is a human text (rendered as an aligned table or as
// Markdown), a CSV table and a JSON body; write_document() is the one place that knows formats.
namespace roofline::detail {

/// One part of a human document, in order, separated from the next by a blank line.
struct block {
  enum class kind {
    title,   ///< bold lines; a Markdown heading (first line) and paragraph
    lines,   ///< plain lines, the first bold when `strong`
    table,   ///< a text_table
    warning, ///< "warning: ..." in bold
    note,    ///< "note: ..."
  };
  block::kind kind = kind::lines;
  std::vector<std::string> lines;
  text_table table;
  bool strong = false;
};

struct text_document {
  std::vector<block> blocks;

  void title(std::vector<std::string> lines);
  void lines(std::vector<std::string> lines, bool first_strong = false);
  void table(text_table t);
  void warning(std::string text);
  void note(std::string text);
};

class document {
public:
  virtual ~document() = default;
  virtual text_document text() const = 0;
  virtual text_table csv() const = 0;
  /// The document's own fields; the envelope (schema version, tool) is added around them.
  virtual nlohmann::json json() const = 0;
};

/// Writes `d` in `format`: the only switch over output formats.
void write_document(const document &d, output_format format, std::ostream &out,
                    const write_options &options);

} // namespace roofline::detail
