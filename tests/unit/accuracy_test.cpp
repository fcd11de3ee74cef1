// SPDX-License-Identifier: Apache-2.0
// Prediction intervals: an architecture's `accuracy:` bands parsed and inherited, each
// prediction's interval from its class's band (the host floor not widened), sums taken end by
// end, and the comparison's step ranges, speedup range and overlap sentence.
#include "roofline/analysis/analysis.hpp"
#include "roofline/compare/comparison.hpp"
#include "roofline/model/accuracy.hpp"
#include "roofline/model/gpu_spec.hpp"
#include "roofline/model/perf_model.hpp"
#include "roofline/model/spec_catalog.hpp"

#include "test_support.hpp"

#include <doctest/doctest.h>

using namespace roofline;
using roofline::test::contains;

namespace {

const std::string model_section = "model:\n  dram_efficiency: 0.8\n";

std::string parse_error(const std::string &accuracy, int *line = nullptr) {
  try {
    (void)parse_architecture_parameters("architecture: test\n" + model_section + accuracy,
                                        "test.yaml");
  } catch (const input_error &e) {
    if (line)
      *line = e.where().line;
    return e.what();
  }
  return "";
}

/// `spec` with every class's band set to `band`.
gpu_spec with_bands(gpu_spec spec, accuracy_band band) {
  for (const std::string &name : names_of<op_class>().names())
    spec.accuracy.by_class[*names_of<op_class>().parse(name)] = band;
  return spec;
}

} // namespace

TEST_CASE("an architecture's `accuracy:` bands parse by class; bad ones are located errors") {
  const architecture_parameters parsed = parse_architecture_parameters(
      "architecture: test\n" + model_section +
          "accuracy:\n  gemm: {p10: 0.9, p90: 1.2}\n  memory: {p10: 0.8, p90: 1.6}\n",
      "test.yaml");
  CHECK(parsed.accuracy.of(op_class::gemm).p10 == doctest::Approx(0.9));
  CHECK(parsed.accuracy.of(op_class::gemm).p90 == doctest::Approx(1.2));
  CHECK(parsed.accuracy.of(op_class::memory).p90 == doctest::Approx(1.6));
  // A class without a band takes the documented wider default.
  CHECK(parsed.accuracy.of(op_class::conv).p10 == default_accuracy_band.p10);
  CHECK(parsed.accuracy.of(op_class::conv).p90 == default_accuracy_band.p90);

  int line = 0;
  CHECK(contains(parse_error("accuracy:\n  gemv: {p10: 0.9, p90: 1.1}\n", &line), "gemv"));
  CHECK(line == 5);
  const std::string reversed = parse_error("accuracy:\n  gemm: {p10: 1.2, p90: 0.9}\n", &line);
  CHECK(contains(reversed, "test.yaml:5:"));
  CHECK(contains(reversed, "`p90` (0.9) must be at least `p10` (1.2)"));
  CHECK(contains(parse_error("accuracy:\n  gemm: {p10: 0.9}\n"), "p90"));
  CHECK(contains(parse_error("accuracy:\n  gemm: {p10: 0.9, p90: 120}\n"),
                 "must be a ratio measured / predicted in [0.01, 100], not 120"));
  CHECK(contains(parse_error("accuracy:\n  gemm: {p10: -1, p90: 1}\n"), "p10"));
  CHECK(contains(parse_error("accuracy:\n  gemm: {p10: 0.9, p90: 1.1, p50: 1}\n"), "p50"));
}

TEST_CASE("the built-in architectures carry bands; one that inherits takes its base's where it "
          "has none") {
  const spec_catalog &catalog = spec_catalog::builtin();
  const architecture_parameters *hopper = catalog.architecture("hopper");
  REQUIRE(hopper);
  for (op_class c : {op_class::gemm, op_class::attention, op_class::memory, op_class::conv}) {
    CAPTURE(to_string(c));
    REQUIRE(hopper->accuracy.by_class.count(c) == 1);
    const accuracy_band band = hopper->accuracy.of(c);
    CHECK(band.p10 < 1);
    CHECK(band.p90 > 1);
  }
  for (const architecture_parameters &a : catalog.architectures()) {
    CAPTURE(a.architecture);
    if (a.inherits.empty())
      continue;
    // Memory-bound ops and convolutions were measured on Hopper only.
    CHECK(a.accuracy.of(op_class::memory).p90 == hopper->accuracy.of(op_class::memory).p90);
    CHECK(a.accuracy.of(op_class::conv).p10 == hopper->accuracy.of(op_class::conv).p10);
    CHECK(a.accuracy.by_class.count(op_class::gemm) == 1);
  }
  // Every GPU takes its architecture's bands.
  const gpu_spec &h100 = *catalog.find("h100");
  CHECK(h100.accuracy.of(op_class::gemm).p90 == hopper->accuracy.of(op_class::gemm).p90);
}

