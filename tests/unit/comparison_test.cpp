// SPDX-License-Identifier: Apache-2.0
// compare(): each op's speedup is the ratio of the resource that bounds it, corrected for the
// quantization the model sees on each GPU's SM count. Checked by hand on V100 → A100 (SXM4 80GB),
// two GPUs of architectures without fitted parameters: both use the generic defaults.
#include "roofline/analysis/lowering.hpp"
#include "roofline/compare/comparison.hpp"
#include "roofline/input/model_config.hpp"
#include "roofline/model/spec_catalog.hpp"
#include "roofline/output/writers.hpp"

#include "test_support.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <sstream>

using namespace roofline;

namespace {

/// A model config read once, to be built as `options` say at every degree and batch: what the
/// CLI hands compare_gpus().
roofline::config_source config_source_of(const std::string &config,
                                         const roofline::config_options &options) {
  return {roofline::model_config::load(config), options};
}

const gpu_spec &gpu(const char *name) {
  return *spec_catalog::builtin().find(name);
}

// Two layers: a memory-bound GEMV (batch 1) and a compute-bound square GEMM, fp16.
network two_layers() {
  return parse_network("name: two\nbatch: 1\nlayers:\n"
                       "  - {name: gemv, type: matmul, m: 1, n: 32768, k: 8192}\n"
                       "  - {name: square, type: matmul, m: 8192, n: 8192, k: 8192}\n",
                       "two.yaml");
}

/// `name`'s datasheet with the generic defaults for parameters (Ampere's are fitted): numbers a
/// test can compute by hand.
gpu_spec generic(const char *name) {
  gpu_spec spec = gpu(name);
  spec.parameters = model_parameters{};
  return spec;
}

comparison v100_vs_a100() {
  return compare(two_layers(), {{perf_model(generic("v100")), "v100", std::nullopt},
                                {perf_model(generic("a100")), "a100", std::nullopt}});
}

/// Each GPU as compare() is given it by the CLI: its own parameters, the typical host floor.
compared_gpu plain(const char *name) {
  return {perf_model(gpu(name)), std::string("compare_request::gpus ") + name, std::nullopt};
}

/// A small network of tiny layers: every op is launch-bound, on any GPU.
network tiny_layers() {
  return parse_network("name: tiny\nbatch: 1\nlayers:\n"
                       "  - {name: fc1, type: linear, in: 64, out: 64}\n"
                       "  - {name: act, type: relu}\n"
                       "  - {name: fc2, type: linear, in: 64, out: 64}\n",
                       "tiny.yaml");
}

} // namespace

TEST_CASE("a memory-bound GEMV gains the bandwidth ratio") {
  // 2 · (8192 + 8192·32768 + 32768) bytes = 536,952,832 bytes, far beyond L2 on both GPUs, and
  // the square GEMM between two of its calls moves 403 MB more: its operands come cold, at the
  // generic cold rate (0.8) with no latency. V100 536.95 MB / (0.8 · 900 GB/s) = 745.8 µs; A100
  // / (0.8 · 2039 GB/s) = 329.2 µs. Its 128 skinny tiles' L2 loads (2 waves on V100: 307.6 µs; on
  // A100: 183.3 µs) stay below.
  const comparison c = v100_vs_a100();
  CHECK(c.gpus[0].analysis.model.options().operand_cache == cache_state::cold);
  const double v100 = c.gpus[0].op_times_s[0], a100 = c.gpus[1].op_times_s[0];
  CHECK(v100 == doctest::Approx(536952832.0 / (0.8 * 900e9)).epsilon(1e-9));
  CHECK(a100 == doctest::Approx(536952832.0 / (0.8 * 2039e9)).epsilon(1e-9));
  CHECK(v100 / a100 == doctest::Approx(2039.0 / 900.0).epsilon(1e-9)); // ×2.2656: bandwidth
  CHECK(c.gpus[0].analysis.ops[0].prediction.bound == bound::memory);
  CHECK(c.gpus[1].analysis.ops[0].prediction.bound == bound::memory);
}

