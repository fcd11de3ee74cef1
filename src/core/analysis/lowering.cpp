// SPDX-License-Identifier: Apache-2.0
#include "roofline/analysis/lowering.hpp"

#include "checked_math.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <utility>
#include <vector>

namespace roofline {

namespace {

/// The output of the previous layer, which memory-bound ops act on by default.
struct activation {
  std::int64_t elements = 0;                  ///< over the whole batch
  std::int64_t row = 0;                       ///< its innermost extent (op::row)
  std::optional<std::int64_t> channels, h, w; ///< per sample, after a conv or a pool
};

/// Where a layer's ops are made: its path, precision, inherited weights, repeat count and place.
struct context {
  std::string path;
  precision prec;
  std::optional<quantized_weights> weights; ///< a linear layer's, inherited
  std::int64_t count;
  source_location where;
};

// The messages are written only on overflow: these run for every op.
std::int64_t product(const context &ctx, std::initializer_list<std::int64_t> factors,
                     const char *what) {
  const std::optional<std::int64_t> value = detail::checked_product(factors);
  return value ? *value
               : detail::require_no_overflow(value, ctx.where, "layer `" + ctx.path + "`", what);
}

std::int64_t sum(const context &ctx, std::initializer_list<std::optional<std::int64_t>> terms,
                 const char *what) {
  const std::optional<std::int64_t> value = detail::checked_sum(terms);
  return value ? *value
               : detail::require_no_overflow(value, ctx.where, "layer `" + ctx.path + "`", what);
}

/// How a mixture of experts routes the step's `tokens` (uniform routing, stated in
/// routing_notes): their T·k rows spread evenly over the experts some token reaches.
struct routing {
  std::int64_t tokens = 0, routed = 0, reached = 0;
  std::int64_t rows = 0; ///< per reached expert: the even split, rounded up
};

routing route(const context &ctx, const moe_layer &moe, std::int64_t tokens) {
  routing r;
  r.tokens = tokens;
  // Under expert parallelism a GPU's experts serve their share of the tokens every sending GPU
  // brings: as many as its own where each brings its own, 1/expert_parallel of them where all
  // hold the same, senders/expert_parallel of them where only some bring any.
  const std::int64_t ep = std::max<std::int64_t>(1, moe.expert_parallel);
  const std::int64_t sent =
      product(ctx, {tokens, moe.top_k, senders_of(moe)}, "its routed tokens (× top_k)");
  r.routed = sent / ep + (sent % ep != 0);
  r.reached = experts_reached(moe, tokens);
  r.rows = r.routed / r.reached + (r.routed % r.reached != 0);
  return r;
}

/// The grouped GEMM of the reached experts' n×k weights (`weights`: quantized), as a batched GEMM
/// of that many experts. Each reached expert's weights are read once.
op expert_gemm(const context &ctx, const std::string &name, const moe_layer &moe, const routing &r,
               std::int64_t n, std::int64_t k, const std::optional<quantized_weights> &weights) {
  const gemm_shape shape{r.rows, n, k, r.reached, weights};
  op o = make_gemm_op(name, shape, ctx.prec, ctx.where);
  o.count = ctx.count;
  o.scaling = {batch_growth::routed, 0, r.tokens, moe.experts, moe.top_k, moe.expert_parallel,
               moe.sending_ranks};
  // The routed rows, not the rows the even split rounds up to.
  o.flops = product(ctx, {2, r.routed, n, k}, "its FLOP count");
  const std::int64_t activations = sum(ctx,
                                       {product(ctx, {r.routed, k}, "its input size"),
                                        product(ctx, {r.routed, n}, "its output size")},
                                       "its tensor sizes");
  o.bytes =
      sum(ctx,
          {product(ctx, {activations, element_bytes(ctx.prec)}, "its byte count"),
           product(ctx,
                   {detail::require_no_overflow(weight_bytes(shape, ctx.prec), ctx.where,
                                                "layer `" + ctx.path + "`", "its weights' size"),
                    r.reached},
                   "its weights' size")},
          "its byte count");
  return o;
}

/// A layer's sizes that must be positive, by field name: what the network reader requires of a
/// file, checked again here for a network built in code (an attention layer whose `seq_len` was
/// left at 0 would lower to empty GEMMs and be analysed as taking no time).
using sizes = std::vector<std::pair<const char *, std::int64_t>>;
sizes positive_sizes(const linear_layer &l) {
  return {{"in", l.in}, {"out", l.out}};
}
sizes positive_sizes(const matmul_layer &l) {
  return {{"m", l.m}, {"n", l.n}, {"k", l.k}, {"batch_count", l.batch_count}};
}
sizes positive_sizes(const conv2d_layer &l) {
  return {
      {"in_channels", l.in_channels}, {"out_channels", l.out_channels}, {"kernel_h", l.kernel_h},
      {"kernel_w", l.kernel_w},       {"stride_h", l.stride_h},         {"stride_w", l.stride_w},
      {"input_h", l.input_h},         {"input_w", l.input_w},           {"groups", l.groups}};
}
sizes positive_sizes(const attention_layer &l) {
  return {{"heads", l.heads},
          {"head_dim", l.head_dim},
          {"seq_len", l.seq_len},
          {"kv_len", l.kv_len},
          {"kv_heads", l.key_value_heads()}};
}
sizes positive_sizes(const moe_layer &l) {
  return {{"experts", l.experts},
          {"top_k", l.top_k},
          {"in", l.in},
          {"intermediate", l.intermediate},
          {"expert_parallel", l.expert_parallel}};
}
sizes positive_sizes(const memory_layer &l) {
  return l.features ? sizes{{"features", *l.features}, {"sequence_split", l.sequence_split}}
                    : sizes{};
}
sizes positive_sizes(const collective_layer &l) {
  sizes s{{"gpus", l.gpus}, {"stride", l.stride}, {"copies", l.copies}};
  if (l.features)
    s.emplace_back("features", *l.features);
  return s;
}
sizes positive_sizes(const pool_layer &l) {
  sizes s{{"kernel", l.kernel}, {"stride", l.stride}};
  for (const auto &[name, value] :
       {std::pair{"channels", l.channels}, {"input_h", l.input_h}, {"input_w", l.input_w}})
    if (value)
      s.emplace_back(name, *value);
  return s;
}
sizes positive_sizes(const repeat_block &l) {
  return {{"times", l.times}};
}

/// Throws input_error naming the layer and the field when a size of `l` is not positive.
void check_sizes(const layer &l, const std::string &path) {
  std::visit(
      [&](const auto &body) {
        for (const auto &[field, value] : positive_sizes(body))
          if (value < 1)
            throw input_error(l.where, fmt::format("layer `{}`: `{}` is {}; expected a positive "
                                                   "integer",
                                                   path, field, value));
      },
      l.body);
}

/// The name lower() gives a recomputed forward op: its layer's, and this.
constexpr std::string_view recomputed_suffix = "/recompute";

class lowerer {
public:
  explicit lowerer(const network &net) : m_net(net) {}

