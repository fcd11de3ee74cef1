// SPDX-License-Identifier: Apache-2.0
// serve(): whole requests on each setup at the largest batch that fits and meets the targets.
// Llama-3-8B (examples/configs) on an H100 SXM5 checked by hand: its KV cache is
// 2 (K, V) · 32 layers · 8 KV heads · 128 · 2 bytes = 131072 bytes a token.
#include "roofline/analysis/analysis.hpp"
#include "roofline/analysis/lowering.hpp"
#include "roofline/common/error.hpp"
#include "roofline/compare/serving.hpp"
#include "roofline/input/network_yaml.hpp"
#include "roofline/model/spec_catalog.hpp"
#include "roofline/output/writers.hpp"
#include "yaml_reader.hpp"

#include "test_support.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include <sstream>

using namespace roofline;

namespace {

const std::string llama = ROOFLINE_SOURCE_DIR "/examples/configs/llama-3-8b.json";

compare_request request_for(std::vector<std::string> gpus, glue_style glue = glue_style::fused,
                            std::optional<std::int64_t> context = std::nullopt) {
  compare_request request;
  config_options options;
  options.glue = glue;
  // With `context`, Llama-3-8B stretched to that many positions (its config says 8192).
  std::string text = roofline::detail::read_text_file(llama, "model config");
  if (context) {
    const std::string key = "\"max_position_embeddings\": 8192";
    REQUIRE(text.find(key) != std::string::npos);
    text.replace(text.find(key), key.size(),
                 "\"max_position_embeddings\": " + std::to_string(*context));
  }
  request.source = config_source{model_config(text, llama), options};
  request.gpus = std::move(gpus);
  return request;
}

serving_question question(std::int64_t prompt, std::int64_t output,
                          std::optional<double> ttft_s = std::nullopt,
                          std::optional<double> tpot_s = std::nullopt) {
  serving_question q;
  q.prompt_tokens = prompt;
  q.output_tokens = output;
  q.ttft_s = ttft_s;
  q.tpot_s = tpot_s;
  return q;
}

/// A step of Llama-3-8B on the H100 as the tool analyses it alone, replayed from a CUDA graph.
/// The boost clock's model: the hand sums below hold for steps not held to the power limit.
perf_model burst_model(const char *gpu = "h100-sxm5") {
  model_options options;
  options.clock = clock_regime::burst;
  return perf_model(*spec_catalog::builtin().find(gpu), options);
}

double step_s(const config_options &options) {
  const model_config config = model_config::load(llama);
  return analyze(config.build(options), burst_model(), "test").totals.device_time_s;
}

/// request_for at the boost clock.
compare_request burst_request_for(std::vector<std::string> gpus) {
  compare_request request = request_for(std::move(gpus));
  request.clock = clock_regime::burst;
  return request;
}

/// A question of 2048 prompt and 256 output tokens: its prefill, and its decode at `batch` with
/// the mean cache (2048 + 128).
std::pair<config_options, config_options> steps_at(std::int64_t batch) {
  config_options prefill, decode;
  prefill.glue = decode.glue = glue_style::fused;
  prefill.seq_len = 2048;
  prefill.last_logits = true;
  decode.phase = inference_phase::decode;
  decode.seq_len = 1;
  decode.batch = batch;
  decode.kv_len = 2048 + 128;
  return {prefill, decode};
}

constexpr double kv_bytes_per_token = 131072;

/// The serving answer as its table prints it.
std::string written(const serving_comparison &c) {
  std::ostringstream out;
  write_serving(c, output_format::table, out);
  return out.str();
}

} // namespace

TEST_CASE("one setup by hand: batch, KV cache, TTFT and TPOT") {
  const serving_comparison c = serve(burst_request_for({"h100"}), question(2048, 256, 1.0, 0.050));
  REQUIRE(c.setups.size() == 1);
  const serving_setup &s = c.setups.front();
  REQUIRE(s.chosen);
  const serving_point &p = *s.chosen;
  auto [prefill, decode] = steps_at(p.batch);
  const double prefill_s = step_s(prefill), decode_s = step_s(decode);
  CHECK(p.ttft_s == doctest::Approx(prefill_s + decode_s));
  CHECK(p.tpot_s == doctest::Approx(decode_s + static_cast<double>(p.batch) / 256 * prefill_s));
  CHECK(p.request_latency_s == doctest::Approx(p.ttft_s + 255 * p.tpot_s));
  CHECK(p.output_tokens_per_s ==
        doctest::Approx(static_cast<double>(p.batch) * 256 / p.request_latency_s));
  // The cache at the longest request (2048 + 256 tokens) of every request of the batch.
  CHECK(s.memory->kv_cache_bytes ==
        doctest::Approx(static_cast<double>(p.batch) * 2304 * kv_bytes_per_token));
  // The largest batch meeting the targets: TPOT binds here, and one request more misses it.
  CHECK(p.meets_targets());
  CHECK(p.tpot_s <= 0.050);
  CHECK(s.limited_by == "TPOT");
  CHECK(p.batch < *s.largest_fitting_batch);
  decode.batch = p.batch + 1;
  CHECK(step_s(decode) + static_cast<double>(p.batch + 1) / 256 * prefill_s > 0.050);
  CHECK(c.verdict.fastest == std::optional<std::string>("h100-sxm5"));
  CHECK_FALSE(c.verdict.cheapest); // no price known
  CHECK(c.verdict.text.find("give compare_request::prices GPU=USD/h") != std::string::npos);
}

