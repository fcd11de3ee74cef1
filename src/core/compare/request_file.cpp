// SPDX-License-Identifier: Apache-2.0
#include "roofline/compare/request_file.hpp"

#include "roofline/common/error.hpp"
#include "roofline/compare/serving.hpp"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <cmath>
#include <fstream>
#include <optional>

namespace roofline {

namespace {

constexpr std::array<const char *, 3> known_columns = {"arrival_s", "prompt_tokens",
                                                       "output_tokens"};

std::string trimmed(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r");
  if (first == std::string_view::npos)
    return {};
  return std::string(text.substr(first, text.find_last_not_of(" \t\r") - first + 1));
}

std::vector<std::string> fields_of(const std::string &line) {
  std::vector<std::string> fields;
  std::size_t start = 0;
  for (std::size_t comma; (comma = line.find(',', start)) != std::string::npos; start = comma + 1)
    fields.push_back(trimmed(std::string_view(line).substr(start, comma - start)));
  fields.push_back(trimmed(std::string_view(line).substr(start)));
  return fields;
}

/// The column of each known name in the header (none where absent).
std::array<std::optional<std::size_t>, 3> columns_of(const std::vector<std::string> &header,
                                                     const source_location &where) {
  std::array<std::optional<std::size_t>, 3> columns;
  for (std::size_t i = 0; i < header.size(); ++i) {
    std::size_t k = 0;
    while (k < known_columns.size() && header[i] != known_columns[k])
      ++k;
    if (k == known_columns.size())
      throw input_error(where, fmt::format("column `{}`: expected arrival_s, prompt_tokens or "
                                           "output_tokens",
                                           header[i]));
    if (columns[k])
      throw input_error(where, fmt::format("column `{}` named twice", header[i]));
    columns[k] = i;
  }
  for (std::size_t k = 1; k < known_columns.size(); ++k)
    if (!columns[k])
      throw input_error(where, fmt::format("no column `{}`: a header names "
                                           "prompt_tokens,output_tokens (and arrival_s, if given)",
                                           known_columns[k]));
  return columns;
}

std::int64_t tokens_of(const std::string &field, const char *column, const source_location &where) {
  std::int64_t value = 0;
  const auto [end, failed] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (failed != std::errc{} || end != field.data() + field.size() || value < 1 ||
      value > max_serving_tokens)
    throw input_error(where, fmt::format("{} `{}`: expected a whole number of tokens, from 1 to {}",
                                         column, field, max_serving_tokens));
  return value;
}

double seconds_of(const std::string &field, const source_location &where) {
  double value = 0;
  const auto [end, failed] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (failed != std::errc{} || end != field.data() + field.size() || !std::isfinite(value) ||
      value < 0)
    throw input_error(where, fmt::format("arrival_s `{}`: expected seconds, 0 or more", field));
  return value;
}

} // namespace

std::vector<simulated_request> load_request_file(const std::string &path) {
  std::ifstream in(path);
  if (!in)
    throw input_error({path}, "cannot read the request file");
  std::vector<simulated_request> requests;
  std::optional<std::array<std::optional<std::size_t>, 3>> columns;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const source_location where{path, number};
    const std::string text = trimmed(line.substr(0, line.find('#')));
    if (text.empty())
      continue;
    const std::vector<std::string> fields = fields_of(text);
    if (!columns) {
      columns = columns_of(fields, where);
      continue;
    }
    std::size_t expected = 0;
    for (const auto &c : *columns)
      expected += c.has_value();
    if (fields.size() != expected)
      throw input_error(where, fmt::format("{} fields: expected {}, one for each column of the "
                                           "header",
                                           fields.size(), expected));
    simulated_request r;
    if ((*columns)[0])
      r.arrival_s = seconds_of(fields[*(*columns)[0]], where);
    r.prompt_tokens = tokens_of(fields[*(*columns)[1]], "prompt_tokens", where);
    r.output_tokens = tokens_of(fields[*(*columns)[2]], "output_tokens", where);
    requests.push_back(r);
  }
  if (requests.empty())
    throw input_error({path}, "no request: expected a header (prompt_tokens,output_tokens or "
                              "arrival_s,prompt_tokens,output_tokens) and a line a request");
  return requests;
}

std::pair<std::int64_t, std::int64_t> mean_lengths(const std::vector<simulated_request> &requests) {
  double prompt = 0, output = 0;
  for (const simulated_request &r : requests) {
    prompt += static_cast<double>(r.prompt_tokens);
    output += static_cast<double>(r.output_tokens);
  }
  const auto n = static_cast<double>(requests.size());
  return {static_cast<std::int64_t>(std::ceil(prompt / n)),
          static_cast<std::int64_t>(std::ceil(output / n))};
}

} // namespace roofline
