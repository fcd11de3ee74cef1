// SPDX-License-Identifier: Apache-2.0
#include "roofline/input/network.hpp"

#include "roofline/model/memory_op.hpp"

#include "checked_math.hpp"
#include "suggest.hpp"
#include "text_format.hpp"
#include "yaml_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <optional>

namespace roofline {

std::int64_t senders_of(const moe_layer &moe) {
  const std::int64_t ep = std::max<std::int64_t>(1, moe.expert_parallel);
  return moe.sending_ranks > 0 ? std::min(moe.sending_ranks, ep) : ep;
}

namespace {

constexpr std::array<enum_name<run_mode>, 2> mode_names{{
    {run_mode::inference, "inference"},
    {run_mode::training, "training"},
}};

constexpr std::array<enum_name<optimizer>, 2> optimizer_names{{
    {optimizer::adamw, "adamw"},
    {optimizer::sgd, "sgd"},
}};

constexpr std::array<enum_name<recomputation>, 2> recomputation_names{{
    {recomputation::none, "none"},
    {recomputation::full, "full"},
}};

constexpr std::array<enum_name<inference_phase>, 2> phase_names{{
    {inference_phase::prefill, "prefill"},
    {inference_phase::decode, "decode"},
}};

} // namespace

template <> const enum_table<run_mode> &names_of<run_mode>() {
  static constexpr enum_table<run_mode> table{mode_names};
  return table;
}

template <> const enum_table<optimizer> &names_of<optimizer>() {
  static constexpr enum_table<optimizer> table{optimizer_names};
  return table;
}

template <> const enum_table<recomputation> &names_of<recomputation>() {
  static constexpr enum_table<recomputation> table{recomputation_names};
  return table;
}

template <> const enum_table<inference_phase> &names_of<inference_phase>() {
  static constexpr enum_table<inference_phase> table{phase_names};
  return table;
}

std::string_view to_string(run_mode m) {
  return names_of<run_mode>().name(m);
}

namespace {

constexpr std::array<enum_name<throughput_unit>, 3> unit_names{{
    {throughput_unit::tokens, "tokens"},
    {throughput_unit::images, "images"},
    {throughput_unit::samples, "samples"},
}};

} // namespace

template <> const enum_table<throughput_unit> &names_of<throughput_unit>() {
  static constexpr enum_table<throughput_unit> table{unit_names};
  return table;
}

std::string_view to_string(throughput_unit u) {
  return names_of<throughput_unit>().name(u);
}

std::string_view to_string(optimizer o) {
  return names_of<optimizer>().name(o);
}

std::string_view to_string(recomputation r) {
  return names_of<recomputation>().name(r);
}

std::string_view to_string(inference_phase p) {
  return names_of<inference_phase>().name(p);
}

std::optional<inference_phase> parse_inference_phase(std::string_view name) {
  return names_of<inference_phase>().parse(name);
}

std::string layer_path(const std::string &prefix, const std::string &name) {
  return prefix.empty() ? name : name.empty() ? prefix : prefix + "/" + name;
}

namespace {

/// The ops lower() makes of one layer (of a repeat block: its layers', once). lowering.cpp makes
/// them; tests/unit/lowering_test.cpp checks that the two agree for every layer type.
struct op_counter {
  bool training;
  std::int64_t gemm() const { return training ? 3 : 1; } // + data and weight gradients
  std::int64_t operator()(const linear_layer &) const { return gemm(); }
  std::int64_t operator()(const matmul_layer &) const { return gemm(); }
  std::int64_t operator()(const conv2d_layer &) const { return gemm(); }
  std::int64_t operator()(const attention_layer &a) const {
    // Fused: the kernel (and its backward); else Q·Kᵀ, softmax, P·V.
    const std::int64_t pass_ops = training ? 2 : 1; // forward, and its backward
    return a.fused ? pass_ops * (a.expanded_kv ? 2 : 1) : 2 * gemm() + pass_ops;
  }
  // Router GEMM, top-k, the experts' GEMMs and activation (gated: gate, up, act, mul, down),
  // combine; in training each GEMM's two gradients and each elementwise op's backward.
  std::int64_t operator()(const moe_layer &moe) const {
    const std::int64_t gemms = moe.gated ? 3 : 2, elementwise = moe.gated ? 3 : 2;
    const std::int64_t act_backward = cost_of(moe.activation).backward_tensors > 0 ? 1 : 0;
    if (!training)
      return 2 + gemms + elementwise;
    return gemm() + 1 + gemms * gemm() + elementwise * 2 - (1 - act_backward);
  }
  std::int64_t operator()(const memory_layer &m) const {
    return training && cost_of(m.kind).backward_tensors > 0 ? 2 : 1;
  }
  std::int64_t operator()(const collective_layer &) const { return training ? 2 : 1; }
  std::int64_t operator()(const pool_layer &) const { return training ? 2 : 1; }
  std::int64_t operator()(const repeat_block &block) const {
    std::int64_t ops = 0;
    for (const layer &l : block.layers)
      ops += std::visit(*this, l.body); // at most 8 for each layer in memory: no overflow
    return ops;
  }
};

} // namespace

std::int64_t op_count(const layer &l, run_mode mode) {
  return std::visit(op_counter{mode == run_mode::training}, l.body);
}

std::int64_t op_count(const network &net) {
  std::int64_t ops = 0;
  for (const layer &l : net.layers)
    ops += op_count(l, net.mode);
  return ops;
}

void check_layer_limits(const std::string &path, std::int64_t ops, const source_location &where) {
  if (path.size() > max_layer_path_bytes) {
    std::size_t shown = 40; // on a character's first byte
    while ((static_cast<unsigned char>(path[shown]) & 0xC0) == 0x80)
      --shown;
    throw input_error(
        where, fmt::format("layer `{}…`: its full name (its repeat blocks' names and its own, "
                           "joined by `/`) is {} bytes, more than the limit of {}",
                           path.substr(0, shown), path.size(), max_layer_path_bytes));
  }
  if (ops > max_ops)
    throw input_error(
        where,
        fmt::format("the network lowers to more than {} ops, the limit (counted up to this "
                    "layer, YAML aliases expanded, backward passes included); write a run of "
                    "layers that repeats once, in a `repeat` block: its repeats are counted, not "
                    "expanded",
                    max_ops));
}

namespace {

using detail::yaml_map;

// Repeat blocks nest; a bound keeps a hostile file from exhausting the stack.
constexpr int max_nesting = 32;
// YAML aliases can make a short file describe exponentially many layers ("billion laughs"); real
// networks written with repeat blocks stay far below this.
constexpr std::int64_t max_layers = 100000;

/// The scalar, or "" when it is absent or not a scalar.
std::string scalar_or_empty(const std::optional<detail::yaml_node> &value) {
  return value ? std::string(value->scalar()) : std::string{};
}

/// The GEMM layers, then every memory op.
const std::vector<std::string> layer_types = [] {
  std::vector<std::string> types{
      "linear",     "matmul",     "conv2d",     "attention",      "moe",
      "all_reduce", "all_to_all", "all_gather", "reduce_scatter", "send"};
  for (std::string_view name : memory_op_names())
    types.emplace_back(name);
  return types;
}();

std::vector<std::string> with_common_keys(std::vector<std::string> keys) {
  keys.insert(keys.begin(), {"name", "type", "precision"});
  return keys;
}

std::vector<std::string> precision_names() {
  return names_of<precision>().names();
}

precision parse_precision_key(const yaml_map &map, const std::string &key) {
  const std::string name = map.string(key);
  if (auto p = parse_precision(name))
    return *p;
  map.fail(key, "unknown precision `" + detail::shown_value(name) + "`" +
                    detail::did_you_mean(name, precision_names()) + "; expected " +
                    detail::quoted_list(precision_names()));
}

/// `weights: int8 | int4` and `weight_group` (scales per group of K; 0: one per output column)
/// of `map`, when it gives them: int4 defaults to groups of 128 (AWQ's and GPTQ's), int8 to one
/// scale per column.
std::optional<quantized_weights> parse_weights(const yaml_map &map) {
  if (!map.has("weights")) {
    if (map.has("weight_group"))
      map.fail("weight_group", "`weight_group` without `weights` (int8 or int4)");
    return std::nullopt;
  }
  const std::string name = map.string("weights");
  quantized_weights q;
  if (name == "int4") {
    q = {4, 128};
  } else if (name == "int8") {
    q = {8, 0};
  } else {
    map.fail("weights", "unknown weight format `" + name + "`" +
                            detail::did_you_mean(name, {"int8", "int4"}) +
                            "; expected `int8` or `int4` (weight-only quantization)");
  }
  q.group_size = map.non_negative_int_or("weight_group", q.group_size);
  return q;
}

/// `key` of `doc` as E's table names its values; nullopt when not given; refused, located, when
/// it names none.
template <class E> std::optional<E> enum_key(const yaml_map &doc, const char *key) {
  if (!doc.has(key))
    return std::nullopt;
  const std::string name = doc.string(key);
  const std::optional<E> parsed = names_of<E>().parse(name);
  if (!parsed)
    doc.fail(key, fmt::format("`{}` must be {}, got `{}`{}", key,
                              detail::quoted_list(names_of<E>().names()), detail::shown_value(name),
                              detail::did_you_mean(name, names_of<E>().names())));
  return parsed;
}

/// `key` of `doc` (`optimizer`, `recompute`), a training step's choice, else `fallback`; refused,
/// located, in inference.
template <class E>
E training_choice(const yaml_map &doc, const char *key, run_mode mode, E fallback) {
  const std::optional<E> chosen = enum_key<E>(doc, key);
  if (chosen && mode != run_mode::training)
    doc.fail(key, fmt::format("`{}` is a training step's: give `mode: training` with it", key));
  return chosen.value_or(fallback);
}

class network_parser {
public:
  explicit network_parser(std::string file) : m_file(std::move(file)) {}

