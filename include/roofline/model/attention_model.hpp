// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/model/attention_shape.hpp"
#include "roofline/model/gemm_model.hpp"
#include "roofline/model/gpu_spec.hpp"
#include "roofline/model/model_parameters.hpp"
#include "roofline/model/precision.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace roofline {

/// How the model sees one fused attention call on one GPU.
struct attention_estimate {
  /// The GPU's time per call with no host gap (every kernel of the call).
  double device_time_s = 0;
  bool decode = false;              ///< the decode kernel (attention_decode_below_q_len)
  double math_s = 0;                ///< the tiles' tensor-core work, as scheduled over the SMs
  double stream_s = 0;              ///< Q, K, V and O through DRAM at the kernel's achieved rate
  double overhead_s = 0;            ///< fixed costs: the kernel's, and each wave's tile prologues
  std::int64_t tiles = 0;           ///< prefill: query tiles × heads × batch; decode: key splits
  double waves = 0;                 ///< tiles / SMs
  double skipped = 0;               ///< causal or windowed: the share of key blocks never visited
  std::vector<std::string> factors; ///< the effects above, in words
};

/// Device time of a fused attention call, as cuDNN's (and FlashAttention's) kernels run it on
/// `gpu` (the model's basis: model_basis()); `bytes`: the call's minimum DRAM traffic (the op's).
/// - prefill (q_len ≥ attention_decode_below_q_len): tiles of 128 query rows per head, each
///   walking the key blocks (128 keys; 64 above a head dim of 128) its queries may see (a causal
///   or windowed mask skips whole blocks; the block a causal mask cuts through costs
///   `attention_masked_block_cost` blocks), at `attention_efficiency` (by head dim) of the dense
///   tensor peak per SM. The tiles run in waves over the SMs: a partial last wave costs
///   `attention_wave_quantization` of a whole one, the longest tile's excess over the mean is
///   paid `attention_causal_imbalance` times, and no call is shorter than its longest tile; each
///   wave pays `attention_tile_overhead_s`. Never faster than streaming its bytes at
///   `attention_dram_efficiency` of DRAM, the shorter of the two hidden under the longer but
///   for 1 − `attention_stream_overlap` of it; plus `attention_kernel_overhead_s`.
/// - decode: the keys of every (sample, key/value head) split in as many chunks as fill the SMs,
///   none shorter than `attention_decode_chunk` keys, streamed at
///   `attention_decode_dram_efficiency` (by head dim) of DRAM once the chunks fill every SM,
///   proportionally slower while they do not; plus the split's combine
///   (`attention_decode_overhead_s`) and `attention_decode_wave_overhead_s` per wave of chunks
///   over the SMs (`attention_decode_group_wave_overhead_s` where a CTA serves a GQA group; a
///   group above `attention_decode_max_group` runs one query head a CTA); never below
///   `attention_decode_floor_s`.
/// - prefill and decode with `cache` warm (calls back to back on the same tensors: a benchmark's
///   loop or graph replay): a call whose bytes fit in L2 streams them `attention_l2_speedup`
///   times faster than from DRAM. Cold: from DRAM, as in a step whose layers evict each other.
/// - backward: the prefill's tiling with 2.5× the forward's products at
///   `attention_backward_efficiency` (by head dim) of the forward's rate, plus (not overlapped)
///   its bytes at `attention_backward_dram_efficiency` of DRAM, each wave paying
///   `attention_backward_tile_overhead_s`; plus `attention_kernel_overhead_s`.
attention_estimate estimate_attention(const attention_shape &shape, precision p, std::int64_t bytes,
                                      const gpu_spec &gpu, const model_parameters &params,
                                      cache_state cache = cache_state::warm,
                                      reasons why = reasons::with);

} // namespace roofline
