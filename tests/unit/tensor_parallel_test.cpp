// SPDX-License-Identifier: Apache-2.0
// Tensor parallelism: Megatron's split of a config's blocks over N GPUs (shapes by hand), the
// all-reduces between them, and the bus-bandwidth arithmetic of nccl-tests.
#include "roofline/analysis/analysis.hpp"
#include "roofline/analysis/lowering.hpp"
#include "roofline/analysis/memory_fit.hpp"
#include "roofline/analysis/report.hpp"
#include "roofline/common/error.hpp"
#include "roofline/input/model_config.hpp"
#include "roofline/input/network.hpp"
#include "roofline/model/collectives.hpp"
#include "roofline/model/interconnect.hpp"
#include "roofline/model/perf_model.hpp"
#include "roofline/model/spec_catalog.hpp"

#include "test_support.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

using namespace roofline;
using roofline::test::config_path;
using roofline::test::contains;
using roofline::test::op_named;

namespace {

/// The message a config is refused with when split over `gpus`.
std::string error_of(const std::string &json, int gpus) {
  config_options options;
  options.tensor_parallel = gpus;
  return test::config_error(json, options);
}

/// A collective op of `kind` with `bytes` a GPU over `gpus` GPUs `stride` ranks apart.
op collective_op(const std::string &kind, std::int64_t bytes, int gpus, std::int64_t stride) {
  op o;
  o.layer = kind;
  o.kind = kind;
  o.precision = precision::bf16;
  o.elements = bytes / 2;
  o.bytes = bytes;
  o.gpus = gpus;
  o.stride = stride;
  return o;
}

} // namespace

TEST_CASE("Llama-2-7B over 2 GPUs: column-parallel q/k/v, gate and up; row-parallel o and down; "
          "two all-reduces of the hidden state per layer") {
  config_options options;
  options.tensor_parallel = 2;
  options.batch = 4;
  options.seq_len = 512;
  options.glue = glue_style::eager; // q, k, v, gate and up as GEMMs of their own
  const network net = load_model_config(config_path("llama-2-7b.json"), options);
  const std::vector<op> ops = lower(net);
  CHECK(op_named(ops, "decoder_layer/q_proj").gemm->n == 2048); // 32 heads of 128, halved
  CHECK(op_named(ops, "decoder_layer/k_proj").gemm->n == 2048);
  CHECK(op_named(ops, "decoder_layer/o_proj").gemm->k == 2048);
  CHECK(op_named(ops, "decoder_layer/gate_proj").gemm->n == 5504); // 11008 / 2
  CHECK(op_named(ops, "decoder_layer/down_proj").gemm->k == 5504);
  CHECK(op_named(ops, "lm_head").gemm->n == 16000); // the vocabulary, 32000 / 2
  // Rows × hidden in fp16, after o_proj and after down_proj, every layer; once after the
  // embedding.
  for (const char *name : {"decoder_layer/attn_all_reduce", "decoder_layer/mlp_all_reduce"}) {
    const op &all_reduce = op_named(ops, name);
    CHECK(all_reduce.is_all_reduce());
    CHECK(all_reduce.gpus == 2);
    CHECK(all_reduce.count == 32);
    CHECK(all_reduce.bytes == 4LL * 512 * 4096 * 2);
    CHECK(all_reduce.flops == 0);
  }
  CHECK(op_named(ops, "embed_all_reduce").count == 1);
  // The order Megatron runs: o_proj, its all-reduce, the residual add.
  const auto at = [&](const std::string &layer) {
    return std::find_if(ops.begin(), ops.end(), [&](const op &o) { return o.layer == layer; }) -
           ops.begin();
  };
  CHECK(at("decoder_layer/o_proj") + 1 == at("decoder_layer/attn_all_reduce"));
  CHECK(at("decoder_layer/down_proj") + 1 == at("decoder_layer/mlp_all_reduce"));
  // One GPU's weights: half of the 6.74B parameters (embedding table included).
  const memory_use m = memory_of(net, ops, 141e9);
  CHECK(m.weights_bytes == doctest::Approx(6.738e9).epsilon(0.001));
}