TEST_CASE("without targets the batch is the largest that fits, and the curve ends there") {
  const serving_comparison c = serve(request_for({"h100"}), question(2048, 256));
  const serving_setup &s = c.setups.front();
  REQUIRE(s.largest_fitting_batch);
  CHECK(s.chosen->batch == *s.largest_fitting_batch);
  CHECK(s.limited_by == "memory");
  CHECK(s.memory->fits);
  // Against the memory less the default reserve (10%): one request more would not fit, its
  // cache alone being more than what is left.
  CHECK(s.memory->reserve_bytes == doctest::Approx(0.1 * s.memory->capacity_bytes));
  CHECK(s.memory->total_bytes <= s.memory->usable_bytes());
  CHECK(s.memory->usable_bytes() - s.memory->total_bytes < 2304 * kv_bytes_per_token * 1.01);
  REQUIRE(s.curve.size() >= 2);
  CHECK(s.curve.front().batch == 1);
  CHECK(s.curve.back().batch == *s.largest_fitting_batch);
  for (std::size_t i = 1; i < s.curve.size(); ++i) {
    CHECK(s.curve[i].batch > s.curve[i - 1].batch);
    CHECK(s.curve[i].tpot_s >= s.curve[i - 1].tpot_s);
    CHECK(s.curve[i].output_tokens_per_s_per_gpu > s.curve[i - 1].output_tokens_per_s_per_gpu);
  }
}

TEST_CASE("the verdict: the cheapest and the fastest meet the targets; the others are not priced") {
  compare_request request = request_for({"a100", "h100", "h200", "l4"});
  request.prices = {{"a100", 1.5}, {"h100", 2.5}, {"h200", 3.5}, {"l4", 0.5}};
  const serving_comparison c = serve(request, question(2048, 256, 2.0, 0.040));
  const auto setup = [&](const std::string &name) -> const serving_setup & {
    for (const serving_setup &s : c.setups)
      if (s.name == name)
        return s;
    FAIL("no setup " << name);
    throw;
  };
  // An L4 (24 GB, 300 GB/s) reads the 16 GB of weights in more than 40 ms: it misses TPOT at
  // batch 1, and is shown so, unpriced.
  const serving_setup &l4 = setup("l4");
  REQUIRE(l4.chosen);
  CHECK(l4.chosen->batch == 1);
  CHECK_FALSE(l4.meets_targets());
  CHECK_FALSE(l4.usd_per_million_output_tokens);
  CHECK(c.verdict.text.find("Misses the targets") != std::string::npos);
  REQUIRE(c.verdict.cheapest);
  REQUIRE(c.verdict.fastest);
  double cheapest = 1e300, fastest = 0;
  for (const serving_setup &s : c.setups)
    if (s.meets_targets()) {
      REQUIRE(s.usd_per_million_output_tokens);
      CHECK(*s.usd_per_million_output_tokens ==
            doctest::Approx(*s.usd_per_hour / 3600 / s.chosen->output_tokens_per_s * 1e6));
      cheapest = std::min(cheapest, *s.usd_per_million_output_tokens);
      fastest = std::max(fastest, s.chosen->output_tokens_per_s_per_gpu);
    }
  CHECK(*setup(*c.verdict.cheapest).usd_per_million_output_tokens == cheapest);
  CHECK(setup(*c.verdict.fastest).chosen->output_tokens_per_s_per_gpu == fastest);
  CHECK(c.verdict.text.rfind("Cheapest meeting", 0) == 0);
}

