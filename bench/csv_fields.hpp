// SPDX-License-Identifier: Apache-2.0
#pragma once
// The fields of one line of the benches' CSV files (Python's csv module writes them).

#include "roofline/common/error.hpp"

#include <algorithm>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

namespace roofline::bench {

/// CSV fields; quoted fields (kernel names and notes hold commas) kept whole, `""` read as `"`.
inline std::vector<std::string> csv_fields(const std::string &line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '"' && quoted && i + 1 < line.size() && line[i + 1] == '"')
      fields.back() += line[++i];
    else if (c == '"')
      quoted = !quoted;
    else if (c == ',' && !quoted)
      fields.emplace_back();
    else if (c != '\r')
      fields.back() += c;
  }
  return fields;
}

/// A field's positive time; nullopt where it holds none ("unsupported", empty, 0).
inline std::optional<double> positive_time(const std::string &field) {
  try {
    const double value = std::stod(field);
    return value > 0 ? std::optional<double>(value) : std::nullopt;
  } catch (const std::exception &) {
    return std::nullopt;
  }
}

/// A CSV file read row by row, its columns found by name in its header.
class csv_file {
public:
  /// Opens `file` and reads its header; `what` says which files it should be (in errors).
  csv_file(const std::string &file, std::string what) : m_file(file), m_what(std::move(what)) {
    std::ifstream in(file);
    if (!in)
      throw error("cannot open " + file);
    m_in = std::move(in);
    std::string line;
    std::getline(m_in, line);
    m_header = csv_fields(line);
  }
  /// Whether the header has a column `name`.
  bool has_column(const std::string &name) const {
    return std::find(m_header.begin(), m_header.end(), name) != m_header.end();
  }
  /// The index of the column `name`; throws naming the file when it has none.
  std::size_t column(const std::string &name) const {
    const auto at = std::find(m_header.begin(), m_header.end(), name);
    if (at == m_header.end())
      throw error(m_file + " has no column `" + name + "` (not " + m_what + "?)");
    return static_cast<std::size_t>(at - m_header.begin());
  }
  /// The next row with every column of the header; false at the end.
  bool next(std::vector<std::string> &fields) {
    for (std::string line; std::getline(m_in, line);) {
      fields = csv_fields(line);
      if (fields.size() >= m_header.size())
        return true;
    }
    return false;
  }

private:
  std::string m_file, m_what;
  std::ifstream m_in;
  std::vector<std::string> m_header;
};

} // namespace roofline::bench
