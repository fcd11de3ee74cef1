// SPDX-License-Identifier: Apache-2.0
// measured_ceilings: which measurement becomes which roof, apply_ceilings on a datasheet spec, the
// JSON cache document (round trip, damaged documents), and the cache directory and files.
#include "roofline/common/error.hpp"
#include "roofline/model/ceilings.hpp"
#include "roofline/model/op.hpp"
#include "roofline/model/perf_model.hpp"
#include "roofline/model/spec_catalog.hpp"

#include "test_support.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

using namespace roofline;
using namespace roofline::test;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

gpu_spec h200_sheet() {
  const gpu_spec *spec = spec_catalog::builtin().find("h200-sxm");
  REQUIRE(spec != nullptr);
  return *spec;
}

/// A fresh directory under the system temp directory, removed at the end of the scope.
struct temp_dir {
  fs::path path;
  explicit temp_dir(const std::string &tag)
      : path(fs::temp_directory_path() /
             ("roofline-ceilings-test-" + tag + "-" + std::to_string(::getpid()))) {
    fs::remove_all(path);
  }
  ~temp_dir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

void check_same(const measured_ceilings &a, const measured_ceilings &b) {
  CHECK(a.uuid == b.uuid);
  CHECK(a.device_name == b.device_name);
  CHECK(a.measured_at == b.measured_at);
  REQUIRE(a.results.size() == b.results.size());
  for (std::size_t i = 0; i < a.results.size(); ++i) {
    const ceiling_result &x = a.results[i];
    const ceiling_result &y = b.results[i];
    CAPTURE(x.name);
    CHECK(x.name == y.name);
    CHECK(x.kind == y.kind);
    CHECK(x.precision == y.precision);
    CHECK(x.value == y.value); // exact: the cache must not round
    CHECK(x.spread == y.spread);
    CHECK(x.method == y.method);
    CHECK(x.failure == y.failure);
  }
}

std::string error_text(const std::string &text, const std::string &origin) {
  try {
    (void)parse_ceilings(text, origin);
  } catch (const input_error &e) {
    CHECK(e.where().file == origin);
    return e.what();
  }
  FAIL("parse_ceilings accepted " << text);
  return {};
}

/// A valid one-result document with one field replaced.
std::string document_with(const std::string &key, const json &value) {
  json doc = json::parse(to_json_text(h200_ceilings()));
  if (key == "format_version")
    doc[key] = value;
  else
    doc["results"][0][key] = value;
  return doc.dump();
}

} // namespace

TEST_CASE("dram_bytes_per_s is the `dram copy` result; other DRAM results and failures are not") {
  const measured_ceilings c = h200_ceilings();
  REQUIRE(c.dram_bytes_per_s());
  CHECK(*c.dram_bytes_per_s() ==
        4.2e12); // not "dram read" (4.5e12), though it comes first and is larger

  measured_ceilings failed = c;
  for (ceiling_result &r : failed.results)
    if (r.name == "dram copy")
      r.failure = "kernel launch failed";
  CHECK_FALSE(failed.dram_bytes_per_s().has_value());

  // A failed copy followed by a good one: the good one.
  measured_ceilings retried = failed;
  retried.results.push_back(
      result("dram copy", ceiling_kind::dram_bandwidth, std::nullopt, 4.3e12));
  REQUIRE(retried.dram_bytes_per_s());
  CHECK(*retried.dram_bytes_per_s() == 4.3e12);

  // A result named "dram copy" of another kind is not the DRAM roof.
  measured_ceilings mislabelled;
  mislabelled.results.push_back(
      result("dram copy", ceiling_kind::l2_bandwidth, std::nullopt, 9e12));
  CHECK_FALSE(mislabelled.dram_bytes_per_s().has_value());
  CHECK_FALSE(measured_ceilings{}.dram_bytes_per_s().has_value());
}

TEST_CASE("flop_per_s(p) is the best non-failed result of that precision") {
  const measured_ceilings c = h200_ceilings();
  // fp16: max(6.5e14, 7.0e14) = 7.0e14; the failed 9.9e14 does not count
  REQUIRE(c.flop_per_s(precision::fp16));
  CHECK(*c.flop_per_s(precision::fp16) == 7.0e14);
  REQUIRE(c.flop_per_s(precision::fp32));
  CHECK(*c.flop_per_s(precision::fp32) == 5.0e13);
  CHECK_FALSE(c.flop_per_s(precision::fp8).has_value());  // only a failed run
  CHECK_FALSE(c.flop_per_s(precision::bf16).has_value()); // never measured
  // A flop_rate result without a precision belongs to none.
  measured_ceilings unlabelled;
  unlabelled.results.push_back(result("mystery", ceiling_kind::flop_rate, std::nullopt, 1e15));
  for (precision p : all_precisions)
    CHECK_FALSE(unlabelled.flop_per_s(p).has_value());
  // Bandwidths are never FLOP rates, even with a precision attached.
  measured_ceilings odd;
  odd.results.push_back(result("fp16 bytes", ceiling_kind::dram_bandwidth, precision::fp16, 4e12));
  CHECK_FALSE(odd.flop_per_s(precision::fp16).has_value());
}