TEST_CASE("a setup the model does not fit is no answer; more GPUs make room") {
  compare_request request = request_for({"l4"}, glue_style::fused, 131072);
  request.tensor_parallel = {1, 2};
  // 128k tokens of context: 17.2 GB of cache for one request, beside 16 GB of weights.
  const serving_comparison c = serve(request, question(120000, 8000));
  REQUIRE(c.setups.size() == 2);
  CHECK_FALSE(c.setups[0].chosen);
  CHECK_FALSE(c.setups[0].memory->fits);
  CHECK(c.verdict.text.find("Does not fit: l4 (one request needs") != std::string::npos);
  REQUIRE(c.setups[1].chosen);
  CHECK(c.setups[1].name == "l4 ×2");
  CHECK(c.verdict.fastest == std::optional<std::string>("l4 ×2"));
  CHECK(c.setups[1].chosen->output_tokens_per_s_per_gpu ==
        doctest::Approx(c.setups[1].chosen->output_tokens_per_s / 2));
}

TEST_CASE("eager launches take at least as long as CUDA graphs") {
  serving_question eager = question(128, 64);
  eager.eager = true;
  const serving_comparison graphs = serve(request_for({"h100"}), question(128, 64));
  const serving_comparison launched = serve(request_for({"h100"}), eager);
  const serving_point &g = graphs.setups.front().curve.front();
  const serving_point &e = launched.setups.front().curve.front();
  CHECK(e.batch == g.batch);
  CHECK(e.tpot_s > g.tpot_s); // batch 1 decode: launch-bound eager
}

TEST_CASE("questions and requests a serving question refuses") {
  CHECK_THROWS_WITH_AS(check_serving_question(question(0, 10)),
                       doctest::Contains("serving_question::prompt_tokens"), input_error);
  CHECK_THROWS_WITH_AS(check_serving_question(question(10, 0)),
                       doctest::Contains("serving_question::output_tokens"), input_error);
  CHECK_THROWS_WITH_AS(check_serving_question(question(max_serving_tokens, 1)),
                       doctest::Contains("up to 16777216 tokens"), input_error);
  CHECK_THROWS_WITH_AS(check_serving_question(question(10, 10, -1.0)),
                       doctest::Contains("serving_question::ttft_s -1"), input_error);
  CHECK_THROWS_WITH_AS(check_serving_question(question(10, 10, std::nullopt, 0.0)),
                       doctest::Contains("serving_question::tpot_s 0"), input_error);
  compare_request yaml;
  yaml.source =
      parse_network("name: n\nlayers:\n  - {name: l, type: matmul, m: 8, n: 8, k: 8}\n", "n.yaml");
  yaml.gpus = {"h100"};
  CHECK_THROWS_WITH_AS(serve(yaml, question(10, 10)), doctest::Contains("need a model config"),
                       input_error);
  compare_request batches = request_for({"h100"});
  batches.batches = {8};
  CHECK_THROWS_WITH_AS(serve(batches, question(10, 10)),
                       doctest::Contains("compare_request::batches"), input_error);
  CHECK_THROWS_WITH_AS(serve(request_for({"local"}), question(10, 10)),
                       doctest::Contains("compare_request::gpus local"), input_error);
}

TEST_CASE("JSON: each setup's serving, its curve, and the verdict") {
  compare_request request = request_for({"h100", "l4"});
  request.prices = {{"h100", 2.5}};
  const serving_comparison c = serve(request, question(2048, 256, 1.0, 0.05));
  std::ostringstream out;
  write_serving(c, output_format::json, out);
  const nlohmann::json doc = nlohmann::json::parse(out.str());
  CHECK(doc["kind"] == "serving");
  CHECK(doc["question"]["tpot_ms"] == doctest::Approx(50));
  CHECK(doc["question"]["launches"] == "cuda_graphs");
  const nlohmann::json &h100 = doc["setups"][0]["serving"];
  for (const char *field : {"batch", "ttft_ms", "tpot_ms", "requests_per_s", "output_tokens_per_s",
                            "meets_targets", "usd_per_million_output_tokens"})
    CHECK_MESSAGE(h100.contains(field), field);
  CHECK(h100["batch"] == c.setups[0].chosen->batch);
  CHECK(h100["tpot_range_ms"]["low"].get<double>() < h100["tpot_ms"].get<double>());
  CHECK(h100["tpot_range_ms"]["high"].get<double>() > h100["tpot_ms"].get<double>());
  CHECK(h100["usd_per_million_output_tokens_range"]["low"].get<double>() <
        h100["usd_per_million_output_tokens"].get<double>());
  CHECK(h100["meets_targets"] == true);
  CHECK(doc["setups"][1]["serving"]["meets_targets"] == false);
  CHECK(doc["setups"][1]["serving"]["usd_per_million_output_tokens"].is_null());
  CHECK(doc["verdict"]["cheapest"] == "h100-sxm5");
  CHECK(doc["setups"][0]["curve"].size() == c.setups[0].curve.size());
  std::ostringstream svg;
  write_serving(c, output_format::svg, svg);
  CHECK(svg.str().rfind("<svg", 0) == 0);
  CHECK(svg.str().find("TPOT target 50.0 ms") != std::string::npos);
}

