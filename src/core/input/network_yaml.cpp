// SPDX-License-Identifier: Apache-2.0
#include "roofline/input/network_yaml.hpp"

#include "yaml_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <variant>

namespace roofline {

namespace {

/// A name as YAML reads it back: plain where it is a simple identifier (every name a config
/// gives its layers), else double-quoted with escapes.
std::string yaml_name(const std::string &name) {
  const auto letter = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  };
  const bool plain = !name.empty() && letter(name.front()) &&
                     std::all_of(name.begin(), name.end(),
                                 [&](char c) { return letter(c) || (c >= '0' && c <= '9'); }) &&
                     name != "null" && name != "Null" && name != "NULL"; // read as null
  return plain ? name : detail::yaml_double_quoted(name);
}

/// `text` for a comment line: escaped as in a double-quoted scalar, line breaks included (a raw
/// one would end the comment and start a key).
std::string comment_text(const std::string &text) {
  const std::string quoted = detail::yaml_double_quoted(text);
  return quoted.substr(1, quoted.size() - 2);
}

/// `, weights: int4, weight_group: 128`, or "" for none.
std::string weights_keys(const std::optional<quantized_weights> &weights) {
  return weights
             ? fmt::format(", weights: int{}, weight_group: {}", weights->bits, weights->group_size)
             : std::string{};
}

void write_layers(std::string &out, const std::vector<layer> &layers, int indent);

/// One layer as a line of YAML (a repeat block as its keys and its layers), one overload per
/// layer type.
struct layer_writer {
  std::string &out;
  const layer &l;
  int indent;
  std::string pad, name;
  std::string precision; ///< `, precision: …` and the weights' keys, or ""

  layer_writer(std::string &into, const layer &written, int depth)
      : out(into), l(written), indent(depth), pad(static_cast<std::size_t>(depth), ' '),
        name(yaml_name(written.name)),
        precision((written.precision ? fmt::format(", precision: {}", to_string(*written.precision))
                                     : std::string{}) +
                  weights_keys(written.weights)) {}

  void operator()(const repeat_block &body) const {
    out += fmt::format("{}- repeat: {}\n{}  name: {}\n", pad, body.times, pad, name);
    if (l.precision)
      out += fmt::format("{}  precision: {}\n", pad, to_string(*l.precision));
    if (l.weights)
      out += fmt::format("{}  weights: int{}\n{}  weight_group: {}\n", pad, l.weights->bits, pad,
                         l.weights->group_size);
    out += fmt::format("{}  layers:\n", pad);
    write_layers(out, body.layers, indent + 4);
  }
  void operator()(const linear_layer &body) const {
    out += fmt::format("{}- {{name: {}, type: linear, in: {}, out: {}{}}}\n", pad, name, body.in,
                       body.out, precision);
  }
  void operator()(const matmul_layer &body) const {
    out += fmt::format("{}- {{name: {}, type: matmul, m: {}, n: {}, k: {}, batch_count: {}{}}}\n",
                       pad, name, body.m, body.n, body.k, body.batch_count, precision);
  }
  void operator()(const attention_layer &body) const {
    out += fmt::format("{}- {{name: {}, type: attention, heads: {}, kv_heads: {}, head_dim: {}, "
                       "seq_len: {}, kv_len: {}, causal: {}, fused: {}",
                       pad, name, body.heads, body.key_value_heads(), body.head_dim, body.seq_len,
                       body.kv_len, body.causal ? "true" : "false", body.fused ? "true" : "false");
    if (body.window > 0)
      out += fmt::format(", window: {}", body.window);
    if (body.kv_precision)
      out += fmt::format(", kv_precision: {}", to_string(*body.kv_precision));
    if (body.expanded_kv)
      out += ", expanded_kv: true";
    out += precision + "}\n";
  }
  void operator()(const collective_layer &body) const {
    out += fmt::format("{}- {{name: {}, type: {}", pad, name, to_string(body.kind));
    if (body.kind != collective::send)
      out += fmt::format(", gpus: {}", body.gpus);
    if (body.stride > 1)
      out += fmt::format(", stride: {}", body.stride);
    if (body.copies > 1)
      out += fmt::format(", copies: {}", body.copies);
    if (body.features)
      out += fmt::format(", features: {}", *body.features);
    out += precision + "}\n";
  }
  void operator()(const moe_layer &body) const {
    out += fmt::format("{}- {{name: {}, type: moe, experts: {}, top_k: {}, in: {}, intermediate: "
                       "{}, gated: {}, activation: {}",
                       pad, name, body.experts, body.top_k, body.in, body.intermediate,
                       body.gated ? "true" : "false", to_string(body.activation));
    if (body.expert_parallel > 1)
      out += fmt::format(", expert_parallel: {}", body.expert_parallel);
    if (body.expert_parallel > 1 && body.sending_ranks > 0)
      out += fmt::format(", sending_ranks: {}", body.sending_ranks);
    out += precision + "}\n";
  }
  void operator()(const memory_layer &body) const {
    out += fmt::format("{}- {{name: {}, type: {}", pad, name, to_string(body.kind));
    if (body.features)
      out += fmt::format(", features: {}", *body.features);
    if (body.unfused)
      out += ", unfused: true";
    if (body.sequence_split > 1)
      out += fmt::format(", sequence_split: {}", body.sequence_split);
    out += precision + "}\n";
  }
  void operator()(const conv2d_layer &body) const {
    out += fmt::format("{}- {{name: {}, type: conv2d, in_channels: {}, out_channels: {}, kernel: "
                       "[{}, {}], stride: [{}, {}], padding: [{}, {}], input: [{}, {}]{}{}}}\n",
                       pad, name, body.in_channels, body.out_channels, body.kernel_h, body.kernel_w,
                       body.stride_h, body.stride_w, body.padding_h, body.padding_w, body.input_h,
                       body.input_w,
                       body.groups > 1 ? fmt::format(", groups: {}", body.groups) : "", precision);
  }
  void operator()(const pool_layer &body) const {
    out += fmt::format("{}- {{name: {}, type: {}, kernel: {}, stride: {}, padding: {}", pad, name,
                       to_string(body.kind), body.kernel, body.stride, body.padding);
    if (body.channels)
      out += fmt::format(", channels: {}", *body.channels);
    if (body.input_h && body.input_w)
      out += fmt::format(", input: [{}, {}]", *body.input_h, *body.input_w);
    out += precision + "}\n";
  }
};

void write_layers(std::string &out, const std::vector<layer> &layers, int indent) {
  for (const layer &l : layers)
    std::visit(layer_writer(out, l, indent), l.body);
}

} // namespace

