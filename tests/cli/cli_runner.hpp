// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

namespace roofline::test {

struct cli_result {
  int status = -1;
  std::string out; ///< stdout
  std::string err; ///< stderr
};

/// Whether `text` holds `part`.
inline bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

/// The bytes of a file ("" when it cannot be read).
inline std::string read_text(const std::filesystem::path &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// Where the child's stdout goes, and the largest file it may write.
struct cli_setup {
  enum class output { captured, closed, dev_full };
  output out = output::captured; ///< closed: `>&-`; dev_full: a full disk (ENOSPC)
  /// RLIMIT_FSIZE in bytes, 0 for none (SIGXFSZ at its default: roofline-advise must ignore it
  /// itself, so that a write past the limit fails with EFBIG and leaves no temporary file).
  std::uint64_t file_size_limit = 0;
  /// Environment variables set (a value) or unset (nullopt) after the defaults
  /// (ROOFLINE_CACHE_DIR names a directory that does not exist).
  std::vector<std::pair<std::string, std::optional<std::string>>> environment;
};

/// Runs roofline-advise with `args` (no shell involved) and captures both streams, with stdout
/// and the file size limit as `setup` says (stdout is "" unless captured).
cli_result run_cli(const std::vector<std::string> &args, const cli_setup &setup = {});

/// A fresh directory, removed with everything in it at the end of the test.
class temp_dir {
public:
  temp_dir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "roofline-cli-test-XXXXXX").string();
    REQUIRE(mkdtemp(pattern.data()) != nullptr);
    m_path = pattern;
  }
  ~temp_dir() {
    std::error_code ec;
    std::filesystem::permissions(m_path, std::filesystem::perms::owner_all,
                                 std::filesystem::perm_options::add, ec);
    std::filesystem::remove_all(m_path, ec);
  }
  temp_dir(const temp_dir &) = delete;
  temp_dir &operator=(const temp_dir &) = delete;

  std::string operator/(const std::string &name) const { return (m_path / name).string(); }
  const std::filesystem::path &path() const { return m_path; }
  /// The names of the files in it.
  std::vector<std::string> files() const {
    std::vector<std::string> names;
    for (const auto &entry : std::filesystem::directory_iterator(m_path))
      names.push_back(entry.path().filename().string());
    return names;
  }

private:
  std::filesystem::path m_path;
};

/// A path inside the source tree.
std::string source_path(const std::string &relative);

} // namespace roofline::test