TEST_CASE("key/value heads split while they can, then replicate; uneven widths take the largest "
          "share; heads that do not split are refused") {
  config_options options;
  options.tensor_parallel = 16;
  options.glue = glue_style::eager;
  const std::vector<op> ops = lower(load_model_config(config_path("llama-3-8b.json"), options));
  // 32 query heads over 16 GPUs: 2 each; 8 key/value heads: one each, replicated twice.
  CHECK(op_named(ops, "decoder_layer/q_proj").gemm->n == 256);
  CHECK(op_named(ops, "decoder_layer/k_proj").gemm->n == 128);

  const std::string base = "{\"model_type\": \"llama\", \"hidden_size\": 3072, "
                           "\"num_hidden_layers\": 2, \"num_attention_heads\": 24, "
                           "\"intermediate_size\": 11008, \"vocab_size\": 32000";
  config_options three;
  three.tensor_parallel = 3;
  three.glue = glue_style::eager;
  const network net = network_from_config(base + "}", "three.json", three);
  const std::vector<op> split = lower(net);
  // 11008 / 3 = 3669.3: each GPU takes 3670, no longer a multiple of 8 (the padding advice
  // sees it); the note says so.
  CHECK(op_named(split, "decoder_layer/gate_proj").gemm->n == 3670);
  CHECK(std::any_of(net.notes.begin(), net.notes.end(), [](const std::string &note) {
    return contains(note, "the MLP's width 11008 (each GPU takes 3670)");
  }));
  CHECK(contains(error_of(base + "}", 5), "the 24 attention heads do not split over 5 GPUs"));
  CHECK(contains(error_of(base + ", \"num_key_value_heads\": 8}", 12),
                 "the 8 key/value heads neither split over 12 GPUs nor replicate evenly"));
}

TEST_CASE("nccl-tests' arithmetic: algbw, busbw and the ring's bound") {
  // 1 GiB in 3.28 ms over 2 GPUs: algbw = busbw; over 8, busbw = algbw · 2 · 7 / 8.
  const std::int64_t gib = std::int64_t{1} << 30;
  CHECK(algorithm_bandwidth(gib, 3.28e-3) == doctest::Approx(1073741824.0 / 3.28e-3));
  CHECK(bus_bandwidth(gib, 3.28e-3, 2) == doctest::Approx(algorithm_bandwidth(gib, 3.28e-3)));
  CHECK(bus_bandwidth(gib, 3.28e-3, 8) ==
        doctest::Approx(algorithm_bandwidth(gib, 3.28e-3) * 1.75));
  interconnect_spec nvlink4;
  nvlink4.bytes_per_s = 450e9;
  // The bound: the ring moves 2(N − 1)/N of the message over each GPU's links at their full
  // bandwidth, no latency: N = 4, 1.5 × 1 GiB.
  const model_parameters defaults;
  CHECK(modelled_all_reduce_s(gib, 4, nvlink4, at_full_link_speed(defaults)) ==
        doctest::Approx(1.5 * 1073741824.0 / 450e9));
  // The table's defaults: 15 µs plus the ring's traffic at 80% of the links.
  CHECK(modelled_all_reduce_s(gib, 4, nvlink4, defaults) ==
        doctest::Approx(15e-6 + 1.5 * 1073741824.0 / 450e9 / 0.8));
  CHECK(modelled_all_reduce_s(gib, 1, nvlink4, defaults) == 0);
}

