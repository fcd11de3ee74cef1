// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/common/enum_table.hpp"
#include "roofline/common/error.hpp"
#include "roofline/input/op_trace.hpp"
#include "roofline/model/collectives.hpp"
#include "roofline/model/gemm.hpp"
#include "roofline/model/memory_op.hpp"
#include "roofline/model/precision.hpp"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace roofline {

/// Inference runs the forward pass; training adds the data-gradient and weight-gradient passes.
enum class run_mode { inference, training };

/// "inference", "training".
template <> const enum_table<run_mode> &names_of<run_mode>();

std::string_view to_string(run_mode m);

/// The optimizer a training step keeps state for beside its weights and gradients
/// (memory_fit's optimizer_bytes_per_parameter), with mixed precision's fp32 master weights as
/// Megatron-LM and DeepSpeed keep them.
enum class optimizer {
  adamw, ///< two fp32 moments (Adam's first and second)
  sgd    ///< SGD with momentum: one fp32 moment
};

/// "adamw", "sgd".
template <> const enum_table<optimizer> &names_of<optimizer>();

std::string_view to_string(optimizer o);

/// Which forward results a training step keeps for its backward pass.
enum class recomputation {
  none, ///< every forward op's result
  /// Activation checkpointing of every top-level repeat block (a transformer's layers): each
  /// repeat's input kept, its forward run again in the backward pass, one repeat's results held
  /// at a time.
  full
};

/// "none", "full".
template <> const enum_table<recomputation> &names_of<recomputation>();

std::string_view to_string(recomputation r);

/// y = x·W: a GEMM with M = batch·seq_len rows, N = out, K = in.
struct linear_layer {
  std::int64_t in = 0;
  std::int64_t out = 0;
};

/// An explicit (optionally batched) GEMM, not scaled by the network's batch.
struct matmul_layer {
  std::int64_t m = 0, n = 0, k = 0;
  std::int64_t batch_count = 1;
};

/// A 2-D convolution, lowered to its implicit GEMM (one per group).
struct conv2d_layer {
  std::int64_t in_channels = 0, out_channels = 0;
  std::int64_t kernel_h = 0, kernel_w = 0;
  std::int64_t stride_h = 1, stride_w = 1;
  std::int64_t padding_h = 0, padding_w = 0;
  std::int64_t input_h = 0, input_w = 0;
  /// Channel groups (depthwise: as many as channels); divides both channel counts.
  std::int64_t groups = 1;
};

/// Multi-head attention's two batched GEMMs (Q·Kᵀ and P·V) and the softmax between them.
/// Projections are separate linear layers.
struct attention_layer {
  std::int64_t heads = 0, head_dim = 0;
  /// Key/value heads (grouped-query attention: each serves heads / kv_heads query heads);
  /// 0: as many as `heads`.
  std::int64_t kv_heads = 0;
  std::int64_t seq_len = 0; ///< query tokens per sample
  std::int64_t kv_len = 0;  ///< key/value tokens per sample (the KV cache length when decoding)
  bool causal = false;
  /// One fused kernel (FlashAttention-style: Q, K and V read once, the output written once, the
  /// scores never in DRAM; causal masking skips the masked half) instead of the two GEMMs and
  /// the softmax between them.
  bool fused = false;
  /// Sliding-window attention (Mistral's): each query attends to at most this many keys, its own
  /// position's and those before it; 0: no window.
  std::int64_t window = 0;
  /// Keys and values stored in another format than the layer's (an fp8 KV cache); fused
  /// attention reads them at its size.
  std::optional<roofline::precision> kv_precision;
  /// Fused, grouped-query: the keys and values copied out to every query head before the kernel
  /// (transformers' repeat_kv, which its SDPA path runs whenever it passes a mask: decoding into
  /// a StaticCache), so the kernel reads `heads` of them; the cache still holds `kv_heads`.
  bool expanded_kv = false;

  /// `kv_heads`, or `heads` where none was given.
  std::int64_t key_value_heads() const noexcept { return kv_heads > 0 ? kv_heads : heads; }
  /// The key positions some query meets, what the cache must hold: all `kv_len`, or under a
  /// sliding window the last query's window and the `seq_len` − 1 positions before it.
  std::int64_t keys_read() const noexcept {
    if (window <= 0 || window >= kv_len)
      return kv_len;
    const std::int64_t queries = std::min(seq_len, kv_len);
    return queries - 1 >= kv_len - window ? kv_len : window + queries - 1;
  }
  /// The format the keys and values are stored in, for a layer of precision `layer`.
  roofline::precision kv_storage(roofline::precision layer) const noexcept {
    return kv_precision.value_or(layer);
  }
};

