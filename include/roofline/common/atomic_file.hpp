// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <string_view>

namespace roofline {

/// Writes `text` to `file` as a user means it, never clobbering what is there:
/// - absent, or a regular file of ours with one name: whole or not at all, into a temporary file
///   beside it (created with a unique name short enough for any file name), then renamed over
///   it; a replaced file keeps its permission bits (and, as root, its owner), a new one is 0666
///   less the umask;
/// - a regular file with other hard links, another user's file, or one in a directory that
///   takes no new file: rewritten in place, so that it stays what it was (room is reserved
///   first, so a full disk fails before anything changes; a failure after that leaves it partly
///   written, and the error says so);
/// - a symbolic link: its target is written as above, the link stays a link (a link to nothing
///   is refused);
/// - a device or a FIFO: written through (/dev/null takes it, /dev/full fails); a socket is
///   refused.
/// A file that cannot be opened for writing (permissions, a directory) is refused. Throws
/// roofline::error naming the file and the system's reason; a temporary file never remains, even
/// when a signal ends the process (a file size limit's SIGXFSZ must be ignored, as the CLI does,
/// for the write to fail instead).
void write_file_atomically(const std::filesystem::path &file, std::string_view text);

/// Writes `file` whole or not at all by renaming a new file (0666 less the umask) over whatever
/// is there, in a
/// directory that must exist: how our own cache entries are written (write_cache_file), where a
/// link or a FIFO found in the cache directory is damage, not a choice, and is never followed
/// or written through. Throws roofline::error naming the file and the system's reason.
void replace_file_atomically(const std::filesystem::path &file, std::string_view text);

} // namespace roofline
