// SPDX-License-Identifier: Apache-2.0
#include "yaml_reader.hpp"

#include "node_tree.hpp"

#include "roofline/common/printable_text.hpp"

#include "suggest.hpp"
#include "text_format.hpp"
#include "utf8.hpp"

#include <fmt/format.h>
#include <yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <limits>
#include <new>
#include <sstream>
#include <system_error>
#include <unordered_map>

namespace roofline::detail {

namespace {

/// libyaml's parser over `text` (not copied), deleted on every path.
class event_parser {
public:
  explicit event_parser(std::string_view text) {
    if (!yaml_parser_initialize(&m_parser))
      throw std::bad_alloc();
    static constexpr char nothing[] = ""; // libyaml refuses a null input, even of length 0
    const char *input = text.empty() ? nothing : text.data();
    yaml_parser_set_input_string(&m_parser, reinterpret_cast<const unsigned char *>(input),
                                 text.size());
  }
  ~event_parser() { yaml_parser_delete(&m_parser); }
  event_parser(const event_parser &) = delete;
  event_parser &operator=(const event_parser &) = delete;

  yaml_parser_t &get() noexcept { return m_parser; }

private:
  yaml_parser_t m_parser;
};

/// The text libyaml reads, and its name in messages.
struct source_text {
  std::string_view text;
  const std::string &origin;

  /// "file:line:column" of libyaml's 0-based line and column (in characters).
  source_location at(std::size_t line, std::size_t column) const {
    return {origin, static_cast<int>(line) + 1, static_cast<int>(column) + 1};
  }
  source_location at(const yaml_mark_t &mark) const { return at(mark.line, mark.column); }

  /// The location of a byte offset: libyaml reports bad encodings by offset only.
  source_location at_byte(std::size_t offset) const {
    offset = std::min(offset, text.size());
    const std::string_view before = text.substr(0, offset);
    const std::size_t line_start = before.rfind('\n') + 1; // npos + 1 == 0
    const auto characters = std::count_if(before.begin() + line_start, before.end(),
                                          [](char c) { return (c & 0xC0) != 0x80; });
    return at(static_cast<std::size_t>(std::count(before.begin(), before.end(), '\n')),
              static_cast<std::size_t>(characters));
  }
};

/// libyaml's reader refuses what is not UTF-8 (or UTF-16) text, and the characters YAML does not
/// allow raw: where (a bad character at its first byte; libyaml stops at the byte after it), and
/// what, and how to write the latter.
input_error reader_error(const yaml_parser_t &parser, const source_text &source) {
  const std::string problem = parser.problem ? parser.problem : "unreadable input";
  std::size_t offset = std::min(parser.problem_offset, source.text.size());
  if (problem == "control characters are not allowed")
    return input_error(
        source.at_byte(offset),
        fmt::format("the character U+{:04X} is not allowed in YAML text; write it "
                    "as an escape in a double-quoted string (\\x{:02X} or \\u{:04X})",
                    parser.problem_value, parser.problem_value, parser.problem_value));
  // "invalid Unicode character": a surrogate or a code point past U+10FFFF, encoded.
  if (problem.find("UTF-8") == std::string::npos && problem.find("Unicode") == std::string::npos)
    return input_error(source.at_byte(offset), "unreadable text: " + problem);
  const auto byte = [&](std::size_t at) { return static_cast<unsigned char>(source.text[at]); };
  if (problem.find("trailing") != std::string::npos) { // back to the sequence's first byte
    std::size_t at = offset;
    while (at > 0 && (byte(at - 1) & 0xC0) == 0x80)
      --at;
    if (at > 0 && byte(at - 1) >= 0xC0)
      offset = at - 1;
  }
  return input_error(
      source.at_byte(offset),
      fmt::format("not valid UTF-8 at byte 0x{:02X} ({}): the file must be UTF-8 text",
                  offset < source.text.size() ? byte(offset) : 0u, problem));
}

[[noreturn]] void throw_parse_error(const yaml_parser_t &parser, const source_text &source) {
  if (parser.error == YAML_MEMORY_ERROR)
    throw std::bad_alloc();
  if (parser.error == YAML_READER_ERROR) // a bad encoding: located by byte, no mark
    throw reader_error(parser, source);
  std::string message =
      "YAML syntax error: " + std::string(parser.problem ? parser.problem : "unreadable input");
  if (parser.context)
    message += " " + std::string(parser.context);
  throw input_error(source.at(parser.problem_mark), message);
}

/// One event, deleted on every path.
class parsed_event {
public:
  /// The parser's next event; a syntax error becomes an input_error.
  parsed_event(yaml_parser_t &parser, const source_text &source) {
    // On failure libyaml leaves the event zeroed, with nothing to delete.
    if (!yaml_parser_parse(&parser, &m_event))
      throw_parse_error(parser, source);
  }
  ~parsed_event() { yaml_event_delete(&m_event); }
  parsed_event(const parsed_event &) = delete;
  parsed_event &operator=(const parsed_event &) = delete;

