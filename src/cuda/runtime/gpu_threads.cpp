// SPDX-License-Identifier: Apache-2.0
#include "gpu_threads.hpp"

#include "roofline/cuda/detail/cuda_check.hpp"

#include <algorithm>

namespace roofline::cuda::detail {

gpu_threads::gpu_threads(std::size_t gpus, waiting how) : m_waiting(how), m_errors(gpus) {
  try {
    for (std::size_t g = 0; g < gpus; ++g)
      m_threads.emplace_back([this, g] { work(g); });
  } catch (...) {
    stop();
    throw;
  }
}

gpu_threads::~gpu_threads() {
  stop();
}

void gpu_threads::run(const std::function<void(std::size_t)> &job) {
  m_job = &job;
  m_failed.store(false, std::memory_order_relaxed);
  m_done.store(0, std::memory_order_relaxed);
  m_generation.fetch_add(1, std::memory_order_release); // hands out m_job
  const auto finished = [&] { return m_done.load(std::memory_order_acquire) >= m_threads.size(); };
  if (m_waiting == waiting::block) {
    notify();
    std::unique_lock<std::mutex> lock(m_mutex);
    m_changed.wait(lock, finished);
  } else {
    while (!finished())
      std::this_thread::yield();
  }
  std::exception_ptr first;
  for (std::exception_ptr &error : m_errors)
    if (error && !first)
      first = error;
  std::fill(m_errors.begin(), m_errors.end(), nullptr);
  if (first)
    std::rethrow_exception(first);
}

void gpu_threads::wait_for(cudaEvent_t event) const {
  cudaError_t status = cudaSuccess;
  while ((status = cudaEventQuery(event)) == cudaErrorNotReady) {
    cudaGetLastError(); // "not ready" is no error: keep it from a later call's check
    if (m_failed.load(std::memory_order_acquire))
      throw abandoned{};
    std::this_thread::yield();
  }
  ROOFLINE_CUDA_CHECK(status);
}

void gpu_threads::work(std::size_t gpu) {
  std::uint64_t seen = 0;
  for (;;) {
    std::uint64_t generation = 0;
    const auto handed_out = [&] {
      return (generation = m_generation.load(std::memory_order_acquire)) != seen;
    };
    const auto stopping = [&] { return m_stop.load(std::memory_order_acquire); };
    if (m_waiting == waiting::block) {
      std::unique_lock<std::mutex> lock(m_mutex);
      m_changed.wait(lock, [&] { return handed_out() || stopping(); });
      if (generation == seen)
        return; // stopping
    } else {
      while (!handed_out()) {
        if (stopping())
          return;
        std::this_thread::yield();
      }
    }
    seen = generation;
    try {
      ROOFLINE_CUDA_CHECK(cudaSetDevice(static_cast<int>(gpu)));
      (*m_job)(gpu);
    } catch (const abandoned &) {
    } catch (...) {
      m_errors[gpu] = std::current_exception();
      m_failed.store(true, std::memory_order_release);
    }
    m_done.fetch_add(1, std::memory_order_acq_rel);
    if (m_waiting == waiting::block)
      notify();
  }
}

void gpu_threads::notify() {
  { const std::lock_guard<std::mutex> lock(m_mutex); } // a waiter is either waiting or will see it
  m_changed.notify_all();
}

void gpu_threads::stop() {
  m_stop.store(true, std::memory_order_release);
  if (m_waiting == waiting::block)
    notify();
  for (std::thread &thread : m_threads)
    thread.join();
}

} // namespace roofline::cuda::detail