TEST_CASE("a compute-bound GEMM gains the peak ratio, corrected for wave quantization") {
  // 8192³ fp16: 2048 tiles of 256×128 (or 128×256). V100: 80 SMs → 25.6 waves, 26 whole; A100: 108
  // SMs → 18.96 waves, 19 whole. A tile takes 2·256·128·8192 / (0.8 · peak / SMs) plus 1.5 µs per
  // wave: V100 429.50 + 1.5 µs, A100 232.31 + 1.5 µs → 26 · 431.00 = 11,206 µs and 19 · 233.81 =
  // 4,442.5 µs, plus the kernel's 1 µs fill and drain.
  const comparison c = v100_vs_a100();
  const double v100 = c.gpus[0].op_times_s[1], a100 = c.gpus[1].op_times_s[1];
  const double tile_flops = 2.0 * 256 * 128 * 8192;
  const double v100_tile = tile_flops / (0.8 * 125e12 / 80) + 1.5e-6;
  const double a100_tile = tile_flops / (0.8 * 312e12 / 108) + 1.5e-6;
  CHECK(v100 == doctest::Approx(26 * v100_tile + 1e-6).epsilon(1e-9));
  CHECK(a100 == doctest::Approx(19 * a100_tile + 1e-6).epsilon(1e-9));
  // The peak ratio 312/125 = 2.496, times the waves' quantization (26/25.6) / (19/18.96), ≈ 2.52.
  const double quantization = (26 / 25.6) / (19 / (2048.0 / 108));
  CHECK(v100 / a100 == doctest::Approx(312.0 / 125.0 * quantization).epsilon(0.01));
  CHECK(c.gpus[1].analysis.ops[1].prediction.bound == bound::compute);
}

TEST_CASE("totals, speedups, prices and the verdict") {
  const comparison c = compare(two_layers(),
                               {{perf_model(gpu("v100")), "v100", std::nullopt},
                                {perf_model(gpu("a100")), "a100", std::nullopt}},
                               {{"v100-sxm2", 1.0}, {"a100-sxm4-80gb", 2.0}});
  const gpu_result &v = c.gpus[0];
  const gpu_result &a = c.gpus[1];
  CHECK(v.step_time_s == doctest::Approx(v.op_times_s[0] + v.op_times_s[1]).scale(0));
  CHECK(a.speedup == doctest::Approx(v.step_time_s / a.step_time_s));
  CHECK(v.speedup == doctest::Approx(1.0));
  CHECK(a.samples_per_s == doctest::Approx(1.0 / a.step_time_s));
  CHECK(*a.usd_per_million_tokens == doctest::Approx(2.0 / 3600 * a.step_time_s * 1e6));
  CHECK(c.verdict.fastest == "a100-sxm4-80gb");
  CHECK(c.verdict.text.find("faster than v100-sxm2") != std::string::npos);
  CHECK(c.verdict.text.find("DRAM bandwidth ×2.27") != std::string::npos);

  std::ostringstream out;
  write_comparison({c}, output_format::json, out);
  const auto doc = nlohmann::json::parse(out.str());
  REQUIRE(doc.at("gpus").size() == 2);
  CHECK(doc["gpus"][0]["device"]["name"] == "v100-sxm2"); // --gpus order
  CHECK(doc["gpus"][1]["totals"]["predicted_time_us"].get<double>() ==
        doctest::Approx(a.step_time_s * 1e6));
  CHECK(doc["gpus"][1]["ops"].size() == 2);
  CHECK(doc["verdict"]["fastest"] == "a100-sxm4-80gb");
}

