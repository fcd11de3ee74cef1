// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string_view>
#include <vector>

namespace roofline {

/// The memory-bound (non-GEMM) ops a network can hold.
enum class memory_op_kind {
  relu,
  gelu,
  silu,
  add,
  mul,
  layernorm,
  rmsnorm,
  batchnorm,
  softmax,
  maxpool,
  avgpool
};
/// How many memory op kinds there are.
inline constexpr int memory_op_kind_count = static_cast<int>(memory_op_kind::avgpool) + 1;

/// The work an op does per output element, forward and backward. These are estimates of what a
/// straightforward kernel does; the ops are memory-bound by far, so the bytes decide their time.
struct memory_op_cost {
  int flops_per_element;
  int tensors_read; ///< whole tensors read per pass (an add reads two)
  int tensors_written;
  int backward_flops_per_element;
  int backward_tensors; ///< read + written in the backward pass; 0: no backward kernel
};

std::string_view to_string(memory_op_kind kind);
/// Every memory op's name, in the order of memory_op_kind: the layer types a network may name.
std::vector<std::string_view> memory_op_names();
std::optional<memory_op_kind> parse_memory_op_kind(std::string_view name);
const memory_op_cost &cost_of(memory_op_kind kind);

} // namespace roofline
