// SPDX-License-Identifier: Apache-2.0
// Ctrl-C during `roofline-advise NETWORK --measure` and `roofline-advise calibrate`, end to end on
// the GPU: SIGINT once the first GEMM is done stops the run after the op in flight, the report of
// what was measured is written (JSON "complete": false), and the command exits 130; calibrate
// leaves the calibration cache alone; a second SIGINT ends the process at once.
//
// The child's stderr is a pseudo-terminal, so that it draws its progress bar ("[##..] 1/36 fc1"):
// SIGINT is sent once the bar shows one GEMM done. Where no pseudo-terminal can be opened, the
// child raises SIGINT itself as its second GEMM starts (the test-only
// ROOFLINE_INJECT_FAULT=N:sigint). Where the binaries were carried to the GPU machine, the
// roofline-advise beside gpu_tests and the examples of the current directory are used
// (ROOFLINE_ADVISE and ROOFLINE_SOURCE_DIR in the environment choose others).
#include "cli_runner.hpp"
#include "interrupt_support.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

using nlohmann::json;
using namespace roofline::test;

namespace {

namespace fs = std::filesystem;

/// $ROOFLINE_ADVISE, else the roofline-advise beside this executable (where the binaries were
/// carried together), else the build's.
std::string advise() {
  if (const char *chosen = std::getenv("ROOFLINE_ADVISE"); chosen && *chosen)
    return chosen;
  std::error_code ec;
  const fs::path beside = fs::read_symlink("/proc/self/exe", ec).parent_path() / "roofline-advise";
  return !ec && fs::exists(beside) ? beside.string() : ROOFLINE_ADVISE;
}

/// A file of the source tree: $ROOFLINE_SOURCE_DIR, else the build's, else the current directory.
std::string repository_path(const std::string &relative) {
  const char *chosen = std::getenv("ROOFLINE_SOURCE_DIR");
  const fs::path root = chosen && *chosen                                      ? fs::path(chosen)
                        : fs::exists(fs::path(ROOFLINE_SOURCE_DIR) / relative) ? ROOFLINE_SOURCE_DIR
                                                                               : fs::current_path();
  return (root / relative).string();
}

/// roofline-advise `args`, SIGINT once one GEMM is done (interrupted_run): where no terminal can
/// be had, the measurement layer raises it as the op at `injected_index` starts.
std::unique_ptr<child_process> interrupted(const std::vector<std::string> &args,
                                           const std::vector<std::string> &environment,
                                           int injected_index) {
  std::vector<std::string> argv{advise()};
  argv.insert(argv.end(), args.begin(), args.end());
  return interrupted_run(argv, environment,
                         "ROOFLINE_INJECT_FAULT=" + std::to_string(injected_index) + ":sigint",
                         240);
}

/// The network: 12 GEMMs (a 4-layer MLP in training), 36 in three rounds.
const char *const network = "examples/mlp-training.yaml";

} // namespace

TEST_CASE("Ctrl-C during --measure: the report of what was measured, complete false, exit 130") {
  // Injected: op 2 is the second GEMM (fc1's forward GEMM is op 0, gelu1 op 1).
  auto run = interrupted({repository_path(network), "--measure", "--format", "json"}, {}, 2);
  CHECK(exit_status(*run, 240) == 130);
  CHECK(contains(run->err, "interrupted: stopping after the op in flight"));
  const json doc = json::parse(run->out, nullptr, false);
  REQUIRE_MESSAGE(!doc.is_discarded(), "stdout is not JSON:\n" << run->out);
  CHECK(doc.at("complete") == false);
  const gemm_counts gemms = count_gemms(doc);
  CHECK(gemms.all == 12);
  CHECK(gemms.measured >= 1);
  CHECK(gemms.not_reached >= 1); // SIGINT came in the first of three rounds, with GEMMs left
  CHECK(gemms.measured + gemms.not_reached == gemms.all);
  CHECK(notes_interruption(doc));
}

TEST_CASE("a second Ctrl-C ends the measurement at once") {
  child_process run({advise(), repository_path(network), "--measure", "--format", "json"}, {},
                    true);
  if (!run.on_terminal()) {
    MESSAGE("no pseudo-terminal: not checked");
    return;
  }
  REQUIRE(run.read_until(first_gemm_done, 240));
  run.interrupt();
  // The handler has run once it says so; the next SIGINT takes the default action.
  REQUIRE(run.read_until("Ctrl-C again", 60));
  run.interrupt();
  const int status = run.finish(60);
  INFO("stderr: " << run.err);
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGINT);
  CHECK(run.out.empty()); // nothing half-written
}

TEST_CASE("Ctrl-C during calibrate: exit 130, and nothing written to the calibration cache") {
  const std::filesystem::path cache =
      std::filesystem::temp_directory_path() / ("roofline-interrupt-" + std::to_string(getpid()));
  std::filesystem::remove_all(cache);
  std::filesystem::create_directories(cache);
  const std::vector<std::string> environment{"ROOFLINE_CACHE_DIR=" + cache.string()};
  auto run = interrupted({"calibrate"}, environment, 1);
  CHECK(exit_status(*run, 240) == 130);
  CHECK(contains(run->err, "calibration interrupted after"));
  CHECK(contains(run->err, "the calibration cache is unchanged"));
  CHECK_FALSE(contains(run->out, "saved to"));
  for (const auto &file : std::filesystem::recursive_directory_iterator(cache)) {
    CAPTURE(file.path().string());
    CHECK_FALSE(contains(file.path().filename().string(), "model-"));
  }
  std::filesystem::remove_all(cache);
}
