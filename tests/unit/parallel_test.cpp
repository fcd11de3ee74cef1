// SPDX-License-Identifier: Apache-2.0
#include "parallel.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <vector>

using roofline::detail::parallel_for;

TEST_CASE("parallel_for runs every body once, whatever the count") {
  for (std::size_t count : {0u, 1u, 255u, 256u, 5000u}) {
    std::vector<int> runs(count, 0);
    parallel_for(count, [&](std::size_t i) { ++runs[i]; });
    for (std::size_t i = 0; i < count; ++i)
      REQUIRE(runs[i] == 1);
  }
}

TEST_CASE("parallel_for rethrows what the first failing item threw, as a loop would") {
  std::atomic<int> ran{0};
  const auto body = [&](std::size_t i) {
    ++ran;
    if (i == 1234 || i == 1235 || i == 4000)
      throw std::runtime_error("item " + std::to_string(i));
  };
  try {
    parallel_for(5000, body);
    FAIL("nothing thrown");
  } catch (const std::runtime_error &e) {
    CHECK(std::string(e.what()) == "item 1234");
  }
  CHECK(ran.load() > 1234);
}
