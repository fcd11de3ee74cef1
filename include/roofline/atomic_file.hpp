// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <string_view>

namespace roofline {

/// Writes `text` to `file` as a user means it, never clobbering what is there:
/// - absent, or a regular file with one name: whole or not at all, into a temporary file beside
///   it (created with a unique name short enough for any file name), then renamed over it; a
///   replaced file keeps its permission bits (and its owner, where the system allows), a new one
///   is 0644;
/// - a regular file with other hard links: rewritten in place, so that every name sees the new
///   text (room is reserved first, so a full disk fails before anything changes);
/// - a symbolic link: its target is written as above, the link stays a link (a link to nothing
///   is refused);
/// - a device or a FIFO: written through (/dev/null takes it, /dev/full fails); a socket is
///   refused.
/// A file that cannot be opened for writing (permissions, a directory) is refused. Throws
/// roofline::error naming the file and the system's reason; a temporary file never remains, even
/// when a signal ends the process.
void write_file_atomically(const std::filesystem::path &file, std::string_view text);

/// Writes `file` whole or not at all by renaming a new 0644 file over whatever is there, in a
/// directory that must exist: how our own cache entries are written (write_cache_file), where a
/// link or a FIFO found in the cache directory is damage, not a choice, and is never followed
/// or written through. Throws roofline::error naming the file and the system's reason.
void replace_file_atomically(const std::filesystem::path &file, std::string_view text);

} // namespace roofline
