// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/input/network.hpp"
#include "roofline/model/op.hpp"

#include <cstdint>
#include <optional>
#include <vector>

namespace roofline {

/// The bytes of optimizer state a training step keeps per trained parameter whose weight is
/// stored in `weight_bytes` bytes, mixed precision as Megatron-LM and DeepSpeed count it: an
/// fp32 master copy of a weight stored narrower than fp32, and the optimizer's moments in fp32
/// (an fp64 weight's in fp64). AdamW beside bf16 weights: 4 + 2 · 4 = 12, so with the weight
/// and its bf16 gradient 16 bytes a parameter, the 16Ψ of Rajbhandari et al., "ZeRO: Memory
/// Optimizations Toward Training Trillion Parameter Models" (SC 2020), §3.1 (K = 12); SGD with
/// momentum: 4 + 4 = 8.
double optimizer_bytes_per_parameter(optimizer o, double weight_bytes);

/// Does the network fit in the GPU's memory, and how much larger could its batch or its KV
/// cache be?
struct memory_use {
  /// Every linear, conv and expert layer's weights (repeats counted; every expert, reached in a
  /// step or not), and those no layer runs
  /// (network::resident_weight_bytes: a config's embeddings).
  double weights_bytes = 0;
  /// Training: one gradient per weight, in the weight's own precision (bf16 weights, bf16
  /// gradients); 0 in inference.
  double gradient_bytes = 0;
  /// Training: the optimizer's state, optimizer_bytes_per_parameter for every weight; 0 in
  /// inference.
  double optimizer_bytes = 0;
  double kv_cache_bytes = 0; ///< keys and values of every decoder attention layer's cache
  /// Inference: the largest op's operands and result other than its weights or cache, held at
  /// once (each layer's tensors are freed once the next has read them); training: the forward
  /// results kept for the backward pass (every op's, or with recomputation each repeat's input
  /// and one repeat's results).
  double activation_bytes = 0;
  /// A captured program's (an op trace): its tensors' peak, weights the parameters and buffers
  /// alive then, activations everything else; no larger batch known.
  bool traced = false;
  /// Training: the GPU's parameters (its tensor- and expert-parallel share), and the experts'
  /// among them, before ZeRO shards them: what data parallelism reduces and gathers.
  double parameters = 0, expert_parameters = 0;
  /// Training: the parameters this GPU's optimizer updates (its ZeRO shard, all at stage 0).
  double updated_parameters = 0;
  /// Training: the optimizer and the recomputation counted (unset in inference).
  std::optional<roofline::optimizer> optimizer;
  std::optional<recomputation> recompute;
  double total_bytes = 0;
  double capacity_bytes = 0; ///< the GPU's memory, as its datasheet gives it
  /// Kept back from the network (memory_reserve_bytes): the framework's workspace, the CUDA
  /// context and the allocator's fragmentation. `fits`, `max_batch` and `max_kv_len` count it.
  double reserve_bytes = 0;
  bool fits = false;
  /// The largest batch whose total fits (the same context; in training, the largest
  /// micro-batch: weights, gradients and optimizer state do not grow with it), at most
  /// 2^63 − 1; none when not even 1 does.
  std::optional<std::int64_t> max_batch;
  /// Decoding (a cache longer than the queries): the longest context, in tokens, every attention
  /// layer's alike, whose cache fits at this batch; none when any context fits (every cache
  /// is a sliding window's).
  std::optional<std::int64_t> max_kv_len;

  /// What the network may use: the capacity less the reserve.
  double usable_bytes() const { return capacity_bytes - reserve_bytes; }
};

/// The share of a GPU's memory kept back by default for what no layer holds: the framework's
/// workspace (cuBLAS, the caching allocator's), the CUDA context and fragmentation. vLLM's
/// default `gpu_memory_utilization` of 0.9 leaves the same 10%.
inline constexpr double default_memory_reserve_share = 0.1;

/// The bytes kept back of `capacity_bytes`: `reserve_bytes` where given (`--memory-reserve`),
/// else default_memory_reserve_share of the capacity.
double memory_reserve_bytes(double capacity_bytes, std::optional<double> reserve_bytes);

/// `m`'s state (of the GPU's `parameters`, `expert_parameters` of them the experts') as ZeRO
/// shards it over `d`'s GPUs: the dense parameters' over all of them, the experts' over theirs
/// (d.gpus / d.expert_parallel); the optimizer state from stage 1, the gradients from 2, the
/// weights at 3. Sets m.parameters and m.expert_parameters (unsharded) and m.updated_parameters
/// (the shard its optimizer steps); totals and fits are the caller's.
void shard_state(memory_use &m, double parameters, double expert_parameters,
                 const data_parallelism &d);

/// A training step's optimizer step over the parameters `m` updates (its ZeRO shard): one fused
/// kernel (PyTorch's fused AdamW, Megatron's) reading its state and the gradients (and the
/// weights where no fp32 master copy is kept), writing the state and the weights; priced as the
/// `mul` kind, as an op trace's _fused_adamw_ is.
op optimizer_step_op(const network &net, const memory_use &m);

/// A training step's data-parallel traffic (network::data_parallel), counted in full: each group
/// of `m`'s parameters (the dense over the whole group, the experts' over theirs), bf16 as the
/// weights: ZeRO-0 all-reduces the gradients; 1 and 2 reduce-scatter them and all-gather the
/// updated weights; 3 gathers the weights for the forward and again for the backward, and
/// reduce-scatters the gradients. None without data parallelism.
std::vector<op> data_parallel_ops(const network &net, const memory_use &m);

/// The same for any data-parallel group `d` of a step in precision `p` (its training network's
/// or a layout's the cluster planner prices), located at `where`.
std::vector<op> data_parallel_ops(const data_parallelism &d, precision p, const memory_use &m,
                                  const source_location &where = {});

/// `net` (lowered to `ops`) against `capacity_bytes` of GPU memory, `reserve_bytes` of it kept
/// back (memory_use::reserve_bytes).
memory_use memory_of(const network &net, const std::vector<op> &ops, double capacity_bytes,
                     double reserve_bytes = 0);

} // namespace roofline
