// SPDX-License-Identifier: Apache-2.0
#include "roofline/model/attention_model.hpp"

#include "interpolation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace roofline {

namespace {

/// The prefill kernel's tile: 128 query rows, against key blocks of 128 (64 above a head dim of
/// 128, where the tiles of K and V would not fit shared memory), as FlashAttention 2/3 and
/// cuDNN's Hopper kernels tile. A property of the kernels, not fitted.
constexpr std::int64_t query_tile = 128;
std::int64_t key_block(std::int64_t head_dim) {
  return head_dim <= 128 ? 128 : 64;
}

/// ⌈a / b⌉ for a ≥ 0, b > 0, without the overflow of (a + b − 1) / b.
std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return a / b + (a % b != 0);
}

/// The backward pass computes dS = dO·Vᵀ, dP, dQ = dS·K and dK, dV = dSᵀ·Q, Pᵀ·dO besides
/// recomputing S = Q·Kᵀ: 5 products of the forward's 2.
constexpr double backward_products = 2.5;

/// A by-head-dim group's value (attention_efficiency by default) at `head_dim`: its own where
/// fitted (64, 128, 256), else interpolated in log2 of the head dim between the neighbours, the
/// end values outside.
double efficiency(const model_parameters &params, std::int64_t head_dim,
                  parameter group = parameter::attention_efficiency) {
  return detail::interpolated_in_log2(
      static_cast<double>(head_dim), attention_head_dims, [&](std::size_t i) {
        return params[attention_efficiency_at(attention_head_dims[i], group)];
      });
}

/// The key blocks the query tiles of one head visit: their sum and the longest tile's. Under a
/// causal mask the tile ending at query row r (0-based, of q_len) sees the keys up to position
/// kv_len − q_len + r; under a window only the last `window` of those; a block is visited when
/// any of its keys is seen.
struct visited_blocks {
  double total = 0;
  double longest = 0;
};

visited_blocks blocks_of(attention_shape s, double masked_block_cost) {
  // Fewer keys than queries: no mask (as lowering's attended_pairs counts them).
  s.causal = s.causal && s.kv_len >= s.q_len;
  const std::int64_t block = key_block(s.head_dim);
  const std::int64_t tiles = ceil_div(s.q_len, query_tile);
  const std::int64_t offset = s.kv_len - s.q_len; // the keys before the first query
  const auto blocks_of_tile = [&](std::int64_t first_row, std::int64_t last_row) {
    std::int64_t end = s.kv_len; // one past the last key seen
    if (s.causal)
      end = std::clamp<std::int64_t>(offset + last_row + 1, 0, s.kv_len);
    std::int64_t begin = 0;
    if (s.window > 0)
      begin = std::max<std::int64_t>(0, (s.causal ? offset + first_row + 1 : end) - s.window);
    if (end <= begin)
      return 0.0;
    // Under a causal mask the tile's last block is cut through by it: computed, then masked.
    return static_cast<double>(ceil_div(end, block) - begin / block) +
           (s.causal ? masked_block_cost - 1 : 0.0);
  };
  visited_blocks v;
  if (!s.causal && s.window <= 0) { // every tile alike
    const double each = blocks_of_tile(0, 0);
    v.total = each * static_cast<double>(tiles);
    v.longest = each;
    return v;
  }
  // Tiles differ: summed exactly up to 4096 tiles (512k queries), beyond from 4096 samples.
  const std::int64_t samples = std::min<std::int64_t>(tiles, 4096);
  for (std::int64_t i = 0; i < samples; ++i) {
    const std::int64_t tile =
        samples == tiles
            ? i
            : static_cast<std::int64_t>(static_cast<double>(i) * static_cast<double>(tiles) /
                                        static_cast<double>(samples));
    const std::int64_t first_row = tile * query_tile;
    const double b =
        blocks_of_tile(first_row, first_row + std::min(query_tile, s.q_len - first_row) - 1);
    v.total += b;
    v.longest = std::max(v.longest, b);
  }
  v.total *= static_cast<double>(tiles) / static_cast<double>(samples);
  return v;
}

/// Whole waves plus the share of a partial last one that costs like a whole (as the GEMM model's
/// wave quantization).
double quantized_waves(double waves, double quantization) {
  const double whole = std::floor(waves);
  const double part = waves - whole;
  return part > 0 ? whole + quantization + (1 - quantization) * part : whole;
}

