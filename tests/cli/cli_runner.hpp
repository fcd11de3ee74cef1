// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <vector>

namespace roofline::test {

struct cli_result {
  int status = -1;
  std::string out; ///< stdout
  std::string err; ///< stderr
};

/// Runs roofline-advise with `args` (no shell involved) and captures both streams.
cli_result run_cli(const std::vector<std::string> &args);

/// A path inside the source tree.
std::string source_path(const std::string &relative);

} // namespace roofline::test
