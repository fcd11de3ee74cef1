// SPDX-License-Identifier: Apache-2.0
#include "roofline/common/median.hpp"

#include <algorithm>
#include <cstddef>
#include <limits>

namespace roofline {

namespace {

/// Puts the value of sorted index `middle` at `middle`, the smaller ones before it.
double nth(std::vector<double> &values, std::size_t middle) {
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(middle),
                   values.end());
  return values[middle];
}

} // namespace

double median(std::vector<double> values) {
  if (values.empty())
    return std::numeric_limits<double>::quiet_NaN();
  const std::size_t middle = values.size() / 2;
  const double upper = nth(values, middle);
  if (values.size() % 2)
    return upper;
  // nth_element left every value below the upper middle before it: the lower middle is their
  // largest.
  const double lower =
      *std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(middle));
  return 0.5 * (lower + upper);
}

double upper_median(std::vector<double> values) {
  if (values.empty())
    return std::numeric_limits<double>::quiet_NaN();
  return nth(values, values.size() / 2);
}

} // namespace roofline