  const yaml_event_t &operator*() const noexcept { return m_event; }
  const yaml_event_t *operator->() const noexcept { return &m_event; }

private:
  yaml_event_t m_event{};
};

/// The nulls our files have always had: an untagged plain scalar spelled so (or empty: `key:`).
bool is_null_scalar(const yaml_event_t &event) {
  const auto &scalar = event.data.scalar;
  if (scalar.style != YAML_PLAIN_SCALAR_STYLE || scalar.tag)
    return false;
  const std::string_view text(reinterpret_cast<const char *>(scalar.value), scalar.length);
  return text.empty() || text == "~" || text == "null" || text == "Null" || text == "NULL";
}

/// Builds a yaml_tree from libyaml's events.
class tree_builder {
public:
  explicit tree_builder(source_text source) : m_source(source), m_tree(source.text.size()) {}

  yaml_node build() {
    check_size(m_source.text, m_source.origin, "YAML");
    event_parser parser(m_source.text);
    bool had_document = false;
    for (;;) {
      const parsed_event event(parser.get(), m_source);
      switch (event->type) {
      case YAML_DOCUMENT_START_EVENT:
        if (had_document)
          throw input_error(location(event->start_mark),
                            "a second YAML document (after `---`) is not read: one document "
                            "per file");
        had_document = true;
        break;
      case YAML_SCALAR_EVENT: add_scalar(*event); break;
      case YAML_ALIAS_EVENT: add_alias(*event); break;
      case YAML_SEQUENCE_START_EVENT:
        open(yaml_node::kind::sequence, *event, event->data.sequence_start.anchor);
        break;
      case YAML_MAPPING_START_EVENT:
        open(yaml_node::kind::map, *event, event->data.mapping_start.anchor);
        break;
      case YAML_SEQUENCE_END_EVENT:
      case YAML_MAPPING_END_EVENT: m_tree.close(); break;
      case YAML_STREAM_END_EVENT: return m_tree.finish(); // null: no document, or comments only
      default: break;                                     // stream start, document end
      }
    }
  }

private:
  source_location location(const yaml_mark_t &mark) const { return m_source.at(mark); }

  static yaml_mark mark_of(const yaml_mark_t &mark) {
    return {static_cast<std::uint32_t>(mark.line), static_cast<std::uint32_t>(mark.column)};
  }

  void remember_anchor(const yaml_char_t *anchor, std::uint32_t index) {
    if (anchor) // a later anchor of the same name replaces the earlier one for later aliases
      m_anchors[reinterpret_cast<const char *>(anchor)] = index;
  }

  void add_scalar(const yaml_event_t &event) {
    const auto &scalar = event.data.scalar;
    std::uint32_t index = 0;
    if (is_null_scalar(event)) {
      index = m_tree.add_null(mark_of(event.start_mark));
    } else {
      // libyaml reads YAML 1.1's merge key `<<` as an ordinary key: the keys it would merge
      // would be missing, and the message would blame them, not it.
      if (scalar.style == YAML_PLAIN_SCALAR_STYLE &&
          std::string_view(reinterpret_cast<const char *>(scalar.value), scalar.length) == "<<")
        throw input_error(location(event.start_mark),
                          "YAML merge keys (`<<: *anchor`) are not read: write the keys out "
                          "(an alias `*anchor` of a whole layer or block is read)");
      const std::size_t first = m_tree.text().size();
      m_tree.text().append(reinterpret_cast<const char *>(scalar.value), scalar.length);
      index = m_tree.add_scalar(mark_of(event.start_mark), first,
                                scalar.style != YAML_PLAIN_SCALAR_STYLE);
    }
    remember_anchor(scalar.anchor, index);
  }

  void add_alias(const yaml_event_t &event) {
    const char *name = reinterpret_cast<const char *>(event.data.alias.anchor);
    const auto anchored = m_anchors.find(name);
    if (anchored == m_anchors.end())
      throw input_error(location(event.start_mark), "YAML syntax error: the alias `*" +
                                                        std::string(name) +
                                                        "` names no anchor defined before it");
    m_tree.add_again(anchored->second);
  }

