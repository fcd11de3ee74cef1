// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/model/precision.hpp"

#include <cstdint>
#include <optional>

namespace roofline {

/// One call of a fused (FlashAttention-style) attention kernel: `batch` × `heads` query rows of
/// `q_len` positions attend to `kv_len` keys of `kv_heads` key/value heads (grouped-query
/// attention when fewer). The queries are the last `q_len` of the `kv_len` positions.
struct attention_shape {
  std::int64_t batch = 1, heads = 1, kv_heads = 1, q_len = 1, kv_len = 1, head_dim = 64;
  bool causal = false;
  std::int64_t window = 0; ///< sliding window: the keys each query may meet; 0: all
  /// The backward pass (dQ, dK and dV in one kernel, as FlashAttention 2 and cuDNN run it).
  bool backward = false;
  /// The KV cache's number format where it is not the op's (an fp8 cache beside bf16 queries).
  std::optional<roofline::precision> kv_precision;

  friend bool operator==(const attention_shape &a, const attention_shape &b) {
    return a.batch == b.batch && a.heads == b.heads && a.kv_heads == b.kv_heads &&
           a.q_len == b.q_len && a.kv_len == b.kv_len && a.head_dim == b.head_dim &&
           a.causal == b.causal && a.window == b.window && a.backward == b.backward &&
           a.kv_precision == b.kv_precision;
  }
};

/// Queries below this many positions run the decode kernel (FlashDecoding's split over the keys),
/// at or above it the prefill kernel (tiles of query rows).
inline constexpr std::int64_t attention_decode_below_q_len = 16;

} // namespace roofline
