// SPDX-License-Identifier: Apache-2.0
// Golden tests: the CLI's output for every example (and a few other commands) against files in
// tests/cli/golden/. JSON is compared field by field, reporting the JSON path of each mismatch;
// text formats are compared exactly.
//
// To regenerate the golden files after an intended change:
//   ROOFLINE_UPDATE_GOLDEN=1 ctest --test-dir <build> -R cli.golden_test
// then review the diff (git diff tests/cli/golden) before committing it.
#include "cli_runner.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using nlohmann::json;
using roofline::test::run_cli;
using roofline::test::source_path;

namespace {

// ------------------------------------------------------------------ files

bool updating_golden() {
  const char *flag = std::getenv("ROOFLINE_UPDATE_GOLDEN");
  return flag != nullptr && std::string(flag) == "1";
}

std::string golden_path(const std::string &name) {
  return source_path("tests/cli/golden/" + name);
}

bool read_text(const std::string &path, std::string &text) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  std::ostringstream buffer;
  buffer << in.rdbuf();
  text = buffer.str();
  return true;
}

void write_text(const std::string &path, const std::string &text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  REQUIRE_MESSAGE(out.flush(), "cannot write " << path);
}

// ------------------------------------------------------------------ field-by-field JSON comparison

/// Fields whose values differ between machines or builds: never compared.
const std::set<std::string> ignored_fields{"/tool/version", "/network/origin", "/device/origin"};

/// What golden files hold in place of an ignored field.
const json not_compared = "(not compared)";

constexpr double relative_tolerance = 1e-9;
constexpr std::size_t mismatches_shown = 12;

std::string pointer_token(const std::string &key) {
  std::string escaped; // RFC 6901: '~' is "~0", '/' is "~1"
  for (char c : key)
    escaped += c == '~' ? std::string("~0") : c == '/' ? std::string("~1") : std::string(1, c);
  return escaped;
}

bool numbers_match(const json &golden, const json &now) {
  // Integers (FLOPs, bytes, shapes, counts) are exact; only computed reals get a tolerance.
  if (golden.is_number_integer() && now.is_number_integer())
    return golden == now;
  const double a = golden.get<double>();
  const double b = now.get<double>();
  if (a == b)
    return true;
  return std::fabs(a - b) <= relative_tolerance * std::max(std::fabs(a), std::fabs(b));
}

/// Appends "path: golden != now" for every difference under `path`, up to `mismatches_shown`.
void compare_json(const json &golden, const json &now, const std::string &path,
                  std::vector<std::string> &mismatches) {
  if (mismatches.size() >= mismatches_shown || ignored_fields.count(path) != 0)
    return;
  const auto mismatch = [&](const std::string &what) {
    mismatches.push_back((path.empty() ? "/" : path) + ": " + what);
  };

  if (golden.is_number() && now.is_number()) {
    if (!numbers_match(golden, now))
      mismatch(golden.dump() + " != " + now.dump());
    return;
  }
  if (golden.type() != now.type()) {
    mismatch(golden.dump() + " != " + now.dump() + " (" + golden.type_name() +
             " != " + now.type_name() + ")");
    return;
  }
  if (golden.is_object()) {
    for (const auto &[key, value] : golden.items()) {
      const std::string child = path + "/" + pointer_token(key);
      if (!now.contains(key)) {
        if (ignored_fields.count(child) == 0)
          mismatches.push_back(child + ": missing now (golden: " + value.dump() + ")");
      } else {
        compare_json(value, now.at(key), child, mismatches);
      }
    }
    for (const auto &[key, value] : now.items()) {
      const std::string child = path + "/" + pointer_token(key);
      if (!golden.contains(key) && ignored_fields.count(child) == 0)
        mismatches.push_back(child + ": not in the golden file (now: " + value.dump() + ")");
    }
    return;
  }
  if (golden.is_array()) {
    if (golden.size() != now.size())
      mismatch("length " + std::to_string(golden.size()) + " != " + std::to_string(now.size()));
    for (std::size_t i = 0; i < std::min(golden.size(), now.size()); ++i)
      compare_json(golden[i], now[i], path + "/" + std::to_string(i), mismatches);
    return;
  }
  if (golden != now) // strings, booleans, null
    mismatch(golden.dump() + " != " + now.dump());
}

std::vector<std::string> json_differences(const json &golden, const json &now) {
  std::vector<std::string> mismatches;
  compare_json(golden, now, "", mismatches);
  return mismatches;
}

