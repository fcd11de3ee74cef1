// SPDX-License-Identifier: Apache-2.0
#include "utf8.hpp"

#include <fmt/format.h>

namespace roofline::detail {

std::size_t utf8_sequence(std::string_view s) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  const auto continuation = [&](std::size_t i) { return i < s.size() && (byte(i) & 0xC0) == 0x80; };
  const unsigned char lead = byte(0);
  if (lead < 0x80)
    return 1;
  if (lead >= 0xC2 && lead <= 0xDF)
    return continuation(1) ? 2 : 0;
  if (lead >= 0xE0 && lead <= 0xEF) {
    if (!continuation(1) || !continuation(2))
      return 0;
    const unsigned char second = byte(1);
    if ((lead == 0xE0 && second < 0xA0) || (lead == 0xED && second > 0x9F)) // overlong, surrogate
      return 0;
    return 3;
  }
  if (lead >= 0xF0 && lead <= 0xF4) {
    if (!continuation(1) || !continuation(2) || !continuation(3))
      return 0;
    const unsigned char second = byte(1);
    if ((lead == 0xF0 && second < 0x90) || (lead == 0xF4 && second > 0x8F)) // overlong, > U+10FFFF
      return 0;
    return 4;
  }
  return 0;
}

std::uint32_t utf8_code_point(std::string_view s, std::size_t length) {
  const auto lead = static_cast<unsigned char>(s[0]);
  std::uint32_t c = length == 1 ? lead : lead & (0xFFu >> (length + 1));
  for (std::size_t k = 1; k < length; ++k)
    c = c << 6 | (static_cast<unsigned char>(s[k]) & 0x3F);
  return c;
}

bool is_control(std::uint32_t c) {
  const bool terminal = c < 0x20 || (c >= 0x7F && c < 0xA0);
  const bool bidirectional = c == 0x61C || c == 0x200E || c == 0x200F ||
                             (c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069);
  // Invisible, or not text at all: a name holding them reads as another name.
  const bool invisible = c == 0xAD || (c >= 0x200B && c <= 0x200D) || c == 0x2028 || c == 0x2029 ||
                         (c >= 0x2060 && c <= 0x2064) || c == 0xFEFF ||
                         (c >= 0xFFF9 && c <= 0xFFFB);
  const bool noncharacter = (c >= 0xFDD0 && c <= 0xFDEF) || (c & 0xFFFE) == 0xFFFE;
  return terminal || bidirectional || invisible || noncharacter;
}

std::string control_escape(std::uint32_t c) {
  switch (c) {
  case '\n': return "\\n";
  case '\r': return "\\r";
  case '\t': return "\\t";
  default: break;
  }
  if (!is_control(c))
    return {};
  return c < 0x80 ? fmt::format("\\x{:02x}", c) : fmt::format("\\u{:04x}", c);
}

std::size_t first_escape(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t length = utf8_sequence(text.substr(i));
    if (length == 0 || is_control(utf8_code_point(text.substr(i), length)))
      return i;
    i += length;
  }
  return std::string_view::npos;
}

} // namespace roofline::detail