  // The anchor is known from the start, so an alias inside the collection names it: a cycle,
  // which the readers survive because they bound how deep they go.
  void open(yaml_node::kind type, const yaml_event_t &event, const yaml_char_t *anchor) {
    // Before libyaml reads further: its scanner checks every open level at each token, so a
    // file of deep nesting would take time quadratic in its depth.
    if (m_tree.depth() >= max_yaml_depth)
      throw nested_too_deeply(location(event.start_mark));
    remember_anchor(anchor, m_tree.open(type, mark_of(event.start_mark)));
  }

  source_text m_source;
  tree_assembler m_tree;
  std::unordered_map<std::string, std::uint32_t> m_anchors;
};

} // namespace

std::string read_text_file(const std::filesystem::path &file, std::string_view what) {
  const source_location where{file.string()};
  std::error_code ec;
  const auto status = std::filesystem::status(file, ec);
  if (ec || !std::filesystem::exists(status))
    throw input_error(where, "cannot open " + std::string(what) + ": no such file");
  if (!std::filesystem::is_regular_file(status))
    throw input_error(where, "cannot open " + std::string(what) + ": not a regular file");
  const auto too_large = [&](const std::string &size) {
    return input_error(where, fmt::format("{} is {}, more than the {} MiB a {} may be (real ones "
                                          "are kilobytes)",
                                          what, size, max_text_file_bytes >> 20, what));
  };
  // Refused from the file's size alone, before a byte is read: a 5 GiB file costs no memory.
  const std::uintmax_t size = std::filesystem::file_size(file, ec);
  if (!ec && size > max_text_file_bytes)
    throw too_large(fmt::format("{} bytes", size));
  std::ifstream in(file, std::ios::binary);
  if (!in)
    throw input_error(where,
                      "cannot open " + std::string(what) + ": permission denied or unreadable");
  // Read at most one byte past the limit, so a file that grows meanwhile (or whose size the
  // file system does not say) cannot take more memory than a file at the limit.
  std::string text;
  std::size_t read = 0;
  for (std::size_t want = ec ? 0 : static_cast<std::size_t>(size); !in.eof();) {
    want = std::min(std::max(want, read + std::max<std::size_t>(read, 65536)),
                    max_text_file_bytes + 1); // doubling: no quadratic copying
    text.resize(want);
    in.read(text.data() + read, static_cast<std::streamsize>(want - read));
    read += static_cast<std::size_t>(in.gcount());
    if (in.bad())
      throw input_error(where, "cannot read " + std::string(what));
    if (read > max_text_file_bytes)
      throw too_large("growing past the limit as it is read");
  }
  text.resize(read);
  return text;
}

yaml_node parse_yaml(std::string_view text, const std::string &origin) {
  return tree_builder({text, origin}).build();
}

source_location location_of(const yaml_node &node, const std::string &file) {
  const std::optional<yaml_mark> mark = node.mark();
  if (!mark) // an empty document's root: the file's start
    return {file, 1, 1};
  return {file, static_cast<int>(mark->line) + 1, static_cast<int>(mark->column) + 1};
}

std::string describe(const yaml_node &node) {
  switch (node.type()) {
  case yaml_node::kind::null: return "nothing";
  case yaml_node::kind::sequence: return "a list";
  case yaml_node::kind::map: return "a mapping";
  case yaml_node::kind::scalar: return "'" + shown_value(node.scalar()) + "'";
  }
  return "?";
}

std::string key_text(const yaml_node &key) {
  return key.is_null() ? "null" : std::string(key.scalar());
}

std::optional<double> finite_number(const yaml_node &node) {
  std::string_view text = node.scalar();
  if (text.size() > 1 && text.front() == '+' && text[1] != '-') // from_chars reads no '+'
    text.remove_prefix(1);
  double value = 0;
  const char *end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value); // no hex, no whitespace
  if (error != std::errc{} || stop != end || !std::isfinite(value))
    return std::nullopt;
  return value;
}

yaml_map::yaml_map(yaml_node node, std::string file, std::string context,
                   const std::vector<std::string> &allowed)
    : m_node(std::move(node)), m_file(std::move(file)), m_context(std::move(context)) {
  read_entries(&allowed);
}

yaml_map::yaml_map(yaml_node node, std::string file, std::string context, any_keys)
    : m_node(std::move(node)), m_file(std::move(file)), m_context(std::move(context)) {
  read_entries(nullptr);
}

