// SPDX-License-Identifier: Apache-2.0
// advise()'s memory-bound warning: its batch matches the per-layer table or says how it was chosen,
// and it names only what the network has (attention GEMMs, a KV cache, the memory-bound ops'
// kinds).
#include "roofline/analysis/advisor.hpp"
#include "roofline/analysis/analysis.hpp"
#include "roofline/input/model_config.hpp"
#include "roofline/input/network.hpp"
#include "roofline/model/gemm.hpp"
#include "roofline/model/perf_model.hpp"
#include "roofline/model/spec_catalog.hpp"

#include "test_support.hpp"

#include <doctest/doctest.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

using namespace roofline;
using namespace roofline::test;

namespace {

struct advised {
  roofline::advice advice;
  std::string memory_warning; ///< the warning that starts with the memory-bound share; "" if none
};

/// The advice of an example on `gpu`; with `memory_known` false, as for an analysis that does
/// not know the step's memory (no batch limit).
advised advise_example(const std::string &example, const std::string &gpu,
                       bool memory_known = true) {
  const network net = load_network(ROOFLINE_SOURCE_DIR "/examples/" + example);
  const gpu_spec *spec = spec_catalog::builtin().find(gpu);
  REQUIRE(spec != nullptr);
  const perf_model model(*spec);
  analysis analysed = analyze(net, model, "test");
  if (!memory_known)
    analysed.memory.reset();
  advised result{advise(analysed), ""};
  for (const std::string &warning : result.advice.warnings)
    if (contains(warning, "memory-bound at batch"))
      result.memory_warning = warning;
  return result;
}

} // namespace

TEST_CASE("the warning's batch is said to be a power of two searched, beside the per-layer range "
          "of the batch table; a decode network's KV cache is named with its length") {
  // Memory not known: the batches are advised whatever they need (below, the same network within
  // what fits).
  const advised decode = advise_example("llama2-7b-decode.yaml", "h100", false);
  const std::string &warning = decode.memory_warning;
  CAPTURE(warning);
  REQUIRE(decode.advice.network_compute_bound_batch);
  CHECK(contains(warning, fmt::format("at batch {} (powers of two searched) most of the weight "
                                      "GEMMs' time is compute-bound",
                                      *decode.advice.network_compute_bound_batch)));
  std::int64_t lowest = INT64_MAX, highest = 0;
  for (const batch_advice &b : decode.advice.batch) {
    REQUIRE(b.compute_bound_batch);
    lowest = std::min(lowest, *b.compute_bound_batch);
    highest = std::max(highest, *b.compute_bound_batch);
  }
  REQUIRE(lowest < highest);
  CHECK(contains(warning, fmt::format("per layer, from batch {} to {} (below)", lowest, highest)));
  // The power of two above the table's range, never a number between its ends.
  CHECK(*decode.advice.network_compute_bound_batch >= highest);
  CHECK(contains(warning, "attention score and context GEMMs, over a KV cache of 2048 tokens"));
}

TEST_CASE("no batch advice beyond what fits in memory: Llama-2-7B decode on an H100 turns "
          "compute-bound only past it, and the warning says what that leaves") {
  const advised decode = advise_example("llama2-7b-decode.yaml", "h100");
  const std::string &warning = decode.memory_warning;
  CAPTURE(warning);
  REQUIRE(decode.advice.largest_fitting_batch);
  const std::int64_t largest = *decode.advice.largest_fitting_batch;
  CHECK(largest > 1);
  CHECK_FALSE(decode.advice.network_compute_bound_batch); // its 512 does not fit
  REQUIRE(decode.advice.compute_bound_beyond_memory);
  CHECK(*decode.advice.compute_bound_beyond_memory > largest);
  for (const batch_advice &b : decode.advice.batch) {
    CAPTURE(b.layer);
    if (b.compute_bound_batch)
      CHECK(*b.compute_bound_batch <= largest);
    if (b.full_wave_batch)
      CHECK(*b.full_wave_batch <= largest);
  }
  CHECK(std::any_of(decode.advice.batch.begin(), decode.advice.batch.end(),
                    [](const batch_advice &b) { return b.compute_bound_beyond_memory; }));
  CHECK(contains(warning, fmt::format("turns compute-bound only from batch {} (powers of two "
                                      "searched), past the largest batch that fits in memory "
                                      "({}): memory-bound at every batch that fits",
                                      *decode.advice.compute_bound_beyond_memory, largest)));
  CHECK(contains(warning, "more bandwidth, quantized weights or more GPUs are the levers"));
  CHECK_FALSE(contains(warning, "most of the weight GEMMs' time is compute-bound"));
}

