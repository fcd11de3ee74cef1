// SPDX-License-Identifier: Apache-2.0
#include "roofline/input/model_config.hpp"

#include "roofline/common/error.hpp"
#include "roofline/model/memory_op.hpp"

#include "checked_math.hpp"
#include "json_reader.hpp"
#include "suggest.hpp"
#include "text_format.hpp"
#include "yaml_reader.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <functional>
#include <map>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <variant>

namespace roofline {

std::optional<quantization> parse_quantization(std::string_view name) {
  if (name == "w8a16")
    return quantization::w8a16;
  if (name == "w4a16")
    return quantization::w4a16;
  if (name == "fp8")
    return quantization::fp8;
  if (name == "nvfp4")
    return quantization::nvfp4;
  if (name == "mxfp4")
    return quantization::mxfp4;
  return std::nullopt;
}

std::string_view to_string(glue_style g) {
  return g == glue_style::eager ? "eager" : "fused";
}

int attention_ranks(const config_options &options) {
  return options.mode != run_mode::training && options.tensor_parallel == 1
             ? std::max(1, options.expert_parallel)
             : 1;
}

glue_style glue_of(const config_options &options) {
  return options.glue.value_or(options.mode == run_mode::training ? glue_style::eager
                                                                  : glue_style::fused);
}

std::optional<glue_style> parse_glue_style(std::string_view name) {
  if (name == "eager")
    return glue_style::eager;
  if (name == "fused")
    return glue_style::fused;
  return std::nullopt;
}

namespace {

using detail::yaml_map;
using detail::yaml_node;

/// What the builder needs of a config, whatever the family calls it.
struct transformer_shape {
  std::string family;
  std::int64_t hidden = 0, layers = 0, heads = 0, kv_heads = 0, head_dim = 0, intermediate = 0,
               vocab = 0;
  roofline::precision precision = precision::fp16;
  bool gated_mlp = true; ///< gate and up projections, then down (Llama's SwiGLU)
  memory_op_kind activation = memory_op_kind::silu;
  memory_op_kind norm = memory_op_kind::rmsnorm;
  bool encoder = false;   ///< BERT: bidirectional, norms after the adds, no LM head
  bool fused_qkv = false; ///< GPT-2's c_attn: one linear of 3 × hidden outputs
  /// Rotary position embeddings on the queries and keys (GPT-2 and BERT learn absolute ones,
  /// added to the token embeddings instead).
  bool rotary = true;
  std::int64_t window = 0; ///< sliding-window attention's window (Mistral); 0: none
  /// A mixture of experts in place of the MLP: `experts` of `expert_intermediate` width, `top_k`
  /// per token, and (Qwen2-MoE) a shared expert every token runs; none when `experts` is 0.
  std::int64_t experts = 0, top_k = 0, expert_intermediate = 0, shared_intermediate = 0;
  int tensor_parallel = 1; ///< the widths above are one GPU's share of this many
  /// The experts spread over this many GPUs (config_options::expert_parallel): `experts` is
  /// still all of them.
  int expert_parallel = 1;
  /// Expert parallelism over the tensor-parallel group (a served step's): every GPU holds the
  /// step's tokens and its experts whole. Otherwise the tokens travel to their experts' GPUs by
  /// all-to-alls (data-parallel attention, or training's experts carved from data parallelism,
  /// each expert split by tensor parallelism as Megatron splits it).
  bool experts_over_tensor_parallel = false;
  /// The GPUs that bring tokens to the experts (moe_layer::sending_ranks; 0: all of them).
  std::int64_t sending_ranks = 0;
  /// Sequence parallelism: the GPUs the norms' and residual adds' rows are split over (each GPU
  /// its share of the tokens; 1: none).
  std::int64_t sequence_split = 1;
  /// What one GPU sends of the residual stream a row of the step (a pipeline stage's send, an
  /// all-to-all's tokens): in training its tensor-parallel share, as Megatron scatters a send
  /// over the group and runs a mixture of experts under sequence parallelism; else all of it.
  std::int64_t exchanged = 0;
  std::optional<context_window> context;
};

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return a / b + (a % b != 0);
}

/// `s` split over `gpus` as Megatron splits a block: attention heads (and key/value heads; when
/// fewer than the GPUs, each GPU holds one, replicated), the MLP's and each expert's inner width,
/// and the vocabulary, each GPU taking its share (the largest, where a width does not divide).
/// Notes in `notes` what a reader must know.
transformer_shape sharded(transformer_shape s, int gpus, const yaml_map &map,
                          std::vector<std::string> &notes) {
  if (gpus <= 1)
    return s;
  const bool experts_whole = s.experts_over_tensor_parallel; // spread over the GPUs instead
  const char *heads_key = s.family == "gpt2" ? "n_head" : "num_attention_heads";
  if (s.heads % gpus != 0)
    map.fail(heads_key,
             fmt::format("the {} attention heads do not split over {} GPUs", s.heads, gpus));
  if (s.kv_heads % gpus != 0 && gpus % s.kv_heads != 0)
    map.fail("num_key_value_heads",
             fmt::format("the {} key/value heads neither split over {} GPUs nor replicate "
                         "evenly on them",
                         s.kv_heads, gpus));
  const std::int64_t kv_heads = s.kv_heads >= gpus ? s.kv_heads / gpus : 1;
  std::vector<std::string> uneven;
  const auto share = [&](std::int64_t &width, const char *name) {
    if (width % gpus != 0)
      uneven.push_back(
          fmt::format("{} {} (each GPU takes {})", name, width, ceil_div(width, gpus)));
    width = ceil_div(width, gpus);
  };
  share(s.intermediate, "the MLP's width");
  if (s.expert_intermediate > 0 && !experts_whole)
    share(s.expert_intermediate, "each expert's width");
  if (s.shared_intermediate > 0)
    share(s.shared_intermediate, "the shared expert's width");
  share(s.vocab, "the vocabulary");
  notes.push_back(fmt::format(
      "tensor parallel over {} GPUs (Megatron's split): every shape, weight and cache below is one "
      "GPU's: {} of {} attention heads, {} key/value head{}{}, the MLP{} and the LM head split by "
      "width; an all-reduce of the hidden state follows each block's attention and MLP, and the "
      "embedding lookup; gathering the logits is left out{}",
      gpus, s.heads / gpus, s.heads, kv_heads, kv_heads == 1 ? "" : "s",
      s.kv_heads < gpus ? fmt::format(" (the {} are replicated)", s.kv_heads) : std::string{},
      s.experts > 0 && !experts_whole ? "'s experts" : "",
      uneven.empty() ? std::string{}
                     : fmt::format("; {} do not divide evenly", fmt::join(uneven, ", "))));
  s.heads /= gpus;
  s.kv_heads = kv_heads;
  s.tensor_parallel = gpus;
  return s;
}

const std::vector<std::string> model_types{"llama",     "mistral", "mixtral", "qwen2",
                                           "qwen2_moe", "gemma",   "gpt2",    "bert"};

/// Keys that give a mixture of experts' size, in the families that have one or not.
constexpr std::array<const char *, 3> expert_keys{"num_local_experts", "num_experts",
                                                  "n_routed_experts"};

/// JSON is typed: a number or a boolean written as a string ("4096", "true") is refused where
/// `key` is read as one, as a list or an object is (`expected`: "a positive integer").
void refuse_string(const yaml_map &map, const std::string &key, const char *expected) {
  if (map.has(key) && map.required(key).quoted())
    map.fail(key, fmt::format("`{}` must be {}, got the string {}", key, expected,
                              detail::describe(map.required(key))));
}

class config_reader {
public:
  config_reader(const yaml_node &root, const std::string &origin)
      : m_map(root, origin, "config", yaml_map::any_keys{}) {}

