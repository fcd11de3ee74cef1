// SPDX-License-Identifier: Apache-2.0
// device_report: the "local" spec analyses use (datasheet, else theory, with measured ceilings on
// top) and write_device_report in every format: JSON fields, the table's wording, CSV cells.
#include "roofline/model/ceilings.hpp"
#include "roofline/model/device_description.hpp"
#include "roofline/model/device_report.hpp"
#include "roofline/model/spec_catalog.hpp"
#include "roofline/output/writers.hpp"

#include "test_support.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

using namespace roofline;
using namespace roofline::test;
using nlohmann::json;

namespace {

/// The report `roofline-advise device` builds on an H200: datasheet matched, optionally measured.
device_report h200_report(bool with_datasheet, bool with_ceilings) {
  device_report r;
  r.device = h200_description();
  r.theoretical = theoretical_spec(r.device);
  if (with_datasheet) {
    const gpu_spec *sheet = matching_spec(spec_catalog::builtin(), r.device);
    REQUIRE(sheet != nullptr);
    r.datasheet = *sheet;
  }
  if (with_ceilings) {
    r.ceilings = h200_ceilings();
    r.ceilings_source = "cache /tmp/ceilings-GPU-5a1c.json";
  }
  return r;
}

std::string written(const device_report &r, output_format format) {
  std::ostringstream out;
  write_device_report(r, format, out);
  return out.str();
}

const json &roof(const json &doc, const std::string &name) {
  for (const json &row : doc.at("roofs"))
    if (row.at("roof") == name)
      return row;
  FAIL("no roof " << name);
  throw; // unreachable
}

} // namespace

TEST_CASE(
    "local_spec: the matched datasheet spec, renamed `local`, shown under the device's name") {
  const device_report r = h200_report(true, false);
  const gpu_spec spec = local_spec(r);
  CHECK(spec.name == "local");
  CHECK(spec.aliases.empty()); // "h200" would make it look like the catalog's
  CHECK(spec.display_name == "NVIDIA H200");
  CHECK(spec.architecture == "hopper");
  // The datasheet's roofs, not the theoretical ones: 4.8 TB/s (theory 4.8143), fp16 989.4 (theory
  // 1070.5)
  CHECK(spec.dram_bytes_per_s == 4.8e12);
  CHECK(spec.peaks.at(precision::fp16).dense_flop_per_s == doctest::Approx(989.4e12));
  REQUIRE(spec.peaks.at(precision::fp16).sparse_flop_per_s);
  CHECK(*spec.peaks.at(precision::fp16).sparse_flop_per_s == doctest::Approx(1978.9e12));
  CHECK(spec.memory_type == "HBM3e");
  CHECK(spec.origin == r.datasheet->origin + " (matched by device query)");
}

TEST_CASE("local_spec without a datasheet: the theoretical spec") {
  const device_report r = h200_report(false, false);
  const gpu_spec spec = local_spec(r);
  CHECK(spec.name == "local");
  CHECK(spec.display_name == "NVIDIA H200");
  // 2 · 3.201e9 · 752 = 4.814304e12 B/s; fp16 132 · 1.98e9 · 4096 = 1.07053056e15
  CHECK(spec.dram_bytes_per_s == doctest::Approx(4.814304e12).epsilon(1e-12));
  CHECK(spec.peaks.at(precision::fp16).dense_flop_per_s ==
        doctest::Approx(1.07053056e15).epsilon(1e-12));
  CHECK(spec.origin == "device query");
}

TEST_CASE("local_spec with measured ceilings: the measured values win over datasheet and theory") {
  SUBCASE("with a datasheet") {
    const device_report r = h200_report(true, true);
    const gpu_spec spec = local_spec(r);
    CHECK(spec.name == "local");
    CHECK(spec.display_name == "NVIDIA H200");
    CHECK(spec.dram_bytes_per_s == 4.2e12);
    CHECK(spec.peaks.at(precision::fp16).dense_flop_per_s == 7.0e14);
    // sparse scales with dense: 1978.9e12 · 7.0e14 / 989.4e12 = 1.40007075e15
    CHECK(*spec.peaks.at(precision::fp16).sparse_flop_per_s ==
          doctest::Approx(1.40007075e15).epsilon(1e-9));
    CHECK(spec.peaks.at(precision::fp32).dense_flop_per_s == 5.0e13);
    // fp8 failed, bf16 never measured: the datasheet's
    CHECK(spec.peaks.at(precision::fp8).dense_flop_per_s == doctest::Approx(1978.9e12));
    CHECK(spec.peaks.at(precision::bf16).dense_flop_per_s == doctest::Approx(989.4e12));
    CHECK(contains(spec.origin, "(matched by device query)"));
    CHECK(contains(spec.origin, "ceilings measured 2025-01-02T03:04:05Z"));
  }
  SUBCASE("without a datasheet") {
    const device_report r = h200_report(false, true);
    const gpu_spec spec = local_spec(r);
    CHECK(spec.dram_bytes_per_s == 4.2e12);
    CHECK(spec.peaks.at(precision::fp16).dense_flop_per_s == 7.0e14);
    CHECK(spec.peaks.at(precision::bf16).dense_flop_per_s ==
          doctest::Approx(1.07053056e15).epsilon(1e-12));
    CHECK(spec.origin == "device query + ceilings measured 2025-01-02T03:04:05Z");
  }
}

