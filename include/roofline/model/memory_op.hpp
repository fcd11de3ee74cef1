// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <array>
#include <cstdint>
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
  avgpool,
  // The glue a framework runs around the layers.
  rope,      ///< rotary position embedding of the queries and keys
  kv_append, ///< the new tokens' keys and values written into the KV cache
  embedding, ///< the token embedding lookup: one table row gathered per token
  copy,      ///< a layout change (attention's output transposed to contiguous rows)
  /// An fp8 layer's dynamic per-tensor quantization of its activations on entry: their largest
  /// magnitude, then each scaled and cast to fp8 (two passes over the activations).
  quantize
};
/// How many memory op kinds there are.
inline constexpr int memory_op_kind_count = static_cast<int>(memory_op_kind::quantize) + 1;

/// One kernel of an op run unfused: its passes over the op's elements (each a read or a write
/// of them all) at the activations' size and at fp32 (the intermediates). A kernel of no passes
/// works on one value per row (a norm's eps and reciprocal root).
struct unfused_kernel {
  int activation_passes = 0;
  int fp32_passes = 0;
};

/// The most kernels an unfused form has.
inline constexpr int max_unfused_kernels = 8;

/// An op as a framework writes it in separate kernels rather than one, each reading its input
/// and writing its output through DRAM (Hugging Face transformers' RMSNorm: a cast to fp32, the
/// square, the mean, eps and the reciprocal root, the scaling, a cast back and the weight).
struct unfused_form {
  int launches = 0; ///< kernels per call: the first `launches` of `kernels`
  std::array<unfused_kernel, max_unfused_kernels> kernels{};
};

/// A kernel's bytes over `elements` elements whose activations are `activation_bytes` each.
std::int64_t unfused_kernel_bytes(const unfused_kernel &k, std::int64_t elements,
                                  int activation_bytes);
/// The bytes of all of `form`'s kernels (unfused_kernel_bytes summed); nullopt on overflow.
std::optional<std::int64_t> unfused_bytes(const unfused_form &form, std::int64_t elements,
                                          int activation_bytes);

/// Bytes per element an fp8 layer's dynamic quantization of its activations moves (the quantize
/// op): read twice at `activation_bytes` (the largest magnitude, then the scaling), written once
/// in fp8.
int quantize_bytes_per_element(int activation_bytes);

/// The work an op does per output element, forward and backward. These are estimates of what a
/// straightforward kernel does; the ops are memory-bound by far, so the bytes decide their time.
struct memory_op_cost {
  int flops_per_element;
  int tensors_read; ///< whole tensors read per pass (an add reads two)
  int tensors_written;
  int backward_flops_per_element;
  int backward_tensors; ///< read + written in the backward pass; 0: no backward kernel
  /// How a framework runs it unfused, where it does (memory_layer::unfused).
  std::optional<unfused_form> unfused = std::nullopt;
};

std::string_view to_string(memory_op_kind kind);
/// Every memory op's name, in the order of memory_op_kind: the layer types a network may name.
std::vector<std::string_view> memory_op_names();
std::optional<memory_op_kind> parse_memory_op_kind(std::string_view name);
const memory_op_cost &cost_of(memory_op_kind kind);

} // namespace roofline