  const yaml_map &map() const { return m_map; }

  /// A positive integer under the first of `keys` present (and not null); nullopt when none is.
  std::optional<std::int64_t> optional_int(std::initializer_list<const char *> keys) const {
    for (const char *key : keys)
      if (m_map.has(key) && !m_map.required(key).is_null()) {
        refuse_string(m_map, key, "a positive integer");
        return m_map.positive_int(key);
      }
    return std::nullopt;
  }

  std::int64_t required_int(std::initializer_list<const char *> keys) const {
    if (auto value = optional_int(keys))
      return *value;
    throw input_error(m_map.where(), fmt::format("config: missing `{}` (a positive integer), "
                                                 "which the {} network needs",
                                                 *keys.begin(), family_name()));
  }

  /// The string under `key`; "" when absent or null. Anything else (a list, an object) is
  /// refused, never read as absent.
  std::string optional_string(const char *key) const {
    if (!m_map.has(key) || m_map.required(key).is_null())
      return {};
    const yaml_node value = m_map.required(key);
    if (!value.is_scalar())
      m_map.fail(key, fmt::format("`{}` must be a string, got {}", key, detail::describe(value)));
    return std::string(value.scalar());
  }

  /// The boolean under `key`; `fallback` when absent or null (as every field reads null).
  bool boolean_or(const char *key, bool fallback) const {
    if (!m_map.has(key) || m_map.required(key).is_null())
      return fallback;
    refuse_string(m_map, key, "true or false");
    return m_map.boolean_or(key, fallback);
  }

