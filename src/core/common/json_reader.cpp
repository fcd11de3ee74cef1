// SPDX-License-Identifier: Apache-2.0
#include "json_reader.hpp"

#include "node_tree.hpp"
#include "roofline/common/printable_text.hpp"
#include "utf8.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cstdint>
#include <string>

namespace roofline::detail {

namespace {

/// A strict JSON reader (RFC 8259) that builds the tree parse_yaml builds: what JSON refuses is
/// refused, located (a comment, a trailing comma, a lone surrogate, a raw control character),
/// and what it allows is read, keys of any length and escapes included. Strings are quoted
/// scalars, numbers plain scalars as written (finite_number reads them), `true` and `false` plain
/// scalars, `null` a null node. One pass, each byte read once; lines and columns (characters) are
/// counted as it goes.
class json_reader {
public:
  json_reader(std::string_view text, const std::string &origin)
      : m_text(text), m_origin(origin), m_tree(text.size()) {}

  yaml_node read() {
    check_size(m_text, m_origin, "JSON");
    if (m_text.substr(0, 3) == "\xEF\xBB\xBF") // a byte-order mark, which RFC 8259 lets us skip
      m_pos = 3;
    skip_space();
    value();
    skip_space();
    if (m_pos < m_text.size())
      unexpected("the end of the text after the JSON value (one value per file)");
    return m_tree.finish();
  }

private:
  unsigned char byte(std::size_t at) const noexcept {
    return at < m_text.size() ? static_cast<unsigned char>(m_text[at]) : 0u;
  }
  bool at_end() const noexcept { return m_pos >= m_text.size(); }
  yaml_mark mark() const noexcept { return {m_line, m_column}; }
  source_location location(yaml_mark at) const {
    return {m_origin, static_cast<int>(at.line) + 1, static_cast<int>(at.column) + 1};
  }

  [[noreturn]] void fail(yaml_mark at, const std::string &message) const {
    throw input_error(location(at), "JSON syntax error: " + message);
  }

  /// What stands at the read position, as a message names it.
  std::string found() const {
    if (at_end())
      return "the end of the text";
    const std::size_t length = utf8_sequence(m_text.substr(m_pos));
    if (length == 0)
      throw input_error(location(mark()),
                        fmt::format("not valid UTF-8 at byte 0x{:02X}: the file must be UTF-8 text",
                                    byte(m_pos)));
    // A word (NaN, Infinity, True, None, undefined): shown whole, up to a readable length.
    std::size_t end = m_pos;
    while (end < m_text.size() && end - m_pos < 32 &&
           (std::isalnum(byte(end)) || byte(end) == '_' || byte(end) == '.'))
      ++end;
    return "`" + printable_text(m_text.substr(m_pos, std::max(end - m_pos, length))) + "`";
  }

  [[noreturn]] void unexpected(const std::string &expected) const {
    if (byte(m_pos) == '/' && (byte(m_pos + 1) == '/' || byte(m_pos + 1) == '*'))
      fail(mark(), "comments are not JSON (`//` and `/* */` are JavaScript's)");
    if (byte(m_pos) == '\'')
      fail(mark(), "JSON strings are written in double quotes, not single");
    fail(mark(), "expected " + expected + ", got " + found());
  }

  void skip_space() {
    for (; m_pos < m_text.size(); ++m_pos) {
      const char c = m_text[m_pos];
      if (c == ' ' || c == '\t') {
        ++m_column;
      } else if (c == '\n' || (c == '\r' && byte(m_pos + 1) != '\n')) {
        ++m_line;
        m_column = 0;
      } else if (c != '\r') { // \r\n: one line break, counted at the \n
        return;
      }
    }
  }

  /// Consumes `c` if it stands at the read position.
  bool take(char c) {
    if (byte(m_pos) != static_cast<unsigned char>(c))
      return false;
    ++m_pos;
    ++m_column;
    return true;
  }