TEST_CASE("a GPU's times are the same whatever GPUs it is compared with") {
  // Each GPU uses its own parameters (its architecture's), never another's: H100 alone, after a
  // V100 (generic defaults) and after an H200 (the same Hopper parameters) gives the same numbers.
  for (const network &net : {two_layers(), tiny_layers()}) {
    CAPTURE(net.name);
    const comparison alone = compare(net, {plain("h100")});
    const comparison after_v100 = compare(net, {plain("v100"), plain("h100")});
    const comparison after_h200 = compare(net, {plain("h200"), plain("h100")});
    const gpu_result &a = alone.gpus.at(0);
    for (const gpu_result *other : {&after_v100.gpus.at(1), &after_h200.gpus.at(1)}) {
      CHECK(other->analysis.model.spec().name == "h100-sxm5");
      CHECK(other->step_time_s == a.step_time_s);
      CHECK(other->op_times_s == a.op_times_s);
      CHECK(other->memory_bound_share == a.memory_bound_share);
      CHECK(other->launch_bound_share == a.launch_bound_share);
      CHECK(other->analysis.model.parameters() == a.analysis.model.parameters());
    }
    // ... and the same as analysing it alone.
    const analysis single = analyze(net, perf_model(gpu("h100")), "--gpu h100");
    CHECK(a.step_time_s == doctest::Approx(single.totals.time_s).epsilon(1e-12));
  }
}

TEST_CASE("each GPU of a comparison uses its own parameters and all share one host floor") {
  const comparison c = compare(two_layers(), {plain("v100"), plain("h200")});
  const gpu_result &v100 = c.gpus.at(0);
  const gpu_result &h200 = c.gpus.at(1);
  CHECK(v100.analysis.model.parameters() == gpu("v100").parameters);
  CHECK(v100.analysis.model.parameters() ==
        model_parameters{}); // no volta parameters: the defaults
  CHECK(h200.analysis.model.parameters() == gpu("h200").parameters);
  CHECK(h200.analysis.model.parameters().origin == gpu("h200").parameters.origin);
  CHECK(h200.analysis.model.parameters().origin.find("hopper") != std::string::npos);
  CHECK(v100.analysis.model.host().origin == h200.analysis.model.host().origin);
  CHECK(v100.analysis.model.host().gemm_call_s == h200.analysis.model.host().gemm_call_s);
  CHECK(v100.analysis.model.host().kernel_launch_s == h200.analysis.model.host().kernel_launch_s);
}

TEST_CASE("launch-bound ops take the host's time on every GPU and the verdict says so") {
  // Every op of the tiny network is launch-bound on both GPUs: each takes the host's floor, the
  // same on both, so the step takes as long on either.
  const comparison c = compare(tiny_layers(), {plain("v100"), plain("h200")});
  const host_floor typical = typical_host_floor();
  for (const gpu_result &g : c.gpus) {
    CAPTURE(g.analysis.model.spec().name);
    REQUIRE(g.analysis.ops.size() == 3);
    for (std::size_t i = 0; i < g.analysis.ops.size(); ++i) {
      const prediction &p = g.analysis.ops[i].prediction;
      CHECK(p.launch_bound);
      CHECK(g.op_times_s[i] == p.host_floor_s);
    }
    CHECK(g.op_times_s[0] == typical.gemm(precision::fp16, 1));
    CHECK(g.op_times_s[1] == typical.kernel_launch_s);
    CHECK(g.launch_bound_share == doctest::Approx(1.0).epsilon(1e-12));
    CHECK(g.launch_bound_share == doctest::Approx(g.analysis.totals.launch_bound_share));
  }
  CHECK(c.gpus[1].step_time_s == c.gpus[0].step_time_s);
  CHECK(c.gpus[1].speedup == doctest::Approx(1.0).epsilon(1e-12));

  // Beside a compute-bound GEMM, the launch-bound share is named in the verdict.
  const network mixed =
      parse_network("name: mixed\nbatch: 1\nlayers:\n"
                    "  - {name: square, type: matmul, m: 4096, n: 4096, k: 4096}\n"
                    "  - {name: fc, type: linear, in: 64, out: 64}\n"
                    "  - {name: act, type: relu}\n",
                    "mixed.yaml");
  const comparison m = compare(mixed, {plain("v100"), plain("h200")});
  const gpu_result &base = m.gpus.at(0);
  CHECK(m.verdict.fastest == "h200-sxm");
  // fc and act take 6 + 4 µs of the host (typical floor) on either GPU.
  const double launch = base.op_times_s[1] + base.op_times_s[2];
  CHECK(launch == typical.gemm(precision::fp16, 1) + typical.kernel_launch_s);
  CHECK(base.launch_bound_share == doctest::Approx(launch / base.step_time_s).epsilon(1e-12));
  CHECK(m.gpus[1].op_times_s[1] == base.op_times_s[1]);
  CHECK(m.gpus[1].op_times_s[2] == base.op_times_s[2]);
  REQUIRE(base.launch_bound_share > 0.005); // what the verdict names
  CHECK(m.verdict.text.find("launch-bound") != std::string::npos);
}

