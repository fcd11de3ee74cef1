// SPDX-License-Identifier: Apache-2.0
// compare(): each op's speedup is the ratio of the resource that bounds it, corrected for the
// quantization the model sees on each GPU's SM count. Checked by hand on V100 → A100 (SXM4 80GB),
// two GPUs of architectures without fitted parameters: both use the generic defaults.
#include "roofline/comparison.hpp"
#include "roofline/spec_catalog.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <sstream>

using namespace roofline;

namespace {

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

comparison v100_vs_a100() {
  return compare(two_layers(), {{perf_model(gpu("v100")), "v100", std::nullopt},
                                {perf_model(gpu("a100")), "a100", std::nullopt}});
}

/// Each GPU as compare() is given it by the CLI: its own parameters, the typical host floor.
compared_gpu plain(const char *name) {
  return {perf_model(gpu(name)), std::string("--gpus ") + name, std::nullopt};
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
  // 2 · (8192 + 8192·32768 + 32768) bytes = 536,952,832 bytes, far beyond L2 on both GPUs:
  // V100 536.95 MB / (0.9 · 900 GB/s) = 662.9 µs; A100 / (0.9 · 2039 GB/s) = 292.6 µs.
  // Its 128 skinny tiles' L2 loads (2 waves on V100: 307.6 µs; on A100: 183.3 µs) stay below.
  const comparison c = v100_vs_a100();
  const double v100 = c.gpus[0].op_times_s[0], a100 = c.gpus[1].op_times_s[0];
  CHECK(v100 == doctest::Approx(536952832.0 / (0.9 * 900e9)).epsilon(1e-9));
  CHECK(a100 == doctest::Approx(536952832.0 / (0.9 * 2039e9)).epsilon(1e-9));
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
      CHECK(other->analysis.device.name == "h100-sxm5");
      CHECK(other->step_time_s == a.step_time_s);
      CHECK(other->op_times_s == a.op_times_s);
      CHECK(other->memory_bound_share == a.memory_bound_share);
      CHECK(other->launch_bound_share == a.launch_bound_share);
      CHECK(other->analysis.parameters == a.analysis.parameters);
    }
    // ... and the same as analysing it alone.
    const report single = analyze(net, perf_model(gpu("h100")), "--gpu h100");
    CHECK(a.step_time_s == doctest::Approx(single.totals.time_s).epsilon(1e-12));
  }
}

TEST_CASE("each GPU of a comparison uses its own parameters and all share one host floor") {
  const comparison c = compare(two_layers(), {plain("v100"), plain("h200")});
  const gpu_result &v100 = c.gpus.at(0);
  const gpu_result &h200 = c.gpus.at(1);
  CHECK(v100.analysis.parameters == gpu("v100").parameters);
  CHECK(v100.analysis.parameters == model_parameters{}); // no volta parameters: the defaults
  CHECK(h200.analysis.parameters == gpu("h200").parameters);
  CHECK(h200.analysis.parameters_origin == gpu("h200").parameters.origin);
  CHECK(h200.analysis.parameters_origin.find("hopper") != std::string::npos);
  CHECK(v100.analysis.host.origin == h200.analysis.host.origin);
  CHECK(v100.analysis.host.gemm_call_s == h200.analysis.host.gemm_call_s);
  CHECK(v100.analysis.host.kernel_launch_s == h200.analysis.host.kernel_launch_s);
}

TEST_CASE("launch-bound ops take the host's time on every GPU and the verdict says so") {
  // Every op of the tiny network is launch-bound on both GPUs: each takes the host's floor, the
  // same on both, so the step takes as long on either.
  const comparison c = compare(tiny_layers(), {plain("v100"), plain("h200")});
  const host_floor typical = typical_host_floor();
  for (const gpu_result &g : c.gpus) {
    CAPTURE(g.analysis.device.name);
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
