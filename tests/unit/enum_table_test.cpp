// SPDX-License-Identifier: Apache-2.0
// roofline/common/enum_table.hpp: one table per enum for its names, its parsing and the choices
// that messages list.
#include "roofline/analysis/measurement.hpp"
#include "roofline/common/enum_table.hpp"
#include "roofline/input/network.hpp"
#include "roofline/model/precision.hpp"
#include "roofline/output/output_format.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace roofline;

TEST_CASE("to_string and parse read the same table, both ways, for every value") {
  for (precision p : all_precisions) {
    CAPTURE(to_string(p));
    CHECK(names_of<precision>().name(p) == to_string(p));
    CHECK(parse_precision(to_string(p)) == p);
  }
  for (gemm_engine e :
       {gemm_engine::cublas, gemm_engine::naive, gemm_engine::tiled, gemm_engine::tensorcore})
    CHECK(parse_gemm_engine(to_string(e)) == e);
  CHECK(parse_inference_phase(to_string(inference_phase::decode)) == inference_phase::decode);
  CHECK(names_of<run_mode>().parse("training") == run_mode::training);
  CHECK(!parse_precision("FP16"));
  CHECK(!parse_gemm_engine(""));
}

TEST_CASE("an alias parses but is never written nor offered") {
  CHECK(parse_output_format("md") == output_format::markdown);
  CHECK(parse_output_format("markdown") == output_format::markdown);
  CHECK(names_of<output_format>().name(output_format::markdown) == "markdown");
  CHECK(names_of<output_format>().choices() == "table, json, csv, markdown, html or svg");
}

TEST_CASE("choices: every name in the table's order, or the values given in their order") {
  CHECK(names_of<gemm_engine>().choices() == "cublas, naive, tiled or tensorcore");
  CHECK(names_of<inference_phase>().choices() == "prefill or decode");
  CHECK(names_of<run_mode>().choices(" and ") == "inference and training");
  // The CLI's --precision and --kv-precision messages.
  CHECK(names_of<precision>().choices(
            {precision::fp32, precision::tf32, precision::fp16, precision::bf16, precision::fp8,
             precision::int8, precision::fp64}) == "fp32, tf32, fp16, bf16, fp8, int8 or fp64");
  CHECK(names_of<precision>().choices({precision::fp16, precision::bf16, precision::fp8,
                                       precision::int8}) == "fp16, bf16, fp8 or int8");
  CHECK(names_of<precision>().names() ==
        std::vector<std::string>{"fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "int8", "fp4"});
}

TEST_CASE("a table works at compile time") {
  static constexpr std::array<enum_name<int>, 2> names{{{1, "one"}, {2, "two"}}};
  static constexpr enum_table<int> table{names};
  static_assert(table.name(2) == "two");
  static_assert(table.parse("one") == 1);
  static_assert(table.name(3) == "?");
  CHECK(table.choices() == "one or two");
}
