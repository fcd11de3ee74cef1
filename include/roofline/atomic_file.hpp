// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <string_view>

namespace roofline {

/// Writes `text` to `file` whole or not at all: into a temporary file beside it (created with a
/// unique name short enough for any file name), then renamed over it. Creates missing parent
/// directories when `create_directories`. Throws roofline::error naming the file and the
/// system's reason; the temporary file never remains.
void write_file_atomically(const std::filesystem::path &file, std::string_view text,
                           bool create_directories = false);

} // namespace roofline
