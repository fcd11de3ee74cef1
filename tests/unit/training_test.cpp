// SPDX-License-Identifier: Apache-2.0
// A training step over a cluster, by hand: each collective's cost inside a node, across nodes and
// both; the 1F1B bubble; the memory a layout holds; the search's ranking.
#include "roofline/analysis/analysis.hpp"
#include "roofline/analysis/lowering.hpp"
#include "roofline/analysis/memory_fit.hpp"
#include "roofline/cluster/training.hpp"
#include "roofline/common/error.hpp"
#include "roofline/model/collectives.hpp"
#include "roofline/model/spec_catalog.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

using namespace roofline;

namespace {

/// Links of 400 GB/s inside a node (no latency, every byte at full speed: the fitted
/// parameters set to the ideal) and 40 GB/s a GPU with 5 µs between nodes.
cluster_links ideal_links() {
  cluster_links l;
  l.nvlink.bytes_per_s = 400e9;
  l.nvlink.gpus = l.nvlink.host_gpus = 8;
  l.parameters = at_full_link_speed(l.parameters);
  l.network_bytes_per_s = 40e9;
  l.network_latency_s = 5e-6;
  return l;
}

cluster_spec dgx(int nodes) {
  cluster_spec c;
  c.name = "test";
  c.gpu = "h100-sxm5";
  c.gpus_per_node = 8;
  c.nodes = nodes;
  c.network_bytes_per_s = 50e9;
  c.network_efficiency = 0.8;
  return c;
}

training_planner planner_for(const char *config, std::int64_t gpus, std::int64_t batch,
                             std::int64_t seq, std::optional<double> overlap = std::nullopt) {
  training_question q;
  q.global_batch = batch;
  q.seq_len = seq;
  q.gpus = gpus;
  q.tokens = 1e12;
  model_options options;
  options.clock = clock_regime::burst;
  gpu_spec h100 = *spec_catalog::builtin().find("h100-sxm5");
  if (overlap)
    h100.parameters.set(parameter::data_parallel_overlap, *overlap);
  return training_planner({model_config::load(std::string(ROOFLINE_SOURCE_DIR "/") + config), {}},
                          dgx(64), perf_model(h100, options), q);
}

/// A training step of `config` (examples/configs/), batch 1 of 512 tokens, on one GPU of
/// `layout`'s data-parallel group, analysed on an H100.
analysis trained(const char *config, const config_options &layout) {
  config_options options = layout;
  options.mode = run_mode::training;
  options.seq_len = 512;
  const model_config model =
      model_config::load(std::string(ROOFLINE_SOURCE_DIR "/examples/configs/") + config);
  return analyze(model.build(options), perf_model(*spec_catalog::builtin().find("h100-sxm5")),
                 "test");
}

/// Llama-2-7B's step over `dp` GPUs at ZeRO `zero`.
analysis llama_over(int dp, std::optional<int> zero) {
  config_options options;
  options.data_parallel = dp;
  options.zero_stage = zero;
  return trained("llama-2-7b.json", options);
}

/// The ops of `a` at layer `layer`, in order.
std::vector<op> ops_at(const analysis &a, const std::string &layer) {
  std::vector<op> found;
  for (const analysed_op &entry : a.ops)
    if (entry.op.layer == layer)
      found.push_back(entry.op);
  return found;
}

/// The optimizer step's bytes.
std::int64_t optimizer_bytes_of(const analysis &a) {
  const std::vector<op> step = ops_at(a, "optimizer");
  REQUIRE(step.size() == 1);
  return step.front().bytes;
}

} // namespace

