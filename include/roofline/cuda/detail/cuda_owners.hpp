// SPDX-License-Identifier: Apache-2.0
#pragma once
// The owners of the CUDA objects this layer makes: a stream, an event, a cuBLASLt handle, and the
// calling thread's current GPU. Each creates its object (checked: cuda_error when that fails) and
// destroys it once, on every path; a destructor cannot report a failure, so its status is
// dropped. Memory is owned by device_buffer (device_buffer.hpp), graphs by cuda_graph.hpp's.

#include "roofline/cuda/detail/cuda_check.hpp"

#include <cstddef>
#include <utility>

namespace roofline::cuda::detail {

/// cuBLASLt's workspace for one GEMM plan, bytes: cuBLAS's recommendation for Hopper, and what
/// every runner of ours (the measurer, the ceiling probe, the benches) gives a plan.
inline constexpr std::size_t lt_workspace_bytes = std::size_t{32} << 20;

/// Sole owner of one `Handle`, released with `destroy`; movable, not copyable. Null when moved
/// from.
template <class Handle, auto destroy> class cuda_owner {
public:
  cuda_owner(const cuda_owner &) = delete;
  cuda_owner &operator=(const cuda_owner &) = delete;
  cuda_owner(cuda_owner &&other) noexcept : m_handle(std::exchange(other.m_handle, nullptr)) {}
  cuda_owner &operator=(cuda_owner &&other) noexcept {
    std::swap(m_handle, other.m_handle);
    return *this;
  }
  ~cuda_owner() {
    if (m_handle)
      destroy(m_handle); // in a destructor: nothing to report to
  }

  Handle get() const noexcept { return m_handle; }

protected:
  cuda_owner() = default;
  Handle m_handle = nullptr; ///< set by the derived constructor once created
};

/// A CUDA stream on the current GPU: non-blocking (no implicit synchronisation with the legacy
/// default stream) unless `flags` say otherwise. Throws cuda_error.
class stream : public cuda_owner<cudaStream_t, cudaStreamDestroy> {
public:
  stream() : stream(cudaStreamNonBlocking) {}
  explicit stream(unsigned flags) {
    ROOFLINE_CUDA_CHECK(cudaStreamCreateWithFlags(&m_handle, flags));
  }
};

/// A CUDA event on the current GPU, timing enabled unless `flags` say otherwise. Throws
/// cuda_error.
class event : public cuda_owner<cudaEvent_t, cudaEventDestroy> {
public:
  event() : event(cudaEventDefault) {}
  explicit event(unsigned flags) {
    ROOFLINE_CUDA_CHECK(cudaEventCreateWithFlags(&m_handle, flags));
  }
};

/// A cuBLASLt handle. Throws cuda_error.
class lt_handle : public cuda_owner<cublasLtHandle_t, cublasLtDestroy> {
public:
  lt_handle() { ROOFLINE_CUDA_CHECK(cublasLtCreate(&m_handle)); }
};

/// Makes `device` (CUDA's ordinal) the calling thread's current GPU and returns it: for a member
/// initialiser that must run before the members that create objects on that GPU. Throws
/// cuda_error.
inline int make_current(int device) {
  ROOFLINE_CUDA_CHECK(cudaSetDevice(device));
  return device;
}

/// Keeps the calling thread's current GPU as it was: restores it when the scope ends, whatever
/// the scope made current. Throws cuda_error when the current GPU cannot be read.
class device_scope {
public:
  device_scope() { ROOFLINE_CUDA_CHECK(cudaGetDevice(&m_device)); }
  /// Makes `device` current for the scope.
  explicit device_scope(int device) : device_scope() { make_current(device); }
  ~device_scope() { cudaSetDevice(m_device); } // in a destructor: nothing to report to
  device_scope(const device_scope &) = delete;
  device_scope &operator=(const device_scope &) = delete;

private:
  int m_device = 0;
};

} // namespace roofline::cuda::detail