namespace {

/// A host whose numbers are easy to follow: 5 µs per cuBLAS call (4 µs on the fallback kernels),
/// 2 µs per further kernel launch.
host_floor easy_host() {
  host_floor h;
  h.gemm_call_s.fill(5e-6);
  h.fallback_call_s.fill(4e-6);
  h.kernel_launch_s = 2e-6;
  h.origin = "test host";
  return h;
}

/// Each GPU with its own (Hopper) parameters and the easy host.
perf_model hopper(const char *name) {
  return perf_model(spec_catalog::builtin().resolve(name),
                    model_options{false, false, {}, easy_host()});
}

/// A memory-bound GEMV, a tiny (launch-bound) GEMM and an activation: three ops, one run each.
network measured_layers() {
  return parse_network("name: measured\nbatch: 1\nlayers:\n"
                       "  - {name: gemv, type: matmul, m: 1, n: 32768, k: 8192}\n"
                       "  - {name: tiny, type: matmul, m: 64, n: 64, k: 64}\n"
                       "  - {name: act, type: relu}\n",
                       "measured.yaml");
}

measurement timed(double eager_s, double device_s) {
  measurement m;
  m.engine = "cublas";
  m.time_s = eager_s;
  m.device_time_s = device_s;
  m.samples = 20;
  return m;
}

} // namespace