TEST_CASE("launch_latency_s is the first non-failed latency result") {
  measured_ceilings c = h200_ceilings();
  REQUIRE(c.launch_latency_s());
  CHECK(*c.launch_latency_s() == 2.5e-6);
  c.results.back().failure = "timer failed";
  CHECK_FALSE(c.launch_latency_s().has_value());
}

TEST_CASE("host_floor_s(p) is the first non-failed host floor of that precision") {
  const measured_ceilings c = h200_ceilings_with_host_floors();
  REQUIRE(c.host_floor_s(precision::fp16));
  CHECK(*c.host_floor_s(precision::fp16) == 6.1e-6);
  REQUIRE(c.host_floor_s(precision::bf16));
  CHECK(*c.host_floor_s(precision::bf16) == 6.2e-6);
  REQUIRE(c.host_floor_s(precision::fp32));
  CHECK(*c.host_floor_s(precision::fp32) == 7.3e-6); // the failed 9.9e-6 before it does not count
  CHECK_FALSE(c.host_floor_s(precision::tf32).has_value()); // only a failed run
  CHECK_FALSE(c.host_floor_s(precision::fp8).has_value());  // never measured
  // Host floors are neither launch latencies nor FLOP rates, and vice versa.
  REQUIRE(c.launch_latency_s());
  CHECK(*c.launch_latency_s() == 2.5e-6);
  CHECK(*c.flop_per_s(precision::fp16) == 7.0e14);
  measured_ceilings latency_only;
  latency_only.results.push_back(result("launch", ceiling_kind::latency, precision::fp16, 3e-6));
  CHECK_FALSE(latency_only.host_floor_s(precision::fp16).has_value());
  // Ceilings measured before host floors were (format_version 1 caches) have none.
  for (precision p : all_precisions)
    CHECK_FALSE(h200_ceilings().host_floor_s(p).has_value());
}

TEST_CASE("ceiling kinds: names round trip; latency and host floor are times") {
  for (ceiling_kind kind :
       {ceiling_kind::dram_bandwidth, ceiling_kind::l2_bandwidth, ceiling_kind::flop_rate,
        ceiling_kind::latency, ceiling_kind::host_floor}) {
    CAPTURE(to_string(kind));
    REQUIRE(parse_ceiling_kind(to_string(kind)));
    CHECK(*parse_ceiling_kind(to_string(kind)) == kind);
    CHECK(is_time(kind) == (kind == ceiling_kind::latency || kind == ceiling_kind::host_floor));
  }
  CHECK(to_string(ceiling_kind::host_floor) == "host_floor");
  CHECK_FALSE(parse_ceiling_kind("Host_Floor").has_value());
  CHECK_FALSE(parse_ceiling_kind("").has_value());
}

TEST_CASE("apply_ceilings on the H200 datasheet: measured roofs replace the datasheet's") {
  const gpu_spec sheet = h200_sheet();
  const gpu_spec spec = apply_ceilings(sheet, h200_ceilings());
  // DRAM: 4.8e12 → 4.2e12 (the copy)
  CHECK(spec.dram_bytes_per_s == 4.2e12);
  // fp16 dense: 989.4e12 → 7.0e14; sparse scales by the same ratio:
  // 1978.9e12 · (7.0e14 / 989.4e12) = 1.4000707e15
  CHECK(spec.peaks.at(precision::fp16).dense_flop_per_s == 7.0e14);
  REQUIRE(spec.peaks.at(precision::fp16).sparse_flop_per_s);
  CHECK(*spec.peaks.at(precision::fp16).sparse_flop_per_s ==
        doctest::Approx(1.40007075e15).epsilon(1e-9));
  // fp32: 67e12 → 5.0e13, still no sparse rate
  CHECK(spec.peaks.at(precision::fp32).dense_flop_per_s == 5.0e13);
  CHECK_FALSE(spec.peaks.at(precision::fp32).sparse_flop_per_s.has_value());
  // Unmeasured (bf16, tf32, int8, fp64) or only failed (fp8): the datasheet's figures, dense and
  // sparse.
  for (precision p :
       {precision::bf16, precision::tf32, precision::int8, precision::fp64, precision::fp8}) {
    CAPTURE(to_string(p));
    CHECK(spec.peaks.at(p).dense_flop_per_s == sheet.peaks.at(p).dense_flop_per_s);
    CHECK(spec.peaks.at(p).sparse_flop_per_s == sheet.peaks.at(p).sparse_flop_per_s);
  }
  // The ridge follows: 7.0e14 / 4.2e12 = 166.67 FLOP/B (datasheet: 989.4e12 / 4.8e12 = 206.1)
  CHECK(spec.ridge_intensity(precision::fp16) == doctest::Approx(166.6667).epsilon(1e-6));
  // Everything else is the datasheet's; origin notes the measurement.
  CHECK(spec.name == sheet.name);
  CHECK(spec.display_name == sheet.display_name);
  CHECK(spec.sm_count == sheet.sm_count);
  CHECK(spec.peaks.size() == sheet.peaks.size());
  CHECK(spec.origin == sheet.origin + " + ceilings measured 2025-01-02T03:04:05Z");
}

