// SPDX-License-Identifier: Apache-2.0
// roofline-advise: the process around the command line (app.hpp's run): standard streams, signals,
// and the one place errors are printed.
#include "app.hpp"
#include "option_words.hpp"
#include "output.hpp"

#include "roofline/common/error.hpp"
#include "roofline/output/output_format.hpp"

#include <cerrno>
#include <csignal>
#include <exception>
#include <fcntl.h>
#include <iostream>
#include <unistd.h>

int main(int argc, char **argv) {
  using namespace roofline::cli;
  // A standard stream closed at start (`>&-`) would be the next file opened, and a report meant
  // for stdout would land in it: hold it with /dev/null, and remember stdout's.
  for (const int fd : {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO})
    if (::fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
      if (::open("/dev/null", fd == STDIN_FILENO ? O_RDONLY : O_WRONLY) != fd)
        return exit_failure;
      if (fd == STDOUT_FILENO)
        mark_stdout_closed();
    }
  // A write past the file size limit (ulimit -f) fails with EFBIG, said and cleaned up, instead
  // of killing the process with a temporary file left beside the report.
  std::signal(SIGXFSZ, SIG_IGN);
  // Messages name files and layers: no control sequence of theirs reaches the terminal.
  try {
    return run(argc, argv);
  } catch (const roofline::input_error &e) {
    std::cerr << "roofline-advise: error: " << roofline::printable_text(in_cli_words(e.what()))
              << '\n';
    return exit_input_error;
  } catch (const std::exception &e) {
    std::cerr << "roofline-advise: error: " << roofline::printable_text(in_cli_words(e.what()))
              << '\n';
    return exit_failure;
  }
}
