// SPDX-License-Identifier: Apache-2.0
#pragma once
// The one shape of an enum's names: a table of (value, name) entries that to_string and parse
// read, and that messages list choices from, so that a name is typed once. An enum's header
// declares names_of<E>() beside it; its source holds the table.

#include <array>
#include <cstddef>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace roofline {

/// One name of an enum value.
template <class E> struct enum_name {
  E value;
  std::string_view name;
  bool alias = false; ///< accepted by parse, never written (name() and the choices skip it)
};

namespace detail {

/// "a, b or c": `names` joined by ", ", the last by `last_separator`.
std::string choice_list(const std::vector<std::string_view> &names,
                        std::string_view last_separator);

} // namespace detail

/// The names of enum `E`'s values, in the order messages list them: a view of a table with
/// static storage (it holds no copy).
template <class E> class enum_table {
public:
  template <std::size_t N>
  constexpr explicit enum_table(const std::array<enum_name<E>, N> &entries)
      : m_entries(entries.data()), m_size(N) {}

  /// The name of `value` (its first entry that is not an alias); "?" when the table lacks it.
  constexpr std::string_view name(E value) const {
    for (const enum_name<E> &entry : *this)
      if (!entry.alias && entry.value == value)
        return entry.name;
    return "?";
  }

  /// The value named `text` exactly (aliases too); nullopt when none is.
  constexpr std::optional<E> parse(std::string_view text) const {
    for (const enum_name<E> &entry : *this)
      if (entry.name == text)
        return entry.value;
    return std::nullopt;
  }

  /// Every name but the aliases, in the table's order.
  std::vector<std::string> names() const {
    std::vector<std::string> names;
    for (const enum_name<E> &entry : *this)
      if (!entry.alias)
        names.emplace_back(entry.name);
    return names;
  }

  /// "a, b or c": every name but the aliases, in the table's order (`last_separator` " and "
  /// for "a, b and c").
  std::string choices(std::string_view last_separator = " or ") const {
    std::vector<std::string_view> names;
    for (const enum_name<E> &entry : *this)
      if (!entry.alias)
        names.push_back(entry.name);
    return detail::choice_list(names, last_separator);
  }

  /// "a, b or c" of `values`' names, in the order given: a message that offers some of the
  /// values, or all in another order.
  std::string choices(std::initializer_list<E> values,
                      std::string_view last_separator = " or ") const {
    std::vector<std::string_view> names;
    for (E value : values)
      names.push_back(name(value));
    return detail::choice_list(names, last_separator);
  }

  constexpr const enum_name<E> *begin() const { return m_entries; }
  constexpr const enum_name<E> *end() const { return m_entries + m_size; }

private:
  const enum_name<E> *m_entries;
  std::size_t m_size;
};

/// The names of enum `E`: declared (specialised) in E's header, defined beside its table.
template <class E> const enum_table<E> &names_of();

} // namespace roofline
