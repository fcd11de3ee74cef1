// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/output/output_format.hpp"
#include "text_format.hpp"

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

// One table model rendered three ways (aligned text, Markdown, CSV), so that the human formats
// never drift apart.
namespace roofline::detail {

enum class align { left, right };
enum class tone { plain, good, warn, dim };

struct column {
  std::string header; ///< what people read
  std::string key;    ///< the CSV header: the JSON field name
  detail::align align = align::right;
  /// Shown in the aligned table only when asked for (write_options::wide or ::columns), so that
  /// the default fits a terminal; Markdown, HTML and CSV have them all.
  bool wide = false;
};

struct cell {
  std::string text;               ///< what people read
  std::optional<std::string> raw; ///< what CSV gets (full precision, no units); unset: the text
  detail::tone tone = tone::plain;
};

struct text_table {
  std::vector<column> columns;
  std::vector<std::vector<cell>> rows;
};

/// printable_text, then `<` written `&lt;` where it could open an HTML tag (Markdown renders
/// those).
std::string markdown_text(std::string_view text);

/// Columns padded to their widest cell (UTF-8 aware), two spaces apart; ANSI colour if `colour`.
/// Every header and cell written as printable_text. Where the table passes `max_width` (0: no
/// limit) and its last column is left-aligned words, those wrap under the column's start.
void render_aligned(const text_table &table, std::ostream &out, bool colour,
                    std::size_t max_width = 0);
/// The aligned table's columns: where `chosen` names (headers or keys, in any case) some of
/// its columns, the first and those; else every column, or (not `wide`) those not marked wide.
text_table shown_columns(const text_table &table, bool wide,
                         const std::vector<std::string> &chosen);

/// Whether `name` names `c` (its header or its key, in any case).
bool names_column(const column &c, const std::string &name);

/// `text` broken at spaces into lines of at most `width` display columns (a longer word alone
/// on its line), each after the first indented by `indent` spaces.
std::vector<std::string> wrapped(const std::string &text, std::size_t width, std::size_t indent);

/// Every header and cell as markdown_text, `|` escaped.
void render_markdown(const text_table &table, std::ostream &out);
/// RFC 4180: fields (as printable_text writes them) with commas or quotes are quoted.
void render_csv(const text_table &table, std::ostream &out);

/// ANSI bold when `colour`.
std::string bold(const std::string &text, bool colour);

} // namespace roofline::detail
