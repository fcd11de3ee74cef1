// SPDX-License-Identifier: Apache-2.0
// write_file_atomically: the file whole or not at all, and never a temporary file left behind,
// whatever fails and whenever a signal that ends the process arrives; and never in place of
// anything but a regular file (issue 27, part 1): a device or a FIFO is written through, a
// symbolic link's target is written, a file keeps its mode, owner and hard links.
#include "roofline/common/atomic_file.hpp"
#include "roofline/common/error.hpp"

#include <doctest/doctest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace fs = std::filesystem;
using namespace roofline;

namespace {

/// A fresh directory, removed at the end.
struct scratch_dir {
  scratch_dir() {
    std::string pattern = (fs::temp_directory_path() / "roofline-atomic-XXXXXX").string();
    REQUIRE(mkdtemp(pattern.data()) != nullptr);
    path = pattern;
  }
  ~scratch_dir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  /// Whether anything but `name` is in it.
  bool only(const std::string &name) const {
    for (const fs::directory_entry &entry : fs::directory_iterator(path))
      if (entry.path().filename() != name)
        return false;
    return true;
  }
  fs::path path;
};

std::string read_text(const fs::path &file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

struct stat status_of(const fs::path &file) {
  struct stat st {};
  REQUIRE(::lstat(file.c_str(), &st) == 0);
  return st;
}

bool is_root() {
  return ::geteuid() == 0;
}

/// A character device node `name` in `dir` with the numbers of /dev/null (1, 3) or /dev/full (1,
/// 7), where we may make one (root, in a place that allows devices); else "".
fs::path device_node(const scratch_dir &dir, const std::string &name, unsigned minor) {
  const fs::path node = dir.path / name;
  if (::mknod(node.c_str(), S_IFCHR | 0666, makedev(1, minor)) != 0)
    return {};
  // A file system mounted nodev has the node but refuses to open it.
  const int fd = ::open(node.c_str(), O_WRONLY);
  if (fd < 0)
    return {};
  ::close(fd);
  return node;
}

} // namespace

TEST_CASE("a name of 255 bytes is written, with no temporary file left") {
  scratch_dir dir;
  const std::string name(255, 'n');
  write_file_atomically(dir.path / name, "text");
  CHECK(fs::file_size(dir.path / name) == 4);
  CHECK(dir.only(name));
  CHECK_THROWS_WITH_AS(write_file_atomically(dir.path / (name + "x"), "text"),
                       doctest::Contains("File name too long"), error);
  CHECK(dir.only(name));
}

TEST_CASE("SIGTERM while a large file is written leaves it whole or absent, never a temporary") {
  // Before the fix, a signal during the write killed the process with the .roofline-XXXXXX
  // file beside the destination. Whenever the signal lands, no temporary file may remain.
  for (const int delay_ms : {0, 5, 20, 60}) {
    CAPTURE(delay_ms);
    scratch_dir dir;
    const std::string text(64 << 20, 'x');
    const pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      try {
        write_file_atomically(dir.path / "big.txt", text);
      } catch (...) {
        _exit(3);
      }
      pause(); // the signal ends it
      _exit(0);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    kill(child, SIGTERM);
    int status = 0;
    waitpid(child, &status, 0);
    CHECK(WIFSIGNALED(status));
    CHECK(dir.only("big.txt"));
    if (fs::exists(dir.path / "big.txt"))
      CHECK(fs::file_size(dir.path / "big.txt") == text.size());
  }
}

TEST_CASE("a replaced file keeps its mode; a new one is 0666 less the umask") {
  // Before: always 0644, a private 0600 report became readable by everyone, and a user's umask
  // 077 was ignored.
  scratch_dir dir;
  const fs::path file = dir.path / "r.json";
  const mode_t previous = ::umask(077);
  write_file_atomically(dir.path / "private.json", "new");
  ::umask(022);
  write_file_atomically(file, "new");
  ::umask(previous);
  CHECK((status_of(dir.path / "private.json").st_mode & 07777) == 0600);
  CHECK((status_of(file).st_mode & 07777) == 0644);
  fs::remove(dir.path / "private.json");
  for (const mode_t mode : {0600, 0640, 0444, 0755}) {
    CAPTURE(mode);
    REQUIRE(::chmod(file.c_str(), mode) == 0);
    if (mode == 0444 && !is_root()) {
      // Not ours to write: refused, as any program is refused, and left as it was.
      CHECK_THROWS_WITH_AS(write_file_atomically(file, "private"),
                           doctest::Contains("cannot write: Permission denied"), error);
      CHECK(read_text(file) == "new");
      continue;
    }
    write_file_atomically(file, "private");
    CHECK(read_text(file) == "private");
    CHECK((status_of(file).st_mode & 07777) == mode);
  }
  CHECK(dir.only("r.json"));
}

TEST_CASE("a replaced file keeps its owner where the system allows") {
  scratch_dir dir;
  const fs::path file = dir.path / "r.json";
  write_file_atomically(file, "old");
  if (!is_root()) {
    // A user who is not root cannot give a file away, nor write one they do not own (above).
    MESSAGE("not root: a file owned by another user cannot be made here; skipped");
    return;
  }
  // Before: root's rewrite made the user's report root's.
  REQUIRE(::chown(file.c_str(), 4321, 4322) == 0);
  write_file_atomically(file, "new");
  CHECK(read_text(file) == "new");
  CHECK(status_of(file).st_uid == 4321);
  CHECK(status_of(file).st_gid == 4322);
}

TEST_CASE("a file with other hard links is rewritten in place: every name sees the new text") {
  // Before: renamed over, the other name kept the old text and the two were split.
  scratch_dir dir;
  const fs::path file = dir.path / "r.json", other = dir.path / "copy.json";
  write_file_atomically(file, "a longer old text");
  REQUIRE(::chmod(file.c_str(), 0600) == 0);
  REQUIRE(::link(file.c_str(), other.c_str()) == 0);
  const ino_t inode = status_of(file).st_ino;
  write_file_atomically(file, "new"); // shorter: the old tail is cut
  CHECK(read_text(other) == "new");
  CHECK(status_of(file).st_ino == inode);
  CHECK(status_of(file).st_nlink == 2);
  CHECK((status_of(file).st_mode & 07777) == 0600);
  write_file_atomically(other, std::string(10000, 'x')); // longer
  CHECK(read_text(file) == std::string(10000, 'x'));

  // No room for the new text (a file size limit): refused before a byte of the old one changes.
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    signal(SIGXFSZ, SIG_IGN);
    const rlimit limit{20000, 20000};
    setrlimit(RLIMIT_FSIZE, &limit);
    try {
      write_file_atomically(file, std::string(30000, 'y'));
    } catch (const error &e) {
      _exit(std::strstr(e.what(), "File too large") ? 0 : 4);
    }
    _exit(3);
  }
  int status = 0;
  waitpid(child, &status, 0);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(read_text(other) == std::string(10000, 'x'));
  CHECK(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator{}) == 2);
}

