// SPDX-License-Identifier: Apache-2.0
// roofline/model/host_floor.hpp and what the model does with it: a GEMM call's floor and a kernel
// launch's, the measured floor with its fallbacks, the eager time max(device, floor) of real GPUs,
// the report's launch-bound totals and the advice they lead to.
#include "roofline/analysis/advisor.hpp"
#include "roofline/analysis/lowering.hpp"
#include "roofline/analysis/report.hpp"
#include "roofline/input/network.hpp"
#include "roofline/model/ceilings.hpp"
#include "roofline/model/host_floor.hpp"
#include "roofline/model/op.hpp"
#include "roofline/model/perf_model.hpp"
#include "roofline/model/spec_catalog.hpp"

#include "test_support.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

using namespace roofline;
using namespace roofline::test;

namespace {

std::size_t at(precision p) {
  return static_cast<std::size_t>(p);
}

gpu_spec h200() {
  return spec_catalog::builtin().resolve("h200");
}

/// Tiny layers (launch-bound on any GPU) and one large GEMM (not): 5 distinct ops, 11 runs.
network tiny_network() {
  return parse_network("name: tiny\nbatch: 1\nlayers:\n"
                       "  - {name: fc1, type: linear, in: 64, out: 64}\n"
                       "  - {name: act, type: relu}\n"
                       "  - repeat: 4\n"
                       "    name: blk\n"
                       "    layers:\n"
                       "      - {name: fc, type: linear, in: 64, out: 64}\n"
                       "      - {name: act, type: gelu}\n"
                       "  - {name: big, type: matmul, m: 4096, n: 4096, k: 4096}\n",
                       "tiny.yaml");
}

} // namespace

TEST_CASE("host_floor::gemm: the call, plus one kernel launch per further kernel") {
  host_floor h;
  h.gemm_call_s.fill(6e-6);
  h.gemm_call_s[at(precision::fp32)] = 7.5e-6;
  h.kernel_launch_s = 4e-6;
  CHECK(h.gemm(precision::fp16) == 6e-6); // default: one kernel
  CHECK(h.gemm(precision::fp16, 1) == 6e-6);
  CHECK(h.gemm(precision::fp16, 2) * 1e6 == doctest::Approx(6.0 + 4.0));
  CHECK(h.gemm(precision::fp16, 3) * 1e6 == doctest::Approx(6.0 + 2 * 4.0));
  CHECK(h.gemm(precision::fp32, 2) * 1e6 == doctest::Approx(7.5 + 4.0));
  CHECK(h.gemm(precision::fp16, 0) == 6e-6); // no fewer than the call itself
  h.kernel_launch_s = 0;
  CHECK(h.gemm(precision::fp32, 5) == 7.5e-6);
}

TEST_CASE("typical_host_floor: every precision's call and a kernel launch, marked not measured") {
  const host_floor typical = typical_host_floor();
  CHECK_FALSE(typical.measured);
  CHECK(contains(typical.origin, "typical"));
  CHECK(typical.kernel_launch_s > 0);
  for (precision p : all_precisions) {
    CAPTURE(to_string(p));
    CHECK(typical.gemm_call_s[at(p)] > 0);
    // A call costs the host at least a plain launch.
    CHECK(typical.gemm_call_s[at(p)] >= typical.kernel_launch_s);
  }
}