TEST_CASE("BERT's warning names its attention GEMMs but no KV cache, and splits the memory-bound "
          "time between GEMMs and the op kinds it has") {
  const std::string warning = advise_example("bert-base.yaml", "h100").memory_warning;
  CAPTURE(warning);
  REQUIRE_FALSE(warning.empty());
  CHECK(contains(warning, "GEMMs whose batch_count grows with the batch instead of M (attention "
                          "score and context GEMMs)"));
  CHECK_FALSE(contains(warning, "KV"));
  CHECK(contains(warning, "in GEMMs that read more bytes than they have FLOPs to hide them"));
  CHECK(contains(warning, "layernorm, softmax, add and gelu ops"));
  CHECK_FALSE(contains(warning, "pool"));
}

TEST_CASE("a mixture's experts, whose batch_count follows the routing, are not called attention "
          "GEMMs") {
  // Batch 1 reaches 2 of 8 experts, batch 2 about 4: batch_count doubles, M stays 1.
  const network net = parse_network(
      "name: moe\nprecision: bf16\nlayers:\n"
      "  - {name: moe, type: moe, experts: 8, top_k: 2, in: 4096, intermediate: 14336}\n",
      "moe.yaml");
  const perf_model model(*spec_catalog::builtin().find("h100"));
  const advice advised = advise(analyze(net, model, "test"));
  REQUIRE_FALSE(advised.warnings.empty());
  for (const std::string &warning : advised.warnings) {
    CAPTURE(warning);
    CHECK_FALSE(contains(warning, "attention"));
  }
}

TEST_CASE("a network without attention has no word of attention in its warning") {
  for (const char *gpu : {"v100", "h100"}) {
    CAPTURE(gpu);
    const std::string warning = advise_example("alexnet-classifier.yaml", gpu).memory_warning;
    CAPTURE(warning);
    REQUIRE_FALSE(warning.empty());
    CHECK_FALSE(contains(warning, "attention"));
    CHECK_FALSE(contains(warning, "KV"));
    CHECK(contains(warning, "relu ops"));
  }
  const std::string resnet = advise_example("resnet50.yaml", "h100").memory_warning;
  CAPTURE(resnet);
  CHECK_FALSE(contains(resnet, "attention"));
  CHECK(contains(resnet, "batchnorm, relu, maxpool, add and avgpool ops"));
}

TEST_CASE("the batch table's compute-bound batch agrees with each op's own bound: a 3×3 conv's "
          "bytes are its real tensors there too, not the im2col matrix") {
  const network net = load_network(ROOFLINE_SOURCE_DIR "/examples/resnet50.yaml");
  const perf_model model(*spec_catalog::builtin().find("h100"));
  const analysis analysed = analyze(net, model, "test");
  const advice advised = advise(analysed);
  REQUIRE(advised.batch.size() ==
          30); // conv1, 4 + 3 per stage (its first block, its repeat block), fc
  int compute_bound = 0;
  for (const batch_advice &b : advised.batch) {
    const auto entry = std::find_if(analysed.ops.begin(), analysed.ops.end(), [&](const auto &e) {
      return e.op.layer == b.layer && e.op.pass == b.pass;
    });
    REQUIRE(entry != analysed.ops.end());
    CAPTURE(b.layer);
    const bool compute_now = entry->prediction.bound == bound::compute;
    compute_bound += compute_now;
    CHECK(compute_now == (b.compute_bound_batch && *b.compute_bound_batch <= net.batch));
  }
  // layer2.1-3/conv2 (3×3, K = 1152) among them: intensity 569 against the ridge of 295.
  CHECK(compute_bound >= 10);
}

namespace {

const perf_model &h100() {
  static const perf_model model(*spec_catalog::builtin().find("h100"));
  return model;
}

advice advise_yaml(const std::string &yaml, const perf_model &model, double min_speedup = 1.03) {
  const network net = parse_network(yaml, "test.yaml");
  return advise(analyze(net, model, "test"), min_speedup);
}

} // namespace

