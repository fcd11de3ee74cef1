// SPDX-License-Identifier: Apache-2.0
// Model configs (config.json) built into networks: hand-checked shapes for every family shipped in
// examples/configs, grouped-query attention's KV traffic, the YAML they write, and located errors.
#include "roofline/analysis/advisor.hpp"
#include "roofline/analysis/analysis.hpp"
#include "roofline/analysis/lowering.hpp"
#include "roofline/analysis/memory_fit.hpp"
#include "roofline/analysis/report.hpp"
#include "roofline/common/error.hpp"
#include "roofline/input/model_config.hpp"
#include "roofline/input/network.hpp"
#include "roofline/input/network_yaml.hpp"
#include "roofline/model/gemm_model.hpp"
#include "roofline/model/memory_op_model.hpp"
#include "roofline/model/op.hpp"
#include "roofline/model/spec_catalog.hpp"
#include "roofline/output/writers.hpp"

#include "test_support.hpp"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using namespace roofline;
using roofline::test::config_error;
using roofline::test::config_path;
using roofline::test::contains;
using roofline::test::op_named;

namespace {

/// The GEMMs of a network by layer path: (M, N, K, batch_count).
std::map<std::string, std::vector<std::int64_t>> gemms(const network &net) {
  std::map<std::string, std::vector<std::int64_t>> shapes;
  for (const op &o : lower(net))
    if (o.is_gemm())
      shapes[o.layer] = {o.gemm->m, o.gemm->n, o.gemm->k, o.gemm->batch_count, o.count};
  return shapes;
}

/// The JSON report of `net` on an H100 with its advice, flattened (JSON pointer → value), less
/// what says where the network came from: its origin, its notes (a YAML's are comments) and the
/// ops' lines in their files.
std::map<std::string, nlohmann::json> analysis_json(const network &net) {
  const gpu_spec *h100 = spec_catalog::builtin().find("h100");
  REQUIRE(h100 != nullptr);
  const analysis analysed = analyze(net, perf_model(*h100), "--gpu h100");
  std::ostringstream out;
  write_report(assemble_report(analysed, advise(analysed)), output_format::json, out);
  std::map<std::string, nlohmann::json> fields;
  const nlohmann::json flat = nlohmann::json::parse(out.str()).flatten();
  for (const auto &[pointer, value] : flat.items())
    if (!contains(pointer, "origin") && !contains(pointer, "/notes/") &&
        (pointer.size() < 5 || pointer.compare(pointer.size() - 5, 5, "/line") != 0))
      fields.emplace(pointer, value);
  return fields;
}

/// The fields of `b` that differ from `a`'s (at most 5, for the message); "" when none do.
std::string differences(const std::map<std::string, nlohmann::json> &a,
                        const std::map<std::string, nlohmann::json> &b) {
  std::string text;
  int shown = 0;
  for (const auto &[pointer, value] : a)
    if (const auto other = b.find(pointer); other == b.end() || other->second != value)
      if (shown++ < 5)
        text += pointer + ": " + value.dump() + " became " +
                (other == b.end() ? std::string("nothing") : other->second.dump()) + "\n";
  for (const auto &[pointer, value] : b)
    if (a.count(pointer) == 0 && shown++ < 5)
      text += pointer + ": new, " + value.dump() + "\n";
  return text;
}

/// The network `net` emits (to_network_yaml), read back.
network round_trip(const network &net) {
  return parse_network(to_network_yaml(net), "emitted.yaml");
}

} // namespace

TEST_CASE("Llama-2-7B's config builds the network of examples/llama2-7b-prefill.yaml") {
  config_options textbook; // the example writes attention unfused, the glue as eager runs it
  textbook.fused_attention = false;
  textbook.glue = glue_style::eager;
  const network from_config = load_model_config(config_path("llama-2-7b.json"), textbook);
  const network written =
      load_network(std::string(ROOFLINE_SOURCE_DIR) + "/examples/llama2-7b-prefill.yaml");
  const std::vector<op> a = lower(from_config), b = lower(written);
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    INFO(a[i].layer);
    CHECK(a[i].layer == b[i].layer);
    CHECK(a[i].kind == b[i].kind);
    CHECK(a[i].flops == b[i].flops);
    CHECK(a[i].bytes == b[i].bytes);
    CHECK(a[i].count == b[i].count);
    CHECK(a[i].precision == b[i].precision);
  }
  CHECK(contains(from_config.notes.front(), "PyTorch eager runs transformers' code"));
}