TEST_CASE("device report JSON: device, datasheet, roofs, measurements and local_spec") {
  const device_report r = h200_report(true, true);
  const json doc = json::parse(written(r, output_format::json));
  CHECK(doc.at("schema_version") == json_schema_version);

  const json &device = doc.at("device");
  CHECK(device.at("name") == "NVIDIA H200");
  CHECK(device.at("uuid") == "GPU-5a1c0c2e-0f3d-4b7e-9a61-1d2c3b4a5f60");
  CHECK(device.at("compute_capability") == "9.0");
  CHECK(device.at("sm_count") == 132);
  CHECK(device.at("sm_clock_hz") == 1980e6);
  CHECK(device.at("memory_clock_hz") == 3201e6);
  CHECK(device.at("memory_bus_width_bits") == 6016);
  CHECK(device.at("l2_bytes") == 62914560);
  CHECK(device.at("memory_bytes") == 150.1e9);
  CHECK(device.at("driver_version") == "560.35.03");
  CHECK(device.at("runtime_version") == "12.6");
  CHECK(doc.at("datasheet") == "h200-sxm");
  CHECK(doc.at("ceilings_source") == "cache /tmp/ceilings-GPU-5a1c.json");

  // roofs: DRAM, then every precision any of the three sources has, in all_precisions order.
  const json &roofs = doc.at("roofs");
  REQUIRE(roofs.is_array());
  REQUIRE(roofs.size() == 8);
  const std::vector<std::string> order{"DRAM bandwidth", "fp64", "fp32", "tf32",
                                       "fp16",           "bf16", "fp8",  "int8"};
  for (std::size_t i = 0; i < order.size(); ++i) {
    const json &row = roofs[i];
    CAPTURE(order[i]);
    CHECK(row.at("roof") == order[i]);
    CHECK(row.at("unit") == (i == 0 ? "bytes_per_s" : "flop_per_s"));
    for (const char *key : {"theoretical", "datasheet", "measured", "ridge_intensity"})
      CHECK(row.contains(key));
    CHECK(row.at("theoretical").is_number());
    CHECK(row.at("datasheet").is_number());
  }
  const json &dram = roofs[0];
  CHECK(dram.at("theoretical").get<double>() == doctest::Approx(4.814304e12).epsilon(1e-12));
  CHECK(dram.at("datasheet") == 4.8e12);
  CHECK(dram.at("measured") == 4.2e12);
  CHECK(dram.at("ridge_intensity").is_null());

  const json &fp16 = roof(doc, "fp16");
  CHECK(fp16.at("theoretical").get<double>() == doctest::Approx(1.07053056e15).epsilon(1e-12));
  CHECK(fp16.at("datasheet").get<double>() == doctest::Approx(989.4e12));
  CHECK(fp16.at("measured") == 7.0e14);
  // ridge: measured peak / measured DRAM = 7.0e14 / 4.2e12 = 166.67 FLOP/B
  CHECK(fp16.at("ridge_intensity").get<double>() == doctest::Approx(166.6667).epsilon(1e-6));
  // fp8 only failed: measured null; ridge from the datasheet over measured DRAM: 1978.9e12 / 4.2e12
  // = 471.17
  const json &fp8 = roof(doc, "fp8");
  CHECK(fp8.at("measured").is_null());
  CHECK(fp8.at("ridge_intensity").get<double>() == doctest::Approx(471.1667).epsilon(1e-6));

  // measurements: every result, failed ones included, in order.
  const json &measurements = doc.at("measurements");
  REQUIRE(measurements.size() == 9);
  CHECK(measurements[1].at("name") == "dram copy");
  CHECK(measurements[1].at("value") == 4.2e12);
  CHECK(measurements[1].at("spread") == 0.012);
  CHECK(measurements[1].at("precision").is_null());
  CHECK(measurements[1].at("failure") == "");
  CHECK(measurements[3].at("precision") == "fp16");
  CHECK(measurements[5].at("failure") == "CUBLAS_STATUS_NOT_SUPPORTED");
  CHECK(measurements[7].at("failure") == "out of memory");
  CHECK(measurements[8].at("value") == 2.5e-6);

  // local_spec: the roofline analyses use, in the same layout as a catalog entry.
  const json &local = doc.at("local_spec");
  CHECK(local.at("name") == "local");
  CHECK(local.at("display_name") == "NVIDIA H200");
  CHECK(local.at("dram_bytes_per_s") == 4.2e12);
  CHECK(local.at("peaks").at("fp16").at("dense_flop_per_s") == 7.0e14);
  CHECK(local.at("peaks").at("fp16").at("dense_ridge_intensity").get<double>() ==
        doctest::Approx(166.6667).epsilon(1e-6));
  CHECK(local.at("aliases").is_array());
  CHECK(local.at("aliases").empty());
}

