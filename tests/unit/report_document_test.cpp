// SPDX-License-Identifier: Apache-2.0
// write_report in every format: JSON that parses and carries numbers as numbers, CSV whose header
// is the JSON field names, Markdown and aligned tables; format names and file extensions.
#include "roofline/analysis/advisor.hpp"
#include "roofline/analysis/report.hpp"
#include "roofline/input/network.hpp"
#include "roofline/model/host_floor.hpp"
#include "roofline/model/perf_model.hpp"
#include "roofline/model/spec_catalog.hpp"
#include "roofline/output/writers.hpp"

#include "test_support.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

using namespace roofline;
using namespace roofline::test;
using nlohmann::json;

namespace {

/// fc (a GEMM, compute-bound) and act (a ReLU, memory-bound, 3 runs) on a V100.
report small_report() {
  const network net = parse_network("name: small\nbatch: 512\nlayers:\n"
                                    "  - {name: fc, type: linear, in: 1024, out: 4096}\n"
                                    "  - repeat: 3\n"
                                    "    name: blk\n"
                                    "    layers:\n"
                                    "      - {name: act, type: relu, features: 4096}\n",
                                    "small.yaml");
  const gpu_spec *v100 = spec_catalog::builtin().find("v100");
  REQUIRE(v100 != nullptr);
  return assemble_report(analyze(net, perf_model(*v100, model_options{false, true}),
                                 "--gpu v100")); // the roofline: hand values
}

std::string written(const report &r, output_format format, write_options options = {}) {
  std::ostringstream out;
  write_report(r, format, out, options);
  return out.str();
}

} // namespace

TEST_CASE(
    "JSON report parses and has schema_version, tool, network, device, model, ops and totals") {
  const report r = small_report();
  const json doc = json::parse(written(r, output_format::json));
  CHECK(doc.at("schema_version") == json_schema_version);
  CHECK(doc.at("schema_version").is_number_integer());
  CHECK(doc.at("network").at("name") == "small");
  CHECK(doc.at("network").at("origin") == "small.yaml");
  CHECK(doc.at("network").at("batch") == 512);
  CHECK(doc.at("network").at("precision") == "fp16");
  CHECK(doc.at("network").at("mode") == "inference");
  CHECK(doc.at("device").at("name") == "v100-sxm2");
  CHECK(doc.at("device").at("selection") == "--gpu v100");
  CHECK(doc.at("device").at("dram_bytes_per_s").is_number());
  CHECK(doc.at("device").at("peaks").at("fp16").at("dense_flop_per_s") == 125e12);
  CHECK(doc.at("ops").is_array());
  CHECK(doc.at("ops").size() == 2);

  const json &totals = doc.at("totals");
  for (const char *key :
       {"predicted_time_us", "flops", "bytes", "memory_bound_share", "op_count", "gemm_count"}) {
    CAPTURE(key);
    CHECK(totals.at(key).is_number());
  }
  // 34.3597 µs + 3 · 9.3207 µs = 62.3218 µs
  CHECK(totals.at("predicted_time_us").get<double>() == doctest::Approx(62.321765).epsilon(1e-6));
  CHECK(totals.at("op_count") == 2);
  CHECK(totals.at("gemm_count") == 1);
}