/// A mixture-of-experts MLP (Mixtral's): a router sends each of the batch·seq_len tokens to
/// `top_k` of `experts` MLPs, each `in` → `intermediate` → `in` (gated: SwiGLU's gate and up
/// projections, then down), and sums their outputs weighted.
struct moe_layer {
  std::int64_t experts = 0, top_k = 0;
  std::int64_t in = 0, intermediate = 0;
  bool gated = true;
  memory_op_kind activation = memory_op_kind::silu;
  /// Expert parallelism: the experts spread over this many GPUs, each holding experts /
  /// expert_parallel of them (at the layer's `intermediate` width: a tensor-parallel split of
  /// each expert is already in it); the layer is one GPU's share.
  std::int64_t expert_parallel = 1;
  /// Under expert parallelism, how many of those GPUs bring tokens of their own. 0: every one
  /// (data-parallel attention: the tokens travel to their experts' GPUs and back by
  /// all-to-alls, and each GPU's experts serve every GPU's tokens). 1: they hold the same
  /// tokens (tensor-parallel attention before: each runs its experts' share of them, and an
  /// all-reduce sums the outputs). Between: a step in which only some have tokens (a prefill of
  /// fewer prompts than data-parallel ranks), each bringing as many as this GPU.
  std::int64_t sending_ranks = 0;
};

/// The GPUs that bring `moe`'s tokens to its experts (moe_layer::sending_ranks; 0: all of the
/// expert-parallel ones).
std::int64_t senders_of(const moe_layer &moe);

/// An elementwise or normalisation op; acts on the previous layer's output unless `features` is
/// set.
struct memory_layer {
  memory_op_kind kind{};
  std::optional<std::int64_t> features; ///< elements per row (rows = batch·seq_len)
  /// Run as a framework writes it, in separate kernels (memory_op_cost::unfused): only for kinds
  /// that have such a form.
  bool unfused = false;
  /// With `features`: its rows split over this many GPUs (Megatron's sequence parallelism: each
  /// GPU its share of the tokens, each row whole).
  std::int64_t sequence_split = 1;
};

/// A collective between the GPUs a step is spread over, on one tensor: Megatron's all-reduce
/// after a row-parallel layer (each GPU's partial result summed), a mixture of experts'
/// all-to-all (each token sent to its experts' GPUs, and back), a send between pipeline stages.
struct collective_layer {
  collective kind = collective::all_reduce;
  int gpus = 2;
  std::int64_t stride = 1;              ///< the ranks between two of its GPUs (op::stride)
  std::optional<std::int64_t> features; ///< elements per row (rows = batch·seq_len); else the
                                        ///< previous layer's output
  std::int64_t copies = 1; ///< each row sent this many times (an all-to-all's: a MoE's top_k)
};

/// The most GPUs a collective layer spans.
inline constexpr std::int64_t max_collective_gpus = 1 << 20;

/// Max or average pooling over a [channels, H, W] map per sample.
struct pool_layer {
  memory_op_kind kind{}; ///< maxpool or avgpool
  std::int64_t kernel = 0, stride = 0, padding = 0;
  std::optional<std::int64_t> channels, input_h, input_w; ///< else from the previous layer
};

struct layer;

/// `times` repetitions of a list of layers (counted, not expanded).
struct repeat_block {
  std::int64_t times = 1;
  std::vector<layer> layers;
};

/// One entry of a network's `layers`.
struct layer {
  std::string name;
  std::optional<roofline::precision> precision; ///< overrides the network's
  /// Weight-only quantization of the linear layers within (overrides the network's).
  std::optional<quantized_weights> weights;
  source_location where;
  std::variant<linear_layer, matmul_layer, conv2d_layer, attention_layer, moe_layer, memory_layer,
               collective_layer, pool_layer, repeat_block>
      body;
};

/// Which step of serving a language model a network is: the prompt at once, or one new token.
enum class inference_phase { prefill, decode };

/// "prefill", "decode".
template <> const enum_table<inference_phase> &names_of<inference_phase>();

/// "prefill" or "decode".
std::string_view to_string(inference_phase p);
/// "prefill" or "decode"; nullopt otherwise.
std::optional<inference_phase> parse_inference_phase(std::string_view name);

/// A model config's field and its value, where it sets a layer's features.
struct config_size {
  std::string field; ///< "vocab_size", "hidden_size", "intermediate_size"; "": none
  std::int64_t value = 0;
};

/// The config fields of a layer's input and output features (a linear layer's `in` and `out`, a
/// matmul's K and N), so that advice names them as the config does ("vocab_size 32001 → 32064").
struct layer_config_sizes {
  config_size in, out;
};

/// Data parallelism of a training step: the GPUs that hold the same share of the model, each
/// training its own sequences, their gradients reduced and their weights gathered between them.
struct data_parallelism {
  int gpus = 1;
  /// ZeRO's stage: 0, every GPU all the state (the gradients all-reduced); 1, the optimizer state
  /// sharded over the group (the gradients reduce-scattered, the updated weights all-gathered);
  /// 2, the gradients too; 3, the weights too (FSDP: gathered for each micro-batch's forward and
  /// backward).
  int zero_stage = 1;
  std::int64_t stride = 1; ///< the ranks between two of its GPUs (the tensor-parallel degree)
  /// Expert parallelism carved out of the group (Megatron's): each expert's state is held by
  /// gpus / expert_parallel of them, its gradients reduced over those.
  int expert_parallel = 1;
};