  std::string family_name() const { return m_family; }
  void set_family(std::string family) { m_family = std::move(family); }

private:
  yaml_map m_map;
  std::string m_family = "transformer";
};

roofline::precision precision_of(const config_reader &config) {
  const std::string dtype = config.optional_string("torch_dtype");
  if (dtype.empty() || dtype == "float16")
    return precision::fp16;
  if (dtype == "bfloat16")
    return precision::bf16;
  if (dtype == "float32")
    return precision::fp32;
  config.map().fail("torch_dtype", "`torch_dtype` `" + detail::shown_value(dtype) +
                                       "` is not one this tool runs; expected float16, bfloat16 "
                                       "or float32");
}

memory_op_kind activation_of(const config_reader &config, const char *key,
                             memory_op_kind fallback) {
  const std::string name = config.optional_string(key);
  if (name.empty())
    return fallback;
  if (name == "silu" || name == "swish")
    return memory_op_kind::silu;
  if (name.rfind("gelu", 0) == 0)
    return memory_op_kind::gelu;
  if (name == "relu")
    return memory_op_kind::relu;
  config.map().fail(key, "`" + std::string(key) + "` `" + detail::shown_value(name) +
                             "` is not an activation this tool knows; expected silu, gelu or relu");
}

/// The family's widths: GPT-2's own keys, or those of Llama and the families that follow it (BERT
/// an encoder).
void read_widths(const config_reader &config, transformer_shape &s) {
  const std::string &type = s.family;
  if (type == "gpt2") {
    s.hidden = config.required_int({"n_embd", "hidden_size"});
    s.layers = config.required_int({"n_layer", "num_hidden_layers"});
    s.heads = config.required_int({"n_head", "num_attention_heads"});
    s.intermediate = config.optional_int({"n_inner"}).value_or(0); // 4 × hidden, below
    s.vocab = config.required_int({"vocab_size"});
    s.gated_mlp = false;
    s.activation = activation_of(config, "activation_function", memory_op_kind::gelu);
    s.norm = memory_op_kind::layernorm;
    s.fused_qkv = true;
    s.rotary = false;
    return;
  }
  s.hidden = config.required_int({"hidden_size"});
  s.layers = config.required_int({"num_hidden_layers"});
  s.heads = config.required_int({"num_attention_heads"});
  s.intermediate = config.required_int({"intermediate_size"});
  s.vocab = config.required_int({"vocab_size"});
  if (type == "bert") {
    s.gated_mlp = false;
    s.encoder = true;
    s.rotary = false;
    s.norm = memory_op_kind::layernorm;
    s.activation = activation_of(config, "hidden_act", memory_op_kind::gelu);
    return;
  }
  s.kv_heads = config.optional_int({"num_key_value_heads"}).value_or(0);
  s.head_dim = config.optional_int({"head_dim"}).value_or(0);
  s.activation = activation_of(config, type == "gemma" ? "hidden_activation" : "hidden_act",
                               type == "gemma" ? memory_op_kind::gelu : memory_op_kind::silu);
  if (type == "gemma" && config.optional_string("hidden_activation").empty())
    s.activation = activation_of(config, "hidden_act", memory_op_kind::gelu);
}

/// A mixture of experts' sizes (Mixtral, Qwen2-MoE); nothing for the other families.
void read_experts(const config_reader &config, transformer_shape &s) {
  const yaml_map &map = config.map();
  if (s.family == "mixtral") {
    s.experts = config.required_int({"num_local_experts"});
    s.top_k = config.required_int({"num_experts_per_tok"});
    s.expert_intermediate = s.intermediate;
  } else if (s.family == "qwen2_moe") {
    s.experts = config.required_int({"num_experts"});
    s.top_k = config.required_int({"num_experts_per_tok"});
    s.expert_intermediate = config.required_int({"moe_intermediate_size"});
    s.shared_intermediate = config.optional_int({"shared_expert_intermediate_size"}).value_or(0);
    // Every layer a mixture of experts; a dense MLP in some would need blocks of two kinds.
    if (config.optional_int({"decoder_sparse_step"}).value_or(1) != 1)
      map.fail("decoder_sparse_step", "only `decoder_sparse_step` 1 (experts in every layer) is "
                                      "modelled");
    if (map.has("mlp_only_layers")) {
      const yaml_node dense = map.required("mlp_only_layers");
      if (!dense.is_null() && !dense.is_sequence())
        map.fail("mlp_only_layers", "`mlp_only_layers` must be a list of layer indices, got " +
                                        detail::describe(dense));
      if (dense.size() > 0)
        map.fail("mlp_only_layers", "dense MLP layers among the experts (`mlp_only_layers`) are "
                                    "not modelled");
    }
  }
  if (s.top_k > s.experts)
    map.fail(
        "num_experts_per_tok",
        fmt::format("`num_experts_per_tok` = {} is more than the {} experts", s.top_k, s.experts));
}

/// The heads and widths a config may leave out (key/value heads, `head_dim`, GPT-2's inner
/// width) filled in, and all of them checked against each other and against 64-bit products.
void complete_widths(const yaml_map &map, transformer_shape &s) {
  if (s.kv_heads == 0)
    s.kv_heads = s.heads;
  if (s.head_dim == 0) {
    if (s.hidden % s.heads != 0)
      map.fail("num_attention_heads",
               fmt::format("the hidden size {} is not a multiple of the {} heads: give `head_dim`",
                           s.hidden, s.heads));
    s.head_dim = s.hidden / s.heads;
  }
  // The widths the block multiplies out must fit the integers the layers hold.
  const auto checked = [&](const char *key, std::initializer_list<std::int64_t> factors) {
    const std::optional<std::int64_t> product = detail::checked_product(factors);
    if (!product)
      map.fail(key, "the sizes this config gives overflow a 64-bit integer");
    return *product;
  };
  checked("num_attention_heads", {s.heads, s.head_dim, 3}); // q, k and v side by side
  if (s.intermediate == 0)
    s.intermediate = checked("n_embd", {s.hidden, 4});
  checked("intermediate_size", {s.intermediate, 2});
  if (s.heads % s.kv_heads != 0)
    map.fail("num_key_value_heads",
             fmt::format("`num_key_value_heads` = {} must divide the {} attention heads",
                         s.kv_heads, s.heads));
}

/// The positions a rotary model's `rope_scaling` (YaRN, Llama 3's, linear, dynamic NTK) stretches
/// `positions` to: its `factor` times `original_max_position_embeddings` where given, else times
/// `positions`; `positions` where it gives no factor (Qwen2-VL's mrope) or stretches less.
std::int64_t rope_scaled_positions(const config_reader &config, std::int64_t positions) {
  const yaml_map &top = config.map();
  if (!top.has("rope_scaling") || top.required("rope_scaling").is_null())
    return positions;
  const yaml_map map(top.required("rope_scaling"), top.file(), "config `rope_scaling`",
                     yaml_map::any_keys{});
  if (!map.has("factor"))
    return positions;
  const double factor = map.positive_number("factor");
  const double original = static_cast<double>(
      map.optional_positive_int("original_max_position_embeddings").value_or(positions));
  // A billion positions: past any model's context, and far inside an int64.
  constexpr double most_positions = 1 << 30;
  if (factor * original > most_positions)
    map.fail("factor", fmt::format("`factor` {} stretches the context to {:.3g} positions; "
                                   "expected at most {:.0f}",
                                   factor, factor * original, most_positions));
  return std::max(positions, static_cast<std::int64_t>(std::llround(factor * original)));
}

transformer_shape shape_of(config_reader &config) {
  const yaml_map &map = config.map();
  const std::string type = map.string("model_type");
  transformer_shape s;
  s.family = type;
  if (map.has("kv_lora_rank"))
    map.fail("kv_lora_rank", "multi-head latent attention (DeepSeek-V2 and V3: keys and values "
                             "through a low-rank latent) is not modelled; describe the network "
                             "in YAML (docs/network-format.md)");
  if (std::find(model_types.begin(), model_types.end(), type) == model_types.end())
    map.fail("model_type", "unknown `model_type` `" + detail::shown_value(type) + "`" +
                               detail::did_you_mean(type, model_types) + "; expected " +
                               detail::quoted_list(model_types));
  config.set_family(type);
  const bool moe = type == "mixtral" || type == "qwen2_moe";
  for (const char *key : expert_keys)
    if (!moe && map.has(key))
      map.fail(key, "`" + std::string(key) + "` gives experts, but `model_type` `" +
                        detail::shown_value(type) +
                        "` has none; a mixture of experts is read for `mixtral` and `qwen2_moe`");
  s.precision = precision_of(config);
  read_widths(config, s);
  read_experts(config, s);
  // Mistral's and Mixtral's window applies to every layer; Qwen2's only when switched on, and
  // then to some layers.
  if ((type == "qwen2" || type == "qwen2_moe") && config.boolean_or("use_sliding_window", false))
    map.fail("use_sliding_window", "Qwen2's sliding window on some layers (`use_sliding_window`, "
                                   "`max_window_layers`) is not modelled");
  if (type == "mistral" || type == "mixtral")
    s.window = config.optional_int({"sliding_window"}).value_or(0);
  complete_widths(map, s);
  // The context it was trained for: a learned position table (GPT-2, BERT) has no row past it,
  // and rotary models are untested there.
  for (const char *key : {"max_position_embeddings", "n_positions", "n_ctx"})
    if (const auto positions = config.optional_int({key})) {
      s.context = context_window{*positions, key, !s.rotary, *positions};
      if (s.rotary)
        s.context->scaled_positions = rope_scaled_positions(config, *positions);
      break;
    }
  return s;
}

/// How the blocks' linear layers are stored and run, and a note saying so.
struct linear_quantization {
  std::optional<quantized_weights> weights; ///< weight-only
  bool fp8 = false;                         ///< fp8 GEMMs
  bool fp4 = false;                         ///< fp4 GEMMs (weights and activations)
  std::string note;
};

/// The config's `quantization_config` (AWQ and GPTQ: weight-only `bits` with a scale per
/// `group_size`, −1 for one per column; fp8), or `chosen` in its place.
linear_quantization quantization_of(const config_reader &config,
                                    const std::optional<quantization> &chosen) {
  linear_quantization q;
  std::string source = "config_options::quantization";
  if (chosen) {
    if (*chosen == quantization::fp8)
      q.fp8 = true;
    else if (*chosen == quantization::nvfp4 || *chosen == quantization::mxfp4)
      q.fp4 = true;
    else
      q.weights =
          *chosen == quantization::w4a16 ? quantized_weights{4, 128} : quantized_weights{8, 0};
  } else if (config.map().has("quantization_config")) {
    const yaml_map map(config.map().required("quantization_config"), config.map().file(),
                       "config `quantization_config`", yaml_map::any_keys{});
    const std::string method = map.string("quant_method");
    source = "its `quantization_config` (" + detail::shown_value(method) + ")";
    if (method == "fp8") {
      q.fp8 = true;
    } else if (method == "awq" || method == "gptq") {
      refuse_string(map, "bits", "a positive integer");
      refuse_string(map, "group_size", "a positive integer or -1");
      const std::int64_t bits = map.positive_int("bits");
      if (bits != 4 && bits != 8)
        map.fail("bits", fmt::format("{}-bit weights are not modelled; expected 4 or 8", bits));
      std::int64_t group = 128;
      if (map.has("group_size"))
        group =
            map.required("group_size").is_scalar() && map.required("group_size").scalar() == "-1"
                ? 0
                : map.non_negative_int_or("group_size", 128);
      q.weights = quantized_weights{static_cast<int>(bits), group};
    } else {
      map.fail("quant_method",
               "`quant_method` `" + detail::shown_value(method) +
                   "` is not modelled; expected awq, gptq or fp8 (or choose with "
                   "config_options::quantization w8a16, w4a16, fp8, nvfp4 or mxfp4)");
    }
  }
  if (q.fp4)
    q.note = fmt::format(
        "the blocks' linear layers run fp4 GEMMs ({}: weights and activations in 4 bits, the "
        "weights counted with an fp8 scale per 16, nvfp4's layout{}), as {} says; attention, "
        "norms and the LM head stay in the config's precision",
        *chosen == quantization::nvfp4 ? "nvfp4" : "mxfp4",
        *chosen == quantization::mxfp4 ? ", a little more than mxfp4's scale per 32" : "", source);
  else if (q.weights)
    q.note = fmt::format(
        "the blocks' linear layers hold int{} weights ({}), as {} says, widened on chip to the "
        "activations' precision in which the math runs; the LM head and the embeddings are not "
        "quantized. Weight-only kernels (Marlin, AWQ, GPTQ) have not been timed: the GEMM model "
        "costs them as cuBLAS's kernel reading the quantized bytes",
        q.weights->bits,
        q.weights->group_size > 0
            ? fmt::format("an fp16 scale per {} along K", q.weights->group_size)
            : std::string("an fp16 scale per output column"),
        source);
  else if (q.fp8)
    q.note = fmt::format("the blocks' linear layers run fp8 GEMMs (weights and activations in "
                         "fp8, outputs counted as fp8), as {} says; attention, norms and the LM "
                         "head stay in the config's precision",
                         source);
  return q;
}

/// Every layer of `layers` located at `where`, the config file: a layer's sizes come from several
/// of its keys and the command line, so an error in the network it builds (a size that overflows)
/// names the file, not a line.
void locate(std::vector<layer> &layers, const source_location &where) {
  for (layer &l : layers) {
    l.where = where;
    if (auto *block = std::get_if<repeat_block>(&l.body))
      locate(block->layers, where);
  }
}

layer make(std::string name, decltype(layer::body) body) {
  layer l;
  l.name = std::move(name);
  l.body = std::move(body);
  return l;
}

layer linear(std::string name, std::int64_t in, std::int64_t out) {
  return make(std::move(name), linear_layer{in, out});
}

layer memory(std::string name, memory_op_kind kind, std::int64_t features, bool unfused = false,
             std::int64_t sequence_split = 1) {
  return make(std::move(name), memory_layer{kind, features, unfused, sequence_split});
}

/// The residual stream's op of `kind` (a norm, a residual add): whole rows, each GPU its share
/// of them under sequence parallelism.
layer residual(std::string name, memory_op_kind kind, const transformer_shape &s,
               bool unfused = false) {
  return memory(std::move(name), kind, s.hidden, unfused, s.sequence_split);
}

/// A norm as `glue` runs it: transformers writes RMSNorm unfused (its kernels through fp32);
/// LayerNorm is PyTorch's one kernel.
layer norm_layer(std::string name, const transformer_shape &s, glue_style glue) {
  return residual(std::move(name), s.norm, s,
                  glue == glue_style::eager && cost_of(s.norm).unfused.has_value());
}

/// The token embedding lookup, and the learned positions (and BERT's token types) added to it.
std::vector<layer> embedding_of(const transformer_shape &s, glue_style glue) {
  std::vector<layer> layers{memory("embed_tokens", memory_op_kind::embedding, s.hidden)};
  // Megatron's vocabulary-parallel embedding sums its shares of the looked-up rows.
  if (s.tensor_parallel > 1)
    layers.push_back(make("embed_all_reduce", collective_layer{collective::all_reduce,
                                                               s.tensor_parallel, 1, s.hidden}));
  if (s.rotary)
    return layers;
  layers.push_back(memory("embed_positions", memory_op_kind::embedding, s.hidden));
  layers.push_back(memory("embed_add", memory_op_kind::add, s.hidden));
  if (s.encoder) {
    layers.push_back(memory("embed_token_types", memory_op_kind::embedding, s.hidden));
    layers.push_back(memory("embed_types_add", memory_op_kind::add, s.hidden));
    layers.push_back(norm_layer("embed_norm", s, glue));
  }
  return layers;
}

std::vector<layer> block_of(const transformer_shape &s, const attention_layer &attention,
                            glue_style glue, bool decode) {
  const std::int64_t q_width = s.heads * s.head_dim, kv_width = s.kv_heads * s.head_dim;
  std::vector<layer> block;
  const auto norm = [&](std::string name) { block.push_back(norm_layer(name, s, glue)); };
  if (!s.encoder)
    norm(s.fused_qkv ? "ln_1" : "input_norm");
  if (s.fused_qkv) {
    block.push_back(linear("c_attn", s.hidden, q_width + 2 * kv_width));
  } else if (glue == glue_style::fused && !s.encoder) { // an engine's one QKV GEMM
    block.push_back(linear("qkv_proj", s.hidden, q_width + 2 * kv_width));
  } else {
    block.push_back(linear("q_proj", s.hidden, q_width));
    block.push_back(linear("k_proj", s.hidden, kv_width));
    block.push_back(linear("v_proj", s.hidden, kv_width));
  }
  // Positions into the queries and keys, and the keys and values into the cache: eager, RoPE
  // and (decoding) index_copy_ of the new token; a serving engine writes the cache in prefill
  // too, in the kernel that rotates (its queries, keys and values, each read and written once).
  if (glue == glue_style::eager) {
    if (s.rotary)
      block.push_back(memory("rotary", memory_op_kind::rope, q_width + kv_width));
    if (decode)
      block.push_back(memory("kv_append", memory_op_kind::kv_append, 2 * kv_width));
  } else if (!s.encoder) { // costed as a copy: one pass in, one out, no scattered rows
    block.push_back(memory(s.rotary ? "rotary_kv_write" : "kv_write", memory_op_kind::copy,
                           (s.rotary ? q_width : 0) + 2 * kv_width));
  }
  // SDPA writes its output in the queries' layout, [batch, tokens, heads, head_dim] under
  // transformers' transposed views: making it contiguous for the output projection copies nothing.
  block.push_back(make("self_attn", attention));
  block.push_back(linear("o_proj", q_width, s.hidden));
  // Row-parallel layers leave partial sums on every GPU: summed before the residual add.
  const auto all_reduce = [&](std::string name) {
    if (s.tensor_parallel > 1)
      block.push_back(make(std::move(name), collective_layer{collective::all_reduce,
                                                             s.tensor_parallel, 1, s.hidden}));
  };
  all_reduce("attn_all_reduce");
  block.push_back(residual("attn_add", memory_op_kind::add, s));
  norm(s.encoder ? "attn_norm" : s.fused_qkv ? "ln_2" : "post_norm");
  // The MLP, gated (gate and up, then down) or plain (up, then down), `width` wide.
  const auto mlp = [&](const std::string &prefix, std::int64_t width) {
    const std::string activation(to_string(s.activation));
    if (s.gated_mlp && glue == glue_style::fused) {
      // An engine's one gate-up GEMM, and one kernel that activates the gate and multiplies
      // (reading both halves, writing one: a mul's traffic).
      block.push_back(linear(prefix + "gate_up_proj", s.hidden, 2 * width));
      block.push_back(memory(prefix + activation + "_and_mul", memory_op_kind::mul, width));
      block.push_back(linear(prefix + "down_proj", width, s.hidden));
      return;
    }
    if (s.gated_mlp)
      block.push_back(linear(prefix + "gate_proj", s.hidden, width));
    block.push_back(linear(prefix + "up_proj", s.hidden, width));
    block.push_back(memory(prefix + activation, s.activation, width));
    if (s.gated_mlp)
      block.push_back(memory(prefix + "mul", memory_op_kind::mul, width));
    block.push_back(linear(prefix + "down_proj", width, s.hidden));
  };
  if (s.experts > 0) {
    moe_layer moe;
    moe.experts = s.experts;
    moe.top_k = s.top_k;
    moe.in = s.hidden;
    moe.intermediate = s.expert_intermediate;
    moe.activation = s.activation;
    moe.expert_parallel = s.expert_parallel;
    moe.sending_ranks = s.experts_over_tensor_parallel ? 1 : s.sending_ranks;
    // Each token to its experts' GPUs and back: each tensor-parallel rank its share of them
    // (sequence parallelism's), to the ranks of its own a data-parallel group apart.
    const auto exchange = [&](std::string name) {
      if (s.expert_parallel > 1 && !s.experts_over_tensor_parallel)
        block.push_back(
            make(std::move(name), collective_layer{collective::all_to_all, s.expert_parallel,
                                                   s.tensor_parallel, s.exchanged, s.top_k}));
    };
    exchange("moe_dispatch");
    block.push_back(make("moe", moe));
    exchange("moe_combine");
    if (s.shared_intermediate > 0) { // Qwen2-MoE: one more expert every token runs, gated
      mlp("shared_", s.shared_intermediate);
      block.push_back(linear("shared_expert_gate", s.hidden, 1));
      block.push_back(memory("shared_add", memory_op_kind::add, s.hidden));
    }
  } else {
    mlp("", s.intermediate);
  }
  all_reduce("mlp_all_reduce");
  block.push_back(residual("mlp_add", memory_op_kind::add, s));
  if (s.encoder)
    norm("mlp_norm");
  return block;
}

/// The attention of one block as `options` run it, one GPU's share of `s`.
attention_layer attention_of(const transformer_shape &s, const config_options &options) {
  const bool decode = options.phase == inference_phase::decode;
  attention_layer attention;
  attention.heads = s.heads;
  attention.kv_heads = s.kv_heads;
  attention.head_dim = s.head_dim;
  const std::int64_t seq_len = options.seq_len.value_or(default_seq_len);
  attention.seq_len = decode ? 1 : seq_len;
  attention.kv_len = decode ? options.kv_len.value_or(seq_len) : seq_len;
  attention.causal = !decode && !s.encoder;
  attention.fused = options.fused_attention;
  attention.window = s.window;
  // transformers passes SDPA a mask when decoding into a static cache, and then expands the
  // grouped keys and values to every query head rather than using SDPA's grouped-query mode.
  attention.expanded_kv =
      glue_of(options) == glue_style::eager && decode && attention.fused && s.kv_heads < s.heads;
  if (options.kv_cache)
    attention.kv_precision = options.kv_cache;
  return attention;
}

/// The step a network of `s` runs (its name, phase, sizes and description), with no layers yet.
/// `s` with its experts spread over config_options::expert_parallel GPUs, with its note;
/// input_error for a model with no experts, or experts the degree does not divide.
transformer_shape experts_spread(transformer_shape s, const config_options &options,
                                 const std::string &origin, std::vector<std::string> &notes) {
  const int ep = options.expert_parallel;
  if (ep <= 1)
    return s;
  if (s.experts == 0)
    throw input_error({origin}, fmt::format("config_options::expert_parallel {}: this {} model "
                                            "has no mixture of experts",
                                            ep, s.family));
  if (s.experts % ep != 0)
    throw input_error({origin}, fmt::format("config_options::expert_parallel {} does not divide "
                                            "the model's {} experts",
                                            ep, s.experts));
  s.expert_parallel = ep;
  s.experts_over_tensor_parallel =
      options.mode != run_mode::training && attention_ranks(options) == 1;
  if (!s.experts_over_tensor_parallel && options.token_ranks > 0 && options.token_ranks < ep)
    s.sending_ranks = options.token_ranks;
  const char *how =
      s.experts_over_tensor_parallel
          ? "whole, the tensor-parallel group's tokens routed to them (no all-to-all: the MLP's "
            "all-reduce sums the experts' outputs)"
      : options.mode == run_mode::training
          ? "(each split by tensor parallelism), the GPUs carved from the data-parallel ones "
            "as Megatron carves them; two all-to-alls a layer send each token to its top_k "
            "experts' GPUs and back, and two more in the backward pass"
          : "whole; each GPU runs the attention for its own sequences (data-parallel "
            "attention), and two all-to-alls a layer send each token to its top_k experts' GPUs "
            "and back";
  notes.push_back(fmt::format("expert parallel over {} GPUs: each holds {} of the {} experts {}",
                              ep, s.experts / ep, s.experts, how));
  return s;
}

network step_of(const transformer_shape &s, const config_options &options,
                const attention_layer &attention, const std::string &origin) {
  const bool decode = options.phase == inference_phase::decode;
  const bool training = options.mode == run_mode::training;
  network net;
  net.origin = origin;
  net.name = fmt::format("{}-{}", std::filesystem::path(origin).stem().string(),
                         training ? "training"
                         : decode ? "decode"
                                  : "prefill");
  net.precision = s.precision;
  net.batch = options.batch;
  net.seq_len = attention.seq_len;
  net.glue = std::string(to_string(glue_of(options)));
  net.pipeline_stages = options.pipeline_parallel;
  if (training) { // not a served step: no phase, no cache
    net.mode = run_mode::training;
    net.optimizer = options.optimizer.value_or(optimizer::adamw);
    net.recompute = options.recompute.value_or(recomputation::none);
    // Megatron's order: tensor parallelism innermost, then data (experts carved from it).
    net.data_parallel = {options.data_parallel, options.zero_stage.value_or(1), s.tensor_parallel,
                         s.expert_parallel};
    net.description = fmt::format("{} training step of {} tokens, batch {} (from {})", s.family,
                                  net.seq_len, net.batch, origin);
    return net;
  }
  net.phase = options.phase;
  net.kv_len = attention.kv_len;
  net.description = decode ? fmt::format("{} decode step, KV cache {}, batch {} (from {})",
                                         s.family, attention.kv_len, net.batch, origin)
                           : fmt::format("{} prefill of {} tokens, batch {} (from {})", s.family,
                                         net.seq_len, net.batch, origin);
  return net;
}

/// The embeddings and the repeated blocks, quantized as `quantized` says, with their notes.
void add_blocks(network &net, const transformer_shape &s, const attention_layer &attention,
                const linear_quantization &quantized, const config_options &options) {
  const bool decode = options.phase == inference_phase::decode;
  net.layers = embedding_of(s, glue_of(options));
  repeat_block blocks;
  blocks.times = (s.layers + options.pipeline_parallel - 1) / options.pipeline_parallel;
  blocks.layers = block_of(s, attention, glue_of(options), decode);
  if (quantized.fp8 || quantized.fp4)
    for (layer &l : blocks.layers)
      if (std::holds_alternative<linear_layer>(l.body) || std::holds_alternative<moe_layer>(l.body))
        l.precision = quantized.fp4 ? precision::fp4 : precision::fp8;
  layer repeated = make(s.encoder ? "layer" : "decoder_layer", std::move(blocks));
  repeated.weights = quantized.weights;
  if (!quantized.note.empty())
    net.notes.push_back(quantized.note);
  net.layers.push_back(std::move(repeated));
  // A training stage sends its activations on (and gets their gradients back): each GPU its
  // share, to the GPU of the next stage a data-parallel group's span away (Megatron's order).
  if (options.mode == run_mode::training && options.pipeline_parallel > 1)
    net.layers.push_back(
        make("stage_send", collective_layer{collective::send, 2,
                                            std::int64_t{s.tensor_parallel} * options.data_parallel,
                                            s.exchanged}));
  if (options.kv_cache)
    net.notes.push_back(fmt::format("the KV cache is stored as {}", to_string(*options.kv_cache)));
  net.notes.push_back(
      options.mode == run_mode::training
          ? "the glue as PyTorch eager runs transformers' code: norms and rotary "
            "embeddings in its kernels"
      : glue_of(options) == glue_style::eager
          ? "the glue as PyTorch eager runs transformers' code: norms, rotary "
            "embeddings and cache writes in its kernels (config_options::glue fused: a "
            "serving engine's)"
          : "the glue as a serving engine runs it: one kernel per norm, rotary "
            "embedding and cache write in one; the residual adds and the "
            "activations' products kept apart");
}

/// The bytes of the embedding tables no layer counts as weights. The embedding table is held in
/// memory all the same, unless the LM head is the same matrix and a linear layer counts it; an
/// LM head for the last position only is a matmul, whose operand no layer counts as weights.
double resident_weight_bytes(const config_reader &config, const transformer_shape &s,
                             const config_options &options) {
  const bool decode = options.phase == inference_phase::decode;
  const bool tied = config.map().has("tie_word_embeddings")
                        ? config.boolean_or("tie_word_embeddings", false)
                        : s.family == "gpt2" || s.family == "gemma";
  const bool head_as_matmul = !decode && options.last_logits && !s.encoder;
  const int tables = s.encoder ? 1 : (tied ? 0 : 1) + (head_as_matmul ? 1 : 0);
  // In 64 bits, as every size: the network YAML holds it so (max_resident_weight_bytes).
  const auto resident = detail::checked_product(
      {tables, s.vocab, s.hidden, static_cast<std::int64_t>(element_bytes(s.precision))});
  if (!resident)
    config.map().fail("vocab_size", "the embedding table's bytes (`vocab_size` × the hidden "
                                    "size × the element size) overflow a 64-bit integer");
  return static_cast<double>(*resident);
}

/// The final norm and the LM head of a decoder (an encoder has none), with their notes.
void add_head(network &net, const transformer_shape &s, const config_options &options) {
  const bool decode = options.phase == inference_phase::decode;
  if (s.encoder) {
    net.notes.push_back("an encoder: no LM head (the task head is left out)");
    return;
  }
  net.layers.push_back(norm_layer("final_norm", s, glue_of(options)));
  if (!decode && options.last_logits)
    net.layers.push_back(make("lm_head", matmul_layer{net.batch, s.vocab, s.hidden, 1}));
  else
    net.layers.push_back(linear("lm_head", s.hidden, s.vocab));
  // Training's loss: a softmax over (its GPU's share of) the vocabulary at every position, and
  // its gradient (cross-entropy's; its fp32 upcast counted at the layers' width).
  if (options.mode == run_mode::training)
    net.layers.push_back(memory("loss", memory_op_kind::softmax, s.vocab));
  if (options.mode == run_mode::training)
    net.notes.push_back(fmt::format(
        "a training step: the LM head runs for every position, the loss (a softmax over the "
        "vocabulary and its gradient) after it, and the optimizer's update (one fused kernel "
        "over every parameter) at the end{}",
        s.tensor_parallel <= 1 ? ""
        : s.sequence_split > 1
            ? "; the activations kept are one GPU's: its share of the split layers' results and "
              "of the norms' and residual adds' tokens (sequence parallelism)"
            : "; the activations kept are one GPU's: its share of the split layers' results, the "
              "norms' and residual adds' whole (no sequence parallelism)"));
  else if (!decode && !options.last_logits)
    net.notes.push_back(
        "the LM head runs for every prompt position (config_options::last_logits: the last "
        "one only, all the first token needs)");
}

/// The config fields that set the linear layers' features (network::config_sizes), from the
/// whole shape `s` (before sharding: a GPU's share is named by no field).
std::map<std::string, layer_config_sizes> config_sizes_of(const transformer_shape &s) {
  const bool gpt2 = s.family == "gpt2";
  const config_size hidden{gpt2 ? "n_embd" : "hidden_size", s.hidden},
      intermediate{gpt2 ? "n_inner" : "intermediate_size", s.intermediate},
      shared{"shared_expert_intermediate_size", s.shared_intermediate}, none;
  const std::string block = s.encoder ? "layer" : "decoder_layer";
  std::map<std::string, layer_config_sizes> sizes;
  for (const char *name : {"q_proj", "k_proj", "v_proj", "c_attn", "qkv_proj"})
    sizes[layer_path(block, name)] = {hidden, none};
  sizes[layer_path(block, "o_proj")] = {none, hidden};
  for (const auto &[prefix, width] : {std::pair{"", intermediate}, std::pair{"shared_", shared}}) {
    const std::string p(prefix);
    sizes[layer_path(block, p + "gate_proj")] = sizes[layer_path(block, p + "up_proj")] =
        sizes[layer_path(block, p + "gate_up_proj")] = {hidden, width};
    sizes[layer_path(block, p + "down_proj")] = {width, hidden};
  }
  sizes["lm_head"] = {hidden, {"vocab_size", s.vocab}};
  return sizes;
}

/// Throws input_error "`option`: `value` is not a positive integer" (the CLI's words) below 1.
void check_positive(std::int64_t value, const char *option) {
  if (value < 1)
    throw input_error(fmt::format("{}: `{}` is not a positive integer", option, value));
}

} // namespace

