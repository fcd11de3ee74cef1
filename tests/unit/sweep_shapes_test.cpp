// SPDX-License-Identifier: Apache-2.0
// roofline/model/detail/sweep_shapes.hpp: the fresh accuracy set is large, deterministic, inside
// its size cap, covers every category, and shares no shape with the calibration and scoring sweep.
#include "roofline/model/detail/sweep_shapes.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <tuple>

using namespace roofline;

namespace {

using shape_key = std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t>;

shape_key key_of(const gemm_shape &s) {
  return {s.m, s.n, s.k, s.batch_count};
}

} // namespace

TEST_CASE("accuracy_shapes: at least 420 distinct shapes, none of them in sweep_shapes()") {
  const std::vector<sweep_shape> fresh = accuracy_shapes();
  std::set<shape_key> distinct;
  for (const sweep_shape &s : fresh)
    distinct.insert(key_of(s.shape));
  CHECK(fresh.size() >= 420);
  CHECK(distinct.size() == fresh.size()); // no shape twice

  std::set<shape_key> swept;
  for (const sweep_shape &s : sweep_shapes())
    swept.insert(key_of(s.shape));
  REQUIRE(swept.size() > 250);
  for (const sweep_shape &s : fresh) {
    CAPTURE(s.category);
    CAPTURE(s.shape.m);
    CAPTURE(s.shape.n);
    CAPTURE(s.shape.k);
    CAPTURE(s.shape.batch_count);
    CHECK(swept.count(key_of(s.shape)) == 0); // bench/data/*.csv hold exactly sweep_shapes()
  }
}

TEST_CASE("accuracy_shapes: every category, the size cap, no calibration shape") {
  std::map<std::string, int> per_category;
  for (const sweep_shape &s : accuracy_shapes()) {
    ++per_category[s.category];
    CAPTURE(s.category);
    CAPTURE(s.shape.m);
    CAPTURE(s.shape.n);
    CAPTURE(s.shape.k);
    CHECK(s.shape.m >= 1);
    CHECK(s.shape.n >= 1);
    CHECK(s.shape.k >= 1);
    CHECK(s.shape.batch_count >= 1);
    // 2³⁷ = 137,438,953,472 multiply-adds at most (no product here comes near int64's range:
    // each factor is below 2²⁰ and batch_count below 2⁸).
    CHECK(s.shape.m * s.shape.n * s.shape.k * s.shape.batch_count <= (std::int64_t{1} << 37));
    CHECK_FALSE(s.calibration);
  }
  for (const char *category : {"projection", "mlp", "attention", "decode", "conv", "odd"}) {
    CAPTURE(category);
    CHECK(per_category[category] >= 40);
  }
  CHECK(per_category.size() == 6); // nothing outside the documented categories

  // Decode shapes are decode-like: M from 1 to 64; attention's are batched.
  for (const sweep_shape &s : accuracy_shapes()) {
    if (s.category == "decode")
      CHECK(s.shape.m <= 64);
    if (s.category == "attention")
      CHECK(s.shape.batch_count >= 8);
    else
      CHECK(s.shape.batch_count == 1);
  }
}

TEST_CASE("accuracy_shapes and sweep_shapes are the same list on every call") {
  const std::vector<sweep_shape> a = accuracy_shapes(), b = accuracy_shapes();
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    CAPTURE(i);
    CHECK(a[i].category == b[i].category);
    CHECK(key_of(a[i].shape) == key_of(b[i].shape));
  }
  const std::vector<sweep_shape> c = sweep_shapes(), d = sweep_shapes();
  REQUIRE(c.size() == d.size());
  for (std::size_t i = 0; i < c.size(); ++i) {
    CHECK(key_of(c[i].shape) == key_of(d[i].shape));
    CHECK(c[i].calibration == d[i].calibration);
  }
}