TEST_CASE("the modelled all-reduce: a latency and a link efficiency per GPU count, interpolated "
          "between 2, 4 and 8, and the one-shot traffic below its threshold") {
  interconnect_spec links;
  links.bytes_per_s = 100e9;
  model_parameters p;
  for (const auto &[gpus, latency, efficiency] :
       {std::tuple{2, 4e-6, 0.5}, std::tuple{4, 8e-6, 0.25}, std::tuple{8, 16e-6, 0.125}}) {
    p.set(all_reduce_parameter_at(parameter::all_reduce_latency_s, gpus), latency);
    p.set(all_reduce_parameter_at(parameter::all_reduce_link_efficiency, gpus), efficiency);
  }
  // 4 GPUs, 1 MB: 8 µs + 1.5 MB over 25 GB/s = 8 + 60 µs.
  CHECK(modelled_all_reduce_s(1000000, 4, links, p) == doctest::Approx(68e-6));
  // 8 GPUs: 16 µs + 1.75 MB over 12.5 GB/s = 16 + 140 µs.
  CHECK(modelled_all_reduce_s(1000000, 8, links, p) == doctest::Approx(156e-6));
  // 6 GPUs: log2 6 = 2.585, 58.5% of the way from 4 to 8: 8 + 0.585 · 8 µs, and the efficiency
  // 0.25 − 0.585 · 0.125; the ring moves 2 · 5/6 of the message.
  const double t = (std::log2(6.0) - 2) / (3 - 2);
  CHECK(all_reduce_parameter(p, parameter::all_reduce_latency_s, 6) ==
        doctest::Approx(8e-6 + t * 8e-6));
  CHECK(modelled_all_reduce_s(1000000, 6, links, p) ==
        doctest::Approx(8e-6 + t * 8e-6 + 1e6 * 10.0 / 6 / ((0.25 - t * 0.125) * 100e9)));
  // Outside 2..8: the end values.
  CHECK(all_reduce_parameter(p, parameter::all_reduce_latency_s, 16) == doctest::Approx(16e-6));
  // Below the one-shot threshold each GPU reads its 3 peers' whole messages: 3 MB, not 1.5.
  p.set(parameter::all_reduce_oneshot_below_bytes, 2e6);
  CHECK(all_reduce_traffic_bytes(1000000, 4, p) == doctest::Approx(3e6));
  CHECK(modelled_all_reduce_s(1000000, 4, links, p) == doctest::Approx(8e-6 + 120e-6));
  CHECK(all_reduce_traffic_bytes(2000000, 4, p) == doctest::Approx(3e6)); // at it: 1.5 × 2 MB
  // Two GPUs: one-shot and ring both move the message once.
  CHECK(all_reduce_traffic_bytes(1000000, 2, p) == doctest::Approx(1e6));
  CHECK_THROWS_AS(all_reduce_parameter_at(parameter::all_reduce_latency_s, 3), std::out_of_range);
}

TEST_CASE("the measured all-reduce table: interpolated log-log, the latency floor below") {
  all_reduce_table table;
  table.gpus = 2;
  table.samples = {{4096, 20e-6}, {1 << 20, 40e-6}, {1 << 30, 3.2e-3}};
  CHECK(measured_all_reduce_s(1024, 2, table) == doctest::Approx(20e-6)); // the latency floor
  CHECK(measured_all_reduce_s(1 << 20, 2, table) == doctest::Approx(40e-6));
  // Halfway between 4 KiB and 1 MiB in log size: the geometric mean of their times.
  CHECK(measured_all_reduce_s(65536, 2, table) == doctest::Approx(std::sqrt(20e-6 * 40e-6)));
  CHECK(measured_all_reduce_s(std::int64_t{1} << 31, 2, table) == doctest::Approx(6.4e-3));
  CHECK_FALSE(measured_all_reduce_s(1 << 20, 4, table).has_value()); // measured over 2, not 4
}

TEST_CASE("all-reduce tables round-trip; keys given twice and times out of range are refused") {
  const all_reduce_table table{2, "bf16", "NCCL 2.21", "test", {{4096, 20e-6}, {1 << 20, 40e-6}}};
  const all_reduce_table back = parse_all_reduce_table(to_json_text(table), "t.json");
  REQUIRE(back.samples.size() == 2);
  CHECK(back.samples[1].bytes == 1 << 20);
  CHECK(back.samples[1].time_s == 40e-6);
  const auto refused = [](std::string text, const std::string &fragment) {
    CAPTURE(text);
    CHECK_THROWS_WITH_AS((void)parse_all_reduce_table(text, "t.json"),
                         doctest::Contains(fragment.c_str()), input_error);
  };
  std::string twice = to_json_text(table);
  twice.replace(twice.find("\"gpus\""), 0, "\"gpus\": 8, ");
  refused(twice, "duplicate key `gpus`");
  for (const char *time : {"1e-300", "1e300", "0", "-1"}) {
    std::string text = to_json_text(table);
    const std::string first = "\"time_s\": 2e-05";
    REQUIRE(text.find(first) != std::string::npos);
    text.replace(text.find(first), first.size(), std::string("\"time_s\": ") + time);
    refused(text, "times from 1 ns to 1 h");
  }
}