TEST_CASE("intervals: TTFT and TPOT carry the steps' bands through their sums") {
  const serving_comparison c = serve(burst_request_for({"h100", "h200"}), question(2048, 256));
  for (const serving_setup &s : c.setups)
    for (const serving_point &p : s.curve) {
      CHECK(p.ttft_range.low_s < p.ttft_s);
      CHECK(p.ttft_s < p.ttft_range.high_s);
      CHECK(p.tpot_range.low_s < p.tpot_s);
      CHECK(p.tpot_s < p.tpot_range.high_s);
      CHECK(p.output_tokens_per_s_low < p.output_tokens_per_s);
      CHECK(p.output_tokens_per_s < p.output_tokens_per_s_high);
    }
  // TTFT's interval is the prefill's plus the decode step's, end by end.
  config_options prefill;
  prefill.glue = glue_style::fused;
  prefill.seq_len = 2048;
  prefill.last_logits = true;
  config_options decode = prefill;
  decode.phase = inference_phase::decode;
  decode.seq_len = 1;
  decode.last_logits = false;
  decode.kv_len = 2176;
  const model_config config = model_config::load(llama);
  const perf_model model = burst_model();
  const time_range p = analyze(config.build(prefill), model, "test").totals.device_range;
  const time_range d = analyze(config.build(decode), model, "test").totals.device_range;
  const serving_point &one = c.setups.front().curve.front();
  CHECK(one.ttft_range.low_s == doctest::Approx(p.low_s + d.low_s));
  CHECK(one.ttft_range.high_s == doctest::Approx(p.high_s + d.high_s));
  CHECK(one.tpot_range.high_s == doctest::Approx(d.high_s + p.high_s / 256));
  // Two Hopper GPUs share their bands: the H200's throughput interval overlaps the H100's.
  CHECK(c.verdict.text.find("Within the model's error") != std::string::npos);
  CHECK(c.verdict.fastest_within_error == std::vector<std::string>{"h100-sxm5"});
}

TEST_CASE("few output tokens: every step prefills several prompts, and TTFT waits for them") {
  config_options prefill;
  prefill.glue = glue_style::fused;
  prefill.seq_len = 2048;
  prefill.last_logits = true;
  const double prefill_s = step_s(prefill);
  // One output token a request: the prompts are the work; no batch serves more requests a
  // second than prefills run.
  const serving_comparison one = serve(request_for({"h100"}), question(2048, 1));
  for (const serving_point &p : one.setups.front().curve) {
    CHECK(p.requests_per_s <= 1 / prefill_s);
    CHECK(p.ttft_s == doctest::Approx(p.request_latency_s));
  }
  // 16 output tokens at a batch above 16: batch / 16 prompts a step, all in the first token's.
  const serving_comparison few = serve(request_for({"h100"}), question(2048, 16));
  const serving_setup &s = few.setups.front();
  REQUIRE(s.curve.size() >= 7);
  const serving_point &p = s.curve[6]; // batch 64
  REQUIRE(p.batch == 64);
  CHECK(p.ttft_s - p.tpot_s == doctest::Approx(0).epsilon(1e-9));
  CHECK(p.tpot_s > 4 * prefill_s);
  // At its batch (the largest that fits: no targets) its memory holds the prefill activations
  // of every prompt a step admits beside the decode step's.
  const model_config config = model_config::load(llama);
  const perf_model model(*spec_catalog::builtin().find("h100-sxm5"));
  const double one_prompt = analyze(config.build(prefill), model, "test").memory->activation_bytes;
  REQUIRE(s.chosen);
  const auto prompts = static_cast<double>((s.chosen->batch + 15) / 16);
  CHECK(prompts > 1);
  CHECK(s.memory->activation_bytes > prompts * one_prompt);
  CHECK(s.memory->fits);
}

