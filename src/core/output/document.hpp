// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "chart_svg.hpp"
#include "json_writer.hpp"
#include "roofline/model/pass.hpp"
#include "roofline/output/output_format.hpp"
#include "text_table.hpp"

#include <nlohmann/json_fwd.hpp>

#include <algorithm>
#include <functional>
#include <iterator>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

// What every writer shares: a document is a human text (rendered as an aligned table, Markdown or
// HTML), a CSV table, a JSON body and, for analyses and comparisons, a roofline chart (SVG, and
// the top of the HTML page); write_document() is the one place that knows formats.
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

/// A top-level field of a JSON document: its key, and what writes its value.
struct json_field {
  std::string key;
  std::function<void(json_writer &)> write;
};

/// Each member of an nlohmann::json object as a field (documents small enough for a tree).
std::vector<json_field> fields_of(const nlohmann::json &object);

class document {
public:
  virtual ~document() = default;
  virtual text_document text() const = 0;
  virtual text_table csv() const = 0;
  /// The document's own top-level fields; write_document adds the envelope's (schema version,
  /// tool) and writes them all in key order, each value as it is written.
  virtual std::vector<json_field> json() const = 0;
  /// The document's roofline chart, where it has one.
  virtual std::optional<chart> roofline() const { return std::nullopt; }
  /// The document's figure as SVG (the svg format, and the top of the html): its roofline chart
  /// where it has one.
  virtual std::optional<std::string> figure() const;
};

/// "model parameters of h100-sxm5: <origin>" for the model `model_of` gives of each of `sides`
/// (a comparison's GPUs, a serving question's setups), each line once, in order.
template <class Sides, class ModelOf>
std::vector<std::string> parameter_origins(const Sides &sides, ModelOf model_of) {
  std::vector<std::string> lines;
  for (const auto &side : sides) {
    const auto &model = model_of(side);
    std::string line =
        "model parameters of " + model.spec().name + ": " + model.parameters().origin;
    if (std::find(lines.begin(), lines.end(), line) == lines.end())
      lines.push_back(std::move(line));
  }
  return lines;
}

/// Whether any of `items` is of a pass past the forward one (`pass_of(item)`): a table shows its
/// pass column only then.
template <class Items, class PassOf> bool beyond_forward(const Items &items, PassOf pass_of) {
  return std::any_of(std::begin(items), std::end(items),
                     [&](const auto &item) { return pass_of(item) != pass::forward; });
}

/// What a price in USD is of: an hour (in cents, three significant digits below a dollar) or a
/// million tokens (four significant digits).
enum class usd_amount { per_hour, per_million_tokens };

/// A price in USD as a table cell, its full value for CSV; "—" and an empty CSV field where none
/// is known.
cell usd_cell(std::optional<double> usd, usd_amount amount);

/// Writes `d` in `format`: the only switch over output formats.
void write_document(const document &d, output_format format, std::ostream &out,
                    const write_options &options);

} // namespace roofline::detail
