// SPDX-License-Identifier: Apache-2.0
#include "cuda_graph.hpp"

#include "roofline/cuda/detail/cuda_check.hpp"

namespace roofline::cuda::detail {

void abandon_capture(cudaStream_t stream) noexcept {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &status) == cudaSuccess &&
      status != cudaStreamCaptureStatusNone) {
    cudaGraph_t partial = nullptr;
    cudaStreamEndCapture(stream, &partial);
    if (partial)
      cudaGraphDestroy(partial);
  }
  cudaGetLastError();
}

captured_work::captured_work(cudaStream_t stream, const std::function<void()> &enqueue) {
  ROOFLINE_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  try {
    enqueue();
  } catch (...) {
    abandon_capture(stream);
    throw;
  }
  cudaGraph_t captured = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(stream, &captured);
  m_graph.reset(captured); // owned before the check, so that it is freed when the check throws
  if (ended != cudaSuccess) {
    abandon_capture(stream); // clears the error; the stream left capture mode with EndCapture
    ROOFLINE_CUDA_CHECK(ended);
  }
  cudaGraphExec_t exec = nullptr;
  const cudaError_t instantiated = cudaGraphInstantiateWithFlags(&exec, m_graph.get(), 0);
  m_exec.reset(exec);
  if (instantiated != cudaSuccess) {
    cudaGetLastError();
    ROOFLINE_CUDA_CHECK(instantiated);
  }
}

void captured_work::launch(cudaStream_t stream) const {
  ROOFLINE_CUDA_CHECK(cudaGraphLaunch(m_exec.get(), stream));
}

} // namespace roofline::cuda::detail
