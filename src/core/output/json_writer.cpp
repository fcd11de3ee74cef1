// SPDX-License-Identifier: Apache-2.0
#include "json_writer.hpp"

#include "utf8.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace roofline::detail {

namespace {

constexpr std::size_t indent_step = 2;

/// Bytes a JSON string cannot hold as they are: control characters, the quote, the backslash,
/// DEL, and every byte of a multi-byte UTF-8 sequence (checked before it is copied).
constexpr auto special_bytes = [] {
  std::array<bool, 256> special{};
  for (std::size_t c = 0; c < 256; ++c)
    special[c] = c < 0x20 || c >= 0x7F || c == '"' || c == '\\';
  return special;
}();

void append_unicode_escape(std::string &out, std::uint32_t c) {
  if (c > 0xFFFF) { // past the 16 bits \u holds: a UTF-16 surrogate pair, as JSON writes it
    append_unicode_escape(out, 0xD800 + ((c - 0x10000) >> 10));
    append_unicode_escape(out, 0xDC00 + ((c - 0x10000) & 0x3FF));
    return;
  }
  constexpr char hex[] = "0123456789abcdef";
  out += "\\u";
  for (int shift = 12; shift >= 0; shift -= 4)
    out += hex[(c >> shift) & 0xF];
}

/// `text` quoted and escaped as nlohmann::json::dump does (UTF-8 kept as it is), except that DEL,
/// the C1 and the bidirectional-text controls are escaped too (`\\u009b`: the same string, and
/// a document safe to print on a terminal); a byte that is not valid UTF-8 is written as U+FFFD,
/// so that the document stays valid JSON.
void append_string(std::string &out, std::string_view text) {
  std::size_t plain = 0;
  while (plain < text.size() && !special_bytes[static_cast<unsigned char>(text[plain])])
    ++plain;
  out.reserve(out.size() + text.size() + 2);
  out += '"';
  out.append(text.data(), plain);
  for (std::size_t i = plain; i < text.size();) {
    const auto u = static_cast<unsigned char>(text[i]);
    if (!special_bytes[u]) {
      out += text[i++];
      continue;
    }
    if (u >= 0x80) {
      const std::size_t length = utf8_sequence(text.substr(i));
      if (length == 0) {
        out += "\xEF\xBF\xBD";
        ++i;
        continue;
      }
      const std::uint32_t c = utf8_code_point(text.substr(i), length);
      if (is_control(c))
        append_unicode_escape(out, c);
      else
        out.append(text, i, length);
      i += length;
      continue;
    }
    switch (text[i]) {
    case '"': out += "\\\""; break;
    case '\\': out += "\\\\"; break;
    case '\b': out += "\\b"; break;
    case '\f': out += "\\f"; break;
    case '\n': out += "\\n"; break;
    case '\r': out += "\\r"; break;
    case '\t': out += "\\t"; break;
    default: append_unicode_escape(out, u); // the other controls, DEL
    }
    ++i;
  }
  out += '"';
}

} // namespace

void append_json_number(std::string &out, double number) {
  if (!std::isfinite(number)) {
    out += "null";
    return;
  }
  if (number == 0) {
    out += std::signbit(number) ? "-0.0" : "0.0";
    return;
  }
  // The shortest digits that read back as `number`, then nlohmann's layout of them: plain
  // decimals while the point lies within 15 digits of the first (1e-4 <= |x| < 1e15), with
  // ".0" on integers, else d.ddde±XX.
  char scientific[32];
  const auto [end, error] = std::to_chars(scientific, scientific + sizeof scientific, number,
                                          std::chars_format::scientific);
  if (error != std::errc{})
    std::abort(); // 32 characters hold every double
  const char *p = scientific;
  if (*p == '-') {
    out += '-';
    ++p;
  }
  char digits[20];
  int count = 0;
  for (; *p != 'e'; ++p)
    if (*p != '.')
      digits[count++] = *p;
  int exponent = 0;
  std::from_chars(p + (p[1] == '+' ? 2 : 1), end, exponent);
  const int point = exponent + 1; // the decimal point's place after the first digit
  constexpr int min_point = -4, max_point = 15;
  if (count <= point && point <= max_point) {
    out.append(digits, static_cast<std::size_t>(count));
    out.append(static_cast<std::size_t>(point - count), '0');
    out += ".0";
  } else if (0 < point && point <= max_point) {
    out.append(digits, static_cast<std::size_t>(point));
    out += '.';
    out.append(digits + point, static_cast<std::size_t>(count - point));
  } else if (min_point < point && point <= 0) {
    out += "0.";
    out.append(static_cast<std::size_t>(-point), '0');
    out.append(digits, static_cast<std::size_t>(count));
  } else {
    out += digits[0];
    if (count > 1) {
      out += '.';
      out.append(digits + 1, static_cast<std::size_t>(count - 1));
    }
    const int e = point - 1;
    out += e < 0 ? "e-" : "e+";
    const int magnitude = std::abs(e);
    if (magnitude < 10)
      out += '0';
    out += std::to_string(magnitude);
  }
}