TEST_CASE(
    "device report JSON without datasheet or ceilings: nulls and empty arrays, not missing keys") {
  const device_report r = h200_report(false, false);
  const json doc = json::parse(written(r, output_format::json));
  CHECK(doc.at("datasheet").is_null());
  CHECK(doc.at("measurements").is_array());
  CHECK(doc.at("measurements").empty());
  CHECK(doc.at("ceilings_source") == "");
  for (const json &row : doc.at("roofs")) {
    CAPTURE(row.at("roof").get<std::string>());
    CHECK(row.at("datasheet").is_null());
    CHECK(row.at("measured").is_null());
    CHECK(row.at("theoretical").is_number());
  }
  // Without measurements the ridge is theory over theory: fp16 1.07053056e15 / 4.814304e12 =
  // 222.3646
  CHECK(roof(doc, "fp16").at("ridge_intensity").get<double>() ==
        doctest::Approx(222.3646).epsilon(1e-6));
  CHECK(doc.at("local_spec").at("origin") == "device query");
}

TEST_CASE("device report JSON: a precision only the measurement has still gets a row") {
  // Theory (Volta) has no bf16; a measured bf16 rate (say, emulated) is still reported.
  device_report r;
  r.device = h200_description();
  r.device.name = "Tesla V100-SXM2-32GB";
  r.device.cc_major = 7;
  r.device.sm_count = 80;
  r.device.sm_clock_hz = 1530e6;
  r.device.memory_clock_hz = 877e6;
  r.device.memory_bus_width_bits = 4096;
  r.theoretical = theoretical_spec(r.device);
  measured_ceilings c;
  c.measured_at = "now";
  c.results.push_back(result("bf16 emulated", ceiling_kind::flop_rate, precision::bf16, 2e13));
  r.ceilings = c;
  const json doc = json::parse(written(r, output_format::json));
  const json &bf16 = roof(doc, "bf16");
  CHECK(bf16.at("theoretical").is_null());
  CHECK(bf16.at("datasheet").is_null());
  CHECK(bf16.at("measured") == 2e13);
  // The ridge column is the one analyses use (local_spec), and they cannot analyse bf16 on a GPU
  // whose spec has no bf16 rate: no ridge.
  CHECK(bf16.at("ridge_intensity").is_null());
  // Volta has no fp8/int8/tf32 at all: no rows for them (DRAM, fp64, fp32, fp16, bf16).
  CHECK(doc.at("roofs").size() == 5);
}

