// SPDX-License-Identifier: Apache-2.0
// Fuzz target: a serving question's flags, through the CLI's own run() as the `cli` target runs
// it (cli_fuzz_support.hpp), on the Llama-3-8B config (cfg.json).
//
// An input is one argument a line. Its first three lines are the values of --gpus,
// --prompt-tokens and --output-tokens, the rest more arguments after them (--ttft, --tpot, --tp,
// --price, --eager, --memory-reserve, --format, ... and their values):
//   roofline-advise compare cfg.json --gpus L1 --prompt-tokens L2 --output-tokens L3 L4 ...
// so that every input asks a serving question, whatever its values. Skipped as the `cli` target
// skips: an argument holding '/', more than 24 lines, more than 4 commas (GPUs × degrees stay
// few: one serving search costs tens of milliseconds).
#include "cli_fuzz_support.hpp"

#include <algorithm>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char *>(data), size);
  std::vector<std::string> lines = roofline::fuzz::arguments_of(text);
  lines.erase(lines.begin()); // arguments_of's argv[0]
  if (lines.size() < 3 || lines.size() > 24 || std::count(text.begin(), text.end(), ',') > 4 ||
      text.find('/') != std::string_view::npos || text.find('\0') != std::string_view::npos)
    return 0;
  std::vector<std::string> args{"roofline-advise", "compare", "cfg.json",        "--gpus", lines[0],
                                "--prompt-tokens", lines[1],  "--output-tokens", lines[2]};
  args.insert(args.end(), lines.begin() + 3, lines.end());
  roofline::fuzz::run_cli(std::move(args));
  return 0;
}
