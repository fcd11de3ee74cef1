// SPDX-License-Identifier: Apache-2.0
#pragma once
// A node of a document parsed by either reader (yaml_reader.hpp's parse_yaml, json_reader.hpp's
// parse_json): what their callers walk. Its functions are defined in node_tree.cpp, beside the
// tree they read.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>

namespace roofline::detail {

/// How deep lists and mappings may nest in a file: far deeper than any of ours (a network's
/// repeat blocks nest at most 32 deep, two levels each), and shallow enough that libyaml, whose
/// scanner revisits every open level at each token, reads a hostile file quickly.
inline constexpr std::size_t max_yaml_depth = 128;

/// Where a node starts: 0-based line and column (columns count characters), as libyaml marks it.
struct yaml_mark {
  std::uint32_t line = 0;
  std::uint32_t column = 0;
};

/// The nodes of one parsed document (node_tree.hpp).
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

} // namespace roofline::detail