  network parse(const detail::yaml_node &root) {
    const yaml_map doc(root, m_file, "network",
                       {"name", "description", "precision", "weights", "weight_group", "batch",
                        "seq_len", "mode", "optimizer", "recompute", "data_parallel",
                        "pipeline_stages", "phase", "kv_len", "resident_weight_bytes", "glue",
                        "layers"});
    network net;
    net.origin = m_file;
    net.name = doc.string("name");
    net.description = doc.string_or("description", "");
    if (doc.has("precision"))
      net.precision = parse_precision_key(doc, "precision");
    net.weights = parse_weights(doc);
    net.batch = doc.positive_int_or("batch", 1);
    net.seq_len = doc.positive_int_or("seq_len", 1);
    // Whose kernels run the glue: a serving engine's (fused: fp8 activations written by their
    // producers, no quantize kernels) or PyTorch eager's; a config writes it (--emit-yaml).
    net.glue = doc.string_or("glue", "");
    if (net.glue != "" && net.glue != "fused" && net.glue != "eager")
      doc.fail("glue", "unknown glue `" + net.glue + "`; expected fused or eager");
    net.mode = enum_key<run_mode>(doc, "mode").value_or(run_mode::inference);
    net.optimizer = training_choice(doc, "optimizer", net.mode, net.optimizer);
    net.recompute = training_choice(doc, "recompute", net.mode, net.recompute);
    parse_layout(doc, net);
    if (!detail::checked_product({net.batch, net.seq_len}))
      doc.fail("seq_len", "batch × seq_len overflows a 64-bit integer");
    net.phase = enum_key<inference_phase>(doc, "phase");
    if (net.phase) {
      net.kv_len = doc.positive_int_or("kv_len", net.seq_len);
    } else if (doc.has("kv_len")) {
      doc.fail("kv_len", "`kv_len` is the KV cache a language model's step reads: give `phase` "
                         "(prefill or decode) with it");
    }
    if (doc.has("resident_weight_bytes")) {
      const detail::yaml_node bytes = doc.required("resident_weight_bytes");
      const std::optional<double> value = detail::finite_number(bytes);
      if (!value || !(*value >= 0 && *value <= max_resident_weight_bytes))
        doc.fail("resident_weight_bytes",
                 "`resident_weight_bytes` must be a number of bytes from 0 to 2^63, got " +
                     detail::describe(bytes));
      net.resident_weight_bytes = *value;
    }
    if (net.phase && net.mode == run_mode::training)
      doc.fail("phase", "`phase` is a served language model's step: not one of `mode: training`");
    m_network_seq_len = net.seq_len;
    m_mode = net.mode;
    net.layers = parse_layers(doc, "layers", 0, "");
    if (net.phase)
      check_kv_len(net.layers, net.kv_len);
    return net;
  }

private:
  /// The layers of `key`, inside repeat blocks whose full name is `prefix`.
  std::vector<layer> parse_layers(const yaml_map &parent, const std::string &key, int depth,
                                  const std::string &prefix) {
    const detail::yaml_node list = parent.required(key);
    if (!list.is_sequence() || list.size() == 0)
      parent.fail(key, "`" + key + "` must be a non-empty list of layers, got " +
                           detail::describe(list));
    std::vector<layer> layers;
    for (std::size_t i = 0; i < list.size(); ++i)
      layers.push_back(parse_layer(list[i], depth, prefix));
    return layers;
  }

