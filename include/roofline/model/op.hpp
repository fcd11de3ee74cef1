// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/common/error.hpp"
#include "roofline/model/attention_shape.hpp"
#include "roofline/model/conv_shape.hpp"
#include "roofline/model/gemm.hpp"
#include "roofline/model/pass.hpp"
#include "roofline/model/precision.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace roofline {

/// The kind of a fused attention op.
inline constexpr std::string_view fused_attention_kind = "attention";
/// The kind of an all-reduce between the GPUs a layer is sharded over (tensor parallelism); the
/// other collectives' kinds are their names too (collectives.hpp: to_string(collective)).
inline constexpr std::string_view all_reduce_kind = "all_reduce";

/// How a GEMM's sizes follow its network's batch. Lowering tags each GEMM it makes; the batch
/// advice reads the tag (with at_batch(), lowering.hpp) instead of lowering the network again at
/// other batches.
enum class batch_growth {
  none,      ///< sizes the batch leaves alone: a matmul of given sizes, a weight gradient
  rows,      ///< M and FLOPs in proportion to it, bytes affinely: linear, conv2d, a router
  instances, ///< batch_count, FLOPs and bytes in proportion: attention's score and context GEMMs
  /// A mixture of experts' expert GEMM: its M and batch_count follow the experts that the step's
  /// tokens reach (lowering's routing), not the batch alone.
  routed,
};

/// What lowering knows of how a GEMM's sizes follow the batch: enough to make it at another one.
struct batch_scaling {
  batch_growth growth = batch_growth::none;
  std::int64_t fixed_bytes = 0; ///< rows: the bytes it moves at any batch (its weights, once)
  std::int64_t tokens = 0;      ///< routed: the step's tokens (batch × seq_len) it is routed for
  std::int64_t experts = 0, top_k = 0; ///< routed: its mixture's experts and experts per token
  std::int64_t expert_parallel = 1;    ///< routed: its mixture's (moe_layer::expert_parallel)
  std::int64_t sending_ranks = 0;      ///< routed: its mixture's (moe_layer::sending_ranks)
};

/// One kernel-sized piece of work a network lowers to: a GEMM (a convolution's implicit one
/// among them), a memory-bound op, or a fused attention kernel.
struct op {
  std::string layer; ///< "block/attn/qk": the layer's path in the network
  roofline::pass pass = pass::forward;
  std::string kind; ///< "gemm", or the memory op's type ("relu", "softmax", ...)
  roofline::precision precision = precision::fp16;
  std::optional<gemm_shape> gemm;           ///< set for GEMMs
  std::optional<attention_shape> attention; ///< set for fused attention
  std::int64_t elements = 0;                ///< memory-bound ops: output elements
  /// Memory-bound ops: the innermost (contiguous) extent of their tensor: the width a norm or a
  /// softmax reduces over, a batchnorm's channels (NHWC); 0: not known.
  std::int64_t row = 0;
  /// Convolutions: the convolution and pass it was lowered from (op::gemm holds the pass's
  /// implicit GEMM shape).
  std::optional<conv_shape> conv;
  std::optional<pool_shape> pool; ///< maxpool and avgpool: the window and the map it slides over
  std::int64_t count = 1;         ///< how many times it runs per step (repeat blocks)
  std::int64_t flops = 0;         ///< per run
  std::int64_t bytes = 0;         ///< minimum DRAM bytes per run
  source_location where;          ///< the layer in the network file
  /// GEMMs: how its sizes follow the network's batch (other ops: none, not tagged).
  batch_scaling scaling;
  /// A collective: the GPUs it spans (its `bytes`: the message per GPU, as collective_s reads
  /// it), and the ranks between two of them (ranks are numbered node by node: a data-parallel
  /// group's stride is the tensor-parallel degree), which says how many share a node.
  int gpus = 1;
  std::int64_t stride = 1;
  /// A memory-bound op run unfused (memory_layer::unfused): the kernels one run launches, each
  /// an elementwise pass over its share of `bytes`; 1 for every other op.
  int launches = 1;

  bool is_gemm() const noexcept { return gemm.has_value(); }
  /// A fused attention kernel (its kind: fused_attention_kind).
  bool is_fused_attention() const noexcept { return kind == fused_attention_kind; }
  /// An all-reduce between GPUs (its kind: all_reduce_kind).
  bool is_all_reduce() const noexcept { return kind == all_reduce_kind; }
  /// A collective between GPUs (an all-reduce, reduce-scatter, all-gather, all-to-all or send):
  /// time on the links, not the SMs.
  bool is_collective() const noexcept;
  /// The unit whose peak holds it: its precision's for GEMMs and fused attention (tensor cores
  /// where the precision has them), the CUDA cores' fp32 for memory-bound ops.
  roofline::precision unit() const noexcept {
    return is_gemm() || is_fused_attention() ? precision : roofline::precision::fp32;
  }
  /// Its precision as tables name it: "bf16", or with weight-only quantized weights "bf16+int4w".
  std::string precision_label() const;
  /// flops / bytes (FLOP per byte of DRAM traffic).
  double arithmetic_intensity() const noexcept;
};

/// One GEMM as an op (what `roofline-advise gemm M N K` analyses). Throws input_error on overflow.
op make_gemm_op(std::string layer, const gemm_shape &shape, precision p,
                source_location where = {});

} // namespace roofline