json_writer::json_writer(std::ostream &out) : m_out(out) {}

json_writer::json_writer(std::ostream &out, std::function<std::string(std::string_view)> words)
    : m_words(std::move(words)), m_out(out) {}

std::string &json_writer::sink() {
  if (m_open_objects > 0)
    return m_frames[m_open_objects - 1].text;
  // The stream in large writes: the outermost value comes in many small pieces.
  if (m_pending.size() >= (std::size_t{1} << 16))
    flush();
  return m_pending;
}

void json_writer::flush() {
  m_out.write(m_pending.data(), static_cast<std::streamsize>(m_pending.size()));
  m_pending.clear();
}

void json_writer::indent(std::string &out, std::size_t depth) {
  out += '\n';
  out.append(depth * indent_step, ' ');
}

std::string &json_writer::before_value() {
  std::string &out = sink();
  if (m_open.empty())
    return out;
  open_container &container = m_open.back();
  if (container.is_object) {
    if (!container.awaiting_value)
      throw std::logic_error("json_writer: a value in an object needs a key");
    container.awaiting_value = false;
    return out;
  }
  if (!container.empty)
    out += ',';
  indent(out, m_open.size());
  container.empty = false;
  return out;
}

void json_writer::key(std::string_view name) {
  if (m_open.empty() || !m_open.back().is_object || m_open.back().awaiting_value)
    throw std::logic_error("json_writer: a key outside an object, or after a key");
  open_container &object = m_open.back();
  object.awaiting_value = true;
  std::string &out = sink();
  if (object.streamed) {
    if (!object.empty && !(object.last_key < name))
      throw std::logic_error("json_writer: key " + std::string(name) + " after " + object.last_key +
                             " in the outermost object");
    if (!object.empty)
      out += ',';
    indent(out, m_open.size());
    append_string(out, name);
    out += ": ";
    object.last_key = name;
    object.empty = false;
    return;
  }
  object_frame &frame = m_frames[m_open_objects - 1];
  frame.starts.push_back(out.size());
  append_string(out, name);
  frame.key_ends.push_back(out.size());
  out += ": ";
}

void json_writer::begin_object() {
  const bool outermost = m_open.empty();
  std::string &out = before_value();
  if (outermost) {
    out += '{';
    m_open.push_back({true, true});
    return;
  }
  if (m_open_objects == m_frames.size())
    m_frames.emplace_back();
  object_frame &frame = m_frames[m_open_objects++];
  frame.text.clear();
  frame.starts.clear();
  frame.key_ends.clear();
  m_open.push_back({true});
}

void json_writer::sort_members(object_frame &frame) {
  const auto quoted_key = [&](std::size_t member) {
    const std::size_t start = frame.starts[member];
    return std::string_view(frame.text).substr(start, frame.key_ends[member] - start);
  };
  // Objects of one kind (the ops) repeat their keys in the same order: sorted once.
  std::size_t length = 0;
  for (std::size_t i = 0; i < frame.starts.size(); ++i)
    length += quoted_key(i).size();
  bool same = length == frame.sorted_keys.size() && frame.order.size() == frame.starts.size();
  for (std::size_t i = 0, at = 0; same && i < frame.starts.size(); ++i) {
    const std::string_view key = quoted_key(i);
    same = std::string_view(frame.sorted_keys).substr(at, key.size()) == key;
    at += key.size();
  }
  if (same)
    return;
  frame.sorted_keys.clear();
  for (std::size_t i = 0; i < frame.starts.size(); ++i)
    frame.sorted_keys += quoted_key(i);
  // The key as written, quotes left out ("ab" sorts before "ab c", as nlohmann sorts them).
  const auto key_of = [&](std::size_t member) {
    const std::string_view quoted = quoted_key(member);
    return quoted.substr(1, quoted.size() - 2);
  };
  frame.order.resize(frame.starts.size());
  for (std::size_t i = 0; i < frame.order.size(); ++i)
    frame.order[i] = i;
  std::sort(frame.order.begin(), frame.order.end(),
            [&](std::size_t a, std::size_t b) { return key_of(a) < key_of(b); });
  for (std::size_t i = 1; i < frame.order.size(); ++i)
    if (key_of(frame.order[i - 1]) == key_of(frame.order[i])) {
      const std::string name(key_of(frame.order[i]));
      frame.sorted_keys.clear(); // not a valid order to reuse
      throw std::logic_error("json_writer: key " + name + " given twice");
    }
}