/// How many times faster than from DRAM a call streams its bytes: called back to back on the
/// same tensors, those that fit in L2 stay there and L2 serves them (graph-replayed timings of
/// small calls run faster than DRAM allows); in a step the other layers evict them (cold).
double l2_speedup(std::int64_t bytes, const gpu_spec &gpu, const model_parameters &params,
                  cache_state cache) {
  return cache == cache_state::warm && static_cast<double>(bytes) <= gpu.l2_bytes
             ? params[parameter::attention_l2_speedup]
             : 1.0;
}

/// The decode kernel (FlashDecoding's): the keys of every (sample, key/value head) split into
/// chunks, one CTA each, the queries of a GQA group sharing their head's chunk, as many chunks as
/// fill the SMs, none shorter than attention_decode_chunk keys. A group larger than
/// attention_decode_max_group runs as a kernel of one query head a CTA instead (TensorRT-LLM's
/// grouped kernel serves groups up to a size; beyond it its per-head kernel runs a CTA per query
/// head, the group's repeated reads of its K and V served by L2).
void estimate_decode(attention_estimate &e, const attention_shape &s, std::int64_t bytes,
                     const gpu_spec &gpu, const model_parameters &params, double forward_rate,
                     cache_state cache, reasons why) {
  const double sms = static_cast<double>(std::max(gpu.sm_count, 1));
  const double chunk = params[parameter::attention_decode_chunk];
  // Under a sliding window only the cache's last keys are read (network.hpp's keys_read()).
  const double keys =
      s.window > 0 ? std::min(static_cast<double>(s.kv_len),
                              static_cast<double>(s.window) + static_cast<double>(s.q_len) - 1)
                   : static_cast<double>(s.kv_len);
  const double group =
      static_cast<double>(s.heads) / static_cast<double>(std::max<std::int64_t>(s.kv_heads, 1));
  const bool per_head = group > params[parameter::attention_decode_max_group];
  const double heads =
      static_cast<double>(s.batch) * static_cast<double>(per_head ? s.heads : s.kv_heads);
  const double chunks = std::max(1.0, std::min(std::ceil(keys / chunk), std::ceil(sms / heads)));
  e.tiles = static_cast<std::int64_t>(std::min(9e18, heads * chunks));
  e.waves = static_cast<double>(e.tiles) / sms;
  const double fill = std::min(1.0, e.waves);
  const double decode_bandwidth =
      efficiency(params, s.head_dim, parameter::attention_decode_dram_efficiency) *
      gpu.dram_bytes_per_s * l2_speedup(bytes, gpu, params, cache);
  e.stream_s = static_cast<double>(bytes) / (decode_bandwidth * fill);
  const double flops = 4.0 * static_cast<double>(s.batch) * static_cast<double>(s.heads) *
                       static_cast<double>(s.q_len) * keys * static_cast<double>(s.head_dim);
  e.math_s = flops / (forward_rate * fill);
  // Every chunk's CTA also loads its queries and writes its partial output: with thousands of
  // (sample, head) pairs and few keys (a large batch) the waves of CTAs, not the bytes, decide.
  // A grouped CTA (several query heads, tensor cores) pays its own.
  const parameter wave_cost = group > 1 && !per_head
                                  ? parameter::attention_decode_group_wave_overhead_s
                                  : parameter::attention_decode_wave_overhead_s;
  e.overhead_s =
      params[parameter::attention_decode_overhead_s] + std::ceil(e.waves) * params[wave_cost];
  e.device_time_s = std::max(std::max(e.math_s, e.stream_s) + e.overhead_s,
                             params[parameter::attention_decode_floor_s]);
  if (why == reasons::with)
    e.factors.push_back(fmt::format(
        "decode kernel: the keys in {} chunks over {} SMs ({:.2f} waves{}){}, KV streamed at "
        "{:.3g} TB/s",
        e.tiles, gpu.sm_count, e.waves, fill < 1 ? ", SMs idle" : "",
        per_head ? fmt::format(", one query head a CTA (a group of {:.0f})", group) : "",
        decode_bandwidth / 1e12));
}

} // namespace

