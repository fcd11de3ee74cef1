// SPDX-License-Identifier: Apache-2.0
#pragma once
// How the tool writes quantities in words and tables: every room's messages and every format's
// cells use these, so that a time or a size reads the same everywhere.

#include "roofline/common/printable_text.hpp"

#include <string>

namespace roofline::detail {

using roofline::shown_value; // printable_text.hpp

/// `value` with `digits` significant digits in plain notation: 0.000524, 12.3, 4096.
std::string significant(double value, int digits = 3);
/// Full precision, for CSV.
std::string raw(double value);
/// "87.7 µs", "1.23 ms", "2.00 s".
std::string duration(double seconds);
/// "1.23 ms (1.05–1.41)": `seconds` as duration() writes it, then its interval [low_s, high_s]
/// in the same unit; duration(seconds) alone where the interval is a point.
std::string duration_range(double seconds, double low_s, double high_s);
/// 47837192192 → "47.8 GB" (decimal gigabytes, as GPU datasheets count memory).
std::string gigabytes(double bytes);
/// 0.615 → "61.5%".
std::string percent(double share);

/// "1 T", "100 G", "1.5 P": `value` with an SI prefix (G, T, P ...), 3 significant digits.
std::string si(double value);

} // namespace roofline::detail
