// SPDX-License-Identifier: Apache-2.0
#include "roofline/common/error.hpp"

namespace roofline {

namespace {

std::string without_nul(const std::string &message) {
  std::string out;
  out.reserve(message.size());
  for (const char c : message)
    if (c == '\0')
      out += "\\x00";
    else
      out += c;
  return out;
}

} // namespace

error::error(const std::string &message) : std::runtime_error(without_nul(message)) {}

std::string source_location::to_string() const {
  std::string text = file;
  if (line > 0) {
    text += ':' + std::to_string(line);
    if (column > 0)
      text += ':' + std::to_string(column);
  }
  return text;
}

input_error::input_error(source_location where, const std::string &message)
    : error(where.file.empty() ? message : where.to_string() + ": " + message),
      m_where(std::move(where)), m_message(without_nul(message)) {}

input_error::input_error(const std::string &message)
    : error(message), m_message(without_nul(message)) {}

} // namespace roofline