TEST_CASE("compare(): the measured GPU's times are measured, the others' scaled from them") {
  const network net = measured_layers();
  const perf_model h100 = hopper("h100"), h200 = hopper("h200");
  // What `--measure` on a local H100 would leave: the GEMMs timed (eager and graph-replayed),
  // the activation not run.
  const analysis local = analyze(net, h100, "local");
  REQUIRE(local.ops.size() == 3);
  REQUIRE(local.ops[0].op.gemm);
  REQUIRE(local.ops[1].op.gemm);
  REQUIRE_FALSE(local.ops[2].op.gemm);
  measurements measured;
  measured.ops = {timed(260e-6, 250e-6), // the GEMV: eager 260 µs, on the GPU 250 µs
                  timed(7e-6, 3e-6),     // the tiny GEMM: the host's 7 µs, GPU 3 µs
                  std::nullopt};

  const comparison c =
      compare(net, {{h100, "local", measured}, {h200, "compare_request::gpus h200", std::nullopt}});
  REQUIRE(c.gpus.size() == 2);
  const gpu_result &here = c.gpus[0], &there = c.gpus[1];
  REQUIRE(here.analysis.model.spec().name == "h100-sxm5");
  REQUIRE(there.analysis.model.spec().name == "h200-sxm");
  const prediction &gemv_here = here.analysis.ops[0].prediction;
  const prediction &gemv_there = there.analysis.ops[0].prediction;
  const prediction &tiny_here = here.analysis.ops[1].prediction;
  const prediction &tiny_there = there.analysis.ops[1].prediction;
  // The predictions compare() scales by are each GPU's own, on the easy host.
  CHECK(gemv_here.device_time_s == local.ops[0].prediction.device_time_s);
  CHECK(tiny_there.host_floor_s == easy_host().gemm(precision::fp16, tiny_there.gemm->launches));

  // On the H100 the GEMMs take their eager measured times; the activation stays predicted.
  CHECK(here.op_times_s[0] == 260e-6);
  CHECK(here.op_times_s[1] == 7e-6);
  CHECK(here.op_times_s[2] == here.analysis.ops[2].prediction.time_s);
  CHECK(here.sources == std::vector<time_source>{time_source::measured, time_source::measured,
                                                 time_source::predicted});
  CHECK(here.step_time_s == doctest::Approx(260e-6 + 7e-6 + here.op_times_s[2]).epsilon(1e-12));

  // On the H200: the GEMV's measured device time times what the models say of the two GPUs. The
  // two differ only in DRAM bandwidth, and the GEMV streams 2 · (8192 + 8192 · 32768 + 32768) =
  // 536,952,832 B, far beyond their 50 MB L2, at the same fraction of it on both: its predicted
  // device times stand as 4.8 to 3.35 TB/s, and 250 µs · 3.35 / 4.8 = 174.479167 µs, far above the
  // host's 5 µs.
  CHECK(gemv_there.device_time_s / gemv_here.device_time_s ==
        doctest::Approx(3.35 / 4.8).epsilon(1e-9));
  CHECK(there.op_times_s[0] == doctest::Approx(250e-6 * 3.35 / 4.8).epsilon(1e-9));
  CHECK(
      there.op_times_s[0] ==
      doctest::Approx(250e-6 * gemv_there.device_time_s / gemv_here.device_time_s).epsilon(1e-12));
  // The tiny GEMM's operands sit in L2, and the two GPUs' SMs and L2 are the same: predicted alike,
  // so its 3 µs on the GPU scale to 3 µs, below the 5 µs the host takes to issue its one kernel:
  // max(3 · 1, 5) = 5 µs.
  CHECK(tiny_there.device_time_s == doctest::Approx(tiny_here.device_time_s).epsilon(1e-12));
  REQUIRE(tiny_there.gemm->launches == 1);
  CHECK(tiny_there.host_floor_s == 5e-6);
  CHECK(there.op_times_s[1] == 5e-6);
  CHECK(there.op_times_s[2] == there.analysis.ops[2].prediction.time_s);
  CHECK(there.sources == std::vector<time_source>{time_source::scaled_from_measured,
                                                  time_source::scaled_from_measured,
                                                  time_source::predicted});
  CHECK(there.speedup == doctest::Approx(here.step_time_s / there.step_time_s).epsilon(1e-12));

  // Without a graph-replayed time (device_time_s 0: the engine could not be captured), the eager
  // measurement scales by the eager predictions: the GEMV's, device-bound on both, 260 µs · 3.35 /
  // 4.8 = 181.458333 µs; the tiny GEMM's, both the host's 5 µs, 7 µs · 5 / 5 = 7 µs (the eager
  // time carries the measuring host's 7 µs over, where the graph-replayed path gave 5).
  measurements eager_only = measured;
  eager_only.ops[0]->device_time_s = 0;
  eager_only.ops[1]->device_time_s = 0;
  const comparison e = compare(
      net, {{h100, "local", eager_only}, {h200, "compare_request::gpus h200", std::nullopt}});
  const gpu_result &eager_here = e.gpus[0], &eager_there = e.gpus[1];
  CHECK(eager_here.op_times_s[0] == 260e-6);
  CHECK(eager_here.op_times_s[1] == 7e-6);
  CHECK(eager_there.op_times_s[0] ==
        doctest::Approx(260e-6 * gemv_there.time_s / gemv_here.time_s).epsilon(1e-12));
  CHECK(eager_there.op_times_s[0] == doctest::Approx(260e-6 * 3.35 / 4.8).epsilon(1e-9));
  CHECK(tiny_here.time_s == 5e-6);
  CHECK(tiny_there.time_s == 5e-6);
  CHECK(eager_there.op_times_s[1] == doctest::Approx(7e-6).epsilon(1e-12));
  CHECK(eager_there.sources[0] == time_source::scaled_from_measured);
  CHECK(eager_there.sources[1] == time_source::scaled_from_measured);
}