TEST_CASE("an all-reduce's prediction: the links' bound, a measured table when there is one, "
          "and a GPU without links refused") {
  const network net = parse_network("name: t\nprecision: bf16\nbatch: 8\nlayers:\n"
                                    "  - {name: ar, type: all_reduce, gpus: 2, features: 4096}\n",
                                    "t.yaml");
  const std::vector<op> ops = lower(net);
  REQUIRE(ops.size() == 1);
  CHECK(ops[0].bytes == 8 * 4096 * 2);
  const gpu_spec &h200 = *spec_catalog::builtin().find("h200");
  REQUIRE(h200.interconnect.has_value());
  CHECK(h200.interconnect->bytes_per_s == 450e9);
  const prediction modelled = perf_model(h200).predict(ops[0]);
  CHECK(modelled.bound == bound::communication);
  CHECK(modelled.device_time_s ==
        doctest::Approx(modelled_all_reduce_s(65536, 2, *h200.interconnect, h200.parameters)));
  CHECK(modelled.roofline_time_s == doctest::Approx(65536 / 450e9));

  model_options measured;
  measured.all_reduce = all_reduce_table{2, "bf16", "NCCL test", "test", {{65536, 30e-6}}};
  CHECK(perf_model(h200, measured).predict(ops[0]).device_time_s == doctest::Approx(30e-6));

  gpu_spec bare = h200;
  bare.interconnect.reset();
  CHECK_THROWS_WITH_AS(perf_model(bare).predict(ops[0]), doctest::Contains("`interconnect`"),
                       input_error);
  const analysis a = analyze(net, perf_model(h200), "test");
  CHECK(a.totals.communication_share == doctest::Approx(1.0));
  // The notes say where the all-reduces' times come from.
  const auto says = [](const analysis &r, const std::string &text) {
    return std::any_of(r.notes.begin(), r.notes.end(),
                       [&](const std::string &note) { return contains(note, text); });
  };
  CHECK(says(a, "all-reduces: their traffic over the h200-sxm's links, over 2 GPUs nvlink4 at "
                "68% of 450 GB/s a direction plus 12.3 µs"));
  CHECK(says(analyze(net, perf_model(h200, measured), "test"),
             "all-reduces: NCCL test measured on this host over 2 GPUs"));
}

TEST_CASE("a step measured on every GPU: GEMMs and all-reduces summed apart, per GPU, the other "
          "ops at their prediction") {
  const network net = parse_network("name: t\nprecision: bf16\nbatch: 8\nlayers:\n"
                                    "  - repeat: 4\n    layers:\n"
                                    "      - {name: o_proj, type: linear, in: 2048, out: 4096}\n"
                                    "      - {name: ar, type: all_reduce, gpus: 2}\n"
                                    "      - {name: add, type: add}\n",
                                    "t.yaml");
  const analysis a = analyze(net, perf_model(*spec_catalog::builtin().find("h200")), "test");
  REQUIRE(a.ops.size() == 3);
  const auto timed = [](double device_s) {
    measurement m;
    m.time_s = m.device_time_s = device_s;
    return std::optional<measurement>(m);
  };
  measurements measured;
  measured.per_gpu = {{timed(10e-6), timed(20e-6), std::nullopt},
                      {timed(12e-6), timed(20e-6), std::nullopt}};
  measured.ops = measured.per_gpu.front();
  const report r = assemble_report(a, std::nullopt, measured);
  REQUIRE(r.gpu_steps.size() == 2);
  const double add = a.ops[2].prediction.device_time_s * 4; // not measured: predicted
  CHECK(r.gpu_steps[0].gemm_time_s == doctest::Approx(4 * 10e-6));
  CHECK(r.gpu_steps[1].gemm_time_s == doctest::Approx(4 * 12e-6));
  CHECK(r.gpu_steps[0].all_reduce_time_s == doctest::Approx(4 * 20e-6));
  CHECK(r.gpu_steps[0].predicted_all_reduce_time_s ==
        doctest::Approx(4 * a.ops[1].prediction.device_time_s));
  CHECK(r.gpu_steps[1].step_time_s == doctest::Approx(4 * (12e-6 + 20e-6) + add));
  CHECK(r.gpu_steps[1].predicted_step_time_s == doctest::Approx(a.totals.device_time_s));
}