  layer parse_layer(const detail::yaml_node &item, int depth, const std::string &prefix) {
    const source_location where = detail::location_of(item, m_file);
    if (!item.is_map())
      throw input_error(where,
                        "a layer must be a mapping such as {name: fc1, type: linear, in: 1024, "
                        "out: 4096}, got " +
                            detail::describe(item));
    // The keys read before the type says which are allowed: one pass over the entries, each key
    // its first entry's, as a lookup by name finds it.
    std::optional<detail::yaml_node> repeat, name_node, type_node;
    for (std::size_t i = 0; i < item.size(); ++i) {
      const detail::yaml_node key_node = item.key(i);
      if (!key_node.is_scalar())
        continue;
      const std::string_view key = key_node.scalar();
      if (key == "repeat" && !repeat)
        repeat = item.value(i);
      else if (key == "name" && !name_node)
        name_node = item.value(i);
      else if (key == "type" && !type_node)
        type_node = item.value(i);
    }
    if (repeat)
      return parse_repeat(item, depth, prefix);

    // The type decides which keys are allowed, so read name and type before checking keys.
    if (++m_layer_count > max_layers)
      throw input_error(
          where, "the network has more than " + std::to_string(max_layers) +
                     " layers (YAML aliases expanded); describe repeated blocks with `repeat`");
    const std::string name = scalar_or_empty(name_node);
    const std::string context =
        name.empty() ? "layer" : "layer `" + detail::shown_value(name) + "`";
    if (!type_node)
      throw input_error(where, context + ": missing required key `type`; expected one of " +
                                   detail::quoted_list(layer_types));
    const std::string type = scalar_or_empty(type_node);
    const std::string typed_context = context + " (" + type + ")";

    layer result;
    result.where = where;
    const layer_parser *parser = parser_of(type);
    if (!parser)
      throw input_error(detail::location_of(*type_node, m_file),
                        context + ": unknown layer type " + detail::describe(*type_node) +
                            detail::did_you_mean(type, layer_types) + "; expected one of " +
                            detail::quoted_list(layer_types));
    const yaml_map map(item, m_file, typed_context, with_common_keys(parser->keys));
    (this->*(parser->parse))(map, type, result);
    finish(result, map);
    // As lower() will, but as the file is read: aliases stop expanding at the limit.
    m_ops += op_count(result, m_mode);
    check_layer_limits(layer_path(prefix, result.name), m_ops, where);
    return result;
  }

