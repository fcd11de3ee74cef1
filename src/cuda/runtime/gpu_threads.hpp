// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cuda_runtime_api.h>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace roofline::cuda::detail {

/// One host thread per GPU, each with its GPU current, running the jobs the owning thread hands
/// out in lockstep: every thread starts a job as soon as it is handed out, and run() returns when
/// all have finished it. The one way this layer drives every GPU of the host at once (NCCL's
/// thread-per-GPU all-reduces, measure_options::every_gpu).
class gpu_threads {
public:
  /// How the threads wait: for a job to be handed out, and the owner for all to finish it.
  enum class waiting {
    /// Spinning (yielding), where a condition variable's wake-up would start one GPU's thread
    /// tens of microseconds after the other's, and the GPU that starts first would count the wait
    /// for its peer in its time: for short jobs timed against each other.
    spin,
    /// Blocked on a condition variable, using no CPU: for long jobs (a whole measurement), where a
    /// spinning thread would take a core from the host threads being timed.
    block,
  };

  /// Starts `gpus` threads, GPU g's thread for CUDA's ordinal g. Throws std::system_error when a
  /// thread cannot be started (those started are stopped first).
  explicit gpu_threads(std::size_t gpus, waiting how = waiting::spin);
  ~gpu_threads();
  gpu_threads(const gpu_threads &) = delete;
  gpu_threads &operator=(const gpu_threads &) = delete;

  /// Runs job(g) on GPU g's thread, with GPU g current (cudaSetDevice), for every GPU at once and
  /// waits for all of them. Rethrows the first error a job threw (by GPU number); a thread whose
  /// peer failed stops waiting for it (wait_for) and adds no error of its own.
  void run(const std::function<void(std::size_t)> &job);

  /// Waits, on a job's thread, for `event` to complete. Polls rather than blocks, so that a
  /// thread whose peer's job failed (an all-reduce the peer never joined, which would never end)
  /// gives up. Throws cuda_error.
  void wait_for(cudaEvent_t event) const;

private:
  struct abandoned {}; ///< thrown by wait_for when a peer failed: that peer's error is reported

  void work(std::size_t gpu);
  void stop();
  /// Wakes the threads blocked on m_changed (waiting::block) after an atomic changed.
  void notify();

  waiting m_waiting;
  std::vector<std::thread> m_threads;
  std::vector<std::exception_ptr> m_errors; ///< the last run's, GPU g's at g
  const std::function<void(std::size_t)> *m_job = nullptr;
  std::atomic<std::uint64_t> m_generation{0}; ///< bumped once a job, to hand it out
  std::atomic<std::size_t> m_done{0};         ///< threads that have finished the current job
  std::atomic<bool> m_failed{false};          ///< a job of the current run has thrown
  std::atomic<bool> m_stop{false};
  std::mutex m_mutex; ///< with m_changed, for waiting::block only
  std::condition_variable m_changed;
};

} // namespace roofline::cuda::detail
