// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "host_elements.hpp"
#include "kernels.hpp"
#include "roofline/cuda/detail/cuda_check.hpp"
#include "roofline/cuda/detail/cuda_owners.hpp"
#include "roofline/cuda/detail/device_buffer.hpp"

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
  for (std::size_t i = 0; i < count; ++i)
    values[i] = cuda::detail::element_value(bytes.data() + i * kernels::element_size(type), type);
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
