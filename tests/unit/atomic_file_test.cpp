// SPDX-License-Identifier: Apache-2.0
// write_file_atomically: the file whole or not at all, and never a temporary file left behind,
// whatever fails and whenever a signal that ends the process arrives.
#include "roofline/atomic_file.hpp"
#include "roofline/error.hpp"

#include <doctest/doctest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

namespace fs = std::filesystem;
using namespace roofline;

namespace {

/// A fresh directory, removed at the end.
struct scratch_dir {
  scratch_dir() {
    std::string pattern = (fs::temp_directory_path() / "roofline-atomic-XXXXXX").string();
    REQUIRE(mkdtemp(pattern.data()) != nullptr);
    path = pattern;
  }
  ~scratch_dir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  /// Whether anything but `name` is in it.
  bool only(const std::string &name) const {
    for (const fs::directory_entry &entry : fs::directory_iterator(path))
      if (entry.path().filename() != name)
        return false;
    return true;
  }
  fs::path path;
};

} // namespace

TEST_CASE("a name of 255 bytes is written, with no temporary file left") {
  scratch_dir dir;
  const std::string name(255, 'n');
  write_file_atomically(dir.path / name, "text");
  CHECK(fs::file_size(dir.path / name) == 4);
  CHECK(dir.only(name));
  CHECK_THROWS_WITH_AS(write_file_atomically(dir.path / (name + "x"), "text"),
                       doctest::Contains("File name too long"), error);
  CHECK(dir.only(name));
}

TEST_CASE("SIGTERM while a large file is written leaves it whole or absent, never a temporary") {
  // Before the fix, a signal during the write killed the process with the .roofline-XXXXXX
  // file beside the destination. Whenever the signal lands, no temporary file may remain.
  for (const int delay_ms : {0, 5, 20, 60}) {
    CAPTURE(delay_ms);
    scratch_dir dir;
    const std::string text(64 << 20, 'x');
    const pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      try {
        write_file_atomically(dir.path / "big.txt", text);
      } catch (...) {
        _exit(3);
      }
      pause(); // the signal ends it
      _exit(0);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    kill(child, SIGTERM);
    int status = 0;
    waitpid(child, &status, 0);
    CHECK(WIFSIGNALED(status));
    CHECK(dir.only("big.txt"));
    if (fs::exists(dir.path / "big.txt"))
      CHECK(fs::file_size(dir.path / "big.txt") == text.size());
  }
}
