// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/input/network.hpp"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

// Transformers as their users have them: a Hugging Face-style config.json, built into the
// network it runs (docs/network-format.md, "Model configs").
namespace roofline {

/// How the transformer blocks' linear layers run: weight-only int8 or int4 weights with the
/// config's 16-bit activations (W8A16: one scale per output column; W4A16: one per group of 128,
/// AWQ's and GPTQ's), or fp8 GEMMs (W8A8).
enum class quantization { w8a16, w4a16, fp8, nvfp4, mxfp4 };

/// "w8a16", "w4a16" or "fp8"; nullopt otherwise.
std::optional<quantization> parse_quantization(std::string_view name);

/// How the work around the layers (norms, rotary embeddings, the KV-cache write, layout copies)
/// runs: the kernels a framework launches for it.
enum class glue_style {
  /// PyTorch eager running Hugging Face transformers' code: RMSNorm unfused through fp32, RoPE
  /// as apply_rotary_pos_emb, attention's output copied to contiguous rows, each new token's
  /// keys and values written by index_copy_ (a StaticCache; a prefill keeps its own as the cache).
  eager,
  /// A serving engine's kernels (vLLM's, TensorRT-LLM's): one kernel per norm, RoPE and the cache
  /// write as one kernel (in prefill too), attention writing its output where the next GEMM reads
  /// it.
  fused
};

/// "eager" or "fused".
std::string_view to_string(glue_style g);
/// "eager" or "fused"; nullopt otherwise.
std::optional<glue_style> parse_glue_style(std::string_view name);

struct config_options {
  /// Inference (a served step, `phase`), or a training step: the whole `seq_len` of every
  /// sequence forward and backward, no KV cache, the LM head (and the loss) at every position.
  run_mode mode = run_mode::inference;
  /// Training: the optimizer whose state memory counts; unset: AdamW.
  std::optional<roofline::optimizer> optimizer;
  /// Training: the forward results kept for the backward pass; unset: every one (none
  /// recomputed).
  std::optional<recomputation> recompute;
  inference_phase phase = inference_phase::prefill;
  std::int64_t batch = 1;
  /// Prefill: the prompt's tokens; decode: the tokens already in the KV cache when `kv_len` is
  /// not given. Unset: default_seq_len, or the model's context where that is shorter (BERT's 512
  /// positions), the network's notes saying so.
  std::optional<std::int64_t> seq_len;
  /// Decode: the KV cache length each new token attends to; unset: `seq_len`.
  std::optional<std::int64_t> kv_len;
  /// Prefill: the LM head for the last position only (what the first token needs), not for
  /// every prompt position.
  bool last_logits = false;
  /// Attention as one fused kernel (what runs: FlashAttention and its kind); false: the
  /// textbook form, two GEMMs with the softmax's S × kv scores through DRAM.
  bool fused_attention = true;
  /// The blocks' linear layers quantized thus, whatever the config's `quantization_config` says;
  /// unset: as the config says (none without one).
  std::optional<roofline::quantization> quantization;
  /// The KV cache's format (an fp8 cache); unset: the config's dtype.
  std::optional<roofline::precision> kv_cache;
  /// Tensor parallelism over this many GPUs (Megatron's split of each block): the network is
  /// one GPU's share, with the all-reduces between them.
  int tensor_parallel = 1;
  /// Training under tensor parallelism, Megatron's sequence parallelism: the norms and residual
  /// adds (and the activations they keep) split over the GPUs along the sequence, each all-reduce
  /// run as a reduce-scatter and an all-gather (as much traffic).
  bool sequence_parallel = false;
  /// The network is one stage of a pipeline of this many GPUs (each a tensor-parallel group):
  /// ceil(layers / stages) of the blocks, with the embedding and the LM head both (the first
  /// stage's and the last's: a bound on either). In training, with the send of its activations
  /// to the next stage (and of their gradients back), and 1F1B's activations of as many
  /// micro-batches in memory.
  int pipeline_parallel = 1;
  /// Expert parallelism for a mixture of experts: its experts spread over this many GPUs. A served
  /// step's under tensor parallelism is the tensor-parallel group (equal to it, as vLLM's expert
  /// parallelism is): every GPU holds the step's tokens and its experts whole, and runs their
  /// share of the routes. Without it, as many GPUs each run the attention for their own
  /// sequences (data-parallel attention, as DeepSeek's serving does), and all-to-alls send the
  /// tokens to their experts' GPUs and back. In training, Megatron's: the GPUs carved from the
  /// data-parallel ones (`data_parallel` a multiple of it), each expert still split by tensor
  /// parallelism, the all-to-alls between ranks a tensor-parallel group apart.
  int expert_parallel = 1;
  /// Served under data-parallel attention: how many of its ranks have tokens in this step (a
  /// prefill of fewer prompts than ranks, one prompt a rank; the others bring none to the
  /// experts: moe_layer::sending_ranks); 0: every one.
  int token_ranks = 0;
  /// Training: one GPU of this many data-parallel ones (network::data_parallel), each with its
  /// own sequences: the gradients reduced and the weights gathered over them.
  int data_parallel = 1;
  /// Training: ZeRO's stage over the data-parallel GPUs (0 to 3); unset: 1, Megatron's
  /// distributed optimizer.
  std::optional<int> zero_stage;
  /// The kernels the glue around the layers runs as; unset: glue_of's default.
  std::optional<glue_style> glue;
};

/// The GPUs of data-parallel attention a served step of `options` is one rank of: its
/// expert-parallel degree where no tensor parallelism splits the attention (the experts spread
/// over them, the tokens exchanged by all-to-alls), else 1; 1 in training.
int attention_ranks(const config_options &options);

/// The glue `options` run: theirs, else what runs a step of their mode: a serving engine's
/// kernels (fused) for inference, PyTorch eager for training.
glue_style glue_of(const config_options &options);

/// The tokens of a step whose options give no `seq_len`.
inline constexpr std::int64_t default_seq_len = 2048;

/// The positions a model was trained for, as its config says (`max_position_embeddings`, GPT-2's
/// `n_positions`), and the key that says it.
struct context_window {
  std::int64_t positions = 0;
  std::string key;
  /// A learned position table (GPT-2, BERT) has no row past `positions`: a longer step cannot
  /// run. Rotary positions run on past it, untrained.
  bool learned = false;
  /// Rotary positions as the config's `rope_scaling` stretches them (its `factor` times
  /// `original_max_position_embeddings`, else times `positions`); `positions` without one.
  std::int64_t scaled_positions = 0;
  /// "`max_position_embeddings` is 32768, stretched to 131072 by `rope_scaling`".
  std::string describe() const;
};

/// The most GPUs tensor parallelism is modelled over.
inline constexpr std::int64_t max_tensor_parallel = 1024;

/// Throws input_error "--tp N: tensor parallelism is modelled over at most 1024 GPUs" when `gpus`
/// is above max_tensor_parallel, and when it is below 1.
void check_tensor_parallel(std::int64_t gpus);

/// Throws input_error for options no config can be built at, with the CLI's words for them: a
/// batch, sequence or KV length below 1, a `kv_len` outside decode (a prefill's cache is its
/// prompt), `last_logits` in decode, a KV cache wider than 16 bits or with unfused attention, a
/// tensor-parallel degree check_tensor_parallel refuses; an optimizer or recomputation outside
/// training, and in training what only a served step has (decode, `kv_len`, `last_logits`, a KV
/// cache format, quantized weights, a serving engine's glue). Every builder below checks its
/// options so before anything else.
void check_config_options(const config_options &options);

/// A model config, read and parsed once: its JSON and the transformer it describes (its family,
/// widths, precision), ready to be built at any options. Cheap to copy (the parsed config is
/// shared, never changed).
class model_config {
public:
  /// Parses a config (input_error, located in `origin`, for a text that is not JSON, not an
  /// object, of an unknown `model_type`, with a missing or malformed field, or a model it cannot
  /// build: DeepSeek's latent attention, ...).
  model_config(std::string_view json_text, std::string origin);
  /// Reads and parses a config file (input_error when missing, unreadable or malformed).
  static model_config load(const std::filesystem::path &file);

