// SPDX-License-Identifier: Apache-2.0
#include "roofline/common/printable_text.hpp"

#include "utf8.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace roofline {

std::string shown_value(std::string_view value, std::size_t max_characters) {
  std::size_t end = 0;
  for (std::size_t characters = 0; end < value.size() && characters < max_characters; ++characters)
    end += std::max<std::size_t>(detail::utf8_sequence(value.substr(end)), 1);
  if (end >= value.size())
    return printable_text(value);
  return printable_text(value.substr(0, end)) + fmt::format("… ({} bytes)", value.size());
}

std::string printable_text(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t plain = detail::first_escape(text.substr(i));
    out.append(text.substr(i, plain));
    if (plain == std::string_view::npos)
      break;
    i += plain;
    const std::size_t length = detail::utf8_sequence(text.substr(i));
    if (length == 0) { // not UTF-8: the byte's value
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(text[i]));
      ++i;
      continue;
    }
    out += detail::control_escape(detail::utf8_code_point(text.substr(i), length));
    i += length;
  }
  return out;
}

} // namespace roofline