  /// One layer type's keys (besides name, type and precision) and how its body is read.
  struct layer_parser {
    std::string_view type;
    std::vector<std::string> keys;
    void (network_parser::*parse)(const yaml_map &map, const std::string &type,
                                  layer &result) const;
  };

  /// The parser of layer type `type`: its own, else the memory ops' (every memory op kind but the
  /// pools, which have their own); null for an unknown type.
  static const layer_parser *parser_of(const std::string &type) {
    static const std::vector<layer_parser> parsers{
        {"linear", {"in", "out", "bias", "weights", "weight_group"}, &network_parser::parse_linear},
        {"matmul", {"m", "n", "k", "batch_count"}, &network_parser::parse_matmul},
        {"conv2d",
         {"in_channels", "out_channels", "kernel", "stride", "padding", "input", "bias", "groups"},
         &network_parser::parse_conv2d},
        {"attention",
         {"heads", "kv_heads", "head_dim", "seq_len", "kv_len", "causal", "fused", "window",
          "kv_precision", "expanded_kv"},
         &network_parser::parse_attention},
        {"moe",
         {"experts", "top_k", "in", "intermediate", "gated", "activation", "expert_parallel",
          "shared_tokens", "sending_ranks"},
         &network_parser::parse_moe},
        {"all_reduce", {"gpus", "features", "stride"}, &network_parser::parse_collective},
        {"all_to_all", {"gpus", "features", "stride", "copies"}, &network_parser::parse_collective},
        {"all_gather", {"gpus", "features", "stride"}, &network_parser::parse_collective},
        {"reduce_scatter", {"gpus", "features", "stride"}, &network_parser::parse_collective},
        {"send", {"features", "stride"}, &network_parser::parse_collective},
        {"maxpool",
         {"kernel", "stride", "padding", "channels", "input"},
         &network_parser::parse_pool},
        {"avgpool",
         {"kernel", "stride", "padding", "channels", "input"},
         &network_parser::parse_pool},
    };
    static const layer_parser memory_parser{
        "", {"features", "unfused", "sequence_split"}, &network_parser::parse_memory};
    for (const layer_parser &parser : parsers)
      if (parser.type == type)
        return &parser;
    return parse_memory_op_kind(type) ? &memory_parser : nullptr;
  }