void check_tensor_parallel(std::int64_t gpus) {
  if (gpus < 1)
    throw input_error(fmt::format(
        "config_options::tensor_parallel {}: tensor parallelism needs at least one GPU", gpus));
  if (gpus > max_tensor_parallel)
    throw input_error(fmt::format(
        "config_options::tensor_parallel {}: tensor parallelism is modelled over at most {} GPUs",
        gpus, max_tensor_parallel));
}

namespace {

/// Throws input_error for options that make no sense with `options.mode`: a training step's
/// choices in inference, a served step's in training.
void check_run_mode(const config_options &options) {
  if (options.mode != run_mode::training) {
    if (options.optimizer)
      throw input_error("config_options::optimizer applies to a training step: give "
                        "config_options::mode training");
    if (options.recompute)
      throw input_error("config_options::recompute applies to a training step: give "
                        "config_options::mode training");
    if (options.sequence_parallel)
      throw input_error("config_options::sequence_parallel applies to a training step: give "
                        "config_options::mode training");
    if (options.data_parallel != 1)
      throw input_error("config_options::data_parallel applies to a training step (give "
                        "config_options::mode training): each replica of a served model runs "
                        "the same step");
    if (options.zero_stage)
      throw input_error("config_options::zero_stage applies to a training step: give "
                        "config_options::mode training");
    return;
  }
  // A training step is a whole prefill's forward pass and its backward: no cache, every logit.
  const auto refuse = [](const char *what) {
    throw input_error(
        std::string(what) +
        " has no place in a training step (config_options::mode training), which runs every "
        "sequence's config_options::seq_len tokens forward and backward with no KV cache");
  };
  if (options.phase == inference_phase::decode)
    refuse("config_options::phase decode, a served model's step,");
  if (options.kv_len)
    refuse("config_options::kv_len, the cache a decode step reads,");
  if (options.kv_cache)
    refuse("config_options::kv_cache, the KV cache's format,");
  if (options.last_logits)
    throw input_error(
        "config_options::last_logits applies to a prefill: a training step's loss needs the "
        "logits of every position");
  if (options.quantization == quantization::nvfp4 || options.quantization == quantization::mxfp4)
    throw input_error(
        "config_options::quantization nvfp4 and mxfp4 are modelled for inference: fp4 training "
        "recipes keep 16-bit weights beside their casts, which are not modelled; train in the "
        "config's dtype");
  if (options.quantization == quantization::fp8)
    throw input_error(
        "config_options::quantization fp8 is modelled for inference: fp8 training keeps 16-bit "
        "weights and fp32 master weights beside its fp8 casts (Transformer "
        "Engine's), which are not modelled; train in the config's dtype");
  if (options.quantization)
    throw input_error(
        fmt::format("config_options::quantization {} is weight-only quantization for inference: "
                    "a training step updates the config's 16-bit weights",
                    options.quantization == quantization::w4a16 ? "w4a16" : "w8a16"));
  if (options.glue == glue_style::fused)
    throw input_error(
        "config_options::glue fused is a serving engine's kernels: a training step runs as "
        "PyTorch eager runs transformers' code (config_options::glue eager, training's default)");
}

} // namespace