TEST_CASE("measured_host_floor takes what was measured, fp16's call for precisions that were "
          "not") {
  const measured_ceilings c = h200_ceilings_with_host_floors();
  const host_floor floor = measured_host_floor(c);
  CHECK(floor.measured);
  CHECK(contains(floor.origin, c.measured_at));
  CHECK(floor.gemm_call_s[at(precision::fp16)] == 6.1e-6);
  CHECK(floor.gemm_call_s[at(precision::bf16)] == 6.2e-6);
  CHECK(floor.gemm_call_s[at(precision::fp32)] == 7.3e-6); // the failed 9.9 µs run does not count
  // tf32 failed; fp64, fp8 and int8 were never measured: fp16's cuBLASLt path.
  for (precision p : {precision::tf32, precision::fp64, precision::fp8, precision::int8}) {
    CAPTURE(to_string(p));
    CHECK(floor.gemm_call_s[at(p)] == 6.1e-6);
  }
  CHECK(floor.kernel_launch_s == 2.5e-6); // the launch latency
  // 64³ fp16 on the H200 through that floor: 6.1 µs, with no "(typical host)".
  const prediction p = perf_model(h200(), model_options{false, false, std::nullopt, floor})
                           .predict(make_gemm_op("g", {64, 64, 64, 1}, precision::fp16));
  CHECK(p.host_floor_s == 6.1e-6);
  CHECK(p.launch_bound);
  bool typical_named = false;
  for (const std::string &factor : p.factors)
    typical_named = typical_named || contains(factor, "typical host");
  CHECK_FALSE(typical_named);
}

TEST_CASE("measured_host_floor falls back to the typical floor for what was not measured") {
  const host_floor typical = typical_host_floor();
  SUBCASE("nothing measured: the typical floor, not marked measured") {
    const host_floor floor = measured_host_floor(measured_ceilings{});
    CHECK_FALSE(floor.measured);
    CHECK(floor.origin == typical.origin);
    CHECK(floor.gemm_call_s == typical.gemm_call_s);
    CHECK(floor.kernel_launch_s == typical.kernel_launch_s);
  }
  SUBCASE("a cache from before host floors: the launch latency only") {
    const host_floor floor = measured_host_floor(h200_ceilings());
    // Its GEMM calls are the typical ones: the floor is not called measured for a launch alone.
    CHECK_FALSE(floor.measured);
    CHECK(floor.gemm_call_s == typical.gemm_call_s);
    CHECK(floor.fallback_call_s == typical.fallback_call_s);
    CHECK(floor.kernel_launch_s == 2.5e-6);
  }
  SUBCASE("fp32 measured, fp16 not: the others keep the typical call") {
    measured_ceilings c;
    c.measured_at = "2025-01-02T03:04:05Z";
    c.results.push_back(
        result("cuBLAS call host floor fp32", ceiling_kind::host_floor, precision::fp32, 7e-6));
    c.results.push_back(result("cuBLAS call host floor fp16", ceiling_kind::host_floor,
                               precision::fp16, 5e-6, "timeout"));
    const host_floor floor = measured_host_floor(c);
    CHECK(floor.measured);
    CHECK(floor.gemm_call_s[at(precision::fp32)] == 7e-6);
    CHECK(floor.gemm_call_s[at(precision::fp16)] == typical.gemm_call_s[at(precision::fp16)]);
    CHECK(floor.gemm_call_s[at(precision::bf16)] == typical.gemm_call_s[at(precision::bf16)]);
    CHECK(floor.kernel_launch_s == typical.kernel_launch_s);
  }
}

TEST_CASE("a 64³ fp16 GEMM on the H200 is launch-bound under the typical floor") {
  const perf_model model(h200());
  CHECK(contains(model.host().origin, typical_host_floor().origin));
  const prediction p = model.predict(make_gemm_op("g", {64, 64, 64, 1}, precision::fp16));
  REQUIRE(p.gemm);
  CHECK(p.launch_bound);
  CHECK(p.device_time_s == p.gemm->device_time_s);
  CHECK(p.device_time_s < p.host_floor_s);
  CHECK(p.host_floor_s == typical_host_floor().gemm(precision::fp16, p.gemm->launches));
  CHECK(p.time_s == p.host_floor_s);
}

TEST_CASE("the roofline alone has no host floor") {
  const perf_model model(h200(), model_options{false, true});
  for (const op &o : lower(tiny_network())) {
    CAPTURE(o.layer);
    const prediction p = model.predict(o);
    CHECK(p.host_floor_s == 0);
    CHECK_FALSE(p.launch_bound);
    CHECK(p.device_time_s == p.roofline_time_s);
    CHECK(p.time_s == p.roofline_time_s);
    CHECK_FALSE(p.gemm.has_value());
  }
}