/// The document as a golden file holds it: ignored fields replaced by a marker.
json for_golden_file(json document) {
  for (const std::string &field : ignored_fields) {
    const json::json_pointer pointer(field);
    if (document.contains(pointer))
      document[pointer] = not_compared;
  }
  return document;
}

// ------------------------------------------------------------------ checks

/// Runs the CLI; it must succeed and print nothing on stderr.
std::string output_of(const std::vector<std::string> &args) {
  const auto result = run_cli(args);
  INFO("stderr: " << result.err);
  CHECK(result.status == 0);
  CHECK(result.err.empty());
  return result.out;
}

void check_json_golden(const std::string &golden_name, const std::vector<std::string> &args) {
  INFO("golden file: tests/cli/golden/" << golden_name);
  const std::string output = output_of(args);
  const json now = json::parse(output, nullptr, false);
  REQUIRE_MESSAGE(!now.is_discarded(), "the output is not JSON:\n" << output);

  const std::string path = golden_path(golden_name);
  if (updating_golden()) {
    write_text(path, for_golden_file(now).dump(2) + "\n");
    MESSAGE("updated " << path);
    return;
  }
  std::string text;
  REQUIRE_MESSAGE(read_text(path, text),
                  "no golden file " << path << "; create it with ROOFLINE_UPDATE_GOLDEN=1");
  const json golden = json::parse(text, nullptr, false);
  REQUIRE_MESSAGE(!golden.is_discarded(), path << " is not JSON");

  const std::vector<std::string> mismatches = json_differences(golden, now);
  std::string report;
  for (const std::string &line : mismatches)
    report += "\n  " + line;
  CHECK_MESSAGE(
      mismatches.empty(),
      "output differs from the golden file (golden != now), first differences:" << report);
}

/// The first line where two texts differ, for a readable failure.
std::string first_difference(const std::string &golden, const std::string &now) {
  std::istringstream a(golden), b(now);
  std::string line_a, line_b;
  for (int line = 1;; ++line) {
    const bool more_a = static_cast<bool>(std::getline(a, line_a));
    const bool more_b = static_cast<bool>(std::getline(b, line_b));
    if (!more_a && !more_b)
      return "(they differ only in line endings or a final newline)";
    if (!more_a || !more_b || line_a != line_b)
      return "line " + std::to_string(line) +
             ":\n  golden: " + (more_a ? line_a : "(end of file)") +
             "\n  now:    " + (more_b ? line_b : "(end of output)");
  }
}

void check_text_golden(const std::string &golden_name, const std::vector<std::string> &args) {
  INFO("golden file: tests/cli/golden/" << golden_name);
  const std::string now = output_of(args);
  const std::string path = golden_path(golden_name);
  if (updating_golden()) {
    write_text(path, now);
    MESSAGE("updated " << path);
    return;
  }
  std::string golden;
  REQUIRE_MESSAGE(read_text(path, golden),
                  "no golden file " << path << "; create it with ROOFLINE_UPDATE_GOLDEN=1");
  CHECK_MESSAGE(golden == now,
                "output differs from the golden file at " << first_difference(golden, now));
}

struct example_run {
  std::string example; // examples/<example>.yaml
  std::string gpu;
};

const std::vector<example_run> example_runs{
    {"alexnet-classifier", "v100"}, {"bert-base", "h100"},
    {"gpt2-small", "a100"},         {"gpt2-small-training", "h100"},
    {"llama2-7b-decode", "h200"},   {"llama2-7b-decode-batch64", "h100"},
    {"llama2-7b-prefill", "h100"},  {"mlp-training", "h100"},
    {"resnet50", "h100"},
};

std::vector<std::string> network_args(const std::string &example, const std::string &gpu,
                                      const std::string &format) {
  return {source_path("examples/" + example + ".yaml"), "--gpu", gpu, "--format", format};
}

} // namespace

// ------------------------------------------------------------------ the comparison itself

