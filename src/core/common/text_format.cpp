// SPDX-License-Identifier: Apache-2.0
#include "text_format.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace roofline::detail {

std::string significant(double value, int digits) {
  if (value == 0 || !std::isfinite(value))
    return fmt::format("{}", value);
  // Plain notation: "%g" would switch to exponents for the large values tables show.
  const int magnitude = static_cast<int>(std::floor(std::log10(std::fabs(value))));
  const int decimals = std::max(0, digits - 1 - magnitude);
  return fmt::format("{:.{}f}", value, decimals);
}

std::string raw(double value) {
  return fmt::format("{}", value);
}

std::string gigabytes(double bytes) {
  return significant(bytes / 1e9) + " GB";
}

std::string duration(double seconds) {
  if (seconds >= 1)
    return significant(seconds) + " s";
  if (seconds >= 1e-3)
    return significant(seconds * 1e3) + " ms";
  return significant(seconds * 1e6) + " µs";
}

std::string duration_range(double seconds, double low_s, double high_s) {
  if (low_s == seconds && high_s == seconds)
    return duration(seconds);
  const double scale = seconds >= 1 ? 1 : seconds >= 1e-3 ? 1e3 : 1e6;
  return duration(seconds) + " (" + significant(low_s * scale) + "–" + significant(high_s * scale) +
         ")";
}

std::string percent(double share) {
  return significant(share * 100, 3) + "%";
}

std::string si(double value) {
  static constexpr std::pair<double, const char *> prefixes[] = {
      {1e18, "E"}, {1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}};
  for (const auto &[scale, prefix] : prefixes)
    if (std::fabs(value) >= scale)
      return significant(value / scale) + " " + prefix;
  return significant(value) + " ";
}

} // namespace roofline::detail
