// SPDX-License-Identifier: Apache-2.0
// A file of requests to simulate: its columns, its comments, its means.
#include "roofline/common/error.hpp"
#include "roofline/compare/request_file.hpp"

#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>

using namespace roofline;

namespace {

std::string written(const std::string &name, const std::string &text) {
  const std::string path = "request_file_test_" + name + ".csv";
  std::ofstream(path) << text;
  return path;
}

} // namespace

TEST_CASE("a request file: its columns in any order, comments and blank lines skipped") {
  const std::string path =
      written("ordered", "# a spread\noutput_tokens, prompt_tokens ,arrival_s\n"
                         "\n20,100,0.5  # late\n7,3,0\n");
  const std::vector<simulated_request> r = load_request_file(path);
  REQUIRE(r.size() == 2);
  CHECK(r[0].arrival_s == 0.5);
  CHECK(r[0].prompt_tokens == 100);
  CHECK(r[0].output_tokens == 20);
  CHECK(r[1].prompt_tokens == 3);
  CHECK(mean_lengths(r) == std::pair<std::int64_t, std::int64_t>{52, 14}); // 51.5 and 13.5 up
  std::remove(path.c_str());
}

TEST_CASE("a request file without arrivals: every request at 0; a bad field names its line") {
  const std::string path = written("bad", "prompt_tokens,output_tokens\n10,1\n10,x\n");
  try {
    load_request_file(path);
    FAIL("a field that is no number was read");
  } catch (const input_error &e) {
    CHECK(e.where().line == 3);
    CHECK(std::string(e.what()).find("output_tokens `x`") != std::string::npos);
  }
  std::remove(path.c_str());
  const std::string good = written("good", "prompt_tokens,output_tokens\n10,1\n");
  CHECK(load_request_file(good)[0].arrival_s == 0);
  std::remove(good.c_str());
}