TEST_CASE("every JSON op has the documented fields, numbers as numbers") {
  const report r = small_report();
  const json doc = json::parse(written(r, output_format::json));
  REQUIRE(doc.at("ops").size() == r.analysis.ops.size());
  for (std::size_t i = 0; i < r.analysis.ops.size(); ++i) {
    const json &o = doc.at("ops")[i];
    const analysed_op &expected = r.analysis.ops[i];
    CAPTURE(expected.op.layer);
    for (const char *key : {"layer", "pass", "kind", "precision", "bound"}) {
      CAPTURE(key);
      CHECK(o.at(key).is_string());
    }
    for (const char *key : {"flops", "bytes", "count"}) {
      CAPTURE(key);
      CHECK(o.at(key).is_number_integer());
    }
    for (const char *key :
         {"arithmetic_intensity", "ridge_intensity", "predicted_time_us", "total_time_us",
          "attainable_flop_per_s", "time_share", "peak_flop_per_s"}) {
      CAPTURE(key);
      CHECK(o.at(key).is_number());
    }
    // GEMM dimensions are integers on a GEMM, null (not a string) on a memory-bound op.
    for (const char *key : {"m", "n", "k", "batch_count"}) {
      CAPTURE(key);
      if (expected.op.is_gemm())
        CHECK(o.at(key).is_number_integer());
      else
        CHECK(o.at(key).is_null());
    }
    CHECK(o.at("layer") == expected.op.layer);
    CHECK(o.at("pass") == "forward");
    CHECK(o.at("kind") == expected.op.kind);
    CHECK(o.at("flops") == expected.op.flops);
    CHECK(o.at("bytes") == expected.op.bytes);
    CHECK(o.at("bound") == std::string(to_string(expected.prediction.bound)));
    CHECK(o.at("predicted_time_us").get<double>() ==
          doctest::Approx(expected.prediction.time_s * 1e6).epsilon(1e-12));
    CHECK(o.at("arithmetic_intensity").get<double>() ==
          doctest::Approx(expected.op.arithmetic_intensity()).epsilon(1e-12));
    CHECK(o.at("ridge_intensity").get<double>() ==
          doctest::Approx(expected.prediction.ridge_intensity).epsilon(1e-12));
  }
  const json &fc = doc.at("ops")[0];
  CHECK(fc.at("m") == 512);
  CHECK(fc.at("n") == 4096);
  CHECK(fc.at("k") == 1024);
  CHECK(fc.at("batch_count") == 1);
  CHECK(fc.at("flops") == 4294967296LL);
  CHECK(fc.at("bytes") == 13631488);
  CHECK(fc.at("bound") == "compute");
  CHECK(fc.at("precision") == "fp16");
  const json &act = doc.at("ops")[1];
  CHECK(act.at("layer") == "blk/act");
  CHECK(act.at("kind") == "relu");
  CHECK(act.at("bound") == "memory");
  CHECK(act.at("count") == 3);
  CHECK(act.at("arithmetic_intensity") == 0.25);
}

TEST_CASE("CSV: the header row is JSON op field names, then one row per op") {
  const report r = small_report();
  const json doc = json::parse(written(r, output_format::json));
  const std::vector<std::string> lines = lines_of(written(r, output_format::csv));
  REQUIRE(lines.size() == 1 + r.analysis.ops.size());

  const std::vector<std::string> header = fields_of(lines[0]);
  const json &first_op = doc.at("ops")[0];
  for (const std::string &key : header) {
    CAPTURE(key);
    CHECK(first_op.contains(key));
  }
  for (const char *key :
       {"layer", "pass", "kind", "m", "n", "k", "batch_count", "precision", "flops", "bytes",
        "arithmetic_intensity", "ridge_intensity", "bound", "predicted_time_us"}) {
    CAPTURE(key);
    CHECK(std::find(header.begin(), header.end(), key) != header.end());
  }

  const auto column = [&](const std::string &key) {
    return static_cast<std::size_t>(std::find(header.begin(), header.end(), key) - header.begin());
  };
  for (std::size_t i = 0; i < r.analysis.ops.size(); ++i) {
    const std::vector<std::string> row = fields_of(lines[i + 1]);
    CAPTURE(lines[i + 1]);
    REQUIRE(row.size() == header.size());
    CHECK(row[column("layer")] == r.analysis.ops[i].op.layer);
    CHECK(row[column("flops")] == std::to_string(r.analysis.ops[i].op.flops));
    CHECK(row[column("bytes")] == std::to_string(r.analysis.ops[i].op.bytes));
    CHECK(std::strtod(row[column("predicted_time_us")].c_str(), nullptr) ==
          doctest::Approx(r.analysis.ops[i].prediction.time_s * 1e6).epsilon(1e-9));
  }
}

TEST_CASE("CSV numeric columns hold numbers (or nothing where JSON has null), never display text") {
  const report r = small_report();
  const std::vector<std::string> lines = lines_of(written(r, output_format::csv));
  REQUIRE(lines.size() == 3);
  const std::vector<std::string> header = fields_of(lines[0]);
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const std::vector<std::string> row = fields_of(lines[i]);
    REQUIRE(row.size() == header.size());
    for (std::size_t c = 0; c < header.size(); ++c) {
      const std::string &key = header[c];
      if (key == "layer" || key == "pass" || key == "kind" || key == "precision" || key == "bound")
        continue;
      CAPTURE(lines[i]);
      CAPTURE(key);
      CAPTURE(row[c]);
      CHECK((row[c].empty() || is_number(row[c])));
    }
  }
}