TEST_CASE("Llama-3-8B decode: 8 key/value heads, 131,072 bytes of KV cache per token") {
  config_options decode;
  decode.phase = inference_phase::decode;
  decode.kv_len = 4096;
  decode.fused_attention = false;
  decode.glue = glue_style::eager; // q, k and v as transformers runs them: three GEMMs
  const network net = load_model_config(config_path("llama-3-8b.json"), decode);
  CHECK(net.precision == precision::bf16);
  CHECK(net.seq_len == 1);
  const auto g = gemms(net);
  CHECK(g.at("decoder_layer/q_proj") == std::vector<std::int64_t>{1, 4096, 4096, 1, 32});
  CHECK(g.at("decoder_layer/k_proj") == std::vector<std::int64_t>{1, 1024, 4096, 1, 32});
  CHECK(g.at("decoder_layer/v_proj") == std::vector<std::int64_t>{1, 1024, 4096, 1, 32});
  CHECK(g.at("decoder_layer/gate_proj") == std::vector<std::int64_t>{1, 14336, 4096, 1, 32});
  CHECK(g.at("lm_head") == std::vector<std::int64_t>{1, 128256, 4096, 1, 1});
  // Each group of 4 query heads against its key/value head: the cache read once per kv head.
  const auto &qk = g.at("decoder_layer/self_attn/qk");
  const auto &pv = g.at("decoder_layer/self_attn/pv");
  CHECK(qk == std::vector<std::int64_t>{4, 4096, 128, 8, 32});
  CHECK(pv == std::vector<std::int64_t>{4, 128, 4096, 8, 32});
  // K is qk's B (K × N), V is pv's B, 2 bytes each, per layer; over the cache's 4096 tokens and
  // 32 layers: 2 × 32 × 8 × 128 × 2 = 131,072 B per token.
  const std::int64_t per_layer = 2 * (qk[2] * qk[1] * qk[3] + pv[2] * pv[1] * pv[3]);
  CHECK(per_layer / 4096 * 32 == 131'072);
}

TEST_CASE("every family's shapes, by hand") {
  SUBCASE("Mistral 7B: 8 kv heads of 128") {
    config_options eager;
    eager.glue = glue_style::eager;
    const auto g = gemms(load_model_config(config_path("mistral-7b.json"), eager));
    CHECK(g.at("decoder_layer/k_proj") == std::vector<std::int64_t>{2048, 1024, 4096, 1, 32});
    CHECK(g.at("decoder_layer/down_proj") == std::vector<std::int64_t>{2048, 4096, 14336, 1, 32});
  }
  SUBCASE("Qwen2 7B: 28 heads of 3584 / 28 = 128, 4 kv heads") {
    config_options textbook;
    textbook.fused_attention = false;
    textbook.glue = glue_style::eager;
    const auto g = gemms(load_model_config(config_path("qwen2-7b.json"), textbook));
    CHECK(g.at("decoder_layer/q_proj") == std::vector<std::int64_t>{2048, 3584, 3584, 1, 28});
    CHECK(g.at("decoder_layer/k_proj") == std::vector<std::int64_t>{2048, 512, 3584, 1, 28});
    CHECK(g.at("decoder_layer/self_attn/qk") ==
          std::vector<std::int64_t>{2048 * 7, 2048, 128, 4, 28});
    CHECK(g.at("lm_head") == std::vector<std::int64_t>{2048, 152064, 3584, 1, 1});
  }
  SUBCASE("Gemma 7B: head_dim 256, so 16 heads are 4096 wide on a 3072 hidden size") {
    config_options textbook;
    textbook.fused_attention = false;
    textbook.glue = glue_style::eager;
    const auto g = gemms(load_model_config(config_path("gemma-7b.json"), textbook));
    CHECK(g.at("decoder_layer/q_proj") == std::vector<std::int64_t>{2048, 4096, 3072, 1, 28});
    CHECK(g.at("decoder_layer/o_proj") == std::vector<std::int64_t>{2048, 3072, 4096, 1, 28});
    CHECK(g.at("decoder_layer/self_attn/qk") == std::vector<std::int64_t>{2048, 2048, 256, 16, 28});
  }
  SUBCASE("GPT-2: one c_attn of 3 × 768, a plain MLP of 4 × 768, no torch_dtype") {
    const network net = load_model_config(config_path("gpt2.json"));
    const auto g = gemms(net);
    // Its 1024 positions, not the default 2048 tokens (which it cannot read), said in a note.
    CHECK(g.at("decoder_layer/c_attn") == std::vector<std::int64_t>{1024, 2304, 768, 1, 12});
    CHECK(g.at("decoder_layer/up_proj") == std::vector<std::int64_t>{1024, 3072, 768, 1, 12});
    CHECK(g.count("decoder_layer/gate_proj") == 0);
    CHECK(net.precision == precision::fp16);
    CHECK(std::any_of(net.notes.begin(), net.notes.end(),
                      [](const std::string &note) { return contains(note, "fp16 assumed"); }));
    CHECK(std::any_of(net.notes.begin(), net.notes.end(), [](const std::string &note) {
      return contains(note, "the step is 1024 tokens, the model's context (`n_positions` is "
                            "1024), not the default 2048");
    }));
  }
  SUBCASE("BERT base: an encoder, bidirectional, no LM head, no decode") {
    config_options options;
    options.seq_len = 512;
    const network net = load_model_config(config_path("bert-base-uncased.json"), options);
    const auto g = gemms(net);
    CHECK(g.at("layer/q_proj") == std::vector<std::int64_t>{512, 768, 768, 1, 12});
    CHECK(g.count("lm_head") == 0);
    options.phase = inference_phase::decode;
    CHECK_THROWS_WITH_AS(load_model_config(config_path("bert-base-uncased.json"), options),
                         doctest::Contains("is an encoder"), input_error);
  }
}

TEST_CASE("config_options::last_logits keeps the LM head to the last position in prefill") {
  config_options options;
  options.glue = glue_style::eager; // q_proj a GEMM of its own
  options.batch = 4;
  options.last_logits = true;
  const auto g = gemms(load_model_config(config_path("llama-2-7b.json"), options));
  CHECK(g.at("lm_head") == std::vector<std::int64_t>{4, 32000, 4096, 1, 1});
  CHECK(g.at("decoder_layer/q_proj")[0] == 4 * 2048);
}

TEST_CASE("the YAML a config writes builds the same network") {
  config_options decode;
  decode.phase = inference_phase::decode;
  const network net = load_model_config(config_path("qwen2-7b.json"), decode);
  const std::string yaml = to_network_yaml(net);
  CHECK(contains(yaml, "kv_heads: 4"));
  const network read = parse_network(yaml, "qwen2.yaml");
  CHECK(gemms(read) == gemms(net));
  CHECK(read.precision == net.precision);
}

TEST_CASE("bad configs are refused with the field and its place") {
  CHECK(contains(config_error("{\n  \"model_type\": \"llamma\",\n  \"hidden_size\": 8\n}"),
                 "bad.json:2:17: config: unknown `model_type` `llamma` (did you mean `llama`?)"));
  CHECK(contains(config_error("{\"model_type\": \"llama\", \"num_hidden_layers\": 2}"),
                 "missing `hidden_size`"));
  CHECK(contains(config_error("{\n\"model_type\": \"llama\", \"hidden_size\": \"big\"}"),
                 "bad.json:2:39"));
  CHECK(contains(config_error("{\"model_type\": \"llama\",\n \"num_local_experts\": 8}"),
                 "bad.json:2:23: config: `num_local_experts` gives experts, but `model_type` "
                 "`llama` has none"));
  CHECK(contains(config_error("{\"model_type\": \"deepseek_v3\", \"kv_lora_rank\": 512}"),
                 "multi-head latent attention"));
  CHECK(contains(config_error("{\"model_type\": \"mixtral\", \"hidden_size\": 64, "
                              "\"num_hidden_layers\": 2, \"num_attention_heads\": 4, "
                              "\"intermediate_size\": 8, \"vocab_size\": 8, "
                              "\"num_local_experts\": 8, \"num_experts_per_tok\": 9}"),
                 "`num_experts_per_tok` = 9 is more than the 8 experts"));
  CHECK(contains(config_error("{\"model_type\": \"mixtral\", \"hidden_size\": 64, "
                              "\"num_hidden_layers\": 2, \"num_attention_heads\": 4, "
                              "\"intermediate_size\": 8, \"vocab_size\": 8, "
                              "\"num_local_experts\": 8}"),
                 "missing `num_experts_per_tok`"));
  CHECK(contains(
      config_error("{\"model_type\": \"llama\", \"hidden_size\": 4096, \"num_hidden_layers\": "
                   "2, \"num_attention_heads\": 32, \"num_key_value_heads\": 5, "
                   "\"intermediate_size\": 8, \"vocab_size\": 8}"),
      "must divide the 32 attention heads"));
  CHECK(contains(config_error("{\"model_type\": \"llama\", \"torch_dtype\": \"float8\"}"),
                 "`torch_dtype` `float8`"));
  CHECK(contains(config_error("{\"model_type\": \"llama\",\n  \"hidden_size\": 4096,,}"),
                 "bad.json:2:"));
  CHECK(contains(config_error("[1, 2]"), "expected a model config"));
}

TEST_CASE("fused attention by hand: Llama-3-8B, prefill (causal) and decode (the whole cache)") {
  // Prefill of 2048 tokens, batch 2: 32 heads of 128, 8 key/value heads. Causal: each query
  // attends to the keys up to its own, 2048 · 2049 / 2 = 2,098,176 pairs per head.
  config_options prefill;
  prefill.batch = 2;
  const std::vector<op> ops = lower(load_model_config(config_path("llama-3-8b.json"), prefill));
  const auto attention =
      std::find_if(ops.begin(), ops.end(), [](const op &o) { return o.is_fused_attention(); });
  REQUIRE(attention != ops.end());
  CHECK(attention->layer == "decoder_layer/self_attn");
  CHECK(attention->count == 32);
  CHECK(attention->flops == 4LL * 2 * 32 * 2'098'176 * 128);
  // Q read and O written (2 · 32 · 2048 · 128 each), K and V read (2 · 8 · 2048 · 128 each), bf16.
  CHECK(attention->bytes == 2 * (2 * (2LL * 32 * 2048 * 128) + 2 * (2LL * 8 * 2048 * 128)));
  CHECK(std::none_of(ops.begin(), ops.end(), [](const op &o) { return o.kind == "softmax"; }));

  // Decode against 4096 cached tokens, batch 16: no mask; the cache is read whole, each key/value
  // head once, as a serving engine's kernel reads it (--glue fused; eager: the next test case).
  config_options decode;
  decode.phase = inference_phase::decode;
  decode.batch = 16;
  decode.kv_len = 4096;
  decode.glue = glue_style::fused;
  const std::vector<op> step = lower(load_model_config(config_path("llama-3-8b.json"), decode));
  const auto read =
      std::find_if(step.begin(), step.end(), [](const op &o) { return o.is_fused_attention(); });
  REQUIRE(read != step.end());
  CHECK(read->flops == 4LL * 16 * 32 * 4096 * 128);
  // bytes = 2 × kv_heads × head_dim × kv_len × batch × 2 B (the cache), plus Q and O.
  const std::int64_t cache = 2LL * 8 * 128 * 4096 * 16 * 2;
  CHECK(read->bytes == cache + 2 * (16LL * 32 * 128 * 2));

  // As transformers decodes into a StaticCache (--glue eager): repeat_kv copies the 8 heads'
  // keys and values out to all 32 (reads a quarter of what it writes), and the kernel reads 32.
  decode.glue = glue_style::eager;
  const std::vector<op> eager = lower(load_model_config(config_path("llama-3-8b.json"), decode));
  const op &expand = op_named(eager, "decoder_layer/self_attn/repeat_kv");
  CHECK(expand.kind == "copy");
  CHECK(expand.elements == 2LL * 16 * 4096 * 128 * 32);
  CHECK(expand.bytes == cache + cache * 4);
  const op &expanded = op_named(eager, "decoder_layer/self_attn");
  CHECK(expanded.attention->kv_heads == 32);
  CHECK(expanded.bytes == 4 * cache + 2 * (16LL * 32 * 128 * 2));
  CHECK(expanded.flops == read->flops);
}

TEST_CASE("Mixtral-8x7B by hand: top-2 of 8 experts, the experts a step reaches, every weight") {
  // Decode, batch 1: one token, two experts reached exactly; each runs a 1-row GEMM on its own
  // weights (4096 → 14336), bf16.
  config_options decode;
  decode.phase = inference_phase::decode;
  const network one = load_model_config(config_path("mixtral-8x7b.json"), decode);
  const std::vector<op> step = lower(one);
  const op &gate = op_named(step, "decoder_layer/moe/experts/gate");
  CHECK(gate.gemm->m == 1);
  CHECK(gate.gemm->n == 14336);
  CHECK(gate.gemm->k == 4096);
  CHECK(gate.gemm->batch_count == 2);
  CHECK(gate.count == 32);
  CHECK(gate.flops == 2LL * 2 * 14336 * 4096);
  CHECK(gate.bytes == 2 * (2LL * 4096 + 2LL * 4096 * 14336 + 2LL * 14336));
  CHECK(op_named(step, "decoder_layer/moe/router").gemm->n == 8);
  CHECK(std::none_of(step.begin(), step.end(),
                     [](const op &o) { return o.layer == "decoder_layer/down_proj"; }));

  // Prefill of 2048 tokens: 4096 routed rows over all 8 experts, 512 each.
  const std::vector<op> prompt = lower(load_model_config(config_path("mixtral-8x7b.json")));
  const op &down = op_named(prompt, "decoder_layer/moe/experts/down");
  CHECK(down.gemm->m == 512);
  CHECK(down.gemm->n == 4096);
  CHECK(down.gemm->k == 14336);
  CHECK(down.gemm->batch_count == 8);
  CHECK(down.flops == 2LL * 4096 * 4096 * 14336);

  // Every expert is held: per layer q and o 4096², k and v 4096 × 1024, the router 4096 × 8,
  // 8 experts of 3 × 4096 × 14336; the LM head and the embedding table 32000 × 4096 each.
  const double per_layer =
      2.0 * 4096 * 4096 + 2.0 * 4096 * 1024 + 4096.0 * 8 + 8.0 * 3 * 4096 * 14336;
  const double parameters = 32 * per_layer + 2.0 * 32000 * 4096;
  CHECK(parameters == doctest::Approx(46.70e9).epsilon(0.001)); // Mixtral's 46.7B
  CHECK(memory_of(one, step, 141e9).weights_bytes == doctest::Approx(2 * parameters));
}

TEST_CASE("uniform routing: the experts a batch reaches") {
  moe_layer moe;
  moe.experts = 8;
  moe.top_k = 2;
  CHECK(expected_experts_reached(moe, 1) == doctest::Approx(2));
  CHECK(expected_experts_reached(moe, 2) == doctest::Approx(8 * (1 - 0.75 * 0.75)));
  CHECK(experts_reached(moe, 1) == 2);
  CHECK(experts_reached(moe, 2) == 4); // 3.5, rounded up
  CHECK(experts_reached(moe, 1'000'000) == 8);
}

TEST_CASE("uniform routing under expert parallelism: the experts of one GPU a step reaches") {
  moe_layer moe;
  moe.experts = 8;
  moe.top_k = 2;
  moe.expert_parallel = 4; // 2 experts on each GPU
  // Data-parallel attention: the 4 GPUs' tokens (1 each) reach 8 · (1 − (1 − 2/8)^4) =
  // 8 · (1 − 0.3164) = 5.47 of the 8 experts, a quarter of them on this GPU: 1.37, rounded up 2.
  CHECK(experts_reached(moe, 1) == 2);
  // Many tokens: every expert reached, and this GPU holds 2 of them.
  CHECK(experts_reached(moe, 1000) == 2);
  // Shared tokens (tensor-parallel attention): the one token's 2 experts, a quarter of them here:
  // ceil(2 / 4) = 1 (not top_k: the other expert is another GPU's).
  moe.sending_ranks = 1;
  CHECK(experts_reached(moe, 1) == 1);
  // 2 shared tokens: 8 · (1 − 0.75²) = 3.5 experts, 0.875 of them here: 1.
  CHECK(experts_reached(moe, 2) == 1);
  // 3: 8 · (1 − 0.75³) = 4.625, 1.16 here: 2.
  CHECK(experts_reached(moe, 3) == 2);
  // 2 of the 4 GPUs bring a token each (a prefill of 2 prompts over 4 ranks): 2 tokens in all,
  // as 2 shared ones: 1.
  moe.sending_ranks = 2;
  CHECK(experts_reached(moe, 1) == 1);
  // 3 tokens each from 2 GPUs: 6 tokens, 8 · (1 − 0.75⁶) = 6.58, 1.65 here: 2.
  CHECK(experts_reached(moe, 3) == 2);
}

TEST_CASE("a GPU's routed rows under expert parallelism by hand: its share of every sending "
          "GPU's routes, rounded up") {
  // 3 tokens × top 2 = 6 routes a sending GPU; 8 GPUs of experts.
  const auto routed = [](const char *senders) {
    const network net = parse_network(
        std::string("name: t\nseq_len: 3\nlayers:\n  - {name: m, type: moe, experts: 8, top_k: 2, "
                    "in: 16, intermediate: 32, expert_parallel: 8") +
            senders + "}\n",
        "t.yaml");
    // The gate's FLOPs: 2 · routed rows · 32 · 16.
    for (const op &o : lower(net))
      if (o.layer == "m/experts/gate")
        return o.flops / (2 * 32 * 16);
    FAIL("no gate GEMM");
    return std::int64_t{0};
  };
  CHECK(routed("") == 6);                   // all 8 send: as many as its own
  CHECK(routed(", sending_ranks: 7") == 6); // 42 / 8 = 5.25, rounded up
  CHECK(routed(", sending_ranks: 4") == 3); // 24 / 8
  CHECK(routed(", sending_ranks: 1") == 1); // 6 / 8, rounded up
  CHECK(routed(", shared_tokens: true") == 1);
}

TEST_CASE("Mixtral decode over 8 GPUs of expert parallelism: one expert each, the tokens sent to "
          "it and back by two all-to-alls a layer") {
  const model_config mixtral = model_config::load(config_path("mixtral-8x7b.json"));
  config_options options;
  options.phase = inference_phase::decode;
  options.batch = 64;
  options.expert_parallel = 8;
  const network net = mixtral.build(options);
  const std::vector<op> ops = lower(net);
  // Each of the 64 tokens' 4096-wide rows to its 2 experts' GPUs, bf16: 64 · 4096 · 2 · 2 bytes
  // a GPU, and the experts' outputs back alike.
  for (const char *name : {"decoder_layer/moe_dispatch", "decoder_layer/moe_combine"}) {
    CAPTURE(name);
    const op &a2a = op_named(ops, name);
    CHECK(a2a.kind == "all_to_all");
    CHECK(a2a.gpus == 8);
    CHECK(a2a.stride == 1);
    CHECK(a2a.count == 32);
    CHECK(a2a.bytes == 64LL * 4096 * 2 * 2);
  }
  const auto at = [&](const std::string &layer) {
    return std::find_if(ops.begin(), ops.end(), [&](const op &o) { return o.layer == layer; }) -
           ops.begin();
  };
  CHECK(at("decoder_layer/moe_dispatch") < at("decoder_layer/moe/router"));
  CHECK(at("decoder_layer/moe/experts/down") < at("decoder_layer/moe_combine"));
  // Every GPU's 64 tokens × 2 routes come to its one expert on average (the 8 GPUs' 512 tokens
  // reach all 8 experts, one here): 128 rows, one expert's weights.
  const op &gate = op_named(ops, "decoder_layer/moe/experts/gate");
  CHECK(gate.gemm->batch_count == 1);
  CHECK(gate.gemm->m == 128);
  CHECK(gate.gemm->n == 14336);
  CHECK(gate.gemm->k == 4096);
  CHECK(gate.flops == 2LL * 128 * 14336 * 4096);
  const op &down = op_named(ops, "decoder_layer/moe/experts/down");
  CHECK(down.gemm->m == 128);
  CHECK(down.gemm->k == 14336);
  // One expert a layer held instead of 8: 7 × 3 × 4096 × 14336 × 2 bytes × 32 layers fewer.
  options.expert_parallel = 1;
  const network whole = mixtral.build(options);
  CHECK(memory_of(whole, lower(whole), 141e9).weights_bytes -
            memory_of(net, ops, 141e9).weights_bytes ==
        doctest::Approx(7.0 * 3 * 4096 * 14336 * 2 * 32));
  CHECK(7.0 * 3 * 4096 * 14336 * 2 * 32 == 78'920'024'064.0);
}

TEST_CASE("Mixtral's experts over its tensor-parallel group of 4: whole experts, the shared "
          "tokens' routes split, no all-to-all") {
  config_options options;
  options.phase = inference_phase::decode;
  options.batch = 64;
  options.tensor_parallel = 4;
  options.expert_parallel = 4;
  const std::vector<op> ops = lower(load_model_config(config_path("mixtral-8x7b.json"), options));
  CHECK(std::none_of(ops.begin(), ops.end(), [](const op &o) { return o.kind == "all_to_all"; }));
  // Each expert whole (14336 wide, not 14336 / 4); each GPU runs its 2 experts' quarter of the
  // 64 tokens × 2 routes: 32 rows, 16 an expert.
  const op &gate = op_named(ops, "decoder_layer/moe/experts/gate");
  CHECK(gate.gemm->n == 14336);
  CHECK(gate.gemm->batch_count == 2);
  CHECK(gate.gemm->m == 16);
  CHECK(gate.flops == 2LL * 32 * 14336 * 4096);
  CHECK(gate.scaling.sending_ranks == 1);
  CHECK(gate.scaling.expert_parallel == 4);
  const op &down = op_named(ops, "decoder_layer/moe/experts/down");
  CHECK(down.gemm->k == 14336);
  CHECK(down.gemm->n == 4096);
  CHECK(down.flops == 2LL * 32 * 4096 * 14336);
  // The attention still split 4 ways, the experts' outputs summed by the MLP's all-reduce.
  CHECK(op_named(ops, "decoder_layer/mlp_all_reduce").gpus == 4);
  CHECK(op_named(ops, "decoder_layer/o_proj").gemm->k == 1024); // 4096 / 4
}

TEST_CASE("expert parallelism is refused for a dense model, a degree that does not divide the "
          "experts, one other than the tensor-parallel group's, and one data parallelism is no "
          "multiple of") {
  const auto refused = [](const char *config, const config_options &options) {
    try {
      (void)load_model_config(config_path(config), options);
    } catch (const input_error &e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  config_options options;
  options.expert_parallel = 2;
  CHECK(contains(refused("llama-2-7b.json", options), "has no mixture of experts"));
  options.expert_parallel = 3;
  CHECK(contains(refused("mixtral-8x7b.json", options), "does not divide the model's 8 experts"));
  options.expert_parallel = 4;
  options.tensor_parallel = 2;
  CHECK(contains(refused("mixtral-8x7b.json", options),
                 "config_options::expert_parallel 4 with config_options::tensor_parallel 2"));
  options.tensor_parallel = 1;
  options.mode = run_mode::training;
  options.data_parallel = 2;
  CHECK(contains(refused("mixtral-8x7b.json", options),
                 "config_options::data_parallel 2 is not a multiple of it"));
  options.data_parallel = 8; // 2 copies of each expert
  CHECK(refused("mixtral-8x7b.json", options) == "accepted");
}

TEST_CASE("training Mixtral at TP 2 and EP 2 as Megatron lays it out: each expert split by TP, "
          "the experts carved from data parallelism, two all-to-alls a layer each way") {
  config_options options;
  options.mode = run_mode::training;
  options.batch = 1;
  options.seq_len = 1024;
  options.tensor_parallel = 2;
  options.expert_parallel = 2;
  options.data_parallel = 4;
  options.sequence_parallel = true;
  const network net = load_model_config(config_path("mixtral-8x7b.json"), options);
  const std::vector<op> ops = lower(net);
  // 4 of the 8 experts on each GPU, each half of its 14336 width.
  const op &up = op_named(ops, "decoder_layer/moe/experts/up");
  CHECK(up.gemm->n == 7168);
  CHECK(up.gemm->batch_count <= 4);
  // Each rank's 512 tokens (sequence parallel: 1024 / 2) × top_k 2 × 4096, in bf16, to the
  // other rank of its expert group, a tensor-parallel group (2 ranks) away: forward and back.
  int exchanges = 0;
  for (const op &o : ops)
    if (o.kind == "all_to_all") {
      ++exchanges;
      CHECK(o.gpus == 2);
      CHECK(o.stride == 2);
      CHECK(o.bytes == 1024LL * 2048 * 2 * 2);
    }
  CHECK(exchanges == 4); // dispatch and combine, and their gradients
  CHECK(net.data_parallel.expert_parallel == 2);
  CHECK(net.data_parallel.stride == 2);
}

TEST_CASE("Qwen1.5-MoE: 4 of 60 experts and a shared expert every token runs") {
  config_options options;
  options.batch = 4;
  options.seq_len = 1024;
  const std::vector<op> ops =
      lower(load_model_config(config_path("qwen1.5-moe-a2.7b.json"), options));
  const op &up = op_named(ops, "decoder_layer/moe/experts/up");
  CHECK(up.gemm->m == 274); // 16,384 routed rows over 60 experts, rounded up
  CHECK(up.gemm->n == 1408);
  CHECK(up.gemm->batch_count == 60);
  CHECK(op_named(ops, "decoder_layer/shared_down_proj").gemm->k == 5632);
  CHECK(op_named(ops, "decoder_layer/shared_expert_gate").gemm->n == 1);
}

TEST_CASE("Mistral's sliding window: a prompt past the window, and decoding beyond it") {
  // A prompt of 8192 tokens under a 4096-token window: query p meets min(p, 4096) keys,
  // 4096 · 4097 / 2 + 4096 · 4096 = 25,167,872 pairs per head.
  config_options prefill;
  prefill.seq_len = 8192;
  const std::vector<op> ops = lower(load_model_config(config_path("mistral-7b.json"), prefill));
  CHECK(op_named(ops, "decoder_layer/self_attn").flops == 4LL * 32 * 25'167'872 * 128);

  // Decoding against 8192 cached tokens reads the window's 4096, and the cache holds no more
  // (each key/value head once: --glue fused).
  config_options decode;
  decode.phase = inference_phase::decode;
  decode.kv_len = 8192;
  decode.glue = glue_style::fused;
  const network net = load_model_config(config_path("mistral-7b.json"), decode);
  const std::vector<op> step = lower(net);
  const op &read = op_named(step, "decoder_layer/self_attn");
  CHECK(read.flops == 4LL * 32 * 4096 * 128);
  CHECK(read.bytes == 2 * (2LL * 8 * 4096 * 128) + 2 * (2LL * 32 * 128));
  const memory_use m = memory_of(net, step, 80e9);
  CHECK(m.kv_cache_bytes == doctest::Approx(32.0 * 2 * 8 * 128 * 4096 * 2));
  CHECK_FALSE(m.max_kv_len.has_value()); // any context fits: the cache stops at the window
  CHECK(contains(to_network_yaml(net), "window: 4096"));
}

TEST_CASE("weight-only int4 by hand: Llama-3-8B's decode reads a quarter of the weight bytes") {
  config_options decode;
  decode.phase = inference_phase::decode;
  decode.kv_len = 4096;
  decode.quantization = quantization::w4a16;
  decode.kv_cache = precision::fp8;
  decode.glue = glue_style::fused; // the kernel reads the fp8 cache's 8 heads
  const network net = load_model_config(config_path("llama-3-8b.json"), decode);
  const std::vector<op> step = lower(net);
  // The engine's QKV GEMM, 4096 × (4096 + 2 · 1024) int4 in groups of 128 along K, an fp16
  // scale each; bf16 activations.
  const op &q = op_named(step, "decoder_layer/qkv_proj");
  const std::int64_t n = 4096 + 2 * 1024;
  REQUIRE(q.gemm->weights.has_value());
  CHECK(q.precision == precision::bf16);
  CHECK(q.precision_label() == "bf16+int4w");
  CHECK(q.bytes == 4096LL * n / 2 + 2LL * n * (4096 / 128) + 2 * (4096 + n));
  CHECK(q.flops == 2LL * 4096 * n);
  // The LM head is not quantized.
  CHECK_FALSE(op_named(step, "lm_head").gemm->weights.has_value());
  // An fp8 cache: keys and values at 1 byte, the query and output at 2.
  const op &attention = op_named(step, "decoder_layer/self_attn");
  CHECK(attention.bytes == 2LL * 8 * 128 * 4096 + 2 * (32LL * 128 * 2));

  // Memory: every block's linear weights at 4 bits plus a 2-byte scale per 128; the LM head and
  // the embedding table (128256 × 4096 each) in bf16; the cache at 1 byte.
  const auto int4 = [](double k, double width) { return k * width / 2 + 2 * width * (k / 128); };
  const double block =
      int4(4096, 4096) * 2 + int4(4096, 1024) * 2 + int4(4096, 14336) * 2 + int4(14336, 4096);
  const memory_use m = memory_of(net, step, 80e9);
  CHECK(m.weights_bytes == doctest::Approx(32 * block + 2.0 * 128256 * 4096 * 2));
  CHECK(m.kv_cache_bytes == doctest::Approx(32.0 * 2 * 8 * 128 * 4096));
  CHECK(contains(to_network_yaml(net), "    weights: int4\n    weight_group: 128"));
  CHECK(contains(to_network_yaml(net), "kv_precision: fp8"));
  CHECK(gemms(parse_network(to_network_yaml(net), "emitted.yaml")) == gemms(net));
}

TEST_CASE("a config's quantization_config: AWQ, GPTQ per column, fp8; others refused") {
  const std::string base = "{\"model_type\": \"llama\", \"hidden_size\": 256, "
                           "\"num_hidden_layers\": 2, \"num_attention_heads\": 4, "
                           "\"intermediate_size\": 512, \"vocab_size\": 1000, "
                           "\"torch_dtype\": \"float16\",\n \"quantization_config\": ";
  config_options eager; // q_proj a GEMM of its own
  eager.glue = glue_style::eager;
  const auto q_proj = [&](const std::string &quantization) {
    const std::vector<op> ops =
        lower(network_from_config(base + quantization + "}", "q.json", eager));
    return op_named(ops, "decoder_layer/q_proj");
  };
  const op awq = q_proj(R"({"quant_method": "awq", "bits": 4, "group_size": 64})");
  CHECK(awq.gemm->weights == quantized_weights{4, 64});
  const op gptq = q_proj(R"({"quant_method": "gptq", "bits": 8, "group_size": -1})");
  CHECK(gptq.gemm->weights == quantized_weights{8, 0});
  CHECK(gptq.bytes == 256LL * 256 + 2 * 256 + 2LL * 2048 * (256 + 256)); // a scale per column
  const op fp8 = q_proj(R"({"quant_method": "fp8", "activation_scheme": "dynamic"})");
  CHECK(fp8.precision == precision::fp8);
  CHECK_FALSE(fp8.gemm->weights.has_value());
  // --quantization overrides the config.
  config_options w8 = eager;
  w8.quantization = quantization::w8a16;
  const std::vector<op> ops =
      lower(network_from_config(base + R"({"quant_method": "awq", "bits": 4})"
                                       "}",
                                "q.json", w8));
  CHECK(op_named(ops, "decoder_layer/q_proj").gemm->weights == quantized_weights{8, 0});

  CHECK(contains(config_error(base + R"({"quant_method": "bitsandbytes"})"
                                     "}"),
                 "bad.json:2:42: config `quantization_config`: `quant_method` `bitsandbytes` is "
                 "not modelled"));
  CHECK(contains(config_error(base + R"({"quant_method": "gptq", "bits": 3})"
                                     "}"),
                 "3-bit weights are not modelled"));
}

TEST_CASE(
    "config fields of the wrong JSON type are refused where they stand, never read as absent") {
  const std::string sizes = "\"hidden_size\": 64, \"num_hidden_layers\": 2, "
                            "\"num_attention_heads\": 4, \"intermediate_size\": 8, "
                            "\"vocab_size\": 8";
  const auto refused = [&](const std::string &type, const std::string &field) {
    return config_error("{\"model_type\": \"" + type + "\", " + sizes + ",\n " + field + "}");
  };
  CHECK(contains(refused("llama", "\"torch_dtype\": [\"bfloat16\"]"),
                 "bad.json:2:17: config: `torch_dtype` must be a string, got a list"));
  CHECK(contains(refused("llama", "\"hidden_act\": [\"relu\"]"),
                 "bad.json:2:16: config: `hidden_act` must be a string, got a list"));
  CHECK(contains(refused("gemma", "\"hidden_activation\": {\"a\": 1}"),
                 "`hidden_activation` must be a string, got a mapping"));
  const std::string moe = "\"num_experts\": 4, \"num_experts_per_tok\": 2, "
                          "\"moe_intermediate_size\": 8, ";
  CHECK(contains(refused("qwen2_moe", moe + "\"mlp_only_layers\": 3"),
                 "bad.json:2:93: config: `mlp_only_layers` must be a list of layer indices, got "
                 "'3'"));
  CHECK(contains(refused("qwen2_moe", moe + "\"mlp_only_layers\": {\"0\": 1}"),
                 "`mlp_only_layers` must be a list of layer indices, got a mapping"));
  CHECK(contains(refused("qwen2_moe", moe + "\"mlp_only_layers\": []"), "no error"));
  CHECK(contains(refused("qwen2_moe", moe + "\"mlp_only_layers\": null"), "no error"));
  // JSON is typed: a number or a boolean written as a string is refused too.
  CHECK(contains(refused("mistral", "\"sliding_window\": \"4096\""),
                 "bad.json:2:20: config: `sliding_window` must be a positive integer, got the "
                 "string '4096'"));
  CHECK(contains(refused("llama", "\"tie_word_embeddings\": null"), "no error"));
  CHECK(contains(refused("qwen2", "\"use_sliding_window\": null"), "no error"));
  CHECK(contains(refused("llama", "\"tie_word_embeddings\": \"false\""),
                 "`tie_word_embeddings` must be true or false, got the string 'false'"));
  CHECK(contains(refused("qwen2", "\"use_sliding_window\": [true]"),
                 "`use_sliding_window` must be true or false, got a list"));
  CHECK(contains(refused("llama", "\"quantization_config\": {\"quant_method\": \"awq\", "
                                  "\"bits\": \"4\"}"),
                 "`bits` must be a positive integer, got the string '4'"));
  CHECK(contains(refused("llama", "\"quantization_config\": {\"quant_method\": \"awq\", "
                                  "\"bits\": 4, \"group_size\": [128]}"),
                 "`group_size` must be a non-negative integer, got a list"));
  CHECK(contains(refused("llama", "\"quantization_config\": [\"awq\"]"),
                 "config `quantization_config`: expected a mapping"));
  // A comment no longer swallows the key after it: refused where it starts.
  CHECK(contains(refused("mistral", "// 4k window\n \"sliding_window\": 4096"),
                 "bad.json:2:2: JSON syntax error: comments are not JSON"));
}

TEST_CASE("a NUL or an escape sequence in a config string is quoted escaped, the message whole") {
  const std::string message = config_error("{\"model_type\": \"ll\\u0000ama\\u001b[2J\"}");
  CHECK(contains(message, "unknown `model_type` `ll\\x00ama\\x1b[2J`; expected"));
  CHECK(contains(config_error("{\"model_type\": \"llama\", \"torch_dtype\": \"f\\u0000\"}"),
                 "`torch_dtype` `f\\x00` is not one this tool runs"));
}

TEST_CASE("--emit-yaml: every example config, with every option, analyses as the config does") {
  // Embedding tables, phase, KV cache, quantization, precision, sharding: what was lost before
  // (the embedding table: a 16.5 GB GPU "fit" a model it does not).
  std::vector<config_options> choices(12);
  choices[1].phase = inference_phase::decode;
  choices[1].batch = 8;
  choices[1].kv_len = 4096;
  choices[2].last_logits = true;
  choices[2].batch = 4;
  choices[3].fused_attention = false;
  choices[3].seq_len = 512;
  choices[4].quantization = quantization::w4a16;
  choices[5].quantization = quantization::fp8;
  choices[5].phase = inference_phase::decode;
  choices[6].phase = inference_phase::decode;
  choices[6].kv_cache = precision::fp8;
  choices[7].tensor_parallel = 2;
  choices[7].batch = 8;
  choices[8].tensor_parallel = 4;
  choices[8].phase = inference_phase::decode;
  choices[8].quantization = quantization::w8a16;
  choices[9].tensor_parallel = 2;
  choices[9].last_logits = true;
  choices[10].glue = glue_style::fused;
  choices[11].glue = glue_style::fused;
  choices[11].phase = inference_phase::decode;
  int trips = 0;
  for (const auto &entry :
       std::filesystem::directory_iterator(std::string(ROOFLINE_SOURCE_DIR) + "/examples/configs"))
    for (std::size_t i = 0; i < choices.size(); ++i) {
      if (entry.path().extension() != ".json")
        continue;
      CAPTURE(entry.path().filename().string());
      CAPTURE(i);
      network net;
      try {
        net = load_model_config(entry.path(), choices[i]);
      } catch (const input_error &) {
        continue; // BERT has no decode phase; heads that do not split
      }
      const network back = round_trip(net);
      CHECK_FALSE(net.config_sizes.empty());
      // The YAML keeps the sizes, not the config fields they came from (padding advice's names).
      net.config_sizes.clear();
      CHECK(back.resident_weight_bytes == net.resident_weight_bytes);
      CHECK(back.phase == net.phase);
      CHECK(differences(analysis_json(net), analysis_json(back)) == "");
      ++trips;
    }
  CHECK(trips >= 80);
}

TEST_CASE("--emit-yaml escapes the config's path and names: no newline starts a key") {
  const std::string config = R"({"model_type": "llama", "hidden_size": 256,
    "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 512,
    "vocab_size": 1000})";
  for (const std::string breaks : {"\n", "\r", "\xC2\x85", "\xE2\x80\xA8", "\xE2\x80\xA9"}) {
    const std::string origin =
        "dir" + breaks + "weights: int4" + breaks + "x: \"y\\" + breaks + "c.json";
    const network net = network_from_config(config, origin);
    const std::string yaml = to_network_yaml(net);
    const network back = parse_network(yaml, "emitted.yaml");
    CHECK_FALSE(back.weights.has_value());
    CHECK(back.name == net.name);
    CHECK(back.description == net.description);
    CHECK(differences(analysis_json(net), analysis_json(back)) == "");
  }
  // Names YAML would read as something else, and text it cannot hold raw.
  network odd =
      parse_network("name: x\nlayers:\n  - {name: fc, type: linear, in: 8, out: 8}\n", "odd.yaml");
  for (const std::string name : {"null", "~", "- a", "a: b", "#c", "[d]", "'e'", "\x7f\xC2\x9b"}) {
    odd.name = name;
    odd.layers.front().name = name;
    const network back = round_trip(odd);
    CHECK(back.name == name);
    CHECK(back.layers.front().name == name);
  }
}

TEST_CASE("a network YAML's phase, KV length and resident weights: read, and refused when bad") {
  const network net = parse_network("name: x\nphase: decode\nkv_len: 4096\n"
                                    "resident_weight_bytes: 1e9\nlayers:\n"
                                    "  - {name: fc, type: linear, in: 8, out: 8}\n",
                                    "x.yaml");
  CHECK(net.phase == inference_phase::decode);
  CHECK(net.kv_len == 4096);
  CHECK(net.resident_weight_bytes == 1e9);
  const auto refused = [](const std::string &top) {
    try {
      parse_network("name: x\n" + top + "\nlayers:\n  - {name: fc, type: linear, in: 8, out: 8}\n",
                    "bad.yaml");
    } catch (const input_error &e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK(contains(refused("phase: generate"),
                 "bad.yaml:2:8: network: `phase` must be `prefill` or `decode`"));
  CHECK(contains(refused("kv_len: 8"), "bad.yaml:2:9: network: `kv_len` is the KV cache"));
  CHECK(contains(refused("resident_weight_bytes: -1"), "from 0 to 2^63, got '-1'"));
  CHECK(contains(refused("resident_weight_bytes: 1e300"), "from 0 to 2^63"));
  CHECK(contains(refused("resident_weight_bytes: .nan"), "from 0 to 2^63"));
  // A config whose embedding table's bytes pass 64 bits is refused where the YAML would be.
  CHECK(contains(config_error(R"({"model_type": "bert", "hidden_size": 4294967296,
    "num_hidden_layers": 1, "num_attention_heads": 1, "intermediate_size": 1,
    "vocab_size": 4294967296})"),
                 "the embedding table's bytes"));
}

namespace {

/// The ops of `net` by layer name (repeat blocks' ops once).
std::map<std::string, op> ops_by_layer(const network &net) {
  std::map<std::string, op> ops;
  for (const op &o : lower(net))
    if (o.pass == pass::forward)
      ops.emplace(o.layer, o);
  return ops;
}

} // namespace

TEST_CASE("the glue by hand: Llama-3-8B decode, batch 4, as transformers runs it and as fused") {
  config_options decode;
  decode.phase = inference_phase::decode;
  decode.batch = 4;
  decode.kv_len = 1024;
  decode.glue = glue_style::eager;
  const network eager = load_model_config(config_path("llama-3-8b.json"), decode);
  auto ops = ops_by_layer(eager);
  // 4 tokens; bf16: 2 bytes. The gather reads 4 rows of the table and writes them.
  CHECK(ops.at("embed_tokens").kind == "embedding");
  CHECK(ops.at("embed_tokens").bytes == 2 * 4 * 4096 * 2);
  // RoPE on 32 query heads and 8 key heads of 128: 4 × 5120 elements in and out.
  CHECK(ops.at("decoder_layer/rotary").kind == "rope");
  CHECK(ops.at("decoder_layer/rotary").elements == 4 * 5120);
  CHECK(ops.at("decoder_layer/rotary").bytes == 2 * 4 * 5120 * 2);
  // index_copy_ of the new token's K and V: 4 × 2 × 1024 elements.
  CHECK(ops.at("decoder_layer/kv_append").kind == "kv_append");
  CHECK(ops.at("decoder_layer/kv_append").elements == 4 * 2048);
  // SDPA's output is already in the layout the output projection reads: no copy.
  CHECK(ops.count("decoder_layer/attn_transpose") == 0);
  // transformers' RMSNorm: 8 kernels, 4 passes at bf16 and 7 at fp32 over 4 × 4096 elements.
  const op &norm = ops.at("decoder_layer/input_norm");
  CHECK(norm.launches == 8);
  CHECK(norm.bytes == 4 * 4096 * (4 * 2 + 7 * 4));
  // Its time: its 8 kernels', each with its own bytes.
  const gpu_spec &h100 = spec_catalog::builtin().resolve("h100");
  const perf_model model(h100);
  CHECK(model.predict(norm).device_time_s ==
        doctest::Approx(unfused_time_s(*cost_of(memory_op_kind::rmsnorm).unfused, 4 * 4096, 2,
                                       model_basis(h100), model.parameters())));
  CHECK(ops.at("final_norm").launches == 8);
  CHECK(ops.at("decoder_layer/silu").launches == 1);

  decode.glue = glue_style::fused;
  const network fused = load_model_config(config_path("llama-3-8b.json"), decode);
  ops = ops_by_layer(fused);
  CHECK(ops.count("decoder_layer/rotary") == 0);
  // One kernel rotates Q and K and writes K and V to the cache: Q, K, V in, Q, K, V out.
  const op &rotate = ops.at("decoder_layer/rotary_kv_write");
  CHECK(rotate.kind == "copy");
  CHECK(rotate.bytes == 2 * 4 * (4096 + 2 * 1024) * 2);
  CHECK(ops.at("decoder_layer/input_norm").launches == 1);
  CHECK(ops.at("decoder_layer/input_norm").bytes == 2 * 4 * 4096 * 2);
  // The same GEMM work either way (the engine's QKV and gate-up GEMMs stack the same weights:
  // the same FLOPs); the engine's glue and its fewer, wider GEMMs take less time.
  const analysis a = analyze(eager, perf_model(spec_catalog::builtin().resolve("h100")), "t");
  const analysis b = analyze(fused, perf_model(spec_catalog::builtin().resolve("h100")), "t");
  const auto gemm_flops = [](const analysis &x) {
    double flops = 0;
    for (const analysed_op &e : x.ops)
      if (e.op.is_gemm())
        flops += static_cast<double>(e.op.flops) * static_cast<double>(e.op.count);
    return flops;
  };
  CHECK(gemm_flops(a) == doctest::Approx(gemm_flops(b)));
  CHECK(a.totals.gemm_time_s > b.totals.gemm_time_s);
  CHECK(a.totals.device_time_s > b.totals.device_time_s);
}

TEST_CASE("the glue by default: a serving engine's in inference, eager in training, said") {
  const model_config llama = model_config::load(config_path("llama-3-8b.json"));
  config_options options;
  CHECK(glue_of(options) == glue_style::fused);
  const network served = llama.build(options);
  CHECK(served.glue == "fused");
  CHECK(ops_by_layer(served).count("decoder_layer/rotary_kv_write") == 1);
  options.mode = run_mode::training;
  CHECK(glue_of(options) == glue_style::eager);
  const network trained = llama.build(options);
  CHECK(trained.glue == "eager");
  CHECK(ops_by_layer(trained).count("decoder_layer/rotary") == 1);
  options.glue = glue_style::fused; // a serving engine's kernels do not train
  CHECK_THROWS_AS((void)llama.build(options), input_error);
  const gpu_spec &h100 = spec_catalog::builtin().resolve("h100");
  std::ostringstream table;
  const analysis analysed = analyze(served, perf_model(h100), "t");
  write_report(assemble_report(analysed, advise(analysed)), output_format::table, table,
               write_options{false, true}); // whole lines
  CHECK(contains(table.str(), "inference, batch 1, seq_len 2048, fused glue"));
}

TEST_CASE("the glue by hand: learned positions (GPT-2), and BERT's token types and norm") {
  const auto gpt2 = ops_by_layer(load_model_config(config_path("gpt2.json"), {}));
  for (const char *name : {"embed_tokens", "embed_positions"})
    CHECK(gpt2.at(name).kind == "embedding");
  CHECK(gpt2.at("embed_add").kind == "add");
  CHECK(gpt2.count("decoder_layer/rotary") == 0);
  CHECK(gpt2.at("decoder_layer/ln_1").launches == 1); // PyTorch's LayerNorm is one kernel
  const auto bert = ops_by_layer(load_model_config(config_path("bert-base-uncased.json"), {}));
  CHECK(bert.at("embed_token_types").kind == "embedding");
  CHECK(bert.at("embed_norm").kind == "layernorm");
  CHECK(bert.count("layer/kv_append") == 0);
  config_options fused;
  fused.glue = glue_style::fused;
  // An encoder keeps no cache: nothing to write, fused or not.
  CHECK(ops_by_layer(load_model_config(config_path("bert-base-uncased.json"), fused))
            .count("layer/kv_append") == 0);
}

TEST_CASE("--emit-yaml keeps a conv2d's groups (and writes none where there is one group)") {
  const network net = parse_network(
      "name: t\nlayers:\n"
      "  - {name: dw, type: conv2d, in_channels: 96, out_channels: 96, kernel: 7, padding: 3, "
      "groups: 96, input: [56, 56]}\n"
      "  - {name: pw, type: conv2d, in_channels: 96, out_channels: 384, kernel: 1, "
      "input: [56, 56]}\n",
      "t.yaml");
  const std::string yaml = to_network_yaml(net);
  CHECK(contains(yaml, "groups: 96"));
  CHECK(yaml.find("groups") == yaml.rfind("groups"));
  const network read = round_trip(net);
  CHECK(std::get<conv2d_layer>(read.layers.at(0).body).groups == 96);
  CHECK(std::get<conv2d_layer>(read.layers.at(1).body).groups == 1);
  CHECK(lower(read).at(0).gemm->batch_count == 96);
}

TEST_CASE("config options that contradict each other are refused for every caller, in the CLI's "
          "words, before the config is read") {
  const auto refused = [](const config_options &options) {
    try {
      load_model_config("/nonexistent/config.json", options);
    } catch (const input_error &e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  config_options prefill_cache;
  prefill_cache.kv_len = 4096;
  CHECK(refused(prefill_cache) ==
        "config_options::kv_len is the cache a decode step reads: give config_options::phase "
        "decode (a prefill's cache is its prompt, config_options::seq_len)");
  config_options decode_last;
  decode_last.phase = inference_phase::decode;
  decode_last.last_logits = true;
  CHECK(refused(decode_last) ==
        "config_options::last_logits applies to a prefill: a decode step's LM head "
        "already runs for its one new token");
  config_options wide_cache;
  wide_cache.kv_cache = precision::fp32;
  CHECK(refused(wide_cache) ==
        "unknown config_options::kv_cache `fp32`; expected fp16, bf16, fp8 or int8");
  config_options unfused_cache;
  unfused_cache.kv_cache = precision::fp8;
  unfused_cache.fused_attention = false;
  CHECK(contains(refused(unfused_cache), "config_options::kv_cache needs fused attention"));
  config_options too_wide;
  too_wide.tensor_parallel = 2048;
  CHECK(refused(too_wide) == "config_options::tensor_parallel 2048: tensor parallelism is modelled "
                             "over at most 1024 GPUs");
  config_options none;
  none.tensor_parallel = 0;
  CHECK(contains(refused(none), "at least one GPU"));
  config_options empty;
  empty.batch = 0;
  CHECK(refused(empty) == "config_options::batch: `0` is not a positive integer");
  // Options that make sense reach the file.
  CHECK(contains(refused({}), "/nonexistent/config.json"));
  CHECK_THROWS_WITH_AS(network_from_config("{}", "x.json", prefill_cache),
                       doctest::Contains("config_options::kv_len is the cache"), input_error);
}

TEST_CASE("a model config read once builds at any options as a config read anew does") {
  const std::string file = config_path("llama-3-8b.json");
  const model_config config = model_config::load(file);
  CHECK(config.origin() == file);
  config_options decode;
  decode.phase = inference_phase::decode;
  decode.batch = 8;
  decode.tensor_parallel = 2;
  for (const config_options &options : {config_options{}, decode}) {
    const network once = config.build(options), anew = load_model_config(file, options);
    CHECK(to_network_yaml(once) == to_network_yaml(anew));
  }
  CHECK_THROWS_WITH_AS(model_config("[]", "list.json"),
                       doctest::Contains("expected a model config: a JSON object"), input_error);
}

TEST_CASE("a config's training step: the whole sequence forward and backward, no serving step") {
  config_options options;
  options.mode = run_mode::training;
  options.seq_len = 1024;
  options.batch = 2;
  options.recompute = recomputation::full;
  const network net = load_model_config(config_path("llama-2-7b.json"), options);
  CHECK(net.name == "llama-2-7b-training");
  CHECK(net.mode == run_mode::training);
  CHECK_FALSE(net.phase); // no time to first token nor per output token
  CHECK(net.optimizer == optimizer::adamw);
  CHECK(net.recompute == recomputation::full);
  const std::vector<op> ops = lower(net);
  // The LM head at every position, with its gradients; no cache written.
  CHECK(op_named(ops, "lm_head").gemm->m == 2 * 1024);
  CHECK(std::count_if(ops.begin(), ops.end(),
                      [](const op &o) { return o.layer == "lm_head" && o.is_gemm(); }) == 3);
  CHECK(std::none_of(ops.begin(), ops.end(), [](const op &o) { return o.kind == "kv_append"; }));
  // Its YAML trains alike.
  const std::string yaml = to_network_yaml(net);
  CHECK(contains(yaml, "mode: training\noptimizer: adamw\nrecompute: full\n"));
  const network again = parse_network(yaml, "emitted.yaml");
  CHECK(again.recompute == recomputation::full);
  CHECK(lower(again).size() == ops.size());

  // A config quantized for serving does not train.
  const std::string awq = "{\"model_type\": \"llama\", \"hidden_size\": 256, "
                          "\"num_hidden_layers\": 2, \"num_attention_heads\": 4, "
                          "\"intermediate_size\": 512, \"vocab_size\": 1000, "
                          "\"quantization_config\": {\"quant_method\": \"awq\", \"bits\": 4}}";
  CHECK_THROWS_WITH_AS(network_from_config(awq, "awq.json", options),
                       doctest::Contains("`quantization_config` quantizes them for inference"),
                       input_error);
  // A training step's choices outside training are refused with the CLI's words.
  config_options served;
  served.optimizer = optimizer::sgd;
  CHECK_THROWS_WITH_AS(
      check_config_options(served),
      "config_options::optimizer applies to a training step: give config_options::mode training",
      input_error);
}

TEST_CASE("a step past a learned position table is refused at the key that gives it") {
  const model_config gpt2 = model_config::load(config_path("gpt2.json"));
  REQUIRE(gpt2.context());
  CHECK(gpt2.context()->positions == 1024);
  CHECK(gpt2.context()->key == "n_positions");
  config_options options;
  options.seq_len = 1024; // the whole context is fine
  CHECK_NOTHROW((void)gpt2.build(options));
  options.seq_len = 1025;
  CHECK_THROWS_WITH_AS((void)gpt2.build(options),
                       doctest::Contains("gpt2.json:10:18: config: `n_positions` is 1024: the "
                                         "model's learned position table has no row past it, and "
                                         "this step has 1025 (config_options::seq_len)"),
                       input_error);
  options.seq_len.reset();
  options.phase = inference_phase::decode;
  options.kv_len = 4096;
  CHECK_THROWS_WITH_AS(
      (void)gpt2.build(options),
      doctest::Contains("this decode step's KV cache holds 4096 (config_options::kv_len)"),
      input_error);
  // A config without a context key is taken at its word.
  const model_config bare(R"({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 1,
    "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 100})",
                          "bare.json");
  CHECK_FALSE(bare.context());
  config_options long_prompt;
  long_prompt.seq_len = 100000;
  CHECK_NOTHROW((void)bare.build(long_prompt));
}

TEST_CASE("a rotary model runs past its context, stretched by rope_scaling, with a note") {
  const auto config = [](const std::string &rope_scaling) {
    return model_config(R"({"model_type": "qwen2", "hidden_size": 64, "num_hidden_layers": 1,
      "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 100,
      "max_position_embeddings": 32768)" +
                            rope_scaling + "}",
                        "qwen.json");
  };
  const auto notes_past = [](const network &net) {
    return std::count_if(net.notes.begin(), net.notes.end(), [](const std::string &note) {
      return contains(note, "past the model's context") && contains(note, "never trained");
    });
  };
  config_options options;
  options.seq_len = 100000;
  // Qwen2.5's YaRN: 32k trained, stretched 4×.
  const model_config yarn = config(R"(, "rope_scaling": {"type": "yarn", "factor": 4.0,
    "original_max_position_embeddings": 32768})");
  REQUIRE(yarn.context());
  CHECK_FALSE(yarn.context()->learned);
  CHECK(yarn.context()->scaled_positions == 131072);
  CHECK(yarn.context()->describe() ==
        "`max_position_embeddings` is 32768, stretched to 131072 by `rope_scaling`");
  CHECK(notes_past(yarn.build(options)) == 0);
  options.seq_len = 131073;
  const network past = yarn.build(options);
  CHECK(notes_past(past) == 1);
  CHECK(gemms(past).at("decoder_layer/qkv_proj").front() == 131073); // built as asked
  // Llama 3.1's: an original 8192 stretched 8×; a context its config already says longer stays.
  const std::string llama3 = R"(, "rope_scaling": {"rope_type": "llama3", "factor": 8.0,
    "original_max_position_embeddings": 8192})";
  CHECK(config(llama3).context()->scaled_positions == 65536);
  std::string llama31 = llama3;
  llama31.replace(llama31.find("8192"), 4, "32768");
  llama31.replace(llama31.find("8.0"), 3, "0.5");
  CHECK(config(llama31).context()->scaled_positions == 32768);
  // Without an original, the factor stretches max_position_embeddings; without a factor, nothing.
  CHECK(
      config(R"(, "rope_scaling": {"type": "linear", "factor": 2})").context()->scaled_positions ==
      65536);
  CHECK(config(R"(, "rope_scaling": {"type": "mrope"})").context()->scaled_positions == 32768);
  CHECK(config(R"(, "rope_scaling": null)").context()->scaled_positions == 32768);
  CHECK_THROWS_WITH_AS(
      config(R"(, "rope_scaling": {"factor": 0})"),
      doctest::Contains(
          "qwen.json:3:68: config `rope_scaling`: `factor` must be a positive number"),
      input_error);
  CHECK_THROWS_WITH_AS(config(R"(, "rope_scaling": {"factor": 1e30})"),
                       doctest::Contains("expected at most 1073741824"), input_error);
}

TEST_CASE("an encoder refuses what only a decoder's served step has") {
  const model_config bert = model_config::load(config_path("bert-base-uncased.json"));
  config_options options;
  options.kv_cache = precision::fp8;
  CHECK_THROWS_WITH_AS((void)bert.build(options),
                       doctest::Contains("`bert` is an encoder: it has no KV cache"), input_error);
  options = {};
  options.last_logits = true;
  CHECK_THROWS_WITH_AS((void)bert.build(options),
                       doctest::Contains("`bert` is an encoder: it has no LM head"), input_error);
}

TEST_CASE("a huge unknown model_type is refused at once, with no typo searched for" *
          doctest::timeout(5)) {
  // 100 MB of `model_type`: edit distances to every family took 10.5 s before the length cutoff.
  const std::string huge(100'000'000, 'l');
  try {
    (void)model_config("{\"model_type\": \"" + huge + "\"}", "huge.json");
    FAIL("accepted");
  } catch (const input_error &e) {
    const std::string what = e.what();
    CHECK(what.find("unknown `model_type`") != std::string::npos);
    CHECK(what.find("did you mean") == std::string::npos);
  }
}

TEST_CASE("a serving engine's program (glue fused): one QKV GEMM, one gate-up GEMM and one "
          "activate-and-multiply kernel; fp8 activations written by their producers") {
  config_options fused;
  fused.glue = glue_style::fused;
  const network net = load_model_config(config_path("llama-3-8b.json"), fused);
  const auto g = gemms(net);
  // 32 query heads and 8 key/value heads of 128 over a hidden size of 4096; 14,336 wide MLP.
  CHECK(g.at("decoder_layer/qkv_proj") ==
        std::vector<std::int64_t>{2048, 4096 + 2 * 1024, 4096, 1, 32});
  CHECK(g.at("decoder_layer/gate_up_proj") ==
        std::vector<std::int64_t>{2048, 2 * 14336, 4096, 1, 32});
  CHECK(g.count("decoder_layer/q_proj") == 0);
  CHECK(g.count("decoder_layer/gate_proj") == 0);
  const std::vector<op> ops = lower(net);
  CHECK(std::any_of(ops.begin(), ops.end(),
                    [](const op &o) { return o.layer == "decoder_layer/silu_and_mul"; }));
  CHECK(std::none_of(ops.begin(), ops.end(),
                     [](const op &o) { return o.layer == "decoder_layer/silu"; }));
  // fp8: no quantize kernel of its own under the engine's glue; one before each linear eager.
  fused.quantization = quantization::fp8;
  const auto quantizes = [](const std::vector<op> &o) {
    return std::count_if(o.begin(), o.end(), [](const op &x) { return x.kind == "quantize"; });
  };
  CHECK(quantizes(lower(load_model_config(config_path("llama-3-8b.json"), fused))) == 0);
  config_options eager = fused;
  eager.glue = glue_style::eager;
  CHECK(quantizes(lower(load_model_config(config_path("llama-3-8b.json"), eager))) > 0);
}