TEST_CASE("the JSON comparison reports the path of each mismatch") {
  const json golden = json::parse(R"({"tool": {"name": "roofline-advise", "version": "1.0.0"},
                                      "ops": [{"flops": 10, "predicted_time_us": 12.5, "bound": "memory"}],
                                      "totals": {"time": 1.0}})");
  SUBCASE("equal documents, ignored fields and tiny relative differences pass") {
    json now = golden;
    now["tool"]["version"] = "9.9.9";
    now["ops"][0]["predicted_time_us"] = 12.5 * (1 + 1e-12);
    CHECK(json_differences(golden, now).empty());
  }
  SUBCASE("numbers beyond the tolerance, strings and exact integers are reported") {
    json now = golden;
    now["ops"][0]["predicted_time_us"] = 12.7;
    now["ops"][0]["bound"] = "compute";
    now["ops"][0]["flops"] = 11;
    const auto differences = json_differences(golden, now);
    CHECK(std::count(differences.begin(), differences.end(),
                     "/ops/0/predicted_time_us: 12.5 != 12.7") == 1);
    CHECK(std::count(differences.begin(), differences.end(),
                     "/ops/0/bound: \"memory\" != \"compute\"") == 1);
    CHECK(std::count(differences.begin(), differences.end(), "/ops/0/flops: 10 != 11") == 1);
  }
  SUBCASE("array lengths, missing and extra keys are reported") {
    json now = golden;
    now["ops"].push_back(now["ops"][0]);
    now["totals"].erase("time");
    now["totals"]["extra"] = true;
    const auto differences = json_differences(golden, now);
    CHECK(std::count(differences.begin(), differences.end(), "/ops: length 1 != 2") == 1);
    CHECK(std::count(differences.begin(), differences.end(),
                     "/totals/time: missing now (golden: 1.0)") == 1);
    CHECK(std::count(differences.begin(), differences.end(),
                     "/totals/extra: not in the golden file (now: true)") == 1);
  }
}

// ------------------------------------------------------------------ golden outputs

TEST_CASE("every example's JSON report matches its golden file") {
  for (const example_run &run : example_runs) {
    CAPTURE(run.example);
    check_json_golden(run.example + "." + run.gpu + ".json",
                      network_args(run.example, run.gpu, "json"));
  }
}

TEST_CASE("every example has a golden run") {
  // A new example must be added to example_runs (and get a golden file).
  std::set<std::string> listed;
  for (const example_run &run : example_runs)
    listed.insert(run.example);
  std::set<std::string> present;
  for (const auto &entry : std::filesystem::directory_iterator(source_path("examples")))
    if (entry.path().extension() == ".yaml")
      present.insert(entry.path().stem().string());
  CHECK(listed == present);
}

TEST_CASE("alexnet on v100 as a table, csv and markdown matches the golden text") {
  check_text_golden("alexnet-classifier.v100.table.txt",
                    network_args("alexnet-classifier", "v100", "table"));
  check_text_golden("alexnet-classifier.v100.csv",
                    network_args("alexnet-classifier", "v100", "csv"));
  check_text_golden("alexnet-classifier.v100.md",
                    network_args("alexnet-classifier", "v100", "markdown"));
}

TEST_CASE("a single GEMM (gemm 512 4096 1024, fp16, a100-sxm4-80gb) matches its golden JSON") {
  check_json_golden("gemm-512x4096x1024.fp16.a100-sxm4-80gb.json",
                    {"gemm", "512", "4096", "1024", "--precision", "fp16", "--gpu",
                     "a100-sxm4-80gb", "--format", "json"});
}

TEST_CASE("the GPU catalog as csv matches its golden text") {
  check_text_golden("specs.csv", {"specs", "--format", "csv"});
}

TEST_CASE(
    "compare: Llama-2-7B decode on V100, A100, H100, H200 at two batches matches its golden JSON") {
  check_json_golden("compare-llama2-7b-decode.json",
                    {"compare", source_path("examples/llama2-7b-decode.yaml"), "--gpus",
                     "v100,a100,h100,h200", "--batch", "1,64", "--format", "json"});
}

TEST_CASE("compare as a table matches its golden text") {
  check_text_golden(
      "compare-llama2-7b-prefill.table.txt",
      {"compare", source_path("examples/llama2-7b-prefill.yaml"), "--gpus", "a100,h100,h200"});
}

TEST_CASE("compare: serving Llama-3-8B at a latency target as a table matches its golden text") {
  check_text_golden("serve-llama3-8b.table.txt",
                    {"compare", source_path("examples/configs/llama-3-8b.json"), "--gpus",
                     "a100,l40s,h100,h200,b200", "--prompt-tokens", "2048", "--output-tokens",
                     "256", "--ttft", "1000", "--tpot", "50", "--price",
                     "a100=1.5,l40s=1,h100=2.5,h200=3.5,b200=6"});
}
