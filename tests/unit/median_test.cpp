// SPDX-License-Identifier: Apache-2.0
// roofline/common/median.hpp: the one median, and the upper median that always reports a value
// seen.
#include "roofline/common/median.hpp"

#include <doctest/doctest.h>

#include <cmath>

using roofline::median;
using roofline::upper_median;

TEST_CASE("median: the middle value of an odd count, in any order") {
  CHECK(median({3.0}) == 3.0);
  CHECK(median({5.0, 1.0, 3.0}) == 3.0);
  CHECK(median({9.0, 2.0, 7.0, 1.0, 4.0}) == 4.0);
}

TEST_CASE("median: the mean of the two middle values of an even count") {
  CHECK(median({4.0, 1.0}) == 2.5);
  CHECK(median({10.0, 1.0, 3.0, 2.0}) == 2.5);
  // The same sum, in the same order, as a sorted vector's 0.5 * (v[n/2 - 1] + v[n/2]).
  const double a = 0.1, b = 0.7;
  CHECK(median({b, 5.0, 0.0, a}) == 0.5 * (a + b));
}

TEST_CASE("upper_median: index size/2 of the sorted values, a value that was seen") {
  CHECK(upper_median({3.0}) == 3.0);
  CHECK(upper_median({5.0, 1.0, 3.0}) == 3.0);
  CHECK(upper_median({4.0, 1.0}) == 4.0);
  CHECK(upper_median({10.0, 1.0, 3.0, 2.0}) == 3.0);
}

TEST_CASE("median and upper_median of nothing are NaN") {
  CHECK(std::isnan(median({})));
  CHECK(std::isnan(upper_median({})));
}
