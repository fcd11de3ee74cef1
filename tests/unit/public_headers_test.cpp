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
  for (const fs::directory_entry &entry : fs::recursive_directory_iterator(dir)) {
    const fs::path relative = fs::relative(entry.path(), dir);
    const std::string room = relative.begin()->string();
    const bool detail = relative.has_parent_path() && relative.parent_path().filename() == "detail";
    if (!entry.is_regular_file() || entry.path().extension() != ".hpp" || room == "cuda" ||
        detail || relative == "roofline.hpp" || relative.filename() == "plugin_abi.hpp")
      continue;
    CAPTURE(relative.generic_string());
    CHECK(umbrella.find("#include \"roofline/" + relative.generic_string() + "\"") !=
          std::string::npos);
    ++headers;
  }
  CHECK(headers > 30);
}