TEST_CASE("Markdown has a header line, a separator line and one row per op") {
  const report r = small_report();
  const std::string md = written(r, output_format::markdown);
  const std::vector<std::string> lines = lines_of(md);
  const auto header = std::find_if(lines.begin(), lines.end(), [](const std::string &l) {
    return l.rfind("| layer | pass | kind |", 0) == 0;
  });
  REQUIRE(header != lines.end());
  REQUIRE(header + 1 != lines.end());
  CHECK((header + 1)->rfind("| --- |", 0) == 0);
  CHECK((header + 2)->rfind("| fc |", 0) == 0);
  CHECK((header + 3)->rfind("| blk/act |", 0) == 0);
  CHECK(contains(md, "small"));
  CHECK(contains(md, "total:"));
}

TEST_CASE("the table format contains the layer names, and ANSI colour only when asked") {
  const report r = small_report();
  const std::string plain = written(r, output_format::table);
  CHECK(contains(plain, "fc"));
  CHECK(contains(plain, "blk/act"));
  CHECK(contains(plain, "v100-sxm2"));
  CHECK(contains(plain, "total:"));
  CHECK_FALSE(contains(plain, "\033["));
  const std::string coloured = written(r, output_format::table, write_options{true});
  CHECK(contains(coloured, "\033["));
  CHECK(contains(coloured, "blk/act"));
}

TEST_CASE("analyze_ops of one GEMM writes valid JSON too") {
  const gpu_spec *h100 = spec_catalog::builtin().find("h100");
  REQUIRE(h100 != nullptr);
  const report r = assemble_report(analyze_ops(
      "gemm 4096x4096x4096", {make_gemm_op("gemm", {4096, 4096, 4096}, precision::bf16)},
      perf_model(*h100), "--gpu h100"));
  const json doc = json::parse(written(r, output_format::json));
  REQUIRE(doc.at("ops").size() == 1);
  CHECK(doc.at("ops")[0].at("m") == 4096);
  CHECK(doc.at("ops")[0].at("precision") == "bf16");
  CHECK(doc.at("totals").at("gemm_count") == 1);
}

TEST_CASE("write_spec_list JSON lists every built-in GPU") {
  std::ostringstream out;
  write_spec_list(spec_catalog::builtin().specs(), output_format::json, out);
  const json doc = json::parse(out.str());
  CHECK(doc.at("schema_version") == json_schema_version);
  REQUIRE(doc.at("gpus").size() == spec_catalog::builtin().specs().size());
  for (const json &gpu : doc.at("gpus")) {
    CHECK(gpu.at("name").is_string());
    CHECK(gpu.at("peaks").at("fp32").at("dense_flop_per_s").is_number());
  }
}

TEST_CASE("parse_output_format knows table, json, csv, markdown, md, html and svg") {
  CHECK(parse_output_format("html") == output_format::html);
  CHECK(parse_output_format("svg") == output_format::svg);
  CHECK(format_for_file("page.html") == output_format::html);
  CHECK(format_for_file("page.htm") == output_format::html);
  CHECK(format_for_file("chart.svg") == output_format::svg);
  CHECK(parse_output_format("table") == output_format::table);
  CHECK(parse_output_format("json") == output_format::json);
  CHECK(parse_output_format("csv") == output_format::csv);
  CHECK(parse_output_format("markdown") == output_format::markdown);
  CHECK(parse_output_format("md") == output_format::markdown);
  CHECK_FALSE(parse_output_format("yaml").has_value());
  CHECK_FALSE(parse_output_format("").has_value());
}

TEST_CASE("format_for_file maps .json, .csv, .md, .markdown and .txt; others give nullopt") {
  CHECK(format_for_file("out.json") == output_format::json);
  CHECK(format_for_file("dir/out.csv") == output_format::csv);
  CHECK(format_for_file("report.md") == output_format::markdown);
  CHECK(format_for_file("report.markdown") == output_format::markdown);
  CHECK(format_for_file("report.txt") == output_format::table);
  CHECK_FALSE(format_for_file("report.yaml").has_value());
  CHECK_FALSE(format_for_file("report").has_value());
  CHECK_FALSE(format_for_file("json").has_value());
}