TEST_CASE("collectives by hand: a ring inside a node, hierarchically across nodes") {
  const cluster_links l = ideal_links();
  const double B = 8e9;
  // Inside a node of 8: a ring all-reduce moves 2 · 7/8 of the buffer over each GPU's links.
  CHECK(collective_s(collective::all_reduce, B, {8, 8}, l) ==
        doctest::Approx(2 * 7.0 / 8 * B / 400e9));
  CHECK(collective_s(collective::reduce_scatter, B, {8, 8}, l) ==
        doctest::Approx(7.0 / 8 * B / 400e9));
  // 16 GPUs on 2 nodes: a reduce-scatter inside (7/8 of B), an all-reduce of the eighth each GPU
  // holds across the 2 nodes (2 · 1/2 of B/8 at 40 GB/s, 2 · log2 2 latencies), an all-gather
  // inside.
  const double inside = 7.0 / 8 * B / 400e9;
  const double across = 2 * 5e-6 + 2 * 0.5 * (B / 8) / 40e9;
  CHECK(collective_s(collective::all_reduce, B, {16, 8}, l) ==
        doctest::Approx(2 * inside + across));
  // One GPU a node (a group spaced a node apart): the network alone, 4 nodes.
  CHECK(collective_s(collective::all_gather, B, {4, 1}, l) ==
        doctest::Approx(2 * 5e-6 + 3.0 / 4 * B / 40e9));
  // An all-to-all of 16 over 2 nodes: half of each GPU's buffer leaves its node (at once with
  // the 7/16 that stays, which is faster).
  CHECK(collective_s(collective::all_to_all, B, {16, 8}, l) ==
        doctest::Approx(5e-6 + B / 2 / 40e9));
  // A send: inside a node at NVLink speed, across at the NIC's.
  CHECK(collective_s(collective::send, B, {2, 2}, l) == doctest::Approx(B / 400e9));
  CHECK(collective_s(collective::send, B, {2, 1}, l) == doctest::Approx(5e-6 + B / 40e9));
  CHECK(collective_s(collective::all_reduce, B, {1, 1}, l) == 0);
  // A kind's bandwidth ratio slows its passes inside a node alone: a reduce-scatter at 0.8 of an
  // all-reduce's bus bandwidth; the hierarchical all-reduce's reduce-scatter too, not its
  // network part nor its all-gather.
  cluster_links slower = l;
  slower.parameters.set(all_reduce_parameter_at(parameter::reduce_scatter_bandwidth_ratio, 8), 0.8);
  CHECK(collective_s(collective::reduce_scatter, B, {8, 8}, slower) ==
        doctest::Approx(7.0 / 8 * B / (0.8 * 400e9)));
  CHECK(collective_s(collective::all_reduce, B, {8, 8}, slower) ==
        doctest::Approx(2 * 7.0 / 8 * B / 400e9));
  CHECK(collective_s(collective::all_reduce, B, {16, 8}, slower) ==
        doctest::Approx(inside / 0.8 + across + inside));
  CHECK(collective_s(collective::send, B, {2, 2}, slower) == doctest::Approx(B / 400e9));
}

TEST_CASE("per_node by hand: the members of a strided group that share a node of 8") {
  CHECK(per_node(8, 1, 8) == 8);  // ranks 0..7: one whole node
  CHECK(per_node(16, 1, 8) == 8); // ranks 0..15: two nodes of 8
  CHECK(per_node(4, 1, 8) == 4);  // ranks 0..3: half a node
  CHECK(per_node(8, 2, 8) == 4);  // ranks 0, 2, 4, 6 | 8, 10, 12, 14: 4 a node
  CHECK(per_node(2, 4, 8) == 2);  // ranks 0 and 4: one node
  CHECK(per_node(4, 4, 8) == 2);  // ranks 0, 4 | 8, 12
  CHECK(per_node(4, 8, 8) == 1);  // ranks 0, 8, 16, 24: a node each
  CHECK(per_node(2, 16, 8) == 1); // ranks 0 and 16
  CHECK(per_node(4, 2, 4) == 2);  // nodes of 4: ranks 0, 2 | 4, 6
}