/// A network as described in its YAML file (docs/network-format.md).
struct network {
  std::string name;
  std::string description;
  roofline::precision precision = precision::fp16;
  /// Weight-only quantization of every linear layer (unless a layer says otherwise).
  std::optional<quantized_weights> weights;
  std::int64_t batch = 1;
  std::int64_t seq_len = 1;
  run_mode mode = run_mode::inference;
  /// Training: the optimizer whose state memory counts, and the forward results kept.
  roofline::optimizer optimizer = optimizer::adamw;
  recomputation recompute = recomputation::none;
  /// Training: the data-parallel group the step is one GPU of.
  data_parallelism data_parallel;
  /// The network is one stage of a pipeline of this many, which run at once (a comparison's
  /// throughput takes them all); in training, 1F1B's first stage holds the activations of as
  /// many micro-batches at once.
  int pipeline_stages = 1;
  /// A model config's: how its glue runs ("fused", "eager"); "" for a network written out.
  std::string glue;
  std::vector<layer> layers;
  std::string origin; ///< the file it came from
  /// What the reader must know of how it was built (a model config: what was left out); the
  /// analysis repeats them.
  std::vector<std::string> notes;
  /// Weights held in memory that no layer runs (a model config's token embedding table), at
  /// most max_resident_weight_bytes.
  double resident_weight_bytes = 0;
  /// Set for a language model's step (a model config): its time then answers time to first
  /// token (prefill) or time per output token (decode).
  std::optional<inference_phase> phase;
  std::int64_t kv_len = 0; ///< decode: the KV cache each new token attends to
  /// A model config's: by layer path ("decoder_layer/up_proj"), the config fields that set its
  /// features; layers not in it are named by their GEMM's N and K.
  std::map<std::string, layer_config_sizes> config_sizes;
  /// A captured program (an op trace): its ops as they ran, in place of layers, and its memory
  /// walked from its tensors' lifetimes.
  std::optional<traced_program> trace;
};

/// A captured program (an op trace, docs/op-trace-format.md) as a network: its ops in place of
/// layers, its precision its GEMMs' most common, training where it has a backward pass.
network network_of_trace(traced_program program, const std::string &origin);

/// `file` as a captured program's network where it is an op trace (is_op_trace); nullopt for any
/// other file (a model config). Throws input_error when it cannot be read or is a malformed trace.
std::optional<network> load_op_trace(const std::filesystem::path &file);

/// The most bytes of weights a network may hold that no layer runs
/// (network::resident_weight_bytes): 2^63, as every size is a 64-bit integer.
inline constexpr double max_resident_weight_bytes = 9223372036854775808.0;

/// The most ops one network may lower to: the forward pass's and, in training, the backward
/// passes' (a repeat block's ops count once: its repeats are counted, not expanded). The work
/// and the report grow with the ops (about 5 KB of memory and 1.6 KB of JSON each), so this
/// bounds them: 300,000 ops take seconds and a few GB.
inline constexpr std::int64_t max_ops = 300'000;

/// The longest full name a layer may have (its repeat blocks' names and its own, joined by `/`,
/// as its ops are named), in bytes.
inline constexpr std::size_t max_layer_path_bytes = 256;

/// The full name of a layer named `name` inside repeat blocks whose full name is `prefix`.
std::string layer_path(const std::string &prefix, const std::string &name);

/// The ops lower() (lowering.hpp) makes of `l` in `mode`: 1 to 8 for a layer, its layers' sum for a
/// repeat block (once).
std::int64_t op_count(const layer &l, run_mode mode);
/// The ops lower(net) makes.
std::int64_t op_count(const network &net);

/// The limits lower() and the network reader check for each layer: throws input_error at
/// `where` when `path` (a layer's full name) is longer than max_layer_path_bytes or `ops` (those
/// of the layers up to this one) is past max_ops.
void check_layer_limits(const std::string &path, std::int64_t ops, const source_location &where);

/// The tokens a step of `net` runs, as headers say them: "seq_len 2048"; a decode step's new
/// tokens and its KV cache ("1 new token a sequence, KV cache 2048"), not a bare "seq_len 1".
std::string step_tokens(const network &net);

/// What throughput counts: a language model's tokens, an image model's images, else samples.
enum class throughput_unit { tokens, images, samples };

/// "tokens", "images", "samples".
template <> const enum_table<throughput_unit> &names_of<throughput_unit>();

std::string_view to_string(throughput_unit u);

/// What a step of `net` processes, as throughput counts it: tokens where it has a sequence (a
/// language model's step, seq_len above 1, or an attention layer); else images for a network
/// with a conv2d layer, samples otherwise.
throughput_unit throughput_unit_of(const network &net);

/// Parses a network from YAML text; `origin` names the file in errors. Throws input_error, also
/// for a network past the limits above (checked as it is read: YAML aliases stop expanding there).
network parse_network(std::string_view yaml_text, const std::string &origin);

/// Reads and parses a network file. Throws input_error (missing, unreadable, malformed).
network load_network(const std::filesystem::path &file);

/// A network of one GEMM, C[M,N] = A[M,K]·B[K,N] (`batch_count` of them): what
/// `roofline-advise gemm` analyses.
network single_gemm(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch_count,
                    roofline::precision p);

} // namespace roofline