  void parse_linear(const yaml_map &map, const std::string &, layer &result) const {
    result.body = linear_layer{map.positive_int("in"), map.positive_int("out")};
    result.weights = parse_weights(map);
  }

  void parse_matmul(const yaml_map &map, const std::string &, layer &result) const {
    result.body = matmul_layer{map.positive_int("m"), map.positive_int("n"), map.positive_int("k"),
                               map.positive_int_or("batch_count", 1)};
  }

  void parse_conv2d(const yaml_map &map, const std::string &, layer &result) const {
    conv2d_layer conv;
    conv.in_channels = map.positive_int("in_channels");
    conv.out_channels = map.positive_int("out_channels");
    std::tie(conv.kernel_h, conv.kernel_w) = map.int_pair("kernel", false);
    std::tie(conv.stride_h, conv.stride_w) = map.int_pair_or("stride", false, 1);
    std::tie(conv.padding_h, conv.padding_w) = map.int_pair_or("padding", true, 0);
    std::tie(conv.input_h, conv.input_w) = map.int_pair("input", false);
    conv.groups = map.positive_int_or("groups", 1);
    if (conv.in_channels % conv.groups != 0 || conv.out_channels % conv.groups != 0)
      map.fail("groups",
               fmt::format("`groups` = {} must divide `in_channels` = {} and `out_channels` = {} "
                           "(each group convolves its share of the channels)",
                           conv.groups, conv.in_channels, conv.out_channels));
    result.body = conv;
  }

  void parse_attention(const yaml_map &map, const std::string &, layer &result) const {
    attention_layer attention;
    attention.heads = map.positive_int("heads");
    attention.kv_heads = map.positive_int_or("kv_heads", attention.heads);
    if (attention.heads % attention.kv_heads != 0)
      map.fail("kv_heads", fmt::format("`kv_heads` = {} must divide `heads` = {} (each key/value "
                                       "head serves a whole group of query heads)",
                                       attention.kv_heads, attention.heads));
    attention.head_dim = map.positive_int("head_dim");
    attention.seq_len = map.positive_int_or("seq_len", m_network_seq_len);
    attention.kv_len = map.positive_int_or("kv_len", attention.seq_len);
    attention.causal = map.boolean_or("causal", false);
    attention.fused = map.boolean_or("fused", false);
    attention.window = map.positive_int_or("window", 0);
    if (map.has("kv_precision"))
      attention.kv_precision = parse_precision_key(map, "kv_precision");
    attention.expanded_kv = map.boolean_or("expanded_kv", false);
    if (attention.expanded_kv && (!attention.fused || attention.kv_heads == attention.heads))
      map.fail("expanded_kv", "`expanded_kv` copies grouped-query keys and values out to every "
                              "query head before a fused kernel: it needs `fused: true` and "
                              "`kv_heads` below `heads`");
    result.body = attention;
  }