TEST_CASE("a measured peak is not scaled by a sustained clock; the datasheet's peaks still are") {
  // An H200 held at 1485 of its 1980 MHz: its datasheet peaks at three quarters.
  gpu_spec sheet = h200_sheet();
  sheet.sustained_clock_hz = 1485e6;
  const gpu_spec spec = apply_ceilings(sheet, h200_ceilings());
  // fp16 was measured (7.0e14, at whatever clock the card held): as measured, dense and sparse.
  CHECK(spec.peaks.at(precision::fp16).measured);
  CHECK(spec.peak_flop_per_s(precision::fp16) == 7.0e14);
  CHECK(spec.peak_flop_per_s(precision::fp16, true) ==
        *spec.peaks.at(precision::fp16).sparse_flop_per_s);
  // bf16 was not: 989.4e12 · 0.75.
  CHECK_FALSE(spec.peaks.at(precision::bf16).measured);
  CHECK(spec.peak_flop_per_s(precision::bf16) == doctest::Approx(989.4e12 * 0.75));
  // The GEMM model runs on the datasheet's peaks, held at the sustained clock.
  CHECK(model_basis(spec).peak_flop_per_s(precision::fp16) == doctest::Approx(989.4e12 * 0.75));
}

TEST_CASE(
    "measured ceilings move the roofline, not the GEMM model: it keeps the datasheet's roofs") {
  // The model's efficiencies are fractions of the datasheet's roofs (fitted so); a measured fp16
  // roof of 7.0e14 under them would count the kernels' shortfall twice.
  const gpu_spec sheet = h200_sheet();
  const gpu_spec measured = apply_ceilings(sheet, h200_ceilings());
  REQUIRE(measured.paper);
  CHECK(measured.paper->dram_bytes_per_s == sheet.dram_bytes_per_s);
  const gpu_spec basis = model_basis(measured);
  CHECK(basis.dram_bytes_per_s == sheet.dram_bytes_per_s);
  CHECK(basis.peaks.at(precision::fp16).dense_flop_per_s ==
        sheet.peaks.at(precision::fp16).dense_flop_per_s);
  CHECK_FALSE(basis.paper);
  // Applying ceilings twice keeps the first datasheet, not the first measurement.
  CHECK(apply_ceilings(measured, h200_ceilings()).paper->dram_bytes_per_s ==
        sheet.dram_bytes_per_s);
  const op gemm = make_gemm_op("g", {8192, 8192, 8192, 1}, precision::fp16);
  const prediction on_paper = perf_model(sheet).predict(gemm);
  const prediction with_ceilings = perf_model(measured).predict(gemm);
  CHECK(with_ceilings.device_time_s == on_paper.device_time_s);
  CHECK(with_ceilings.ridge_intensity == doctest::Approx(7.0e14 / 4.2e12).epsilon(1e-12));
  CHECK(with_ceilings.roofline_time_s > on_paper.roofline_time_s);
}

TEST_CASE("apply_ceilings ignores precisions the spec lacks and leaves a spec alone without "
          "measurements") {
  const gpu_spec *v100 = spec_catalog::builtin().find("v100");
  REQUIRE(v100 != nullptr);
  measured_ceilings c;
  c.measured_at = "then";
  c.results.push_back(result("bf16 cuBLASLt", ceiling_kind::flop_rate, precision::bf16, 1e14));
  const gpu_spec spec = apply_ceilings(*v100, c);
  CHECK_FALSE(spec.supports(precision::bf16)); // not invented
  CHECK(spec.dram_bytes_per_s == v100->dram_bytes_per_s);
  CHECK(spec.peaks.at(precision::fp16).dense_flop_per_s ==
        v100->peaks.at(precision::fp16).dense_flop_per_s);
  CHECK(spec.origin == v100->origin + " + ceilings measured then");
}

