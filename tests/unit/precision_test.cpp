// SPDX-License-Identifier: Apache-2.0
// roofline/model/precision.hpp: names and element sizes of the number formats.
#include "roofline/model/precision.hpp"

#include <doctest/doctest.h>

#include <set>
#include <string>

using roofline::precision;

TEST_CASE("to_string gives the lower-case name of every precision") {
  CHECK(roofline::to_string(precision::fp64) == "fp64");
  CHECK(roofline::to_string(precision::fp32) == "fp32");
  CHECK(roofline::to_string(precision::tf32) == "tf32");
  CHECK(roofline::to_string(precision::fp16) == "fp16");
  CHECK(roofline::to_string(precision::bf16) == "bf16");
  CHECK(roofline::to_string(precision::fp8) == "fp8");
  CHECK(roofline::to_string(precision::int8) == "int8");
}

TEST_CASE("parse_precision(to_string(p)) == p for all precisions, and the names are distinct") {
  std::set<std::string> names;
  for (precision p : roofline::all_precisions) {
    CAPTURE(roofline::to_string(p));
    const auto parsed = roofline::parse_precision(roofline::to_string(p));
    REQUIRE(parsed.has_value());
    CHECK(*parsed == p);
    names.insert(std::string(roofline::to_string(p)));
  }
  CHECK(names.size() == roofline::all_precisions.size());
  CHECK(roofline::all_precisions.size() == 8);
}

TEST_CASE("parse_precision returns nullopt for unknown names") {
  CHECK_FALSE(roofline::parse_precision("fp17").has_value());
  CHECK_FALSE(roofline::parse_precision("").has_value());
  CHECK_FALSE(roofline::parse_precision("half").has_value());
  CHECK_FALSE(roofline::parse_precision("fp16 ").has_value());
  // Names are lower-case only.
  CHECK_FALSE(roofline::parse_precision("FP16").has_value());
}

TEST_CASE(
    "element_bytes: 8 for fp64, 4 for fp32 and tf32, 2 for fp16 and bf16, 1 for fp8 and int8") {
  CHECK(roofline::element_bytes(precision::fp64) == 8);
  CHECK(roofline::element_bytes(precision::fp32) == 4);
  CHECK(roofline::element_bytes(precision::tf32) == 4); // stored as fp32
  CHECK(roofline::element_bytes(precision::fp16) == 2);
  CHECK(roofline::element_bytes(precision::bf16) == 2);
  CHECK(roofline::element_bytes(precision::fp8) == 1);
  CHECK(roofline::element_bytes(precision::int8) == 1);
}