void json_writer::end_object() {
  if (m_open.empty() || !m_open.back().is_object || m_open.back().awaiting_value)
    throw std::logic_error("json_writer: end_object without an open object, or after a key");
  const std::size_t depth = m_open.size();
  const bool streamed = m_open.back().streamed, empty = m_open.back().empty;
  m_open.pop_back();
  if (streamed) {
    std::string &out = sink();
    if (!empty)
      indent(out, depth - 1);
    out += '}';
    return;
  }
  object_frame &frame = m_frames[--m_open_objects];
  std::string &out = sink();
  if (frame.starts.empty()) {
    out += "{}";
    return;
  }
  sort_members(frame);
  out.reserve(out.size() + frame.text.size() + frame.starts.size() * (2 + depth * indent_step) +
              depth * indent_step + 2);
  out += '{';
  for (std::size_t i = 0; i < frame.order.size(); ++i) {
    const std::size_t member = frame.order[i];
    const std::size_t start = frame.starts[member];
    const std::size_t end =
        member + 1 < frame.starts.size() ? frame.starts[member + 1] : frame.text.size();
    if (i > 0)
      out += ',';
    indent(out, depth);
    out.append(frame.text, start, end - start);
  }
  indent(out, depth - 1);
  out += '}';
}

void json_writer::begin_array() {
  before_value() += '[';
  m_open.push_back({false});
}

void json_writer::end_array() {
  if (m_open.empty() || m_open.back().is_object)
    throw std::logic_error("json_writer: end_array without an open array");
  const bool empty = m_open.back().empty;
  m_open.pop_back();
  std::string &out = sink();
  if (!empty)
    indent(out, m_open.size());
  out += ']';
}

void json_writer::null() {
  before_value() += "null";
}

void json_writer::value(bool b) {
  before_value() += b ? "true" : "false";
}

void json_writer::value(double number) {
  append_json_number(before_value(), number);
}

void json_writer::value(std::string_view text) {
  if (m_words && text.find("::") != std::string_view::npos) // an option's field: words()
    append_string(before_value(), m_words(text));
  else
    append_string(before_value(), text);
}

void json_writer::integer(std::int64_t number) {
  char digits[24];
  const auto result = std::to_chars(digits, digits + sizeof digits, number);
  before_value().append(digits, result.ptr);
}

void json_writer::unsigned_integer(std::uint64_t number) {
  char digits[24];
  const auto result = std::to_chars(digits, digits + sizeof digits, number);
  before_value().append(digits, result.ptr);
}

void json_writer::value(const nlohmann::json &tree) {
  switch (tree.type()) {
  case nlohmann::json::value_t::object:
    begin_object();
    fields(tree);
    end_object();
    return;
  case nlohmann::json::value_t::array:
    begin_array();
    for (const nlohmann::json &item : tree)
      value(item);
    end_array();
    return;
  case nlohmann::json::value_t::string: value(tree.get_ref<const std::string &>()); return;
  case nlohmann::json::value_t::boolean: value(tree.get<bool>()); return;
  case nlohmann::json::value_t::number_integer: integer(tree.get<std::int64_t>()); return;
  case nlohmann::json::value_t::number_unsigned:
    unsigned_integer(tree.get<std::uint64_t>());
    return;
  case nlohmann::json::value_t::number_float: value(tree.get<double>()); return;
  case nlohmann::json::value_t::null:
  case nlohmann::json::value_t::binary:
  case nlohmann::json::value_t::discarded: null(); return;
  }
}

void json_writer::fields(const nlohmann::json &object) {
  for (const auto &[name, member] : object.items()) {
    key(name);
    value(member);
  }
}

void json_writer::finish() {
  if (!m_open.empty())
    throw std::logic_error("json_writer: finish with an object or array open");
  flush();
}

} // namespace roofline::detail
