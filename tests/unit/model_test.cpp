// SPDX-License-Identifier: Apache-2.0
// The numbers the product must produce: ridge points of real GPUs, the bound and time of layers
// whose FLOPs and bytes are worked out by hand, and the sums of analyze().
#include "roofline/analysis/lowering.hpp"
#include "roofline/analysis/report.hpp"
#include "roofline/common/error.hpp"
#include "roofline/input/network.hpp"
#include "roofline/model/host_floor.hpp"
#include "roofline/model/memory_op_model.hpp"
#include "roofline/model/op.hpp"
#include "roofline/model/perf_model.hpp"
#include "roofline/model/spec_catalog.hpp"

#include "test_support.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

using namespace roofline;
using namespace roofline::test;

namespace {

gpu_spec builtin_gpu(const std::string &name) {
  const gpu_spec *spec = spec_catalog::builtin().find(name);
  REQUIRE_MESSAGE(spec != nullptr, "no built-in GPU " << name);
  return *spec;
}

std::vector<op> lower_yaml(const std::string &yaml) {
  return lower(parse_network(yaml, "model.yaml"));
}

/// A linear layer 1024 → 4096 in fp16 at the given batch.
std::string linear_net(int batch) {
  return "name: t\nbatch: " + std::to_string(batch) +
         "\nlayers:\n  - {name: fc, type: linear, in: 1024, out: 4096}\n";
}

} // namespace

TEST_CASE("V100 (alias v100) fp16 tensor ridge is 125 TFLOP/s / 900 GB/s = 138.9 FLOP/B") {
  const gpu_spec v100 = builtin_gpu("v100");
  CHECK(v100.name == "v100-sxm2");
  CHECK(v100.peak_flop_per_s(precision::fp16) == doctest::Approx(125e12).epsilon(1e-12));
  CHECK(v100.dram_bytes_per_s == doctest::Approx(900e9).epsilon(1e-12));
  // 125e12 / 900e9 = 138.888...
  CHECK(v100.ridge_intensity(precision::fp16) == doctest::Approx(138.8889).epsilon(1e-5));
  // The fp32 (CUDA core) ridge: 15.7e12 / 900e9 = 17.444...
  CHECK(v100.ridge_intensity(precision::fp32) == doctest::Approx(17.4444).epsilon(1e-5));
  // Volta has no 2:4 sparsity: asking for it gives the dense figure.
  CHECK(v100.ridge_intensity(precision::fp16, true) == doctest::Approx(138.8889).epsilon(1e-5));
}