TEST_CASE("the 1F1B bubble: (PP − 1) micro-batches of the stage, (PP − 1)/v interleaved; the "
          "first stage holds PP micro-batches' activations") {
  training_planner p = planner_for("examples/configs/llama-3-8b.json", 8, 16, 2048);
  parallel_layout l;
  l.pp = 4;
  l.dp = 2;
  l.zero_stage = 1;
  const training_estimate e = p.estimate(l);
  REQUIRE(e.micro_batches == 8); // 16 sequences over DP 2, one a micro-batch
  const double micro_batch_s = (e.compute_s + e.pipeline_send_s) / 8;
  CHECK(e.bubble_s == doctest::Approx(3 * micro_batch_s));
  parallel_layout v = l;
  v.virtual_stages = 2;
  const training_estimate ev = p.estimate(v);
  CHECK(ev.bubble_s == doctest::Approx(1.5 * (ev.compute_s + ev.pipeline_send_s) / 8));
  // Activations: 4 of the 8 micro-batches in flight on the first stage, each a quarter of the
  // model's layers: as much as one micro-batch of the whole model.
  parallel_layout one = l;
  one.pp = 1;
  one.dp = 8;
  const training_estimate whole = p.estimate(one);
  CHECK(e.activation_bytes == doctest::Approx(whole.activation_bytes));
  CHECK(e.weights_bytes == doctest::Approx(whole.weights_bytes / 4));
  // ZeRO-1 shards the optimizer state over DP: 8 ways at PP 1, 2 at PP 4 (of a quarter each).
  CHECK(e.optimizer_bytes == doctest::Approx(whole.optimizer_bytes * 8 / 4 / 2));
  // Steps add up.
  CHECK(e.step_s ==
        doctest::Approx(e.compute_s + e.bubble_s + e.pipeline_send_s + e.context_exchange_s +
                        e.expert_exchange_s + e.data_parallel_s + e.optimizer_s));
  CHECK(e.tokens_per_s == doctest::Approx(16 * 2048 / e.step_s));
}

TEST_CASE("data parallelism's traffic hides behind the pass it overlaps at data_parallel_overlap's "
          "share of what it could hide") {
  parallel_layout l;
  l.dp = 8;
  l.zero_stage = 0;
  const auto exposed = [&](double overlap) {
    training_planner p = planner_for("examples/configs/llama-3-8b.json", 8, 8, 2048, overlap);
    return p.estimate(l).data_parallel_s;
  };
  const double none = exposed(0), all = exposed(1), half = exposed(0.5);
  // None hidden: the whole all-reduce; all: but the last layer's bucket (1/32 of it).
  CHECK(none > 8 * all);
  CHECK(all == doctest::Approx(none / 32));
  // Linear in the share between.
  CHECK(half == doctest::Approx((none + all) / 2));
}

TEST_CASE("recomputation costs a forward pass more and holds less; the search ranks what fits "
          "first, fastest first") {
  training_planner p = planner_for("examples/configs/llama-3-8b.json", 8, 8, 4096);
  parallel_layout l;
  l.dp = 8;
  const training_estimate none = p.estimate(l);
  l.recompute = recomputation::full;
  const training_estimate full = p.estimate(l);
  CHECK(full.compute_s > 1.2 * none.compute_s);
  CHECK(full.activation_bytes < none.activation_bytes / 4);
  parallel_layout searched{0, 0, 0, 0, 0, 0, 0}; // every dimension searched
  const std::vector<training_estimate> ranked = p.search(searched);
  REQUIRE(!ranked.empty());
  for (std::size_t i = 1; i < ranked.size(); ++i) {
    CHECK((ranked[i - 1].fits || !ranked[i].fits));
    if (ranked[i - 1].fits == ranked[i].fits)
      CHECK(ranked[i - 1].step_s <= ranked[i].step_s);
  }
  // Refused: TP across nodes, a dense model's EP, a batch DP does not divide.
  parallel_layout bad;
  bad.tp = 16;
  CHECK_THROWS_AS(p.estimate(bad), input_error);
  bad = {};
  bad.dp = 4;
  bad.ep = 2;
  bad.cp = 2;
  CHECK_THROWS_AS(p.estimate(bad), input_error);
  bad = {};
  bad.dp = 8;
  bad.micro_batch = 2;
  CHECK_THROWS_AS(p.estimate(bad), input_error); // 8 sequences cannot be 8 × 2
}