TEST_CASE("to_json_text / parse_ceilings round trip every field exactly") {
  measured_ceilings c = h200_ceilings();
  c.results[1].value = 4.123456789012345e12; // needs all 17 digits
  c.results[1].spread = 0.1 + 0.2;
  c.results[2].method = "quotes \" and \\ backslashes, ünïcødé";
  const std::string text = to_json_text(c);
  check_same(parse_ceilings(text, "cache.json"), c);

  // The document: format_version 1, precision a string or null, failure a string ("" when none).
  const json doc = json::parse(text);
  CHECK(doc.at("format_version") == 3);
  CHECK(doc.at("uuid") == c.uuid);
  CHECK(doc.at("device_name") == "NVIDIA H200");
  CHECK(doc.at("measured_at") == "2025-01-02T03:04:05Z");
  REQUIRE(doc.at("results").size() == c.results.size());
  const json &copy = doc.at("results")[1];
  CHECK(copy.at("name") == "dram copy");
  CHECK(copy.at("kind") == "dram_bandwidth");
  CHECK(copy.at("precision").is_null());
  CHECK(copy.at("failure") == "");
  CHECK(copy.at("value").is_number());
  const json &failed = doc.at("results")[5];
  CHECK(failed.at("kind") == "flop_rate");
  CHECK(failed.at("precision") == "fp16");
  CHECK(failed.at("failure") == "CUBLAS_STATUS_NOT_SUPPORTED");
  CHECK(doc.at("results")[2].at("kind") == "l2_bandwidth");
  CHECK(doc.at("results").back().at("kind") == "latency");

  // Every kind and every precision survives.
  measured_ceilings all;
  for (precision p : all_precisions)
    all.results.push_back(result(std::string(to_string(p)), ceiling_kind::flop_rate, p, 1e12));
  check_same(parse_ceilings(to_json_text(all), "all.json"), all);
  // No results at all.
  check_same(parse_ceilings(to_json_text(measured_ceilings{}), "empty.json"), measured_ceilings{});
}

TEST_CASE("host floors survive the cache document; format_version 1 documents are still read") {
  const measured_ceilings c = h200_ceilings_with_host_floors();
  const std::string text = to_json_text(c);
  const measured_ceilings back = parse_ceilings(text, "cache.json");
  check_same(back, c);
  REQUIRE(back.host_floor_s(precision::fp16));
  CHECK(*back.host_floor_s(precision::fp16) == 6.1e-6);
  CHECK_FALSE(back.host_floor_s(precision::tf32).has_value());

  const json doc = json::parse(text);
  const json &fp16 = doc.at("results")[c.results.size() - 3];
  CHECK(fp16.at("name") == "cuBLAS call host floor fp16");
  CHECK(fp16.at("kind") == "host_floor");
  CHECK(fp16.at("precision") == "fp16");
  CHECK(fp16.at("value") == 6.1e-6);
  CHECK(contains(fp16.at("method").get<std::string>(), "graph-replayed"));

  // A cache written before host floors (version 1, no host_floor results) reads as it was.
  json old = json::parse(to_json_text(h200_ceilings()));
  old["format_version"] = 1;
  const measured_ceilings v1 = parse_ceilings(old.dump(), "old.json");
  check_same(v1, h200_ceilings());
  CHECK_FALSE(v1.host_floor_s(precision::fp16).has_value());
  REQUIRE(v1.launch_latency_s());
  CHECK(*v1.launch_latency_s() == 2.5e-6);
}

