// SPDX-License-Identifier: Apache-2.0
#include "roofline/cluster/training.hpp"

#include "roofline/analysis/lowering.hpp"
#include "roofline/analysis/memory_fit.hpp"
#include "roofline/common/error.hpp"
#include "roofline/model/spec_catalog.hpp"
#include "text_format.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

namespace roofline {

namespace {

/// The repeated block of a config's network (its transformer layers), none without one.
const repeat_block *block_of(const network &net) {
  for (const layer &l : net.layers)
    if (const auto *r = std::get_if<repeat_block>(&l.body))
      return r;
  return nullptr;
}

template <class Layer> const Layer *first_in(const repeat_block &block) {
  for (const layer &l : block.layers)
    if (const auto *found = std::get_if<Layer>(&l.body))
      return found;
  return nullptr;
}

/// `options` as one GPU of no pipeline, data or expert parallelism runs them: the layout's own
/// dimensions are the planner's to price.
config_options single_gpu(config_options options) {
  options.pipeline_parallel = options.expert_parallel = options.data_parallel = 1;
  options.zero_stage.reset();
  return options;
}

} // namespace

std::string describe(const parallel_layout &l) {
  std::string text = fmt::format("TP {} · PP {} · DP {}", l.tp, l.pp, l.dp);
  if (l.cp > 1)
    text += fmt::format(" · CP {}", l.cp);
  if (l.ep > 1)
    text += fmt::format(" · EP {}", l.ep);
  text += fmt::format(" · mb {}", l.micro_batch);
  if (l.virtual_stages > 1)
    text += fmt::format(" · v {}", l.virtual_stages);
  return text + fmt::format(" · ZeRO-{} · recompute {}", l.zero_stage, to_string(l.recompute));
}

/// One micro-batch on one GPU at a TP degree, a context split and a recomputation: what each
/// layer and the rest cost, and the whole model's memory there.
struct training_planner::stage_costs {
  double layer_s = 0; ///< one block forward and backward (its recomputation, TP's all-reduces)
  double layer_backward_s = 0;  ///< its backward part
  double layer_attention_s = 0; ///< its attention kernels, as the whole sequence's share
  double layer_expert_s = 0;    ///< its expert GEMMs
  double edge_s = 0;            ///< the embedding, the final norm, the LM head and the loss
  double optimizer_s = 0;       ///< the optimizer over the GPU's TP share of every weight
  memory_use memory;
  double average_w = 0, idle_w = 0;
};

std::optional<std::string> layout_refusal(const parallel_layout &l, const training_question &q,
                                          const network &model, const cluster_spec &cluster) {
  const repeat_block *block = block_of(model);
  const std::int64_t layers = block ? block->times : 1;
  const moe_layer *moe = block ? first_in<moe_layer>(*block) : nullptr;
  if (l.tp < 1 || l.pp < 1 || l.dp < 1 || l.cp < 1 || l.ep < 1 || l.micro_batch < 1 ||
      l.virtual_stages < 1 || l.zero_stage < 0 || l.zero_stage > 3)
    return std::string("every degree is 1 or more, the ZeRO stage 0 to 3");
  if (l.tp > cluster.gpus_per_node)
    return fmt::format("TP {} spans nodes of {} GPUs: tensor parallelism is modelled inside "
                       "an NVLink domain only",
                       l.tp, cluster.gpus_per_node);
  if (std::int64_t{l.pp} * l.virtual_stages > layers)
    return fmt::format("PP {} × {} virtual stages is more than the {} layers", l.pp,
                       l.virtual_stages, layers);
  if (l.virtual_stages > 1 && l.pp < 2)
    return std::string("virtual stages need a pipeline (PP 2 or more)");
  if (l.virtual_stages > 1 && (q.global_batch / (std::int64_t{l.dp} * l.micro_batch)) % l.pp != 0)
    return fmt::format("interleaved stages need micro-batches a multiple of PP {}, as Megatron's "
                       "schedule does",
                       l.pp);
  if (q.seq_len % l.cp != 0)
    return fmt::format("CP {} does not divide the sequence of {} tokens", l.cp, q.seq_len);
  if (q.global_batch % (std::int64_t{l.dp} * l.micro_batch) != 0)
    return fmt::format("DP {} × micro-batch {} does not divide the global batch of {}", l.dp,
                       l.micro_batch, q.global_batch);
  if (l.ep > 1 && !moe)
    return fmt::format("EP {}: the model has no mixture of experts", l.ep);
  if (moe && moe->experts % l.ep != 0)
    return fmt::format("EP {} does not divide the {} experts", l.ep, moe->experts);
  if ((std::int64_t{l.dp} * l.cp) % l.ep != 0)
    return fmt::format("EP {} does not divide DP × CP = {}: experts are spread over data-"
                       "parallel ranks",
                       l.ep, std::int64_t{l.dp} * l.cp);
  const std::int64_t gpus = q.gpus > 0 ? q.gpus : cluster.gpus();
  if (l.gpus() != gpus)
    return fmt::format("TP × PP × DP × CP = {} GPUs, not the {} asked", l.gpus(), gpus);
  return std::nullopt;
}

training_planner::training_planner(config_source source, cluster_spec cluster, perf_model model,
                                   training_question question)
    : m_source(std::move(source)), m_cluster(std::move(cluster)), m_model(std::move(model)),
      m_question(question) {
  if (m_question.global_batch < 1 || m_question.seq_len < 1)
    throw input_error("training_question::global_batch and training_question::seq_len: a step "
                      "of at least one sequence of one token");
  if (!(m_question.expert_imbalance >= 1 && m_question.expert_imbalance <= 100))
    throw input_error("training_question::expert_imbalance: from 1 (even) to 100");
  if (!m_model.spec().interconnect)
    throw input_error(fmt::format("cluster {}: its GPU {} has no interconnect in its spec",
                                  m_cluster.name, m_model.spec().name));
  m_links = links_of(*m_model.spec().interconnect, m_model.parameters(), network_of(m_cluster));
  config_options options = single_gpu(m_source.options);
  options.mode = run_mode::training;
  options.batch = 1;
  options.seq_len = m_question.seq_len;
  options.recompute = recomputation::none;
  m_network = m_source.config.build(options);
  const repeat_block *block = block_of(m_network);
  if (!block)
    throw input_error({m_source.config.origin()},
                      "a training layout splits a model's repeated blocks: this one has none");
  m_layers = block->times;
  const analysis whole = analyze(m_network, m_model, "cluster " + m_cluster.name);
  for (const analysed_op &o : whole.ops)
    if (o.op.pass != pass::optimizer)
      m_flops_per_sequence += static_cast<double>(o.op.flops) * static_cast<double>(o.op.count);
}

const training_planner::stage_costs &training_planner::costs(int tp, int micro_batch, int cp,
                                                             recomputation recompute) {
  const auto key = std::tuple(tp, micro_batch, cp, recompute);
  if (const auto found = m_costs.find(key); found != m_costs.end())
    return *found->second;
  config_options options = single_gpu(m_source.options);
  options.mode = run_mode::training;
  options.batch = micro_batch;
  options.seq_len = m_question.seq_len / cp;
  options.tensor_parallel = tp;
  options.recompute = recompute;
  options.sequence_parallel = true; // as Megatron runs tensor parallelism in training
  const network net = m_source.config.build(options);
  // A micro-batch's step without the optimizer's (once a step, not once a micro-batch: priced
  // apart, and kept out of the micro-batch's power draw).
  const double capacity = m_model.spec().memory_bytes;
  std::vector<op> ops = lower(net);
  const memory_use memory =
      memory_of(net, ops, capacity, memory_reserve_bytes(capacity, std::nullopt));
  const analysis a = analyze_ops(net.name, std::move(ops), m_model, "cluster " + m_cluster.name);
  auto c = std::make_shared<stage_costs>();
  const auto layers = static_cast<double>(m_layers);
  for (const analysed_op &o : a.ops) {
    double t = o.total_time_s;
    // A rank of a context split attends its queries to every key: cp times its own square.
    if (o.op.is_fused_attention())
      t *= cp;
    if (o.op.count == m_layers) {
      c->layer_s += t / layers;
      // The backward pass: the gradients, and a recomputed forward run within it.
      if (o.op.pass != pass::forward || recomputed(o.op))
        c->layer_backward_s += t / layers;
      if (o.op.is_fused_attention())
        c->layer_attention_s += t / layers;
      if (o.op.is_gemm() && o.op.scaling.growth == batch_growth::routed)
        c->layer_expert_s += t / layers;
    } else {
      c->edge_s += t;
    }
  }
  c->memory = memory;
  c->optimizer_s = m_model.predict(optimizer_step_op(net, memory)).device_time_s;
  c->average_w = a.power.average_w;
  c->idle_w = a.budget.idle_w;
  m_costs.emplace(key, c);
  return *c;
}

namespace {

/// The state one GPU of `l` keeps, from one GPU's whole-model memory `m` at its TP degree (every
/// expert, no data parallelism): its stage's share, the experts among it over EP, sharded by the
/// ZeRO stage over Megatron's data-parallel groups (DP × CP, an expert's DP × CP / EP).
memory_use stage_state(const memory_use &m, const parallel_layout &l) {
  const double experts = m.expert_parameters / l.pp / l.ep;
  const double parameters = (m.parameters - m.expert_parameters) / l.pp + experts;
  const double held = m.parameters > 0 ? parameters / m.parameters : 1.0;
  memory_use stage = m;
  for (double *bytes : {&stage.weights_bytes, &stage.gradient_bytes, &stage.optimizer_bytes})
    *bytes *= held;
  shard_state(stage, parameters, experts, {l.dp * l.cp, l.zero_stage, l.tp, l.ep});
  return stage;
}

/// Memory per GPU of `l` (the first stage: the most micro-batches in flight): `state`, its
/// stage_state, and the activations of one GPU's whole-model memory `m`.
void fill_memory(training_estimate &e, const memory_use &m, const memory_use &state,
                 const parallel_layout &l) {
  e.weights_bytes = state.weights_bytes;
  e.gradient_bytes = state.gradient_bytes;
  e.optimizer_bytes = state.optimizer_bytes;
  // 1F1B: the first stage holds the activations of as many micro-batches as there are stages
  // (interleaving: a little more, (pp − 1)/(pp · v) of them).
  const double in_flight =
      static_cast<double>(std::min<std::int64_t>(e.micro_batches, l.pp)) *
      (1 + (l.virtual_stages > 1 ? (l.pp - 1.0) / (l.pp * l.virtual_stages) : 0.0));
  e.activation_bytes = m.activation_bytes / l.pp * in_flight;
  e.total_bytes = e.weights_bytes + e.gradient_bytes + e.optimizer_bytes + e.activation_bytes;
  e.usable_bytes = m.usable_bytes();
  e.fits = e.total_bytes <= e.usable_bytes;
}

/// What the data-parallel traffic of a step could hide behind: each GPU's `bytes` of gradients
/// reduced over `group` (and its weights gathered back) overlap the last micro-batch's backward
/// pass (ZeRO 0–2) or its micro-batches' compute (ZeRO-3: the weights gathered forward and
/// backward, the gradients scattered, every micro-batch); the last layer's bucket never hides,
/// and of the rest only data_parallel_overlap's share does.
struct hiding {
  double backward_s, forward_s, compute_s, micro_batches, layers_per_stage;
};

/// The data-parallel traffic of `l`'s step not hidden: each kind of `ops` (memory_fit's
/// data_parallel_ops of the layout) summed over the links they all leave through, then hidden
/// once.
double data_parallel_s(const parallel_layout &l, const std::vector<op> &ops, int gpus_per_node,
                       const cluster_links &links, const hiding &h) {
  // Of what the pass could hide (all but the last layer's bucket), only the overlap's share.
  const double overlap = links.parameters[parameter::data_parallel_overlap];
  const auto exposed = [&](double comm, double behind) {
    const double hideable = comm - comm / std::max(1.0, h.layers_per_stage);
    return comm - overlap * std::min(behind, hideable);
  };
  const auto total = [&](collective c) {
    double t = 0;
    for (const op &o : ops)
      if (parse_collective(o.kind) == c)
        t += collective_s(c, static_cast<double>(o.bytes),
                          {o.gpus, per_node(o.gpus, o.stride, gpus_per_node)}, links);
    return t;
  };
  const double reduce = total(collective::reduce_scatter);
  const double gather = total(collective::all_gather); // ZeRO-3: forward and backward
  if (l.zero_stage == 0)
    return exposed(total(collective::all_reduce), h.backward_s);
  if (l.zero_stage <= 2)
    return exposed(reduce, h.backward_s) + exposed(gather, h.forward_s);
  return exposed(h.micro_batches * (gather + reduce), h.compute_s);
}

} // namespace

double training_planner::data_parallel_time(const parallel_layout &l, const stage_costs &c,
                                            const memory_use &state, double compute_s,
                                            double m) const {
  const double layers_per_stage = static_cast<double>(m_layers) / l.pp;
  // Data parallelism: each GPU's gradients reduced (and its weights gathered back) over DP × CP,
  // an expert's over its own group (DP × CP / EP), overlapping the last micro-batch's backward
  // pass (bf16 gradients, as the weights): data_parallel_overlap's share of it hidden.
  const hiding behind{layers_per_stage * c.layer_backward_s,
                      layers_per_stage * (c.layer_s - c.layer_backward_s), compute_s, m,
                      layers_per_stage};
  // The groups in Megatron's order: TP innermost, then CP and DP, the experts carved from them.
  const data_parallelism group{l.dp * l.cp, l.zero_stage, l.tp, l.ep};
  return data_parallel_s(l, data_parallel_ops(group, m_network.precision, state),
                         m_cluster.gpus_per_node, m_links, behind);
}

training_estimate training_planner::estimate(const parallel_layout &l) {
  if (const auto refused = layout_refusal(l, m_question, m_network, m_cluster))
    throw input_error("layout " + describe(l) + ": " + *refused);
  const stage_costs &c = costs(l.tp, l.micro_batch, l.cp, l.recompute);
  const repeat_block &block = *block_of(m_network);
  const attention_layer *attention = first_in<attention_layer>(block);
  const moe_layer *moe = first_in<moe_layer>(block);
  const int G = m_cluster.gpus_per_node;
  training_estimate e;
  e.layout = l;
  e.micro_batches = m_question.global_batch / (std::int64_t{l.dp} * l.micro_batch);
  const double m = static_cast<double>(e.micro_batches);
  const double layers_per_stage = static_cast<double>(m_layers) / l.pp;
  const double tokens =
      static_cast<double>(l.micro_batch) * static_cast<double>(m_question.seq_len) / l.cp;
  const double hidden = attention ? static_cast<double>(attention->heads * attention->head_dim)
                                  : static_cast<double>(moe ? moe->in : 0);
  // Experts: the busiest GPU's share of the routed tokens.
  const double layer_s = c.layer_s + (m_question.expert_imbalance - 1) * c.layer_expert_s;
  // The slowest stage: the last (the LM head beside its layers), or, where the stages cannot
  // hold as many layers each, one of the fullest (the last given fewer, as Llama 3's was).
  const auto fewest = static_cast<double>(m_layers / l.pp);
  const auto most = static_cast<double>((m_layers + l.pp - 1) / l.pp);
  const double stage_s = std::max(most * layer_s, fewest * layer_s + c.edge_s);
  // A context split passes each layer's keys and values around its ring (cp − 1 hops forward,
  // twice that backward; across the network where the ring leaves a node, its slowest hop),
  // hidden behind the layer's attention where it can be.
  double context_s = 0;
  if (l.cp > 1 && attention) {
    const double kv_bytes =
        2 * tokens *
        static_cast<double>(attention->kv_heads ? attention->kv_heads : attention->heads) / l.tp *
        static_cast<double>(attention->head_dim) * element_bytes(m_network.precision);
    const double ring = 3.0 * (l.cp - 1) *
                        collective_s(collective::send, kv_bytes,
                                     {2, per_node(l.cp, l.tp, G) >= l.cp ? 2 : 1}, m_links);
    context_s = layers_per_stage * std::max(0.0, ring - c.layer_attention_s);
  }
  // Experts spread over EP ranks: two all-to-alls forward and two backward per MoE layer.
  double expert_s = 0;
  if (l.ep > 1 && moe) {
    const double bytes = tokens / l.tp * static_cast<double>(moe->top_k) * hidden *
                         element_bytes(m_network.precision) * m_question.expert_imbalance;
    expert_s = layers_per_stage * 4 *
               collective_s(collective::all_to_all, bytes,
                            {l.ep, per_node(l.ep, std::int64_t{l.tp} * l.cp, G)}, m_links);
  }
  // Between stages, each micro-batch's activations forward and their gradients back (sequence
  // parallel: each TP rank its slice), once per model chunk.
  double send_s = 0;
  if (l.pp > 1) {
    const std::int64_t stride = std::int64_t{l.tp} * l.cp * l.dp;
    const double bytes = tokens * hidden / l.tp * element_bytes(m_network.precision);
    send_s = 2.0 * l.virtual_stages *
             collective_s(collective::send, bytes, {2, stride < G ? 2 : 1}, m_links);
  }
  const double micro_batch_s = stage_s + context_s + expert_s + send_s;
  e.compute_s = m * stage_s;
  e.context_exchange_s = m * context_s;
  e.expert_exchange_s = m * expert_s;
  e.pipeline_send_s = m * send_s;
  e.bubble_s = (l.pp - 1.0) / l.virtual_stages * micro_batch_s;
  const memory_use state = stage_state(c.memory, l);
  fill_memory(e, c.memory, state, l);
  e.data_parallel_s = data_parallel_time(l, c, state, e.compute_s, m);
  // The optimizer over the parameters this GPU updates, of those c.optimizer_s steps.
  e.optimizer_s =
      c.memory.parameters > 0 ? c.optimizer_s * state.updated_parameters / c.memory.parameters : 0;
  e.step_s = e.compute_s + e.bubble_s + e.pipeline_send_s + e.context_exchange_s +
             e.expert_exchange_s + e.data_parallel_s + e.optimizer_s;
  const double step_tokens =
      static_cast<double>(m_question.global_batch) * static_cast<double>(m_question.seq_len);
  const auto gpus = static_cast<double>(l.gpus());
  e.tokens_per_s = step_tokens / e.step_s;
  e.model_tflop_per_s_per_gpu =
      m_flops_per_sequence * static_cast<double>(m_question.global_batch) / e.step_s / gpus / 1e12;
  e.mfu = e.model_tflop_per_s_per_gpu * 1e12 / m_model.spec().peak_flop_per_s(m_network.precision);
  const double busy = std::min(1.0, (e.compute_s + e.optimizer_s) / e.step_s);
  e.joules_per_step = gpus * e.step_s * (busy * c.average_w + (1 - busy) * c.idle_w);
  if (m_question.tokens > 0) {
    const double steps = m_question.tokens / step_tokens;
    e.days = steps * e.step_s / 86400;
    e.energy_mwh = steps * e.joules_per_step / 3.6e9;
    const std::optional<double> price =
        m_question.price_per_gpu_hour  ? m_question.price_per_gpu_hour
        : m_cluster.price_per_gpu_hour ? m_cluster.price_per_gpu_hour
                                       : m_model.spec().price_per_hour_usd;
    if (price)
      e.usd = *price * gpus * steps * e.step_s / 3600;
  }
  return e;
}

std::vector<training_estimate> training_planner::search(const parallel_layout &pinned,
                                                        bool pin_recompute, bool pin_zero) {
  const std::int64_t gpus = m_question.gpus > 0 ? m_question.gpus : m_cluster.gpus();
  const moe_layer *moe = first_in<moe_layer>(*block_of(m_network));
  const auto choices = [](int given, std::vector<int> all) {
    return given > 0 ? std::vector<int>{given} : all;
  };
  std::vector<int> pps; // the layers' divisors, and powers of two (the stages uneven)
  for (std::int64_t p = 1; p <= std::min<std::int64_t>(m_layers, 128); ++p)
    if (m_layers % p == 0 || (p & (p - 1)) == 0)
      pps.push_back(static_cast<int>(p));
  std::vector<int> eps{1};
  if (moe)
    for (int e = 2; e <= moe->experts; e *= 2)
      if (moe->experts % e == 0)
        eps.push_back(e);
  std::vector<training_estimate> found;
  for (const int tp : choices(pinned.tp, {1, 2, 4, 8}))
    for (const int cp : choices(pinned.cp, {1, 2, 4, 8, 16}))
      for (const int pp : choices(pinned.pp, pps)) {
        const std::int64_t model_parallel = std::int64_t{tp} * cp * pp;
        if (gpus % model_parallel != 0)
          continue;
        const auto dp = static_cast<int>(gpus / model_parallel);
        if (pinned.dp > 0 && pinned.dp != dp)
          continue;
        for (const int ep : choices(pinned.ep, eps))
          for (const int mb : choices(pinned.micro_batch, {1, 2, 4}))
            for (const int v : choices(pinned.virtual_stages, {1, 2, 4}))
              for (const int zero :
                   pin_zero ? std::vector<int>{pinned.zero_stage} : std::vector<int>{1, 3})
                for (const recomputation r :
                     pin_recompute
                         ? std::vector<recomputation>{pinned.recompute}
                         : std::vector<recomputation>{recomputation::none, recomputation::full}) {
                  parallel_layout l{tp, pp, dp, cp, ep, mb, v, zero, r};
                  if (layout_refusal(l, m_question, m_network, m_cluster))
                    continue;
                  try {
                    found.push_back(estimate(l));
                  } catch (const input_error &) {
                    // the config cannot be split so (heads that TP does not divide): not a layout
                  }
                }
      }
  std::stable_sort(found.begin(), found.end(),
                   [](const training_estimate &a, const training_estimate &b) {
                     return a.fits != b.fits ? a.fits : a.step_s < b.step_s;
                   });
  return found;
}

/// Why no layout of `a`'s GPUs runs: the pinned layout's refusal (its other dimensions 1, DP
/// the rest), or the config's own where it cannot be split so.
input_error no_layout(training_planner &planner, const training_answer &a,
                      const parallel_layout &pinned, bool pin_zero) {
  // Why not: the pinned layout's refusal, its other dimensions 1 and DP the rest.
  parallel_layout l = pinned;
  for (int *d : {&l.tp, &l.pp, &l.cp, &l.ep, &l.micro_batch, &l.virtual_stages})
    *d = std::max(*d, 1);
  if (!pin_zero)
    l.zero_stage = 1;
  if (l.dp < 1)
    l.dp = static_cast<int>(std::max<std::int64_t>(1, a.gpus / (std::int64_t{l.tp} * l.pp * l.cp)));
  std::optional<std::string> why =
      layout_refusal(l, a.question, planner.model_network(), a.cluster);
  if (!why) // a layout the config itself cannot be split at (heads TP does not divide)
    try {
      planner.estimate(l);
    } catch (const input_error &e) {
      why = e.message();
    }
  return input_error(fmt::format(
      "no layout of {} GPUs can run this step{}: TP × PP × DP × CP must make the GPUs, PP be at "
      "most the {} layers, DP × micro-batch divide the global batch of {}",
      a.gpus, why ? " (" + describe(l) + ": " + *why + ")" : std::string(), a.layers,
      a.question.global_batch));
}

training_answer plan_training(training_planner &planner, const parallel_layout &pinned,
                              bool pin_recompute, bool pin_zero) {
  training_answer a;
  a.cluster = planner.cluster();
  a.gpu = planner.model().spec().display_name;
  a.question = planner.question();
  a.gpus = a.question.gpus > 0 ? a.question.gpus : a.cluster.gpus();
  a.layers = planner.layers();
  a.flops_per_sequence = planner.flops_per_sequence();
  a.network_name = std::filesystem::path(planner.config_origin()).stem().string();
  a.ranked = planner.search(pinned, pin_recompute, pin_zero);
  a.searched = static_cast<std::int64_t>(a.ranked.size());
  if (a.ranked.empty())
    throw no_layout(planner, a, pinned, pin_zero);
  const training_estimate &best = a.ranked.front();
  if (!best.fits) {
    a.verdict = fmt::format("No layout of {} {} fits: the least memory-hungry needs more than the "
                            "{:.0f} GB a GPU has. More GPUs, ZeRO-3, recomputation or a smaller "
                            "micro-batch (pin them to see) may make room.",
                            a.gpus, a.gpu, best.usable_bytes / 1e9);
    return a;
  }
  const auto parts = [&](const training_estimate &e) {
    std::vector<std::pair<double, const char *>> p{
        {e.bubble_s, "the pipeline's bubble"},
        {e.pipeline_send_s, "sends between stages"},
        {e.context_exchange_s, "the context ring's exchanges"},
        {e.expert_exchange_s, "the experts' all-to-alls"},
        {e.data_parallel_s, "data-parallel gradient traffic not hidden"},
        {e.optimizer_s, "the optimizer"}};
    std::sort(p.begin(), p.end(), [](const auto &x, const auto &y) { return x.first > y.first; });
    return p;
  };
  const auto biggest = parts(best).front();
  a.verdict = fmt::format(
      "Fastest layout that fits: {}, {:.3g} s a step, {:.3g}M tokens/s, {:.0f} TFLOP/s per GPU "
      "({} MFU); {} of the step is compute, the most of the rest {} ({}).",
      describe(best.layout), best.step_s, best.tokens_per_s / 1e6, best.model_tflop_per_s_per_gpu,
      detail::percent(best.mfu), detail::percent(best.compute_s / best.step_s), biggest.second,
      detail::percent(biggest.first / best.step_s));
  if (a.question.tokens > 0) {
    a.verdict += fmt::format(" {:.3g} tokens take {:.1f} days and {:.3g} MWh", a.question.tokens,
                             best.days, best.energy_mwh);
    a.verdict += best.usd ? fmt::format(", ${:.3g}M.", *best.usd / 1e6) : std::string(".");
  }
  // The runner-up, where it is within 5%: the choice is not sharp.
  const auto close =
      std::find_if(a.ranked.begin() + 1, a.ranked.end(), [&](const training_estimate &e) {
        return e.fits && e.step_s <= best.step_s * 1.05 &&
               describe(e.layout) != describe(best.layout);
      });
  if (close != a.ranked.end())
    a.verdict +=
        fmt::format(" {} is within {} of it: within the model's error, as good.",
                    describe(close->layout), detail::percent(close->step_s / best.step_s - 1));
  a.notes = {
      "per step, on the slowest pipeline stage (it holds the LM head): micro-batches × the stage's "
      "forward and backward (TP's all-reduces inside) + the 1F1B bubble ((PP − 1)/v of a "
      "micro-batch) + sends between stages + context and expert exchanges not hidden + data-"
      "parallel traffic not hidden behind the last micro-batch's backward (data_parallel_overlap: "
      "a collective launched while GEMMs run hides little) + the optimizer",
      "collectives: inside a node the fitted NVLink all-reduce model, across nodes rings at the "
      "cluster's NIC bandwidth × its efficiency, hierarchically (clusters/*.yaml says its figures)",
      "memory: the embedding and LM head counted as spread evenly over the stages (Megatron puts "
      "them on the first and last); state sharded over DP × CP by the ZeRO stage",
      "sends between stages and expert all-to-alls are counted in full, not overlapped "
      "(Megatron overlaps some; DeepSeek's DualPipe hides them)"};
  return a;
}

training_comparison compare_training(std::vector<training_answer> answers) {
  training_comparison c;
  c.answers = std::move(answers);
  if (c.answers.size() == 1) {
    c.verdict = c.answers.front().verdict;
    return c;
  }
  const training_answer *fastest = nullptr, *cheapest = nullptr, *frugal = nullptr;
  std::vector<std::string> unfit;
  for (const training_answer &a : c.answers) {
    const training_estimate &e = a.ranked.front();
    if (!e.fits) {
      unfit.push_back(a.cluster.name);
      continue;
    }
    if (!fastest || e.step_s < fastest->ranked.front().step_s)
      fastest = &a;
    if (e.usd && (!cheapest || *e.usd < *cheapest->ranked.front().usd))
      cheapest = &a;
    if (!frugal || e.joules_per_step < frugal->ranked.front().joules_per_step)
      frugal = &a;
  }
  if (!fastest) {
    c.verdict = "No cluster has a layout that fits.";
    return c;
  }
  const auto best = [](const training_answer &a) -> const training_estimate & {
    return a.ranked.front();
  };
  const bool run = fastest->question.tokens > 0;
  c.verdict =
      fmt::format("Fastest: {} ({} GPUs, {}), {:.3g}M tokens/s{}.", fastest->cluster.name,
                  fastest->gpus, describe(best(*fastest).layout), best(*fastest).tokens_per_s / 1e6,
                  run ? fmt::format(", {:.1f} days", best(*fastest).days) : "");
  if (cheapest)
    c.verdict += fmt::format(" Cheapest: {}, ${:.3g}M for the run.", cheapest->cluster.name,
                             *best(*cheapest).usd / 1e6);
  else if (run)
    c.verdict += " No price is known for every cluster: give training_question::price_per_gpu_hour "
                 "to rank them by cost.";
  c.verdict +=
      fmt::format(" Least energy a step: {}, {:.3g} kJ{}.", frugal->cluster.name,
                  best(*frugal).joules_per_step / 1e3,
                  run ? fmt::format(" ({:.3g} MWh for the run)", best(*frugal).energy_mwh) : "");
  if (!unfit.empty()) {
    std::string names;
    for (const std::string &n : unfit)
      names += (names.empty() ? "" : ", ") + n;
    c.verdict += " No layout fits on " + names + ".";
  }
  return c;
}

} // namespace roofline