TEST_CASE("no answer calls a target met that its own numbers miss") {
  // One output token has no TPOT: a TPOT target is refused (it was reported met beside a
  // 2.33 s TPOT), and the TPOT shown is none.
  CHECK_THROWS_WITH_AS(
      check_serving_question(question(2048, 1, std::nullopt, 0.005)),
      doctest::Contains("serving_question::tpot_s with serving_question::output_tokens 1"),
      input_error);
  const serving_comparison one = serve(request_for({"h100"}), question(2048, 1, 1.0));
  REQUIRE(one.setups.front().chosen);
  CHECK_FALSE(one.setups.front().chosen->has_tpot);
  std::ostringstream json;
  write_serving(one, output_format::json, json);
  const nlohmann::json doc = nlohmann::json::parse(json.str());
  CHECK(doc["setups"][0]["serving"]["tpot_ms"].is_null());
  CHECK(doc["setups"][0]["serving"]["tpot_range_ms"].is_null());
  CHECK(doc["verdict"]["text"].get<std::string>().find("TPOT") == std::string::npos);
  std::ostringstream svg; // its curve along TTFT, not a TPOT it has not
  write_serving(one, output_format::svg, svg);
  CHECK(svg.str().find("against TTFT") != std::string::npos);
  CHECK(svg.str().find("TPOT") == std::string::npos);
  // Every point of every curve is met exactly when its shown TTFT and TPOT are within the
  // targets, on setups that meet them, miss them and meet one of two.
  for (const auto &[ttft, tpot] : {std::pair{1.0, 0.05}, {0.05, 0.02}, {10.0, 0.012}, {0.2, 1.0}}) {
    const serving_comparison c =
        serve(request_for({"h100", "l4"}), question(2048, 256, ttft, tpot));
    for (const serving_setup &s : c.setups)
      for (const serving_point &p : s.curve) {
        CAPTURE(p.batch);
        CHECK(p.meets_ttft == (p.ttft_s <= ttft));
        CHECK(p.meets_tpot == (p.tpot_s <= tpot));
      }
  }
}

TEST_CASE("CSV: each setup's status says meets, misses or does not fit") {
  compare_request request = request_for({"h100", "l4"});
  request.tensor_parallel = {1};
  const serving_comparison c = serve(request, question(2048, 256, 1.0, 0.05));
  std::ostringstream csv;
  write_serving(c, output_format::csv, csv);
  const std::string text = csv.str();
  CAPTURE(text);
  CHECK(text.find("\nh100-sxm5,meets,") != std::string::npos);
  CHECK(text.find("\nl4,misses,") != std::string::npos);
  const serving_comparison huge =
      serve(request_for({"l4"}, glue_style::fused, 1 << 21), question(1 << 20, 256));
  std::ostringstream none;
  write_serving(huge, output_format::csv, none);
  CHECK(none.str().find("\nl4,does not fit,") != std::string::npos);
}

TEST_CASE("a request past a rotary model's context is answered with a note") {
  const auto past_context = [](const serving_comparison &c) {
    const auto &notes = c.setups.front().analysis.notes;
    return std::any_of(notes.begin(), notes.end(), [](const std::string &note) {
      return note.find("past the model's context (`max_position_embeddings` is 8192)") !=
             std::string::npos;
    });
  };
  CHECK_FALSE(past_context(serve(request_for({"h100"}), question(8192 - 256, 256))));
  CHECK(past_context(serve(request_for({"h100"}), question(8192 - 255, 256))));
}

TEST_CASE("a price below a dollar an hour is shown, not rounded to 0.00") {
  compare_request request = request_for({"h100"});
  request.prices = {{"h100", 0.001}};
  const serving_comparison c = serve(request, question(2048, 256));
  std::ostringstream table;
  write_serving(c, output_format::table, table, write_options{false, true}); // $/h is wide
  CAPTURE(table.str());
  CHECK(table.str().find(" 0.001 ") != std::string::npos);
  CHECK(table.str().find(" 0.00 ") == std::string::npos);
}

TEST_CASE("sustained, each serving step is held to the power limit as one: a decode's spare "
          "power lets the prefill beside it keep more of its clock than a prefill alone") {
  const serving_comparison held = serve(request_for({"h100"}), question(2048, 256));
  const serving_comparison burst = serve(burst_request_for({"h100"}), question(2048, 256));
  const serving_point &p = held.setups.front().curve.back();
  const serving_point &b = burst.setups.front().curve.back();
  REQUIRE(p.batch == b.batch);
  // The step at the limit: its burst time, or the time its energy takes at the limit.
  const auto [prefill, decode] = steps_at(p.batch);
  const model_config config = model_config::load(llama);
  const perf_model model(*spec_catalog::builtin().find("h100-sxm5"));
  const analysis pre = analyze(config.build(prefill), model, "test");
  const analysis dec = analyze(config.build(decode), model, "test");
  const double share = static_cast<double>(p.batch) / 256;
  step_work work = dec.power.work;
  work += pre.power.work * share;
  work.step_s = dec.power.burst_device_s(dec.totals.device_time_s) +
                share * pre.power.burst_device_s(pre.totals.device_time_s);
  const power_draw step = draw_of(work, dec.budget, clock_regime::sustained);
  CHECK(p.tpot_s == doctest::Approx(step.step_s));
  CHECK(p.tpot_s >= b.tpot_s);
  CHECK(p.joules_per_output_token == doctest::Approx(step.energy_j / static_cast<double>(p.batch)));
  CHECK(held.verdict.text.find("Least energy per output token") != std::string::npos);
  // The prefill alone is held harder than beside a decode: its sustained share is the larger.
  CHECK(pre.power.slowdown >= 1);
  CHECK(p.tpot_s - b.tpot_s <=
        share * (pre.totals.device_time_s - pre.power.burst_device_s(pre.totals.device_time_s)) +
            1e-12);
}

