// SPDX-License-Identifier: Apache-2.0
#pragma once
// The fused attention op a network of one attention layer lowers to: what the attention fitting
// benches time a call as, so that its bytes and shape are the analysis's own.

#include "roofline/analysis/lowering.hpp"
#include "roofline/common/error.hpp"
#include "roofline/input/network.hpp"
#include "roofline/model/attention_shape.hpp"

#include <optional>

namespace roofline::bench {

/// The op of a call of shape `s` in precision `p`: the backward kernel's for `s.backward` (the
/// layer lowered for training), its keys and values stored as `s.kv_precision` where it is set.
/// Throws roofline::error when no fused attention op comes out.
inline op lowered_attention(const attention_shape &s, precision p) {
  attention_layer a;
  a.heads = s.heads;
  a.kv_heads = s.kv_heads;
  a.head_dim = s.head_dim;
  a.seq_len = s.q_len;
  a.kv_len = s.kv_len;
  a.causal = s.causal;
  a.window = s.window;
  a.kv_precision = s.kv_precision;
  a.fused = true;
  network net;
  net.name = "attention";
  net.precision = p;
  net.batch = s.batch;
  net.seq_len = s.q_len;
  net.mode = s.backward ? run_mode::training : run_mode::inference;
  net.layers.push_back({"attention", std::nullopt, std::nullopt, {}, a});
  for (const op &o : lower(net))
    if (o.attention && o.attention->backward == s.backward)
      return o;
  throw error("no fused attention op lowered");
}

} // namespace roofline::bench