TEST_CASE("compare --tp: every GPU at every degree, per-GPU throughput and price, and a verdict "
          "that counts the GPUs") {
  roofline::config_options decode;
  decode.phase = roofline::inference_phase::decode;
  decode.batch = 16;
  const std::string config = roofline::test::config_path("llama-2-7b.json");
  compare_request request;
  request.gpus = {"h100", "h200"};
  request.tensor_parallel = {1, 2};
  request.prices = {{"h100", 2.0}};
  request.source = config_source_of(config, decode);
  const std::vector<comparison> result = compare_gpus(request);
  REQUIRE(result.size() == 1);
  const std::vector<gpu_result> &sides = result[0].gpus;
  REQUIRE(sides.size() == 4);
  CHECK(sides[0].name == "h100-sxm5");
  CHECK(sides[1].name == "h100-sxm5 ×2");
  CHECK(sides[2].name == "h200-sxm");
  CHECK(sides[3].name == "h200-sxm ×2");
  CHECK(sides[1].tensor_parallel == 2);
  // Per GPU: half the sharded setup's tokens; its price is both GPUs'.
  CHECK(sides[1].tokens_per_s_per_gpu == doctest::Approx(sides[1].tokens_per_s / 2));
  CHECK(*sides[1].usd_per_hour == doctest::Approx(4.0));
  // Sharded sides run other ops: no per-op speedups against the baseline; the same GPU count does.
  CHECK(sides[1].op_speedups.empty());
  CHECK(sides[2].op_speedups.size() == sides[0].op_times_s.size());
  CHECK(sides[1].analysis.totals.communication_share > 0);
  CHECK(sides[0].analysis.totals.communication_share == 0);
  const std::string &verdict = result[0].verdict.text;
  CAPTURE(verdict);
  CHECK(verdict.find("× the GPUs") != std::string::npos);

  compare_request yaml = request;
  yaml.source = roofline::load_model_config(config, decode);
  CHECK_THROWS_WITH_AS(compare_gpus(yaml), doctest::Contains("only a model config"), input_error);
  compare_request twice = request;
  twice.tensor_parallel = {2, 2};
  CHECK_THROWS_WITH_AS(compare_gpus(twice), doctest::Contains("named twice"), input_error);
}

TEST_CASE("compare --tp over PCIe: the verdict says from which setup collectives are most of the "
          "step") {
  // Llama-2-7B's prefill of 4 × 2048 tokens on L40S cards linked by PCIe Gen4 (32 GB/s a
  // direction): 65 all-reduces of 64 MiB each. At Ada's fitted share of the links over 4 GPUs
  // one GPU is the fastest: the verdict says why all the same.
  roofline::config_options prefill;
  prefill.batch = 4;
  const std::string config = roofline::test::config_path("llama-2-7b.json");
  compare_request request;
  request.gpus = {"l40s"};
  request.tensor_parallel = {1, 4};
  request.source = config_source_of(config, prefill);
  const comparison c = compare_gpus(request).front();
  REQUIRE(c.gpus.size() == 2);
  CHECK(c.gpus[1].analysis.totals.communication_share > 0.5);
  CAPTURE(c.verdict.text);
  CHECK(c.verdict.text.find("From l40s ×4 on, collectives between GPUs are most of the step") !=
        std::string::npos);
}