TEST_CASE("padding: GPT-2's LM head (N = 50257, fp16) is padded to the 16-byte rule, with its gain "
          "and its extra work by hand") {
  const advice a = advise_yaml("name: head\nbatch: 8\nlayers:\n"
                               "  - {name: lm_head, type: linear, in: 768, out: 50257}\n",
                               h100());
  REQUIRE(a.padding.size() == 1);
  const padding_advice &p = a.padding.front();
  CHECK(p.layer == "lm_head");
  CHECK(p.original.m == 8);
  CHECK(p.original.n == 50257);
  CHECK(p.original.k == 768);
  CHECK(p.padded.m == 8);
  CHECK(p.padded.k == 768);
  CHECK(p.padded.n % 8 == 0); // fp16's 16 bytes
  CHECK(p.padded.n >= 50264);
  CHECK(p.padded.n <= 50257 * 1.06);
  // Named as the network file sets it: the linear layer's `out`.
  CHECK(contains(p.reason, "out=50257 breaks the 16-byte rule of fp16 (multiples of 8)"));
  REQUIRE(p.changes.size() == 1);
  CHECK(p.changes[0].size == "out");
  CHECK(p.changes[0].from == 50257);
  CHECK(p.changes[0].to == p.padded.n);
  CHECK(p.time_s == h100().predict(make_gemm_op("x", p.original, precision::fp16)).time_s);
  CHECK(p.padded_time_s == h100().predict(make_gemm_op("x", p.padded, precision::fp16)).time_s);
  CHECK(p.predicted_speedup() >= 1.03);
  // Extra FLOPs: 2·8·N'·768 / (2·8·50257·768) − 1 = N' / 50257 − 1.
  CHECK(p.extra_flops == doctest::Approx(static_cast<double>(p.padded.n) / 50257 - 1));
  // Extra bytes: 2 B × (8·768 + 768·N' + 8·N') over the same with 50257.
  const auto bytes = [](double n) { return 8 * 768 + 768 * n + 8 * n; };
  CHECK(p.extra_bytes ==
        doctest::Approx(bytes(static_cast<double>(p.padded.n)) / bytes(50257) - 1));
}

TEST_CASE("padding: none for an aligned GEMM, none below the asked-for gain") {
  CHECK(advise_yaml("name: square\nbatch: 4096\nlayers:\n"
                    "  - {name: fc, type: linear, in: 4096, out: 4096}\n",
                    h100())
            .padding.empty());
  CHECK(advise_yaml("name: head\nbatch: 8\nlayers:\n"
                    "  - {name: lm_head, type: linear, in: 768, out: 50257}\n",
                    h100(), 1000.0)
            .padding.empty());
}

TEST_CASE("advice near 2^63: a padded size or a doubled batch that would overflow is left out") {
  // N = 2^62 − 1 (fp8): its FLOPs fit, those of every padded N (2^62 and up) do not. Once a throw
  // naming a layer `padding` that does not exist, or undefined behaviour.
  CHECK(advise_yaml("name: n\nprecision: fp8\nlayers:\n"
                    "  - {name: mm, type: matmul, m: 1, n: 4611686018427387903, k: 1}\n",
                    h100())
            .padding.empty());
  CHECK(advise_yaml("name: k\nprecision: fp8\nlayers:\n"
                    "  - {name: mm, type: matmul, m: 1, n: 1, k: 4611686018427387903}\n",
                    h100())
            .padding.empty());
  // N = 2^62 − 100: the alignment fix (2^62 − 96) fits, N to a multiple of 256 (2^62) does not.
  for (const padding_advice &p : advise_yaml("name: wide\nprecision: fp8\nlayers:\n"
                                             "  - {name: mm, type: matmul, m: 1, n: "
                                             "4611686018427387804, k: 1}\n",
                                             h100())
                                     .padding) {
    CHECK(gemm_flops(p.padded).has_value());
    CHECK(std::isfinite(p.extra_flops));
  }
  // A batch of 2^63 − 1 cannot double: no batch advice, and no overflow computing 2 × batch.
  const advice huge = advise_yaml("name: huge\nbatch: 9223372036854775807\nlayers:\n"
                                  "  - {name: mm, type: matmul, m: 64, n: 64, k: 64}\n",
                                  h100());
  CHECK(huge.batch.empty());
  CHECK_FALSE(huge.network_compute_bound_batch);
  // Batch 2^61 − 1 (int8: 1-byte elements, and no fp8 quantize op whose 5 bytes per input would
  // overflow first) doubles once; the search for full waves runs past twice the batch, to shapes
  // nothing lowered (M past 2^62, M·K + M·N past 2^63), and estimates them without overflow.
  const advice edge = advise_yaml("name: edge\nprecision: int8\nbatch: 2305843009213693951\n"
                                  "layers:\n"
                                  "  - {name: fc, type: linear, in: 1, out: 1}\n",
                                  h100());
  REQUIRE(edge.batch.size() == 1);
  CHECK(edge.batch.front().batch == 2305843009213693951);
  // Three launch-bound ops run 2^62 times each: their runs per step overflow, named by layer.
  CHECK_THROWS_WITH_AS(
      advise_yaml("name: runs\nlayers:\n  - name: r\n"
                  "    repeat: 4611686018427387903\n    layers:\n"
                  "      - {name: a, type: relu, features: 8}\n"
                  "      - {name: b, type: relu, features: 8}\n"
                  "      - {name: c, type: relu, features: 8}\n",
                  h100()),
      doctest::Contains("layer `r/c`: the count of the step's runs of launch-bound ops"),
      input_error);
}