TEST_CASE("the report sums device time and launch-bound time; advise() turns them into advice") {
  const network net = tiny_network();
  const perf_model model(h200());
  analysis r = analyze(net, model, "--gpu h200");
  REQUIRE(r.ops.size() == 5);
  CHECK(r.model.host().origin == model.host().origin);
  CHECK(r.model.host().gemm_call_s == model.host().gemm_call_s);

  // Every op but `big` is launch-bound: fc1 and blk/fc issue a cuBLAS call each, act and blk/act
  // a kernel each; `big` (4096³, about 0.2 ms) is not.
  const host_floor typical = typical_host_floor();
  double device = 0, launch = 0, eager = 0;
  std::int64_t launch_ops = 0;
  for (const analysed_op &entry : r.ops) {
    CAPTURE(entry.op.layer);
    const prediction &p = entry.prediction;
    const double runs = static_cast<double>(entry.op.count);
    CHECK(p.launch_bound == (entry.op.layer != "big"));
    CHECK(p.time_s == std::max(p.device_time_s, p.host_floor_s));
    CHECK(entry.total_time_s == doctest::Approx(p.time_s * runs).epsilon(1e-12));
    CHECK(p.host_floor_s == (entry.op.is_gemm() ? typical.gemm(precision::fp16, p.gemm->launches)
                                                : typical.kernel_launch_s));
    device += p.device_time_s * runs;
    eager += p.time_s * runs;
    if (p.launch_bound) {
      launch += p.time_s * runs;
      ++launch_ops;
    }
  }
  // fc1 + 4 × blk/fc: 5 calls of one kernel; act + 4 × blk/act: 5 kernel launches.
  CHECK(launch == doctest::Approx(5 * typical.gemm(precision::fp16) + 5 * typical.kernel_launch_s)
                      .epsilon(1e-12));
  const step_totals &t = r.totals;
  CHECK(t.time_s == doctest::Approx(eager).epsilon(1e-12));
  CHECK(t.device_time_s == doctest::Approx(device).epsilon(1e-12));
  CHECK(t.device_time_s < t.time_s);
  CHECK(t.launch_bound_ops == 4);
  CHECK(t.launch_bound_ops == launch_ops);
  CHECK(t.launch_bound_time_s == doctest::Approx(launch).epsilon(1e-12));
  CHECK(t.launch_bound_share == doctest::Approx(launch / eager).epsilon(1e-12));

  const advice a = advise(r);
  REQUIRE(a.launch_bound.has_value());
  const launch_bound_advice &l = *a.launch_bound;
  CHECK(l.ops == t.launch_bound_ops);
  CHECK(l.runs == 10);
  CHECK(l.time_s == doctest::Approx(t.launch_bound_time_s).epsilon(1e-12));
  CHECK(l.share == doctest::Approx(t.launch_bound_share).epsilon(1e-12));
  CHECK(l.step_time_s == doctest::Approx(t.time_s).epsilon(1e-12));
  CHECK(l.graph_step_time_s == doctest::Approx(t.device_time_s).epsilon(1e-12));
  CHECK(l.device_time_s < l.time_s);
  CHECK_FALSE(l.measured_floor);
  bool warned = false;
  for (const std::string &warning : a.warnings)
    if (contains(warning, "launch-bound")) {
      warned = true;
      CHECK(contains(warning, "4 of 5 ops"));
      CHECK(contains(warning, "10 runs per step"));
      CHECK(contains(warning, "CUDA graphs"));
      CHECK(contains(warning, "typical"));
    }
  CHECK(warned);
}

