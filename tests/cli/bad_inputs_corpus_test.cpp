// SPDX-License-Identifier: Apache-2.0
// The bad-input corpus (tests/bad-inputs/, README.md there): every case its status and message,
// nothing on stdout when refused, the file named, and quickly.
#include "cli_runner.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using roofline::test::cli_result;
using roofline::test::run_cli;
using roofline::test::source_path;

namespace {

struct corpus_case {
  int line = 0;
  std::string file; ///< "" for arguments alone
  std::vector<std::string> arguments;
  int exit = 0;
  std::string fragment;
};

std::string trimmed(const std::string &text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string::npos)
    return {};
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

std::vector<std::string> fields(const std::string &line) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (int i = 0; i < 3; ++i) { // the fragment, last, may hold '|'
    const std::size_t bar = line.find('|', start);
    if (bar == std::string::npos)
      break;
    parts.push_back(trimmed(line.substr(start, bar - start)));
    start = bar + 1;
  }
  parts.push_back(trimmed(line.substr(start)));
  return parts;
}

const std::string corpus = source_path("tests/bad-inputs");

std::vector<corpus_case> read_cases() {
  std::ifstream in(corpus + "/cases.txt");
  REQUIRE_MESSAGE(in, "cannot open " << corpus << "/cases.txt");
  std::vector<corpus_case> cases;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (trimmed(line).empty() || trimmed(line)[0] == '#')
      continue;
    const std::vector<std::string> f = fields(line);
    INFO("cases.txt:" << number << ": " << line);
    REQUIRE(f.size() == 4);
    corpus_case c;
    c.line = number;
    c.file = f[0] == "-" ? "" : f[0];
    std::istringstream words(f[1]);
    for (std::string word; words >> word;) {
      if (const auto at = word.find("{}"); at != std::string::npos)
        word.replace(at, 2, corpus + "/" + c.file);
      c.arguments.push_back(word);
    }
    c.exit = std::stoi(f[2]);
    c.fragment = f[3];
    REQUIRE(!c.fragment.empty());
    cases.push_back(std::move(c));
  }
  return cases;
}

} // namespace

TEST_CASE("every case of the bad-input corpus gets its status and message, quickly") {
  const std::vector<corpus_case> cases = read_cases();
  for (const corpus_case &c : cases) {
    INFO("cases.txt:" << c.line << " (" << (c.file.empty() ? "arguments" : c.file) << ")");
    const auto start = std::chrono::steady_clock::now();
    const cli_result r = run_cli(c.arguments);
    [[maybe_unused]] const double seconds = // unchecked in sanitized builds, several times slower
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    INFO("stderr: " << r.err);
    INFO("stdout: " << r.out.substr(0, 400));
    CHECK(r.status == c.exit);
    CHECK_MESSAGE(r.err.find(c.fragment) != std::string::npos,
                  "stderr does not say " << c.fragment);
    if (c.exit == 2) {
      CHECK_MESSAGE(r.out.empty(), "a refused input printed a report");
      if (!c.file.empty())
        CHECK_MESSAGE(r.err.find(c.file) != std::string::npos, "stderr does not name the file");
    }
#if !defined(ROOFLINE_SANITIZED)
    CHECK_MESSAGE(seconds < 1.0, "took " << seconds << " s");
#endif
  }
}

TEST_CASE("every file of the bad-input corpus is a case") {
  std::set<std::string> listed;
  for (const corpus_case &c : read_cases())
    listed.insert(c.file);
  for (const fs::directory_entry &entry : fs::directory_iterator(corpus)) {
    const std::string name = entry.path().filename().string();
    if (name == "cases.txt" || name == "README.md")
      continue;
    CHECK_MESSAGE(listed.count(name) == 1, name << " is in tests/bad-inputs/ but not in cases.txt");
  }
}
