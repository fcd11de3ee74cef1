// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "cuda_check.hpp"
#include "device_buffer.hpp"
#include "kernels.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace roofline::test {

using cuda::detail::device_buffer;
using kernels::element_type;

/// Copies `count` elements of `type` to the host as doubles.
inline std::vector<double> to_host(const device_buffer &buffer, std::size_t count,
                                   element_type type) {
  std::vector<unsigned char> bytes(count * kernels::element_size(type));
  ROOFLINE_CUDA_CHECK(cudaMemcpy(bytes.data(), buffer.get(), bytes.size(), cudaMemcpyDeviceToHost));
  std::vector<double> values(count);
  for (std::size_t i = 0; i < count; ++i) {
    const unsigned char *p = bytes.data() + i * kernels::element_size(type);
    switch (type) {
    case element_type::f64: {
      double v;
      std::memcpy(&v, p, 8);
      values[i] = v;
      break;
    }
    case element_type::f32: {
      float v;
      std::memcpy(&v, p, 4);
      values[i] = v;
      break;
    }
    case element_type::i32: {
      std::int32_t v;
      std::memcpy(&v, p, 4);
      values[i] = v;
      break;
    }
    case element_type::f16: {
      __half v;
      std::memcpy(&v, p, 2);
      values[i] = __half2float(v);
      break;
    }
    case element_type::bf16: {
      __nv_bfloat16 v;
      std::memcpy(&v, p, 2);
      values[i] = __bfloat162float(v);
      break;
    }
    case element_type::e4m3: {
      __nv_fp8_e4m3 v;
      std::memcpy(&v, p, 1);
      values[i] = static_cast<float>(v);
      break;
    }
    case element_type::i8: {
      std::int8_t v;
      std::memcpy(&v, p, 1);
      values[i] = v;
      break;
    }
    }
  }
  return values;
}

/// ‖out − ref‖ / ‖ref‖ (Frobenius); infinity when any output is not finite.
inline double relative_error(const std::vector<double> &out, const std::vector<double> &ref) {
  double difference = 0, norm = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (!std::isfinite(out[i]))
      return INFINITY;
    difference += (out[i] - ref[i]) * (out[i] - ref[i]);
    norm += ref[i] * ref[i];
  }
  return std::sqrt(difference / norm);
}

} // namespace roofline::test