TEST_CASE("compare builds a config anew at every batch: its last-position LM head is as tall as "
          "the batch") {
  const std::string config = roofline::test::config_path("llama-2-7b.json");
  roofline::config_options last;
  last.last_logits = true;
  compare_request request;
  request.gpus = {"h100"};
  request.batches = {1, 8};
  request.source = config_source_of(config, last);
  const std::vector<comparison> result = compare_gpus(request);
  REQUIRE(result.size() == 2);
  for (const comparison &c : result) {
    const auto &ops = c.gpus.front().analysis.ops;
    const auto head = std::find_if(ops.begin(), ops.end(),
                                   [](const analysed_op &o) { return o.op.layer == "lm_head"; });
    REQUIRE(head != ops.end());
    CHECK(head->op.gemm->m == c.batch);
  }
}

TEST_CASE("compare refuses a GPU named twice in any spelling, and a GPU priced twice") {
  compare_request request;
  request.source =
      parse_network("name: x\nlayers:\n  - {name: fc, type: linear, in: 64, out: 64}\n", "x.yaml");
  for (const std::vector<std::string> &gpus : {std::vector<std::string>{"h100", "h100-sxm5"},
                                               {"h100", "H100"},
                                               {"a100", "H100", "h100"}}) {
    request.gpus = gpus;
    CAPTURE(gpus.back());
    const std::string message = "compare_request::gpus: `" + gpus[gpus.size() - 2] + "` and `" +
                                gpus.back() + "` are the same GPU (h100-sxm5)";
    CHECK_THROWS_WITH_AS(compare_gpus(request), doctest::Contains(message.c_str()), input_error);
  }
  request.gpus = {"h100", "a100"};
  request.prices = {{"h100", 2.0}, {"H100", 3.0}};
  CHECK_THROWS_WITH_AS(
      compare_gpus(request),
      doctest::Contains("compare_request::prices: `H100` and `h100` are the same GPU (h100-sxm5)"),
      input_error);
  request.prices = {{"h100-sxm5", 2.0}};
  CHECK(compare_gpus(request).front().gpus.front().usd_per_hour == 2.0);
}

TEST_CASE("compare keeps the network its baseline ran: its batch, its shard and all-reduces") {
  const std::string config = roofline::test::config_path("llama-3-8b.json");
  compare_request request;
  request.gpus = {"h100", "h200"};
  request.tensor_parallel = {2, 1};
  request.batches = {8};
  request.source = config_source_of(config, {});
  const comparison c = compare_gpus(request).front();
  const network &ran = c.baseline_network;
  CHECK(ran.batch == 8);
  const std::vector<op> ops = lower(ran);
  CHECK(std::count_if(ops.begin(), ops.end(), [](const op &o) { return o.is_all_reduce(); }) == 3);
  REQUIRE(ops.size() == c.gpus.front().analysis.ops.size());
  for (std::size_t i = 0; i < ops.size(); ++i) {
    CHECK(ops[i].layer == c.gpus.front().analysis.ops[i].op.layer);
    CHECK(ops[i].bytes == c.gpus.front().analysis.ops[i].op.bytes);
  }
}