  /// The file (or name) it was read from.
  const std::string &origin() const noexcept;

  /// The model's context window; nullopt when the config gives none.
  const std::optional<context_window> &context() const noexcept;

  /// The network of the config (`model_type` llama, mistral, mixtral, qwen2, qwen2_moe, gemma,
  /// gpt2 or bert) as `options` say: its decoder (or encoder) blocks with grouped-query attention,
  /// the MLP or the mixture of experts, norms and residual adds, the LM head, and the glue around
  /// them as `options.glue` runs it (the embedding lookup, rotary embeddings, the KV-cache write,
  /// layout copies). Throws input_error for options check_config_options refuses, and, located in
  /// the config, for what these options cannot build (heads that do not split over the GPUs, a
  /// decode step of an encoder, a quantization method it does not model).
  network build(const config_options &options = {}) const;

private:
  struct parsed;
  std::shared_ptr<const parsed> m_parsed;
};

/// A model config with the options to build it at: a network source that builds anew at another
/// batch or tensor-parallel degree (roofline::compare_gpus).
struct config_source {
  model_config config;
  config_options options;
};

/// model_config(json_text, origin).build(options), the options checked first.
network network_from_config(std::string_view json_text, const std::string &origin,
                            const config_options &options = {});

/// model_config::load(file).build(options), the options checked before the file is read.
network load_model_config(const std::filesystem::path &file, const config_options &options = {});

} // namespace roofline
