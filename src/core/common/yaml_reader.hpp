// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/common/error.hpp"

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

/// Where a node starts: 0-based line and column (columns count characters), as libyaml marks it.
struct yaml_mark {
  std::uint32_t line = 0;
  std::uint32_t column = 0;
};

/// The nodes of one parsed document (defined in yaml_reader.cpp).
class yaml_tree;

/// A node of a parsed YAML document: a cheap handle that keeps its document alive. A plain scalar
/// that is empty, `~`, `null`, `Null` or `NULL` is null; quoted scalars are always strings; an
/// alias is the node its anchor names (shared, not copied); tags are ignored. A
/// default-constructed node is null and has no mark (an empty document's root).
class yaml_node {
public:
  enum class kind : std::uint8_t { null, scalar, sequence, map };

  yaml_node() = default;

  kind type() const noexcept;
  bool is_null() const noexcept { return type() == kind::null; }
  bool is_scalar() const noexcept { return type() == kind::scalar; }
  bool is_sequence() const noexcept { return type() == kind::sequence; }
  bool is_map() const noexcept { return type() == kind::map; }

  /// A scalar's text ("" for any other node); valid while a handle to its document lives.
  std::string_view scalar() const noexcept;
  /// The elements of a sequence or the entries of a mapping; 0 for any other node.
  std::size_t size() const noexcept;
  /// Element `i` of a sequence (i < size()).
  yaml_node operator[](std::size_t i) const noexcept;
  /// The key and the value of a mapping's entry `i` (i < size()), in document order.
  yaml_node key(std::size_t i) const noexcept;
  yaml_node value(std::size_t i) const noexcept;

  /// A JSON string or a quoted YAML scalar (`'7'`, `"7"`), not a number, boolean or word.
  bool quoted() const noexcept;
  /// Where the node starts; none for a default-constructed node.
  std::optional<yaml_mark> mark() const noexcept;
  /// The same node of the same document (an alias and its anchor).
  bool same_node_as(const yaml_node &other) const noexcept {
    return m_tree == other.m_tree && m_index == other.m_index;
  }

private:
  friend class yaml_tree;
  yaml_node(std::shared_ptr<const yaml_tree> tree, std::uint32_t index) noexcept
      : m_tree(std::move(tree)), m_index(index) {}
  yaml_node child(std::size_t i) const noexcept;

  std::shared_ptr<const yaml_tree> m_tree;
  std::uint32_t m_index = 0;
};

/// The largest network, GPU spec or config.json read: real ones are kilobytes, a generated
/// 100,000-layer network a few MB.
inline constexpr std::size_t max_text_file_bytes = std::size_t{64} << 20;

/// Reads a whole text file; input_error when it is missing, not a regular file, unreadable or
/// larger than max_text_file_bytes (judged from its size before it is read).
std::string read_text_file(const std::filesystem::path &file, std::string_view what);

/// How deep lists and mappings may nest in a file: far deeper than any of ours (a network's
/// repeat blocks nest at most 32 deep, two levels each), and shallow enough that libyaml, whose
/// scanner revisits every open level at each token, reads a hostile file quickly.
inline constexpr std::size_t max_yaml_depth = 128;

/// Parses the one YAML document of `text` (an empty text: a null root). Syntax errors, text that
/// is not UTF-8, an undefined alias, a second document and nesting deeper than max_yaml_depth
/// become input_errors located in `origin`.
yaml_node parse_yaml(std::string_view text, const std::string &origin);

/// Parses a JSON text (a model's config.json), strictly (RFC 8259), into the tree parse_yaml
/// builds: strings are quoted scalars, numbers plain scalars as written, `true` and `false` plain
/// scalars, `null` a null node. What JSON refuses (comments, trailing commas, single quotes, a
/// lone surrogate, a raw control character in a string, a second value), text that is not UTF-8
/// and nesting deeper than max_yaml_depth become input_errors located in `origin`, the column
/// counting characters; an empty text is refused too. Linear in the text.
yaml_node parse_json(std::string_view text, const std::string &origin);

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
