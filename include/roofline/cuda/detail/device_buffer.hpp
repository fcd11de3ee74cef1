// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/cuda/detail/cuda_check.hpp"

#include <cstddef>
#include <utility>

namespace roofline::cuda::detail {

/// Owns one cudaMalloc allocation.
class device_buffer {
public:
  device_buffer() = default;
  explicit device_buffer(std::size_t bytes) : m_bytes(bytes) {
    ROOFLINE_CUDA_CHECK(cudaMalloc(&m_data, bytes));
  }
  device_buffer(device_buffer &&other) noexcept
      : m_data(std::exchange(other.m_data, nullptr)), m_bytes(std::exchange(other.m_bytes, 0)) {}
  device_buffer &operator=(device_buffer &&other) noexcept {
    std::swap(m_data, other.m_data);
    std::swap(m_bytes, other.m_bytes);
    return *this;
  }
  device_buffer(const device_buffer &) = delete;
  device_buffer &operator=(const device_buffer &) = delete;
  ~device_buffer() {
    if (m_data)
      cudaFree(m_data); // in a destructor: a failure here cannot be reported, and must not throw
  }

  void *get() const noexcept { return m_data; }
  template <class T> T *as() const noexcept { return static_cast<T *>(m_data); }
  std::size_t bytes() const noexcept { return m_bytes; }

private:
  void *m_data = nullptr;
  std::size_t m_bytes = 0;
};

} // namespace roofline::cuda::detail
