// SPDX-License-Identifier: Apache-2.0
#include "roofline/common/atomic_file.hpp"

#include "roofline/common/error.hpp"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <pthread.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

namespace roofline {

namespace {

[[noreturn]] void fail(const std::filesystem::path &file, const std::string &what, int code) {
  throw error(file.string() + ": " + what + ": " + std::strerror(code));
}

/// While it lives, the signals that end a process by default (Ctrl-C, a terminal hung up, kill)
/// wait: a temporary file is never left behind by one arriving mid-write. They are delivered as
/// it ends, once the file is in place or removed.
class deferred_signals {
public:
  deferred_signals() {
    sigset_t deferred;
    sigemptyset(&deferred);
    for (const int signal : {SIGINT, SIGTERM, SIGHUP, SIGQUIT})
      sigaddset(&deferred, signal);
    m_active = pthread_sigmask(SIG_BLOCK, &deferred, &m_previous) == 0;
  }
  ~deferred_signals() {
    if (m_active)
      pthread_sigmask(SIG_SETMASK, &m_previous, nullptr);
  }
  deferred_signals(const deferred_signals &) = delete;
  deferred_signals &operator=(const deferred_signals &) = delete;

private:
  sigset_t m_previous{};
  bool m_active = false;
};

/// Writes `text` whole to `fd` from its offset: 0, or the errno of the write that failed.
int write_all(int fd, std::string_view text) {
  for (std::size_t written = 0; written < text.size();) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return n < 0 ? errno : EIO;
    written += static_cast<std::size_t>(n);
  }
  return 0;
}

/// Closes `fd`, then throws if `code` (or the close) says the write failed.
void finish(const std::filesystem::path &file, int fd, int code, const std::string &what) {
  if (::close(fd) != 0 && code == 0)
    code = errno;
  if (code != 0)
    fail(file, what, code);
}

/// The process's umask, read without setting it (which would race other threads): Linux shows
/// it in /proc/self/status; 022, the usual one, where it does not.
mode_t current_umask() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("Umask:", 0) == 0)
      return static_cast<mode_t>(std::strtoul(line.c_str() + 6, nullptr, 8) & 0777);
  return 022;
}

/// `text` into a temporary file beside `target`, renamed over it; errors name `file`, the name
/// given (a link to `target`, or `target` itself). `existing`: the regular file there now, whose
/// mode (and owner, where the system allows) the new one takes; nullptr for a new file, made as
/// any program makes one (0666 less the umask).
void replace(const std::filesystem::path &file, const std::filesystem::path &target,
             std::string_view text, const struct stat *existing) {
  const std::filesystem::path dir = target.has_parent_path() ? target.parent_path() : ".";
  // A short hidden name: the destination's own may already be as long as a name can be.
  std::string temporary = (dir / ".roofline-XXXXXX").string();
  const deferred_signals until_done;
  const int fd = mkstemp(temporary.data());
  if (fd < 0)
    fail(file, "cannot write a temporary file beside it", errno);
  const auto abandon = [&](const std::string &what, int code) {
    ::close(fd);
    ::unlink(temporary.c_str());
    fail(file, what, code);
  };
  if (const int code = write_all(fd, text))
    abandon("cannot write", code);
  // mkstemp makes the file private. A replaced one keeps its owner (only root may give it: the
  // caller rewrites another user's file in place instead), then its mode (a change of owner
  // clears set-user-ID bits).
  if (existing && (existing->st_uid != ::geteuid() || existing->st_gid != ::getegid()))
    (void)::fchown(fd, existing->st_uid, existing->st_gid);
  if (::fchmod(fd, existing ? existing->st_mode & 07777 : 0666 & ~current_umask()) != 0)
    abandon("cannot set its permissions", errno);
  if (::close(fd) != 0) {
    const int code = errno;
    ::unlink(temporary.c_str());
    fail(file, "cannot write", code);
  }
  if (std::rename(temporary.c_str(), target.c_str()) != 0) {
    const int code = errno;
    ::unlink(temporary.c_str());
    fail(file, "cannot write", code);
  }
}