attention_estimate estimate_attention(const attention_shape &s, precision p, std::int64_t bytes,
                                      const gpu_spec &gpu, const model_parameters &params,
                                      cache_state cache, reasons why) {
  attention_estimate e;
  const double sms = static_cast<double>(std::max(gpu.sm_count, 1));
  const double bandwidth = params[parameter::attention_dram_efficiency] * gpu.dram_bytes_per_s *
                           l2_speedup(bytes, gpu, params, cache);
  const double forward_rate = efficiency(params, s.head_dim) * gpu.peak_flop_per_s(p);
  e.decode = s.q_len < attention_decode_below_q_len && !s.backward;
  e.overhead_s = params[parameter::attention_kernel_overhead_s];
  if (e.decode) {
    estimate_decode(e, s, bytes, gpu, params, forward_rate, cache, why);
    return e;
  }
  const visited_blocks blocks = blocks_of(s, params[parameter::attention_masked_block_cost]);
  const double heads = static_cast<double>(s.batch) * static_cast<double>(s.heads);
  const double q_tiles = std::ceil(static_cast<double>(s.q_len) / query_tile);
  e.tiles = static_cast<std::int64_t>(std::min(9e18, heads * q_tiles));
  e.waves = static_cast<double>(e.tiles) / sms;
  const double all_blocks = q_tiles * std::ceil(static_cast<double>(s.kv_len) /
                                                static_cast<double>(key_block(s.head_dim)));
  // (The cut blocks' extra cost is no block visited: never below none skipped.)
  e.skipped = all_blocks > 0 ? std::max(0.0, 1 - blocks.total / all_blocks) : 0;
  // One SM's time for one key block of one query tile.
  double block_s = 4.0 * query_tile * static_cast<double>(key_block(s.head_dim)) *
                   static_cast<double>(s.head_dim) / (forward_rate / sms);
  if (s.backward)
    block_s *= backward_products /
               efficiency(params, s.head_dim, parameter::attention_backward_efficiency);
  // Tiles of one head alike, or differing (causal): the waves at the mean tile, the longest's
  // excess paid as often as the kernel's order of tiles makes it (not longest first), and at
  // least the longest tile on one SM.
  const double mean_blocks = q_tiles > 0 ? blocks.total / q_tiles : 0;
  const double scheduled =
      mean_blocks * quantized_waves(e.waves, params[parameter::attention_wave_quantization]) +
      (blocks.longest - mean_blocks) * params[parameter::attention_causal_imbalance];
  e.math_s = std::max(scheduled, blocks.longest) * block_s;
  e.overhead_s +=
      std::ceil(e.waves) * params[s.backward ? parameter::attention_backward_tile_overhead_s
                                             : parameter::attention_tile_overhead_s];
  if (s.backward) {
    // Its products and its traffic do not overlap: dQ is accumulated through L2 in fp32 between
    // them, and the pre- and post-processing kernels only stream.
    e.stream_s = static_cast<double>(bytes) /
                 (params[parameter::attention_backward_dram_efficiency] * gpu.dram_bytes_per_s);
    e.device_time_s = e.math_s + e.stream_s + e.overhead_s;
  } else {
    // One fused kernel streams under its math; a framework whose op also streams Q, K and V
    // through kernels of its own (RoPE, a KV-cache write) before it pays part of it on top.
    e.stream_s = static_cast<double>(bytes) / bandwidth;
    e.device_time_s =
        std::max(e.math_s, e.stream_s) +
        (1 - params[parameter::attention_stream_overlap]) * std::min(e.math_s, e.stream_s) +
        e.overhead_s;
  }
  if (why == reasons::with) {
    e.factors.push_back(fmt::format(
        "{} kernel: {} query tiles of {} rows over {} SMs ({:.2f} waves), key blocks of {}{}, "
        "tensor cores at {:.0f}% of peak{}",
        s.backward ? "fused attention backward" : "prefill", e.tiles, query_tile, gpu.sm_count,
        e.waves, key_block(s.head_dim),
        e.skipped > 0.005 ? fmt::format(", {:.0f}% of them skipped by the mask", 100 * e.skipped)
                          : "",
        100 * efficiency(params, s.head_dim) *
            (s.backward ? efficiency(params, s.head_dim, parameter::attention_backward_efficiency)
                        : 1.0),
        e.stream_s > e.math_s ? ", bound by streaming Q, K, V and O" : ""));
  }
  return e;
}

} // namespace roofline
