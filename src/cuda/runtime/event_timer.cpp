// SPDX-License-Identifier: Apache-2.0
#include "event_timer.hpp"

#include "roofline/common/median.hpp"
#include "roofline/cuda/detail/cuda_check.hpp"
#include "roofline/cuda/detail/cuda_owners.hpp"

#include <algorithm>
#include <vector>

namespace roofline::cuda::detail {

namespace {

struct event_pair {
  event start, stop;
};

} // namespace

run_timing time_runs(cudaStream_t stream, int warmup, int runs,
                     const std::function<void()> &launch) {
  for (int i = 0; i < warmup; ++i)
    launch();
  ROOFLINE_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<event_pair> events(static_cast<std::size_t>(runs));
  for (event_pair &e : events) {
    ROOFLINE_CUDA_CHECK(cudaEventRecord(e.start.get(), stream));
    launch();
    ROOFLINE_CUDA_CHECK(cudaEventRecord(e.stop.get(), stream));
  }
  ROOFLINE_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<double> seconds;
  for (const event_pair &e : events) {
    float ms = 0;
    ROOFLINE_CUDA_CHECK(cudaEventElapsedTime(&ms, e.start.get(), e.stop.get()));
    seconds.push_back(ms * 1e-3);
  }
  run_timing timing;
  timing.runs = runs;
  timing.min_s = *std::min_element(seconds.begin(), seconds.end());
  timing.max_s = *std::max_element(seconds.begin(), seconds.end());
  timing.median_s = median(std::move(seconds));
  return timing;
}

} // namespace roofline::cuda::detail
