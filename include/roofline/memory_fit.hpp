// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/network.hpp"
#include "roofline/op.hpp"

#include <cstdint>
#include <optional>
#include <vector>

namespace roofline {

/// Does the network fit in the GPU's memory, and how much larger could its batch or its KV
/// cache be?
struct memory_use {
  /// Every linear, conv and expert layer's weights (repeats counted; every expert, reached in a
  /// step or not), and those no layer runs
  /// (network::resident_weight_bytes: a config's embeddings).
  double weights_bytes = 0;
  double kv_cache_bytes = 0; ///< keys and values of every decoder attention layer's cache
  /// Inference: the largest op's operands and result other than its weights or cache, held at
  /// once (each layer's tensors are freed once the next has read them); training: every forward
  /// op's result, kept for the backward pass.
  double activation_bytes = 0;
  double total_bytes = 0;
  double capacity_bytes = 0; ///< the GPU's memory, as its datasheet gives it
  bool fits = false;
  /// The largest batch whose total fits (the same context), at most 2^63 − 1; none when not even
  /// 1 does.
  std::optional<std::int64_t> max_batch;
  /// Decoding (a cache longer than the queries): the longest context, in tokens, every attention
  /// layer's alike, whose cache fits at this batch; none when any context fits (every cache
  /// is a sliding window's).
  std::optional<std::int64_t> max_kv_len;
};

/// `net` (lowered to `ops`) against `capacity_bytes` of GPU memory.
memory_use memory_of(const network &net, const std::vector<op> &ops, double capacity_bytes);

} // namespace roofline
