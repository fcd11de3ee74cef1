// SPDX-License-Identifier: Apache-2.0
#include "cli_runner.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <stdexcept>
#include <string>

namespace roofline::test {

namespace {

std::string read_all(int fd) {
  std::string text;
  char buffer[4096];
  ssize_t got;
  while ((got = read(fd, buffer, sizeof buffer)) > 0)
    text.append(buffer, static_cast<std::size_t>(got));
  return text;
}

} // namespace

std::string source_path(const std::string &relative) {
  return std::string(ROOFLINE_SOURCE_DIR) + "/" + relative;
}

cli_result run_cli(const std::vector<std::string> &args, const cli_setup &setup) {
  // stdout and stderr go to temporary files: no pipe can fill up and block the child.
  char out_name[] = "/tmp/roofline-cli-out-XXXXXX";
  char err_name[] = "/tmp/roofline-cli-err-XXXXXX";
  const int out_fd = mkstemp(out_name);
  const int err_fd = mkstemp(err_name);
  if (out_fd < 0 || err_fd < 0)
    throw std::runtime_error("mkstemp failed");
  const pid_t child = fork();
  if (child < 0)
    throw std::runtime_error("fork failed");
  if (child == 0) {
    if (setup.out == cli_setup::output::closed) {
      close(STDOUT_FILENO);
    } else if (setup.out == cli_setup::output::dev_full) {
      const int full = open("/dev/full", O_WRONLY);
      if (full < 0)
        _exit(126);
      dup2(full, STDOUT_FILENO);
    } else {
      dup2(out_fd, STDOUT_FILENO);
    }
    dup2(err_fd, STDERR_FILENO);
    if (setup.file_size_limit > 0) { // SIGXFSZ left as a shell leaves it: the CLI ignores it
      const rlimit limit{setup.file_size_limit, setup.file_size_limit};
      setrlimit(RLIMIT_FSIZE, &limit);
    }
    std::vector<char *> argv;
    std::string exe = ROOFLINE_ADVISE;
    argv.push_back(exe.data());
    std::vector<std::string> copies = args;
    for (std::string &arg : copies)
      argv.push_back(arg.data());
    argv.push_back(nullptr);
    setenv("NO_COLOR", "1", 1);
    // No machine's cached ceilings or calibration (a GPU machine has them): the typical host floor.
    setenv("ROOFLINE_CACHE_DIR", "/nonexistent/roofline-cli-tests", 1);
    for (const auto &[name, value] : setup.environment)
      if (value)
        setenv(name.c_str(), value->c_str(), 1);
      else
        unsetenv(name.c_str());
    execv(exe.c_str(), argv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(child, &status, 0);
  cli_result result;
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  lseek(out_fd, 0, SEEK_SET);
  lseek(err_fd, 0, SEEK_SET);
  result.out = read_all(out_fd);
  result.err = read_all(err_fd);
  close(out_fd);
  close(err_fd);
  unlink(out_name);
  unlink(err_name);
  return result;
}

} // namespace roofline::test