TEST_CASE("parse_ceilings rejects damaged documents with input_error naming the origin") {
  const std::string origin = "/cache/ceilings-GPU-x.json";
  SUBCASE("not JSON") {
    const std::string what = error_text("{\"format_version\": 1, \"uuid\": ", origin);
    CHECK(contains(what, origin));
    CHECK(contains(what, "damaged"));
    CHECK(contains(what, "describe_local_gpu::refresh"));
  }
  SUBCASE("empty file") {
    CHECK(contains(error_text("", origin), origin));
  }
  SUBCASE("JSON of another shape") {
    CHECK(contains(error_text("[1, 2, 3]", origin), origin));
    CHECK(contains(error_text("42", origin), origin));
    CHECK(contains(error_text("{}", origin), origin)); // no format_version
  }
  SUBCASE("another format_version") {
    for (int version : {0, 4, 99}) {
      CAPTURE(version);
      const std::string what = error_text(document_with("format_version", version), origin);
      CHECK(contains(what, origin));
      CHECK(contains(what, "format version"));
      CHECK(contains(what, "describe_local_gpu::refresh"));
    }
  }
  SUBCASE("format_version not a number") {
    CHECK(contains(error_text(document_with("format_version", "1"), origin), origin));
  }
  SUBCASE("an unknown kind") {
    const std::string what = error_text(document_with("kind", "pcie_bandwidth"), origin);
    CHECK(contains(what, origin));
    CHECK(contains(what, "unknown ceiling kind"));
    CHECK(contains(what, "dram read")); // names the result
  }
  SUBCASE("an unknown precision") {
    const std::string what = error_text(document_with("precision", "fp5"), origin);
    CHECK(contains(what, origin));
    CHECK(contains(what, "unknown precision"));
  }
  SUBCASE("a value that is not a number") {
    CHECK(contains(error_text(document_with("value", "4.2e12"), origin), "damaged"));
  }
  SUBCASE("a value out of sign, or none where the measurement worked") {
    CHECK(contains(error_text(document_with("value", -4.2e12), origin), "out of range"));
    CHECK(contains(error_text(document_with("spread", -1), origin), "out of range"));
    CHECK(contains(error_text(document_with("value", 0), origin), "out of range"));
  }
  SUBCASE("a key given twice (nlohmann-json would keep the last)") {
    std::string text = to_json_text(h200_ceilings());
    text.replace(text.find("\"uuid\""), 0, "\"uuid\": \"GPU-other\", ");
    const std::string what = error_text(text, origin);
    CHECK(contains(what, "damaged"));
    CHECK(contains(what, "duplicate key `uuid`"));
  }
  SUBCASE("a missing field") {
    json doc = json::parse(to_json_text(h200_ceilings()));
    doc["results"][0].erase("failure");
    CHECK(contains(error_text(doc.dump(), origin), "damaged"));
  }
}

TEST_CASE("parse_ceilings refuses a value outside what its kind may take, or past a double's "
          "range") {
  const std::string origin = "/cache/ceilings-GPU-x.json";
  // Each kind's bounds, and its largest value, still accepted.
  measured_ceilings c = h200_ceilings_with_host_floors();
  c.results.push_back(result("cuBLAS fallback call host floor fp16",
                             ceiling_kind::fallback_host_floor, precision::fp16, 7.9e-6));
  const auto index_of = [&](ceiling_kind kind) {
    for (std::size_t i = 0; i < c.results.size(); ++i)
      if (c.results[i].kind == kind && c.results[i].failure.empty())
        return i;
    FAIL("no result of kind " << to_string(kind));
    return std::size_t{0};
  };
  for (const ceiling_kind kind :
       {ceiling_kind::dram_bandwidth, ceiling_kind::l2_bandwidth, ceiling_kind::flop_rate,
        ceiling_kind::latency, ceiling_kind::host_floor, ceiling_kind::fallback_host_floor}) {
    const ceiling_range range = ceiling_value_range(kind);
    for (const double bad : {1e308, range.max * 1.01, range.min * 0.99, -range.min}) {
      CAPTURE(to_string(kind));
      CAPTURE(bad);
      json doc = json::parse(to_json_text(c));
      doc["results"][index_of(kind)]["value"] = bad;
      const std::string what = error_text(doc.dump(), origin);
      CHECK(contains(what, "out of range"));
      CHECK(contains(what, "describe_local_gpu::refresh"));
      doc["results"][index_of(kind)]["value"] = range.max;
      CHECK_NOTHROW(parse_ceilings(doc.dump(), origin));
    }
  }
  CHECK(ceiling_value_range(ceiling_kind::host_floor).min == min_host_call_s);
  CHECK(ceiling_value_range(ceiling_kind::dram_bandwidth).max == max_bandwidth_bytes_per_s);
  CHECK(ceiling_value_range(ceiling_kind::flop_rate).max == max_peak_flop_per_s);
  // 1e999 and NaN are no numbers (nlohmann-json refuses both).
  std::string text = document_with("value", 0);
  const std::string zero = "\"value\":0";
  REQUIRE(text.find(zero) != std::string::npos);
  CHECK(contains(
      error_text(std::string(text).replace(text.find(zero), zero.size(), "\"value\": 1e999"),
                 origin),
      "damaged"));
  CHECK(contains(
      error_text(std::string(text).replace(text.find(zero), zero.size(), "\"value\": NaN"), origin),
      "damaged"));
  text = document_with("spread", 0);
  const std::string spread = "\"spread\":0";
  CHECK(contains(
      error_text(std::string(text).replace(text.find(spread), spread.size(), "\"spread\": 1e999"),
                 origin),
      "damaged"));
}