TEST_CASE("device report table: the device line, every roof, and how to measure when nothing is "
          "measured") {
  const device_report r = h200_report(true, false);
  const std::string text = written(r, output_format::table);
  CHECK(contains(text, "NVIDIA H200"));
  CHECK(contains(text, "GPU-5a1c0c2e-0f3d-4b7e-9a61-1d2c3b4a5f60"));
  CHECK(contains(text, "compute capability 9.0"));
  CHECK(contains(text, "132 SMs at up to 1980 MHz"));
  CHECK(contains(text, "150.1 GB"));
  CHECK(contains(text, "L2 60.0 MiB")); // 62914560 / 1048576 = 60
  // 3201 MHz × 6016-bit × 2 / 8 = 4.814 TB/s
  CHECK(contains(text, "3201 MHz × 6016-bit bus × 2 (DDR) → 4.814 TB/s"));
  CHECK(contains(text, "DRAM bandwidth"));
  CHECK(contains(text, "datasheet h200-sxm"));
  // theory vs sheet: DRAM 4.814304 / 4.8 − 1 = +0.3%; fp16 1070.53 / 989.4 − 1 = +8.2%
  CHECK(contains(text, "+0.3%"));
  CHECK(contains(text, "+8.2%"));
  CHECK(contains(text, "1071")); // fp16 theory in TFLOP/s, 4 significant digits
  CHECK(contains(text, "989.4"));
  for (const char *p : {"fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "int8"})
    CHECK(contains(text, p));
  CHECK(contains(text, "no measured ceilings yet"));
  CHECK(contains(text, "describe_local_gpu::measure"));
  CHECK_FALSE(contains(text, "\033[")); // no colour unless asked
}

TEST_CASE("device report table with ceilings: the measurements and where they come from") {
  const device_report r = h200_report(true, true);
  const std::string text = written(r, output_format::table);
  CHECK_FALSE(contains(text, "device --measure"));
  CHECK(contains(text,
                 "ceilings: cache /tmp/ceilings-GPU-5a1c.json (measured 2025-01-02T03:04:05Z)"));
  CHECK(contains(text, "fp16 cuBLASLt 8192³"));
  CHECK(contains(text, "launch latency"));
  CHECK(contains(text, "2.500"));         // 2.5e-6 s shown in µs
  CHECK(contains(text, "failed"));        // the fp8 run
  CHECK(contains(text, "out of memory")); // and why
  CHECK(contains(text, "1.20%"));         // spread 0.012, 3 significant digits
  // measured/theory for DRAM: 4.2 / 4.814304 = 87.2%
  CHECK(contains(text, "87.2%"));
}

TEST_CASE("device report table without a datasheet says `datasheet` and shows dashes") {
  const device_report r = h200_report(false, false);
  const std::string text = written(r, output_format::table);
  CHECK(contains(text, "datasheet"));
  CHECK_FALSE(contains(text, "datasheet h200-sxm"));
  CHECK(contains(text, "—"));
}

TEST_CASE("device report markdown: header lines, a table, the footer") {
  const std::string text = written(h200_report(true, true), output_format::markdown);
  CHECK(contains(text, "| roof |"));
  CHECK(contains(text, "| DRAM bandwidth |"));
  CHECK(contains(text, "| measurement |"));
  CHECK(contains(text, "ceilings: cache"));
}

TEST_CASE(
    "device report CSV: a header of keys, one row per roof, numbers or empty in numeric columns") {
  for (const bool measured : {false, true}) {
    CAPTURE(measured);
    const std::string text = written(h200_report(true, measured), output_format::csv);
    CHECK_FALSE(contains(text, "—"));
    const std::vector<std::string> lines = lines_of(text);
    REQUIRE(lines.size() == 9); // header + DRAM + 7 precisions
    CHECK(lines[0] ==
          "roof,unit,theoretical,datasheet,theory_vs_datasheet,measured,measured_vs_theoretical,"
          "ridge_intensity");
    for (std::size_t i = 1; i < lines.size(); ++i) {
      const std::vector<std::string> fields = fields_of(lines[i]);
      CAPTURE(lines[i]);
      REQUIRE(fields.size() == 8);
      for (std::size_t f = 2; f < fields.size(); ++f) {
        CAPTURE(f);
        CHECK((fields[f].empty() || is_number(fields[f])));
      }
      CHECK(is_number(fields[2])); // theory always known here
      CHECK(is_number(fields[3])); // datasheet matched
    }
    // Full precision, SI units: the DRAM theory is 4814304000000 B/s, fp16's 1070530560000000
    // FLOP/s
    const std::vector<std::string> dram = fields_of(lines[1]);
    CHECK(dram[0] == "DRAM bandwidth");
    CHECK(std::strtod(dram[2].c_str(), nullptr) == doctest::Approx(4.814304e12).epsilon(1e-12));
    CHECK(dram[7].empty()); // no ridge for a bandwidth
    const std::vector<std::string> fp16 = fields_of(lines[5]);
    CHECK(fp16[0] == "fp16");
    CHECK(std::strtod(fp16[2].c_str(), nullptr) == doctest::Approx(1.07053056e15).epsilon(1e-12));
    if (measured) {
      CHECK(std::strtod(fp16[5].c_str(), nullptr) == 7.0e14);
      // 7.0e14 / 1.07053056e15 = 0.653881
      CHECK(std::strtod(fp16[6].c_str(), nullptr) == doctest::Approx(0.653881).epsilon(1e-5));
    } else {
      CHECK(fp16[5].empty());
      CHECK(fp16[6].empty());
    }
  }
}

// Before the fix (src/core/model/device_report.cpp, roof_table(), the `{row.unit}` cell): in CSV the
// `unit` column reads "TB/s" / "TFLOP/s" (the table's display units) while the value columns carry
// raw SI values (optional_raw → B/s and FLOP/s), so a CSV reader who trusts the unit column reads
// the H200's 4.8143 TB/s as 4,814,304,000,000 TB/s. The JSON says "bytes_per_s" / "flop_per_s"; the
// CSV unit cell now carries that raw text too.
TEST_CASE("device report CSV: the unit column describes the numbers in the value columns") {
  const std::string text = written(h200_report(true, false), output_format::csv);
  const std::vector<std::string> lines = lines_of(text);
  REQUIRE(lines.size() >= 2);
  const auto si_scale = [](const std::string &unit) {
    if (unit == "bytes_per_s" || unit == "flop_per_s" || unit == "B/s" || unit == "FLOP/s")
      return 1.0;
    if (unit == "TB/s" || unit == "TFLOP/s")
      return 1e12;
    FAIL("unknown unit " << unit);
    return 0.0;
  };
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const std::vector<std::string> fields = fields_of(lines[i]);
    CAPTURE(lines[i]);
    REQUIRE(fields.size() >= 3);
    const double value = std::strtod(fields[2].c_str(), nullptr) * si_scale(fields[1]);
    // The theoretical figures in SI: 4.814304e12 B/s for DRAM, ≤ 2.2e15 FLOP/s for any precision.
    if (fields[0] == "DRAM bandwidth")
      CHECK(value == doctest::Approx(4.814304e12).epsilon(1e-9));
    else
      CHECK(value < 1e16);
  }
}

// Before the fix (src/core/model/device_report.cpp, roof_rows(), the `bandwidth` line): a row's ridge
// divides the measured, else datasheet, else theoretical peak by the measured, else *theoretical*
// DRAM bandwidth, skipping the datasheet's. local_spec() — documented as "the roofline the analyses
// use" — takes the datasheet's bandwidth, so without measured DRAM the `device` report shows a
// ridge the analyses never use: H200 fp16 989.4e12 / 4.814304e12 = 205.51 FLOP/B in the device
// report, 989.4e12 / 4.8e12 = 206.13 FLOP/B in local_spec (and in every analysis on this GPU). The
// bandwidth now follows the same preference as the peak: measured, else datasheet, else
// theoretical.
TEST_CASE("device report ridge_intensity is the ridge of local_spec, the roofline analyses use") {
  for (const bool datasheet : {false, true})
    for (const bool measured : {false, true}) {
      CAPTURE(datasheet);
      CAPTURE(measured);
      const device_report r = h200_report(datasheet, measured);
      const gpu_spec local = local_spec(r);
      const json doc = json::parse(written(r, output_format::json));
      for (precision p : all_precisions) {
        if (!local.supports(p)) // an H200 has no fp4 rate: no roof
          continue;
        const std::string name(to_string(p));
        CAPTURE(name);
        const json &row = roof(doc, name);
        CHECK(row.at("ridge_intensity").get<double>() ==
              doctest::Approx(local.ridge_intensity(p)).epsilon(1e-12));
      }
    }
}

TEST_CASE(
    "local_gpu_of: a cache file left out says so in the selection, and the local GPU stands") {
  // The local calibration is looked up: no cache for it here.
  const scoped_env cache("ROOFLINE_CACHE_DIR", "/nonexistent/roofline-device-report-test");
  device_report r = h200_report(true, false);
  r.ceilings_source = "cache not used: /c/ceilings-GPU-x.json: cache file not used: a FIFO";
  r.all_reduce_source = "cache not used: /c/all-reduce-x.json: cache file not used: 2000000 bytes";
  const local_gpu local = local_gpu_of(r);
  CHECK(contains(local.selection, "ceilings cache not used: /c/ceilings-GPU-x.json"));
  CHECK(contains(local.selection, "a FIFO"));
  CHECK(contains(local.selection, "all-reduce table cache not used"));
  CHECK_FALSE(local.host.measured);
  CHECK(contains(written(r, output_format::table), "a FIFO")); // `device` says it too
}