TEST_CASE("a prediction's interval is its device time × its class's band, the host floor not "
          "widened") {
  const gpu_spec spec = with_bands(*spec_catalog::builtin().find("h100"), {0.5, 2.0});
  const perf_model model(spec);
  const op big = make_gemm_op("big", {8192, 8192, 8192}, precision::fp16);
  const prediction p = model.predict(big);
  REQUIRE_FALSE(p.launch_bound);
  CHECK(p.device_range.low_s == doctest::Approx(0.5 * p.device_time_s));
  CHECK(p.device_range.high_s == doctest::Approx(2.0 * p.device_time_s));
  CHECK(p.range.low_s == doctest::Approx(0.5 * p.time_s));
  CHECK(p.range.high_s == doctest::Approx(2.0 * p.time_s));
  CHECK(class_of(big) == op_class::gemm);

  // A launch-bound GEMM: its low end is the host floor itself, its high end the band's where
  // that passes the floor.
  const op tiny = make_gemm_op("tiny", {16, 16, 16}, precision::fp16);
  const prediction q = model.predict(tiny);
  REQUIRE(q.launch_bound);
  CHECK(q.range.low_s == doctest::Approx(q.host_floor_s));
  CHECK(q.range.high_s == doctest::Approx(std::max(q.host_floor_s, 2.0 * q.device_time_s)));

  // The plain roofline predicts a bound, not the model: no band.
  model_options roofline_only;
  roofline_only.roofline_only = true;
  const prediction r = perf_model(spec, roofline_only).predict(big);
  CHECK(r.range.low_s == r.time_s);
  CHECK(r.range.high_s == r.time_s);
}

TEST_CASE("a step's interval is the sum of its ops' ends, each × its count") {
  const gpu_spec spec = with_bands(*spec_catalog::builtin().find("h100"), {0.8, 1.5});
  std::vector<op> ops{make_gemm_op("a", {4096, 4096, 4096}, precision::fp16),
                      make_gemm_op("b", {2048, 8192, 1024}, precision::fp16)};
  ops[1].count = 3;
  const analysis a = analyze_ops("two", ops, perf_model(spec), "test");
  double low = 0, high = 0;
  for (const analysed_op &entry : a.ops) {
    CHECK(entry.total_range.low_s ==
          doctest::Approx(entry.prediction.range.low_s * static_cast<double>(entry.op.count)));
    low += entry.total_range.low_s;
    high += entry.total_range.high_s;
  }
  CHECK(a.totals.range.low_s == doctest::Approx(low));
  CHECK(a.totals.range.high_s == doctest::Approx(high));
  CHECK(a.totals.range.low_s == doctest::Approx(0.8 * a.totals.time_s));
  CHECK(a.totals.range.high_s == doctest::Approx(1.5 * a.totals.time_s));
  CHECK(a.totals.device_range.high_s == doctest::Approx(1.5 * a.totals.device_time_s));

  time_range sum = time_range::exactly(1);
  sum += time_range{2, 5};
  CHECK(sum.low_s == 3);
  CHECK(sum.high_s == 6);
  CHECK(time_range{1, 2}.overlaps({2, 3}));
  CHECK_FALSE(time_range{1, 2}.overlaps({2.5, 3}));
}

TEST_CASE("compare: step ranges, the speedup's range, and the verdict says when ranges overlap") {
  const network net = parse_network("name: one\nbatch: 1\nlayers:\n"
                                    "  - {name: square, type: matmul, m: 8192, n: 8192, k: 8192}\n",
                                    "one.yaml");
  const auto two = [&](accuracy_band band) {
    return compare(net, {{perf_model(with_bands(*spec_catalog::builtin().find("a100"), band)),
                          "a100", std::nullopt},
                         {perf_model(with_bands(*spec_catalog::builtin().find("h100"), band)),
                          "h100", std::nullopt}});
  };
  // Narrow bands: the H100 (about 3× the A100 here) is surely faster.
  const comparison narrow = two({0.95, 1.05});
  const gpu_result &base = narrow.gpus[0], &h100 = narrow.gpus[1];
  CHECK(h100.step_range.low_s == doctest::Approx(0.95 * h100.step_time_s));
  // Each op's interval, as the per-op table shows it, sums to the step's.
  REQUIRE(h100.op_ranges.size() == 1);
  CHECK(h100.op_ranges[0].low_s == doctest::Approx(0.95 * h100.op_times_s[0]));
  CHECK(h100.op_ranges[0].high_s == doctest::Approx(1.05 * h100.op_times_s[0]));
  CHECK(h100.speedup_low == doctest::Approx(base.step_range.low_s / h100.step_range.high_s));
  CHECK(h100.speedup_high == doctest::Approx(base.step_range.high_s / h100.step_range.low_s));
  CHECK(base.speedup_low == 1);
  CHECK(base.speedup_high == 1);
  CHECK(narrow.verdict.within_error.empty());
  CHECK_FALSE(contains(narrow.verdict.text, "Within the model's error"));

  // Bands wider than the speedup: the ranges overlap, and the verdict says so.
  const comparison wide = two({0.3, 3.0});
  CAPTURE(wide.verdict.text);
  REQUIRE(wide.verdict.within_error.size() == 1);
  CHECK(wide.verdict.within_error[0] == "a100-sxm4-80gb");
  CHECK(contains(wide.verdict.text, "Within the model's error: h100-sxm5's step ("));
  CHECK(contains(wide.verdict.text, ") overlaps a100-sxm4-80gb's ("));
  CHECK(contains(wide.verdict.text, "so h100-sxm5 is not surely the faster."));
}
