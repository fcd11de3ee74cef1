// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>

namespace roofline::detail {

/// The value at `key` of a parameter group with its own values at `keys` (ascending, positive):
/// its own at one of them, else interpolated linearly in log2 of the key between its two
/// neighbours, the end values outside. `at(i)` is the value at keys[i]. (Head dims and GPU counts
/// double from one fitted value to the next: log2 spaces them evenly.)
template <std::size_t N, class At>
double interpolated_in_log2(double key, const std::array<int, N> &keys, At at) {
  const double x = std::log2(std::max(key, 1.0));
  const auto x_of = [&](std::size_t i) { return std::log2(static_cast<double>(keys[i])); };
  if (x <= x_of(0))
    return at(0);
  for (std::size_t i = 1; i < N; ++i)
    if (x <= x_of(i)) {
      const double t = (x - x_of(i - 1)) / (x_of(i) - x_of(i - 1));
      return at(i - 1) + t * (at(i) - at(i - 1));
    }
  return at(N - 1);
}

} // namespace roofline::detail