/// `text` over the regular file open as `fd` (`existing`), in place: a rename would split the
/// file from its other hard links.
void rewrite_in_place(const std::filesystem::path &file, int fd, std::string_view text,
                      const struct stat &existing) {
  const deferred_signals until_done;
  // Room first: a full disk or a size limit then fails before a byte of the old text changes.
  if (!text.empty()) {
    const int code = ::posix_fallocate(fd, 0, static_cast<off_t>(text.size()));
    if (code != 0 && code != EOPNOTSUPP && code != ENOSYS && code != EINVAL) {
      (void)::ftruncate(fd, existing.st_size); // what a failed allocation may have added
      finish(file, fd, code, "cannot write");
    }
  }
  int code = write_all(fd, text);
  if (code == 0 && ::ftruncate(fd, static_cast<off_t>(text.size())) != 0)
    code = errno;
  finish(file, fd, code,
         "cannot write it in place (it has " + std::to_string(existing.st_nlink) +
             " hard links, kept by writing into it); it is left partly written");
}

} // namespace

void replace_file_atomically(const std::filesystem::path &file, std::string_view text) {
  replace(file, file, text, nullptr);
}

void write_file_atomically(const std::filesystem::path &file, std::string_view text) {
  // Opened as any program opens what it writes to: the kernel follows a symbolic link where it
  // allows one (not one planted in a sticky world-writable directory such as /tmp), a file we may
  // not write is refused, and a FIFO waits here for its reader, Ctrl-C still able to end the
  // wait. Nothing changes yet: no O_TRUNC.
  const int fd = ::open(file.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    const int code = errno;
    struct stat link {};
    if (code == ENOENT && ::lstat(file.c_str(), &link) == 0 && S_ISLNK(link.st_mode))
      throw error(file.string() + ": is a symbolic link to a file that does not exist; name the "
                                  "file to write, or create it first");
    if (code == ENXIO && ::stat(file.c_str(), &link) == 0 && S_ISSOCK(link.st_mode))
      throw error(file.string() + ": is a socket, which cannot be written as a file; name a "
                                  "file, a device or a FIFO");
    if (code != ENOENT && code != ENOTDIR)
      fail(file, "cannot write", code);
    replace(file, file, text, nullptr); // a new file (or a missing directory, which it reports)
    return;
  }
  struct stat existing {};
  if (::fstat(fd, &existing) != 0)
    finish(file, fd, errno, "cannot write");
  // A device or a FIFO is written through: /dev/null takes it, /dev/full says why not.
  if (!S_ISREG(existing.st_mode)) {
    finish(file, fd, write_all(fd, text), "cannot write");
    return;
  }
  // Written into where a new file renamed over it would change what it is: another name would
  // be split from it, or another user's file would become ours.
  if (existing.st_nlink > 1 || (existing.st_uid != ::geteuid() && ::geteuid() != 0)) {
    rewrite_in_place(file, fd, text, existing);
    return;
  }
  // The one name of a regular file: a new file renamed over it. Through a symbolic link, over
  // its target (the link stays a link), where the kernel has just let us open it; in place where
  // its directory takes no new file.
  std::filesystem::path target = file;
  struct stat named {};
  if (::lstat(file.c_str(), &named) == 0 && S_ISLNK(named.st_mode)) {
    std::error_code ec;
    target = std::filesystem::canonical(file, ec);
    if (ec)
      finish(file, fd, ec.value(), "cannot follow its symbolic link");
    if (::stat(target.c_str(), &named) != 0 || named.st_dev != existing.st_dev ||
        named.st_ino != existing.st_ino) {
      ::close(fd);
      throw error(file.string() + ": its symbolic link changed while it was written; try again");
    }
  }
  const std::filesystem::path dir = target.has_parent_path() ? target.parent_path() : ".";
  if (::faccessat(AT_FDCWD, dir.c_str(), W_OK, AT_EACCESS) != 0) {
    rewrite_in_place(file, fd, text, existing);
    return;
  }
  ::close(fd);
  replace(file, target, text, &existing);
}

} // namespace roofline