TEST_CASE("the prompts a step admits are prefilled as one batch, as engines run them") {
  // 16 output tokens at batch 64: 4 prompts a step, prefilled together (one prefill of batch
  // 4), beside the decode step at the mean cache (2048 + 8).
  const serving_comparison few = serve(burst_request_for({"h100"}), question(2048, 16));
  const auto at_64 = std::find_if(few.setups.front().curve.begin(), few.setups.front().curve.end(),
                                  [](const serving_point &p) { return p.batch == 64; });
  REQUIRE(at_64 != few.setups.front().curve.end());
  config_options prefill;
  prefill.glue = glue_style::fused;
  prefill.seq_len = 2048;
  prefill.last_logits = true;
  const double one_prompt_s = step_s(prefill);
  prefill.batch = 4;
  const double four_prompts_s = step_s(prefill);
  config_options decode = steps_at(64).second;
  decode.kv_len = 2048 + 8;
  CHECK(at_64->tpot_s == doctest::Approx(step_s(decode) + four_prompts_s));
  CHECK(at_64->ttft_s == doctest::Approx(at_64->tpot_s));
  // Batched, the four cost less than four prompts one by one (the weights read once).
  CHECK(four_prompts_s < 4 * one_prompt_s);
}

TEST_CASE("fp8: the KV cache in fp8 as engines store it, said; a GPU with no fp8 rate is marked "
          "and the others answered") {
  compare_request request = request_for({"h100", "a100"});
  auto &source = std::get<config_source>(request.source);
  source.options.quantization = quantization::fp8;
  const serving_comparison c = serve(request, question(2048, 256));
  REQUIRE(c.setups.size() == 2);
  const serving_setup &h100 = c.setups[0], &a100 = c.setups[1];
  REQUIRE(h100.chosen);
  CHECK(h100.unsupported.empty());
  const auto said = [](const serving_setup &s, const std::string &phrase) {
    return std::any_of(s.analysis.notes.begin(), s.analysis.notes.end(),
                       [&](const std::string &n) { return n.find(phrase) != std::string::npos; });
  };
  CHECK(said(h100, "the KV cache stored as fp8"));
  // One byte a value: half the bf16 cache's 131,072 bytes a token.
  CHECK(h100.memory->kv_cache_bytes ==
        doctest::Approx(static_cast<double>(h100.chosen->batch) * 2304 * kv_bytes_per_token / 2));
  CHECK_FALSE(a100.chosen);
  CHECK(a100.unsupported.find("no fp8 rate") != std::string::npos);
  CHECK(c.verdict.text.find("Cannot run the model: a100-sxm4-80gb") != std::string::npos);
  CHECK(c.verdict.fastest == std::optional<std::string>("h100-sxm5"));
  // --kv-cache-dtype bf16 keeps it in the layers' format.
  source.options.kv_cache = precision::bf16;
  const serving_comparison kept = serve(request, question(2048, 256));
  CHECK(kept.setups[0].memory->kv_cache_bytes ==
        doctest::Approx(static_cast<double>(kept.setups[0].chosen->batch) * 2304 *
                        kv_bytes_per_token));
}

TEST_CASE("nvfp4 on Blackwell: fp4 GEMMs over weights of 4.5 bits, the KV cache in fp8 and the "
          "table saying so; a Hopper marked as it has no fp4 rate") {
  compare_request request = request_for({"b200", "h200"});
  auto &source = std::get<config_source>(request.source);
  source.options.quantization = quantization::nvfp4;
  const serving_comparison c = serve(request, question(2048, 256));
  CHECK(c.kv_cache == "fp8");
  CHECK(written(c).find("KV cache fp8") != std::string::npos);
  const serving_setup &b200 = c.setups[0], &h200 = c.setups[1];
  REQUIRE(b200.chosen);
  CHECK(h200.unsupported.find("no fp4 rate") != std::string::npos);
  // The blocks' linear weights: 4 bits and a byte per 16 (0.5625 B), against bf16's 2: the
  // weights of 8B at bf16 are 16.06 GB, the LM head and embeddings (2 · 525M parameters) kept.
  const double bf16_weights =
      serve(request_for({"b200"}), question(2048, 256)).setups[0].memory->weights_bytes;
  const double head_and_embeddings = 2 * 128256.0 * 4096 * 2;
  CHECK(b200.memory->weights_bytes ==
        doctest::Approx(head_and_embeddings + (bf16_weights - head_and_embeddings) * 0.5625 / 2)
            .epsilon(0.01));
  bool fp4_gemm = false;
  for (const op &o : lower(source.config.build(source.options)))
    fp4_gemm = fp4_gemm || (o.gemm && o.precision == precision::fp4);
  CHECK(fp4_gemm);
}

