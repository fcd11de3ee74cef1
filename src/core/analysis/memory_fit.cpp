// SPDX-License-Identifier: Apache-2.0
#include "roofline/analysis/memory_fit.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <variant>

namespace roofline {

namespace {

struct layer_memory {
  std::optional<roofline::optimizer> training; ///< the optimizer of a training step
  double weights = 0;
  double parameters = 0, expert_parameters = 0;
  double gradients = 0, optimizer_state = 0; ///< training
  double kv_cache = 0;                       ///< at the network's batch
  /// Each decoder attention layer's cache: its bytes per token (at the network's batch) and its
  /// sliding window (0: none; the cache stops growing there).
  std::vector<std::pair<double, std::int64_t>> kv_caches;
  bool decoding = false; ///< some layer reads a cache longer than its queries

  /// `count` weights of precision `p`, stored `stored_bytes` each (less where quantized), and in
  /// training their gradients and optimizer state.
  void add_weights(double count, double stored_bytes, precision p) {
    weights += count * stored_bytes;
    parameters += count;
    if (!training)
      return;
    const double element = element_bytes(p);
    gradients += count * element;
    optimizer_state += count * optimizer_bytes_per_parameter(*training, element);
  }

  /// The caches' bytes at a context of `tokens`.
  double kv_bytes_at(std::int64_t tokens) const {
    double bytes = 0;
    for (const auto &[per_token, window] : kv_caches)
      bytes += per_token * static_cast<double>(window > 0 ? std::min(tokens, window) : tokens);
    return bytes;
  }
};

/// Weights and KV cache of `layers`, each `times` over.
void add_layers(const network &net, const std::vector<layer> &layers, precision inherited,
                const std::optional<quantized_weights> &inherited_weights, double times,
                layer_memory &sum) {
  for (const layer &l : layers) {
    const precision p = l.precision.value_or(inherited);
    const std::optional<quantized_weights> &weights = l.weights ? l.weights : inherited_weights;
    const double element = element_bytes(p);
    std::visit(
        [&](const auto &body) {
          using body_type = std::decay_t<decltype(body)>;
          // `copies` of a k × n weight matrix.
          const auto matrix = [&](double copies, std::int64_t k, std::int64_t n) {
            sum.add_weights(copies * static_cast<double>(k) * static_cast<double>(n),
                            weight_element_bytes({1, n, k, 1, weights}, p), p);
          };
          if constexpr (std::is_same_v<body_type, repeat_block>) {
            add_layers(net, body.layers, p, weights, times * static_cast<double>(body.times), sum);
          } else if constexpr (std::is_same_v<body_type, linear_layer>) {
            matrix(times, body.in, body.out);
          } else if constexpr (std::is_same_v<body_type, conv2d_layer>) {
            sum.add_weights(times * static_cast<double>(body.in_channels / body.groups) *
                                static_cast<double>(body.out_channels) *
                                static_cast<double>(body.kernel_h) *
                                static_cast<double>(body.kernel_w),
                            element, p);
          } else if constexpr (std::is_same_v<body_type, moe_layer>) {
            // Every expert the GPU holds, reached or not, and the router (not quantized).
            const double experts = times * static_cast<double>(body.experts / body.expert_parallel);
            const double before = sum.parameters;
            matrix(experts * (body.gated ? 2 : 1), body.in, body.intermediate);
            matrix(experts, body.intermediate, body.in);
            sum.expert_parameters += sum.parameters - before;
            sum.add_weights(times * static_cast<double>(body.experts * body.in), element, p);
          } else if constexpr (std::is_same_v<body_type, attention_layer>) {
            // A decoder's keys and values are kept for the tokens that follow: under a causal
            // mask (prefill fills the cache) or beyond the queries (decode reads it). Training
            // keeps them among the forward results instead.
            if (net.mode == run_mode::training || (!body.causal && body.kv_len <= body.seq_len))
              return;
            const double kv_heads = static_cast<double>(body.key_value_heads());
            const double per_token = times * 2 * static_cast<double>(net.batch) * kv_heads *
                                     static_cast<double>(body.head_dim) *
                                     element_bytes(body.kv_storage(p));
            // A sliding window's cache holds the keys a query still meets.
            sum.kv_cache += per_token * static_cast<double>(body.keys_read());
            sum.kv_caches.emplace_back(per_token, body.window);
            sum.decoding = sum.decoding || body.kv_len > body.seq_len;
          }
        },
        l.body);
  }
}

/// What an op holds that is neither a weight nor the cache: a GEMM's B operand is one of them
/// (a layer's weights, attention's keys or values), so its A and C; fused attention's query and
/// output; an unfused op its input and two fp32 intermediates at a time (its kernels' passes are
/// traffic, not all held at once); every other op all it moves.
double activation_bytes_of(const op &o) {
  if (o.is_fused_attention()) // Q in, the output out: its keys and values are the cache
    return 2.0 * static_cast<double>(o.elements) * element_bytes(o.precision);
  if (o.launches > 1)
    return static_cast<double>(o.elements) *
           (element_bytes(o.precision) + 2 * element_bytes(precision::fp32));
  if (!o.is_gemm())
    return static_cast<double>(o.bytes);
  const gemm_shape &s = *o.gemm;
  return static_cast<double>(element_bytes(o.precision)) * static_cast<double>(s.batch_count) *
         static_cast<double>(s.m) * static_cast<double>(s.k + s.n);
}

/// A forward op's result.
double result_bytes_of(const op &o) {
  const double element = element_bytes(o.precision);
  if (o.is_gemm())
    return element * static_cast<double>(o.gemm->m) * static_cast<double>(o.gemm->n) *
           static_cast<double>(o.gemm->batch_count);
  return element * static_cast<double>(o.elements);
}

/// A forward op's result, kept for the backward pass in training. A collective keeps nothing
/// more: an all-reduce sums in place the result of the layer before it, a send's result is the
/// next stage's, and an all-to-all's tokens are the experts' input, which a mixture of experts
/// does not count without one either (the planner's, at no expert parallelism, agrees).
double kept_bytes_of(const op &o) {
  return o.is_collective() ? 0 : result_bytes_of(o);
}

/// What an op reads besides its weights: a GEMM's A operand; every other op an input the size of
/// its result (a norm, an elementwise op, fused attention's queries).
double input_bytes_of(const op &o) {
  if (!o.is_gemm())
    return result_bytes_of(o);
  return element_bytes(o.precision) * static_cast<double>(o.gemm->batch_count) *
         static_cast<double>(o.gemm->m) * static_cast<double>(o.gemm->k);
}

/// The forward results a training step keeps for its backward pass: every forward op's; with
/// full recomputation (activation checkpointing), a top-level repeat block keeps its input once
/// a repeat and the results of the one repeat recomputed at a time, the other layers their
/// results.
double kept_activation_bytes(const network &net, const std::vector<op> &ops) {
  double kept = 0;
  if (net.recompute == recomputation::none) {
    for (const op &o : ops)
      if (o.pass == pass::forward)
        kept += kept_bytes_of(o) * static_cast<double>(o.count);
    return kept;
  }
  // lower() makes every forward op first, in layer order: op_count(l, inference) of each layer
  // (tests/unit/lowering_test.cpp checks it).
  std::size_t next = 0;
  for (const layer &l : net.layers) {
    const std::size_t end =
        std::min(ops.size(), next + static_cast<std::size_t>(op_count(l, run_mode::inference)));
    double results = 0;
    for (std::size_t i = next; i < end; ++i)
      results += kept_bytes_of(ops[i]) * static_cast<double>(ops[i].count);
    const auto *block = std::get_if<repeat_block>(&l.body);
    if (block && end > next) {
      const double times = static_cast<double>(block->times);
      kept += times * input_bytes_of(ops[next]) + results / times;
    } else {
      kept += results;
    }
    next = end;
  }
  return kept;
}

} // namespace

double optimizer_bytes_per_parameter(optimizer o, double weight_bytes) {
  const double fp32 = element_bytes(precision::fp32);
  const double master = weight_bytes < fp32 ? fp32 : 0;
  const double moments = o == optimizer::adamw ? 2 : 1;
  return master + moments * std::max(fp32, weight_bytes);
}

op optimizer_step_op(const network &net, const memory_use &m) {
  const double element = element_bytes(net.precision);
  const bool master = element < element_bytes(precision::fp32);
  const double parameters = m.updated_parameters;
  op o;
  o.layer = "optimizer";
  o.pass = pass::optimizer;
  o.kind = std::string(to_string(memory_op_kind::mul));
  o.precision = net.precision;
  o.elements = static_cast<std::int64_t>(parameters);
  o.flops = static_cast<std::int64_t>(10 * parameters); // Adam's dozen operations a parameter
  o.bytes = static_cast<std::int64_t>(parameters *
                                      (2 * optimizer_bytes_per_parameter(net.optimizer, element) +
                                       element + element * (master ? 1 : 2)));
  o.where = {net.origin};
  return o;
}

std::vector<op> data_parallel_ops(const network &net, const memory_use &m) {
  if (net.mode != run_mode::training)
    return {};
  return data_parallel_ops(net.data_parallel, net.precision, m, {net.origin});
}

std::vector<op> data_parallel_ops(const data_parallelism &d, precision p, const memory_use &m,
                                  const source_location &where) {
  std::vector<op> ops;
  if (d.gpus < 2)
    return ops;
  const double element = element_bytes(p);
  const auto add = [&](const char *layer, collective c, roofline::pass step, int gpus,
                       std::int64_t stride, double parameters) {
    if (gpus < 2 || !(parameters > 0))
      return;
    op o;
    o.layer = layer;
    o.pass = step;
    o.kind = std::string(to_string(c));
    o.precision = p;
    o.elements = static_cast<std::int64_t>(parameters);
    o.bytes = static_cast<std::int64_t>(parameters * element);
    o.gpus = gpus;
    o.stride = stride;
    o.where = where;
    ops.push_back(o);
  };
  const int expert_gpus = d.gpus / std::max(1, d.expert_parallel);
  for (const auto &[name, gpus, stride, parameters] :
       {std::tuple{"data_parallel", d.gpus, d.stride, m.parameters - m.expert_parameters},
        std::tuple{"data_parallel/experts", expert_gpus, d.stride * d.expert_parallel,
                   m.expert_parameters}}) {
    const std::string gradients = std::string(name) + "/gradients";
    const std::string weights = std::string(name) + "/weights";
    if (d.zero_stage == 0) {
      add(gradients.c_str(), collective::all_reduce, pass::weight_grad, gpus, stride, parameters);
      continue;
    }
    if (d.zero_stage == 3)
      for (const roofline::pass gathered : {pass::forward, pass::data_grad})
        add(weights.c_str(), collective::all_gather, gathered, gpus, stride, parameters);
    add(gradients.c_str(), collective::reduce_scatter, pass::weight_grad, gpus, stride, parameters);
    if (d.zero_stage < 3)
      add(weights.c_str(), collective::all_gather, pass::optimizer, gpus, stride, parameters);
  }
  return ops;
}

double memory_reserve_bytes(double capacity_bytes, std::optional<double> reserve_bytes) {
  return reserve_bytes.value_or(default_memory_reserve_share * capacity_bytes);
}

namespace {

/// The most samples of `per_sample` bytes that fit in `room`; none when not one does. At most
/// the largest batch there is: a network whose activations hardly grow with the batch (a fixed
/// matmul at a batch near 2^63) fits more samples than an int64 holds, and the cast of such a
/// double would be undefined.
std::optional<std::int64_t> samples_fitting(double room, double per_sample) {
  if (!(per_sample > 0) || room < per_sample)
    return std::nullopt;
  constexpr double past_largest = 9223372036854775808.0; // 2^63
  const double batches = std::floor(room / per_sample);
  return batches < past_largest ? static_cast<std::int64_t>(batches)
                                : std::numeric_limits<std::int64_t>::max();
}

/// A captured program's memory: its tensors' peak, as the trace walked it; the largest batch
/// that fits where the batch it was captured at is known, its activations (all but parameters,
/// gradients and optimizer state) grown in proportion.
memory_use traced_memory_of(const traced_memory &traced, std::int64_t batch, double capacity_bytes,
                            double reserve_bytes) {
  memory_use m;
  m.traced = true;
  m.weights_bytes = traced.parameter_bytes;
  m.gradient_bytes = traced.gradient_bytes;
  m.optimizer_bytes = traced.optimizer_bytes;
  m.activation_bytes = traced.activation_bytes;
  m.total_bytes = traced.peak_bytes;
  m.capacity_bytes = capacity_bytes;
  m.reserve_bytes = reserve_bytes;
  m.fits = m.total_bytes <= m.usable_bytes();
  const double fixed = m.weights_bytes + m.gradient_bytes + m.optimizer_bytes;
  if (batch > 0)
    m.max_batch =
        samples_fitting(m.usable_bytes() - fixed, m.activation_bytes / static_cast<double>(batch));
  return m;
}

} // namespace

void shard_state(memory_use &m, double parameters, double expert_parameters,
                 const data_parallelism &d) {
  m.parameters = parameters;
  m.expert_parameters = expert_parameters;
  const double dense = parameters - expert_parameters;
  const double expert_gpus = static_cast<double>(d.gpus / std::max(1, d.expert_parallel));
  const double shard =
      parameters > 0 ? (dense / d.gpus + expert_parameters / expert_gpus) / parameters : 1.0;
  const auto sharded = [&](double &bytes, int from_stage) {
    if (d.zero_stage >= from_stage)
      bytes *= shard;
  };
  sharded(m.optimizer_bytes, 1);
  sharded(m.gradient_bytes, 2);
  sharded(m.weights_bytes, 3);
  m.updated_parameters = parameters * (d.zero_stage >= 1 ? shard : 1.0);
}

memory_use memory_of(const network &net, const std::vector<op> &ops, double capacity_bytes,
                     double reserve_bytes) {
  if (net.trace)
    return traced_memory_of(net.trace->memory, net.trace->batch, capacity_bytes, reserve_bytes);
  const bool training = net.mode == run_mode::training;
  layer_memory layers;
  if (training)
    layers.training = net.optimizer;
  add_layers(net, net.layers, net.precision, net.weights, 1, layers);
  // The embeddings no layer runs, in the network's precision.
  const double element = element_bytes(net.precision);
  layers.add_weights(net.resident_weight_bytes / element, element, net.precision);
  memory_use m;
  m.weights_bytes = layers.weights;
  m.gradient_bytes = layers.gradients;
  m.optimizer_bytes = layers.optimizer_state;
  m.kv_cache_bytes = layers.kv_cache;
  if (training) {
    m.optimizer = net.optimizer;
    m.recompute = net.recompute;
    shard_state(m, layers.parameters, layers.expert_parameters, net.data_parallel);
    // 1F1B: the first stage holds as many micro-batches' activations as there are stages.
    m.activation_bytes = kept_activation_bytes(net, ops) * net.pipeline_stages;
  } else {
    for (const op &o : ops)
      if (o.pass == pass::forward)
        m.activation_bytes = std::max(m.activation_bytes, activation_bytes_of(o));
  }
  // Weights, gradients and optimizer state do not grow with the batch; the cache and the
  // activations grow in proportion to it.
  const double fixed = m.weights_bytes + m.gradient_bytes + m.optimizer_bytes;
  m.total_bytes = fixed + m.kv_cache_bytes + m.activation_bytes;
  m.capacity_bytes = capacity_bytes;
  m.reserve_bytes = reserve_bytes;
  const double usable = m.usable_bytes();
  m.fits = m.total_bytes <= usable;
  if (usable <= 0)
    return m;
  const double per_sample =
      (m.kv_cache_bytes + m.activation_bytes) / static_cast<double>(net.batch);
  m.max_batch = samples_fitting(usable - fixed, per_sample);
  // Decoding, a longer cache adds its bytes only (in a prefill the prompt is the cache, and its
  // activations grow with it too). The longest context that fits, by bisection (the caches'
  // bytes grow with it, piecewise linearly); none when even the longest fits (every cache
  // windowed) or not one token does.
  if (layers.decoding && !layers.kv_caches.empty()) {
    const double left = usable - fixed - m.activation_bytes;
    std::int64_t low = 0, high = std::int64_t{1} << 62; // fits, does not fit
    if (layers.kv_bytes_at(high) > left) {
      while (high - low > 1) {
        const std::int64_t middle = low + (high - low) / 2;
        (layers.kv_bytes_at(middle) <= left ? low : high) = middle;
      }
      if (low > 0)
        m.max_kv_len = low;
    }
  }
  return m;
}

} // namespace roofline