  void value() {
    const unsigned char c = byte(m_pos);
    if (c == '{' || c == '[') {
      collection(c == '{');
    } else if (c == '"') {
      string();
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      number();
    } else if (word("true") || word("false")) {
      // read as a plain scalar, as YAML's `true`
    } else if (m_text.substr(m_pos, 4) == "null") {
      m_tree.add_null(mark());
      m_pos += 4;
      m_column += 4;
    } else {
      unexpected("a value (an object, a list, a string, a number, true, false or null)");
    }
  }

  bool word(std::string_view w) {
    if (m_text.substr(m_pos, w.size()) != w)
      return false;
    const yaml_mark at = mark();
    const std::size_t first = m_tree.text().size();
    m_tree.text() += w;
    m_tree.add_scalar(at, first, false);
    m_pos += w.size();
    m_column += static_cast<std::uint32_t>(w.size());
    return true;
  }

  void collection(bool object) {
    const yaml_mark at = mark();
    if (m_tree.depth() >= max_yaml_depth)
      throw nested_too_deeply(location(at));
    m_tree.open(object ? yaml_node::kind::map : yaml_node::kind::sequence, at);
    ++m_pos;
    ++m_column;
    const char close = object ? '}' : ']';
    skip_space();
    if (!take(close)) {
      for (;;) {
        if (object) {
          if (byte(m_pos) != '"')
            unexpected("a key (a string in double quotes)");
          string();
          skip_space();
          if (!take(':'))
            unexpected("`:` after the key");
          skip_space();
        }
        value();
        skip_space();
        if (take(close))
          break;
        const yaml_mark comma = mark();
        if (!take(','))
          unexpected(object ? "`,` or `}`" : "`,` or `]`");
        skip_space();
        if (byte(m_pos) == static_cast<unsigned char>(close))
          fail(comma, fmt::format("a comma before `{}`: trailing commas are not JSON", close));
      }
    }
    m_tree.close();
  }

  void number() {
    const yaml_mark at = mark();
    const std::size_t start = m_pos;
    const auto digits = [&] {
      const std::size_t from = m_pos;
      while (byte(m_pos) >= '0' && byte(m_pos) <= '9')
        ++m_pos;
      return m_pos > from;
    };
    const auto refuse = [&] {
      m_column += static_cast<std::uint32_t>(m_pos - start);
      unexpected("a digit: JSON numbers are written as -12, 0.5 or 6.02e23");
    };
    m_pos += byte(m_pos) == '-';
    if (byte(m_pos) == '0') {
      ++m_pos;
      if (byte(m_pos) >= '0' && byte(m_pos) <= '9')
        fail(at, "a number with a leading zero is not JSON");
    } else if (!digits()) {
      refuse();
    }
    if (byte(m_pos) == '.' && (++m_pos, !digits()))
      refuse();
    if (byte(m_pos) == 'e' || byte(m_pos) == 'E') {
      ++m_pos;
      m_pos += byte(m_pos) == '+' || byte(m_pos) == '-';
      if (!digits())
        refuse();
    }
    const std::size_t first = m_tree.text().size();
    m_tree.text().append(m_text, start, m_pos - start);
    m_tree.add_scalar(at, first, false);
    m_column += static_cast<std::uint32_t>(m_pos - start);
  }

  /// The four hex digits after `\u` at m_pos, or -1.
  long hex4(std::size_t at) const {
    unsigned value = 0;
    const char *begin = m_text.data() + at;
    const bool read =
        at + 4 <= m_text.size() && std::from_chars(begin, begin + 4, value, 16).ptr == begin + 4;
    return read ? static_cast<long>(value) : -1L;
  }