TEST_CASE("a batch just below the largest that serves more (GEMM tiles filled whole) is named "
          "beside it") {
  const serving_comparison c = serve(request_for({"h200"}), question(2048, 256));
  const serving_setup &s = c.setups.front();
  REQUIRE(s.chosen);
  REQUIRE(s.most_throughput);
  CHECK(s.most_throughput->batch < s.chosen->batch);
  CHECK(s.most_throughput->batch % 64 == 0);
  CHECK(s.most_throughput->meets_targets());
  CHECK(s.most_throughput->output_tokens_per_s > 1.005 * s.chosen->output_tokens_per_s);
  CHECK(c.verdict.text.find("more output tokens a second at batch " +
                            std::to_string(s.most_throughput->batch)) != std::string::npos);
}

TEST_CASE("a simulated closed loop of one request at a time, by hand: its prompt in one step (a "
          "prefill of 2048 tokens), then a decode step of one request per token") {
  serving_question q = question(2048, 8);
  q.concurrency = 1;
  q.simulated_requests = 3;
  const serving_comparison c = serve(burst_request_for({"h100"}), q);
  const serving_setup &s = c.setups.front();
  REQUIRE(s.simulated);
  auto [prefill, decode] = steps_at(1);
  decode.kv_len = 2048 + 4; // the request's mean cache
  const double prefill_s = step_s(prefill), decode_s = step_s(decode);
  for (const served_request &r : s.simulated->requests) {
    CHECK(r.ttft_s == doctest::Approx(prefill_s));
    CHECK(r.tpot_s == doctest::Approx(decode_s));
    CHECK(r.latency_s == doctest::Approx(prefill_s + 7 * decode_s));
  }
  CHECK(s.simulated->steps == 3 * 8);
  CHECK(s.simulated->ttft.p99 == doctest::Approx(prefill_s));
  // Beside the steady state, whose answer stands.
  CHECK(s.chosen);
  // Targets are checked at p90: a TTFT target just above the prefill is met, just below missed.
  q.ttft_s = prefill_s * 1.01;
  const serving_comparison met = serve(burst_request_for({"h100"}), q);
  CHECK(written(met).find("; meets TTFT") != std::string::npos);
  q.ttft_s = prefill_s * 0.99;
  const serving_comparison missed = serve(burst_request_for({"h100"}), q);
  CHECK(written(missed).find("; misses TTFT") != std::string::npos);
}

TEST_CASE("a pipeline of two stages by hand: each holds half the layers and half the running "
          "requests at a time; a token crosses both, so TPOT is twice a stage's step") {
  serving_question q = question(2048, 256, 1.0, 0.050);
  q.pipeline_parallel = 2;
  const serving_comparison c = serve(burst_request_for({"h100"}), q);
  const serving_setup &s = c.setups.front();
  CHECK(s.gpus() == 2);
  CHECK(s.name == "h100-sxm5 ×2 stages");
  REQUIRE(s.chosen);
  const serving_point &p = *s.chosen;
  auto [prefill, decode] = steps_at((p.batch + 1) / 2); // one stage's micro-batch
  prefill.pipeline_parallel = decode.pipeline_parallel = 2;
  // Two micro-batches or more: the slowest stage paces the pipeline, one step each. A prefill
  // (one micro-batch) crosses both stages once: less than two stage steps (the embedding and
  // the LM head once), more than one. The sends between them (one node: µs) on top.
  const double decode_s = 2 * step_s(decode), stage_prefill_s = step_s(prefill);
  const double prompts = static_cast<double>(p.batch) / 256;
  CHECK(p.tpot_s > decode_s + prompts * stage_prefill_s);
  CHECK(p.tpot_s < decode_s + prompts * 2 * stage_prefill_s);
  // One request: a token crosses both stages once, the LM head once: less than two stage steps.
  const serving_point &alone = s.curve.front();
  REQUIRE(alone.batch == 1);
  auto [prefill_1, decode_1] = steps_at(1);
  prefill_1.pipeline_parallel = decode_1.pipeline_parallel = 2;
  CHECK(alone.tpot_s > step_s(decode_1));
  CHECK(alone.tpot_s < 2 * step_s(decode_1) + 2 * step_s(prefill_1) / 256);
  // Per GPU: the weights of 16 of the 32 layers (the embedding and LM head on both: a bound).
  const serving_comparison one = serve(burst_request_for({"h100"}), question(2048, 256));
  CHECK(s.memory->weights_bytes < 0.6 * one.setups.front().memory->weights_bytes);
  CHECK(p.output_tokens_per_s_per_gpu == doctest::Approx(p.output_tokens_per_s / 2));
  // More stages than layers is refused.
  q.pipeline_parallel = 64;
  CHECK_THROWS_AS(serve(burst_request_for({"h100"}), q), input_error);
}

