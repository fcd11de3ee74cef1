// SPDX-License-Identifier: Apache-2.0
#include "roofline/model/memory_op_model.hpp"

#include "roofline/model/gemm_model.hpp"

#include <algorithm>

namespace roofline {

double memory_bytes_per_s(std::int64_t bytes, const gpu_spec &gpu, const model_parameters &params) {
  const double moved = static_cast<double>(bytes);
  // The share of its bytes L2 can hold beside them: 1 for a few bytes, 0 once they fill it.
  const double in_l2 =
      gpu.l2_bytes > 0 ? std::clamp(1 - moved / static_cast<double>(gpu.l2_bytes), 0.0, 1.0) : 0;
  const double dram = gpu.dram_bytes_per_s;
  return dram + in_l2 * std::max(0.0, l2_bytes_per_s(gpu, params) - dram);
}

double memory_op_time_s(memory_op_kind kind, std::int64_t bytes, const gpu_spec &gpu,
                        const model_parameters &params, std::int64_t rows) {
  const double floor_s = params[memory_parameter_at(parameter::memory_floor_s, kind)];
  const double streamed_s = static_cast<double>(bytes) /
                            (params[memory_parameter_at(parameter::memory_efficiency, kind)] *
                             memory_bytes_per_s(bytes, gpu, params));
  if (rows <= 0)
    return floor_s + streamed_s;
  const double per_row_s = params[memory_parameter_at(parameter::memory_row_s, kind)];
  const double row_rate = params[memory_parameter_at(parameter::memory_row_bytes_per_s, kind)];
  const double one_row_s =
      row_rate > 0 ? static_cast<double>(bytes) / static_cast<double>(rows) / row_rate : 0;
  return floor_s + std::max(streamed_s + static_cast<double>(rows) * per_row_s, one_row_s);
}

double unfused_time_s(const unfused_form &form, std::int64_t elements, int activation_bytes,
                      const gpu_spec &gpu, const model_parameters &params) {
  double total = 0;
  for (int i = 0; i < form.launches; ++i)
    total += memory_op_time_s(memory_op_kind::mul,
                              unfused_kernel_bytes(form.kernels[i], elements, activation_bytes),
                              gpu, params);
  return total;
}

} // namespace roofline
