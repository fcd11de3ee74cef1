// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <string_view>

namespace roofline::cli {

/// `text` with every option the library names by its field (`config_options::seq_len`,
/// `compare_request::gpus`, `describe_local_gpu::measure`) named as roofline-advise's user gives
/// it (`--seq-len`, `--gpus`, `roofline-advise device --measure`); the rest as it is. Messages,
/// notes and reports pass through it (write_options::words). tests/core_words.py holds the
/// library's messages to fields this table knows.
std::string in_cli_words(std::string_view text);

} // namespace roofline::cli
