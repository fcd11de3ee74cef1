// SPDX-License-Identifier: Apache-2.0
#include "roofline/model/memory_op.hpp"

#include "checked_math.hpp"
#include "roofline/model/precision.hpp"

#include <array>
#include <utility>

namespace roofline {

namespace {

struct memory_op_entry {
  memory_op_kind kind;
  std::string_view name;
  memory_op_cost cost;
};

// FLOPs per element count the arithmetic of a plain implementation (tanh-GELU: x³, two FMAs, tanh,
// scale; softmax: max, subtract, exp, sum, divide; layernorm: mean, variance, normalise, affine).
// Backward passes read the output gradient and the saved input (or output) and write the input
// gradient: 3 tensors; mul's backward writes both operands' gradients; add's gradient is the output
// gradient itself, so no kernel runs. Pools are costed per window in lowering. The glue: RoPE
// multiplies by cos and sin and adds (its elements: the queries' and keys'; cos and sin are one
// head's worth, left out); a cache write, a gather and a copy only move elements; the
// embedding's gradient is scattered into the table's rows. Quantizing reads the activations twice
// (the largest magnitude, then the scaling) and writes them once, at fp8: lowering counts its
// bytes (quantize_bytes_per_element); training runs no quantize kernel backward here.
// Unfused RMSNorm as transformers writes it (LlamaRMSNorm, also Mistral's, Qwen2's, Gemma's),
// kernel by kernel: x.to(fp32) reads the activations and writes fp32; pow reads and writes fp32;
// the mean reads fp32 and writes one value per row; eps and rsqrt run on those values; the
// scaling reads and writes fp32; the cast back reads fp32 and writes activations; the weight
// reads and writes activations.
constexpr unfused_form unfused_rmsnorm{
    8, {{{1, 1}, {0, 2}, {0, 1}, {0, 0}, {0, 0}, {0, 2}, {1, 1}, {2, 0}}}};
constexpr std::array<memory_op_entry, memory_op_kind_count> memory_ops{{
    {memory_op_kind::relu, "relu", {1, 1, 1, 1, 3}},
    {memory_op_kind::gelu, "gelu", {8, 1, 1, 12, 3}},
    {memory_op_kind::silu, "silu", {4, 1, 1, 8, 3}},
    {memory_op_kind::add, "add", {1, 2, 1, 0, 0}},
    {memory_op_kind::mul, "mul", {1, 2, 1, 2, 5}},
    {memory_op_kind::layernorm, "layernorm", {8, 1, 1, 12, 3}},
    {memory_op_kind::rmsnorm, "rmsnorm", {4, 1, 1, 8, 3, unfused_rmsnorm}},
    {memory_op_kind::batchnorm, "batchnorm", {2, 1, 1, 8, 3}},
    {memory_op_kind::softmax, "softmax", {5, 1, 1, 4, 3}},
    {memory_op_kind::maxpool, "maxpool", {1, 1, 1, 1, 3}},
    {memory_op_kind::avgpool, "avgpool", {1, 1, 1, 1, 3}},
    {memory_op_kind::rope, "rope", {3, 1, 1, 3, 2}},
    {memory_op_kind::kv_append, "kv_append", {0, 1, 1, 0, 0}},
    {memory_op_kind::embedding, "embedding", {0, 1, 1, 1, 2}},
    {memory_op_kind::copy, "copy", {0, 1, 1, 0, 2}},
    {memory_op_kind::quantize, "quantize", {3, 2, 1, 0, 0}},
}};

} // namespace

std::int64_t unfused_kernel_bytes(const unfused_kernel &k, std::int64_t elements,
                                  int activation_bytes) {
  return elements * (k.activation_passes * activation_bytes + k.fp32_passes * 4);
}

std::optional<std::int64_t> unfused_bytes(const unfused_form &form, std::int64_t elements,
                                          int activation_bytes) {
  std::int64_t passes = 0; // element passes' bytes per element, all kernels
  for (int i = 0; i < form.launches; ++i)
    passes += unfused_kernel_bytes(form.kernels[i], 1, activation_bytes);
  return detail::checked_product({elements, passes});
}

int quantize_bytes_per_element(int activation_bytes) {
  return 2 * activation_bytes + element_bytes(precision::fp8);
}

std::vector<std::string_view> memory_op_names() {
  std::vector<std::string_view> names;
  for (const auto &entry : memory_ops)
    names.push_back(entry.name);
  return names;
}

std::string_view to_string(memory_op_kind kind) {
  for (const auto &entry : memory_ops)
    if (entry.kind == kind)
      return entry.name;
  return "?";
}

std::optional<memory_op_kind> parse_memory_op_kind(std::string_view name) {
  for (const auto &entry : memory_ops)
    if (entry.name == name)
      return entry.kind;
  return std::nullopt;
}

const memory_op_cost &cost_of(memory_op_kind kind) {
  for (const auto &entry : memory_ops)
    if (entry.kind == kind)
      return entry.cost;
  return memory_ops[0].cost;
}

} // namespace roofline
