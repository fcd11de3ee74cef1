// SPDX-License-Identifier: Apache-2.0
// The cache as every analysis reads it (issue 27): a cache directory holding a poisoned host
// floor, a FIFO and a symbolic link to /dev/zero named like cache files gives a report of
// numbers, with a note, and exit 0; the directory follows XDG's rules, and with no HOME there is
// none.
#include "cli_runner.hpp"

#include <nlohmann/json.hpp>

#include <regex>
#include <string>
#include <sys/stat.h>
#include <vector>

using namespace roofline::test;
namespace fs = std::filesystem;

namespace {

/// A ceilings cache whose host floor (every precision) and launch latency are 1e308 s: they
/// passed the old check (their sign alone) and made every time infinite.
std::string poisoned_ceilings() {
  nlohmann::json doc =
      nlohmann::json::parse(read_text(source_path("bench/data/h100-ceilings.json")));
  for (nlohmann::json &r : doc["results"])
    if (r["kind"] == "host_floor" || r["kind"] == "fallback_host_floor" || r["kind"] == "latency")
      r["value"] = 1e308;
  return doc.dump(2);
}

/// `dir` made a cache directory of hostile entries.
void poison(const fs::path &dir) {
  fs::create_directories(dir);
  fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace);
  std::ofstream(dir / "ceilings-GPU-poisoned.json") << poisoned_ceilings();
  REQUIRE(::mkfifo((dir / "ceilings-GPU-fifo.json").c_str(), 0600) == 0);
  fs::create_symlink("/dev/zero", dir / "ceilings-GPU-zero.json");
}

/// Whether `text` holds a number that is not one, as printf and fmt write them.
bool has_non_number(const std::string &text) {
  static const std::regex non_number(R"((^|[^A-Za-z])-?(inf|nan)([^A-Za-z]|$))", std::regex::icase);
  return std::regex_search(text, non_number);
}

} // namespace

TEST_CASE("an analysis with a poisoned cache prints numbers, notes the files it skipped, exits 0") {
  const temp_dir scratch;
  const fs::path cache = scratch.path() / "cache";
  poison(cache);
  cli_setup setup;
  setup.environment = {{"ROOFLINE_CACHE_DIR", cache.string()}};
  for (const std::vector<std::string> &args :
       {std::vector<std::string>{"gemm", "64", "64", "64", "--gpu", "h100"},
        {source_path("examples/gpt2-small.yaml"), "--gpu", "h100"},
        {"compare", source_path("examples/gpt2-small.yaml"), "--gpus", "h100,a100"}}) {
    for (const char *format : {"table", "json"}) {
      std::vector<std::string> full = args;
      full.insert(full.end(), {"--format", format});
      CAPTURE(full);
      const cli_result r = run_cli(full, setup);
      CHECK(r.status == 0);
      CHECK_FALSE(has_non_number(r.out));
      CHECK(contains(r.out, "ceilings-GPU-poisoned.json"));
      CHECK(contains(r.out, "out of range"));
      CHECK(contains(r.out, "a FIFO"));
      CHECK(contains(r.out, "a symbolic link"));
      CHECK(contains(r.out, "typical host floor"));
      // No number turned null: as many as without a cache.
      const auto nulls = [](const std::string &text) {
        std::size_t count = 0;
        for (std::size_t at = text.find("null"); at != std::string::npos;
             at = text.find("null", at + 1))
          ++count;
        return count;
      };
      CHECK(nulls(r.out) == nulls(run_cli(full).out));
    }
  }
}

TEST_CASE("the cache directory: XDG_CACHE_HOME/roofline-advise, else HOME/.cache/roofline-advise, "
          "else none") {
  const temp_dir scratch;
  const std::vector<std::string> args{"gemm", "64", "64", "64", "--gpu", "h100"};
  SUBCASE("XDG_CACHE_HOME") {
    poison(scratch.path() / "xdg" / "roofline-advise");
    cli_setup setup;
    setup.environment = {{"ROOFLINE_CACHE_DIR", std::nullopt},
                         {"XDG_CACHE_HOME", (scratch.path() / "xdg").string()},
                         {"HOME", (scratch.path() / "home").string()}};
    const cli_result r = run_cli(args, setup);
    CHECK(r.status == 0);
    CHECK(contains(r.out, (scratch.path() / "xdg" / "roofline-advise").string()));
  }
  SUBCASE("HOME") {
    poison(scratch.path() / "home" / ".cache" / "roofline-advise");
    cli_setup setup;
    setup.environment = {{"ROOFLINE_CACHE_DIR", std::nullopt},
                         {"XDG_CACHE_HOME", std::nullopt},
                         {"HOME", (scratch.path() / "home").string()}};
    const cli_result r = run_cli(args, setup);
    CHECK(r.status == 0);
    CHECK(contains(r.out, (scratch.path() / "home" / ".cache" / "roofline-advise").string()));
  }
  SUBCASE("HOME unset or empty: no cache, nothing said (nothing needed writing)") {
    for (const std::optional<std::string> &home :
         {std::optional<std::string>(), std::optional<std::string>("")}) {
      cli_setup setup;
      setup.environment = {
          {"ROOFLINE_CACHE_DIR", std::nullopt}, {"XDG_CACHE_HOME", std::nullopt}, {"HOME", home}};
      const cli_result r = run_cli(args, setup);
      CHECK(r.status == 0);
      CHECK(r.err.empty());
      CHECK(contains(r.out, "typical host floor"));
      CHECK_FALSE(contains(r.out, "skipped"));
    }
  }
  SUBCASE("a cache directory others may write to is not read, and the report says so") {
    const fs::path cache = scratch.path() / "shared";
    poison(cache);
    fs::permissions(cache, fs::perms::all);
    cli_setup setup;
    setup.environment = {{"ROOFLINE_CACHE_DIR", cache.string()}};
    const cli_result r = run_cli(args, setup);
    CHECK(r.status == 0);
    CHECK(contains(r.out, "others may write"));
    CHECK_FALSE(contains(r.out, "a FIFO")); // nothing in it was read
  }
}