void check_config_options(const config_options &options) {
  check_positive(options.batch, "config_options::batch");
  if (options.seq_len)
    check_positive(*options.seq_len, "config_options::seq_len");
  if (options.kv_len)
    check_positive(*options.kv_len, "config_options::kv_len");
  check_run_mode(options);
  const bool decode = options.phase == inference_phase::decode;
  if (options.kv_len && !decode)
    throw input_error("config_options::kv_len is the cache a decode step reads: give "
                      "config_options::phase decode (a "
                      "prefill's cache is its prompt, config_options::seq_len)");
  if (options.last_logits && decode)
    throw input_error(
        "config_options::last_logits applies to a prefill: a decode step's LM head already runs "
        "for its one new token");
  if (options.kv_cache && element_bytes(*options.kv_cache) > 2)
    throw input_error(
        fmt::format("unknown config_options::kv_cache `{}`; expected fp16, bf16, fp8 or int8",
                    to_string(*options.kv_cache)));
  if (options.kv_cache && !options.fused_attention)
    throw input_error(
        "config_options::kv_cache needs fused attention: the unfused GEMMs read keys and "
        "values in the layer's precision");
  check_tensor_parallel(options.tensor_parallel);
  if (options.pipeline_parallel < 1 || options.pipeline_parallel > 1024)
    throw input_error(fmt::format("config_options::pipeline_parallel {}: from 1 to 1024 stages",
                                  options.pipeline_parallel));
  for (const auto &[value, name] : {std::pair{options.expert_parallel, "expert_parallel"},
                                    {options.data_parallel, "data_parallel"}})
    if (value < 1 || value > max_collective_gpus)
      throw input_error(fmt::format("config_options::{} {}: from 1 to {} GPUs", name, value,
                                    max_collective_gpus));
  if (options.token_ranks < 0 || options.token_ranks > options.expert_parallel)
    throw std::logic_error(fmt::format("token_ranks {}: from 0 (every rank) to the {} "
                                       "expert-parallel ranks (set by the serving search only)",
                                       options.token_ranks, options.expert_parallel));
  if (options.zero_stage && (*options.zero_stage < 0 || *options.zero_stage > 3))
    throw input_error(
        fmt::format("config_options::zero_stage {}: ZeRO has stages 0 to 3", *options.zero_stage));
  const bool training = options.mode == run_mode::training;
  if (!training && options.expert_parallel > 1 && options.tensor_parallel > 1 &&
      options.expert_parallel != options.tensor_parallel)
    throw input_error(fmt::format(
        "config_options::expert_parallel {} with config_options::tensor_parallel {}: a served "
        "step's experts spread over its tensor-parallel GPUs (the same degree), or without "
        "tensor parallelism over GPUs of data-parallel attention",
        options.expert_parallel, options.tensor_parallel));
  if (training && options.data_parallel % options.expert_parallel != 0)
    throw input_error(fmt::format(
        "config_options::expert_parallel {}: in training the experts spread over data-parallel "
        "GPUs (Megatron's), and config_options::data_parallel {} is not a multiple of it",
        options.expert_parallel, options.data_parallel));
  if (options.zero_stage && options.data_parallel == 1)
    throw input_error("config_options::zero_stage shards the state over data-parallel GPUs: "
                      "give config_options::data_parallel");
  if (static_cast<std::int64_t>(options.tensor_parallel) * options.data_parallel >
      max_collective_gpus)
    throw input_error(fmt::format(
        "config_options::tensor_parallel {} × config_options::data_parallel {}: at most {} GPUs "
        "a pipeline stage",
        options.tensor_parallel, options.data_parallel, max_collective_gpus));
}

