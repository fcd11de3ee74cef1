// SPDX-License-Identifier: Apache-2.0
// Ctrl-C during `--measure` and `calibrate`, without a GPU: roofline-advise loads a fake
// measurement layer (fake_measure_layer.cpp) whose GEMMs each take 50 ms. SIGINT once the progress
// bar shows one GEMM done must stop the run after the op in flight, write the report of what was
// measured (JSON "complete": false) to stdout and --output, and exit 130; a second SIGINT ends the
// process at once; an interrupted calibrate exits 130 and saves nothing. tests/gpu/interrupt_test
// does the same on a GPU with the real layer. Built only where the CLI loads measurement layers at
// all (a build with roofline::measure: the CLI exports the core for them).
#include "cli_runner.hpp"
#include "interrupt_support.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

using nlohmann::json;
using namespace roofline::test;

namespace {

std::vector<std::string> fake_environment(const std::string &cache) {
  return {std::string("ROOFLINE_MEASURE_LAYER=") + ROOFLINE_FAKE_MEASURE_LAYER,
          "ROOFLINE_CACHE_DIR=" + cache, "NO_COLOR=1"};
}

/// roofline-advise `args` on the fake layer, SIGINT once one GEMM is done (interrupted_run): where
/// no terminal can be had, the layer raises it as the second GEMM starts.
std::unique_ptr<child_process> interrupted(const std::vector<std::string> &args,
                                           const std::string &cache) {
  std::vector<std::string> argv{ROOFLINE_ADVISE};
  argv.insert(argv.end(), args.begin(), args.end());
  return interrupted_run(argv, fake_environment(cache), "ROOFLINE_FAKE_SIGINT_AT=1", 30);
}

} // namespace

TEST_CASE("Ctrl-C during --measure: the report of what was measured on stdout and --output, "
          "complete false, exit 130") {
  const temp_dir scratch;
  const std::string file = (scratch.path() / "report.json").string();
  auto run = interrupted({source_path("examples/mlp-training.yaml"), "--gpu", "h100", "--measure",
                          "--format", "json", "--output", file},
                         (scratch.path() / "cache").string());
  CHECK(exit_status(*run, 30) == 130);
  CHECK(contains(run->err, "roofline-advise: interrupted: stopping after the op in flight (Ctrl-C "
                           "again to quit at once)"));
  for (const std::string &text : {run->out, read_text(file)}) {
    const json doc = json::parse(text, nullptr, false);
    REQUIRE_MESSAGE(!doc.is_discarded(), "not JSON:\n" << text);
    CHECK(doc.at("complete") == false);
    const gemm_counts gemms = count_gemms(doc);
    CHECK(gemms.all == 12); // 4 layers × forward, data and weight gradients
    CHECK(gemms.measured >= 1);
    CHECK(gemms.not_reached >= 1);
    CHECK(gemms.measured + gemms.not_reached == gemms.all);
    CHECK(notes_interruption(doc));
  }
}

TEST_CASE("Ctrl-C during --measure with the table format: the table marks the GEMMs not "
          "measured and says where the run stopped") {
  const temp_dir scratch;
  auto run = interrupted({source_path("examples/mlp-training.yaml"), "--gpu", "h100", "--measure"},
                         (scratch.path() / "cache").string());
  CHECK(exit_status(*run, 30) == 130);
  CHECK(contains(run->out, "skipped: not measured: the run was interrupted before it"));
  CHECK(contains(run->out, "interrupted: stopped after"));
}

TEST_CASE("a second Ctrl-C ends the measurement at once, writing nothing") {
  const temp_dir scratch;
  std::vector<std::string> environment = fake_environment((scratch.path() / "cache").string());
  environment.push_back("ROOFLINE_FAKE_MEASURE_MS=2000"); // the op in flight outlasts the test
  child_process run({ROOFLINE_ADVISE, source_path("examples/mlp-training.yaml"), "--gpu", "h100",
                     "--measure", "--format", "json"},
                    environment, true);
  if (!run.on_terminal()) {
    MESSAGE("no pseudo-terminal here: not checked");
    return;
  }
  REQUIRE(run.read_until("] 0/", 30)); // measuring the first GEMM
  run.interrupt();
  REQUIRE(run.read_until("Ctrl-C again", 30)); // the handler ran
  run.interrupt();
  const int status = run.finish(30);
  INFO("stderr: " << run.err);
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGINT);
  CHECK(run.out.empty());
}

TEST_CASE("Ctrl-C during calibrate: exit 130, nothing fitted or saved, and it says so") {
  const temp_dir scratch;
  const std::filesystem::path cache = scratch.path() / "cache";
  auto run = interrupted({"calibrate"}, cache.string());
  CHECK(exit_status(*run, 30) == 130);
  CHECK(contains(run->err, "roofline-advise: calibration interrupted after "));
  CHECK(contains(run->err, " of 40 GEMMs: nothing was fitted, the calibration cache is unchanged"));
  CHECK(run->out.empty());
  CHECK_FALSE(std::filesystem::exists(cache));
}

TEST_CASE("--measure and calibrate that are not interrupted: complete true, exit 0") {
  const temp_dir scratch;
  std::vector<std::string> environment = fake_environment((scratch.path() / "cache").string());
  environment.push_back("ROOFLINE_FAKE_MEASURE_MS=0");
  child_process measure({ROOFLINE_ADVISE, source_path("examples/alexnet-classifier.yaml"), "--gpu",
                         "h100", "--measure", "--format", "json"},
                        environment, false);
  CHECK(exit_status(measure, 30) == 0);
  const json doc = json::parse(measure.out);
  CHECK(doc.at("complete") == true);
  CHECK(count_gemms(doc).measured == 3);

  child_process calibrate({ROOFLINE_ADVISE, "calibrate"}, environment, false);
  CHECK(exit_status(calibrate, 30) == 0);
  CHECK(contains(calibrate.out, "the fake measurement layer saves nothing"));
}