  std::vector<op> run() {
    for (const auto &[field, value] : {std::pair{"batch", m_net.batch}, {"seq_len", m_net.seq_len}})
      if (value < 1)
        throw input_error({m_net.origin}, fmt::format("network `{}`: `{}` is {}; expected a "
                                                      "positive integer",
                                                      m_net.name, field, value));
    m_rows = detail::require_no_overflow(detail::checked_product({m_net.batch, m_net.seq_len}),
                                         {m_net.origin}, "network `" + m_net.name + "`",
                                         "batch × seq_len");
    lower_layers(m_net.layers, "", m_net.precision, m_net.weights, 1);
    std::vector<op> ops = std::move(m_forward);
    // The backward pass runs the layers in reverse order.
    for (auto group = m_backward.rbegin(); group != m_backward.rend(); ++group)
      ops.insert(ops.end(), group->begin(), group->end());
    return ops;
  }

private:
  void lower_layers(const std::vector<layer> &layers, const std::string &prefix, precision prec,
                    const std::optional<quantized_weights> &weights, std::int64_t count) {
    for (const layer &l : layers) {
      const std::string path = layer_path(prefix, l.name);
      // The limits first: a network past them makes no op beyond max_ops.
      if (!std::holds_alternative<repeat_block>(l.body))
        m_ops += op_count(l, m_net.mode);
      check_layer_limits(path, m_ops, l.where);
      check_sizes(l, path);
      const context ctx{path, l.precision.value_or(prec), l.weights ? l.weights : weights, count,
                        l.where};
      std::visit([&](const auto &body) { lower(ctx, body); }, l.body);
    }
  }

  bool training() const { return m_net.mode == run_mode::training; }

  /// A GEMM and, in training, its gradients; `growth` says how the forward GEMM's sizes follow
  /// the batch (op::scaling).
  void add_gemm(const context &ctx, const std::string &suffix, const gemm_shape &shape,
                batch_growth growth) {
    const std::string name = suffix.empty() ? ctx.path : ctx.path + "/" + suffix;
    op forward = make_gemm_op(name, shape, ctx.prec, ctx.where);
    forward.count = ctx.count;
    forward.scaling.growth = growth;
    // Rows that grow with the batch meet the same weights at any batch.
    if (growth == batch_growth::rows)
      forward.scaling.fixed_bytes =
          product(ctx,
                  {detail::require_no_overflow(weight_bytes(shape, ctx.prec), ctx.where,
                                               "layer `" + ctx.path + "`", "its weights' size"),
                   shape.batch_count},
                  "its weights' size");
    const batch_scaling scaling = forward.scaling;
    m_forward.push_back(std::move(forward));
    if (!training())
      return;
    std::vector<op> grads;
    for (auto [p, grad_shape] : {std::pair{pass::data_grad, data_grad_shape(shape)},
                                 std::pair{pass::weight_grad, weight_grad_shape(shape)}}) {
      op grad = make_gemm_op(name, grad_shape, ctx.prec, ctx.where);
      grad.pass = p;
      grad.count = ctx.count;
      // The data gradient keeps the forward's M, batch_count and weights; the weight gradient
      // keeps its batch_count, while the forward's M becomes its reduction.
      if (p == pass::data_grad || growth == batch_growth::instances)
        grad.scaling = scaling;
      grads.push_back(std::move(grad));
    }
    m_backward.push_back(std::move(grads));
  }