struct model_config::parsed {
  std::string origin;
  config_reader config;
  transformer_shape shape;
};

namespace {

config_reader reader_of(std::string_view json_text, const std::string &origin) {
  const yaml_node root = detail::parse_json(json_text, origin);
  if (!root.is_map())
    throw input_error({origin, 1, 1}, "expected a model config: a JSON object with `model_type`, "
                                      "`hidden_size`, ...; got " +
                                          detail::describe(root));
  return config_reader(root, origin);
}

} // namespace

model_config::model_config(std::string_view json_text, std::string origin) {
  config_reader config = reader_of(json_text, origin);
  transformer_shape shape = shape_of(config);
  m_parsed = std::make_shared<const parsed>(
      parsed{std::move(origin), std::move(config), std::move(shape)});
}

model_config model_config::load(const std::filesystem::path &file) {
  return model_config(detail::read_text_file(file, "model config"), file.string());
}

const std::string &model_config::origin() const noexcept {
  return m_parsed->origin;
}

std::string context_window::describe() const {
  if (scaled_positions == positions)
    return fmt::format("`{}` is {}", key, positions);
  return fmt::format("`{}` is {}, stretched to {} by `rope_scaling`", key, positions,
                     scaled_positions);
}

const std::optional<context_window> &model_config::context() const noexcept {
  return m_parsed->shape.context;
}

