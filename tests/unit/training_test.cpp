// SPDX-License-Identifier: Apache-2.0
// A training step over a cluster, by hand: each collective's cost inside a node, across nodes and
// both; the 1F1B bubble; the memory a layout holds; the search's ranking.
#include "roofline/analysis/analysis.hpp"
#include "roofline/cluster/training.hpp"
#include "roofline/common/error.hpp"
#include "roofline/model/collectives.hpp"
#include "roofline/model/spec_catalog.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

using namespace roofline;

namespace {

/// Links of 400 GB/s inside a node (no latency, every byte at full speed: the fitted
/// parameters set to the ideal) and 40 GB/s a GPU with 5 µs between nodes.
cluster_links ideal_links() {
  cluster_links l;
  l.nvlink.bytes_per_s = 400e9;
  l.nvlink.gpus = l.nvlink.host_gpus = 8;
  for (const int gpus : all_reduce_gpu_counts) {
    l.parameters.set(all_reduce_parameter_at(parameter::all_reduce_latency_s, gpus), 0);
    l.parameters.set(all_reduce_parameter_at(parameter::all_reduce_link_efficiency, gpus), 1);
  }
  l.parameters.set(parameter::all_reduce_oneshot_below_bytes, 0);
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
                             std::int64_t seq) {
  training_question q;
  q.global_batch = batch;
  q.seq_len = seq;
  q.gpus = gpus;
  q.tokens = 1e12;
  model_options options;
  options.clock = clock_regime::burst;
  return training_planner({model_config::load(std::string(ROOFLINE_SOURCE_DIR "/") + config), {}},
                          dgx(64), perf_model(*spec_catalog::builtin().find("h100-sxm5"), options),
                          q);
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
  const auto norm_elements = [](const analysis &a) {
    for (const analysed_op &o : a.ops)
      if (o.op.layer == "decoder_layer/input_norm" && o.op.pass == pass::forward)
        return o.op.elements;
    return std::int64_t{0};
  };
  CHECK(norm_elements(split) * 8 == norm_elements(whole));
  CHECK(split.memory->activation_bytes < whole.memory->activation_bytes);
  CHECK(split.totals.time_s < whole.totals.time_s);
  // Inference has none.
  options.mode = run_mode::inference;
  CHECK_THROWS_AS(config.build(options), input_error);
}
