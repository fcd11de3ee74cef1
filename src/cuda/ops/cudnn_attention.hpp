// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "cudnn_handle.hpp"
#include "op_call.hpp"
#include "roofline/model/attention_shape.hpp"
#include "roofline/model/precision.hpp"

#include <memory>

namespace roofline::cuda::detail {

/// Where Q, K, V and the output keep their elements, each of logical shape [batch, heads, seq,
/// head_dim]: BSHD as a projection writes them (a token's heads side by side: what PyTorch's SDPA
/// gets after `view(...).transpose(1, 2)`), BHSD with each head's rows contiguous.
enum class attention_layout { bshd, bhsd };

/// A fused attention forward pass (inference: no softmax statistics kept) made ready to run through
/// cuDNN's graph API: O = softmax(Q·Kᵀ/√head_dim, masked) · V as one flash-attention kernel, in
/// fp16 or bf16 with fp32 accumulation and softmax, on random operands: unmasked, as cuDNN's single
/// SDPA operation where this cuDNN has it, else (and masked) as cudnn-frontend's composite graph;
/// the engine cuDNN's heuristics (mode A, then B, then fallback) rank first among those that build.
/// A causal mask keeps each query the keys up to its own position, the queries being the last q_len
/// of the kv_len (the bottom right diagonal); grouped-query attention reads kv_heads key/value
/// heads. Its check computes sampled output rows on the host in double. Throws op_skipped for the
/// backward pass, a sliding window, a KV cache of another precision, another precision than fp16 or
/// bf16, a causal mask with fewer keys than queries, a shape cuDNN does not support (its reason),
/// or when `sets` does; cuda_error when a cuDNN or CUDA call fails, or when the stream holds a
/// fault (checked before a skip is reported, so that a fault fails this op rather than the next).
std::unique_ptr<op_call> make_attention_call(const cudnn_handle &cudnn,
                                             const attention_shape &shape, precision p,
                                             attention_layout layout, const operand_sets &sets,
                                             cudaStream_t stream);

} // namespace roofline::cuda::detail