TEST_CASE("batch advice: the compute-bound batch of a square linear layer by hand") {
  // Rows M = batch, N = K = 4096, fp16: intensity = 2·b·N·K / (2·(b·K + N·K + b·N))
  // = 4096·b / (2·b + 4096), which reaches the ridge r at b = 4096·r / (4096 − 2·r).
  const advice a = advise_yaml("name: square\nbatch: 8\nlayers:\n"
                               "  - {name: fc, type: linear, in: 4096, out: 4096}\n",
                               h100());
  REQUIRE(a.batch.size() == 1);
  const batch_advice &b = a.batch.front();
  CHECK(b.layer == "fc");
  CHECK(b.batch == 8);
  const double ridge = h100().spec().ridge_intensity(precision::fp16);
  const auto expected = static_cast<std::int64_t>(std::ceil(4096 * ridge / (4096 - 2 * ridge)));
  REQUIRE(b.compute_bound_batch);
  CHECK(*b.compute_bound_batch == expected);
  REQUIRE(a.network_compute_bound_batch);
  // The smallest power of two at or above it: one weight GEMM, its time compute-bound there.
  CHECK(*a.network_compute_bound_batch >= expected);
  CHECK(*a.network_compute_bound_batch / 2 < expected);
}

TEST_CASE("batch advice: weights quantized for the whole network grow with the batch as a layer's "
          "own quantized weights do (once dropped when the network was lowered again)") {
  const advice whole = advise_yaml("name: q\nbatch: 8\nweights: int4\nweight_group: 128\n"
                                   "layers:\n  - {name: fc, type: linear, in: 4096, out: 4096}\n",
                                   h100());
  const advice own = advise_yaml("name: q\nbatch: 8\nlayers:\n  - {name: fc, type: linear, in: "
                                 "4096, out: 4096, weights: int4, weight_group: 128}\n",
                                 h100());
  REQUIRE(whole.batch.size() == 1);
  REQUIRE(own.batch.size() == 1);
  REQUIRE(own.batch.front().compute_bound_batch);
  CHECK(whole.batch.front().compute_bound_batch == own.batch.front().compute_bound_batch);
  CHECK(whole.batch.front().full_wave_batch == own.batch.front().full_wave_batch);
  CHECK(whole.network_compute_bound_batch == own.network_compute_bound_batch);
}

TEST_CASE("launch-bound advice: the ops, runs and share of the step the host's floor decides") {
  const network net = parse_network("name: tiny\nbatch: 1\nlayers:\n"
                                    "  - {name: fc, type: linear, in: 64, out: 64}\n"
                                    "  - repeat: 3\n"
                                    "    name: blk\n"
                                    "    layers:\n"
                                    "      - {name: act, type: relu}\n",
                                    "tiny.yaml");
  const analysis analysed = analyze(net, h100(), "test");
  const advice a = advise(analysed);
  REQUIRE(a.launch_bound);
  CHECK(a.launch_bound->ops == 2);  // both ops, each shorter on the GPU than its host floor
  CHECK(a.launch_bound->runs == 4); // fc once, act three times
  CHECK(a.launch_bound->share == doctest::Approx(1.0));
  CHECK(a.launch_bound->time_s == doctest::Approx(analysed.totals.time_s));
  CHECK(a.launch_bound->graph_step_time_s == doctest::Approx(analysed.totals.device_time_s));
  CHECK(a.launch_bound->device_time_s < a.launch_bound->time_s);
  CHECK_FALSE(a.launch_bound->measured_floor);
  REQUIRE_FALSE(a.warnings.empty());
  CHECK(contains(a.warnings.back(), "2 of 2 ops (4 runs per step, 100% of the step) are "
                                    "launch-bound"));
}