std::string to_network_yaml(const network &net) {
  std::string out = fmt::format("# Written by roofline-advise from {}.\n",
                                detail::yaml_double_quoted(net.origin));
  for (const std::string &note : net.notes)
    out += "# Note: " + comment_text(note) + ".\n";
  out += fmt::format("name: {}\n", yaml_name(net.name));
  if (!net.description.empty())
    out += fmt::format("description: {}\n", detail::yaml_double_quoted(net.description));
  out += fmt::format("precision: {}\n", to_string(net.precision));
  if (net.weights)
    out += fmt::format("weights: int{}\nweight_group: {}\n", net.weights->bits,
                       net.weights->group_size);
  out += fmt::format("batch: {}\nseq_len: {}\nmode: {}\n", net.batch, net.seq_len,
                     to_string(net.mode));
  if (net.mode == run_mode::training)
    out += fmt::format("optimizer: {}\nrecompute: {}\n", to_string(net.optimizer),
                       to_string(net.recompute));
  if (const data_parallelism &d = net.data_parallel; d.gpus > 1)
    out += fmt::format("data_parallel: {{gpus: {}, zero_stage: {}, stride: {}, expert_parallel: "
                       "{}}}\n",
                       d.gpus, d.zero_stage, d.stride, d.expert_parallel);
  if (net.pipeline_stages > 1)
    out += fmt::format("pipeline_stages: {}\n", net.pipeline_stages);
  if (net.phase)
    out += fmt::format("phase: {}\nkv_len: {}\n", to_string(*net.phase), net.kv_len);
  if (!net.glue.empty())
    out += fmt::format("glue: {}\n", net.glue);
  // The shortest text that reads back as the same double.
  if (net.resident_weight_bytes != 0)
    out += fmt::format("# Weights held in memory that no layer counts: the token embedding "
                       "table, and the LM head's where a matmul runs it.\n"
                       "resident_weight_bytes: {}\n",
                       net.resident_weight_bytes);
  out += "layers:\n";
  write_layers(out, net.layers, 2);
  return out;
}

} // namespace roofline
