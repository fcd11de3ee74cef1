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

/// Writes a cache entry of ours whole or not at all: creates its missing directories, then
/// renames a new 0644 file over whatever is at `file`. Unlike an output, nothing there is
/// followed or written through: a link or a FIFO in the cache directory is damage, not a choice.
/// Throws roofline::error naming the file and the system's reason.
void write_cache_file(const std::filesystem::path &file, std::string_view text);

} // namespace roofline
