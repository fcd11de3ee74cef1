// SPDX-License-Identifier: Apache-2.0
#include "event_timer.hpp"

#include "cuda_check.hpp"

#include <algorithm>
#include <vector>

namespace roofline::cuda::detail {

namespace {

struct event_pair {
  cudaEvent_t start = nullptr, stop = nullptr;
  event_pair() {
    ROOFLINE_CUDA_CHECK(cudaEventCreate(&start));
    ROOFLINE_CUDA_CHECK(cudaEventCreate(&stop));
  }
  ~event_pair() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
  event_pair(const event_pair &) = delete;
  event_pair &operator=(const event_pair &) = delete;
};

} // namespace

run_timing time_runs(cudaStream_t stream, int warmup, int runs,
                     const std::function<void()> &launch) {
  for (int i = 0; i < warmup; ++i)
    launch();
  ROOFLINE_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<event_pair> events(static_cast<std::size_t>(runs));
  for (event_pair &e : events) {
    ROOFLINE_CUDA_CHECK(cudaEventRecord(e.start, stream));
    launch();
    ROOFLINE_CUDA_CHECK(cudaEventRecord(e.stop, stream));
  }
  ROOFLINE_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<double> seconds;
  for (const event_pair &e : events) {
    float ms = 0;
    ROOFLINE_CUDA_CHECK(cudaEventElapsedTime(&ms, e.start, e.stop));
    seconds.push_back(ms * 1e-3);
  }
  std::sort(seconds.begin(), seconds.end());
  run_timing timing;
  timing.runs = runs;
  timing.min_s = seconds.front();
  timing.max_s = seconds.back();
  const std::size_t middle = seconds.size() / 2;
  timing.median_s =
      seconds.size() % 2 ? seconds[middle] : 0.5 * (seconds[middle - 1] + seconds[middle]);
  return timing;
}

} // namespace roofline::cuda::detail
