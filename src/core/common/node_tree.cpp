// SPDX-License-Identifier: Apache-2.0
#include "node_tree.hpp"

#include <fmt/format.h>

#include <limits>

namespace roofline::detail {

yaml_node::kind yaml_node::type() const noexcept {
  return m_tree ? m_tree->nodes[m_index].type : kind::null;
}

std::string_view yaml_node::scalar() const noexcept {
  if (!is_scalar())
    return {};
  const yaml_tree::node &n = m_tree->nodes[m_index];
  return std::string_view(m_tree->text).substr(n.first, n.count);
}

std::size_t yaml_node::size() const noexcept {
  return is_sequence() || is_map() ? m_tree->nodes[m_index].count : 0;
}

yaml_node yaml_node::child(std::size_t i) const noexcept {
  return {m_tree, m_tree->children[m_tree->nodes[m_index].first + i]};
}

yaml_node yaml_node::operator[](std::size_t i) const noexcept {
  return child(i);
}

yaml_node yaml_node::key(std::size_t i) const noexcept {
  return child(2 * i);
}

yaml_node yaml_node::value(std::size_t i) const noexcept {
  return child(2 * i + 1);
}

std::optional<yaml_mark> yaml_node::mark() const noexcept {
  if (!m_tree)
    return std::nullopt;
  const yaml_tree::node &n = m_tree->nodes[m_index];
  return yaml_mark{n.line, n.column};
}

bool yaml_node::quoted() const noexcept {
  return is_scalar() && m_tree->nodes[m_index].quoted;
}

input_error nested_too_deeply(source_location where) {
  return input_error(std::move(where), "nested too deeply: lists and mappings more than " +
                                           std::to_string(max_yaml_depth) +
                                           " levels deep (the limit)");
}

void check_size(std::string_view text, const std::string &origin, const char *format) {
  if (text.size() >= std::numeric_limits<std::uint32_t>::max())
    throw input_error({origin}, fmt::format("too large to read as {} (4 GiB at most)", format));
}

} // namespace roofline::detail
