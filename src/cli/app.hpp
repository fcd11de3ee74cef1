// SPDX-License-Identifier: Apache-2.0
#pragma once

// roofline-advise's command line: its commands and options, parsed and dispatched. main() (and
// the CLI fuzzer, tests/fuzz/cli_fuzz.cpp) call run().

namespace roofline::cli {

/// Exit statuses besides 0 and exit_interrupted (interrupt.hpp).
inline constexpr int exit_failure = 1;
inline constexpr int exit_input_error = 2;

/// Parses the command line and runs the command it names; returns the exit status. Throws
/// input_error for bad input (exit_input_error), any other roofline::error for a failure.
int run(int argc, char **argv);

} // namespace roofline::cli
