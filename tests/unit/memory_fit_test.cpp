// SPDX-License-Identifier: Apache-2.0
// Does it fit: weights, KV cache and activations, totalled by hand for two models on two GPUs.
#include "roofline/analysis/analysis.hpp"
#include "roofline/analysis/lowering.hpp"
#include "roofline/analysis/memory_fit.hpp"
#include "roofline/compare/comparison.hpp"
#include "roofline/input/model_config.hpp"
#include "roofline/input/network.hpp"
#include "roofline/model/spec_catalog.hpp"

#include "test_support.hpp"

#include <doctest/doctest.h>

#include <limits>
#include <string>

using namespace roofline;

namespace {

analysis decode_step(const std::string &config, const std::string &gpu) {
  config_options decode;
  decode.phase = inference_phase::decode;
  decode.batch = 16;
  decode.kv_len = 4096;
  // A serving engine's kernels: no grouped keys and values copied out per query head.
  decode.glue = glue_style::fused;
  const network net = load_model_config(roofline::test::config_path(config), decode);
  // No reserve: the totals below are against the datasheet's memory, by hand.
  return analyze(net, perf_model(spec_catalog::builtin().resolve(gpu)), "--gpu " + gpu, 0.0);
}

} // namespace

TEST_CASE("Llama-2-7B decode, batch 16, 4096 cached tokens: fits an H100, not a T4") {
  const analysis h100 = decode_step("llama-2-7b.json", "h100");
  REQUIRE(h100.memory);
  const memory_use &m = *h100.memory;
  // 32 × (4 · 4096² + 3 · 4096 · 11008) + the LM head and the embedding table, 4096 · 32000
  // each: 6,738,149,376 parameters of 2 bytes.
  CHECK(m.weights_bytes == 13'476'298'752.0);
  // K and V: 2 × 32 layers × 32 heads × 128 × 4096 tokens × 16 sequences × 2 bytes.
  CHECK(m.kv_cache_bytes == 34'359'738'368.0);
  // The largest op's own tensors: the LM head's input and logits, 16 × (4096 + 32000) × 2.
  CHECK(m.activation_bytes == 1'155'072.0);
  CHECK(m.total_bytes == 47'837'192'192.0);
  // What an "80 GB" H100 reports: 81,559 MiB.
  CHECK(m.capacity_bytes == 81559.0 * 1024 * 1024);
  CHECK(m.fits);
  // Per sequence: 34,360,893,440 / 16 bytes; (85,521,661,952 − 13,476,298,752) / 2,147,555,840
  // = 33.55.
  REQUIRE(m.max_batch);
  CHECK(*m.max_batch == 33);

  const analysis t4 = decode_step("llama-2-7b.json", "t4");
  REQUIRE(t4.memory);
  CHECK(t4.memory->capacity_bytes == 15360.0 * 1024 * 1024);
  CHECK_FALSE(t4.memory->fits);
  CHECK(t4.memory->total_bytes == 47'837'192'192.0);
  CHECK(*t4.memory->max_batch == 1);
}

TEST_CASE("Llama-3-8B decode: a quarter of the cache, an H100 holds it and an A10 does not") {
  const analysis h100 = decode_step("llama-3-8b.json", "h100");
  REQUIRE(h100.memory);
  const memory_use &m = *h100.memory;
  // 32 × (2 · 4096² + 2 · 4096 · 1024 + 3 · 4096 · 14336) + 2 · 4096 · 128256: 8,029,995,008
  // parameters of 2 bytes (bf16).
  CHECK(m.weights_bytes == 16'059'990'016.0);
  // 2 × 32 × 8 kv heads × 128 × 4096 × 16 × 2: a quarter of 32 heads' cache.
  CHECK(m.kv_cache_bytes == 8'589'934'592.0);
  CHECK(m.activation_bytes == 16.0 * (4096 + 128256) * 2);
  CHECK(m.fits);
  // The longest cache at batch 16: (81,559 MiB − weights − activations) / (131,072 B × 16) per
  // token.
  REQUIRE(m.max_kv_len);
  CHECK(*m.max_kv_len ==
        static_cast<std::int64_t>((81559.0 * 1024 * 1024 - 16'059'990'016.0 - 4'227'072.0) /
                                  (131'072.0 * 16)));
  // An A10's 23,028 MiB (24.15e9 B, ECC on): 16.06 + 8.59 + 0.004 = 24.65 GB does not fit; 15
  // sequences would: (24,146,608,128 − 16,059,990,016) / ((8,589,934,592 + 4,227,072) / 16)
  // = 15.05.
  const analysis a10 = decode_step("llama-3-8b.json", "a10");
  REQUIRE(a10.memory);
  CHECK(a10.memory->capacity_bytes == 23028.0 * 1024 * 1024);
  CHECK_FALSE(a10.memory->fits);
  REQUIRE(a10.memory->max_batch);
  CHECK(*a10.memory->max_batch == 15);
}

TEST_CASE("compare names the GPUs a network does not fit, and never picks one") {
  compare_request request;
  config_options decode;
  decode.phase = inference_phase::decode;
  decode.batch = 16;
  decode.kv_len = 4096;
  request.source = load_model_config(roofline::test::config_path("llama-2-7b.json"), decode);
  request.gpus = {"h100", "b200"};
  const comparison fits_both = compare_gpus(request).front();
  CHECK(fits_both.verdict.fastest == "b200");
  request.gpus = {"h100", "a10"};
  const comparison one = compare_gpus(request).front();
  CHECK(one.verdict.fastest == "h100-sxm5");
  CHECK(one.verdict.text.find("Does not fit: a10 (47.8 GB needed of 21.7 GB)") !=
        std::string::npos);
  request.gpus = {"t4", "a10"};
  const comparison none = compare_gpus(request).front();
  CHECK(none.verdict.fastest.empty());
  CHECK(none.verdict.text.find("fits on none of these GPUs") != std::string::npos);
  // The only GPU that fits is slower than the baseline, which does not: said as such.
  request.gpus = {"a10", "h100"};
  request.batches = {20}; // 13.5 + 20 × 2.15 GB: 56 GB
  const comparison slower = compare_gpus(request).front();
  CHECK(slower.verdict.fastest == "h100-sxm5");
}

TEST_CASE("a network whose activations hardly grow with the batch: the largest batch is 2^63 − 1, "
          "not a wrapped negative one") {
  // A fixed matmul at batch 2^63 − 1: 16 KiB per 2^63 samples. Once cast from a double past 2^63
  // (undefined) and reported as −9223372036854775808.
  const network net = parse_network("name: fixed\nbatch: 9223372036854775807\nlayers:\n"
                                    "  - {name: mm, type: matmul, m: 64, n: 64, k: 64}\n",
                                    "fixed.yaml");
  const memory_use m = memory_of(net, lower(net), 80e9);
  CHECK(m.fits);
  REQUIRE(m.max_batch);
  CHECK(*m.max_batch == std::numeric_limits<std::int64_t>::max());
}

// ------------------------------------------------------------------ training

namespace {

/// Llama-2-7B's training step as `options` (mode training added) say, against `capacity` bytes.
memory_use training_memory(config_options options, double capacity = 1e12) {
  options.mode = run_mode::training;
  const network net = load_model_config(roofline::test::config_path("llama-2-7b.json"), options);
  return memory_of(net, lower(net), capacity);
}

// Llama-2-7B's parameters by hand (hidden 4096, 32 layers, MLP 11008, vocabulary 32000, the LM
// head not tied to the embeddings):
//   embeddings              32000 · 4096                 =   131,072,000
//   per layer: q, k, v, o   4 · 4096²                    =    67,108,864
//              gate, up, down 3 · 4096 · 11008           =   135,266,304
//              two RMSNorms 2 · 4096                     =         8,192
//   32 layers               32 · 202,383,360             = 6,476,267,520
//   final norm              4096                         =         4,096
//   LM head                 4096 · 32000                 =   131,072,000
//   total                                                = 6,738,415,616 (the published 6.74B)
// The model counts no norm weights (266,240 parameters, 0.004%): P = 6,738,149,376.
constexpr double llama2_parameters = 6'738'149'376.0;

} // namespace

TEST_CASE("optimizer state per parameter: mixed precision's fp32 master copy and fp32 moments") {
  CHECK(optimizer_bytes_per_parameter(optimizer::adamw, 2) == 12); // ZeRO's K = 12
  CHECK(optimizer_bytes_per_parameter(optimizer::sgd, 2) == 8);
  // fp32 weights are their own master copy.
  CHECK(optimizer_bytes_per_parameter(optimizer::adamw, 4) == 8);
  CHECK(optimizer_bytes_per_parameter(optimizer::sgd, 4) == 4);
  CHECK(optimizer_bytes_per_parameter(optimizer::adamw, 1) == 12); // fp8 weights
}

TEST_CASE("Llama-2-7B training with AdamW: 16 bytes a parameter, ZeRO's 16Ψ (108 GB)") {
  config_options options;
  const memory_use m = training_memory(options);
  CHECK(m.weights_bytes == 2 * llama2_parameters);    // fp16, as the config says
  CHECK(m.gradient_bytes == 2 * llama2_parameters);   // in the weights' precision
  CHECK(m.optimizer_bytes == 12 * llama2_parameters); // fp32 master + two fp32 moments
  const double states = m.weights_bytes + m.gradient_bytes + m.optimizer_bytes;
  CHECK(states == 107'810'390'016.0); // 16 P: ZeRO §3.1 gives 120 GB for Ψ = 7.5B
  CHECK(m.kv_cache_bytes == 0);
  REQUIRE(m.optimizer);
  CHECK(*m.optimizer == optimizer::adamw);
  REQUIRE(m.recompute);
  CHECK(*m.recompute == recomputation::none);
  CHECK(m.total_bytes == states + m.activation_bytes);

  // The states do not grow with the micro-batch, the activations do, in proportion.
  options.batch = 4;
  const memory_use four = training_memory(options);
  CHECK(four.optimizer_bytes == m.optimizer_bytes);
  CHECK(four.activation_bytes == doctest::Approx(4 * m.activation_bytes));

  // An 80 GB H100 holds not even the states; 200 GB hold (200e9 − 16 P) / activations.
  CHECK_FALSE(training_memory({}, 85e9).max_batch);
  CHECK_FALSE(training_memory({}, 85e9).fits);
  const memory_use roomy = training_memory({}, 200e9);
  REQUIRE(roomy.max_batch);
  CHECK(*roomy.max_batch ==
        static_cast<std::int64_t>((200e9 - 16 * llama2_parameters) / m.activation_bytes));
}

TEST_CASE("SGD with momentum keeps 8 bytes a parameter; tensor parallelism shares every state") {
  config_options sgd;
  sgd.optimizer = optimizer::sgd;
  const memory_use m = training_memory(sgd);
  CHECK(m.optimizer_bytes == 8 * llama2_parameters);
  REQUIRE(m.optimizer);
  CHECK(*m.optimizer == optimizer::sgd);
  // Every weight matrix and the vocabulary split evenly over 2 GPUs: each holds half of each.
  config_options tp;
  tp.tensor_parallel = 2;
  const memory_use half = training_memory(tp);
  CHECK(half.weights_bytes == llama2_parameters);
  CHECK(half.gradient_bytes == llama2_parameters);
  CHECK(half.optimizer_bytes == 6 * llama2_parameters);
}

TEST_CASE("full recomputation keeps each block's input and one block's results: more fits") {
  config_options none, full;
  full.recompute = recomputation::full;
  const memory_use kept = training_memory(none), recomputed = training_memory(full);
  // Outside the 32 blocks, kept either way: the embedding's and the final norm's 2048 × 4096
  // results, and the logits and the loss's softmax, 2048 × 32000 each, at 2 bytes.
  const double outside = 2.0 * 2048 * 4096 * 2 + 2 * 2048.0 * 32000 * 2;
  const double blocks = kept.activation_bytes - outside; // 32 blocks' results
  // Each block's input (2048 × 4096 × 2 bytes) kept 32 times, and one block's results.
  const double input = 2048.0 * 4096 * 2;
  CHECK(recomputed.activation_bytes == doctest::Approx(32 * input + blocks / 32 + outside));
  CHECK(recomputed.activation_bytes < kept.activation_bytes / 4);
  CHECK(recomputed.optimizer_bytes == kept.optimizer_bytes);
  const memory_use a = training_memory(none, 200e9), b = training_memory(full, 200e9);
  REQUIRE(a.max_batch);
  REQUIRE(b.max_batch);
  CHECK(*b.max_batch > 4 * *a.max_batch);
}

TEST_CASE("a training network in YAML counts gradients and optimizer state the same way") {
  const char *const yaml = "name: mlp\nprecision: bf16\nbatch: 8\nmode: training\n"
                           "optimizer: sgd\nrecompute: full\nlayers:\n"
                           "  - repeat: 4\n    name: block\n    layers:\n"
                           "      - {name: fc, type: linear, in: 1024, out: 1024}\n"
                           "      - {name: act, type: relu}\n";
  const network net = parse_network(yaml, "mlp.yaml");
  CHECK(net.optimizer == optimizer::sgd);
  CHECK(net.recompute == recomputation::full);
  const memory_use m = memory_of(net, lower(net), 80e9);
  const double parameters = 4.0 * 1024 * 1024;
  CHECK(m.weights_bytes == 2 * parameters);
  CHECK(m.gradient_bytes == 2 * parameters);
  CHECK(m.optimizer_bytes == 8 * parameters);
  // 4 blocks' inputs (8 × 1024 bf16 each) and one block's fc and relu results.
  CHECK(m.activation_bytes == 4 * 8 * 1024 * 2 + 2 * 8 * 1024 * 2);
  // Inference counts neither.
  const network served = parse_network(
      "name: mlp\nlayers:\n  - {name: fc, type: linear, in: 1024, out: 1024}\n", "mlp.yaml");
  const memory_use inference = memory_of(served, lower(served), 80e9);
  CHECK(inference.gradient_bytes == 0);
  CHECK(inference.optimizer_bytes == 0);
  CHECK_FALSE(inference.optimizer);
  CHECK_FALSE(inference.recompute);
  CHECK_THROWS_WITH_AS(
      parse_network("name: mlp\noptimizer: sgd\nlayers:\n  - {name: fc, type: linear, in: 8, "
                    "out: 8}\n",
                    "mlp.yaml"),
      doctest::Contains("`optimizer` is a training step's: give `mode: training`"), input_error);
  CHECK_THROWS_WITH_AS(
      parse_network("name: mlp\nmode: training\nrecompute: some\nlayers:\n  - {name: fc, type: "
                    "linear, in: 8, out: 8}\n",
                    "mlp.yaml"),
      doctest::Contains("`recompute` must be `none` or `full`, got `some`"), input_error);
}

TEST_CASE("--memory-reserve: the reserve is kept back from the capacity; by default 10% of it, so "
          "a step with a few hundred MB spare does not fit") {
  const analysis exact = decode_step("llama-2-7b.json", "h100");
  const memory_use &whole = *exact.memory;
  CHECK(whole.reserve_bytes == 0);
  // Reserve all but 0.28 GB of what the step leaves: it still fits; 0.28 GB more, it does not.
  const network &net = exact.network;
  const double spare = whole.capacity_bytes - whole.total_bytes;
  const std::vector<op> ops = lower(net);
  CHECK(memory_of(net, ops, whole.capacity_bytes, spare - 0.28e9).fits);
  const memory_use tight = memory_of(net, ops, whole.capacity_bytes, spare + 0.28e9);
  CHECK_FALSE(tight.fits);
  CHECK(tight.reserve_bytes == spare + 0.28e9);
  CHECK(tight.usable_bytes() == whole.capacity_bytes - tight.reserve_bytes);
  // The largest batch and cache count the reserve too: (usable − weights) / per sequence.
  const memory_use reserved = memory_of(net, ops, whole.capacity_bytes, 20e9);
  const double per_sequence = (whole.kv_cache_bytes + whole.activation_bytes) / 16;
  CHECK(*reserved.max_batch ==
        static_cast<std::int64_t>((whole.capacity_bytes - 20e9 - whole.weights_bytes) /
                                  per_sequence));
  CHECK(*reserved.max_kv_len < *whole.max_kv_len);
  // analyze()'s default: 10% of the GPU's memory (vLLM's gpu_memory_utilization 0.9).
  const analysis by_default = analyze(net, exact.model, "test");
  CHECK(by_default.memory->reserve_bytes ==
        doctest::Approx(default_memory_reserve_share * whole.capacity_bytes));
  CHECK(memory_reserve_bytes(80e9, std::nullopt) == doctest::Approx(8e9));
  CHECK(memory_reserve_bytes(80e9, 2e9) == 2e9);
}