  /// A memory-bound op over rows of `row` elements (op::row); `bytes` and `backward_bytes` in
  /// elements (scaled by the activations' size here: activation_bytes).
  void add_memory_op(const context &ctx, const std::string &name, memory_op_kind kind,
                     std::int64_t output_elements, std::int64_t row, std::int64_t element_traffic,
                     std::int64_t backward_element_traffic) {
    const memory_op_cost &cost = cost_of(kind);
    const auto make = [&](pass p, int flops_per_element, std::int64_t traffic) {
      op result;
      result.layer = name;
      result.pass = p;
      result.kind = std::string(to_string(kind));
      result.precision = ctx.prec;
      result.elements = output_elements;
      result.row = row;
      result.count = ctx.count;
      result.flops = product(ctx, {flops_per_element, output_elements}, "its FLOP count");
      result.bytes = product(ctx, {traffic, activation_bytes(ctx.prec)}, "its byte count");
      result.where = ctx.where;
      return result;
    };
    m_forward.push_back(make(pass::forward, cost.flops_per_element, element_traffic));
    if (training() && backward_element_traffic > 0)
      m_backward.push_back(
          {make(pass::data_grad, cost.backward_flops_per_element, backward_element_traffic)});
  }

  /// The weights a layer's GEMMs read: quantized as `ctx` says, where that makes sense.
  std::optional<quantized_weights> weights_of(const context &ctx) const {
    if (!ctx.weights)
      return std::nullopt;
    if (training())
      throw input_error(ctx.where, "layer `" + ctx.path +
                                       "`: weight-only quantization is modelled for inference "
                                       "only");
    if (ctx.prec != precision::fp16 && ctx.prec != precision::bf16)
      throw input_error(ctx.where, "layer `" + ctx.path + "`: weight-only quantized weights (int" +
                                       std::to_string(ctx.weights->bits) +
                                       ") are widened to fp16 or bf16 activations, not " +
                                       std::string(to_string(ctx.prec)) + " (W8A16, W4A16)");
    return ctx.weights;
  }

  /// An fp8 layer's dynamic per-tensor quantization of its `elements` input activations: read
  /// twice at their size (the largest magnitude, then the scaling), written once at fp8.
  void add_activation_quantization(const context &ctx, std::int64_t elements, std::int64_t row) {
    add_memory_op(ctx, ctx.path + "/quantize", memory_op_kind::quantize, elements, row, 0, 0);
    m_forward.back().bytes = product(
        ctx, {elements, quantize_bytes_per_element(activation_bytes(ctx.prec))}, "its byte count");
  }

  void lower(const context &ctx, const linear_layer &linear) {
    // fp8 linears quantize their activations on every call (dynamic scaling), where a serving
    // engine's kernels (glue fused) write them in fp8 from the producer (the norm, the
    // activation), with no kernel of their own; a matmul's operands are the GEMM's alone.
    if ((ctx.prec == precision::fp8 || ctx.prec == precision::fp4) && m_net.glue != "fused")
      add_activation_quantization(ctx, product(ctx, {m_rows, linear.in}, "its input size"),
                                  linear.in);
    add_gemm(ctx, "", {m_rows, linear.out, linear.in, 1, weights_of(ctx)}, batch_growth::rows);
    m_previous = {product(ctx, {m_rows, linear.out}, "its output size"), linear.out};
  }

  void lower(const context &ctx, const matmul_layer &matmul) {
    add_gemm(ctx, "", {matmul.m, matmul.n, matmul.k, matmul.batch_count}, batch_growth::none);
    m_previous = {product(ctx, {matmul.m, matmul.n, matmul.batch_count}, "its output size"),
                  matmul.n};
  }

  /// Output positions of a window sliding over a padded input; 0 when the window does not fit.
  std::int64_t output_extent(const context &ctx, std::int64_t input, std::int64_t padding,
                             std::int64_t kernel, std::int64_t stride) const {
    const std::int64_t padded =
        sum(ctx, {input, product(ctx, {2, padding}, "its padding")}, "its padded input");
    return padded < kernel ? 0 : (padded - kernel) / stride + 1;
  }

