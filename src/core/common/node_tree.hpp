// SPDX-License-Identifier: Apache-2.0
#pragma once
// The tree both readers build (yaml_reader.cpp from libyaml's events, json_reader.cpp from its
// own scan): yaml_node's storage, and how a reader assembles it in document order.

#include "roofline/common/error.hpp"

#include "yaml_node.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace roofline::detail {

/// One document's nodes in one arena: a node is 20 bytes, its text and its children live in
/// shared arrays, and an alias is one more child index, never a copy of the anchored subtree.
class yaml_tree {
public:
  struct node {
    std::uint32_t line;
    std::uint32_t column;
    std::uint32_t first; ///< a scalar's offset in `text`; a collection's first slot in `children`
    std::uint32_t count; ///< a scalar's length; a sequence's elements; a mapping's entries
    yaml_node::kind type;
    bool quoted; ///< a JSON string or a quoted YAML scalar
  };

  static yaml_node handle(std::shared_ptr<const yaml_tree> tree, std::uint32_t index) noexcept {
    return {std::move(tree), index};
  }

  std::vector<node> nodes;
  std::vector<std::uint32_t> children; ///< a mapping's as key, value, key, value, ...
  std::string text;                    ///< every scalar's text, back to back
};

/// Assembles a yaml_tree from a document's nodes in document order (libyaml's events or the JSON
/// reader's): collections are open on a stack, their children gathered in one pending array and
/// moved into the tree's children when they close (each index is moved once: linear in the
/// document).
class tree_assembler {
public:
  explicit tree_assembler(std::size_t text_size) : m_tree(std::make_shared<yaml_tree>()) {
    m_tree->text.reserve(text_size);
  }

  /// Where scalars' text is gathered: a scalar's is appended, then add_scalar called.
  std::string &text() noexcept { return m_tree->text; }
  std::size_t depth() const noexcept { return m_open.size(); }

  /// The scalar whose text is text()[first, end).
  std::uint32_t add_scalar(yaml_mark at, std::size_t first, bool quoted) {
    return attach(
        new_node(yaml_node::kind::scalar, at, first, m_tree->text.size() - first, quoted));
  }
  std::uint32_t add_null(yaml_mark at) {
    return attach(new_node(yaml_node::kind::null, at, 0, 0, false));
  }
  /// A node added before, once more (an alias).
  void add_again(std::uint32_t index) { attach(index); }

  /// Opens a list or a mapping; the caller has checked depth() against max_yaml_depth.
  std::uint32_t open(yaml_node::kind type, yaml_mark at) {
    const std::uint32_t index = new_node(type, at, 0, 0, false);
    m_open.push_back({index, m_pending.size()});
    return index;
  }

  void close() {
    const open_collection done = m_open.back();
    m_open.pop_back();
    yaml_tree::node &n = m_tree->nodes[done.node];
    const std::size_t children = m_pending.size() - done.first_pending;
    n.first = static_cast<std::uint32_t>(m_tree->children.size());
    n.count = static_cast<std::uint32_t>(n.type == yaml_node::kind::map ? children / 2 : children);
    m_tree->children.insert(m_tree->children.end(),
                            m_pending.begin() + static_cast<std::ptrdiff_t>(done.first_pending),
                            m_pending.end());
    m_pending.resize(done.first_pending);
    attach(done.node);
  }

  /// The root; a null node when the document had none.
  yaml_node finish() {
    if (!m_root)
      return {};
    return yaml_tree::handle(std::move(m_tree), *m_root);
  }

private:
  struct open_collection {
    std::uint32_t node;
    std::size_t first_pending; ///< its first child in m_pending
  };

  std::uint32_t new_node(yaml_node::kind type, yaml_mark at, std::size_t first, std::size_t count,
                         bool quoted) {
    const auto index = static_cast<std::uint32_t>(m_tree->nodes.size());
    m_tree->nodes.push_back({at.line, at.column, static_cast<std::uint32_t>(first),
                             static_cast<std::uint32_t>(count), type, quoted});
    return index;
  }

  /// Attaches a finished node to the innermost open collection, or makes it the root.
  std::uint32_t attach(std::uint32_t index) {
    if (m_open.empty())
      m_root = index;
    else
      m_pending.push_back(index);
    return index;
  }

  std::shared_ptr<yaml_tree> m_tree;
  std::vector<open_collection> m_open;
  std::vector<std::uint32_t> m_pending;
  std::optional<std::uint32_t> m_root;
};

/// The error for a document nested deeper than max_yaml_depth, at `where`.
input_error nested_too_deeply(source_location where);

/// Refuses a text the tree cannot hold (it offsets text by 32-bit integers): read as `format`
/// ("YAML", "JSON") from `origin`.
void check_size(std::string_view text, const std::string &origin, const char *format);

} // namespace roofline::detail
