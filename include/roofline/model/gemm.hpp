// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/model/precision.hpp"

#include <cstdint>
#include <optional>

namespace roofline {

/// Weight-only quantization of a GEMM's B operand, a layer's weights (W8A16, W4A16: AWQ, GPTQ,
/// Marlin): `bits`-bit integers with one fp16 scale per `group_size` weights along K (0: one per
/// output column), widened on chip to the activations' precision, in which the math runs.
struct quantized_weights {
  int bits = 4; ///< 8 or 4
  std::int64_t group_size = 128;

  bool operator==(const quantized_weights &o) const noexcept {
    return bits == o.bits && group_size == o.group_size;
  }
};

/// Row-major C[M,N] = A[M,K]·B[K,N], `batch_count` times (a batched GEMM).
/// M: rows of activations, N: output features, K: the reduction.
struct gemm_shape {
  std::int64_t m = 0, n = 0, k = 0;
  std::int64_t batch_count = 1;
  /// Set when B holds weight-only quantized weights; A and C stay in the GEMM's precision.
  std::optional<quantized_weights> weights;
};

/// Bytes of one B (K × N): element size × K·N, or the quantized integers and their scales, or
/// fp4's packed weights and their fp8 scale per 16 along K (nvfp4's layout); nullopt on overflow.
std::optional<std::int64_t> weight_bytes(const gemm_shape &s, precision p);

/// B's bytes per element, scales included: the element size, or bits / 8 plus a scale's share.
double weight_element_bytes(const gemm_shape &s, precision p);

/// 2·M·N·K·batch_count; nullopt when that overflows 64 bits.
std::optional<std::int64_t> gemm_flops(const gemm_shape &s);

/// Minimum DRAM traffic: (element size × (M·K + M·N) + weight_bytes) × batch_count (each operand
/// read once, C written once); nullopt on overflow.
std::optional<std::int64_t> gemm_min_bytes(const gemm_shape &s, precision p);

/// The data-gradient GEMM of C = A·B: dA[M,K] = dC[M,N]·Bᵀ, i.e. (M, K, N).
gemm_shape data_grad_shape(const gemm_shape &forward);

/// The weight-gradient GEMM of C = A·B: dB[K,N] = Aᵀ·dC[M,N], i.e. (K, N, M).
gemm_shape weight_grad_shape(const gemm_shape &forward);

/// The largest power of two ≤ 16 dividing a row of `elements` elements of `p`, in bytes.
int row_alignment_bytes(std::int64_t elements, precision p);
/// The GEMM's row alignment: the narrower of its K-long rows (A and B) and its N-long rows (C).
int row_alignment_bytes(const gemm_shape &shape, precision p);

/// The elements a row must be a multiple of to meet the 16-byte rule: 8 for fp16/bf16, 4 for
/// fp32/tf32, 16 for fp8/int8, 2 for fp64.
std::int64_t alignment_elements(precision p);

} // namespace roofline