  void lower(const context &ctx, const conv2d_layer &conv) {
    const std::int64_t p =
        output_extent(ctx, conv.input_h, conv.padding_h, conv.kernel_h, conv.stride_h);
    const std::int64_t q =
        output_extent(ctx, conv.input_w, conv.padding_w, conv.kernel_w, conv.stride_w);
    if (p == 0 || q == 0)
      throw input_error(ctx.where,
                        "layer `" + ctx.path + "` (conv2d): the " + std::to_string(conv.kernel_h) +
                            "×" + std::to_string(conv.kernel_w) +
                            " kernel is larger than the padded " + std::to_string(conv.input_h) +
                            "×" + std::to_string(conv.input_w) + " input");
    const std::int64_t batch = m_net.batch;
    // Grouped: one GEMM per group, of its share of the channels (the reader checked they divide).
    const gemm_shape shape{
        product(ctx, {batch, p, q}, "M = batch·P·Q"), conv.out_channels / conv.groups,
        product(ctx, {conv.in_channels / conv.groups, conv.kernel_h, conv.kernel_w}, "K = C·R·S"),
        conv.groups};
    // Every tensor's size checked where its layer is, before conv_bytes sums them.
    product(ctx, {batch, conv.in_channels, conv.input_h, conv.input_w}, "its input size");
    product(ctx, {conv.out_channels, shape.k}, "its filter size");
    const std::int64_t output = product(ctx, {shape.m, conv.out_channels}, "its output size");
    const auto bytes = [&](const conv_shape &pass) {
      const std::optional<std::int64_t> moved = conv_bytes(pass, ctx.prec);
      return moved ? *moved
                   : detail::require_no_overflow(moved, ctx.where, "layer `" + ctx.path + "`",
                                                 "its byte count");
    };
    const std::size_t first = m_forward.size();
    const std::size_t first_backward = m_backward.size();
    add_gemm(ctx, "", shape, batch_growth::rows);
    conv_shape cs{batch,
                  conv.in_channels,
                  conv.out_channels,
                  conv.input_h,
                  conv.input_w,
                  p,
                  q,
                  conv.kernel_h,
                  conv.kernel_w,
                  conv.stride_h,
                  conv.stride_w,
                  conv.groups,
                  pass::forward,
                  conv.padding_h,
                  conv.padding_w};
    m_forward[first].bytes = bytes(cs);
    m_forward[first].conv = cs;
    for (std::size_t g = first_backward; g < m_backward.size(); ++g)
      for (op &grad : m_backward[g]) {
        cs.pass = grad.pass;
        grad.bytes = bytes(cs);
        grad.conv = cs;
      }
    m_previous = {output, conv.out_channels, conv.out_channels, p, q}; // NHWC
  }

  /// Query-key pairs per head that a fused kernel computes. The queries are the last `seq_len`
  /// of the `kv_len` positions; without a mask each meets every key. Under a causal mask the
  /// query at position p (1-based) meets the p keys up to its own, and at most `window` of them
  /// under a sliding window: the sum of min(p, window) over p from kv − s + 1 to kv.
  std::int64_t attended_pairs(const context &ctx, const attention_layer &attention) const {
    const std::int64_t s = attention.seq_len, kv = attention.kv_len;
    if (!attention.causal || kv < s)
      return product(ctx, {s, attention.window > 0 ? std::min(kv, attention.window) : kv},
                     "its query-key pairs");
    const std::int64_t first = kv - s + 1;
    const std::int64_t cap = attention.window > 0 ? attention.window : kv;
    // Positions first..min(kv, cap) meet p keys each (an arithmetic series); the rest meet cap.
    const std::int64_t last_uncapped = std::min(kv, cap);
    std::int64_t pairs = 0;
    if (first <= last_uncapped) {
      const std::int64_t count = last_uncapped - first + 1;
      // count · (first + last) / 2, halving whichever factor is even.
      const std::int64_t ends = sum(ctx, {first, last_uncapped}, "its query-key pairs");
      pairs = count % 2 == 0 ? product(ctx, {count / 2, ends}, "its query-key pairs")
                             : product(ctx, {count, ends / 2}, "its query-key pairs");
    }
    const std::int64_t capped = kv - std::max(last_uncapped, first - 1);
    return sum(ctx, {pairs, product(ctx, {capped, cap}, "its query-key pairs")},
               "its query-key pairs");
  }