TEST_CASE("cache_directory: ROOFLINE_CACHE_DIR, else XDG_CACHE_HOME/roofline-advise, else "
          "HOME/.cache, else none") {
  SUBCASE("ROOFLINE_CACHE_DIR wins") {
    const scoped_env a("ROOFLINE_CACHE_DIR", "/srv/roofline-cache");
    const scoped_env b("XDG_CACHE_HOME", "/xdg");
    const scoped_env c("HOME", "/home/u");
    CHECK(cache_directory() == fs::path("/srv/roofline-cache"));
    CHECK(ceilings_cache_file("GPU-1234") ==
          fs::path("/srv/roofline-cache/ceilings-GPU-1234.json"));
  }
  SUBCASE("XDG_CACHE_HOME next (an empty ROOFLINE_CACHE_DIR counts as unset)") {
    const scoped_env a("ROOFLINE_CACHE_DIR", "");
    const scoped_env b("XDG_CACHE_HOME", "/xdg");
    const scoped_env c("HOME", "/home/u");
    CHECK(cache_directory() == fs::path("/xdg/roofline-advise"));
    CHECK(ceilings_cache_file("GPU-1") == fs::path("/xdg/roofline-advise/ceilings-GPU-1.json"));
  }
  SUBCASE("HOME/.cache/roofline-advise last") {
    const scoped_env a("ROOFLINE_CACHE_DIR", nullptr);
    const scoped_env b("XDG_CACHE_HOME", "");
    const scoped_env c("HOME", "/home/u");
    CHECK(cache_directory() == fs::path("/home/u/.cache/roofline-advise"));
  }
  SUBCASE("a relative XDG_CACHE_HOME is ignored (XDG's rule)") {
    const scoped_env a("ROOFLINE_CACHE_DIR", nullptr);
    const scoped_env b("XDG_CACHE_HOME", "relative/cache");
    const scoped_env c("HOME", "/home/u");
    CHECK(cache_directory() == fs::path("/home/u/.cache/roofline-advise"));
  }
  // Never a shared folder such as /tmp, which another user could make and fill first.
  for (const char *home : {static_cast<const char *>(nullptr), "", "relative-home"}) {
    CAPTURE(home ? home : "(unset)");
    const scoped_env a("ROOFLINE_CACHE_DIR", nullptr);
    const scoped_env b("XDG_CACHE_HOME", nullptr);
    const scoped_env c("HOME", home);
    CHECK_FALSE(cache_directory().has_value());
    CHECK_FALSE(ceilings_cache_file("GPU-1").has_value());
    CHECK_FALSE(load_cached_ceilings("GPU-1").has_value());
    CHECK_FALSE(readable_cache_directory().has_value());
    try {
      (void)save_ceilings(h200_ceilings());
      FAIL("saved with no cache directory");
    } catch (const error &e) {
      CHECK(contains(e.what(), "no cache directory"));
    }
  }
}

TEST_CASE("write_cache_file makes the cache directory, and its missing parents, private (0700)") {
  const temp_dir dir("mode");
  const fs::path cache = dir.path / "xdg" / "roofline-advise";
  const scoped_env a("ROOFLINE_CACHE_DIR", nullptr);
  const scoped_env b("XDG_CACHE_HOME", (dir.path / "xdg").string().c_str());
  REQUIRE(cache_directory() == cache);
  const fs::path file = save_ceilings(h200_ceilings());
  CHECK(file == cache / ("ceilings-" + h200_ceilings().uuid + ".json"));
  for (const fs::path &made : {dir.path, dir.path / "xdg", cache}) {
    struct stat st {};
    REQUIRE(::stat(made.c_str(), &st) == 0);
    CAPTURE(made);
    CHECK((st.st_mode & 0777) == 0700);
  }
  REQUIRE(load_cached_ceilings(h200_ceilings().uuid).has_value());
}

