// SPDX-License-Identifier: Apache-2.0
// Does it fit: weights, KV cache and activations, totalled by hand for two models on two GPUs.
#include "roofline/analysis.hpp"
#include "roofline/comparison.hpp"
#include "roofline/lowering.hpp"
#include "roofline/memory_fit.hpp"
#include "roofline/model_config.hpp"
#include "roofline/network.hpp"
#include "roofline/spec_catalog.hpp"

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
