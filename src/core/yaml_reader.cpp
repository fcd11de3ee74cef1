// SPDX-License-Identifier: Apache-2.0
#include "yaml_reader.hpp"

#include "suggest.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>
#include <system_error>

namespace roofline::detail {

std::string read_text_file(const std::filesystem::path &file, std::string_view what) {
  const source_location where{file.string()};
  std::error_code ec;
  const auto status = std::filesystem::status(file, ec);
  if (ec || !std::filesystem::exists(status))
    throw input_error(where, "cannot open " + std::string(what) + ": no such file");
  if (!std::filesystem::is_regular_file(status))
    throw input_error(where, "cannot open " + std::string(what) + ": not a regular file");
  std::ifstream in(file, std::ios::binary);
  if (!in)
    throw input_error(where,
                      "cannot open " + std::string(what) + ": permission denied or unreadable");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad())
    throw input_error(where, "cannot read " + std::string(what));
  return text.str();
}

source_location location_of(const YAML::Node &node, const std::string &file) {
  const YAML::Mark mark = node.Mark();
  if (mark.is_null())
    return {file};
  return {file, mark.line + 1, mark.column + 1};
}

YAML::Node parse_yaml(std::string_view text, const std::string &origin) {
  try {
    return YAML::Load(std::string(text));
  } catch (const YAML::ParserException &e) {
    throw input_error({origin, e.mark.line + 1, e.mark.column + 1}, "YAML syntax error: " + e.msg);
  } catch (const YAML::Exception &e) {
    throw input_error({origin}, std::string("YAML error: ") + e.what());
  }
}

std::string describe(const YAML::Node &node) {
  switch (node.Type()) {
  case YAML::NodeType::Null:
  case YAML::NodeType::Undefined: return "nothing";
  case YAML::NodeType::Sequence: return "a list";
  case YAML::NodeType::Map: return "a mapping";
  case YAML::NodeType::Scalar: return "'" + node.Scalar() + "'";
  }
  return "?";
}

yaml_map::yaml_map(YAML::Node node, std::string file, std::string context,
                   std::vector<std::string> allowed)
    : m_node(std::move(node)), m_file(std::move(file)), m_context(std::move(context)) {
  if (!m_node.IsMap())
    throw input_error(where(), m_context + ": expected a mapping of keys to values, got " +
                                   describe(m_node));
  std::vector<std::pair<std::string, YAML::Mark>> seen;
  for (const auto &entry : m_node) {
    const std::string key = entry.first.as<std::string>("");
    for (const auto &[earlier, mark] : seen)
      if (earlier == key)
        throw input_error(location_of(entry.first, m_file),
                          m_context + ": duplicate key `" + key + "` (first given at line " +
                              std::to_string(mark.line + 1) + ")");
    seen.emplace_back(key, entry.first.Mark());
    if (entry.first.IsScalar()) // only a scalar key matches a lookup by name
      m_entries.emplace_back(key, entry.second);
    if (std::find(allowed.begin(), allowed.end(), key) != allowed.end())
      continue;
    const std::string hint = did_you_mean(key, allowed);
    throw input_error(
        location_of(entry.first, m_file),
        m_context + ": unknown key `" + key + "`" +
            (hint.empty() ? "; expected one of " + quoted_list(allowed, " or ") : hint));
  }
}

const YAML::Node *yaml_map::find(const std::string &key) const {
  for (const auto &[name, value] : m_entries)
    if (name == key)
      return &value;
  return nullptr;
}

bool yaml_map::has(const std::string &key) const {
  return find(key) != nullptr;
}

source_location yaml_map::where(const std::string &key) const {
  const YAML::Node *value = find(key);
  return value ? location_of(*value, m_file) : where();
}

void yaml_map::fail(const std::string &key, const std::string &message) const {
  throw input_error(where(key), m_context + ": " + message);
}

YAML::Node yaml_map::required(const std::string &key) const {
  const YAML::Node *value = find(key);
  if (!value)
    throw input_error(where(), m_context + ": missing required key `" + key + "`");
  return *value;
}

std::string yaml_map::string(const std::string &key) const {
  const YAML::Node value = required(key);
  if (!value.IsScalar() || value.Scalar().empty())
    fail(key, "`" + key + "` must be a non-empty string, got " + describe(value));
  return value.Scalar();
}

std::string yaml_map::string_or(const std::string &key, std::string fallback) const {
  return has(key) ? string(key) : fallback;
}

std::int64_t yaml_map::integer(const YAML::Node &value, const std::string &key,
                               std::int64_t minimum) const {
  const std::string expected = minimum > 0 ? "a positive integer" : "a non-negative integer";
  if (!value.IsScalar())
    fail(key, "`" + key + "` must be " + expected + ", got " + describe(value));
  const std::string &text = value.Scalar();
  const bool digits_only =
      !text.empty() && std::all_of(text.begin() + (text[0] == '-' || text[0] == '+'), text.end(),
                                   [](char c) { return c >= '0' && c <= '9'; });
  if (!digits_only || text == "-" || text == "+")
    throw input_error(location_of(value, m_file),
                      m_context + ": `" + key + "` must be " + expected + ", got '" + text + "'");
  errno = 0;
  char *end = nullptr;
  const long long parsed = std::strtoll(text.c_str(), &end, 10);
  if (errno == ERANGE)
    throw input_error(location_of(value, m_file), m_context + ": `" + key + "` = " + text +
                                                      " does not fit in a 64-bit integer");
  if (parsed < minimum)
    throw input_error(location_of(value, m_file),
                      m_context + ": `" + key + "` must be " + expected + ", got " + text);
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
  const YAML::Node *value = find(key);
  return value ? integer(*value, key, 0) : fallback;
}

std::pair<std::int64_t, std::int64_t> yaml_map::int_pair(const std::string &key,
                                                         bool allow_zero) const {
  const YAML::Node value = required(key);
  const std::int64_t minimum = allow_zero ? 0 : 1;
  if (value.IsSequence()) {
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
  const YAML::Node value = required(key);
  const std::string text = value.IsScalar() ? value.Scalar() : std::string{};
  char *end = nullptr;
  errno = 0;
  const double parsed = text.empty() ? 0.0 : std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE || !(parsed > 0) ||
      parsed == std::numeric_limits<double>::infinity())
    fail(key, "`" + key + "` must be a positive number, got " + describe(value));
  return parsed;
}

std::optional<double> yaml_map::optional_positive_number(const std::string &key) const {
  if (!has(key))
    return std::nullopt;
  return positive_number(key);
}

bool yaml_map::boolean_or(const std::string &key, bool fallback) const {
  if (!has(key))
    return fallback;
  const YAML::Node value = *find(key);
  if (value.IsScalar()) {
    const std::string text = to_lower(value.Scalar());
    if (text == "true" || text == "yes")
      return true;
    if (text == "false" || text == "no")
      return false;
  }
  fail(key, "`" + key + "` must be true or false, got " + describe(value));
}

std::vector<std::string> yaml_map::strings_or_empty(const std::string &key) const {
  if (!has(key))
    return {};
  const YAML::Node value = *find(key);
  if (value.IsScalar())
    return {value.Scalar()};
  std::vector<std::string> items;
  if (value.IsSequence()) {
    for (const YAML::Node &item : value) {
      if (!item.IsScalar())
        fail(key, "`" + key + "` must be a list of strings, found " + describe(item));
      items.push_back(item.Scalar());
    }
    return items;
  }
  fail(key, "`" + key + "` must be a list of strings, got " + describe(value));
}

} // namespace roofline::detail