  /// FlashAttention-style: Q, K and V read once, the output written once, the S × kv scores
  /// kept on chip; under a causal mask each query attends only to the keys up to its own
  /// position (the last `seq_len` of the `kv_len`), so the masked products are skipped.
  /// In training, the backward kernel too (FlashAttention 2's and cuDNN's: dQ, dK and dV in one
  /// pass that recomputes the scores): 5 products of the forward's 2; Q, K, V, O and dO read,
  /// dQ, dK and dV written.
  void lower_fused(const context &ctx, const attention_layer &attention) {
    if (training() && attention.kv_precision && *attention.kv_precision != ctx.prec)
      throw input_error(ctx.where, "layer `" + ctx.path +
                                       "`: a KV cache of another precision is modelled for "
                                       "inference only");
    const std::int64_t s = attention.seq_len;
    const std::int64_t pairs = attended_pairs(ctx, attention);
    // The heads whose keys and values the kernel reads: every query head's once repeat_kv has
    // copied them out (reading kv_heads, writing heads; its gradient sums them back).
    std::int64_t read_heads = attention.key_value_heads();
    if (attention.expanded_kv && read_heads < attention.heads) {
      const std::int64_t per_head = product(
          ctx, {2, m_net.batch, attention.keys_read(), attention.head_dim}, "its K and V size");
      const std::int64_t traffic =
          product(ctx, {per_head, read_heads + attention.heads}, "its repeat_kv traffic");
      add_memory_op(ctx, ctx.path + "/repeat_kv", memory_op_kind::copy,
                    product(ctx, {per_head, attention.heads}, "its repeat_kv size"),
                    attention.head_dim, traffic, traffic);
      read_heads = attention.heads;
    }
    op result;
    result.layer = ctx.path;
    result.kind = std::string(fused_attention_kind);
    result.precision = ctx.prec;
    result.count = ctx.count;
    result.where = ctx.where;
    result.elements =
        product(ctx, {m_net.batch, attention.heads, s, attention.head_dim}, "its output size");
    // Q·Kᵀ and P·V: 2 FLOPs per multiply-add, 2 products per pair and head dimension.
    result.flops = product(ctx, {4, m_net.batch, attention.heads, pairs, attention.head_dim},
                           "its FLOP count");
    const std::int64_t queries = result.elements; // Q read, O written: the same size
    // Keys and values: those some query meets, each read once.
    const std::int64_t cache =
        product(ctx, {2, m_net.batch, read_heads, attention.keys_read(), attention.head_dim},
                "its K and V size");
    result.bytes = sum(
        ctx,
        {product(ctx, {2, queries, element_bytes(ctx.prec)}, "its byte count"),
         product(ctx, {cache, element_bytes(attention.kv_storage(ctx.prec))}, "its byte count")},
        "its byte count");
    result.attention =
        attention_shape{m_net.batch,      attention.heads,    read_heads,       s,
                        attention.kv_len, attention.head_dim, attention.causal, attention.window};
    if (attention.kv_precision && *attention.kv_precision != ctx.prec)
      result.attention->kv_precision = attention.kv_precision;
    if (training()) {
      op backward = result;
      backward.pass = pass::data_grad;
      backward.attention->backward = true;
      // 2.5 × the forward's: the forward's FLOPs are a multiple of 4.
      backward.flops = product(ctx, {5, result.flops / 2}, "its backward FLOP count");
      backward.bytes =
          sum(ctx,
              {product(ctx, {4, queries, element_bytes(ctx.prec)}, "its backward byte count"),
               product(ctx, {2, cache, element_bytes(ctx.prec)}, "its backward byte count")},
              "its backward byte count");
      m_backward.push_back({std::move(backward)});
    }
    m_forward.push_back(std::move(result));
    m_previous = {queries, product(ctx, {attention.heads, attention.head_dim}, "its row")};
  }

  void lower(const context &ctx, const attention_layer &attention) {
    if (attention.fused) {
      lower_fused(ctx, attention);
      return;
    }
    if (attention.kv_precision && *attention.kv_precision != ctx.prec)
      throw input_error(ctx.where, "layer `" + ctx.path + "`: a KV cache stored as " +
                                       std::string(to_string(*attention.kv_precision)) +
                                       " is modelled for fused attention only (set `fused: "
                                       "true`); the unfused GEMMs run in the layer's precision");
    // A sliding window (decoding) reads only the window's keys; the textbook form computes
    // every score of a prompt and masks them.
    const std::int64_t keys = attention.keys_read();
    // Grouped-query attention: the query heads of a group share one key/value head, so their
    // queries are stacked into M against it (as GQA kernels do): the keys and values are read
    // once per key/value head, not once per query head.
    const std::int64_t kv_heads = attention.key_value_heads();
    const std::int64_t rows = product(ctx, {attention.seq_len, attention.heads / kv_heads},
                                      "seq_len × the query heads per key/value head");
    const std::int64_t instances = product(ctx, {m_net.batch, kv_heads}, "batch × kv_heads");
    add_gemm(ctx, "qk", {rows, keys, attention.head_dim, instances}, batch_growth::instances);
    const std::int64_t scores = product(ctx, {instances, rows, keys}, "its score count");
    add_memory_op(ctx, ctx.path + "/softmax", memory_op_kind::softmax, scores, keys,
                  product(ctx, {2, scores}, "its softmax traffic"),
                  product(ctx, {3, scores}, "its softmax traffic"));
    add_gemm(ctx, "pv", {rows, attention.head_dim, keys, instances}, batch_growth::instances);
    m_previous = {product(ctx, {instances, rows, attention.head_dim}, "its output size"),
                  attention.head_dim};
  }