TEST_CASE("expert parallelism: a MoE's experts spread over EP ranks hold 1/EP of their weights "
          "and pay four all-to-alls a layer") {
  training_planner p = planner_for("examples/configs/mixtral-8x7b.json", 64, 64, 4096);
  parallel_layout l;
  l.tp = 8;
  l.dp = 8;
  l.recompute = recomputation::full;
  const training_estimate dense = p.estimate(l);
  l.ep = 8;
  const training_estimate spread = p.estimate(l);
  CHECK(dense.expert_exchange_s == 0);
  CHECK(spread.expert_exchange_s > 0);
  CHECK(spread.weights_bytes < dense.weights_bytes / 4); // the experts are most of Mixtral
}

TEST_CASE("a training step ends in its optimizer's step: AdamW with fp32 master weights reads and "
          "writes 12 bytes of state a parameter, reads its bf16 gradient and writes its weight") {
  config_options options;
  options.mode = run_mode::training;
  options.seq_len = 512;
  const network net =
      model_config::load(std::string(ROOFLINE_SOURCE_DIR "/examples/configs/llama-3-8b.json"))
          .build(options);
  const analysis a = analyze(net, perf_model(*spec_catalog::builtin().find("h100-sxm5")), "test");
  REQUIRE(a.memory);
  const auto step = std::find_if(a.ops.begin(), a.ops.end(),
                                 [](const analysed_op &o) { return o.op.pass == pass::optimizer; });
  REQUIRE(step != a.ops.end());
  const double parameters = a.memory->weights_bytes / 2;
  CHECK(static_cast<double>(step->op.bytes) == doctest::Approx(28 * parameters).epsilon(1e-6));
}

TEST_CASE("sequence parallelism: under TP the norms and residual adds run on each GPU's share of "
          "the tokens, and keep that much") {
  config_options options;
  options.mode = run_mode::training;
  options.seq_len = 4096;
  options.tensor_parallel = 8;
  const model_config config =
      model_config::load(std::string(ROOFLINE_SOURCE_DIR "/examples/configs/llama-3-8b.json"));
  const perf_model h100(*spec_catalog::builtin().find("h100-sxm5"));
  const analysis whole = analyze(config.build(options), h100, "test");
  options.sequence_parallel = true;
  const analysis split = analyze(config.build(options), h100, "test");
  const auto norm = [](const analysis &a) {
    for (const analysed_op &o : a.ops)
      if (o.op.layer == "decoder_layer/input_norm" && o.op.pass == pass::forward)
        return o.op;
    return op{};
  };
  // 4096 / 8 = 512 rows of the whole 4096 width each (not 4096 rows of 512).
  CHECK(norm(whole).elements == 4096LL * 4096);
  CHECK(norm(split).elements == 512LL * 4096);
  CHECK(norm(split).row == 4096);
  CHECK(split.memory->activation_bytes < whole.memory->activation_bytes);
  CHECK(split.totals.time_s < whole.totals.time_s);
  // Inference has none.
  options.mode = run_mode::inference;
  CHECK_THROWS_AS(config.build(options), input_error);
}

// Llama-2-7B's parameters: 32 × (4 · 4096² + 3 · 4096 · 11008) + 2 · 4096 · 32000 =
// 6,738,149,376; fp16 gradients of 2 bytes, AdamW's 12 bytes of state a parameter.
constexpr double llama_parameters = 6'738'149'376.0;

