// SPDX-License-Identifier: Apache-2.0
// The measurement layer end to end on cuBLAS: checked, timed, traced, and timed again in rounds.
#include "roofline/cuda/measurer.hpp"
#include "roofline/spec_catalog.hpp"

#include <doctest/doctest.h>

using namespace roofline;

namespace {

report two_gemms() {
  const std::vector<op> ops{make_gemm_op("aligned", {1024, 1024, 1024, 1}, precision::fp16),
                            make_gemm_op("misaligned", {64, 65, 7, 1}, precision::fp32)};
  return analyze_ops("rounds", ops, perf_model(*spec_catalog::builtin().find("h200-sxm")), "test");
}

} // namespace

TEST_CASE("rounds: each GEMM checked and traced once, then timed again in later rounds") {
  cuda::measure_options options;
  options.counters = false;
  options.trace_kernels = true;
  options.time_budget_s = 0.005;
  std::size_t progress_calls = 0, progress_total = 0;
  options.progress = [&](std::size_t, std::size_t total, const std::string &) {
    ++progress_calls;
    progress_total = total;
  };
  report once = two_gemms();
  cuda::measure_report(once, options);
  options.rounds = 3;
  progress_calls = 0;
  report thrice = two_gemms();
  cuda::measure_report(thrice, options);
  CHECK(progress_total == 6); // two GEMMs, three rounds
  CHECK(progress_calls == 7); // and the final "done"
  for (std::size_t i = 0; i < thrice.ops.size(); ++i) {
    CAPTURE(thrice.ops[i].op.layer);
    REQUIRE(thrice.ops[i].measured);
    const measurement &m = *thrice.ops[i].measured;
    REQUIRE(m.status == measurement_status::measured);
    CHECK(m.relative_error > 0); // checked against the reference on random data
    CHECK(m.relative_error < 1e-2);
    CHECK(m.launches >= 1); // traced in the first round
    CHECK_FALSE(m.kernels.empty());
    CHECK(m.samples > once.ops[i].measured->samples); // the later rounds' samples count too
    CHECK(m.min_time_s <= m.time_s);
    CHECK(m.time_s <= m.max_time_s);
    CHECK(m.time_s > 0);
  }
}