TEST_CASE("no launch-bound op, no launch-bound advice") {
  const network net = parse_network("name: big\nbatch: 1\nlayers:\n"
                                    "  - {name: big, type: matmul, m: 4096, n: 4096, k: 4096}\n",
                                    "big.yaml");
  const perf_model model(h200());
  const analysis r = analyze(net, model, "--gpu h200");
  CHECK(r.totals.launch_bound_ops == 0);
  CHECK(r.totals.launch_bound_time_s == 0);
  CHECK(r.totals.launch_bound_share == 0);
  const advice a = advise(r);
  CHECK_FALSE(a.launch_bound.has_value());
  for (const std::string &warning : a.warnings)
    CHECK_FALSE(contains(warning, "launch-bound"));
}

TEST_CASE("misaligned rows pay the fallback kernels' own host floor") {
  measured_ceilings c = h200_ceilings_with_host_floors();
  ceiling_result fallback;
  fallback.name = "cuBLAS call host floor fp16, misaligned rows";
  fallback.kind = ceiling_kind::fallback_host_floor;
  fallback.precision = precision::fp16;
  fallback.value = 5.5e-6;
  c.results.push_back(fallback);
  const host_floor floor = measured_host_floor(c);
  CHECK(floor.gemm(precision::fp16, 1, true) == 5.5e-6);
  CHECK(floor.gemm(precision::fp16, 2, true) == doctest::Approx(5.5e-6 + 2.5e-6));
  CHECK(floor.gemm(precision::bf16, 1, true) == 5.5e-6); // fp16's, as for the aligned calls
  CHECK(floor.gemm(precision::fp16, 1, false) == 6.1e-6);
  // 64 × 50257 × 768: N breaks the 16-byte rule of fp16, so the fallback kernels run it.
  const perf_model model(h200(), model_options{false, false, {}, floor});
  const prediction p = model.predict(make_gemm_op("g", {64, 50257, 768, 1}, precision::fp16));
  REQUIRE(p.gemm);
  REQUIRE(p.gemm->family == kernel_family::fallback);
  CHECK(p.host_floor_s == floor.gemm(precision::fp16, p.gemm->launches, true));
  // A cache from before fallback floors: the aligned call's floor stands in.
  const host_floor older = measured_host_floor(h200_ceilings_with_host_floors());
  CHECK(older.fallback_call_s == older.gemm_call_s);
}

namespace {

/// A fresh cache directory (0700), set as ROOFLINE_CACHE_DIR for its scope.
struct scratch_cache {
  std::filesystem::path path = std::filesystem::temp_directory_path() /
                               ("roofline-host-floor-test-" + std::to_string(::getpid()));
  scoped_env env{"ROOFLINE_CACHE_DIR", path.c_str()};
  scratch_cache() {
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
    std::filesystem::permissions(path, std::filesystem::perms::owner_all,
                                 std::filesystem::perm_options::replace);
  }
  ~scratch_cache() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  void write(const std::string &name, const std::string &text) const {
    std::ofstream(path / name) << text;
  }
};

/// h200_ceilings_with_host_floors() as cached, with every result of `kind` worth `value`.
std::string ceilings_with(ceiling_kind kind, double value) {
  measured_ceilings c = h200_ceilings_with_host_floors();
  c.results.push_back(result("cuBLAS fallback call host floor fp16",
                             ceiling_kind::fallback_host_floor, precision::fp16, 7.9e-6));
  nlohmann::json doc = nlohmann::json::parse(to_json_text(c));
  for (nlohmann::json &r : doc["results"])
    if (r["kind"] == to_string(kind))
      r["value"] = value;
  return doc.dump();
}

bool finite_floor(const host_floor &h) {
  for (precision p : all_precisions)
    if (!(std::isfinite(h.gemm(p, 3)) && std::isfinite(h.gemm(p, 1, true)) && h.gemm(p) > 0))
      return false;
  return std::isfinite(h.kernel_launch_s) && h.kernel_launch_s > 0;
}

} // namespace