namespace {

/// `options` with the step's tokens within the model's context: an unset `seq_len` is the
/// default shortened to the context where that is shorter (`note` says so). A step that reads
/// more positions than a learned table holds is refused at the config's key (input_error); a
/// rotary one past its (scaled) context is built, `note` saying its positions are untrained.
config_options within_context(config_options options, const transformer_shape &s,
                              const yaml_map &map, std::vector<std::string> &notes) {
  if (!s.context)
    return options;
  const context_window &context = *s.context;
  const bool decode = options.phase == inference_phase::decode;
  if (!options.seq_len && default_seq_len > context.scaled_positions &&
      !(decode && options.kv_len)) {
    options.seq_len = context.scaled_positions;
    notes.push_back(fmt::format("the step is {} tokens, the model's context ({}), not the "
                                "default {} (config_options::seq_len sets it)",
                                context.scaled_positions, context.describe(), default_seq_len));
  }
  const std::int64_t positions =
      decode ? options.kv_len.value_or(options.seq_len.value_or(default_seq_len))
             : options.seq_len.value_or(default_seq_len);
  const char *given =
      decode && options.kv_len ? "config_options::kv_len" : "config_options::seq_len";
  const char *holds = decode ? "decode step's KV cache holds" : "step has";
  if (positions > context.scaled_positions && context.learned)
    map.fail(context.key, fmt::format("{}: the model's learned position table has no row past "
                                      "it, and this {} {} ({})",
                                      context.describe(), holds, positions, given));
  if (positions > context.scaled_positions)
    notes.push_back(fmt::format("this {} {} positions ({}), past the model's context ({}): its "
                                "rotary positions there were never trained; the cost is "
                                "modelled, the answers' quality is not",
                                holds, positions, given, context.describe()));
  return options;
}

} // namespace