namespace {

/// A network of tiny layers on a V100 with the GEMM model and the typical host floor: fc (a GEMV)
/// and act (a ReLU) are launch-bound, big (1024³) is not. With its advice.
report launch_bound_report() {
  const network net = parse_network("name: tiny\nbatch: 1\nlayers:\n"
                                    "  - {name: fc, type: linear, in: 64, out: 64}\n"
                                    "  - repeat: 2\n"
                                    "    name: blk\n"
                                    "    layers:\n"
                                    "      - {name: act, type: relu}\n"
                                    "  - {name: big, type: matmul, m: 1024, n: 1024, k: 1024}\n",
                                    "tiny.yaml");
  const gpu_spec *v100 = spec_catalog::builtin().find("v100");
  REQUIRE(v100 != nullptr);
  const perf_model model(*v100);
  analysis a = analyze(net, model, "--gpu v100");
  advice advised = advise(a);
  return assemble_report(std::move(a), std::move(advised));
}

} // namespace

TEST_CASE("JSON ops carry device time, host floor and launch_bound; model has the host floor") {
  const report r = launch_bound_report();
  REQUIRE(r.analysis.ops.size() == 3);
  const json doc = json::parse(written(r, output_format::json));
  REQUIRE(doc.at("ops").size() == 3);
  for (std::size_t i = 0; i < r.analysis.ops.size(); ++i) {
    const json &o = doc.at("ops")[i];
    const prediction &p = r.analysis.ops[i].prediction;
    CAPTURE(r.analysis.ops[i].op.layer);
    CHECK(o.at("device_time_us").get<double>() ==
          doctest::Approx(p.device_time_s * 1e6).epsilon(1e-12));
    CHECK(o.at("host_floor_us").get<double>() ==
          doctest::Approx(p.host_floor_s * 1e6).epsilon(1e-12));
    CHECK(o.at("launch_bound").is_boolean());
    CHECK(o.at("launch_bound") == p.launch_bound);
    CHECK(o.at("predicted_time_us").get<double>() ==
          doctest::Approx(
              std::max(o.at("device_time_us").get<double>(), o.at("host_floor_us").get<double>()))
              .epsilon(1e-12));
    if (o.at("gemm_model").is_object())
      CHECK_FALSE(o.at("gemm_model").contains("launch_bound")); // moved to the op
  }
  CHECK(doc.at("ops")[0].at("launch_bound") == true);
  CHECK(doc.at("ops")[1].at("launch_bound") == true);
  CHECK(doc.at("ops")[1].at("model_summary") == "launch-bound"); // a memory op
  CHECK(doc.at("ops")[2].at("launch_bound") == false);

  const json &host = doc.at("model").at("host_floor");
  const host_floor typical = typical_host_floor();
  CHECK(host.at("measured") == false);
  CHECK(host.at("origin") == typical.origin);
  CHECK(host.at("kernel_launch_us").get<double>() ==
        doctest::Approx(typical.kernel_launch_s * 1e6).epsilon(1e-12));
  REQUIRE(host.at("gemm_call_us").size() == all_precisions.size());
  for (precision p : all_precisions)
    CHECK(host.at("gemm_call_us").at(std::string(to_string(p))).get<double>() ==
          doctest::Approx(typical.gemm(p) * 1e6).epsilon(1e-12));
  // The parameters: one per table row, by name.
  const json &parameters = doc.at("model").at("parameters");
  CHECK(parameters.size() == parameter_count);
  for (const parameter_info &row : parameter_table())
    CHECK(parameters.at(row.name).get<double>() == r.analysis.model.parameters()[row.id]);
}

