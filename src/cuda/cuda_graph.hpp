// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <utility>

namespace roofline::cuda::detail {

/// Owns one cudaGraph_t.
class graph {
public:
  graph() = default;
  explicit graph(cudaGraph_t g) noexcept : m_graph(g) {}
  graph(graph &&other) noexcept : m_graph(std::exchange(other.m_graph, nullptr)) {}
  graph &operator=(graph &&other) noexcept {
    std::swap(m_graph, other.m_graph);
    return *this;
  }
  graph(const graph &) = delete;
  graph &operator=(const graph &) = delete;
  ~graph() {
    // In a destructor: a failure cannot be reported, and must not throw.
    if (m_graph)
      cudaGraphDestroy(m_graph);
  }

  cudaGraph_t get() const noexcept { return m_graph; }

private:
  cudaGraph_t m_graph = nullptr;
};

/// Owns one cudaGraphExec_t (an instantiated graph).
class graph_exec {
public:
  graph_exec() = default;
  explicit graph_exec(cudaGraphExec_t e) noexcept : m_exec(e) {}
  graph_exec(graph_exec &&other) noexcept : m_exec(std::exchange(other.m_exec, nullptr)) {}
  graph_exec &operator=(graph_exec &&other) noexcept {
    std::swap(m_exec, other.m_exec);
    return *this;
  }
  graph_exec(const graph_exec &) = delete;
  graph_exec &operator=(const graph_exec &) = delete;
  ~graph_exec() {
    if (m_exec)
      cudaGraphExecDestroy(m_exec); // as ~graph: nothing to report a failure to
  }

  cudaGraphExec_t get() const noexcept { return m_exec; }

private:
  cudaGraphExec_t m_exec = nullptr;
};

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