  void parse_moe(const yaml_map &map, const std::string &, layer &result) const {
    moe_layer moe;
    moe.experts = map.positive_int("experts");
    moe.top_k = map.positive_int("top_k");
    if (moe.top_k > moe.experts)
      map.fail("top_k",
               fmt::format("`top_k` = {} is more than the {} experts", moe.top_k, moe.experts));
    moe.in = map.positive_int("in");
    moe.intermediate = map.positive_int("intermediate");
    moe.gated = map.boolean_or("gated", true);
    moe.expert_parallel = map.optional_positive_int("expert_parallel").value_or(1);
    if (moe.experts % moe.expert_parallel != 0)
      map.fail("expert_parallel",
               fmt::format("`expert_parallel` = {} does not divide the {} experts",
                           moe.expert_parallel, moe.experts));
    if (map.boolean_or("shared_tokens", false) && map.has("sending_ranks"))
      map.fail("sending_ranks", "give `sending_ranks` or `shared_tokens` (the same as "
                                "`sending_ranks: 1`), not both");
    if (map.boolean_or("shared_tokens", false))
      moe.sending_ranks = 1;
    if (const auto senders = map.optional_positive_int("sending_ranks")) {
      if (*senders > moe.expert_parallel)
        map.fail("sending_ranks",
                 fmt::format("`sending_ranks` = {} is more than the {} GPUs of `expert_parallel`",
                             *senders, moe.expert_parallel));
      moe.sending_ranks = *senders;
    }
    if (map.has("activation")) {
      const std::vector<std::string> activations{"silu", "gelu", "relu"};
      const std::string activation = map.string("activation");
      if (std::find(activations.begin(), activations.end(), activation) == activations.end())
        map.fail("activation", "unknown expert activation `" + activation + "`" +
                                   detail::did_you_mean(activation, activations) + "; expected " +
                                   detail::quoted_list(activations));
      moe.activation = *parse_memory_op_kind(activation);
    }
    result.body = moe;
  }

  void parse_collective(const yaml_map &map, const std::string &type, layer &result) const {
    collective_layer c;
    c.kind = *roofline::parse_collective(type);
    if (c.kind != collective::send) { // a send is from one GPU to the next stage's
      const std::int64_t gpus = map.positive_int("gpus");
      if (gpus < 2 || gpus > max_collective_gpus)
        map.fail("gpus", fmt::format("`gpus` = {}: {} spans 2 to {} GPUs", gpus, type,
                                     max_collective_gpus));
      c.gpus = static_cast<int>(gpus);
    }
    c.stride = map.optional_positive_int("stride").value_or(1);
    if (c.stride > max_collective_gpus)
      map.fail("stride",
               fmt::format("`stride` = {}: at most {} ranks", c.stride, max_collective_gpus));
    c.features = map.optional_positive_int("features");
    c.copies = map.optional_positive_int("copies").value_or(1);
    if (c.copies > 1024)
      map.fail("copies", fmt::format("`copies` = {}: at most 1024 (a token's experts)", c.copies));
    result.body = c;
  }

  void parse_pool(const yaml_map &map, const std::string &type, layer &result) const {
    pool_layer pool;
    pool.kind = *parse_memory_op_kind(type);
    pool.kernel = map.positive_int("kernel");
    pool.stride = map.positive_int_or("stride", pool.kernel);
    pool.padding = map.non_negative_int_or("padding", 0);
    pool.channels = map.optional_positive_int("channels");
    if (map.has("input"))
      std::tie(pool.input_h, pool.input_w) = map.int_pair("input", false);
    result.body = pool;
  }

