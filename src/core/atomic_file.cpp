// SPDX-License-Identifier: Apache-2.0
#include "roofline/atomic_file.hpp"

#include "roofline/error.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
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

} // namespace

void write_file_atomically(const std::filesystem::path &file, std::string_view text,
                           bool create_directories) {
  const std::filesystem::path dir = file.has_parent_path() ? file.parent_path() : ".";
  if (create_directories) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec)
      fail(file, "cannot create its directory", ec.value());
  }
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
  for (std::size_t written = 0; written < text.size();) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      abandon("cannot write", n < 0 ? errno : EIO);
    written += static_cast<std::size_t>(n);
  }
  // mkstemp makes the file private; a report or a cache is readable like most new files (reading
  // the umask means setting it, which is not safe beside other threads).
  if (::fchmod(fd, 0644) != 0)
    abandon("cannot set its permissions", errno);
  if (::close(fd) != 0) {
    const int code = errno;
    ::unlink(temporary.c_str());
    fail(file, "cannot write", code);
  }
  if (std::rename(temporary.c_str(), file.c_str()) != 0) {
    const int code = errno;
    ::unlink(temporary.c_str());
    fail(file, "cannot write", code);
  }
}

} // namespace roofline
