// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/common/error.hpp"

#include "yaml_node.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

// Typed, located access to YAML documents: every value we read either has the expected type or
// becomes an input_error naming file:line:column and what was expected. Documents are read with
// libyaml's event parser into a small tree of our own (fast: docs/architecture.md says why);
// libyaml stays out of this header.
namespace roofline::detail {

/// The largest network, GPU spec or config.json read: real ones are kilobytes, a generated
/// 100,000-layer network a few MB.
inline constexpr std::size_t max_text_file_bytes = std::size_t{64} << 20;

/// Reads a whole text file; input_error when it is missing, not a regular file, unreadable or
/// larger than max_text_file_bytes (judged from its size before it is read).
std::string read_text_file(const std::filesystem::path &file, std::string_view what);

/// Parses the one YAML document of `text` (an empty text: a null root). Syntax errors, text that
/// is not UTF-8, an undefined alias, a second document and nesting deeper than max_yaml_depth
/// become input_errors located in `origin`.
yaml_node parse_yaml(std::string_view text, const std::string &origin);

source_location location_of(const yaml_node &node, const std::string &file);

/// "a mapping", "a list", "'abc'", "nothing"
std::string describe(const yaml_node &node);

/// A key's text as messages spell it: a scalar's text, "null" for a null key, "" for a
/// collection.
std::string key_text(const yaml_node &key);

/// A number written in full (`0.5`, `-2e-6`, `+3`): none for anything else, `.inf` and `.nan`
/// included.
std::optional<double> finite_number(const yaml_node &node);

/// A YAML mapping whose keys are checked against the ones allowed, at construction.
class yaml_map {
public:
  /// `context` names the mapping in messages ("network", "layer `fc6` (linear)").
  /// Throws input_error when `node` is not a mapping or holds a key not in `allowed`.
  yaml_map(yaml_node node, std::string file, std::string context,
           const std::vector<std::string> &allowed);
  /// Any key allowed (a file of someone else's format, read for some of its keys).
  struct any_keys {};
  yaml_map(yaml_node node, std::string file, std::string context, any_keys);

  bool has(const std::string &key) const;
  source_location where() const { return location_of(m_node, m_file); }
  source_location where(const std::string &key) const;
  const std::string &file() const noexcept { return m_file; }
  const std::string &context() const noexcept { return m_context; }

  /// The value of a key that must be present.
  yaml_node required(const std::string &key) const;

  std::string string(const std::string &key) const;
  std::string string_or(const std::string &key, std::string fallback) const;
  std::int64_t positive_int(const std::string &key) const;
  std::int64_t positive_int_or(const std::string &key, std::int64_t fallback) const;
  std::optional<std::int64_t> optional_positive_int(const std::string &key) const;
  std::int64_t non_negative_int_or(const std::string &key, std::int64_t fallback) const;
  /// A single integer n (meaning (n, n)) or a two-element list [a, b].
  std::pair<std::int64_t, std::int64_t> int_pair(const std::string &key, bool allow_zero) const;
  std::pair<std::int64_t, std::int64_t> int_pair_or(const std::string &key, bool allow_zero,
                                                    std::int64_t fallback) const;
  /// A positive number written in full (finite_number: no `.inf`, `.nan`, hex or spaces).
  double positive_number(const std::string &key) const;
  bool boolean_or(const std::string &key, bool fallback) const;
  /// A list of strings (or one string, read as a list of one).
  std::vector<std::string> strings_or_empty(const std::string &key) const;

  /// An error located at `key`'s value (or at the mapping when absent).
  [[noreturn]] void fail(const std::string &key, const std::string &message) const;

private:
  void read_entries(const std::vector<std::string> *allowed);
  std::int64_t integer(const yaml_node &value, const std::string &key, std::int64_t minimum) const;
  /// The value at `key`, none when absent (or given by a key that is no scalar).
  std::optional<yaml_node> find(const std::string &key) const;

  yaml_node m_node;
  std::string m_file;
  std::string m_context;
  /// Each key's text (key_text's, viewed in the document) and its entry's index: one a key, as
  /// read_entries refuses a second.
  std::unordered_map<std::string_view, std::uint32_t> m_keys;
};

/// `text` as a double-quoted YAML scalar that parse_yaml reads back as `text`: quotes,
/// backslashes, every control character, DEL, the C1 controls (NEL among them), the line and
/// paragraph separators (U+2028, U+2029: line breaks to libyaml) and a byte order mark escaped;
/// U+FFFD for the noncharacters YAML cannot hold (U+FFFE, U+FFFF) and for each byte that is not
/// UTF-8. What any text from outside (a name, a path) is written as in a YAML file.
std::string yaml_double_quoted(std::string_view text);

} // namespace roofline::detail
