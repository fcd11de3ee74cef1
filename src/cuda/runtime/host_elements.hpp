// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "kernels.hpp"
#include "roofline/cuda/detail/cuda_check.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace roofline::cuda::detail {

/// One element of a buffer copied from the device, as a double.
inline double element_value(const unsigned char *p, kernels::element_type type) {
  switch (type) {
  case kernels::element_type::f64: {
    double v;
    std::memcpy(&v, p, 8);
    return v;
  }
  case kernels::element_type::f32: {
    float v;
    std::memcpy(&v, p, 4);
    return v;
  }
  case kernels::element_type::i32: {
    std::int32_t v;
    std::memcpy(&v, p, 4);
    return v;
  }
  case kernels::element_type::f16: {
    __half v;
    std::memcpy(&v, p, 2);
    return __half2float(v);
  }
  case kernels::element_type::bf16: {
    __nv_bfloat16 v;
    std::memcpy(&v, p, 2);
    return __bfloat162float(v);
  }
  case kernels::element_type::e4m3: {
    __nv_fp8_e4m3 v;
    std::memcpy(&v, p, 1);
    return static_cast<float>(v);
  }
  case kernels::element_type::i8: {
    std::int8_t v;
    std::memcpy(&v, p, 1);
    return v;
  }
  }
  return 0;
}

/// Elements [first, first + count) of a device array of `type`, as doubles. Throws cuda_error.
inline std::vector<double> fetch_elements(const void *base, std::size_t first, std::size_t count,
                                          kernels::element_type type) {
  const std::size_t size = kernels::element_size(type);
  std::vector<unsigned char> bytes(count * size);
  ROOFLINE_CUDA_CHECK(cudaMemcpy(bytes.data(),
                                 static_cast<const unsigned char *>(base) + first * size,
                                 bytes.size(), cudaMemcpyDeviceToHost));
  std::vector<double> values(count);
  for (std::size_t i = 0; i < count; ++i)
    values[i] = element_value(bytes.data() + i * size, type);
  return values;
}

} // namespace roofline::cuda::detail
