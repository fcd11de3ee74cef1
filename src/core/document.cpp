// SPDX-License-Identifier: Apache-2.0
#include "document.hpp"

#include "roofline/version.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <memory>

namespace roofline {

std::optional<output_format> parse_output_format(std::string_view name) {
  if (name == "table")
    return output_format::table;
  if (name == "json")
    return output_format::json;
  if (name == "csv")
    return output_format::csv;
  if (name == "markdown" || name == "md")
    return output_format::markdown;
  return std::nullopt;
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

void render_text(const text_document &doc, std::ostream &out, bool colour) {
  const block *previous = nullptr;
  for (const block &b : doc.blocks) {
    // Notes follow each other without blank lines.
    if (previous && !(b.kind == block::kind::note && previous->kind == block::kind::note))
      out << '\n';
    previous = &b;
    switch (b.kind) {
    case block::kind::title:
      for (const std::string &line : b.lines)
        out << bold(line, colour) << '\n';
      break;
    case block::kind::lines:
      for (std::size_t i = 0; i < b.lines.size(); ++i)
        out << (i == 0 && b.strong ? bold(b.lines[i], colour) : b.lines[i]) << '\n';
      break;
    case block::kind::table: render_aligned(b.table, out, colour); break;
    case block::kind::warning: out << bold("warning: " + b.lines.front(), colour) << '\n'; break;
    case block::kind::note: out << "note: " << b.lines.front() << '\n'; break;
    }
  }
}

void render_markdown(const text_document &doc, std::ostream &out) {
  bool first = true;
  for (const block &b : doc.blocks) {
    if (!first)
      out << '\n';
    first = false;
    switch (b.kind) {
    case block::kind::title:
      for (std::size_t i = 0; i < b.lines.size(); ++i)
        out << (i == 0 ? "## " : "") << b.lines[i] << '\n' << (i + 1 < b.lines.size() ? "\n" : "");
      break;
    case block::kind::lines:
      for (std::size_t i = 0; i < b.lines.size(); ++i)
        out << b.lines[i] << '\n' << (i + 1 < b.lines.size() ? "\n" : "");
      break;
    case block::kind::table: render_markdown(b.table, out); break;
    case block::kind::warning: out << "**warning:** " << b.lines.front() << '\n'; break;
    case block::kind::note: out << "note: " << b.lines.front() << '\n'; break;
    }
  }
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
    json_writer w(out);
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
  case output_format::csv: render_csv(d.csv(), out); return;
  case output_format::markdown: render_markdown(d.text(), out); return;
  case output_format::table: render_text(d.text(), out, options.colour); return;
  }
}

} // namespace detail
} // namespace roofline