TEST_CASE("an all-reduce over more GPUs than one host holds is refused, not costed as one host's") {
  const spec_catalog &catalog = spec_catalog::builtin();
  const model_config llama = model_config::load(config_path("llama-2-7b.json"));
  config_options options;
  options.tensor_parallel = 8;
  CHECK_NOTHROW((void)analyze(llama.build(options), perf_model(*catalog.find("h100-sxm5")), "t"));
  options.tensor_parallel = 16;
  CHECK_THROWS_WITH_AS(
      (void)analyze(llama.build(options), perf_model(*catalog.find("h100-sxm5")), "test"),
      doctest::Contains("llama-2-7b.json: `embed_all_reduce`: an all-reduce "
                        "over 16 GPUs, and the h100-sxm5's links and host join at most 8"),
      input_error);
  // A network YAML's all_reduce layer alike; a GB200's links join its NVL72 rack.
  const auto all_reduce_over = [](int gpus) {
    return parse_network("name: n\nlayers:\n  - {name: ar, type: all_reduce, gpus: " +
                             std::to_string(gpus) + ", features: 4096}\n",
                         "n.yaml");
  };
  CHECK_THROWS_WITH_AS(
      (void)analyze(all_reduce_over(9), perf_model(*catalog.find("h100-sxm5")), "test"),
      doctest::Contains("n.yaml:3:5: `ar`: an all-reduce over 9 GPUs"), input_error);
  const perf_model gb200(*catalog.find("gb200"));
  CHECK_NOTHROW((void)analyze(all_reduce_over(72), gb200, "test"));
  CHECK_THROWS_WITH_AS((void)analyze(all_reduce_over(73), gb200, "test"),
                       doctest::Contains("links and host join at most 72"), input_error);
}

TEST_CASE("bridged pairs in a host of more cards all-reduce over PCIe beyond the pair") {
  const gpu_spec &nvl = *spec_catalog::builtin().find("h100-nvl");
  REQUIRE(nvl.interconnect);
  CHECK(nvl.interconnect->gpus == 2);
  CHECK(nvl.interconnect->max_gpus() == 8);
  const model_config llama = model_config::load(config_path("llama-2-7b.json"));
  const perf_model model(nvl);
  const auto over = [&](int gpus) {
    config_options options;
    options.tensor_parallel = gpus;
    return analyze(llama.build(options), model, "test");
  };
  const auto all_reduce_time = [](const analysis &a) {
    for (const analysed_op &entry : a.ops)
      if (entry.op.is_all_reduce())
        return entry.prediction.device_time_s;
    return 0.0;
  };
  const auto pcie_note = [](const analysis &a) {
    return std::count_if(a.notes.begin(), a.notes.end(), [](const std::string &note) {
      return note.find("collectives over 4 GPUs run over PCIe (64 GB/s a direction): the "
                       "h100-nvl's nvlink4 links join 2 GPUs at most") != std::string::npos;
    });
  };
  const analysis pair = over(2), four = over(4);
  CHECK(pcie_note(pair) == 0);
  CHECK(pcie_note(four) == 1);
  // A quarter of the bytes each at about 300/64 the time: far slower per byte than the pair's.
  CHECK(all_reduce_time(four) > 2 * all_reduce_time(pair));
  CHECK_THROWS_WITH_AS((void)over(16), doctest::Contains("links and host join at most 8"),
                       input_error);
}