TEST_CASE("JSON totals and advice carry the launch-bound share") {
  const report r = launch_bound_report();
  const json doc = json::parse(written(r, output_format::json));
  const json &totals = doc.at("totals");
  CHECK(totals.at("device_time_us").get<double>() ==
        doctest::Approx(r.analysis.totals.device_time_s * 1e6).epsilon(1e-12));
  CHECK(totals.at("launch_bound_time_us").get<double>() ==
        doctest::Approx(r.analysis.totals.launch_bound_time_s * 1e6).epsilon(1e-12));
  CHECK(totals.at("launch_bound_share").get<double>() ==
        doctest::Approx(r.analysis.totals.launch_bound_share).epsilon(1e-12));
  CHECK(totals.at("launch_bound_ops") == 2);
  CHECK(totals.at("launch_bound_ops").is_number_integer());

  REQUIRE(r.advice);
  REQUIRE(r.advice->launch_bound);
  const json &launch = doc.at("advice").at("launch_bound");
  CHECK(launch.at("ops") == 2);
  CHECK(launch.at("runs") == 3); // fc once, blk/act twice
  CHECK(launch.at("share").get<double>() ==
        doctest::Approx(r.analysis.totals.launch_bound_share).epsilon(1e-12));
  CHECK(launch.at("time_us").get<double>() ==
        doctest::Approx(r.analysis.totals.launch_bound_time_s * 1e6).epsilon(1e-12));
  CHECK(launch.at("step_time_us").get<double>() ==
        doctest::Approx(r.analysis.totals.time_s * 1e6).epsilon(1e-12));
  CHECK(launch.at("graph_step_time_us").get<double>() ==
        doctest::Approx(r.analysis.totals.device_time_s * 1e6).epsilon(1e-12));
  CHECK(launch.at("measured_floor") == false);

  // The human formats say it too.
  CHECK(contains(written(r, output_format::table), "launch-bound"));
  CHECK(contains(written(r, output_format::markdown), "launch-bound"));
}

TEST_CASE("a roofline-only report: no host floor, device time is the roofline, nothing "
          "launch-bound") {
  const report r = small_report();
  const json doc = json::parse(written(r, output_format::json));
  for (const json &o : doc.at("ops")) {
    CHECK(o.at("host_floor_us") == 0);
    CHECK(o.at("launch_bound") == false);
    CHECK(o.at("device_time_us").get<double>() ==
          doctest::Approx(o.at("roofline_time_us").get<double>()).epsilon(1e-12));
  }
  CHECK(doc.at("totals").at("launch_bound_ops") == 0);
  CHECK(doc.at("advice").is_null());
}

TEST_CASE("CSV has the device time and host floor columns") {
  const report r = launch_bound_report();
  const std::vector<std::string> lines = lines_of(written(r, output_format::csv));
  REQUIRE(lines.size() == 1 + r.analysis.ops.size());
  const std::vector<std::string> header = csv_fields(lines[0]);
  const auto column = [&](const std::string &key) {
    const auto found = std::find(header.begin(), header.end(), key);
    REQUIRE(found != header.end());
    return static_cast<std::size_t>(found - header.begin());
  };
  const std::size_t device = column("device_time_us"), floor = column("host_floor_us");
  for (std::size_t i = 0; i < r.analysis.ops.size(); ++i) {
    const std::vector<std::string> row = csv_fields(lines[i + 1]);
    REQUIRE(row.size() == header.size());
    CHECK(std::strtod(row[device].c_str(), nullptr) ==
          doctest::Approx(r.analysis.ops[i].prediction.device_time_s * 1e6).epsilon(1e-9));
    CHECK(std::strtod(row[floor].c_str(), nullptr) ==
          doctest::Approx(r.analysis.ops[i].prediction.host_floor_s * 1e6).epsilon(1e-9));
    CHECK(row[column("layer")] == r.analysis.ops[i].op.layer);
  }
}

namespace {

/// Two 1024² linear layers at batch 64 analysed on an H100.
analysis two_linear_layers() {
  const network net = parse_network("name: two\nbatch: 64\nlayers:\n"
                                    "  - {name: first, type: linear, in: 1024, out: 1024}\n"
                                    "  - {name: second, type: linear, in: 1024, out: 1024}\n",
                                    "two.yaml");
  const gpu_spec *h100 = spec_catalog::builtin().find("h100");
  REQUIRE(h100 != nullptr);
  analysis a = analyze(net, perf_model(*h100), "--gpu h100");
  REQUIRE(a.ops.size() == 2);
  return a;
}

/// A GEMM measured by cuBLAS: 20 µs eager, 18 µs replayed.
measurement one_gemm_measured() {
  measurement m;
  m.engine = "cublas";
  m.time_s = m.min_time_s = m.max_time_s = 20e-6;
  m.device_time_s = m.device_min_time_s = m.device_max_time_s = 18e-6;
  m.samples = 5;
  return m;
}

} // namespace