TEST_CASE("data parallelism over 8 GPUs at ZeRO-0: the gradients all-reduced whole, every GPU "
          "all the state") {
  const analysis one = llama_over(1, std::nullopt), eight = llama_over(8, 0);
  REQUIRE(eight.memory);
  const memory_use &m = *eight.memory;
  CHECK(m.parameters == llama_parameters);
  const std::vector<op> gradients = ops_at(eight, "data_parallel/gradients");
  REQUIRE(gradients.size() == 1);
  CHECK(gradients[0].kind == "all_reduce");
  CHECK(gradients[0].gpus == 8);
  CHECK(gradients[0].stride == 1);
  CHECK(gradients[0].pass == pass::weight_grad);
  CHECK(gradients[0].bytes == 13'476'298'752); // 2 bytes a parameter
  CHECK(static_cast<double>(gradients[0].bytes) == m.parameters * 2);
  CHECK(ops_at(eight, "data_parallel/weights").empty());
  CHECK(ops_at(one, "data_parallel/gradients").empty()); // one GPU: nothing to reduce
  CHECK(m.optimizer_bytes == 12 * llama_parameters);
  CHECK(m.gradient_bytes == 2 * llama_parameters);
  CHECK(m.weights_bytes == 2 * llama_parameters);
  // The optimizer updates every parameter: 12 bytes of state read and written, the gradient
  // read, the fp16 weight written: 28 bytes each.
  CHECK(optimizer_bytes_of(eight) == 188'668'182'528);
  CHECK(optimizer_bytes_of(one) == 188'668'182'528);
}

TEST_CASE("ZeRO stages 1 to 3 over 8 GPUs: a reduce-scatter and all-gathers of the parameters, "
          "an eighth of the state from the optimizer's to the weights") {
  const analysis one = llama_over(1, std::nullopt);
  REQUIRE(one.memory);
  const memory_use &whole = *one.memory;
  CHECK(whole.optimizer_bytes == 80'857'792'512.0); // 12 · 6,738,149,376
  for (const int zero : {1, 2, 3}) {
    CAPTURE(zero);
    const analysis a = llama_over(8, zero);
    REQUIRE(a.memory);
    const memory_use &m = *a.memory;
    const std::vector<op> gradients = ops_at(a, "data_parallel/gradients");
    const std::vector<op> weights = ops_at(a, "data_parallel/weights");
    REQUIRE(gradients.size() == 1);
    CHECK(gradients[0].kind == "reduce_scatter");
    CHECK(gradients[0].bytes == 13'476'298'752);
    for (const op &o : weights) {
      CHECK(o.kind == "all_gather");
      CHECK(o.gpus == 8);
      CHECK(o.bytes == 13'476'298'752);
    }
    // 1 and 2 gather the updated weights after the optimizer; 3 before the forward and again
    // before the backward.
    if (zero < 3) {
      REQUIRE(weights.size() == 1);
      CHECK(weights[0].pass == pass::optimizer);
    } else {
      REQUIRE(weights.size() == 2);
      CHECK(weights[0].pass == pass::forward);
      CHECK(weights[1].pass == pass::data_grad);
    }
    CHECK(m.optimizer_bytes == 10'107'224'064.0); // an eighth
    CHECK(m.gradient_bytes == (zero >= 2 ? 1'684'537'344.0 : 13'476'298'752.0));
    CHECK(m.weights_bytes == (zero >= 3 ? 1'684'537'344.0 : 13'476'298'752.0));
    // The optimizer updates its eighth: 28 · 6,738,149,376 / 8 bytes.
    CHECK(optimizer_bytes_of(a) == 23'583'522'816);
  }
}

TEST_CASE("Mixtral with experts carved from data parallelism: the dense parameters reduced over "
          "4 GPUs, the experts' over the 2 that hold each") {
  config_options layout;
  layout.expert_parallel = 2;
  layout.data_parallel = 4;
  layout.zero_stage = 1;
  const analysis a = trained("mixtral-8x7b.json", layout);
  REQUIRE(a.memory);
  const memory_use &m = *a.memory;
  // 4 of the 8 experts a GPU: 32 × 4 × 3 × 4096 × 14336 expert parameters; the rest per layer
  // q and o 4096², k and v 4096 × 1024, the router 4096 × 8, and the LM head and the
  // embedding 32000 × 4096 each.
  CHECK(m.expert_parameters == 22'548'578'304.0);
  CHECK(m.parameters - m.expert_parameters == 1'605'369'856.0);
  for (const char *layer : {"data_parallel/gradients", "data_parallel/weights"}) {
    const std::vector<op> dense = ops_at(a, layer);
    REQUIRE(dense.size() == 1);
    CHECK(dense[0].gpus == 4);
    CHECK(dense[0].stride == 1);
    CHECK(dense[0].bytes == 3'210'739'712); // 2 bytes a dense parameter
  }
  // Ranks 0 and 2 hold experts 0-3, ranks 1 and 3 experts 4-7: groups of 2, 2 ranks apart.
  for (const char *layer : {"data_parallel/experts/gradients", "data_parallel/experts/weights"}) {
    const std::vector<op> experts = ops_at(a, layer);
    REQUIRE(experts.size() == 1);
    CHECK(experts[0].gpus == 2);
    CHECK(experts[0].stride == 2);
    CHECK(experts[0].bytes == 45'097'156'608);
    CHECK(static_cast<double>(experts[0].bytes) == 2 * m.expert_parameters);
  }
}

TEST_CASE("data parallelism and ZeRO are a training step's: refused in inference") {
  const model_config llama =
      model_config::load(std::string(ROOFLINE_SOURCE_DIR "/examples/configs/llama-2-7b.json"));
  config_options options;
  options.data_parallel = 2;
  CHECK_THROWS_WITH_AS(
      (void)llama.build(options),
      doctest::Contains("config_options::data_parallel applies to a training step"), input_error);
  options.data_parallel = 1;
  options.zero_stage = 1;
  CHECK_THROWS_WITH_AS((void)llama.build(options),
                       doctest::Contains("config_options::zero_stage applies to a training step"),
                       input_error);
}

TEST_CASE("a training pipeline of 4 stages: 8 of the 32 layers, a send of the activations each "
          "way, 4 micro-batches' activations held") {
  config_options options;
  options.mode = run_mode::training;
  options.seq_len = 512;
  options.pipeline_parallel = 4;
  const model_config llama =
      model_config::load(std::string(ROOFLINE_SOURCE_DIR "/examples/configs/llama-2-7b.json"));
  network net = llama.build(options);
  CHECK(net.pipeline_stages == 4);
  const std::vector<op> ops = lower(net);
  CHECK(std::all_of(ops.begin(), ops.end(), [](const op &o) {
    return o.layer.rfind("decoder_layer/", 0) != 0 || o.count == 8; // 32 / 4
  }));
  std::vector<op> sends;
  std::copy_if(ops.begin(), ops.end(), std::back_inserter(sends),
               [](const op &o) { return o.layer == "stage_send"; });
  REQUIRE(sends.size() == 2);
  CHECK(sends[0].pass == pass::forward);
  CHECK(sends[1].pass == pass::data_grad);
  for (const op &send : sends) {
    CHECK(send.kind == "send");
    CHECK(send.bytes == 1LL * 512 * 4096 * 2); // one sequence's 512 × 4096 fp16 activations
  }
  // The embedding, 8 layers and the LM head: 8 × (4 · 4096² + 3 · 4096 · 11008) + 2 · 4096 ·
  // 32000 = 1,881,145,344 parameters of 2 bytes.
  const memory_use staged = memory_of(net, ops, 85e9);
  CHECK(staged.weights_bytes == 3'762'290'688.0);
  // 1F1B's first stage holds 4 micro-batches' activations: 4 × this stage's one.
  net.pipeline_stages = 1;
  const memory_use one = memory_of(net, ops, 85e9);
  CHECK(one.activation_bytes > 0);
  CHECK(staged.activation_bytes == doctest::Approx(4 * one.activation_bytes));
  // Within a node, a send moves the message once over NVLink: the 2-GPU latency plus 4 MiB at
  // the fitted efficiency of 450 GB/s.
  const perf_model h100(*spec_catalog::builtin().find("h100-sxm5"));
  const model_parameters &p = h100.parameters();
  CHECK(
      h100.predict(sends[0]).device_time_s ==
      doctest::Approx(
          all_reduce_parameter(p, parameter::all_reduce_latency_s, 2) +
          4194304.0 / (all_reduce_parameter(p, parameter::all_reduce_link_efficiency, 2) * 450e9)));
}