TEST_CASE("an all-to-all over the 8 GPUs of an H100 node is priced by collective_s: one pass of "
          "7/8 of its bytes over NVLink") {
  const gpu_spec &h100 = *spec_catalog::builtin().find("h100-sxm5");
  REQUIRE(h100.interconnect);
  const perf_model model(h100);
  const std::int64_t bytes = std::int64_t{64} << 20; // 64 MiB a GPU
  const auto B = static_cast<double>(bytes);
  const op a2a = collective_op("all_to_all", bytes, 8, 1);
  CHECK(a2a.is_collective());
  CHECK_FALSE(a2a.is_all_reduce());
  const prediction p = model.predict(a2a);
  CHECK(p.bound == bound::communication);
  // No network: the spec's links alone, every GPU on one node (per_node(8, 1, 8) = 8).
  const cluster_links links{*h100.interconnect, model.parameters(), 0, 0};
  CHECK(p.device_time_s == doctest::Approx(collective_s(collective::all_to_all, B, {8, 8}, links)));
  // A cluster's links of nodes of 8 give the same: the group never leaves its node.
  CHECK(p.device_time_s ==
        doctest::Approx(collective_s(
            collective::all_to_all, B, {8, 8},
            links_of(*h100.interconnect, model.parameters(), node_network{40e9, 5e-6}))));
  // By hand: each GPU keeps 1/8 and sends 7/8 of B over its 450 GB/s of NVLink, at the fitted
  // 8-GPU latency and link efficiency times an all-to-all's bandwidth against an all-reduce's;
  // the bound is the same traffic at full speed, no latency.
  const model_parameters &fitted = model.parameters();
  CHECK(p.device_time_s ==
        doctest::Approx(
            all_reduce_parameter(fitted, parameter::all_reduce_latency_s, 8) +
            7.0 / 8 * B /
                (all_reduce_parameter(fitted, parameter::all_reduce_link_efficiency, 8) *
                 all_reduce_parameter(fitted, parameter::all_to_all_bandwidth_ratio, 8) * 450e9)));
  CHECK(p.roofline_time_s == doctest::Approx(7.0 / 8 * B / 450e9));
  CHECK(p.time_s == doctest::Approx(std::max(p.device_time_s, p.host_floor_s)));
}

TEST_CASE("a reduce-scatter over 16 GPUs a node apart needs the cluster's network, and then "
          "crosses it alone") {
  const gpu_spec &h100 = *spec_catalog::builtin().find("h100-sxm5");
  const std::int64_t bytes = std::int64_t{1} << 30; // 1 GiB a GPU
  const auto B = static_cast<double>(bytes);
  const op rs = collective_op("reduce_scatter", bytes, 16, 8);
  CHECK_THROWS_WITH_AS(perf_model(h100).predict(rs),
                       doctest::Contains("reduce_scatter over 16 GPUs 8 ranks apart"), input_error);
  CHECK_THROWS_WITH_AS(perf_model(h100).predict(rs),
                       doctest::Contains("give the cluster whose network joins its hosts"),
                       input_error);
  model_options options;
  options.network = node_network{40e9, 5e-6};
  const perf_model model(h100, options);
  const prediction p = model.predict(rs);
  // Ranks 0, 8, 16, ...: one on each node of 8, so 16 nodes and no NVLink pass. The network's
  // pass alone: log2 16 = 4 latencies of 5 µs, and 15/16 of B through each GPU's 40 GB/s.
  REQUIRE(per_node(16, 8, 8) == 1);
  CHECK(p.device_time_s == doctest::Approx(4 * 5e-6 + 15.0 / 16 * B / 40e9));
  CHECK(p.device_time_s ==
        doctest::Approx(
            collective_s(collective::reduce_scatter, B, {16, 1},
                         links_of(*h100.interconnect, model.parameters(), *options.network))));
  CHECK(p.roofline_time_s == doctest::Approx(15.0 / 16 * B / 40e9)); // no latency
  CHECK(p.bound == bound::communication);
}

TEST_CASE("a served pipeline stage: one batch through every stage takes each stage's blocks once "
          "and the embedding and the LM head once, as the whole model's step does") {
  const model_config llama = model_config::load(config_path("llama-3-8b.json"));
  model_options burst;
  burst.clock = clock_regime::burst;
  const perf_model h200(*spec_catalog::builtin().find("h200-sxm"), burst);
  config_options options;
  options.phase = inference_phase::decode;
  options.batch = 8;
  const analysis whole = analyze(llama.build(options), h200, "test");
  options.pipeline_parallel = 4;
  const analysis stage = analyze(llama.build(options), h200, "test");
  CHECK(pipeline_passes(whole) == 1);
  CHECK(pipeline_passes(stage) > 3);
  CHECK(pipeline_passes(stage) < 4);
  // 4 × 8 blocks and the edges once: the 32 blocks' step (the operands' cache state aside).
  CHECK(pipeline_passes(stage) * stage.totals.time_s ==
        doctest::Approx(whole.totals.time_s).epsilon(0.02));
  // A training stage's micro-batches keep every stage busy: no passes.
  options = {};
  options.mode = run_mode::training;
  options.seq_len = 512;
  options.pipeline_parallel = 4;
  CHECK(pipeline_passes(analyze(llama.build(options), h200, "test")) == 1);
}
