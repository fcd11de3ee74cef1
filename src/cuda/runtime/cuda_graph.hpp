// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <memory>
#include <type_traits>

namespace roofline::cuda::detail {

// Owners of a graph and of its instantiation. A destructor cannot report a failure: the
// deleters' status is dropped.
struct graph_deleter {
  void operator()(cudaGraph_t g) const noexcept { cudaGraphDestroy(g); }
};
struct graph_exec_deleter {
  void operator()(cudaGraphExec_t e) const noexcept { cudaGraphExecDestroy(e); }
};
using graph = std::unique_ptr<std::remove_pointer_t<cudaGraph_t>, graph_deleter>;
using graph_exec = std::unique_ptr<std::remove_pointer_t<cudaGraphExec_t>, graph_exec_deleter>;

/// Ends a capture that failed part-way, so that the stream can be used again: a stream left in
/// capture mode (even an invalidated one) refuses eager work, and its error would otherwise fail
/// the next CUDA call that checks for errors. Drops what was captured; does nothing to a stream
/// that is not capturing, but clears the last error all the same.
void abandon_capture(cudaStream_t stream) noexcept;

/// GPU work captured once from a stream and instantiated, to be replayed: a replay issues every
/// captured kernel with no host work between them, so timing replays gives the GPU's own time.
class captured_work {
public:
  /// Captures what `enqueue` issues on `stream` (which must not be capturing already) and
  /// instantiates it. Capture mode is thread-local: a call of this thread that is not
  /// capture-safe (a cudaMalloc, a synchronization) fails the capture instead of running. Throws
  /// cuda_error when capture or instantiation fails, and passes on whatever `enqueue` throws; the
  /// stream has left capture mode either way, with the capture's error cleared.
  captured_work(cudaStream_t stream, const std::function<void()> &enqueue);

  /// Enqueues one replay of the captured work on `stream`. Throws cuda_error.
  void launch(cudaStream_t stream) const;

private:
  graph m_graph;
  graph_exec m_exec;
};

} // namespace roofline::cuda::detail
