// SPDX-License-Identifier: Apache-2.0
#pragma once

// What the Ctrl-C tests (tests/cli/interrupt_test.cpp, tests/gpu/interrupt_test.cpp) share: a
// program run in the background to be signalled while it works, stdout on a pipe, stderr on a
// pseudo-terminal where one can be opened (so that roofline-advise draws its progress bar there),
// else on a pipe; and the count of a report's GEMMs by what became of them. Header-only: both test
// executables include it.

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <memory>
#include <poll.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace roofline::test {

class child_process {
public:
  /// Starts `argv[0]` with `argv`, the current environment plus `environment` ("NAME=value").
  child_process(std::vector<std::string> argv, const std::vector<std::string> &environment,
                bool want_terminal) {
    int out_pipe[2];
    REQUIRE(pipe(out_pipe) == 0);
    int err_child = -1;
    if (want_terminal) {
      m_err = posix_openpt(O_RDWR | O_NOCTTY);
      if (m_err >= 0 && grantpt(m_err) == 0 && unlockpt(m_err) == 0) {
        const char *name = ptsname(m_err);
        err_child = name ? open(name, O_RDWR | O_NOCTTY) : -1;
      }
      if (err_child < 0 && m_err >= 0) {
        close(m_err);
        m_err = -1;
      }
    }
    if (err_child < 0) {
      int err_pipe[2];
      REQUIRE(pipe(err_pipe) == 0);
      m_err = err_pipe[0];
      err_child = err_pipe[1];
    }
    m_terminal = isatty(err_child) != 0;
    std::vector<char *> pointers;
    for (std::string &arg : argv)
      pointers.push_back(arg.data());
    pointers.push_back(nullptr);
    std::vector<std::string> variables = environment;
    m_pid = fork();
    REQUIRE(m_pid >= 0);
    if (m_pid == 0) {
      dup2(out_pipe[1], STDOUT_FILENO);
      dup2(err_child, STDERR_FILENO);
      const int null = open("/dev/null", O_RDONLY);
      dup2(null, STDIN_FILENO);
      for (std::string &entry : variables)
        putenv(entry.data());
      signal(SIGINT, SIG_DFL);
      execv(pointers[0], pointers.data());
      _exit(127);
    }
    close(out_pipe[1]);
    close(err_child);
    m_out = out_pipe[0];
  }
  ~child_process() {
    if (m_pid > 0) {
      kill(m_pid, SIGKILL);
      waitpid(m_pid, nullptr, 0);
    }
    if (m_out >= 0)
      close(m_out);
    if (m_err >= 0)
      close(m_err);
  }
  child_process(const child_process &) = delete;
  child_process &operator=(const child_process &) = delete;

  /// Whether its stderr is a terminal.
  bool on_terminal() const { return m_terminal; }

  /// Reads both streams until `err` holds `wanted` (true), or both end or `seconds` pass (false).
  /// An empty `wanted`: reads until both end.
  bool read_until(const std::string &wanted, double seconds) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (wanted.empty() || err.find(wanted) == std::string::npos) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          end - std::chrono::steady_clock::now());
      if (m_out < 0 && m_err < 0)
        return wanted.empty();
      if (left.count() <= 0)
        return false;
      pollfd fds[2] = {{m_out, POLLIN, 0}, {m_err, POLLIN, 0}};
      if (poll(fds, 2, static_cast<int>(std::min<long long>(left.count(), 1000))) < 0)
        return false;
      drain(fds[0], m_out, out);
      drain(fds[1], m_err, err);
    }
    return true;
  }

  /// Reads everything to the end and waits for the process (killed after `seconds`): its wait
  /// status (WIFEXITED, WEXITSTATUS, WIFSIGNALED, WTERMSIG).
  int finish(double seconds) {
    read_until("", seconds);
    int status = 0;
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (waitpid(m_pid, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > end) {
        kill(m_pid, SIGKILL);
        waitpid(m_pid, &status, 0);
        break;
      }
      usleep(10000);
    }
    m_pid = -1;
    return status;
  }

  /// Sends SIGINT, as Ctrl-C on its terminal would.
  void interrupt() const { kill(m_pid, SIGINT); }

  std::string out, err; ///< what it wrote so far

private:
  static void drain(const pollfd &p, int &fd, std::string &text) {
    if (fd < 0 || (p.revents & (POLLIN | POLLHUP | POLLERR)) == 0)
      return;
    char buffer[65536];
    const ssize_t got = read(fd, buffer, sizeof buffer);
    if (got > 0) {
      text.append(buffer, static_cast<std::size_t>(got));
    } else { // end of file; a terminal whose other side closed reads EIO
      close(fd);
      fd = -1;
    }
  }

  pid_t m_pid = -1;
  int m_out = -1, m_err = -1;
  bool m_terminal = false;
};

/// The progress bar once one GEMM is done ("[#.....] 1/36 fc1").
inline constexpr const char *first_gemm_done = "] 1/";

/// `argv` run with `environment`, SIGINT once one GEMM is done: sent from outside where its stderr
/// is a terminal (once the progress bar shows that GEMM, `seconds` at most), else raised by the
/// child itself, as `self_interrupt` (a "NAME=value" added to its environment) asks its
/// measurement layer to.
inline std::unique_ptr<child_process> interrupted_run(const std::vector<std::string> &argv,
                                                      std::vector<std::string> environment,
                                                      const std::string &self_interrupt,
                                                      double seconds) {
  auto run = std::make_unique<child_process>(argv, environment, true);
  if (run->on_terminal()) {
    INFO("stderr: " << run->err);
    REQUIRE_MESSAGE(run->read_until(first_gemm_done, seconds),
                    "no progress bar showing one GEMM done");
    run->interrupt();
    return run;
  }
  MESSAGE("no pseudo-terminal: SIGINT raised by the child (" << self_interrupt << ")");
  run.reset();
  environment.push_back(self_interrupt);
  return std::make_unique<child_process>(argv, environment, false);
}

/// Waits for `run` to end (killed after `seconds`) and requires that it exited rather than died of
/// a signal: its exit status.
inline int exit_status(child_process &run, double seconds) {
  const int status = run.finish(seconds);
  INFO("stderr: " << run.err);
  REQUIRE(WIFEXITED(status));
  return WEXITSTATUS(status);
}

/// A JSON report's GEMMs (ops with a `measured` object) by what became of them.
struct gemm_counts {
  int measured = 0;    ///< status "measured"
  int not_reached = 0; ///< skipped because the run was interrupted before them
  int all = 0;
};

inline gemm_counts count_gemms(const nlohmann::json &report) {
  gemm_counts c;
  for (const nlohmann::json &o : report.at("ops")) {
    const nlohmann::json &m = o.at("measured");
    if (m.is_null() || o.at("kind") != "gemm") // memory-bound ops are measured too
      continue;
    ++c.all;
    c.measured += m.at("status") == "measured" ? 1 : 0;
    c.not_reached +=
        m.at("status") == "skipped" &&
                m.at("note").get<std::string>().find("interrupted before it") != std::string::npos
            ? 1
            : 0;
  }
  return c;
}

/// Whether one of the report's notes says where the run was interrupted.
inline bool notes_interruption(const nlohmann::json &report) {
  for (const nlohmann::json &note : report.at("notes"))
    if (note.get<std::string>().find("interrupted: stopped after") != std::string::npos)
      return true;
  return false;
}

} // namespace roofline::test