void yaml_map::read_entries(const std::vector<std::string> *allowed) {
  if (!m_node.is_map())
    throw input_error(where(), m_context + ": expected a mapping of keys to values, got " +
                                   describe(m_node));
  const std::size_t entries = m_node.size();
  m_keys.reserve(entries);
  for (std::size_t i = 0; i < entries; ++i) {
    const yaml_node key_node = m_node.key(i);
    if (!key_node.is_scalar() && !key_node.is_null()) // `? [a, b]: 1`: no name to look up
      throw input_error(location_of(key_node, m_file),
                        m_context + ": a key must be a name, got " + describe(key_node));
    // key_text's spelling, as a view into the document (which m_node keeps alive).
    const std::string_view key = key_node.is_scalar() ? key_node.scalar() : "null";
    // One hash lookup a key: a config.json of a million keys is read in linear time.
    const auto [first, added] = m_keys.emplace(key, static_cast<std::uint32_t>(i));
    if (!added)
      throw input_error(location_of(key_node, m_file),
                        m_context + ": duplicate key `" + shown_value(key) +
                            "` (first given at line " +
                            std::to_string(m_node.key(first->second).mark()->line + 1) + ")");
    if (!allowed || std::find(allowed->begin(), allowed->end(), key) != allowed->end())
      continue;
    const std::string hint = key.empty() ? "" : did_you_mean(key, *allowed);
    throw input_error(
        location_of(key_node, m_file),
        m_context + (key.empty() ? ": an empty key" : ": unknown key `" + shown_value(key) + "`") +
            (hint.empty() ? "; expected one of " + quoted_list(*allowed, " or ") : hint));
  }
}

std::optional<yaml_node> yaml_map::find(const std::string &key) const {
  const auto entry = m_keys.find(key);
  // Only a scalar key matches a lookup by name (a null key's text is "null" too).
  if (entry == m_keys.end() || !m_node.key(entry->second).is_scalar())
    return std::nullopt;
  return m_node.value(entry->second);
}

bool yaml_map::has(const std::string &key) const {
  return find(key).has_value();
}

source_location yaml_map::where(const std::string &key) const {
  const std::optional<yaml_node> value = find(key);
  return value ? location_of(*value, m_file) : where();
}

void yaml_map::fail(const std::string &key, const std::string &message) const {
  throw input_error(where(key), m_context + ": " + message);
}

yaml_node yaml_map::required(const std::string &key) const {
  const std::optional<yaml_node> value = find(key);
  if (!value)
    throw input_error(where(), m_context + ": missing required key `" + key + "`");
  return *value;
}

std::string yaml_map::string(const std::string &key) const {
  const yaml_node value = required(key);
  if (!value.is_scalar() || value.scalar().empty())
    fail(key, "`" + key + "` must be a non-empty string, got " + describe(value));
  return std::string(value.scalar());
}

std::string yaml_map::string_or(const std::string &key, std::string fallback) const {
  return has(key) ? string(key) : fallback;
}

std::int64_t yaml_map::integer(const yaml_node &value, const std::string &key,
                               std::int64_t minimum) const {
  const std::string expected = minimum > 0 ? "a positive integer" : "a non-negative integer";
  if (!value.is_scalar())
    fail(key, "`" + key + "` must be " + expected + ", got " + describe(value));
  const std::string text(value.scalar());
  const bool digits_only =
      !text.empty() && std::all_of(text.begin() + (text[0] == '-' || text[0] == '+'), text.end(),
                                   [](char c) { return c >= '0' && c <= '9'; });
  if (!digits_only || text == "-" || text == "+")
    throw input_error(location_of(value, m_file), m_context + ": `" + key + "` must be " +
                                                      expected + ", got '" + shown_value(text) +
                                                      "'");
  errno = 0;
  char *end = nullptr;
  const long long parsed = std::strtoll(text.c_str(), &end, 10);
  if (errno == ERANGE)
    throw input_error(location_of(value, m_file), m_context + ": `" + key +
                                                      "` = " + shown_value(text) +
                                                      " does not fit in a 64-bit integer");
  if (parsed < minimum)
    throw input_error(location_of(value, m_file), m_context + ": `" + key + "` must be " +
                                                      expected + ", got " + shown_value(text));
  return parsed;
}

std::int64_t yaml_map::positive_int(const std::string &key) const {
  return integer(required(key), key, 1);
}

std::int64_t yaml_map::positive_int_or(const std::string &key, std::int64_t fallback) const {
  return has(key) ? positive_int(key) : fallback;
}