TEST_CASE("a symbolic link is followed: its target gets the text, the link stays a link") {
  // Before: the link was replaced by a regular file and its target left stale.
  scratch_dir dir;
  fs::create_directory(dir.path / "reports");
  const fs::path target = dir.path / "reports" / "r.json", link = dir.path / "latest.json";
  write_file_atomically(target, "old");
  REQUIRE(::chmod(target.c_str(), 0600) == 0);
  fs::create_symlink("reports/r.json", link);
  write_file_atomically(link, "new");
  CHECK(fs::is_symlink(link));
  CHECK(fs::read_symlink(link) == "reports/r.json");
  CHECK(read_text(target) == "new");
  CHECK((status_of(target).st_mode & 07777) == 0600);
  // A link to nothing is refused plainly, and stays.
  fs::create_symlink("reports/missing.json", dir.path / "dangling.json");
  CHECK_THROWS_WITH_AS(write_file_atomically(dir.path / "dangling.json", "text"),
                       doctest::Contains("a symbolic link to a file that does not exist"), error);
  CHECK(fs::is_symlink(dir.path / "dangling.json"));
  CHECK_FALSE(fs::exists(dir.path / "reports" / "missing.json"));
}

TEST_CASE("a FIFO is written through to its reader, and stays a FIFO") {
  // Before: the FIFO was replaced by a regular file and its reader got nothing.
  scratch_dir dir;
  const fs::path fifo = dir.path / "fifo.json";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // Open before the write (without waiting for a writer), so that the write does not wait.
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  REQUIRE(reader >= 0);
  write_file_atomically(fifo, "through the pipe");
  char buffer[64] = {};
  const ssize_t n = ::read(reader, buffer, sizeof buffer);
  ::close(reader);
  CHECK(std::string(buffer, n > 0 ? static_cast<std::size_t>(n) : 0) == "through the pipe");
  CHECK(S_ISFIFO(status_of(fifo).st_mode));
  CHECK(dir.only("fifo.json"));
}