TEST_CASE("an image model is compared in images: images/s and $/M images, no token columns; JSON "
          "tokens null, images_per_s and usd_per_million_images beside samples_per_s") {
  const network resnet = load_network(ROOFLINE_SOURCE_DIR "/examples/resnet50.yaml");
  const comparison c = compare(resnet, {plain("h100"), plain("a100")},
                               {{"h100-sxm5", 2.0}, {"a100-sxm4-80gb", 1.0}});
  CHECK(c.unit == throughput_unit::images);
  const gpu_result &h100 = c.gpus[0];
  CHECK(h100.samples_per_s == doctest::Approx(64 / h100.step_time_s));
  CHECK(roofline::test::contains(c.verdict.text, "Cheapest per image:"));
  CHECK(roofline::test::contains(c.verdict.text, "per million images"));

  std::ostringstream table;
  write_comparison({c}, output_format::table, table);
  const std::string header = table.str().substr(table.str().find("batch  gpu"));
  const std::string columns = header.substr(0, header.find('\n'));
  CAPTURE(columns);
  CHECK(roofline::test::contains(columns, "images/s"));
  CHECK(roofline::test::contains(columns, "$/M images"));
  CHECK_FALSE(roofline::test::contains(columns, "tokens"));
  CHECK_FALSE(roofline::test::contains(table.str(), "seq_len 1"));

  std::ostringstream out;
  write_comparison({c}, output_format::json, out);
  const auto doc = nlohmann::json::parse(out.str());
  CHECK(doc["network"]["throughput_unit"] == "images");
  const nlohmann::json &totals = doc["gpus"][0]["totals"];
  CHECK(totals["images_per_s"].get<double>() == doctest::Approx(h100.samples_per_s));
  CHECK(totals["samples_per_s"].get<double>() == doctest::Approx(h100.samples_per_s));
  CHECK(totals["tokens_per_s"].is_null());
  CHECK(totals["tokens_per_s_per_gpu"].is_null());
  CHECK(totals["usd_per_million_tokens"].is_null());
  CHECK(totals["usd_per_million_images"].get<double>() ==
        doctest::Approx(2.0 / 3600 / h100.samples_per_s * 1e6));
  CHECK(doc["batch_sweep"][0]["gpus"][0]["tokens_per_s"].is_null());
  CHECK(doc["batch_sweep"][0]["gpus"][0]["images_per_s"].get<double>() ==
        doctest::Approx(h100.samples_per_s));

  // A language model keeps its tokens; an MLP with no sequence counts samples.
  CHECK(
      compare(load_network(ROOFLINE_SOURCE_DIR "/examples/llama2-7b-decode.yaml"), {plain("h100")})
          .unit == throughput_unit::tokens);
  CHECK(compare(tiny_layers(), {plain("h100")}).unit == throughput_unit::samples);
}

TEST_CASE("energy: each GPU's joules per token are its step's energy over its tokens, an energy "
          "price adds their cost to the price per token, and the verdict names the least") {
  compare_request request;
  request.gpus = {"h100", "h200"};
  request.source = two_layers();
  request.prices = {{"h100", 2.0}};
  request.energy_usd_per_kwh = 0.15;
  const comparison c = compare_gpus(request).front();
  for (const gpu_result &g : c.gpus) {
    CAPTURE(g.name);
    const double tokens = g.tokens_per_s * g.step_time_s;
    CHECK(g.joules_per_token == doctest::Approx(g.energy_per_step_j / tokens));
    CHECK(g.energy_per_step_j == doctest::Approx(g.analysis.budget.idle_w * g.step_time_s +
                                                 g.analysis.power.work.dynamic_j));
    REQUIRE(g.energy_usd_per_million_tokens);
    // J/token × 10^6 tokens / (3.6 × 10^6 J per kWh) × $0.15.
    CHECK(*g.energy_usd_per_million_tokens == doctest::Approx(g.joules_per_token / 3.6 * 0.15));
  }
  // The H100's hourly price per token, plus its energy's.
  const gpu_result &h100 = c.gpus.front();
  REQUIRE(h100.usd_per_million_tokens);
  CHECK(*h100.usd_per_million_tokens == doctest::Approx(2.0 / 3600 / h100.tokens_per_s * 1e6 +
                                                        *h100.energy_usd_per_million_tokens));
  CHECK_FALSE(c.gpus[1].usd_per_million_tokens); // no hourly price: no price per token
  CHECK_FALSE(c.verdict.least_energy.empty());
  CHECK(c.verdict.text.find("Least energy per sample: " + c.verdict.least_energy) !=
        std::string::npos);
}