TEST_CASE("a mixture served with data-parallel attention: 8 GPUs, each its eighth of the running "
          "requests and one of Mixtral's 8 experts, their MoE layers in lockstep") {
  const std::string mixtral = ROOFLINE_SOURCE_DIR "/examples/configs/mixtral-8x7b.json";
  config_options options;
  options.glue = glue_style::fused;
  options.expert_parallel = 8;
  compare_request request;
  request.source = config_source{model_config::load(mixtral), options};
  request.gpus = {"h100"};
  const serving_comparison c = serve(request, question(1024, 256, std::nullopt, 0.050));
  const serving_setup &s = c.setups.front();
  CHECK(s.attention_ranks == 8);
  CHECK(s.gpus() == 8);
  CHECK(s.name == "h100-sxm5 ×8 EP");
  REQUIRE(s.chosen);
  const std::int64_t batch = s.chosen->batch;
  CHECK(batch > 8);
  // One rank's memory: its eighth of the requests' caches (rounded up), one expert of each
  // layer's eight: below a sixth of the weights all the experts would take.
  options.expert_parallel = 1;
  options.phase = inference_phase::decode;
  options.batch = 1;
  options.seq_len = 1;
  options.kv_len = 1024 + 256;
  const memory_use whole = memory_of(model_config::load(mixtral).build(options),
                                     lower(model_config::load(mixtral).build(options)), 80e9);
  CHECK(s.memory->weights_bytes < whole.weights_bytes / 4);
  CHECK(s.memory->kv_cache_bytes ==
        doctest::Approx(whole.kv_cache_bytes * static_cast<double>((batch + 7) / 8)));
  CHECK(s.chosen->output_tokens_per_s_per_gpu ==
        doctest::Approx(s.chosen->output_tokens_per_s / 8));
  // At one request the prompt is prefilled whole on its own rank, and the experts serve its
  // tokens alone (sending_ranks 1): TTFT = that prefill + a decode of one, by hand at the boost
  // clock. Spreading its 1024 tokens as 128 on each rank, as before, was quicker.
  compare_request at_boost = request;
  at_boost.clock = clock_regime::burst;
  const serving_comparison alone = serve(at_boost, question(1024, 256));
  const std::vector<serving_point> &curve = alone.setups.front().curve;
  const auto at_1 =
      std::find_if(curve.begin(), curve.end(), [](const serving_point &p) { return p.batch == 1; });
  REQUIRE(at_1 != curve.end());
  const serving_point &p1 = *at_1;
  config_options prefill = options, decode = options;
  prefill.expert_parallel = decode.expert_parallel = 8;
  prefill.phase = inference_phase::prefill;
  prefill.batch = 1;
  prefill.seq_len = 1024;
  prefill.kv_len.reset();
  prefill.last_logits = true;
  prefill.token_ranks = 1;
  decode.batch = 1;
  decode.kv_len = 1024 + 128;
  decode.token_ranks = 1; // one request: one rank has a token
  const auto device_s = [&](const config_options &o) {
    return analyze(model_config::load(mixtral).build(o), burst_model(), "test")
        .totals.device_time_s;
  };
  CHECK(to_network_yaml(model_config::load(mixtral).build(prefill)).find("sending_ranks: 1") !=
        std::string::npos);
  CHECK(p1.ttft_s == doctest::Approx(device_s(prefill) + device_s(decode)));
  prefill.seq_len = 128;
  prefill.token_ranks = 0;
  CHECK(p1.ttft_s > 1.2 * (device_s(prefill) + device_s(decode)));
  // A pipeline of them is refused, as is expert parallelism other than the setup's TP group.
  serving_question piped = question(1024, 256);
  piped.pipeline_parallel = 2;
  CHECK_THROWS_AS(serve(request, piped), input_error);
  request.tensor_parallel = {2};
  options.expert_parallel = 8;
  request.source = config_source{model_config::load(mixtral), options};
  CHECK_THROWS_AS(serve(request, question(1024, 256)), input_error);
}
