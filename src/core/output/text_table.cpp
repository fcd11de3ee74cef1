// SPDX-License-Identifier: Apache-2.0
#include "text_table.hpp"

#include "suggest.hpp"
#include "text_format.hpp"
#include "utf8.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>

namespace roofline::detail {

namespace {

std::size_t display_width(const std::string &text) {
  // Count code points: every UTF-8 byte except continuation bytes (10xxxxxx) starts one.
  return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

const char *ansi(tone t) {
  switch (t) {
  case tone::good: return "\033[32m";
  case tone::warn: return "\033[33m";
  case tone::dim: return "\033[2m";
  case tone::plain: break;
  }
  return "";
}

/// `text` itself when printable_text leaves it as it is (most cells: no copy), else its escaped
/// copy in `scratch`.
const std::string &printable(const std::string &text, std::string &scratch) {
  if (first_escape(text) == std::string_view::npos)
    return text;
  scratch = printable_text(text);
  return scratch;
}

std::string csv_field(const std::string &text) {
  std::string scratch;
  const std::string &shown = printable(text, scratch);
  if (shown.find_first_of(",\"") == std::string::npos)
    return shown;
  std::string quoted = "\"";
  for (char c : shown)
    quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + '"';
}

std::string markdown_field(const std::string &text) {
  std::string escaped;
  for (char c : markdown_text(text))
    escaped += c == '|' ? std::string("\\|") : std::string(1, c);
  return escaped;
}

} // namespace

std::string markdown_text(std::string_view text) {
  std::string shown = printable_text(text);
  for (std::size_t at = shown.find('<'); at != std::string::npos; at = shown.find('<', at + 1)) {
    const char next = at + 1 < shown.size() ? shown[at + 1] : ' ';
    if (std::isalpha(static_cast<unsigned char>(next)) || next == '/' || next == '!' || next == '?')
      shown.replace(at, 1, "&lt;");
  }
  return shown;
}

std::string bold(const std::string &text, bool colour) {
  return colour ? "\033[1m" + text + "\033[0m" : text;
}

void render_aligned(const text_table &table, std::ostream &out, bool colour,
                    std::size_t max_width) {
  std::string scratch;
  std::vector<std::size_t> widths;
  for (const column &c : table.columns)
    widths.push_back(display_width(printable(c.header, scratch)));
  for (const auto &row : table.rows)
    for (std::size_t i = 0; i < row.size() && i < widths.size(); ++i)
      widths[i] = std::max(widths[i], display_width(printable(row[i].text, scratch)));
  // A last column of words (a reason, a note) wraps within `max_width` where it would pass it,
  // its later lines under its start; never narrower than a short sentence.
  std::size_t before_last = 0;
  for (std::size_t i = 0; i + 1 < widths.size(); ++i)
    before_last += widths[i] + 2;
  constexpr std::size_t narrowest_wrap = 32;
  const bool wrap_last =
      max_width > 0 && !widths.empty() && table.columns.back().align == align::left &&
      before_last + widths.back() > max_width && max_width >= before_last + narrowest_wrap;

  const auto emit = [&](std::size_t i, const std::string &raw_text, tone t, bool is_header) {
    const bool last = i + 1 == widths.size();
    std::vector<std::string> pieces{printable(raw_text, scratch)};
    if (last && wrap_last)
      pieces = wrapped(pieces.front(), max_width - before_last, 0);
    for (std::size_t piece = 0; piece < pieces.size(); ++piece) {
      const std::string &text = pieces[piece];
      if (piece > 0)
        out << std::string(before_last, ' ');
      // A piece of a cell is never wider than the cell, nor the cell than its column.
      const std::string padding(widths[i] - display_width(text), ' ');
      std::string shown = text;
      if (colour && is_header)
        shown = bold(text, true);
      else if (colour && t != tone::plain)
        shown = ansi(t) + text + "\033[0m";
      if (table.columns[i].align == align::right)
        out << padding << shown;
      else
        out << shown << (last ? "" : padding);
      out << (last ? "\n" : "  ");
    }
  };
  for (std::size_t i = 0; i < table.columns.size(); ++i)
    emit(i, table.columns[i].header, tone::plain, true);
  for (const auto &row : table.rows)
    for (std::size_t i = 0; i < table.columns.size(); ++i)
      emit(i, i < row.size() ? row[i].text : std::string{},
           i < row.size() ? row[i].tone : tone::plain, false);
}

bool names_column(const column &c, const std::string &name) {
  const std::string lower = to_lower(name);
  return lower == to_lower(c.header) || lower == to_lower(c.key);
}

text_table shown_columns(const text_table &table, bool wide,
                         const std::vector<std::string> &chosen) {
  const auto named = [&](const column &c) {
    return std::any_of(chosen.begin(), chosen.end(),
                       [&](const std::string &name) { return names_column(c, name); });
  };
  const bool choosing = std::any_of(table.columns.begin(), table.columns.end(), named);
  std::vector<std::size_t> kept;
  for (std::size_t i = 0; i < table.columns.size(); ++i) {
    const column &c = table.columns[i];
    if (choosing ? i == 0 || named(c) : wide || !c.wide)
      kept.push_back(i);
  }
  if (kept.size() == table.columns.size())
    return table;
  text_table shown;
  for (std::size_t i : kept)
    shown.columns.push_back(table.columns[i]);
  for (const auto &row : table.rows) {
    std::vector<cell> cells;
    for (std::size_t i : kept)
      cells.push_back(i < row.size() ? row[i] : cell{});
    shown.rows.push_back(std::move(cells));
  }
  return shown;
}

std::vector<std::string> wrapped(const std::string &text, std::size_t width, std::size_t indent) {
  std::vector<std::string> lines(1);
  std::size_t line_width = 0;
  bool has_word = false;
  for (std::size_t start = 0; start <= text.size();) {
    std::size_t end = std::min(text.find(' ', start), text.size());
    const std::string word = text.substr(start, end - start);
    const std::size_t word_width = display_width(word);
    if (has_word && line_width + 1 + word_width > width) {
      lines.emplace_back(indent, ' ');
      line_width = indent;
    } else if (has_word) {
      lines.back() += ' ';
      ++line_width;
    }
    lines.back() += word;
    line_width += word_width;
    has_word = true;
    start = end + 1;
  }
  return lines;
}

void render_markdown(const text_table &table, std::ostream &out) {
  out << '|';
  for (const column &c : table.columns)
    out << ' ' << markdown_field(c.header) << " |";
  out << "\n|";
  for (const column &c : table.columns)
    out << (c.align == align::right ? " ---: |" : " --- |");
  out << '\n';
  for (const auto &row : table.rows) {
    out << '|';
    for (const cell &c : row)
      out << ' ' << markdown_field(c.text) << " |";
    out << '\n';
  }
}

void render_csv(const text_table &table, std::ostream &out) {
  for (std::size_t i = 0; i < table.columns.size(); ++i)
    out << (i ? "," : "") << csv_field(table.columns[i].key);
  out << '\n';
  for (const auto &row : table.rows) {
    for (std::size_t i = 0; i < row.size(); ++i)
      out << (i ? "," : "") << csv_field(row[i].raw.value_or(row[i].text));
    out << '\n';
  }
}

} // namespace roofline::detail
