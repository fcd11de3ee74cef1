// SPDX-License-Identifier: Apache-2.0
// What the command-line fuzz targets (cli, serving) share: the CLI's own run() in a scratch
// directory holding net.yaml (a network), cfg.json (a model config) and gpu.yaml (a spec), its
// reports dropped, what it writes removed after each input. A std::exception that is not a
// roofline::error is a finding: the CLI would exit 1 with a library's raw message.
#pragma once

#include "../../src/cli/app.hpp"

#include "roofline/common/error.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace roofline::fuzz {

namespace fs = std::filesystem;

inline std::string file_text(const fs::path &file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// The scratch directory the CLI runs in, with its three input files.
struct scratch_directory {
  fs::path dir;
  std::vector<std::pair<std::string, std::string>> inputs; ///< name, text

  scratch_directory() {
    dir = fs::temp_directory_path() / ("roofline-fuzz-cli-" + std::to_string(getpid()));
    fs::create_directories(dir);
    const fs::path source = ROOFLINE_SOURCE_DIR;
    inputs = {{"net.yaml", file_text(source / "examples/gpt2-small.yaml")},
              {"cfg.json", file_text(source / "examples/configs/llama-3-8b.json")},
              {"gpu.yaml", file_text(source / "specs/h100-sxm5.yaml")}};
    // No measurement layer, no cached measurements: the same answers on every machine.
    setenv("ROOFLINE_MEASURE_LAYER", (dir / "no-measurement-layer.so").c_str(), 1);
    setenv("ROOFLINE_CACHE_DIR", (dir / "cache").c_str(), 1);
    restore();
  }
  ~scratch_directory() {
    std::error_code ignored;
    fs::remove_all(dir, ignored);
  }

  /// Removes what a run wrote; puts the inputs back as they were.
  void restore() const {
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      if (std::none_of(inputs.begin(), inputs.end(),
                       [&](const auto &i) { return i.first == name; }))
        fs::remove_all(it->path(), ec);
    }
    for (const auto &[name, text] : inputs)
      if (fs::is_symlink(dir / name) || file_text(dir / name) != text) {
        fs::remove_all(dir / name, ec);
        std::ofstream(dir / name, std::ios::binary) << text;
      }
  }
};

/// A stream buffer that drops what it is given.
class null_buffer final : public std::streambuf {
  int_type overflow(int_type c) override { return traits_type::not_eof(c); }
  std::streamsize xsputn(const char *, std::streamsize n) override { return n; }
};

inline std::vector<std::string> arguments_of(std::string_view text) {
  std::vector<std::string> args{"roofline-advise"};
  while (!text.empty()) {
    const std::size_t end = std::min(text.find('\n'), text.size());
    args.emplace_back(text.substr(0, end));
    text.remove_prefix(std::min(end + 1, text.size()));
  }
  return args;
}

/// Runs the CLI on `args` (argv[0] included) in the scratch directory; aborts on a finding.
inline void run_cli(std::vector<std::string> args) {
  static const scratch_directory scratch;
  std::vector<char *> argv;
  for (std::string &arg : args)
    argv.push_back(arg.data());
  argv.push_back(nullptr);

  const fs::path here = fs::current_path();
  fs::current_path(scratch.dir);
  null_buffer null;
  std::streambuf *const out = std::cout.rdbuf(&null);
  std::streambuf *const err = std::cerr.rdbuf(&null);
  try {
    roofline::cli::run(static_cast<int>(args.size()), argv.data());
  } catch (const roofline::error &) {
  } catch (const std::exception &e) {
    std::cerr.rdbuf(err);
    std::cerr << "roofline-advise would exit 1 with: " << e.what() << '\n';
    std::abort();
  }
  std::cout.rdbuf(out);
  std::cerr.rdbuf(err);
  std::cout.clear();
  fs::current_path(here);
  scratch.restore();
}

} // namespace roofline::fuzz