TEST_CASE("cached_host_floor: the newest cached floor; a damaged file is skipped, named in the "
          "origin") {
  const scratch_cache cache;
  SUBCASE("no cache: the typical floor, no note") {
    CHECK(cached_host_floor().origin == typical_host_floor().origin);
  }
  SUBCASE("a good cache is used") {
    cache.write("ceilings-GPU-good.json", to_json_text(h200_ceilings_with_host_floors()));
    const host_floor h = cached_host_floor();
    CHECK(h.measured);
    CHECK(h.gemm(precision::fp16) == 6.1e-6);
    CHECK_FALSE(contains(h.origin, "skipped"));
  }
  // 1e308 s passed the old check (its sign alone) and made every time infinite.
  SUBCASE("a host floor or launch latency out of range") {
    for (const ceiling_kind kind :
         {ceiling_kind::host_floor, ceiling_kind::fallback_host_floor, ceiling_kind::latency}) {
      for (const double value : {1e308, 2.0, 1e-9, -6e-6}) {
        CAPTURE(to_string(kind));
        CAPTURE(value);
        cache.write("ceilings-GPU-bad.json", ceilings_with(kind, value));
        const host_floor h = cached_host_floor();
        CHECK_FALSE(h.measured);
        CHECK(finite_floor(h));
        CHECK(contains(h.origin, typical_host_floor().origin));
        CHECK(contains(h.origin, "skipped"));
        CHECK(contains(h.origin, (cache.path / "ceilings-GPU-bad.json").string()));
        CHECK(contains(h.origin, "out of range"));
      }
    }
  }
  SUBCASE("a damaged file beside a good one: the good one, and a note") {
    cache.write("ceilings-GPU-good.json", to_json_text(h200_ceilings_with_host_floors()));
    cache.write("ceilings-GPU-bad.json", "{ not json");
    const host_floor h = cached_host_floor();
    CHECK(h.measured);
    CHECK(contains(h.origin, "ceilings-GPU-bad.json"));
  }
  SUBCASE("a FIFO named like a cache file: skipped at once, never waited on") {
    REQUIRE(::mkfifo((cache.path / "ceilings-GPU-fifo.json").c_str(), 0600) == 0);
    const host_floor h = cached_host_floor();
    CHECK_FALSE(h.measured);
    CHECK(contains(h.origin, "a FIFO"));
  }
  SUBCASE("a symbolic link to /dev/zero: skipped, never read") {
    std::filesystem::create_symlink("/dev/zero", cache.path / "ceilings-GPU-zero.json");
    CHECK(contains(cached_host_floor().origin, "a symbolic link"));
  }
  SUBCASE("an oversized file: skipped") {
    cache.write("ceilings-GPU-big.json", std::string(max_cache_file_bytes + 1, ' '));
    CHECK(contains(cached_host_floor().origin, "bytes"));
  }
  SUBCASE("many damaged files: three named, the rest counted") {
    for (int i = 0; i < 5; ++i)
      cache.write("ceilings-GPU-" + std::to_string(i) + ".json", "x");
    const std::string origin = cached_host_floor().origin;
    CHECK(contains(origin, "and 2 more cache files skipped"));
  }
  SUBCASE("a directory others may write to: not read, and said so") {
    cache.write("ceilings-GPU-good.json", to_json_text(h200_ceilings_with_host_floors()));
    std::filesystem::permissions(cache.path, std::filesystem::perms::all);
    const host_floor h = cached_host_floor();
    CHECK_FALSE(h.measured);
    CHECK(contains(h.origin, "others may write"));
  }
}

TEST_CASE("cached_host_floor with no cache directory (HOME unset or empty): the typical floor") {
  for (const char *home : {static_cast<const char *>(nullptr), ""}) {
    const scoped_env a("ROOFLINE_CACHE_DIR", nullptr);
    const scoped_env b("XDG_CACHE_HOME", nullptr);
    const scoped_env c("HOME", home);
    CHECK(cached_host_floor().origin == typical_host_floor().origin); // no note: nothing to save
  }
}