TEST_CASE("an interrupted measurement: complete false in JSON, the op not reached marked, what was "
          "measured kept; complete true otherwise") {
  const analysis a = two_linear_layers();
  const measurement first = one_gemm_measured();
  measurements stopped;
  stopped.ops = {first, not_reached("cublas")};
  stopped.notes = {"interrupted: stopped after 1 of 2 GEMMs, the others are marked not measured"};
  stopped.complete = false;
  measurements full = stopped;
  full.ops[1] = first;
  full.notes.clear();
  full.complete = true;

  CHECK(json::parse(written(small_report(), output_format::json)).at("complete") == true);
  CHECK(json::parse(written(assemble_report(a, std::nullopt, full), output_format::json))
            .at("complete") == true);

  const report r = assemble_report(a, std::nullopt, stopped);
  CHECK_FALSE(r.complete);
  const json doc = json::parse(written(r, output_format::json));
  CHECK(doc.at("complete") == false);
  const json &measured = doc.at("ops")[0].at("measured");
  CHECK(measured.at("status") == "measured");
  CHECK(measured.at("time_us").get<double>() == doctest::Approx(20));
  const json &not_run = doc.at("ops")[1].at("measured");
  CHECK(not_run.at("status") == "skipped");
  CHECK(contains(not_run.at("note").get<std::string>(), "interrupted"));
  CHECK(contains(doc.at("notes").back().get<std::string>(), "stopped after 1 of 2 GEMMs"));
  REQUIRE(r.measured_sums);
  CHECK(r.measured_sums->ops == 1); // the sums are of what was measured

  const std::string table = written(r, output_format::table);
  CHECK(contains(table, "skipped: not measured: the run was interrupted before it"));
  CHECK(contains(table, "stopped after 1 of 2 GEMMs"));

  // A padding run that was stopped leaves the report incomplete as well.
  measurements padding;
  padding.complete = false;
  CHECK_FALSE(assemble_report(a, advice{}, full, padding).complete);
}

TEST_CASE("a measured op's note shows beside its status in the table") {
  const network net = parse_network("name: one\nbatch: 64\nlayers:\n"
                                    "  - {name: fc, type: linear, in: 1024, out: 1024}\n",
                                    "one.yaml");
  const gpu_spec *h100 = spec_catalog::builtin().find("h100");
  REQUIRE(h100 != nullptr);
  measurement m;
  m.engine = "cublas";
  m.time_s = m.min_time_s = m.max_time_s = 20e-6;
  m.samples = 5;
  m.note = "hardware counters not read: CUPTI error";
  measurements run;
  run.ops = {m};
  const report r =
      assemble_report(analyze(net, perf_model(*h100), "--gpu h100"), std::nullopt, run);
  CHECK(contains(written(r, output_format::table), "ok: hardware counters not read: CUPTI error"));
  CHECK(json::parse(written(r, output_format::json)).at("ops")[0].at("measured").at("note") ==
        "hardware counters not read: CUPTI error");
}

TEST_CASE("an op held at the power limit: its sustained time and energy in JSON, the CSV and the "
          "totals, beside the step's prediction; null where not held") {
  const analysis a = two_linear_layers();
  const measurement burst = one_gemm_measured();
  measurement held = burst;
  held.held = held_reading{21e-6, 0.0125, 595, 1.5e9, "sw power cap"};
  measurements run;
  run.ops = {held, burst};
  const report r = assemble_report(a, std::nullopt, run);

  const json doc = json::parse(written(r, output_format::json));
  const json &reading = doc.at("ops")[0].at("measured").at("held");
  CHECK(reading.at("time_us").get<double>() == doctest::Approx(21));
  CHECK(reading.at("energy_j").get<double>() == doctest::Approx(0.0125));
  CHECK(reading.at("power_w").get<double>() == doctest::Approx(595));
  CHECK(reading.at("sm_clock_hz").get<double>() == doctest::Approx(1.5e9));
  CHECK(reading.at("throttle") == "sw power cap");
  CHECK(doc.at("ops")[1].at("measured").at("held").is_null());

  REQUIRE(r.measured_sums);
  CHECK(r.measured_sums->held == 1);
  CHECK(r.measured_sums->held_time_s == doctest::Approx(21e-6));
  CHECK(r.measured_sums->held_energy_j == doctest::Approx(0.0125));
  CHECK(r.measured_sums->predicted_energy_of_held_j == doctest::Approx(a.ops[0].energy_j));
  CHECK(contains(written(r, output_format::table), "1 op held at the power"));

  const std::string csv = written(r, output_format::csv);
  const std::string header = csv.substr(0, csv.find('\n'));
  CHECK(contains(header, "measured_held_time_us"));
  CHECK(contains(header, "measured_held_energy_j"));
  CHECK(contains(header, "measured_predicted_energy_j"));
}