TEST_CASE("linear 1024→4096 fp16 at batch 512 is compute-bound on V100 (AI 315.08 > 138.9)") {
  const std::vector<op> ops = lower_yaml(linear_net(512));
  REQUIRE(ops.size() == 1);
  const op &fc = ops[0];
  // M = 512, N = 4096, K = 1024
  // FLOPs = 2 · 512 · 4096 · 1024 = 4,294,967,296
  // bytes = 2 · (512·1024 + 1024·4096 + 512·4096) = 2 · 6,815,744 = 13,631,488
  CHECK(fc.flops == 4'294'967'296);
  CHECK(fc.bytes == 13'631'488);
  CHECK(fc.arithmetic_intensity() == doctest::Approx(315.0769).epsilon(1e-6));

  const prediction p = perf_model(builtin_gpu("v100")).predict(fc);
  CHECK(p.bound == bound::compute);
  CHECK(p.peak_flop_per_s == doctest::Approx(125e12).epsilon(1e-12));
  CHECK_FALSE(p.sparse_peak);
  CHECK(p.ridge_intensity == doctest::Approx(138.8889).epsilon(1e-5));
  // time = max(4,294,967,296 / 125e12, 13,631,488 / 900e9) = max(34.36 µs, 15.15 µs) = 34.36 µs
  CHECK(p.roofline_time_s == doctest::Approx(3.4359738368e-5).epsilon(1e-9));
  // attainable = min(125e12, 315.08 · 900e9 = 283.6e12) = 125e12
  CHECK(p.attainable_flop_per_s == doctest::Approx(125e12).epsilon(1e-12));
  CHECK_FALSE(p.factors.empty());
}

TEST_CASE("the same linear at batch 1 is memory-bound on V100 (AI 0.999 < 138.9)") {
  const std::vector<op> ops = lower_yaml(linear_net(1));
  REQUIRE(ops.size() == 1);
  const op &fc = ops[0];
  // FLOPs = 2 · 1 · 4096 · 1024 = 8,388,608
  // bytes = 2 · (1·1024 + 1024·4096 + 1·4096) = 2 · 4,199,424 = 8,398,848
  CHECK(fc.flops == 8'388'608);
  CHECK(fc.bytes == 8'398'848);
  CHECK(fc.arithmetic_intensity() == doctest::Approx(0.998781).epsilon(1e-6));

  const prediction p = perf_model(builtin_gpu("v100")).predict(fc);
  CHECK(p.bound == bound::memory);
  // time = max(8,388,608 / 125e12 = 67 ns, 8,398,848 / 900e9 = 9.332 µs) = 9.332 µs
  CHECK(p.roofline_time_s == doctest::Approx(9.332053333e-6).epsilon(1e-9));
  // attainable = min(125e12, 0.998781 · 900e9) = 898.9 GFLOP/s
  CHECK(p.attainable_flop_per_s == doctest::Approx(8.98902706657e11).epsilon(1e-9));
}

TEST_CASE(
    "quantized weights with the largest group are predicted like any other (no hash overflow)") {
  // Issue 27: the memo's hash multiplied the bits into the group size in signed arithmetic, which
  // overflowed for a group of 2^63 - 1 (the UBSan run of scripts/test.sh stops on it).
  const std::vector<op> ops = lower_yaml(
      "name: q\nlayers:\n  - {name: fc, type: linear, in: 4096, out: 4096, weights: int4, "
      "weight_group: 9223372036854775807}\n");
  REQUIRE(ops.size() == 1);
  const perf_model model(builtin_gpu("h100"));
  const prediction first = model.predict(ops[0]);
  CHECK(first.device_time_s > 0);
  CHECK(model.predict(ops[0]).device_time_s == first.device_time_s); // the memo's answer
}

TEST_CASE("ReLU in fp16 has arithmetic intensity 0.25 and is held against the fp32 peak") {
  // 1 FLOP per element; reads 2 bytes and writes 2 bytes per element.
  const std::vector<op> ops =
      lower_yaml("name: t\nlayers:\n  - {name: r, type: relu, features: 1000}\n");
  REQUIRE(ops.size() == 1);
  CHECK(ops[0].flops == 1000);
  CHECK(ops[0].bytes == 4000);
  CHECK(ops[0].arithmetic_intensity() == 0.25);

  const prediction p = perf_model(builtin_gpu("v100")).predict(ops[0]);
  CHECK(p.peak_flop_per_s ==
        doctest::Approx(15.7e12).epsilon(1e-12)); // CUDA cores, not tensor cores
  CHECK(p.ridge_intensity == doctest::Approx(17.4444).epsilon(1e-5));
  CHECK(p.bound == bound::memory);
  CHECK(p.roofline_time_s == doctest::Approx(4000 / 900e9).epsilon(1e-12)); // 4.444 ns
  CHECK(p.attainable_flop_per_s == doctest::Approx(0.25 * 900e9).epsilon(1e-12));
}

TEST_CASE(
    "A100 SXM4 40GB fp16 ridge: dense 312e12/1555e9 = 200.6, 2:4 sparse 624e12/1555e9 = 401.3") {
  const gpu_spec a100 = builtin_gpu("a100-sxm4-40gb");
  CHECK(a100.ridge_intensity(precision::fp16) == doctest::Approx(200.6431).epsilon(1e-5));
  CHECK(a100.ridge_intensity(precision::fp16, true) == doctest::Approx(401.2862).epsilon(1e-5));

  const op gemm = make_gemm_op("g", {4096, 4096, 4096}, precision::fp16);
  const prediction dense = perf_model(a100).predict(gemm);
  CHECK_FALSE(dense.sparse_peak);
  CHECK(dense.peak_flop_per_s == doctest::Approx(312e12).epsilon(1e-12));
  CHECK(dense.ridge_intensity == doctest::Approx(200.6431).epsilon(1e-5));

  const prediction sparse = perf_model(a100, model_options{true}).predict(gemm);
  CHECK(sparse.sparse_peak);
  CHECK(sparse.peak_flop_per_s == doctest::Approx(624e12).epsilon(1e-12));
  CHECK(sparse.ridge_intensity == doctest::Approx(401.2862).epsilon(1e-5));
  // 4096³ fp16: FLOPs 2·2^36 = 137,438,953,472; at 624 TFLOP/s that is 220.25 µs (compute-bound).
  CHECK(sparse.bound == bound::compute);
  CHECK(sparse.roofline_time_s == doctest::Approx(137438953472.0 / 624e12).epsilon(1e-9));
}

TEST_CASE("the classic A100 ridge of 416 is the sparse fp16 peak over a rounded 1.5 TB/s") {
  gpu_spec a100 = builtin_gpu("a100-sxm4-40gb");
  a100.dram_bytes_per_s = 1.5e12;
  CHECK(a100.ridge_intensity(precision::fp16, true) ==
        doctest::Approx(416.0).epsilon(1e-12)); // 624e12 / 1.5e12
  CHECK(a100.ridge_intensity(precision::fp16) ==
        doctest::Approx(208.0).epsilon(1e-12)); // 312e12 / 1.5e12
}

TEST_CASE("sparse options do not mark memory-bound ops, whose fp32 peak has no sparse figure") {
  const gpu_spec a100 = builtin_gpu("a100-sxm4-40gb");
  const std::vector<op> ops =
      lower_yaml("name: t\nlayers:\n  - {name: r, type: relu, features: 1000}\n");
  const prediction p = perf_model(a100, model_options{true}).predict(ops.at(0));
  CHECK_FALSE(p.sparse_peak);
  CHECK(p.peak_flop_per_s == doctest::Approx(19.5e12).epsilon(1e-12));
  // A GPU without 2:4 sparsity at all (Volta) never reports a sparse peak either.
  const op gemm = make_gemm_op("g", {4096, 4096, 4096}, precision::fp16);
  CHECK_FALSE(perf_model(builtin_gpu("v100"), model_options{true}).predict(gemm).sparse_peak);
}

TEST_CASE(
    "--sparse moves the roof, not the predicted time: device and predicted times stay dense") {
  const gpu_spec a100 = builtin_gpu("a100-sxm4-40gb");
  const op gemm = make_gemm_op("g", {4096, 4096, 4096}, precision::fp16);
  const prediction dense = perf_model(a100).predict(gemm);
  const prediction sparse = perf_model(a100, model_options{true}).predict(gemm);
  CHECK(sparse.roofline_time_s == doctest::Approx(dense.roofline_time_s / 2).epsilon(1e-9));
  CHECK(sparse.device_time_s == dense.device_time_s);
  CHECK(sparse.time_s == dense.time_s);
  REQUIRE(sparse.gemm);
  CHECK(sparse.gemm->tile_m == dense.gemm->tile_m);
  CHECK(sparse.gemm->tile_n == dense.gemm->tile_n);
  // Without the GEMM model the prediction is the roofline bound, held against the dense peak:
  // 2·4096³ / 312e12 = 440.5 µs, while the sparse roof's bound is half that.
  const prediction bound_only = perf_model(a100, model_options{true, true}).predict(gemm);
  CHECK(bound_only.roofline_time_s == doctest::Approx(137438953472.0 / 624e12).epsilon(1e-9));
  CHECK(bound_only.time_s == doctest::Approx(137438953472.0 / 312e12).epsilon(1e-9));
  CHECK(bound_only.device_time_s == bound_only.time_s);
}

TEST_CASE(
    "model_notes: --sparse says it only moves the roof, or that it has no effect on the GPU") {
  const std::vector<op> fp16_gemm{make_gemm_op("g", {4096, 4096, 4096}, precision::fp16)};
  const gpu_spec a100 = builtin_gpu("a100-sxm4-40gb");
  CHECK(model_notes(perf_model(a100), fp16_gemm).empty());

  const std::vector<std::string> placed = model_notes(perf_model(a100, {true}), fp16_gemm);
  REQUIRE(placed.size() == 1);
  CHECK(contains(placed[0], "fp16 GEMMs"));
  CHECK(contains(placed[0], "roofline placement only"));
  CHECK(contains(placed[0], "predicted times are a dense kernel's"));

  // A V100 has no 2:4 sparsity: --sparse changes nothing there, and says so.
  const std::vector<std::string> volta =
      model_notes(perf_model(builtin_gpu("v100"), {true}), fp16_gemm);
  REQUIRE(volta.size() == 1);
  CHECK(contains(volta[0], "no effect on this GPU"));
  CHECK(contains(volta[0], "V100"));
  CHECK(contains(volta[0], "no 2:4-sparse fp16 peak"));

  // fp32 GEMMs run on the CUDA cores, which have no sparse peak on an A100 either.
  const std::vector<op> mixed{fp16_gemm[0], make_gemm_op("h", {64, 64, 64}, precision::fp32),
                              make_gemm_op("i", {64, 64, 64}, precision::fp16)};
  const std::vector<std::string> both = model_notes(perf_model(a100, {true}), mixed);
  REQUIRE(both.size() == 2);
  CHECK(contains(both[0], "fp16 GEMMs"));
  CHECK_FALSE(contains(both[0], "fp32"));
  CHECK(contains(both[1], "no effect on the fp32 GEMMs"));

  const std::vector<op> relu =
      lower_yaml("name: t\nlayers:\n  - {name: r, type: relu, features: 1000}\n");
  const std::vector<std::string> none = model_notes(perf_model(a100, {true}), relu);
  REQUIRE(none.size() == 1);
  CHECK(contains(none[0], "no GEMMs"));

  // analyze() carries them in the analysis's notes.
  const network net = parse_network(
      "name: t\nlayers:\n  - {name: fc, type: linear, in: 64, out: 64}\n", "model.yaml");
  CHECK(analyze(net, perf_model(builtin_gpu("v100"), {true}), "test").notes == volta);
  CHECK(analyze(net, perf_model(builtin_gpu("v100")), "test").notes.empty());
}

TEST_CASE("ResNet-50's strided 1×1 downsample convs read M·K input elements, and their roofline "
          "bound is below the predicted device time on every built-in GPU") {
  const std::vector<op> ops = lower(load_network(ROOFLINE_SOURCE_DIR "/examples/resnet50.yaml"));
  const auto downsample = std::find_if(ops.begin(), ops.end(), [](const op &o) {
    return o.layer == "layer2.0.downsample" && o.is_gemm();
  });
  REQUIRE(downsample != ops.end());
  // 1×1/2 on 256×56×56 at batch 64: M = 64·28·28 = 50,176, N = 512, K = 256. The input read is
  // the sampled 28×28 pixels, M·K = 12,845,056 elements (not the whole 51,380,224); bytes
  // 2 · (12,845,056 + 131,072 + 25,690,112) = 77,332,480.
  CHECK(downsample->gemm->m == 50'176);
  CHECK(downsample->bytes == 77'332'480);
  int checked = 0;
  for (const gpu_spec &gpu : spec_catalog::builtin().specs()) {
    if (!gpu.supports(precision::fp16) || gpu.sm_count <= 0)
      continue;
    const perf_model model(gpu);
    for (const op &o : ops) {
      if (!o.is_gemm() || o.layer.find("downsample") == std::string::npos)
        continue;
      CAPTURE(gpu.name);
      CAPTURE(o.layer);
      const prediction p = model.predict(o);
      CHECK(p.roofline_time_s <= p.device_time_s);
      ++checked;
    }
  }
  CHECK(checked >= 4 * 10); // four downsample convs on each of the GPUs
}

TEST_CASE("time = max(flops/peak, bytes/bw), attainable = min(peak, AI·bw), memory-bound iff AI < "
          "ridge") {
  // A made-up GPU with round numbers: fp16 peak 100 TFLOP/s, 1 TB/s, ridge 100 FLOP/B.
  gpu_spec g;
  g.name = "round";
  g.dram_bytes_per_s = 1e12;
  g.peaks[precision::fp32] = peak_rate{10e12, std::nullopt};
  g.peaks[precision::fp16] = peak_rate{100e12, std::nullopt};
  const perf_model model(g);

  const auto gemm_with = [](std::int64_t flops, std::int64_t bytes) {
    op o = make_gemm_op("g", {1, 1, 1}, precision::fp16);
    o.flops = flops;
    o.bytes = bytes;
    return o;
  };

  SUBCASE("compute-bound: AI 400") {
    const prediction p = model.predict(gemm_with(4'000'000'000, 10'000'000));
    // compute 4e9 / 100e12 = 40 µs; memory 1e7 / 1e12 = 10 µs
    CHECK(p.bound == bound::compute);
    CHECK(p.roofline_time_s == doctest::Approx(40e-6).epsilon(1e-12));
    CHECK(p.attainable_flop_per_s == doctest::Approx(100e12).epsilon(1e-12));
  }
  SUBCASE("memory-bound: AI 10") {
    const prediction p = model.predict(gemm_with(100'000'000, 10'000'000));
    // compute 1e8 / 100e12 = 1 µs; memory 1e7 / 1e12 = 10 µs
    CHECK(p.bound == bound::memory);
    CHECK(p.roofline_time_s == doctest::Approx(10e-6).epsilon(1e-12));
    CHECK(p.attainable_flop_per_s == doctest::Approx(10e12).epsilon(1e-12)); // 10 · 1e12
  }
  SUBCASE("exactly at the ridge: AI 100 is compute-bound, both times equal") {
    const prediction p = model.predict(gemm_with(1'000'000'000, 10'000'000));
    CHECK(p.ridge_intensity == doctest::Approx(100.0).epsilon(1e-12));
    CHECK(p.bound == bound::compute);
    CHECK(p.roofline_time_s == doctest::Approx(10e-6).epsilon(1e-12));
    CHECK(p.attainable_flop_per_s == doctest::Approx(100e12).epsilon(1e-12));
  }
  SUBCASE("just below the ridge is memory-bound") {
    const prediction p = model.predict(gemm_with(999'999'999, 10'000'000));
    CHECK(p.bound == bound::memory);
  }
}

TEST_CASE(
    "a GPU without the precision (V100 bf16) throws input_error naming the precisions it has") {
  const gpu_spec v100 = builtin_gpu("v100");
  CHECK_FALSE(v100.supports(precision::bf16));
  const op gemm = make_gemm_op("g", {1024, 1024, 1024}, precision::bf16);
  try {
    (void)perf_model(v100).predict(gemm);
    FAIL("predict accepted bf16 on a V100");
  } catch (const input_error &e) {
    const std::string what = e.what();
    CAPTURE(what);
    CHECK(contains(what, "v100-sxm2"));
    CHECK(contains(what, "bf16"));
    CHECK(contains(what, "fp64, fp32, fp16")); // what it has, in precision order
  }
  CHECK_THROWS_AS((void)v100.peak_flop_per_s(precision::bf16), input_error);
  CHECK_THROWS_AS((void)v100.ridge_intensity(precision::fp8), input_error);
  // Through analyze(), too.
  const network net = parse_network(
      "name: t\nprecision: bf16\nlayers:\n  - {name: fc, type: linear, in: 8, out: 8}\n",
      "bf16.yaml");
  CHECK_THROWS_AS((void)analyze(net, perf_model(v100), "test"), input_error);
}

TEST_CASE(
    "analyze sums count × time, shares sum to 1, memory_bound_share is the memory-bound fraction") {
  // fc: the compute-bound batch-512 linear above, 34.360 µs, once.
  // act: ReLU over 512·4096 = 2,097,152 fp16 elements: 8,388,608 bytes / 900e9 = 9.3207 µs
  //      (memory-bound), counted 3 times by the repeat block.
  const network net = parse_network("name: two\nbatch: 512\nlayers:\n"
                                    "  - {name: fc, type: linear, in: 1024, out: 4096}\n"
                                    "  - repeat: 3\n"
                                    "    name: blk\n"
                                    "    layers:\n"
                                    "      - {name: act, type: relu, features: 4096}\n",
                                    "two.yaml");
  // The roofline (hand values); the GEMM model's own factors are tested in gemm_model_test.cpp.
  const analysis r =
      analyze(net, perf_model(builtin_gpu("v100"), model_options{false, true}), "--gpu v100");
  CHECK(r.network.name == "two");
  CHECK(r.network.origin == "two.yaml");
  CHECK(r.network.batch == 512);
  CHECK(r.network.precision == precision::fp16);
  CHECK(r.network.mode == run_mode::inference);
  CHECK(r.model.spec().name == "v100-sxm2");
  CHECK(r.device_selection == "--gpu v100");
  REQUIRE(r.ops.size() == 2);

  const analysed_op &fc = r.ops[0];
  const analysed_op &act = r.ops[1];
  CHECK(fc.op.layer == "fc");
  CHECK(act.op.layer == "blk/act");
  CHECK(act.op.count == 3);
  CHECK(fc.prediction.bound == bound::compute);
  CHECK(act.prediction.bound == bound::memory);
  CHECK(fc.total_time_s == doctest::Approx(3.4359738368e-5).epsilon(1e-9));
  CHECK(act.prediction.time_s == doctest::Approx(9.320675556e-6).epsilon(1e-9));
  CHECK(act.total_time_s == doctest::Approx(3 * 9.320675556e-6).epsilon(1e-9));

  // time = 34.3597 + 3 · 9.3207 = 62.3218 µs
  CHECK(r.totals.time_s == doctest::Approx(6.2321765035e-5).epsilon(1e-9));
  double sum = 0;
  for (const analysed_op &entry : r.ops) {
    sum += entry.time_share;
    CHECK(entry.time_share == doctest::Approx(entry.total_time_s / r.totals.time_s).epsilon(1e-12));
  }
  CHECK(sum == doctest::Approx(1.0).epsilon(1e-12));
  CHECK(fc.time_share == doctest::Approx(0.55132807).epsilon(1e-6));
  // 27.962 / 62.322 = 0.44867
  CHECK(r.totals.memory_bound_time_s == doctest::Approx(3 * 9.320675556e-6).epsilon(1e-9));
  CHECK(r.totals.memory_bound_share == doctest::Approx(0.44867193).epsilon(1e-6));
  CHECK(r.totals.gemm_time_s == doctest::Approx(3.4359738368e-5).epsilon(1e-9));
  // FLOPs 4,294,967,296 + 3 · 2,097,152 = 4,301,258,752; bytes 13,631,488 + 3 · 8,388,608 =
  // 38,797,312
  CHECK(r.totals.flops == doctest::Approx(4301258752.0).epsilon(1e-15));
  CHECK(r.totals.bytes == doctest::Approx(38797312.0).epsilon(1e-15));
  CHECK(r.totals.op_count == 2);
  CHECK(r.totals.gemm_count == 1);
}

TEST_CASE("analyze of an all-memory-bound network has memory_bound_share 1") {
  const network net = parse_network(linear_net(1) + "  - {name: r, type: relu}\n", "mem.yaml");
  const analysis r =
      analyze(net, perf_model(builtin_gpu("v100"), model_options{false, true}), "test");
  REQUIRE(r.ops.size() == 2);
  CHECK(r.ops[0].prediction.bound == bound::memory);
  CHECK(r.ops[1].prediction.bound == bound::memory);
  CHECK(r.totals.memory_bound_share == doctest::Approx(1.0).epsilon(1e-12));
  // ReLU over 4096 elements: 16,384 bytes / 900e9 = 18.2 ns; fc 9.332 µs
  CHECK(r.totals.time_s == doctest::Approx(9.332053333e-6 + 16384 / 900e9).epsilon(1e-9));
}

namespace {

/// A host floor with round numbers for hand arithmetic: 6 µs per cuBLAS call, 4 µs per kernel
/// launch (what typical_host_floor() documents too).
host_floor hand_host() {
  host_floor h;
  h.gemm_call_s.fill(6e-6);
  h.kernel_launch_s = 4e-6;
  h.origin = "hand";
  return h;
}

/// The V100 with the GEMM model and the hand host floor. Volta has no fitted parameters: the
/// generic defaults, dram_efficiency 0.9 and kernel_overhead_s 1 µs.
perf_model v100_model() {
  const gpu_spec v100 = builtin_gpu("v100");
  REQUIRE(v100.parameters[parameter::dram_efficiency] == 0.9);
  REQUIRE(v100.parameters[parameter::kernel_overhead_s] == 1e-6);
  return perf_model(v100, model_options{false, false, std::nullopt, hand_host()});
}

} // namespace

namespace {

/// A ReLU kernel moving `bytes` on the V100 at the generic defaults: the memory-op model's time
/// (memory_op_model_test holds it against hand computations).
double relu_device_s(std::int64_t bytes) {
  return memory_op_time_s(memory_op_kind::relu, bytes, model_basis(builtin_gpu("v100")),
                          model_parameters{});
}

} // namespace

TEST_CASE("a memory-bound op: device time as its kernel runs (memory_op_time_s); its host floor "
          "is one kernel launch") {
  const perf_model model = v100_model();
  SUBCASE("a small ReLU is launch-bound") {
    // ReLU over 1000 fp16 elements: 4000 bytes, 1000 FLOPs (0.0637 ns at the fp32 peak: below
    // it); the kernel's 2 µs floor and a few ns of streaming; floor = 4 µs > device.
    const std::vector<op> ops =
        lower_yaml("name: t\nlayers:\n  - {name: r, type: relu, features: 1000}\n");
    const prediction p = model.predict(ops.at(0));
    CHECK(p.roofline_time_s == doctest::Approx(4000 / 900e9).epsilon(1e-12)); // unchanged
    CHECK(p.device_time_s == doctest::Approx(relu_device_s(4000)).epsilon(1e-12));
    CHECK(p.device_time_s == doctest::Approx(2e-6).epsilon(1e-2));
    CHECK(p.host_floor_s == 4e-6);
    CHECK(p.launch_bound);
    CHECK(p.time_s == 4e-6);
    CHECK_FALSE(p.gemm.has_value());
  }
  SUBCASE("a large ReLU is not") {
    // ReLU over 512 · 4096 = 2,097,152 fp16 elements: 8,388,608 bytes, more than the V100's
    // 6 MB of L2: 2 µs + 8,388,608 / (0.8 · 900e9) = 13.650844 µs > floor 4 µs.
    const std::vector<op> ops =
        lower_yaml("name: t\nbatch: 512\nlayers:\n  - {name: r, type: relu, features: 4096}\n");
    const prediction p = model.predict(ops.at(0));
    CHECK(p.device_time_s == doctest::Approx(13.650844444e-6).epsilon(1e-9));
    CHECK(p.host_floor_s == 4e-6);
    CHECK_FALSE(p.launch_bound);
    CHECK(p.time_s == p.device_time_s);
  }
  SUBCASE("the floor unset: the typical kernel launch") {
    const std::vector<op> ops =
        lower_yaml("name: t\nlayers:\n  - {name: r, type: relu, features: 1000}\n");
    const prediction p = perf_model(builtin_gpu("v100")).predict(ops.at(0));
    CHECK(p.device_time_s == doctest::Approx(relu_device_s(4000)).epsilon(1e-12));
    CHECK(p.host_floor_s == typical_host_floor().kernel_launch_s);
    CHECK(p.time_s == std::max(p.device_time_s, p.host_floor_s));
  }
}

TEST_CASE("analyze with the GEMM model: eager totals, device totals and the launch-bound share") {
  // The two-layer network of the roofline test above, now with the model and the hand host:
  // fc (512 × 4096 × 1024, compute-bound, far above the 6 µs floor) once;
  // act: ReLU over 2,097,152 elements, device 13.650844444 µs each (see above), 3 runs
  //      = 40.952533333 µs, above its 4 µs floor.
  const network two = parse_network("name: two\nbatch: 512\nlayers:\n"
                                    "  - {name: fc, type: linear, in: 1024, out: 4096}\n"
                                    "  - repeat: 3\n"
                                    "    name: blk\n"
                                    "    layers:\n"
                                    "      - {name: act, type: relu, features: 4096}\n",
                                    "two.yaml");
  const analysis r = analyze(two, v100_model(), "--gpu v100");
  REQUIRE(r.ops.size() == 2);
  const analysed_op &fc = r.ops[0];
  const analysed_op &act = r.ops[1];
  CHECK(r.model.host().origin == "hand");
  CHECK(r.model.parameters() == model_parameters{});
  CHECK_FALSE(fc.prediction.launch_bound);
  CHECK(fc.prediction.time_s == fc.prediction.device_time_s);
  CHECK(act.total_time_s == doctest::Approx(40.952533333e-6).epsilon(1e-9));
  CHECK(r.totals.time_s == doctest::Approx(fc.prediction.time_s + 40.952533333e-6).epsilon(1e-9));
  CHECK(r.totals.device_time_s == doctest::Approx(r.totals.time_s).epsilon(1e-12)); // no floor
  CHECK(r.totals.memory_bound_time_s == doctest::Approx(40.952533333e-6).epsilon(1e-9));
  CHECK(r.totals.launch_bound_ops == 0);
  CHECK(r.totals.launch_bound_time_s == 0);
  CHECK(r.totals.launch_bound_share == 0);

  // At batch 1: fc is a GEMV streaming 8,398,848 bytes, far above its floor; act: ReLU over 4096
  // elements (16,384 bytes: its kernel's 2 µs floor and a few ns), 3 runs of the 4 µs floor:
  // 12 µs launch-bound.
  const network one = parse_network("name: one\nbatch: 1\nlayers:\n"
                                    "  - {name: fc, type: linear, in: 1024, out: 4096}\n"
                                    "  - repeat: 3\n"
                                    "    name: blk\n"
                                    "    layers:\n"
                                    "      - {name: act, type: relu, features: 4096}\n",
                                    "one.yaml");
  const analysis small = analyze(one, v100_model(), "--gpu v100");
  REQUIRE(small.ops.size() == 2);
  const prediction &gemv = small.ops[0].prediction;
  const prediction &relu = small.ops[1].prediction;
  CHECK_FALSE(gemv.launch_bound);
  CHECK(relu.launch_bound);
  CHECK(relu.device_time_s == doctest::Approx(relu_device_s(16384)).epsilon(1e-12));
  CHECK(small.totals.launch_bound_ops == 1);
  CHECK(small.totals.launch_bound_time_s == doctest::Approx(12e-6).epsilon(1e-12));
  CHECK(small.totals.time_s == doctest::Approx(gemv.time_s + 12e-6).epsilon(1e-12));
  CHECK(small.totals.device_time_s ==
        doctest::Approx(gemv.device_time_s + 3 * relu_device_s(16384)).epsilon(1e-9));
  CHECK(small.totals.launch_bound_share ==
        doctest::Approx(12e-6 / small.totals.time_s).epsilon(1e-12));
}

TEST_CASE("estimate_once computes what estimate remembers") {
  const perf_model model(spec_catalog::builtin().resolve("h100"));
  for (const gemm_shape &s : {gemm_shape{32, 4096, 4096, 1}, gemm_shape{8, 50257, 768, 1},
                              gemm_shape{4096, 1000, 1001, 2}}) {
    const gemm_estimate remembered = model.estimate(s, precision::fp16);
    const gemm_estimate once = model.estimate_once(s, precision::fp16);
    CHECK(once.device_time_s == remembered.device_time_s);
    CHECK(once.tile_m == remembered.tile_m);
    CHECK(once.tile_n == remembered.tile_n);
    CHECK(once.split_k == remembered.split_k);
    CHECK(once.factors == remembered.factors);
  }
}

TEST_CASE("a step that moves more than the L2 holds beside one op has its GEMMs' operands cold") {
  // V100: a 6 MB L2. fc at batch 1 reads 2 · (1024 + 4096 · 1024 + 4096) = 8,398,848 bytes; act
  // moves 4096 · 2 · 2 = 16,384 bytes a run.
  const std::string net = "name: t\nbatch: 1\nlayers:\n"
                          "  - {name: fc, type: linear, in: 1024, out: 4096}\n"
                          "  - repeat: REPEATS\n"
                          "    name: blk\n"
                          "    layers:\n"
                          "      - {name: act, type: relu, features: 4096}\n";
  const auto with_repeats = [&](int repeats) {
    std::string yaml = net;
    yaml.replace(yaml.find("REPEATS"), 7, std::to_string(repeats));
    return yaml;
  };
  const gpu_spec v100 = builtin_gpu("v100");
  // Beside the 8.4 MB GEMM, 3 ReLUs move 49 kB: the GEMM's operands are still in L2 next step...
  CHECK(step_operand_cache(lower_yaml(with_repeats(3)), v100) == cache_state::warm);
  // ... 400 of them move 6.55 MB, more than the 6,291,456-byte L2: they are not.
  CHECK(step_operand_cache(lower_yaml(with_repeats(400)), v100) == cache_state::cold);
  // One GEMM called back to back is warm, however large.
  CHECK(step_operand_cache({make_gemm_op("g", {8192, 8192, 8192, 1}, precision::fp16)}, v100) ==
        cache_state::warm);

  // analyze decides unless told, and the GEMMs' predictions follow.
  const perf_model model(v100);
  const analysis warm = analyze(parse_network(with_repeats(3), "t.yaml"), model, "--gpu v100");
  const analysis cold = analyze(parse_network(with_repeats(400), "t.yaml"), model, "--gpu v100");
  CHECK(warm.model.options().operand_cache == cache_state::warm);
  CHECK(cold.model.options().operand_cache == cache_state::cold);
  const auto has_cold_note = [](const analysis &a) {
    return std::any_of(a.notes.begin(), a.notes.end(), [](const std::string &note) {
      return note.find("operands cold") != std::string::npos;
    });
  };
  CHECK_FALSE(has_cold_note(warm));
  CHECK(has_cold_note(cold));
  const model_parameters &p = model.parameters();
  const gemm_shape fc{1, 4096, 1024, 1};
  CHECK(cold.ops.at(0).prediction.device_time_s ==
        estimate_gemm(fc, precision::fp16, v100.peak_flop_per_s(precision::fp16), model_basis(v100),
                      p, cache_state::cold)
            .device_time_s);
  CHECK(cold.ops.at(0).prediction.device_time_s > warm.ops.at(0).prediction.device_time_s);
  // The models for either placement share one memo, which tells them apart: asked in turn, each
  // keeps its own answer once the memo remembers both.
  const perf_model warm_model = model.with_operand_cache(cache_state::warm),
                   cold_model = model.with_operand_cache(cache_state::cold);
  const op gemm = make_gemm_op("g", fc, precision::fp16);
  for (int ask = 0; ask < 3; ++ask) {
    CHECK(warm_model.predict(gemm).device_time_s == warm.ops.at(0).prediction.device_time_s);
    CHECK(cold_model.predict(gemm).device_time_s == cold.ops.at(0).prediction.device_time_s);
  }
  // Told warm, a cold-sized step stays warm.
  model_options told;
  told.operand_cache = cache_state::warm;
  const analysis kept =
      analyze(parse_network(with_repeats(400), "t.yaml"), perf_model(v100, told), "--gpu v100");
  CHECK(kept.ops.at(0).prediction.device_time_s == warm.ops.at(0).prediction.device_time_s);
}

TEST_CASE("in a step whose data comes from DRAM (operands cold), no op is predicted below its "
          "roofline bound: ResNet-50's ReLUs were fitted L2-warm, faster than DRAM allows") {
  const network net = load_network(ROOFLINE_SOURCE_DIR "/examples/resnet50.yaml");
  const analysis a = analyze(net, perf_model(*spec_catalog::builtin().find("h100")), "test");
  REQUIRE(a.model.options().operand_cache == cache_state::cold);
  int relus = 0;
  for (const analysed_op &e : a.ops) {
    CAPTURE(e.op.layer);
    CHECK(e.prediction.device_time_s >= e.prediction.roofline_time_s * (1 - 1e-12));
    relus += e.op.kind == "relu";
  }
  CHECK(relus > 0);
}

TEST_CASE("in a step that fits in L2, a memory-bound op faster than DRAM allows is held against "
          "the L2 roof, and none is below its bound") {
  const network net = parse_network("name: small\nbatch: 4096\nlayers:\n"
                                    "  - {name: fc, type: linear, in: 1024, out: 1024}\n"
                                    "  - {name: act, type: relu}\n"
                                    "  - {name: norm, type: layernorm}\n",
                                    "small.yaml");
  const gpu_spec h100 = *spec_catalog::builtin().find("h100");
  const analysis a = analyze(net, perf_model(h100), "test");
  REQUIRE(a.model.options().operand_cache.value_or(cache_state::warm) == cache_state::warm);
  int on_l2 = 0;
  for (const analysed_op &e : a.ops) {
    CAPTURE(e.op.layer);
    CHECK(e.prediction.device_time_s >= e.prediction.roofline_time_s * (1 - 1e-12));
    if (!e.prediction.l2_roof)
      continue;
    ++on_l2;
    CHECK(e.prediction.device_time_s <
          static_cast<double>(e.op.bytes) / h100.dram_bytes_per_s); // beats DRAM: from L2
  }
  CHECK(on_l2 > 0);
}