std::optional<std::int64_t> yaml_map::optional_positive_int(const std::string &key) const {
  if (!has(key))
    return std::nullopt;
  return positive_int(key);
}

std::int64_t yaml_map::non_negative_int_or(const std::string &key, std::int64_t fallback) const {
  const std::optional<yaml_node> value = find(key);
  return value ? integer(*value, key, 0) : fallback;
}

std::pair<std::int64_t, std::int64_t> yaml_map::int_pair(const std::string &key,
                                                         bool allow_zero) const {
  const yaml_node value = required(key);
  const std::int64_t minimum = allow_zero ? 0 : 1;
  if (value.is_sequence()) {
    if (value.size() != 2)
      fail(key, "`" + key + "` must be one integer or a list of two, got a list of " +
                    std::to_string(value.size()));
    return {integer(value[0], key, minimum), integer(value[1], key, minimum)};
  }
  const std::int64_t both = integer(value, key, minimum);
  return {both, both};
}

std::pair<std::int64_t, std::int64_t> yaml_map::int_pair_or(const std::string &key, bool allow_zero,
                                                            std::int64_t fallback) const {
  return has(key) ? int_pair(key, allow_zero) : std::pair{fallback, fallback};
}

double yaml_map::positive_number(const std::string &key) const {
  const yaml_node value = required(key);
  // Written in full: no `.inf`, `nan`, hex or spaces; nothing that overflows a double, nor a
  // positive number so small it reads as 0.
  const std::optional<double> parsed = finite_number(value);
  if (!parsed || !(*parsed > 0))
    fail(key, "`" + key + "` must be a positive number, got " + describe(value));
  return *parsed;
}

bool yaml_map::boolean_or(const std::string &key, bool fallback) const {
  const std::optional<yaml_node> value = find(key);
  if (!value)
    return fallback;
  if (value->is_scalar()) {
    const std::string text = to_lower(value->scalar());
    if (text == "true" || text == "yes")
      return true;
    if (text == "false" || text == "no")
      return false;
  }
  fail(key, "`" + key + "` must be true or false, got " + describe(*value));
}

std::vector<std::string> yaml_map::strings_or_empty(const std::string &key) const {
  const std::optional<yaml_node> value = find(key);
  if (!value)
    return {};
  if (value->is_scalar())
    return {std::string(value->scalar())};
  if (!value->is_sequence())
    fail(key, "`" + key + "` must be a list of strings, got " + describe(*value));
  std::vector<std::string> items;
  for (std::size_t i = 0; i < value->size(); ++i) {
    const yaml_node item = (*value)[i];
    if (!item.is_scalar())
      fail(key, "`" + key + "` must be a list of strings, found " + describe(item));
    items.emplace_back(item.scalar());
  }
  return items;
}

namespace {

/// The UTF-8 character of `text` at `at`, advancing past it; U+FFFD where there is none (for each
/// byte that starts no valid UTF-8) and for the noncharacters YAML cannot hold (U+FFFE, U+FFFF).
char32_t next_code_point(std::string_view text, std::size_t &at) {
  const std::size_t length = utf8_sequence(text.substr(at));
  if (length == 0) {
    ++at;
    return 0xFFFD;
  }
  const std::uint32_t code = utf8_code_point(text.substr(at), length);
  at += length;
  return code == 0xFFFE || code == 0xFFFF ? 0xFFFD : code;
}

} // namespace

// The escapes as the calibration files written so far have them (they keep their form).
std::string yaml_double_quoted(std::string_view text) {
  std::string out = "\"";
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t start = at;
    const char32_t code = next_code_point(text, at);
    switch (code) {
    case '"': out += "\\\""; break;
    case '\\': out += "\\\\"; break;
    case '\n': out += "\\n"; break;
    case '\t': out += "\\t"; break;
    case '\r': out += "\\r"; break;
    case '\b': out += "\\b"; break;
    case '\f': out += "\\f"; break;
    default:
      if (code < 0x20 || code == 0x7F || (code >= 0x80 && code <= 0xA0))
        out += fmt::format("\\x{:02x}", static_cast<std::uint32_t>(code));
      else if (code == 0x2028 || code == 0x2029 || code == 0xFEFF)
        out += fmt::format("\\u{:04x}", static_cast<std::uint32_t>(code));
      else if (code == 0xFFFD) // also where the text was not UTF-8
        out += "\xEF\xBF\xBD";
      else
        out.append(text, start, at - start);
    }
  }
  return out + '"';
}

} // namespace roofline::detail
