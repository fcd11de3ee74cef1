// SPDX-License-Identifier: Apache-2.0
// Faults during a measurement, injected through the test-only ROOFLINE_INJECT_FAULT
// (src/cuda/runtime/fault_injection.hpp): a failing GEMM call, an allocation beyond the GPU's
// memory and a CUPTI error each mark their op, and every other op is measured. And a stopped run
// (what Ctrl-C does through measure_options::stop) keeps what it measured.
#include "../scoped_env.hpp"
#include "cli_runner.hpp"
#include "roofline/common/error.hpp"
#include "roofline/cuda/measurer.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

using namespace roofline;
using roofline::test::contains;

namespace {

/// `count` small fp16 GEMMs (cheap to check, time and count), a ReLU between the first two.
std::vector<op> small_gemms(int count) {
  std::vector<op> ops;
  for (int i = 0; i < count; ++i) {
    ops.push_back(
        make_gemm_op("gemm" + std::to_string(i), {256, 256 + 64 * i, 256, 1}, precision::fp16));
    if (i == 0) {
      op relu; // a memory-bound op: our kernel runs it, whatever the GEMM engine
      relu.layer = relu.kind = "relu";
      relu.elements = 1 << 20;
      relu.row = 1024;
      ops.push_back(relu);
    }
  }
  return ops;
}

measure_options quick(gemm_engine engine = gemm_engine::cublas) {
  measure_options options;
  options.engine = engine;
  options.counters = false;
  options.trace_kernels = true; // CUPTI's Activity API: the cupti fault has something to strike
  options.time_budget_s = 0.002;
  options.rounds = 2;
  return options;
}

const measurement &entry(const measurements &r, std::size_t i) {
  REQUIRE(i < r.ops.size());
  REQUIRE(r.ops[i].has_value());
  return *r.ops[i];
}

void check_measured(const measurement &m) {
  CAPTURE(m.note);
  CHECK(m.status == measurement_status::measured);
  CHECK(m.time_s > 0);
  CHECK(m.samples > 0);
  CHECK(m.relative_error < 1e-2);
}

} // namespace

TEST_CASE("an injected fault marks its op only: cuBLAS error failed, out of memory skipped, "
          "CUPTI error measured without kernels, the others measured") {
  // ops: 0 gemm0, 1 relu, 2 gemm1, 3 gemm2, 4 gemm3
  for (const gemm_engine engine : {gemm_engine::cublas, gemm_engine::tiled}) {
    CAPTURE(to_string(engine));
    const std::vector<op> ops = small_gemms(4);
    const test::scoped_env faults("ROOFLINE_INJECT_FAULT", "0:cublas,2:oom,3:cupti");
    const measurements r = cuda::measure(ops, quick(engine));
    CHECK(r.complete);
    REQUIRE(r.ops.size() == ops.size());
    const measurement &relu = entry(r, 1); // no fault injected into it
    check_measured(relu);
    CHECK(relu.engine == "roofline-kernels");

    const measurement &failed = entry(r, 0);
    CAPTURE(failed.note);
    CHECK(failed.status == measurement_status::failed);
    CHECK(contains(failed.note, "CUBLAS_STATUS_EXECUTION_FAILED"));
    CHECK(contains(failed.note, "ROOFLINE_INJECT_FAULT"));

    const measurement &skipped = entry(r, 2);
    CAPTURE(skipped.note);
    CHECK(skipped.status == measurement_status::skipped);
    CHECK(contains(skipped.note, "out of GPU memory"));
    CHECK(contains(skipped.note, "cudaErrorMemoryAllocation"));

    const measurement &untraced = entry(r, 3);
    check_measured(untraced); // its times stand
    CHECK(untraced.device_time_s > 0);
    CHECK(contains(untraced.note, "kernels not traced: CUPTI error"));
    CHECK(contains(untraced.note, "ROOFLINE_INJECT_FAULT"));
    CHECK(untraced.kernels.empty());

    const measurement &clean = entry(r, 4);
    check_measured(clean);
    CHECK(clean.note.empty());
    CHECK(clean.device_time_s > 0);
    CHECK(clean.launches >= 1); // tracing works again after the failed trace
  }
}

TEST_CASE("a CUPTI error inside a counter replay pass: the op keeps its times, the next op gets "
          "counters from a fresh session") {
  const std::vector<op> ops = small_gemms(3);
  measure_options options = quick();
  options.counters = true;
  options.trace_kernels = false;
  options.rounds = 1;
  const test::scoped_env fault("ROOFLINE_INJECT_FAULT", "0:cupti");
  const measurements r = cuda::measure(ops, options);
  CHECK(r.complete);
  std::string notes;
  for (const std::string &note : r.notes)
    notes += note + "\n";
  CAPTURE(notes);
  const measurement &first = entry(r, 0);
  check_measured(first);
  CHECK_FALSE(first.counters.has_value());
  const bool counting = !contains(notes, "hardware counters unavailable");
  if (!counting) {
    MESSAGE("counters not available on this machine: only the timing half is checked");
    return;
  }
  CHECK(contains(first.note, "hardware counters not read: CUPTI error"));
  CHECK(contains(first.note, "ROOFLINE_INJECT_FAULT"));
  for (std::size_t i : {std::size_t{2}, std::size_t{3}}) {
    CAPTURE(i);
    const measurement &m = entry(r, i);
    check_measured(m);
    CHECK(m.note.empty());
    CHECK(m.counters.has_value());
  }
}

TEST_CASE("a stopped run keeps what it measured and marks the ops it did not reach") {
  const std::vector<op> ops = small_gemms(4);
  measure_options options = quick();
  int asked = 0;
  options.stop = [&asked] { return ++asked > 3; }; // stop before the fourth op (gemm2)
  const measurements r = cuda::measure(ops, options);
  CHECK_FALSE(r.complete);
  check_measured(entry(r, 0));
  check_measured(entry(r, 1));
  check_measured(entry(r, 2));
  for (std::size_t i : {std::size_t{3}, std::size_t{4}}) {
    const measurement &m = entry(r, i);
    CHECK(m.status == measurement_status::skipped);
    CHECK(contains(m.note, "interrupted"));
  }
  REQUIRE_FALSE(r.notes.empty());
  CHECK(contains(r.notes.back(), "stopped after 3 of 5 ops"));

  // Stopped in a later round: every op measured once, the run still not complete.
  asked = 0;
  options.rounds = 3;
  options.stop = [&asked] { return ++asked > 6; }; // round 1's five ops, then one of round 2
  const measurements later = cuda::measure(ops, options);
  CHECK_FALSE(later.complete);
  for (std::size_t i = 0; i < ops.size(); ++i)
    check_measured(entry(later, i));
  REQUIRE_FALSE(later.notes.empty());
  CHECK(contains(later.notes.back(), "interrupted in round 2 of 3"));
}

TEST_CASE("ROOFLINE_INJECT_FAULT that cannot be read is refused, naming the hook") {
  const std::vector<op> ops = small_gemms(1);
  for (const char *bad : {"cublas", "0:segfault", "x:oom", "1:oom,"}) {
    CAPTURE(bad);
    const test::scoped_env fault("ROOFLINE_INJECT_FAULT", bad);
    CHECK_THROWS_WITH_AS(cuda::measure(ops, quick()), doctest::Contains("test-only"), error);
  }
}
