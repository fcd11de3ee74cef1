// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the command line, through the CLI's own run() (src/cli/app.hpp, linked from the
// CLI's library as roofline-advise links it): argument parsing, validation and the wiring after
// it, on small fixed inputs so that the analysis it reaches stays cheap (cli_fuzz_support.hpp).
//
// An input is one argument a line (after `roofline-advise`). Inputs with an argument holding '/'
// are skipped (the CLI would write files there), as are inputs of more than 32 arguments or 8
// commas (compare's GPUs × batches × degrees must stay small).
#include "cli_fuzz_support.hpp"

#include <algorithm>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char *>(data), size);
  std::vector<std::string> args = roofline::fuzz::arguments_of(text);
  if (args.size() > 33 || std::count(text.begin(), text.end(), ',') > 8 ||
      text.find('/') != std::string_view::npos || text.find('\0') != std::string_view::npos)
    return 0;
  roofline::fuzz::run_cli(std::move(args));
  return 0;
}
