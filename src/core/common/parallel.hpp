// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <algorithm>
#include <cstddef>
#include <exception>
#include <thread>
#include <vector>

namespace roofline::detail {

/// Runs body(i) for every i in [0, count), on the machine's cores when there are enough items to
/// repay starting threads (networks of thousands of layers; a small one stays on this thread).
/// Each body writes only its own slot of the result. When bodies throw, the exception of the
/// smallest i is rethrown, as a loop in order would have thrown it.
template <class Body> void parallel_for(std::size_t count, const Body &body) {
  constexpr std::size_t min_items_per_thread = 256;
  const std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t threads = std::min({cores, std::size_t{8}, count / min_items_per_thread});
  if (threads <= 1) {
    for (std::size_t i = 0; i < count; ++i)
      body(i);
    return;
  }
  // Interleaved items (i, i + threads, ...): neighbouring layers cost alike, so each thread
  // gets a fair share of the expensive ones.
  std::vector<std::exception_ptr> failures(threads);
  std::vector<std::size_t> failed_at(threads, count);
  const auto run = [&](std::size_t first) {
    for (std::size_t i = first; i < count; i += threads) {
      try {
        body(i);
      } catch (...) {
        failures[first] = std::current_exception();
        failed_at[first] = i;
        return;
      }
    }
  };
  std::vector<std::thread> workers;
  workers.reserve(threads - 1);
  std::size_t started = 1;
  try {
    for (; started < threads; ++started)
      workers.emplace_back(run, started);
  } catch (...) {
    // No thread to be had (system_error, bad_alloc): this one takes the shares of those that
    // did not start.
  }
  run(0);
  for (std::size_t t = started; t < threads; ++t)
    run(t);
  for (std::thread &worker : workers)
    worker.join();
  const auto first_failure = std::min_element(failed_at.begin(), failed_at.end());
  if (*first_failure < count)
    std::rethrow_exception(failures[static_cast<std::size_t>(first_failure - failed_at.begin())]);
}

} // namespace roofline::detail
