// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <ostream>
#include <string>
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

/// Columns padded to their widest cell (UTF-8 aware), two spaces apart; ANSI colour if `colour`.
void render_aligned(const text_table &table, std::ostream &out, bool colour);
void render_markdown(const text_table &table, std::ostream &out);
/// RFC 4180: fields with commas, quotes or newlines are quoted.
void render_csv(const text_table &table, std::ostream &out);

/// `value` with `digits` significant digits in plain notation: 0.000524, 12.3, 4096.
std::string significant(double value, int digits = 3);
/// Full precision, for CSV.
std::string raw(double value);
/// "87.7 µs", "1.23 ms", "2.00 s".
std::string duration(double seconds);
/// 47837192192 → "47.8 GB" (decimal gigabytes, as GPU datasheets count memory).
std::string gigabytes(double bytes);
/// 0.615 → "61.5%".
std::string percent(double share);

/// ANSI bold when `colour`.
std::string bold(const std::string &text, bool colour);

} // namespace roofline::detail