  /// Reads one escape at m_pos (its backslash) into `out`.
  void escape(std::string &out) {
    const yaml_mark at = mark();
    const unsigned char c = byte(m_pos + 1);
    static constexpr std::string_view simple = "\"\\/bfnrt", meaning = "\"\\/\b\f\n\r\t";
    if (const std::size_t which = simple.find(static_cast<char>(c));
        which != std::string_view::npos) {
      out += meaning[which];
      m_pos += 2;
      m_column += 2;
      return;
    }
    if (c != 'u')
      fail(at, "invalid escape `\\" + printable_text(m_text.substr(m_pos + 1, 1)) +
                   "` in a string; JSON's are \\\" \\\\ \\/ \\b \\f \\n \\r \\t and \\uXXXX");
    const long high = hex4(m_pos + 2);
    if (high < 0)
      fail(at, "invalid Unicode character escape: `\\u` takes four hex digits");
    long code = high;
    std::size_t length = 6;
    if (high >= 0xD800 && high < 0xDC00) { // UTF-16: a character past U+FFFF as a pair
      const long low = byte(m_pos + 6) == '\\' && byte(m_pos + 7) == 'u' ? hex4(m_pos + 8) : -1L;
      if (low < 0xDC00 || low >= 0xE000)
        fail(at, fmt::format("invalid Unicode character escape: `\\u{:04x}` is the first half "
                             "of a surrogate pair, and no second half (`\\udc00` to `\\udfff`) "
                             "follows it",
                             high));
      code = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
      length = 12;
    } else if (high >= 0xDC00 && high < 0xE000) {
      fail(at, fmt::format("invalid Unicode character escape: `\\u{:04x}` is the second half of "
                           "a surrogate pair, with no first half before it",
                           high));
    }
    append_utf8(out, static_cast<std::uint32_t>(code));
    m_pos += length;
    m_column += static_cast<std::uint32_t>(length);
  }

  static void append_utf8(std::string &out, std::uint32_t c) {
    const auto put = [&](std::uint32_t b) { out += static_cast<char>(b); };
    if (c < 0x80) {
      put(c);
    } else if (c < 0x800) {
      put(0xC0 | c >> 6), put(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
      put(0xE0 | c >> 12), put(0x80 | (c >> 6 & 0x3F)), put(0x80 | (c & 0x3F));
    } else {
      put(0xF0 | c >> 18), put(0x80 | (c >> 12 & 0x3F)), put(0x80 | (c >> 6 & 0x3F));
      put(0x80 | (c & 0x3F));
    }
  }

  void string() {
    const yaml_mark at = mark();
    std::string &out = m_tree.text();
    const std::size_t first = out.size();
    ++m_pos;
    ++m_column;
    for (;;) {
      // A run of plain ASCII, copied at once.
      std::size_t end = m_pos;
      while (end < m_text.size() && byte(end) >= 0x20 && byte(end) < 0x80 && byte(end) != '"' &&
             byte(end) != '\\')
        ++end;
      out.append(m_text, m_pos, end - m_pos);
      m_column += static_cast<std::uint32_t>(end - m_pos);
      m_pos = end;
      if (at_end())
        fail(at, "a string not closed: its closing `\"` is missing");
      const unsigned char c = byte(m_pos);
      if (c == '"') {
        ++m_pos;
        ++m_column;
        break;
      }
      if (c == '\\') {
        escape(out);
      } else if (c < 0x20) {
        fail(mark(), c == '\n' || c == '\r'
                         ? "a line break in a string: a closing `\"` is missing, or the break "
                           "must be written `\\n`"
                         : fmt::format("the control character U+{:04X} must be written as an "
                                       "escape in a string (\\u{:04X})",
                                       c, c));
      } else {
        const std::size_t length = utf8_sequence(m_text.substr(m_pos));
        if (length == 0)
          found(); // throws: not UTF-8
        out.append(m_text, m_pos, length);
        m_pos += length;
        ++m_column;
      }
    }
    m_tree.add_scalar(at, first, true);
  }

  std::string_view m_text;
  const std::string &m_origin;
  tree_assembler m_tree;
  std::size_t m_pos = 0;
  std::uint32_t m_line = 0, m_column = 0; ///< where m_pos is (0-based; columns in characters)
};

} // namespace

yaml_node parse_json(std::string_view text, const std::string &origin) {
  return json_reader(text, origin).read();
}

} // namespace roofline::detail