  /// Mixture of experts under uniform routing (route): a router, then the reached experts'
  /// grouped GEMMs (expert_gemm) and activations, then the combination of each token's outputs.
  void lower(const context &ctx, const moe_layer &moe) {
    if (moe.experts % moe.expert_parallel != 0)
      throw input_error(ctx.where, fmt::format("layer `{}`: expert_parallel {} does not divide its "
                                               "{} experts",
                                               ctx.path, moe.expert_parallel, moe.experts));
    const std::int64_t tokens = m_rows;
    const routing r = route(ctx, moe, tokens);
    const std::int64_t routed = r.routed;
    add_gemm(ctx, "router", {tokens, moe.experts, moe.in, 1}, batch_growth::rows);
    const std::int64_t scores = product(ctx, {tokens, moe.experts}, "its router scores");
    add_memory_op(ctx, ctx.path + "/router/topk", memory_op_kind::softmax, scores, moe.experts,
                  product(ctx, {2, scores}, "its router traffic"), 0);
    const std::optional<quantized_weights> weights = weights_of(ctx);
    // In training each expert GEMM has its data and weight gradients: the same work again twice
    // over the same rows and weights (the grouped GEMMs' shapes transposed).
    const auto add_expert_gemm = [&](const char *suffix, std::int64_t n, std::int64_t k) {
      m_forward.push_back(expert_gemm(ctx, ctx.path + "/experts/" + suffix, moe, r, n, k, weights));
      if (!training())
        return;
      std::vector<op> grads(2, m_forward.back());
      grads[0].pass = pass::data_grad;
      grads[1].pass = pass::weight_grad;
      m_backward.push_back(std::move(grads));
    };
    const auto activation_op = [&](const char *suffix, memory_op_kind kind) {
      const std::int64_t elements =
          product(ctx, {routed, moe.intermediate}, "its expert activations");
      const memory_op_cost &cost = cost_of(kind);
      add_memory_op(
          ctx, ctx.path + "/experts/" + suffix, kind, elements, moe.intermediate,
          product(ctx, {elements, cost.tensors_read + cost.tensors_written}, "its traffic"),
          product(ctx, {elements, cost.backward_tensors}, "its traffic"));
    };
    if (moe.gated) {
      add_expert_gemm("gate", moe.intermediate, moe.in);
      add_expert_gemm("up", moe.intermediate, moe.in);
      activation_op(std::string(to_string(moe.activation)).c_str(), moe.activation);
      activation_op("mul", memory_op_kind::mul);
    } else {
      add_expert_gemm("up", moe.intermediate, moe.in);
      activation_op(std::string(to_string(moe.activation)).c_str(), moe.activation);
    }
    add_expert_gemm("down", moe.in, moe.intermediate);
    // Each token's k outputs, weighted and summed.
    const std::int64_t outputs = product(ctx, {tokens, moe.in}, "its output size");
    const std::int64_t combined =
        sum(ctx, {product(ctx, {routed, moe.in}, "its traffic"), outputs}, "its traffic");
    add_memory_op(ctx, ctx.path + "/experts/combine", memory_op_kind::add, outputs, moe.in,
                  combined, combined);
    m_previous = {outputs, moe.in};
  }

  void lower(const context &ctx, const memory_layer &layer) {
    std::int64_t elements = m_previous.elements;
    const std::int64_t split = std::max<std::int64_t>(1, layer.sequence_split);
    if (layer.features) // each GPU of a sequence split its share of the rows, rounded up
      elements = product(ctx, {m_rows / split + (m_rows % split != 0), *layer.features},
                         "its element count");
    else if (elements == 0)
      throw input_error(ctx.where,
                        "layer `" + ctx.path + "` (" + std::string(to_string(layer.kind)) +
                            "): no earlier layer gives its size; add `features` (elements per "
                            "row of batch·seq_len rows)");
    const memory_op_cost &cost = cost_of(layer.kind);
    const std::int64_t traffic =
        product(ctx, {elements, cost.tensors_read + cost.tensors_written}, "its traffic");
    const std::int64_t backward = product(ctx, {elements, cost.backward_tensors}, "its traffic");
    add_memory_op(ctx, ctx.path, layer.kind, elements,
                  layer.features ? *layer.features : m_previous.row, traffic, backward);
    if (layer.unfused && cost.unfused) {
      // Its forward kernels' bytes: the activations' passes at their size, the rest at fp32.
      op &forward = m_forward.back();
      const unfused_form &form = *cost.unfused;
      forward.launches = form.launches;
      const std::optional<std::int64_t> bytes =
          unfused_bytes(form, elements, activation_bytes(ctx.prec));
      forward.bytes = bytes ? *bytes
                            : detail::require_no_overflow(bytes, ctx.where,
                                                          "layer `" + ctx.path + "`", "its bytes");
    }
    if (layer.features)
      m_previous = {elements, *layer.features};
  }