TEST_CASE("a cache directory others may write to, or another user owns, is not read") {
  const temp_dir dir("shared");
  fs::create_directories(dir.path);
  const scoped_env env("ROOFLINE_CACHE_DIR", dir.path.string().c_str());
  (void)save_ceilings(h200_ceilings());
  fs::permissions(dir.path, fs::perms::all); // 0777, as a folder in /tmp would be
  CHECK_THROWS_WITH_AS(readable_cache_directory(), doctest::Contains("others may write"),
                       input_error);
  CHECK_THROWS_WITH_AS(load_cached_ceilings(h200_ceilings().uuid),
                       doctest::Contains("cache directory not used"), input_error);
  CHECK_THROWS_AS(save_ceilings(h200_ceilings()), error);
  if (::geteuid() == 0) { // only root can give a folder away
    fs::permissions(dir.path, fs::perms::owner_all, fs::perm_options::replace);
    REQUIRE(::chown(dir.path.c_str(), 65534, 65534) == 0);
    CHECK_THROWS_WITH_AS(readable_cache_directory(), doctest::Contains("owned by another user"),
                         input_error);
  }
}

TEST_CASE("read_cache_file reads regular files only, of at most max_cache_file_bytes") {
  const temp_dir dir("entries");
  fs::create_directories(dir.path);
  const scoped_env env("ROOFLINE_CACHE_DIR", dir.path.string().c_str());
  const fs::path file = dir.path / "ceilings-GPU-x.json";
  const auto refusal = [&] {
    try {
      (void)read_cache_file(file);
    } catch (const input_error &e) {
      CHECK(e.where().file == file.string());
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  SUBCASE("absent: nullopt; a regular file: its text") {
    CHECK_FALSE(read_cache_file(file).has_value());
    std::ofstream(file) << "{}";
    CHECK(read_cache_file(file) == std::optional<std::string>("{}"));
  }
  SUBCASE("a FIFO is never opened (opening one blocks until a writer comes)") {
    REQUIRE(::mkfifo(file.c_str(), 0600) == 0);
    CHECK(contains(refusal(), "a FIFO"));
    CHECK_THROWS_AS(load_cached_ceilings("GPU-x"), input_error);
  }
  SUBCASE("a symbolic link is not followed: to /dev/zero it would read for ever") {
    fs::create_symlink("/dev/zero", file);
    CHECK(contains(refusal(), "a symbolic link"));
    fs::remove(file);
    const fs::path real = dir.path / "elsewhere.json";
    std::ofstream(real) << to_json_text(h200_ceilings());
    fs::create_symlink(real, file);
    CHECK(contains(refusal(), "a symbolic link"));
  }
  SUBCASE("a directory") {
    fs::create_directory(file);
    CHECK(contains(refusal(), "a directory"));
  }
  SUBCASE("larger than the bound") {
    std::ofstream(file) << std::string(max_cache_file_bytes, ' ') << "{}";
    const std::string what = refusal();
    CHECK(contains(what, std::to_string(max_cache_file_bytes + 2) + " bytes"));
    CHECK(contains(what, "at most " + std::to_string(max_cache_file_bytes) + " bytes"));
    fs::resize_file(file, max_cache_file_bytes);
    CHECK(read_cache_file(file).has_value()); // the bound itself is read
  }
}

TEST_CASE("save_ceilings / load_cached_ceilings round trip under ROOFLINE_CACHE_DIR") {
  const temp_dir dir("save");
  const fs::path cache = dir.path / "nested" / "cache"; // does not exist yet: save creates it
  const scoped_env env("ROOFLINE_CACHE_DIR", cache.string().c_str());

  const measured_ceilings c = h200_ceilings();
  CHECK_FALSE(load_cached_ceilings(c.uuid).has_value()); // nothing saved yet
  save_ceilings(c);
  const fs::path file = cache / ("ceilings-" + c.uuid + ".json");
  CHECK(ceilings_cache_file(c.uuid) == file);
  CHECK(save_ceilings(c) == file);
  CHECK(fs::is_regular_file(file));
  CHECK_FALSE(fs::exists(file.string() + ".tmp")); // renamed into place
  const auto loaded = load_cached_ceilings(c.uuid);
  REQUIRE(loaded.has_value());
  check_same(*loaded, c);

  // Saving again replaces the file.
  measured_ceilings again = c;
  again.measured_at = "2025-02-03T04:05:06Z";
  again.results.resize(2);
  save_ceilings(again);
  const auto reloaded = load_cached_ceilings(c.uuid);
  REQUIRE(reloaded.has_value());
  check_same(*reloaded, again);

  // Another GPU's UUID: nothing cached.
  CHECK_FALSE(load_cached_ceilings("GPU-00000000-0000-0000-0000-000000000000").has_value());
}

TEST_CASE("load_cached_ceilings of a damaged cache file throws input_error naming the file") {
  const temp_dir dir("damaged");
  fs::create_directories(dir.path);
  const scoped_env env("ROOFLINE_CACHE_DIR", dir.path.string().c_str());
  const fs::path file = *ceilings_cache_file("GPU-bad");
  std::ofstream(file) << "{ not json";
  try {
    (void)load_cached_ceilings("GPU-bad");
    FAIL("no exception");
  } catch (const input_error &e) {
    CHECK(e.where().file == file.string());
    CHECK(contains(e.what(), file.string()));
  }
}

TEST_CASE("save_ceilings where the cache directory cannot be made throws roofline::error") {
  const temp_dir dir("unwritable");
  fs::create_directories(dir.path);
  const fs::path blocker = dir.path / "a-file";
  std::ofstream(blocker) << "x";
  // The cache "directory" is below a regular file: neither directory nor file can be created.
  const scoped_env env("ROOFLINE_CACHE_DIR", (blocker / "cache").string().c_str());
  CHECK_THROWS_AS(save_ceilings(h200_ceilings()), error);
  CHECK(fs::is_regular_file(blocker));
}

TEST_CASE("what NVML read survives the cache, and a version 2 document (before it) is read with "
          "none") {
  measured_ceilings c;
  c.uuid = "GPU-1";
  c.device_name = "NVIDIA H200";
  c.measured_at = "2026-11-29T01:00:00Z";
  c.results.push_back(
      {"idle power", ceiling_kind::idle_power, std::nullopt, 128.5, 0.01, "NVML", ""});
  c.results.push_back(
      {"bf16 energy", ceiling_kind::energy_per_flop, precision::bf16, 0.83e-12, 0.02, "NVML", ""});
  c.results.push_back(
      {"dram energy", ceiling_kind::energy_per_byte, std::nullopt, 122e-12, 0.02, "NVML", ""});
  c.results.push_back({"bf16 sustained", ceiling_kind::sustained_flop_rate, precision::bf16, 650e12,
                       0.01, "NVML", ""});
  const measured_ceilings back = parse_ceilings(to_json_text(c), "cache.json");
  CHECK(back.idle_power_w() == 128.5);
  CHECK(back.energy_per_flop_j(precision::bf16) == 0.83e-12);
  CHECK_FALSE(back.energy_per_flop_j(precision::fp16));
  CHECK(back.energy_per_dram_byte_j() == 122e-12);
  json old = json::parse(to_json_text(c));
  old["format_version"] = 2;
  old["results"] = json::array();
  const measured_ceilings before = parse_ceilings(old.dump(), "old.json");
  CHECK_FALSE(before.idle_power_w());
  // A power reading no board draws is damage.
  c.results.front().value = 1e6;
  CHECK(contains(error_text(to_json_text(c), "bad.json"), "idle_power is from 1 to 10000 W"));
}

TEST_CASE("what NVML read is the local board's: it replaces the architecture's power parameters") {
  const gpu_spec &h200 = *spec_catalog::builtin().find("h200");
  measured_ceilings c;
  c.results.push_back({"idle power", ceiling_kind::idle_power, std::nullopt, 140, 0, "NVML", ""});
  c.results.push_back(
      {"bf16 energy", ceiling_kind::energy_per_flop, precision::bf16, 0.9e-12, 0, "NVML", ""});
  c.results.push_back(
      {"dram energy", ceiling_kind::energy_per_byte, std::nullopt, 110e-12, 0, "NVML", ""});
  const gpu_spec local = apply_ceilings(h200, c);
  CHECK(local.parameters[parameter::idle_power_share] == doctest::Approx(140.0 / 700));
  CHECK(local.parameters[parameter_at(parameter::energy_per_flop_pj, precision::bf16)] ==
        doctest::Approx(0.9));
  // Hopper's DRAM energy is fitted to PyTorch's kernels: our copy kernel's does not replace it.
  CHECK(local.parameters[parameter::dram_energy_per_byte_pj] ==
        h200.parameters[parameter::dram_energy_per_byte_pj]);
  const gpu_spec l40s = apply_ceilings(*spec_catalog::builtin().find("l40s"), c);
  CHECK(l40s.parameters[parameter::dram_energy_per_byte_pj] == doctest::Approx(110));
  // What NVML did not read keeps the architecture's fit.
  CHECK(local.parameters[parameter_at(parameter::energy_per_flop_pj, precision::fp16)] ==
        h200.parameters[parameter_at(parameter::energy_per_flop_pj, precision::fp16)]);
  CHECK(contains(local.origin, "power read through NVML"));
}