  void parse_memory(const yaml_map &map, const std::string &type, layer &result) const {
    const memory_op_kind kind = *parse_memory_op_kind(type);
    memory_layer memory{kind, map.optional_positive_int("features"),
                        map.boolean_or("unfused", false),
                        map.optional_positive_int("sequence_split").value_or(1)};
    if (memory.sequence_split > 1 && !memory.features)
      map.fail("sequence_split", "`sequence_split` splits the rows of a layer that gives its "
                                 "`features`");
    if (memory.sequence_split > max_collective_gpus)
      map.fail("sequence_split", fmt::format("`sequence_split` = {}: at most {} GPUs",
                                             memory.sequence_split, max_collective_gpus));
    if (memory.unfused && !cost_of(kind).unfused)
      map.fail("unfused", "`" + std::string(type) +
                              "` has no unfused form; `unfused: true` is for rmsnorm (as "
                              "transformers writes it: 8 kernels through fp32)");
    result.body = memory;
  }

  /// The report's cache (the network's `kv_len`) is the one its attention layers read: one fact.
  void check_kv_len(const std::vector<layer> &layers, std::int64_t kv_len) const {
    for (const layer &l : layers)
      if (const auto *block = std::get_if<repeat_block>(&l.body))
        check_kv_len(block->layers, kv_len);
      else if (const auto *attention = std::get_if<attention_layer>(&l.body);
               attention && attention->kv_len != kv_len)
        throw input_error(l.where,
                          fmt::format("layer `{}` (attention): its `kv_len` = {} is not the "
                                      "network's `kv_len` = {}, the KV cache its `phase` reads",
                                      detail::shown_value(l.name), attention->kv_len, kv_len));
  }

  void finish(layer &result, const yaml_map &map) const {
    result.name = map.string("name");
    if (map.has("precision"))
      result.precision = parse_precision_key(map, "precision");
    if (map.has("bias"))
      map.boolean_or("bias",
                     false); // accepted for documentation; a bias add is fused into the GEMM
  }

  /// The stages of the pipeline the network is one of, and a training step's `data_parallel`
  /// group.
  void parse_layout(const yaml_map &doc, network &net) const {
    net.pipeline_stages = static_cast<int>(bounded(doc, "pipeline_stages", 1, 1024));
    if (!doc.has("data_parallel"))
      return;
    if (net.mode != run_mode::training)
      doc.fail("data_parallel",
               "`data_parallel` is a training step's: give `mode: training` with it");
    const yaml_map map(doc.required("data_parallel"), m_file, "data_parallel",
                       {"gpus", "zero_stage", "stride", "expert_parallel"});
    data_parallelism &d = net.data_parallel;
    d.gpus = static_cast<int>(bounded(map, "gpus", 1, max_collective_gpus));
    d.zero_stage = static_cast<int>(map.non_negative_int_or("zero_stage", 1));
    if (d.zero_stage > 3)
      map.fail("zero_stage",
               fmt::format("`zero_stage` = {}: ZeRO has stages 0 to 3", d.zero_stage));
    d.stride = bounded(map, "stride", 1, max_collective_gpus);
    d.expert_parallel = static_cast<int>(bounded(map, "expert_parallel", 1, d.gpus));
    if (d.gpus % d.expert_parallel != 0)
      map.fail("expert_parallel", fmt::format("`expert_parallel` = {} does not divide the {} "
                                              "data-parallel GPUs it is carved from",
                                              d.expert_parallel, d.gpus));
  }

  /// `key` of `map`, from `low` to `high` (`low` where absent).
  static std::int64_t bounded(const yaml_map &map, const char *key, std::int64_t low,
                              std::int64_t high) {
    const std::int64_t value = map.positive_int_or(key, low);
    if (value < low || value > high)
      map.fail(key, fmt::format("`{}` = {}: from {} to {}", key, value, low, high));
    return value;
  }