  void lower(const context &ctx, const collective_layer &layer) {
    std::int64_t elements = m_previous.elements;
    if (layer.features)
      elements = product(ctx, {m_rows, *layer.features}, "its element count");
    else if (elements == 0)
      throw input_error(ctx.where, fmt::format("layer `{}` ({}): no earlier layer gives its size; "
                                               "add `features` (elements per row of batch·seq_len "
                                               "rows)",
                                               ctx.path, to_string(layer.kind)));
    op result;
    result.layer = ctx.path;
    result.kind = std::string(to_string(layer.kind));
    result.precision = ctx.prec;
    result.elements = product(ctx, {elements, layer.copies}, "its element count");
    result.count = ctx.count;
    result.gpus = layer.gpus;
    result.stride = layer.stride;
    result.bytes = product(ctx, {result.elements, activation_bytes(ctx.prec)}, "its byte count");
    result.where = ctx.where;
    m_forward.push_back(result);
    if (training()) { // the backward pass moves the gradient back the same way: an all-reduce's
                      // of the column-parallel layer before it, an all-gather's reduce-scattered
      result.pass = pass::data_grad;
      if (layer.kind == collective::all_gather || layer.kind == collective::reduce_scatter)
        result.kind =
            std::string(to_string(layer.kind == collective::all_gather ? collective::reduce_scatter
                                                                       : collective::all_gather));
      m_backward.push_back({result});
    }
    if (layer.features)
      m_previous = {elements, *layer.features};
  }

  void lower(const context &ctx, const pool_layer &pool) {
    const std::string kind(to_string(pool.kind));
    const auto channels = pool.channels ? pool.channels : m_previous.channels;
    const auto h = pool.input_h ? pool.input_h : m_previous.h;
    const auto w = pool.input_w ? pool.input_w : m_previous.w;
    if (!channels || !h || !w)
      throw input_error(ctx.where,
                        "layer `" + ctx.path + "` (" + kind +
                            "): its input map is unknown; put it "
                            "after a conv2d or pool layer, or give `channels` and `input: [H, W]`");
    const std::int64_t p = output_extent(ctx, *h, pool.padding, pool.kernel, pool.stride);
    const std::int64_t q = output_extent(ctx, *w, pool.padding, pool.kernel, pool.stride);
    if (p == 0 || q == 0)
      throw input_error(ctx.where, "layer `" + ctx.path + "` (" + kind + "): the window " +
                                       std::to_string(pool.kernel) + " is larger than the padded " +
                                       std::to_string(*h) + "×" + std::to_string(*w) + " input");
    const std::int64_t input = product(ctx, {m_net.batch, *channels, *h, *w}, "its input size");
    const std::int64_t output = product(ctx, {m_net.batch, *channels, p, q}, "its output size");
    // Forward reads the input and writes the output; backward reads the output gradient and the
    // input (max: its positions) and writes the input gradient.
    add_memory_op(ctx, ctx.path, pool.kind, output, *channels,
                  sum(ctx, {input, output}, "its traffic"),
                  sum(ctx, {output, product(ctx, {2, input}, "its traffic")}, "its traffic"));
    op &forward = m_forward.back();
    forward.flops = product(ctx, {output, pool.kernel, pool.kernel}, "its FLOP count");
    forward.pool =
        pool_shape{m_net.batch, *channels, *h, *w, p, q, pool.kernel, pool.stride, pool.padding};
    m_previous = {output, *channels, *channels, p, q}; // NHWC
  }

  void lower(const context &ctx, const repeat_block &block) {
    const std::size_t first = m_forward.size();
    lower_layers(block.layers, ctx.path, ctx.prec, ctx.weights,
                 product(ctx, {ctx.count, block.times}, "its repeat count"));
    // Full recomputation runs a top-level block's forward again in the backward pass, just
    // before its gradients: its forward ops once more, named so.
    if (training() && m_net.recompute == recomputation::full && ctx.count == 1) {
      std::vector<op> again(m_forward.begin() + static_cast<std::ptrdiff_t>(first),
                            m_forward.end());
      for (op &o : again)
        o.layer += recomputed_suffix;
      m_ops += static_cast<std::int64_t>(again.size()); // max_ops bounds them too
      check_layer_limits(ctx.path, m_ops, ctx.where);
      m_backward.push_back(std::move(again));
    }
  }

