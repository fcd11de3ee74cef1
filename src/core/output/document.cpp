// SPDX-License-Identifier: Apache-2.0
#include "document.hpp"
#include "suggest.hpp"

#include "roofline/common/error.hpp"
#include "roofline/common/version.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <memory>

namespace roofline {

namespace {

constexpr std::array<enum_name<output_format>, 7> format_names{{
    {output_format::table, "table"},
    {output_format::json, "json"},
    {output_format::csv, "csv"},
    {output_format::markdown, "markdown"},
    {output_format::markdown, "md", true},
    {output_format::html, "html"},
    {output_format::svg, "svg"},
}};

} // namespace

template <> const enum_table<output_format> &names_of<output_format>() {
  static constexpr enum_table<output_format> table{format_names};
  return table;
}

std::optional<output_format> parse_output_format(std::string_view name) {
  return names_of<output_format>().parse(name);
}

std::optional<output_format> format_for_file(std::string_view file_name) {
  const auto ends_with = [&](std::string_view suffix) {
    return file_name.size() >= suffix.size() &&
           file_name.substr(file_name.size() - suffix.size()) == suffix;
  };
  if (ends_with(".json"))
    return output_format::json;
  if (ends_with(".csv"))
    return output_format::csv;
  if (ends_with(".md") || ends_with(".markdown"))
    return output_format::markdown;
  if (ends_with(".txt"))
    return output_format::table;
  if (ends_with(".html") || ends_with(".htm"))
    return output_format::html;
  if (ends_with(".svg"))
    return output_format::svg;
  return std::nullopt;
}

namespace detail {

void text_document::title(std::vector<std::string> lines) {
  blocks.push_back({block::kind::title, std::move(lines), {}, true});
}
void text_document::lines(std::vector<std::string> lines, bool first_strong) {
  blocks.push_back({block::kind::lines, std::move(lines), {}, first_strong});
}
void text_document::table(text_table t) {
  blocks.push_back({block::kind::table, {}, std::move(t), false});
}
void text_document::warning(std::string text) {
  blocks.push_back({block::kind::warning, {std::move(text)}, {}, true});
}
void text_document::note(std::string text) {
  blocks.push_back({block::kind::note, {std::move(text)}, {}, false});
}

std::vector<json_field> fields_of(const nlohmann::json &object) {
  std::vector<json_field> fields;
  for (const auto &[name, value] : object.items())
    fields.push_back({name, [value = std::make_shared<const nlohmann::json>(value)](
                                json_writer &w) { w.value(*value); }});
  return fields;
}

namespace {

/// Input_error for a column `options` names that no table of `doc` has.
void check_columns(const text_document &doc, const write_options &options) {
  std::vector<std::string> known;
  for (const block &b : doc.blocks)
    if (b.kind == block::kind::table)
      for (const column &c : b.table.columns)
        if (std::find(known.begin(), known.end(), c.header) == known.end())
          known.push_back(c.header);
  for (const std::string &name : options.columns) {
    const bool found = std::any_of(doc.blocks.begin(), doc.blocks.end(), [&](const block &b) {
      return std::any_of(b.table.columns.begin(), b.table.columns.end(),
                         [&](const column &c) { return names_column(c, name); });
    });
    if (!found)
      throw input_error(fmt::format("no column of this report is named `{}`{}; its columns are {}",
                                    shown_value(name), did_you_mean(name, known),
                                    quoted_list(known, " and ")));
  }
}

void render_text(const text_document &doc, std::ostream &out, const write_options &options) {
  check_columns(doc, options);
  const bool colour = options.colour;
  const block *previous = nullptr;
  for (const block &b : doc.blocks) {
    // Notes follow each other without blank lines.
    if (previous && !(b.kind == block::kind::note && previous->kind == block::kind::note))
      out << '\n';
    previous = &b;
    // Names (a network's, a layer's) are written into these lines: no control sequence of
    // theirs reaches the terminal. Long ones broken to the table's width, the rest indented.
    const auto write = [&](const std::string &prefix, std::size_t i, bool strong) {
      const std::string text = prefix + printable_text(b.lines[i]);
      for (const std::string &line :
           options.wide ? std::vector<std::string>{text} : wrapped(text, table_width, 4))
        out << (strong ? bold(line, colour) : line) << '\n';
    };
    switch (b.kind) {
    case block::kind::title:
      for (std::size_t i = 0; i < b.lines.size(); ++i)
        write("", i, true);
      break;
    case block::kind::lines:
      for (std::size_t i = 0; i < b.lines.size(); ++i)
        write("", i, i == 0 && b.strong);
      break;
    case block::kind::table:
      render_aligned(shown_columns(b.table, options.wide, options.columns), out, colour,
                     options.wide ? 0 : table_width);
      break;
    case block::kind::warning: write("warning: ", 0, true); break;
    case block::kind::note: write("note: ", 0, false); break;
    }
  }
}

void render_markdown(const text_document &doc, std::ostream &out) {
  bool first = true;
  for (const block &b : doc.blocks) {
    if (!first)
      out << '\n';
    first = false;
    const auto line = [&](std::size_t i) { return markdown_text(b.lines[i]); };
    switch (b.kind) {
    case block::kind::title:
      for (std::size_t i = 0; i < b.lines.size(); ++i)
        out << (i == 0 ? "## " : "") << line(i) << '\n' << (i + 1 < b.lines.size() ? "\n" : "");
      break;
    case block::kind::lines:
      for (std::size_t i = 0; i < b.lines.size(); ++i)
        out << line(i) << '\n' << (i + 1 < b.lines.size() ? "\n" : "");
      break;
    case block::kind::table: render_markdown(b.table, out); break;
    case block::kind::warning: out << "**warning:** " << line(0) << '\n'; break;
    case block::kind::note: out << "note: " << line(0) << '\n'; break;
    }
  }
}

// Inline CSS only: the page must read the same with no network, and print.
constexpr const char *html_style = R"(body{font-family:"DejaVu Sans",Helvetica,Arial,sans-serif;
color:#222;margin:24px;line-height:1.4}
h1{font-size:20px;margin:0 0 4px}p{margin:6px 0}
figure{margin:16px 0}figure svg{max-width:100%;height:auto;border:1px solid #ddd}
p{max-width:1100px}
table{border-collapse:collapse;margin:12px 0;font-size:12px}
th,td{padding:2px 6px;border-bottom:1px solid #e4e4e4;white-space:nowrap}
td:last-child{white-space:normal;min-width:14em;max-width:30em}
th{background:#f2f2f2;text-align:left;position:sticky;top:0}
td.right,th.right{text-align:right;font-variant-numeric:tabular-nums}
td.warn{color:#a34700;font-weight:600}td.good{color:#006b4f}td.dim{color:#888}
.warning{background:#fff4e0;border-left:4px solid #E69F00;padding:6px 10px}
.note{color:#555;font-size:13px;margin:2px 0}
@media print{body{margin:0}figure svg{border:none}tr{page-break-inside:avoid}
th{position:static}table{font-size:9px}})";

void render_html_table(const text_table &table, std::ostream &out) {
  out << "<table>\n<thead><tr>";
  for (const column &c : table.columns)
    out << "<th" << (c.align == align::right ? " class=\"right\"" : "") << ">"
        << escape_xml(c.header) << "</th>";
  out << "</tr></thead>\n<tbody>\n";
  for (const std::vector<cell> &row : table.rows) {
    out << "<tr>";
    for (std::size_t i = 0; i < row.size(); ++i) {
      std::string classes =
          i < table.columns.size() && table.columns[i].align == align::right ? "right" : "";
      const char *tone_class = row[i].tone == tone::warn   ? "warn"
                               : row[i].tone == tone::good ? "good"
                               : row[i].tone == tone::dim  ? "dim"
                                                           : "";
      if (*tone_class)
        classes += (classes.empty() ? "" : " ") + std::string(tone_class);
      out << "<td" << (classes.empty() ? "" : " class=\"" + classes + "\"") << ">"
          << escape_xml(row[i].text) << "</td>";
    }
    out << "</tr>\n";
  }
  out << "</tbody></table>\n";
}

void render_html(const text_document &doc, const std::optional<std::string> &figure,
                 std::ostream &out) {
  std::string title = "roofline-advise";
  for (const block &b : doc.blocks)
    if (b.kind == block::kind::title && !b.lines.empty()) {
      title = b.lines.front();
      break;
    }
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>"
      << escape_xml(title) << "</title>\n<style>" << html_style << "</style>\n</head>\n<body>\n";
  bool chart_drawn = !figure;
  const auto draw_chart = [&] {
    if (!chart_drawn)
      out << "<figure>\n" << *figure << "</figure>\n";
    chart_drawn = true;
  };
  for (const block &b : doc.blocks) {
    switch (b.kind) {
    case block::kind::title:
      for (std::size_t i = 0; i < b.lines.size(); ++i)
        out << (i == 0 ? "<h1>" : "<p>") << escape_xml(b.lines[i]) << (i == 0 ? "</h1>" : "</p>")
            << '\n';
      draw_chart(); // the chart first, under the title
      break;
    case block::kind::lines:
      draw_chart();
      for (std::size_t i = 0; i < b.lines.size(); ++i)
        out << "<p>" << (i == 0 && b.strong ? "<strong>" : "") << escape_xml(b.lines[i])
            << (i == 0 && b.strong ? "</strong>" : "") << "</p>\n";
      break;
    case block::kind::table:
      draw_chart();
      render_html_table(b.table, out);
      break;
    case block::kind::warning:
      out << "<p class=\"warning\"><strong>warning:</strong> " << escape_xml(b.lines.front())
          << "</p>\n";
      break;
    case block::kind::note:
      out << "<p class=\"note\">note: " << escape_xml(b.lines.front()) << "</p>\n";
      break;
    }
  }
  draw_chart();
  out << "</body>\n</html>\n";
}

} // namespace

namespace {

/// `text` in write_options::words, where it names an option (`struct::field`).
void to_words(std::string &text, const write_options &options) {
  if (text.find("::") != std::string::npos)
    text = options.words(text);
}

/// `table`'s cells in write_options::words.
text_table in_words(text_table table, const write_options &options) {
  for (auto &row : table.rows)
    for (cell &c : row) {
      to_words(c.text, options);
      if (c.raw)
        to_words(*c.raw, options);
    }
  return table;
}

/// `doc`'s lines and tables in write_options::words.
text_document in_words(text_document doc, const write_options &options) {
  if (!options.words)
    return doc;
  for (block &b : doc.blocks) {
    for (std::string &line : b.lines)
      to_words(line, options);
    b.table = in_words(std::move(b.table), options);
  }
  return doc;
}

std::optional<std::string> figure_in_words(const document &d, const write_options &options) {
  std::optional<std::string> figure = d.figure();
  if (figure && options.words)
    to_words(*figure, options);
  return figure;
}

} // namespace

void write_document(const document &d, output_format format, std::ostream &out,
                    const write_options &options) {
  switch (format) {
  case output_format::json: {
    std::vector<json_field> fields = d.json();
    fields.push_back({"schema_version", [](json_writer &w) { w.value(json_schema_version); }});
    fields.push_back({"tool", [](json_writer &w) {
                        w.begin_object();
                        w.field("name", "roofline-advise");
                        w.field("version", version());
                        w.end_object();
                      }});
    std::sort(fields.begin(), fields.end(),
              [](const json_field &a, const json_field &b) { return a.key < b.key; });
    json_writer w(out, options.words);
    w.begin_object();
    for (const json_field &field : fields) {
      w.key(field.key);
      field.write(w);
    }
    w.end_object();
    w.finish();
    out << '\n';
    return;
  }
  case output_format::csv:
    render_csv(options.words ? in_words(d.csv(), options) : d.csv(), out);
    return;
  case output_format::html:
    render_html(in_words(d.text(), options), figure_in_words(d, options), out);
    return;
  case output_format::svg:
    if (const std::optional<std::string> svg = figure_in_words(d, options)) {
      out << *svg;
      return;
    }
    throw input_error("this output has no chart (analyses, comparisons and serving questions "
                      "have one)");
  case output_format::markdown: render_markdown(in_words(d.text(), options), out); return;
  case output_format::table: render_text(in_words(d.text(), options), out, options); return;
  }
}

cell usd_cell(std::optional<double> usd, usd_amount amount) {
  if (!usd)
    return {"—", std::string{}};
  // Below a dollar, cents alone would round a $0.001 hourly price to 0.00.
  const char *format = amount == usd_amount::per_million_tokens ? "{:.4g}"
                       : *usd < 0.995                           ? "{:.3g}"
                                                                : "{:.2f}";
  return {fmt::format(fmt::runtime(format), *usd), raw(*usd)};
}

std::optional<std::string> document::figure() const {
  const std::optional<chart> c = roofline();
  return c ? std::optional(render_svg(*c)) : std::nullopt;
}

} // namespace detail
} // namespace roofline
