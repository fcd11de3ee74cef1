// SPDX-License-Identifier: Apache-2.0
// The umbrella header names every public header of roofline::core (tests/CMakeLists.txt compiles
// each one alone besides).
#include "roofline/roofline.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace fs = std::filesystem;

TEST_CASE("roofline/roofline.hpp includes every public header of the core") {
  const fs::path dir = fs::path(ROOFLINE_SOURCE_DIR) / "include" / "roofline";
  std::ifstream in(dir / "roofline.hpp");
  REQUIRE(in);
  const std::string umbrella((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  int headers = 0;
  for (const fs::directory_entry &entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_regular_file() || entry.path().extension() != ".hpp" || name == "roofline.hpp")
      continue;
    CAPTURE(name);
    CHECK(umbrella.find("#include \"roofline/" + name + "\"") != std::string::npos);
    ++headers;
  }
  CHECK(headers > 30);
}