network model_config::build(const config_options &given) const {
  check_config_options(given);
  const config_reader &config = m_parsed->config;
  std::vector<std::string> context_notes;
  const config_options options =
      within_context(given, m_parsed->shape, config.map(), context_notes);
  std::vector<std::string> sharding_notes;
  transformer_shape s =
      sharded(experts_spread(m_parsed->shape, options, m_parsed->origin, sharding_notes),
              options.tensor_parallel, config.map(), sharding_notes);
  s.sequence_split = options.sequence_parallel && s.tensor_parallel > 1 ? s.tensor_parallel : 1;
  s.exchanged = options.mode == run_mode::training ? s.hidden / s.tensor_parallel : s.hidden;
  if (s.encoder)
    for (const auto &[asked, what] :
         {std::pair{options.phase == inference_phase::decode, "no decode phase (use prefill)"},
          {options.kv_cache.has_value(), "no KV cache for config_options::kv_cache to store"},
          {options.last_logits,
           "no LM head for config_options::last_logits to run at the last position"}})
      if (asked)
        config.map().fail("model_type", "`" + s.family + "` is an encoder: it has " + what);
  const linear_quantization quantized = quantization_of(config, options.quantization);
  // fp8 and fp4 linears under a serving engine's kernels store the KV cache in fp8, as
  // TensorRT-LLM's fp8 and nvfp4 recipes do (their checkpoints quantize the cache with the
  // weights); said in the notes, and config_options::kv_cache (--kv-cache-dtype) chooses otherwise.
  config_options effective = options;
  const bool implied_kv = (quantized.fp8 || quantized.fp4) && !options.kv_cache &&
                          options.fused_attention && glue_of(options) == glue_style::fused &&
                          !s.encoder && options.mode != run_mode::training;
  if (implied_kv)
    effective.kv_cache = precision::fp8;
  const attention_layer attention = attention_of(s, effective);
  network net = step_of(s, effective, attention, m_parsed->origin);
  if (implied_kv)
    net.notes.push_back(
        fmt::format("{} linears under a serving engine's kernels: the KV cache stored as fp8, "
                    "as TensorRT-LLM's {} recipes store it (config_options::kv_cache bf16 "
                    "keeps it in the layers' format)",
                    quantized.fp4 ? "fp4" : "fp8", quantized.fp4 ? "nvfp4" : "fp8"));
  if (options.pipeline_parallel > s.layers)
    config.map().fail("num_hidden_layers",
                      fmt::format("config_options::pipeline_parallel {}: more stages than the {} "
                                  "layers",
                                  options.pipeline_parallel, s.layers));
  if (options.pipeline_parallel > 1)
    sharding_notes.push_back(fmt::format(
        "one stage of a pipeline of {}: {} of the {} layers, with the embedding and the LM head "
        "both (the first stage's and the last's: a bound on either){}",
        options.pipeline_parallel,
        (s.layers + options.pipeline_parallel - 1) / options.pipeline_parallel, s.layers,
        options.mode == run_mode::training
            ? ""
            : "; its memory holds one batch's KV cache (its layers' share)"));
  if (options.mode == run_mode::training && (quantized.weights || quantized.fp8))
    config.map().fail("quantization_config",
                      "a training step updates the config's own 16-bit weights, and its "
                      "`quantization_config` quantizes them for inference");
  if (quantized.weights && s.precision != precision::fp16 && s.precision != precision::bf16)
    config.map().fail("torch_dtype",
                      fmt::format("weight-only int{} weights are widened to fp16 or bf16 "
                                  "activations, and this config's `torch_dtype` is {}",
                                  quantized.weights->bits, to_string(s.precision)));
  add_blocks(net, s, attention, quantized, effective);
  net.resident_weight_bytes = resident_weight_bytes(config, s, options);
  if (config.optional_string("torch_dtype").empty())
    net.notes.push_back("the config names no `torch_dtype`: fp16 assumed");
  net.notes.insert(net.notes.end(), context_notes.begin(), context_notes.end());
  net.notes.insert(net.notes.end(), sharding_notes.begin(), sharding_notes.end());
  add_head(net, s, options);
  net.config_sizes = config_sizes_of(m_parsed->shape);
  if (s.window > 0)
    net.notes.push_back(fmt::format("a sliding window of {} tokens: each query meets at most that "
                                    "many keys, and a decode step's cache holds no more",
                                    s.window));
  locate(net.layers, {m_parsed->origin});
  return net;
}

network network_from_config(std::string_view json_text, const std::string &origin,
                            const config_options &options) {
  check_config_options(options);
  return model_config(json_text, origin).build(options);
}

network load_model_config(const std::filesystem::path &file, const config_options &options) {
  check_config_options(options);
  return model_config::load(file).build(options);
}

} // namespace roofline
