// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/error.hpp"

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

// Typed, located access to YAML documents: every value we read either has the expected type or
// becomes an input_error naming file:line:column and what was expected.
namespace roofline::detail {

/// Reads a whole text file; input_error when it is missing, not a regular file or unreadable.
std::string read_text_file(const std::filesystem::path &file, std::string_view what);

/// Parses YAML text; syntax errors become input_error at yaml-cpp's mark.
YAML::Node parse_yaml(std::string_view text, const std::string &origin);

source_location location_of(const YAML::Node &node, const std::string &file);

/// "a mapping", "a sequence", "'abc'", "nothing"
std::string describe(const YAML::Node &node);

/// A YAML mapping whose keys are checked against the ones allowed, at construction.
class yaml_map {
public:
  /// `context` names the mapping in messages ("network", "layer `fc6` (linear)").
  /// Throws input_error when `node` is not a mapping or holds a key not in `allowed`.
  yaml_map(YAML::Node node, std::string file, std::string context,
           std::vector<std::string> allowed);

  bool has(const std::string &key) const;
  source_location where() const { return location_of(m_node, m_file); }
  source_location where(const std::string &key) const;
  const std::string &file() const noexcept { return m_file; }
  const std::string &context() const noexcept { return m_context; }

  /// The value of a key that must be present.
  YAML::Node required(const std::string &key) const;

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
  double positive_number(const std::string &key) const;
  std::optional<double> optional_positive_number(const std::string &key) const;
  bool boolean_or(const std::string &key, bool fallback) const;
  /// A list of strings (or one string, read as a list of one).
  std::vector<std::string> strings_or_empty(const std::string &key) const;

  /// An error located at `key`'s value (or at the mapping when absent).
  [[noreturn]] void fail(const std::string &key, const std::string &message) const;

private:
  std::int64_t integer(const YAML::Node &value, const std::string &key, std::int64_t minimum) const;
  /// The value at `key`, nullptr when absent: the first entry whose key is that scalar, as
  /// YAML::Node's lookup finds it, from the entries read once at construction (a lookup of
  /// yaml-cpp's converts every key it passes to a string).
  const YAML::Node *find(const std::string &key) const;

  YAML::Node m_node;
  std::string m_file;
  std::string m_context;
  std::vector<std::pair<std::string, YAML::Node>> m_entries; ///< scalar keys and their values
};

} // namespace roofline::detail