  const network &m_net;
  std::int64_t m_rows = 0;
  std::int64_t m_ops = 0; ///< op_count of the layers lowered so far: max_ops bounds it
  activation m_previous;
  std::vector<op> m_forward;
  std::vector<std::vector<op>> m_backward;
};

} // namespace

namespace {

double expected_reached(const moe_layer &moe, double tokens) {
  const double experts = static_cast<double>(moe.experts);
  // An expert is missed by one token's top_k distinct picks with probability 1 − k/E.
  return experts * (1.0 - std::pow(1.0 - static_cast<double>(moe.top_k) / experts, tokens));
}

} // namespace

double expected_experts_reached(const moe_layer &moe, std::int64_t tokens) {
  return expected_reached(moe, static_cast<double>(tokens));
}

std::int64_t experts_reached(const moe_layer &moe, std::int64_t tokens) {
  const std::int64_t ep = std::max<std::int64_t>(1, moe.expert_parallel);
  const std::int64_t held = moe.experts / ep;
  const auto senders = static_cast<double>(senders_of(moe));
  // Rounded up (a part-reached expert's weights are read whole), never fewer than one token's
  // top_k (one expert under expert parallelism) nor more than the GPU holds; the tolerance keeps
  // an exact count from rounding up. Clamped as a double first: the cast of a value past 2^63
  // would be undefined.
  const std::int64_t fewest = ep > 1 ? 1 : std::min(moe.top_k, moe.experts);
  const double expected =
      std::clamp(std::ceil(expected_reached(moe, static_cast<double>(tokens) * senders) /
                               static_cast<double>(ep) -
                           1e-9),
                 static_cast<double>(fewest), static_cast<double>(held));
  return std::clamp(static_cast<std::int64_t>(std::min(expected, 9.0e18)), fewest, held);
}

std::vector<op> lower(const network &net) {
  if (net.trace)
    return net.trace->ops;
  return lowerer(net).run();
}

std::optional<op> at_batch(const op &gemm, std::int64_t batch, std::int64_t other) {
  const batch_scaling &scaling = gemm.scaling;
  if (!gemm.is_gemm() || scaling.growth == batch_growth::none || other == batch)
    return gemm;
  // Every size that grows with the batch was made from batch × something: they divide by it.
  const auto at_other = [&](std::int64_t value) {
    return detail::checked_product({value / batch, other});
  };
  if (scaling.growth == batch_growth::routed) {
    const std::optional<std::int64_t> tokens = at_other(scaling.tokens);
    if (!tokens)
      return std::nullopt;
    moe_layer moe;
    moe.experts = scaling.experts;
    moe.top_k = scaling.top_k;
    moe.expert_parallel = scaling.expert_parallel;
    moe.sending_ranks = scaling.sending_ranks;
    const context ctx{gemm.layer, gemm.precision, gemm.gemm->weights, gemm.count, gemm.where};
    try {
      return expert_gemm(ctx, gemm.layer, moe, route(ctx, moe, *tokens), gemm.gemm->n, gemm.gemm->k,
                         gemm.gemm->weights);
    } catch (const input_error &) {
      return std::nullopt; // its sizes overflow there
    }
  }
  op result = gemm;
  std::int64_t &grows =
      scaling.growth == batch_growth::rows ? result.gemm->m : result.gemm->batch_count;
  const std::optional<std::int64_t> size = at_other(grows), flops = at_other(gemm.flops),
                                    bytes = detail::checked_sum(
                                        {scaling.fixed_bytes,
                                         at_other(gemm.bytes - scaling.fixed_bytes)});
  if (!size || !flops || !bytes)
    return std::nullopt;
  grows = *size;
  result.flops = *flops;
  result.bytes = *bytes;
  if (result.conv)
    result.conv->batch = other;
  return result;
}

namespace {

void add_routing_notes(const network &net, const std::vector<layer> &layers,
                       const std::string &prefix, std::vector<std::string> &notes) {
  for (const layer &l : layers) {
    const std::string path = layer_path(prefix, l.name);
    if (const auto *block = std::get_if<repeat_block>(&l.body)) {
      add_routing_notes(net, block->layers, path, notes);
    } else if (const auto *moe = std::get_if<moe_layer>(&l.body)) {
      const std::int64_t tokens = net.batch * net.seq_len; // checked by the lowering
      notes.push_back(fmt::format(
          "`{}`: each of the step's {} tokens goes to {} of {} experts; assuming uniform routing "
          "(real routers are not uniform), they reach {:.3g} experts on average, and the "
          "weights of {} (rounded up) are read",
          path, tokens, moe->top_k, moe->experts, expected_experts_reached(*moe, tokens),
          experts_reached(*moe, tokens)));
      if (moe->expert_parallel > 1)
        notes.back() = fmt::format(
            "`{}`: expert parallel over {} GPUs, {} of the {} experts on each; assuming uniform "
            "routing (real routers are not uniform), this GPU reads the weights of {} of its "
            "experts (rounded up): {}",
            path, moe->expert_parallel, moe->experts / moe->expert_parallel, moe->experts,
            experts_reached(*moe, tokens),
            senders_of(*moe) == 1
                ? std::string("one GPU's tokens reach them (every GPU holds the same tokens under "
                              "tensor-parallel attention, or one rank alone has any), each GPU "
                              "running its experts' share of their routes")
            : senders_of(*moe) == moe->expert_parallel
                ? std::string("each GPU's experts serve every GPU's tokens, as many routes as its "
                              "own, the weights read are of those its experts get from all of "
                              "them")
                : fmt::format("{} of the GPUs bring as many tokens as this one (the others none: "
                              "a prefill of fewer prompts than ranks), its experts serving their "
                              "share of those",
                              senders_of(*moe)));
    }
  }
}

} // namespace

std::vector<std::string> routing_notes(const network &net) {
  std::vector<std::string> notes;
  add_routing_notes(net, net.layers, "", notes);
  return notes;
}

bool recomputed(const op &o) {
  const std::string_view layer = o.layer;
  return layer.size() > recomputed_suffix.size() &&
         layer.substr(layer.size() - recomputed_suffix.size()) == recomputed_suffix;
}

} // namespace roofline
