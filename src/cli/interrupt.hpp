// SPDX-License-Identifier: Apache-2.0
#pragma once

// Ctrl-C during a measurement (--measure, calibrate): the first SIGINT asks the run to stop after
// the op in flight, so that what was measured is still written; the second takes SIGINT's default
// action and ends the process at once. Header-only: a handler and its flag, nothing to link.

#include <atomic>
#include <csignal>
#include <cstring>
#include <unistd.h>

namespace roofline::cli {

/// A command stopped by SIGINT exits with this status (128 + SIGINT, as a shell reports it).
inline constexpr int exit_interrupted = 130;

namespace detail {

// Only lock-free atomics may be touched by a signal handler.
static_assert(std::atomic<bool>::is_always_lock_free);
inline std::atomic<bool> interrupt_seen{false};
inline const char *interrupt_message = ""; // set before the handler is installed

inline void on_interrupt(int) {
  interrupt_seen.store(true);
  // write(2) is async-signal-safe; its result cannot be acted on here.
  const ssize_t written = write(STDERR_FILENO, interrupt_message, std::strlen(interrupt_message));
  static_cast<void>(written);
}

} // namespace detail

/// From now on, SIGINT sets interrupted() and says on stderr that the run stops after the op in
/// flight; the handler then gives SIGINT back its default action, so a second one kills at once.
inline void stop_on_interrupt() {
  // On a terminal the progress bar's line is cleared first.
  detail::interrupt_message =
      isatty(STDERR_FILENO) ? "\r\033[Kroofline-advise: interrupted: stopping after the op in "
                              "flight (Ctrl-C again to quit at once)\n"
                            : "roofline-advise: interrupted: stopping after the op in flight "
                              "(Ctrl-C again to quit at once)\n";
  struct sigaction action {};
  action.sa_handler = detail::on_interrupt;
  sigemptyset(&action.sa_mask);
  // SA_RESETHAND: the second SIGINT takes the default action. SA_RESTART: system calls in flight
  // (the CUDA driver's) carry on rather than fail with EINTR.
  action.sa_flags = SA_RESETHAND | SA_RESTART;
  sigaction(SIGINT, &action, nullptr);
}

/// Whether SIGINT arrived since stop_on_interrupt(). Lock-free: safe from any thread.
inline bool interrupted() {
  return detail::interrupt_seen.load();
}

} // namespace roofline::cli