  layer parse_repeat(const detail::yaml_node &item, int depth, const std::string &prefix) {
    const yaml_map map(item, m_file, "repeat block",
                       {"repeat", "name", "layers", "precision", "weights", "weight_group"});
    if (depth >= max_nesting)
      throw input_error(map.where(),
                        "repeat blocks nest deeper than " + std::to_string(max_nesting));
    layer result;
    result.where = map.where();
    result.name = map.string_or("name", "");
    if (map.has("precision"))
      result.precision = parse_precision_key(map, "precision");
    result.weights = parse_weights(map);
    const std::string path = layer_path(prefix, result.name);
    check_layer_limits(path, m_ops, result.where);
    repeat_block block;
    block.times = map.positive_int("repeat");
    block.layers = parse_layers(map, "layers", depth + 1, path);
    result.body = std::move(block);
    return result;
  }

  std::string m_file;
  std::int64_t m_network_seq_len = 1;
  std::int64_t m_layer_count = 0;
  run_mode m_mode = run_mode::inference;
  std::int64_t m_ops = 0; ///< of the layers read so far
};

} // namespace

network parse_network(std::string_view yaml_text, const std::string &origin) {
  const detail::yaml_node root = detail::parse_yaml(yaml_text, origin);
  if (!root.is_map())
    throw input_error({origin, 1, 1},
                      "expected a network: a mapping with `name`, `layers` and optional "
                      "`precision`, `batch`, `seq_len`, `mode`; got " +
                          detail::describe(root));
  return network_parser(origin).parse(root);
}

network load_network(const std::filesystem::path &file) {
  return parse_network(detail::read_text_file(file, "network file"), file.string());
}

network single_gemm(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch_count,
                    roofline::precision p) {
  network net;
  net.name = "gemm " + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
  net.precision = p;
  layer gemm;
  gemm.name = "gemm";
  gemm.body = matmul_layer{m, n, k, batch_count};
  net.layers.push_back(std::move(gemm));
  return net;
}

namespace {

/// Whether some layer of `layers` (inside repeat blocks too) has a body of type `body`.
template <class body> bool has_layer(const std::vector<layer> &layers) {
  return std::any_of(layers.begin(), layers.end(), [](const layer &l) {
    if (const auto *block = std::get_if<repeat_block>(&l.body))
      return has_layer<body>(block->layers);
    return std::holds_alternative<body>(l.body);
  });
}

} // namespace

throughput_unit throughput_unit_of(const network &net) {
  if (net.phase || net.seq_len > 1 || has_layer<attention_layer>(net.layers))
    return throughput_unit::tokens;
  return has_layer<conv2d_layer>(net.layers) ? throughput_unit::images : throughput_unit::samples;
}

std::string step_tokens(const network &net) {
  if (net.phase != inference_phase::decode)
    return fmt::format("seq_len {}", net.seq_len);
  return fmt::format("{} new token{} a sequence, KV cache {}", net.seq_len,
                     net.seq_len == 1 ? "" : "s", net.kv_len);
}

std::optional<network> load_op_trace(const std::filesystem::path &file) {
  const std::string text = detail::read_text_file(file, "model config or op trace");
  if (!is_op_trace(text))
    return std::nullopt;
  return network_of_trace(read_op_trace(text, file.string()), file.string());
}

network network_of_trace(traced_program program, const std::string &origin) {
  network net;
  net.name = program.name;
  net.origin = origin;
  net.mode = program.training ? run_mode::training : run_mode::inference;
  net.batch = std::max<std::int64_t>(1, program.batch);
  // The precision most of its GEMM FLOPs run in names the network's.
  std::map<precision, double> flops;
  for (const op &o : program.ops)
    if (o.is_gemm() || o.is_fused_attention())
      flops[o.precision] += static_cast<double>(o.flops) * static_cast<double>(o.count);
  if (!flops.empty())
    net.precision = std::max_element(flops.begin(), flops.end(), [](const auto &a, const auto &b) {
                      return a.second < b.second;
                    })->first;
  net.notes.push_back(coverage_note(program));
  net.trace = std::move(program);
  return net;
}

} // namespace roofline
