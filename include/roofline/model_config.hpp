// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/network.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

// Transformers as their users have them: a Hugging Face-style config.json, built into the
// network it runs (docs/network-format.md, "Model configs").
namespace roofline {

/// How the transformer blocks' linear layers run: weight-only int8 or int4 weights with the
/// config's 16-bit activations (W8A16: one scale per output column; W4A16: one per group of 128,
/// AWQ's and GPTQ's), or fp8 GEMMs (W8A8).
enum class quantization { w8a16, w4a16, fp8 };

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
  inference_phase phase = inference_phase::prefill;
  std::int64_t batch = 1;
  /// Prefill: the prompt's tokens; decode: the tokens already in the KV cache when `kv_len` is
  /// not given.
  std::int64_t seq_len = 2048;
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
  /// The kernels the glue around the layers runs as.
  glue_style glue = glue_style::eager;
};

/// The network of a config (`model_type` llama, mistral, mixtral, qwen2, qwen2_moe, gemma, gpt2
/// or bert): its decoder (or encoder) blocks with grouped-query attention, the MLP or the
/// mixture of experts, norms and residual adds, the LM head, and the glue around them as
/// `options.glue` runs it (the embedding lookup, rotary embeddings, the KV-cache write, layout
/// copies). Throws input_error, located in `origin`, for an unknown `model_type`, a missing or
/// malformed field, or a model it cannot build (DeepSeek's latent attention, a quantization method
/// it does not model).
network network_from_config(std::string_view json_text, const std::string &origin,
                            const config_options &options = {});

/// Reads a config file (input_error when missing, unreadable or malformed).
network load_model_config(const std::filesystem::path &file, const config_options &options = {});

/// The network as the YAML a user could edit and analyse (docs/network-format.md); repeat
/// blocks kept, notes as comments.
std::string to_network_yaml(const network &net);

} // namespace roofline