TEST_CASE("a device is written through: the null device takes it, the full one fails with the "
          "OS's reason; the node stays") {
  // Before, as root: the node was replaced by a regular file, exit 0 (/dev/null itself included).
  scratch_dir dir;
  fs::path null = device_node(dir, "null", 3), full = device_node(dir, "full", 7);
  if (null.empty() || full.empty()) {
    if (is_root()) { // never risk the system's own nodes as root: a failure would replace them
      MESSAGE("root, but no device nodes can be made here; skipped");
      return;
    }
    // Not root: /dev/null and /dev/full themselves, which we could not clobber anyway (before,
    // the write failed there: no temporary file can be made in /dev).
    null = "/dev/null";
    full = "/dev/full";
  }
  write_file_atomically(null, "nothing");
  CHECK(S_ISCHR(status_of(null).st_mode));
  const std::string reason = full.string() + ": cannot write: No space left on device";
  CHECK_THROWS_WITH_AS(write_file_atomically(full, "nothing"), doctest::Contains(reason.c_str()),
                       error);
  CHECK(S_ISCHR(status_of(full).st_mode));
}

TEST_CASE("a socket is refused plainly, and stays") {
  scratch_dir dir;
  const fs::path path = dir.path / "socket.json";
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  REQUIRE(path.string().size() < sizeof address.sun_path);
  std::strcpy(address.sun_path, path.c_str());
  REQUIRE(::bind(fd, reinterpret_cast<const sockaddr *>(&address), sizeof address) == 0);
  CHECK_THROWS_WITH_AS(write_file_atomically(path, "text"), doctest::Contains("is a socket"),
                       error);
  ::close(fd);
  CHECK(S_ISSOCK(status_of(path).st_mode));
  CHECK(dir.only("socket.json"));
}

TEST_CASE("a cache entry replaces whatever is there: a planted link or FIFO is not followed") {
  // A cache directory is ours: a link there pointing elsewhere must not make us write elsewhere,
  // a FIFO must not make us wait for a reader.
  scratch_dir dir;
  const fs::path victim = dir.path / "victim.txt", cache = dir.path / "cache" / "entry.json";
  write_file_atomically(victim, "keep");
  fs::create_directory(cache.parent_path());
  replace_file_atomically(cache, "first");
  fs::remove(cache);
  fs::create_symlink(victim, cache);
  replace_file_atomically(cache, "second");
  CHECK_FALSE(fs::is_symlink(cache));
  CHECK(read_text(cache) == "second");
  CHECK(read_text(victim) == "keep");
  fs::remove(cache);
  REQUIRE(::mkfifo(cache.c_str(), 0600) == 0);
  const mode_t previous = ::umask(022);
  replace_file_atomically(cache, "third");
  ::umask(previous);
  CHECK(fs::is_regular_file(cache));
  CHECK(read_text(cache) == "third");
  CHECK((status_of(cache).st_mode & 07777) == 0644);
}
