// SPDX-License-Identifier: Apache-2.0
// roofline/analysis/measurement.hpp: merging the rounds of one op's measurement, and its notes.
#include "roofline/analysis/measurement.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using roofline::measurement;
using roofline::measurement_status;

namespace {

measurement timed(double time_s, double device_time_s, int samples = 10) {
  measurement m;
  m.engine = "cublas";
  m.time_s = time_s;
  m.min_time_s = 0.9 * time_s;
  m.max_time_s = 1.2 * time_s;
  m.samples = samples;
  m.device_time_s = m.device_min_time_s = m.device_max_time_s = device_time_s;
  return m;
}

} // namespace

TEST_CASE("add_note joins clauses with a semicolon") {
  std::string note;
  roofline::add_note(note, "first");
  CHECK(note == "first");
  roofline::add_note(note, "second");
  CHECK(note == "first; second");
}

TEST_CASE("merge_rounds: one round is returned as it is") {
  const measurement first = timed(2e-6, 1e-6);
  const measurement merged = roofline::merge_rounds({first});
  CHECK(merged.time_s == first.time_s);
  CHECK(merged.device_time_s == first.device_time_s);
  CHECK(merged.samples == first.samples);
}

TEST_CASE("merge_rounds: the median round, the extremes of all and every sample") {
  measurement first = timed(3e-6, 2e-6);
  first.kernels = {"kernel_a"};
  first.relative_error = 1e-3;
  const measurement merged = roofline::merge_rounds({first, timed(1e-6, 4e-6), timed(2e-6, 3e-6)});
  CHECK(merged.time_s == 2e-6);
  CHECK(merged.min_time_s == doctest::Approx(0.9e-6));
  CHECK(merged.max_time_s == doctest::Approx(3.6e-6));
  CHECK(merged.samples == 30);
  CHECK(merged.device_time_s == 3e-6);
  CHECK(merged.device_min_time_s == 2e-6);
  CHECK(merged.device_max_time_s == 4e-6);
  CHECK(merged.kernels == std::vector<std::string>{"kernel_a"}); // the first round's
  CHECK(merged.relative_error == 1e-3);
}

TEST_CASE("merge_rounds: two rounds keep the later of the middle pair, never a mean") {
  const measurement merged = roofline::merge_rounds({timed(1e-6, 1e-6), timed(3e-6, 5e-6)});
  CHECK(merged.time_s == 3e-6);
  CHECK(merged.device_time_s == 5e-6);
}

TEST_CASE("merge_rounds: rounds not measured are left out") {
  measurement failed = timed(9e-6, 9e-6);
  failed.status = measurement_status::failed;
  const measurement merged = roofline::merge_rounds({timed(2e-6, 1e-6), failed});
  CHECK(merged.time_s == 2e-6);
  CHECK(merged.samples == 10);
  CHECK(merged.max_time_s == doctest::Approx(2.4e-6));
}

TEST_CASE("merge_rounds: a first round not measured stands") {
  measurement skipped;
  skipped.status = measurement_status::skipped;
  skipped.note = "out of GPU memory";
  const measurement merged = roofline::merge_rounds({skipped, timed(1e-6, 1e-6)});
  CHECK(merged.status == measurement_status::skipped);
  CHECK(merged.time_s == 0);
}

TEST_CASE("merge_rounds: a later round's device time replaces the first round's missing one") {
  measurement first = timed(2e-6, 0);
  first.note = "measured as its implicit GEMM: no cuDNN";
  roofline::add_note(first.note, std::string(roofline::device_time_missing) + "capture failed");
  const measurement merged =
      roofline::merge_rounds({first, timed(4e-6, 0), timed(3e-6, 1.5e-6), timed(1e-6, 0.5e-6)});
  CHECK(merged.note == "measured as its implicit GEMM: no cuDNN");
  CHECK(merged.device_time_s == 1.5e-6);
  CHECK(merged.device_min_time_s == 0.5e-6);
  CHECK(merged.device_max_time_s == 1.5e-6);
  CHECK(merged.time_s == 3e-6);
}

TEST_CASE("merge_rounds: no round with a device time keeps none, and its note") {
  measurement first = timed(2e-6, 0);
  first.note = std::string(roofline::device_time_missing) + "capture failed";
  const measurement merged = roofline::merge_rounds({first, timed(1e-6, 0)});
  CHECK(merged.device_time_s == 0);
  CHECK(merged.note == first.note);
}