TEST_CASE("padding is said in the user's sizes: ResNet-50's conv1 pads its input channels 3 → 8 "
          "(K = C·7·7 meets the 16-byte rule only through C), its extra work the padded shape's "
          "over the shape's own") {
  const network net = load_network(ROOFLINE_SOURCE_DIR "/examples/resnet50.yaml");
  const perf_model model(*spec_catalog::builtin().find("h100"));
  const advice advised = advise(analyze(net, model, "test"));
  const auto conv1 = std::find_if(advised.padding.begin(), advised.padding.end(),
                                  [](const padding_advice &p) { return p.layer == "conv1"; });
  REQUIRE(conv1 != advised.padding.end());
  CHECK(conv1->original.k == 147);
  CHECK(conv1->padded.k == 8 * 7 * 7); // not 152: no channel count makes K = C·49 equal 152
  REQUIRE(conv1->changes.size() == 1);
  CHECK(conv1->changes[0].size == "in_channels");
  CHECK(conv1->changes[0].from == 3);
  CHECK(conv1->changes[0].to == 8);
  CHECK(contains(conv1->reason, "in_channels=3 (K=147) breaks the 16-byte rule"));
  CHECK(conv1->extra_flops == doctest::Approx(392.0 / 147.0 - 1));
  CHECK(conv1->extra_bytes > 0);
}

TEST_CASE("a convolution's padding is costed by the conv model: its time is the table's, the "
          "padded time the conv model's of the padded convolution, and it is advised only "
          "where that beats the table") {
  for (const char *gpu : {"h100", "a100"}) {
    CAPTURE(gpu);
    const network net = load_network(ROOFLINE_SOURCE_DIR "/examples/resnet50.yaml");
    const perf_model model(*spec_catalog::builtin().find(gpu));
    const analysis analysed = analyze(net, model, "test");
    const advice advised = advise(analysed);
    const auto conv1 = std::find_if(advised.padding.begin(), advised.padding.end(),
                                    [](const padding_advice &p) { return p.layer == "conv1"; });
    REQUIRE(conv1 != advised.padding.end());
    const auto table = std::find_if(analysed.ops.begin(), analysed.ops.end(),
                                    [](const analysed_op &e) { return e.op.layer == "conv1"; });
    REQUIRE(table != analysed.ops.end());
    CHECK(conv1->time_s == doctest::Approx(table->prediction.time_s));
    // The padded convolution itself: 8 input channels, its tensors' bytes anew.
    op padded = table->op;
    padded.conv->in_channels = 8;
    padded.gemm = conv1->padded;
    padded.flops = *gemm_flops(conv1->padded);
    padded.bytes = *conv_bytes(*padded.conv, padded.precision);
    CHECK(padded.bytes > table->op.bytes);
    CHECK(conv1->padded_time_s == doctest::Approx(model.predict(padded).time_s));
    CHECK(conv1->padded_time_s < conv1->time_s);
  }
}

TEST_CASE("training a convolution: its data gradient pads in whole input channels, its weight "
          "gradient's K (the batch's pixels) is never padded") {
  // N of the data gradient = C·R·S = 112·9 = 1008: 1024 is no channel count's.
  const network net = parse_network(
      "name: conv\nprecision: fp16\nbatch: 3\nmode: training\nlayers:\n"
      "  - {name: conv, type: conv2d, in_channels: 112, out_channels: 100, kernel: 3, "
      "padding: 1, input: [27, 27]}\n",
      "conv.yaml");
  const perf_model model(*spec_catalog::builtin().find("h100"));
  const advice advised = advise(analyze(net, model, "test"));
  for (const padding_advice &p : advised.padding) {
    INFO(p.layer << " " << to_string(p.pass) << ": " << p.reason);
    if (p.pass == pass::data_grad)
      CHECK(p.padded.n % 9 == 0);
    if (p.pass == pass::weight_grad)
      CHECK(p.padded.k == p.original.k);
    for (const size_change &change : p.changes)
      CHECK(change.size != "K");
  }
}

TEST_CASE("padding a model config's GEMM names the config's field: GPT-2's LM head pads "
          "vocab_size 50257; under --tp 2 a GPU's share is no field's value and stays N") {
  const gpu_spec &h100 = *spec_catalog::builtin().find("h100");
  const auto lm_head = [&](int gpus) {
    config_options options;
    options.tensor_parallel = gpus;
    const network net = load_model_config(config_path("gpt2.json"), options);
    const advice advised = advise(analyze(net, perf_model(h100), "test"));
    const auto head = std::find_if(advised.padding.begin(), advised.padding.end(),
                                   [](const padding_advice &p) { return p.layer == "lm_head"; });
    REQUIRE(head != advised.padding.end());
    REQUIRE(head->changes.size() == 1);
    return *head;
  };
  const padding_advice whole = lm_head(1);
  CHECK(whole.changes[0].size == "vocab_size");
  CHECK(whole.changes[0].from == 50257);
  CHECK(whole.changes[0].to == whole.padded.n);
  CHECK(contains(whole.reason, "vocab_size=50257 breaks"));
  const padding_advice share = lm_head(2);
  CHECK(share.changes[0].size == "N");
  CHECK(share.changes[0].from == 25129);
}
