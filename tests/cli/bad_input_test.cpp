// SPDX-License-Identifier: Apache-2.0
// Bad input: every case must exit with status 2, print nothing on stdout (no partial report) and
// say on stderr where the problem is (file:line:column when a file is involved) and what was
// expected. The inputs are small files in tests/cli/bad/; line 1 of each says what is wrong, so
// the line numbers asserted here stay put.
#include "../scoped_env.hpp"
#include "cli_runner.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using roofline::test::cli_result;
using roofline::test::read_text;
using roofline::test::run_cli;
using roofline::test::source_path;
using roofline::test::temp_dir;

namespace {

std::string bad(const std::string &file) {
  return source_path("tests/cli/bad/" + file);
}

const std::string alexnet = source_path("examples/alexnet-classifier.yaml");

/// The start of an output, for failure messages (a wrongly accepted input prints a whole report).
std::string head(const std::string &text) {
  return text.size() <= 400 ? text : text.substr(0, 400) + "...";
}

/// Status 2, nothing on stdout, and stderr holding `where` (e.g. "file:4:35") followed by ": ",
/// and every one of `expected` (what the input should have been).
void check_input_error(const cli_result &r, const std::string &where,
                       std::initializer_list<std::string> expected) {
  INFO("stderr: " << r.err);
  INFO("stdout: " << head(r.out));
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK_MESSAGE(r.err.find(where + ": ") != std::string::npos, "stderr does not name " << where);
  for (const std::string &phrase : expected)
    CHECK_MESSAGE(r.err.find(phrase) != std::string::npos, "stderr does not say " << phrase);
}

/// Like check_input_error, where any column of `line` of `file` will do (cases whose fix may point
/// at one key or another of the line).
void check_input_error_on_line(const cli_result &r, const std::string &file, int line) {
  INFO("stderr: " << r.err);
  INFO("stdout: " << head(r.out));
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  const std::regex location(
      std::regex_replace(file, std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)") + ":" +
      std::to_string(line) + ":[0-9]+: ");
  CHECK_MESSAGE(std::regex_search(r.err, location),
                "stderr does not name " << file << ":" << line << ":<column>");
}

/// A command-line error (no file involved): status 2, nothing on stdout, and stderr saying
/// `expected`.
void check_usage_error(const cli_result &r, std::initializer_list<std::string> expected) {
  INFO("stderr: " << r.err);
  INFO("stdout: " << head(r.out));
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  for (const std::string &phrase : expected)
    CHECK_MESSAGE(r.err.find(phrase) != std::string::npos, "stderr does not say " << phrase);
}

cli_result analyse(const std::string &file, const std::string &gpu = "h100") {
  return run_cli({file, "--gpu", gpu, "--format", "json"});
}

} // namespace

// ------------------------------------------------------------------ the file itself

TEST_CASE("a missing network file") {
  const std::string file = bad("does-not-exist.yaml");
  check_input_error(analyse(file), file, {"cannot open network file", "no such file"});
}

TEST_CASE("a directory instead of a network file") {
  const std::string dir = source_path("tests/cli/bad");
  check_input_error(analyse(dir), dir, {"cannot open network file", "not a regular file"});
}

TEST_CASE("an unreadable network file") {
  if (geteuid() == 0) {
    MESSAGE("skipped: running as root, which reads any file whatever its permissions");
    return;
  }
  temp_dir dir;
  const std::string file = dir / "unreadable.yaml";
  fs::copy_file(alexnet, file);
  fs::permissions(file, fs::perms::none);
  check_input_error(analyse(file), file, {"cannot open network file", "unreadable"});
}

TEST_CASE("a YAML syntax error") {
  const std::string file = bad("yaml-syntax-error.yaml");
  check_input_error(analyse(file), file + ":5:5",
                    {"YAML syntax error", "did not find expected ',' or '}'"});
}

TEST_CASE("a file with nothing but a comment") {
  const std::string file = bad("empty.yaml");
  check_input_error(analyse(file), file + ":1:1",
                    {"expected a network", "`name`", "`layers`", "got nothing"});
}

TEST_CASE("a zero-byte file") {
  temp_dir dir;
  const std::string file = dir / "zero.yaml";
  { std::ofstream create(file); } // zero bytes
  check_input_error(analyse(file), file + ":1:1", {"expected a network", "got nothing"});
}

// ------------------------------------------------------------------ keys and values

TEST_CASE("an unknown layer type names the closest one") {
  const std::string file = bad("unknown-layer-type.yaml");
  check_input_error(
      analyse(file), file + ":4:23",
      {"unknown layer type 'linaer'", "(did you mean `linear`?)", "expected one of `linear`"});
}

TEST_CASE("an unknown key names the closest one") {
  const std::string file = bad("unknown-key.yaml");
  check_input_error(analyse(file), file + ":4:41",
                    {"layer `fc6` (linear)", "unknown key `outt`", "did you mean `out`"});
}

TEST_CASE("a missing required key") {
  const std::string file = bad("missing-key.yaml");
  check_input_error(analyse(file), file + ":4:5",
                    {"layer `fc6` (linear)", "missing required key `in`"});
}

TEST_CASE("a layer without its required `name` is an input error") {
  // Before the fix: exits 1 with "invalid node; first invalid key: \"name\"" (an exception of the
  // YAML library, escaping) and no location.
  const std::string file = bad("missing-name.yaml");
  check_input_error(analyse(file), file + ":4:5", {"missing required key `name`"});
}

TEST_CASE("a duplicated key is an input error, not silently resolved") {
  // Before the fix: accepted with status 0; the analysis uses the first `in` (8) and ignores the
  // second (9216).
  check_input_error_on_line(analyse(bad("duplicate-key.yaml")), bad("duplicate-key.yaml"), 4);
}

TEST_CASE("sizes must be positive integers") {
  SUBCASE("a fraction") {
    const std::string file = bad("size-fraction.yaml");
    check_input_error(analyse(file), file + ":4:35",
                      {"`in` must be a positive integer, got '1.5'"});
  }
  SUBCASE("text") {
    const std::string file = bad("size-text.yaml");
    check_input_error(analyse(file), file + ":4:46",
                      {"`out` must be a positive integer, got 'abc'"});
  }
  SUBCASE("zero") {
    const std::string file = bad("size-zero.yaml");
    check_input_error(analyse(file), file + ":4:46", {"`out` must be a positive integer, got 0"});
  }
  SUBCASE("negative") {
    const std::string file = bad("size-negative.yaml");
    check_input_error(analyse(file), file + ":4:35",
                      {"`in` must be a positive integer, got -4096"});
  }
  SUBCASE("past 64 bits") {
    const std::string file = bad("size-too-big.yaml");
    check_input_error(analyse(file), file + ":4:35",
                      {"`in` = 100000000000000000000 does not fit in a 64-bit integer"});
  }
}

TEST_CASE("an unknown precision names the closest one") {
  const std::string file = bad("unknown-precision.yaml");
  check_input_error(analyse(file), file + ":3:12",
                    {"unknown precision `fp15`", "did you mean `fp16`",
                     "expected `fp64`, `fp32`, `tf32`, `fp16`"});
}

TEST_CASE("an unknown mode") {
  const std::string file = bad("unknown-mode.yaml");
  check_input_error(
      analyse(file), file + ":3:7",
      {"`mode` must be `inference` or `training`, got `train`", "did you mean `training`"});
}

// ------------------------------------------------------------------ shapes and counts

TEST_CASE("a conv kernel larger than its padded input") {
  const std::string file = bad("conv-kernel-too-large.yaml");
  check_input_error(analyse(file), file + ":5:5",
                    {"layer `conv1` (conv2d)", "7×7 kernel is larger than the padded 5×5 input"});
}

TEST_CASE("a memory-bound op whose size nothing gives") {
  const std::string file = bad("memory-op-no-size.yaml");
  check_input_error(analyse(file), file + ":5:5", {"layer `relu0` (relu)", "add `features`"});
}

TEST_CASE("sizes that fit in 64 bits but whose FLOPs do not") {
  const std::string file = bad("flops-overflow.yaml");
  check_input_error(analyse(file), file + ":5:5",
                    {"layer `huge`", "FLOP count", "overflows a 64-bit integer"});
}

TEST_CASE("batch x seq_len past 64 bits is located in the file") {
  // Before the fix: the message is "rows-overflow.yaml: layer `rows-overflow`: batch × seq_len
  // overflows ...": no line:column, and it calls the network a layer.
  check_input_error_on_line(analyse(bad("rows-overflow.yaml")), bad("rows-overflow.yaml"), 4);
}

TEST_CASE("nested repeat counts past 64 bits") {
  const std::string file = bad("repeat-count-overflow.yaml");
  check_input_error(analyse(file), file + ":7:9",
                    {"layer `outer/inner`", "repeat count overflows a 64-bit integer"});
}

TEST_CASE("a memory-bound op whose FLOPs overflow 64 bits is an input error") {
  // Before the fix: exits 0 and reports flops -9223372036854775808 (8 × 2^61 converted from double
  // to int64 without a check, in lowering's add_memory_op).
  const std::string file = bad("memory-op-flops-overflow.yaml");
  check_input_error(analyse(file), file + ":5:5", {"layer `gelu`", "overflows a 64-bit integer"});
}

TEST_CASE("attention whose softmax overflows 64 bits is an input error") {
  // Before the fix: exits 0; the softmax has flops -9223372036854775808, and in training its
  // backward pass is silently dropped (3 × scores wraps negative; lowering's `2 * scores` / `3 *
  // scores` are unchecked).
  const std::string file = bad("attention-softmax-overflow.yaml");
  check_input_error(analyse(file), file + ":6:5", {"layer `attn`", "overflows a 64-bit integer"});
}

TEST_CASE("a pool whose traffic overflows 64 bits is an input error") {
  // Before the fix: exits 0 and reports bytes -9223372036854775808 (lowering's `input + output` is
  // unchecked).
  const std::string file = bad("pool-bytes-overflow.yaml");
  check_input_error(analyse(file), file + ":5:5", {"layer `pool`", "overflows a 64-bit integer"});
}

TEST_CASE(
    "GEMM runs per step past 64 bits: an input error or a correct total, never a negative one") {
  // Before the fix: exits 0 with totals.gemm_count -8446744073709551616 (report.cpp sums the counts
  // unchecked).
  const cli_result r = analyse(bad("gemm-count-overflow.yaml"));
  INFO("stderr: " << r.err);
  REQUIRE((r.status == 0 || r.status == 2));
  if (r.status == 2) {
    CHECK(r.out.empty());
    return;
  }
  const auto report = nlohmann::json::parse(r.out);
  CHECK(report["totals"]["gemm_count"].get<double>() == doctest::Approx(1e19));
}

TEST_CASE("huge nested repeat counts finish quickly: they are counted, not expanded") {
  // 10^12 × 10^6 = 10^18 runs: fits, so it works.
  const cli_result r = analyse(source_path("tests/cli/inputs/huge-repeat.yaml"));
  INFO("stderr: " << r.err);
  REQUIRE((r.status == 0 || r.status == 2));
  if (r.status == 2) {
    CHECK(r.out.empty());
    return;
  }
  const auto report = nlohmann::json::parse(r.out);
  REQUIRE(report["ops"].size() == 3);
  CHECK(report["ops"][0]["count"] == 1000000000000);
  CHECK(report["ops"][1]["count"] == 1000000000000000000);
  CHECK(report["totals"]["op_count"] == 3);
}

// ------------------------------------------------------------------ the GPU

TEST_CASE("an unknown GPU names the closest ones") {
  check_usage_error(run_cli({alexnet, "--gpu", "h2000", "--format", "json"}),
                    {"unknown GPU `h2000`", "(did you mean `h200-sxm`", "roofline-advise specs"});
}

TEST_CASE("a GPU spec file with an error") {
  const std::string spec = bad("gpu-spec-error.yaml");
  check_input_error(
      analyse(alexnet, spec), spec + ":8:26",
      {"GPU spec", "`dram_bandwidth_gb_per_s` must be a positive number, got 'fast'"});
}

TEST_CASE("a missing GPU spec file") {
  const std::string spec = bad("no-such-gpu.yaml");
  check_input_error(analyse(alexnet, spec), spec, {"cannot open GPU spec", "no such file"});
}

TEST_CASE("a layer precision the GPU has no rate for names the layer") {
  // Before the fix (message): "v100-sxm2 has no bf16 rate in its spec (...)" says neither which
  // layer nor where it is; the network file is not named at all.
  const std::string file = bad("precision-not-on-gpu.yaml");
  const cli_result r = analyse(file, "v100");
  check_usage_error(r, {"no bf16 rate"});
  check_input_error_on_line(r, file, 6);
}

// ------------------------------------------------------------------ the command line

TEST_CASE("an unknown --format") {
  check_usage_error(run_cli({alexnet, "--gpu", "h100", "--format", "xml"}),
                    {"--format", "xml", "table", "json", "csv", "markdown"});
}

TEST_CASE("sizes near 2^63 whose advice once overflowed analyse to a report, without undefined "
          "behaviour") {
  // Before the fix, under UBSan: signed overflow in the tile efficiency of skinny GEMMs (M or N
  // rounded up to its tile, times the other's tile), in 2 × batch of the batch advice, and "layer
  // `padding`: its FLOP count overflows" (exit 2) for a padded K past 2^62. The release build
  // printed garbage with exit 0.
  const std::vector<std::vector<std::string>> inputs{
      {"gemm", "4611686018427387903", "1", "1", "-p", "fp8"},
      {"gemm", "1", "4611686018427387903", "1", "-p", "fp8"},
      {"gemm", "1", "1", "4611686018427387903", "-p", "fp8"},
      {"gemm", "1152921504606846975", "1", "1", "-p", "fp32"},
      {"gemm", "2147483647", "2147483647", "1"},
  };
  for (std::vector<std::string> args : inputs) {
    args.insert(args.end(), {"--gpu", "h100", "--format", "json"});
    const cli_result r = run_cli(args);
    CAPTURE(args[1] + " " + args[2] + " " + args[3]);
    INFO("stderr: " << r.err);
    CHECK(r.status == 0);
    CHECK(r.err.find("runtime error") == std::string::npos);
    const auto report = nlohmann::json::parse(r.out);
    CHECK(report["ops"][0]["gemm_model"]["tile_efficiency"].get<double>() > 0);
  }
  temp_dir dir;
  const std::string net = dir / "batch.yaml";
  std::ofstream(net) << "name: batch\nbatch: 9223372036854775807\nlayers:\n"
                        "  - {name: mm, type: matmul, m: 64, n: 64, k: 64}\n";
  const cli_result r = analyse(net);
  INFO("stderr: " << r.err);
  CHECK(r.status == 0);
  CHECK(nlohmann::json::parse(r.out)["advice"]["batch"].empty());
}

TEST_CASE("gemm with bad sizes") {
  SUBCASE("zero") {
    check_usage_error(run_cli({"gemm", "0", "1", "1", "--gpu", "h100"}), {"M", "0"});
  }
  SUBCASE("negative") {
    check_usage_error(run_cli({"gemm", "-5", "1", "1", "--gpu", "h100"}), {"M", "-5"});
  }
  SUBCASE("too few") {
    check_usage_error(run_cli({"gemm", "1", "2", "--gpu", "h100"}), {"K is required"});
  }
  SUBCASE("unknown precision") {
    check_usage_error(run_cli({"gemm", "1", "2", "3", "--precision", "fp17", "--gpu", "h100"}),
                      {"unknown --precision `fp17`", "fp16"});
  }
}

TEST_CASE("no arguments at all prints the usage on stderr") {
  check_usage_error(run_cli({}), {"Usage:", "network", "gemm", "specs"});
}

// ------------------------------------------------------------------ --output

TEST_CASE("--output with an unknown extension creates no file") {
  temp_dir dir;
  const std::string target = dir / "report.xml";
  check_usage_error(run_cli({alexnet, "--gpu", "v100", "--output", target}),
                    {"--output", "cannot tell the format from the extension", ".json"});
  CHECK(fs::is_empty(dir.path()));
}

TEST_CASE("--output to a directory fails and leaves nothing behind") {
  // Before the fix: the error is right (status 2, "Is a directory"), but report.json.tmp is left
  // beside it.
  temp_dir dir;
  const std::string target = dir / "report.json";
  fs::create_directory(target);
  check_usage_error(run_cli({alexnet, "--gpu", "v100", "--output", target}),
                    {"--output", "report.json"});
  CHECK_MESSAGE(!fs::exists(target + ".tmp"), "left behind: " << target << ".tmp");
}

TEST_CASE("--output into a directory that does not exist") {
  temp_dir dir;
  const std::string target = dir / "missing/report.json";
  check_usage_error(run_cli({alexnet, "--gpu", "v100", "--output", target}),
                    {"--output", "cannot write"});
  CHECK(fs::is_empty(dir.path()));
}

TEST_CASE("--output x.json writes the JSON that --format json prints") {
  temp_dir dir;
  const std::string target = dir / "x.json";
  const cli_result with_file = run_cli({alexnet, "--gpu", "v100", "--output", target});
  REQUIRE(with_file.status == 0);
  CHECK(with_file.out.find("alexnet-classifier · NVIDIA Tesla V100") ==
        0); // stdout keeps the table
  const cli_result json_out = run_cli({alexnet, "--gpu", "v100", "--format", "json"});
  REQUIRE(json_out.status == 0);

  const std::string written = read_text(target);
  CHECK(written == json_out.out);
  CHECK_FALSE(nlohmann::json::parse(written, nullptr, false).is_discarded());
  CHECK_FALSE(fs::exists(target + ".tmp"));
}

TEST_CASE("--plot and --html need their own extensions, and nothing is written when one is wrong") {
  temp_dir dir;
  check_usage_error(
      run_cli({alexnet, "--gpu", "v100", "--plot", dir / "chart.png", "--html", dir / "p.html"}),
      {"--plot", "chart.png", ".svg"});
  check_usage_error(run_cli({alexnet, "--gpu", "v100", "--plot", dir / "chart.json"}),
                    {"--plot", "the chart is SVG"});
  check_usage_error(run_cli({alexnet, "--gpu", "v100", "--html", dir / "page.md"}),
                    {"--html", "the page is HTML"});
  CHECK(fs::is_empty(dir.path()));
}

TEST_CASE("--plot and --html write the chart and the page beside the display") {
  temp_dir dir;
  const cli_result r = run_cli({"compare", alexnet, "--gpus", "v100,h100", "--plot",
                                dir / "cmp.svg", "--html", dir / "cmp.html"});
  REQUIRE(r.status == 0);
  const std::string svg = read_text(dir / "cmp.svg"), html = read_text(dir / "cmp.html");
  CHECK(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0) == 0);
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(html.find(svg.substr(0, svg.find('>'))) != std::string::npos); // the same chart inside
  CHECK(html.find("Tesla V100") != std::string::npos);
}

TEST_CASE("config options are refused for a network YAML, and a bad --phase is named") {
  check_usage_error(run_cli({alexnet, "--gpu", "v100", "--phase", "decode"}),
                    {"--phase applies to a model config"});
  check_usage_error(
      run_cli({source_path("examples/configs/gpt2.json"), "--gpu", "v100", "--phase", "generate"}),
      {"unknown --phase `generate`", "prefill or decode"});
  check_usage_error(run_cli({alexnet, "--gpu", "v100", "--quantization", "w4a16"}),
                    {"--quantization applies to a model config"});
  const std::string llama = source_path("examples/configs/llama-3-8b.json");
  check_usage_error(run_cli({llama, "--gpu", "h100", "--quantization", "int3"}),
                    {"unknown --quantization `int3`", "w8a16, w4a16, fp8, nvfp4 or mxfp4"});
  check_usage_error(run_cli({llama, "--gpu", "h100", "--kv-cache-dtype", "fp32"}),
                    {"unknown --kv-cache-dtype `fp32`"});
  check_usage_error(
      run_cli({llama, "--gpu", "h100", "--kv-cache-dtype", "fp8", "--unfused-attention"}),
      {"--kv-cache-dtype needs fused attention"});
  check_usage_error(run_cli({"compare", alexnet, "--gpus", "v100,a100", "--tp", "1,2"}),
                    {"--tp: only a model config can be sharded"});
  check_usage_error(run_cli({llama, "--gpu", "h100", "--tp", "5"}),
                    {"the 32 attention heads do not split over 5 GPUs"});
  // fp8 GEMMs on a GPU without fp8 tensor cores are refused, naming the layer.
  check_usage_error(run_cli({llama, "--gpu", "a100", "--quantization", "fp8"}),
                    {"decoder_layer/qkv_proj", "no fp8 rate"});
}

TEST_CASE("a model config analyses, and --emit-yaml writes the network it built") {
  temp_dir dir;
  const cli_result r =
      run_cli({source_path("examples/configs/llama-3-8b.json"), "--gpu", "h100", "--phase",
               "decode", "--kv-len", "4096", "--emit-yaml", dir / "net.yaml"});
  REQUIRE(r.status == 0);
  CHECK(r.out.find("llama-3-8b-decode") == 0);
  CHECK(r.out.find("time per output token: ") != std::string::npos);
  CHECK(r.out.find("at a 4096-token KV cache, batch 1") != std::string::npos);
  const cli_result json =
      run_cli({source_path("examples/configs/llama-3-8b.json"), "--gpu", "h100", "--phase",
               "decode", "--kv-len", "4096", "--batch", "8", "--format", "json"});
  REQUIRE(json.status == 0);
  const nlohmann::json serving = nlohmann::json::parse(json.out)["serving"];
  CHECK(serving["phase"] == "decode");
  const double per_token_us = serving["time_per_output_token_us"].get<double>();
  CHECK(serving["tokens_per_s"].get<double>() == doctest::Approx(8 / (per_token_us * 1e-6)));
  CHECK(serving["kv_len"] == 4096);
  const cli_result again = run_cli({dir / "net.yaml", "--gpu", "h100"});
  REQUIRE(again.status == 0);
  const auto total = [](const std::string &text) { return text.substr(text.find("total:"), 60); };
  CHECK(total(again.out) == total(r.out));
}

TEST_CASE("--mode training: a config's memory counts gradients and optimizer state, per GPU") {
  temp_dir dir;
  const std::string llama = source_path("examples/configs/llama-2-7b.json");
  const cli_result r = run_cli({llama, "--gpu", "h100", "--mode", "training", "--tp", "2",
                                "--format", "json", "--emit-yaml", dir / "train.yaml"});
  REQUIRE(r.status == 0);
  const nlohmann::json report = nlohmann::json::parse(r.out);
  CHECK(report["network"]["mode"] == "training");
  CHECK(report["serving"].is_null());
  const nlohmann::json &memory = report["memory"];
  // Half of Llama-2-7B's 6,738,149,376 parameters on each GPU: fp16 weights and gradients,
  // AdamW's 12 bytes.
  CHECK(memory["weights_bytes"] == 6'738'149'376.0);
  CHECK(memory["gradient_bytes"] == 6'738'149'376.0);
  CHECK(memory["optimizer_bytes"] == 6 * 6'738'149'376.0);
  CHECK(memory["optimizer"] == "adamw");
  CHECK(memory["recompute"] == "none");
  CHECK(memory["kv_cache_bytes"] == 0);
  CHECK(memory["max_batch"].get<std::int64_t>() >= 1);
  // The YAML it wrote trains the same.
  const cli_result again = run_cli({dir / "train.yaml", "--gpu", "h100", "--format", "json"});
  REQUIRE(again.status == 0);
  CHECK(nlohmann::json::parse(again.out)["memory"] == memory);
  // SGD and recomputation, from the command line, on the config and on the YAML alike.
  for (const std::string &network : {llama, dir / "train.yaml"}) {
    std::vector<std::string> args{network, "--gpu",       "h100", "--optimizer",
                                  "sgd",   "--recompute", "full"};
    if (network == llama)
      args.insert(args.end(), {"--mode", "training", "--tp", "2"});
    const cli_result text = run_cli(args);
    REQUIRE(text.status == 0);
    CHECK(text.out.find("6.74 GB gradients + 27.0 GB optimizer state (sgd") != std::string::npos);
    CHECK(text.out.find("--recompute full: each block's input") != std::string::npos);
    CHECK(text.out.find("the largest micro-batch that fits") != std::string::npos);
  }
  // compare builds the training step at each degree.
  const cli_result compared = run_cli({"compare", llama, "--gpus", "h100,h200", "--mode",
                                       "training", "--optimizer", "sgd", "--format", "json"});
  REQUIRE(compared.status == 0);
  const nlohmann::json h200 = nlohmann::json::parse(compared.out)["gpus"][1]["memory"];
  CHECK(h200["optimizer"] == "sgd");
  CHECK(h200["optimizer_bytes"] == 8 * 6'738'149'376.0);
}

TEST_CASE("--mode training refuses what only a served step has, and names bad choices") {
  const std::string llama = source_path("examples/configs/llama-2-7b.json");
  const auto training = [&](std::vector<std::string> more) {
    std::vector<std::string> args{llama, "--gpu", "h100", "--mode", "training"};
    args.insert(args.end(), more.begin(), more.end());
    return run_cli(args);
  };
  check_usage_error(training({"--phase", "decode"}),
                    {"--phase decode, a served model's step, has no place in a training step"});
  check_usage_error(training({"--kv-len", "4096"}),
                    {"--kv-len, the cache a decode step reads, has no place"});
  check_usage_error(training({"--last-logits"}),
                    {"--last-logits applies to a prefill", "logits of every position"});
  check_usage_error(training({"--kv-cache-dtype", "fp8"}),
                    {"--kv-cache-dtype, the KV cache's format, has no place"});
  check_usage_error(training({"--quantization", "w4a16"}),
                    {"--quantization w4a16 is weight-only quantization for inference"});
  check_usage_error(training({"--quantization", "fp8"}),
                    {"--quantization fp8 is modelled for inference"});
  check_usage_error(training({"--glue", "fused"}), {"--glue fused is a serving engine's kernels"});
  check_usage_error(training({"--optimizer", "adam"}),
                    {"unknown --optimizer `adam`; expected adamw or sgd"});
  check_usage_error(training({"--recompute", "selective"}),
                    {"unknown --recompute `selective`; expected none or full"});
  check_usage_error(run_cli({llama, "--gpu", "h100", "--mode", "train"}),
                    {"unknown --mode `train`; expected inference or training"});
  check_usage_error(run_cli({llama, "--gpu", "h100", "--optimizer", "sgd"}),
                    {"--optimizer applies to a training step: give --mode training"});
  check_usage_error(run_cli({llama, "--gpu", "h100", "--recompute", "full"}),
                    {"--recompute applies to a training step: give --mode training"});
  check_usage_error(
      run_cli({"compare", llama, "--gpus", "h100,h200", "--mode", "training", "--phase", "decode"}),
      {"--phase decode, a served model's step, has no place in a training step"});
  // A network YAML says its own mode; its optimizer and recomputation may be chosen in training.
  check_usage_error(run_cli({alexnet, "--gpu", "v100", "--mode", "training"}),
                    {"--mode applies to a model config"});
  check_usage_error(run_cli({alexnet, "--gpu", "v100", "--optimizer", "sgd"}),
                    {"--optimizer applies to a training step", "`mode: inference`"});
  check_usage_error(
      run_cli({source_path("examples/mlp-training.yaml"), "--gpu", "h100", "--optimizer", "lion"}),
      {"unknown --optimizer `lion`; expected adamw or sgd"});
}

TEST_CASE("compare --emit-yaml writes the network the baseline ran: its batch, its shard") {
  temp_dir dir;
  const std::string llama = source_path("examples/configs/llama-3-8b.json");
  const cli_result compared =
      run_cli({"compare", llama, "--gpus", "h100,h200", "--tp", "2,1", "--batch", "8,16",
               "--emit-yaml", dir / "baseline.yaml", "--format", "json"});
  REQUIRE(compared.status == 0);
  const cli_result alone = run_cli({dir / "baseline.yaml", "--gpu", "h100", "--format", "json"});
  REQUIRE(alone.status == 0);
  const nlohmann::json baseline = nlohmann::json::parse(compared.out)["gpus"][0];
  const nlohmann::json analysed = nlohmann::json::parse(alone.out);
  CHECK(baseline["name"] == "h100-sxm5 ×2");
  CHECK(analysed["network"]["batch"] == 8);
  CHECK(baseline["memory"] == analysed["memory"]);
  REQUIRE(baseline["ops"].size() == analysed["ops"].size());
  int all_reduces = 0;
  for (std::size_t i = 0; i < baseline["ops"].size(); ++i) {
    const nlohmann::json &a = baseline["ops"][i], &b = analysed["ops"][i];
    for (const char *field : {"layer", "kind", "flops", "bytes", "count", "m", "n", "k"})
      CHECK_MESSAGE(a[field] == b[field], "op " << i << " " << field);
    all_reduces += a["kind"] == "all_reduce";
  }
  CHECK(all_reduces == 3);
  // The help says which side is written.
  CHECK(run_cli({"compare", "--help"}).out.find("the baseline's network") != std::string::npos);
}

TEST_CASE("a document without a chart says so for --format svg") {
  check_usage_error(run_cli({"specs", "--format", "svg"}), {"no chart"});
}

TEST_CASE("YAML aliases that would expand to 10^8 layers are refused, not expanded") {
  check_input_error(run_cli({bad("alias-expansion.yaml"), "--gpu", "h100"}),
                    bad("alias-expansion.yaml") + ":4:30", {"more than 100000 layers", "`repeat`"});
}

TEST_CASE("compare: an unknown GPU, a malformed price or batch is bad input") {
  const std::string net = source_path("examples/alexnet-classifier.yaml");
  cli_result r = run_cli({"compare", net, "--gpus", "v100,h2000"});
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK(r.err.find("unknown GPU `h2000`") != std::string::npos);
  r = run_cli({"compare", net, "--gpus", "v100,h100", "--price", "h100"});
  CHECK(r.status == 2);
  CHECK(r.err.find("expected GPU=USD/h") != std::string::npos);
  r = run_cli({"compare", net, "--gpus", "v100,h100", "--price", "h100=-3"});
  CHECK(r.status == 2);
  // Prices take commas as --gpus and --batch do; each entry is checked alone.
  r = run_cli({"compare", net, "--gpus", "v100,h100", "--price", "h100=2,v100=x"});
  CHECK(r.status == 2);
  CHECK(r.err.find("--price `v100=x`") != std::string::npos);
  r = run_cli(
      {"compare", net, "--gpus", "v100,h100", "--price", "h100=2,v100=1", "--format", "json"});
  CHECK(r.status == 0);
  CHECK(r.out.find("\"usd_per_hour\": 2.0") != std::string::npos);
  CHECK(r.out.find("\"usd_per_hour\": 1.0") != std::string::npos);
  r = run_cli({"compare", net, "--gpus", "v100,h100", "--batch", "8,0"});
  CHECK(r.status == 2);
  CHECK(r.err.find("--batch: `0` is not a positive integer") != std::string::npos);
  r = run_cli({"compare", bad("unknown-key.yaml"), "--gpus", "v100"});
  CHECK(r.status == 2);
  CHECK(r.out.empty());
}

TEST_CASE("compare: a serving question given in part, or with options it sets itself") {
  const std::string config = source_path("examples/configs/llama-3-8b.json");
  const auto serving = [&](std::vector<std::string> extra) {
    std::vector<std::string> args{"compare", config, "--gpus", "h100"};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_cli(args);
  };
  check_usage_error(serving({"--prompt-tokens", "512"}),
                    {"both --prompt-tokens and --output-tokens"});
  check_usage_error(serving({"--tpot", "50"}), {"--tpot applies to a serving question"});
  check_usage_error(serving({"--eager"}), {"--eager applies to a serving question"});
  check_usage_error(
      serving({"--prompt-tokens", "512", "--output-tokens", "64", "--phase", "decode"}),
      {"--phase with --prompt-tokens"});
  check_usage_error(serving({"--prompt-tokens", "512", "--output-tokens", "64", "--batch", "8"}),
                    {"--batch with --prompt-tokens"});
  check_usage_error(
      serving({"--prompt-tokens", "512", "--output-tokens", "64", "--mode", "training"}),
      {"--mode with --prompt-tokens"});
  check_usage_error(serving({"--prompt-tokens", "512", "--output-tokens", "64", "--ttft", "-5"}),
                    {"--ttft: `-5` is out of range: expected a number of milliseconds"});
  check_usage_error(serving({"--prompt-tokens", "0", "--output-tokens", "64"}),
                    {"--prompt-tokens"});
  check_usage_error(run_cli({"compare", source_path("examples/llama2-7b-decode.yaml"), "--gpus",
                             "h100", "--prompt-tokens", "512", "--output-tokens", "64"}),
                    {"need a model config"});
  const cli_result r = serving(
      {"--prompt-tokens", "512", "--output-tokens", "64", "--tpot", "30", "--format", "json"});
  CHECK(r.status == 0);
  CHECK(r.out.find("\"kind\": \"serving\"") != std::string::npos);
}

TEST_CASE("--memory-reserve GB keeps memory back on analyze and compare: JSON reserve_bytes, the "
          "fit against what is left; a negative or infinite reserve is bad input") {
  const std::string llama = source_path("examples/configs/llama-2-7b.json");
  // Decode at batch 16, 4096 cached tokens on an H100: 47.8 GB of 85.5 GB.
  const std::vector<std::string> step{llama, "--phase", "decode", "--kv-len", "4096", "--batch",
                                      "16",  "--gpu",   "h100",   "--format", "json"};
  const auto memory = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = step;
    args.insert(args.end(), extra.begin(), extra.end());
    const cli_result r = run_cli(args);
    REQUIRE(r.status == 0);
    return nlohmann::json::parse(r.out)["memory"];
  };
  const nlohmann::json by_default = memory({});
  CHECK(by_default["reserve_bytes"].get<double>() ==
        doctest::Approx(0.1 * by_default["capacity_bytes"].get<double>()));
  CHECK(by_default["fits"] == true);
  const nlohmann::json tight = memory({"--memory-reserve", "40"});
  CHECK(tight["reserve_bytes"].get<double>() == 40e9);
  CHECK(tight["fits"] == false);
  const cli_result compared =
      run_cli({"compare", llama, "--phase", "decode", "--kv-len", "4096", "--batch", "16", "--gpus",
               "h100", "--memory-reserve", "40", "--format", "json"});
  REQUIRE(compared.status == 0);
  CHECK(nlohmann::json::parse(compared.out)["gpus"][0]["memory"] == tight);
  const cli_result whole = run_cli({llama, "--gpu", "h100", "--memory-reserve", "90"});
  CHECK(whole.status == 2);
  CHECK(whole.err.find("--memory-reserve 90 GB: at least all of the h100-sxm5's") !=
        std::string::npos);
  for (const char *bad_reserve : {"-1", "inf", "nan"}) {
    const cli_result r = run_cli({llama, "--gpu", "h100", "--memory-reserve", bad_reserve});
    CHECK(r.status == 2);
    CHECK(r.err.find("--memory-reserve") != std::string::npos);
  }
}

TEST_CASE("a ROOFLINE_MEASURE_LAYER too long to be a path: --gpu auto says why and goes on") {
  // Issue 27: std::filesystem threw its raw message past every handler (exit 1).
  const std::string too_long = "/tmp/" + std::string(5000, 'a') + ".so";
  const roofline::test::scoped_env layer("ROOFLINE_MEASURE_LAYER", too_long.c_str());
  const cli_result r = run_cli({source_path("examples/alexnet-classifier.yaml"), "--gpu", "auto"});
  CHECK(r.status == 0);
  CHECK(roofline::test::contains(r.err, "File name too long"));
  CHECK(roofline::test::contains(r.err, "… (5008 bytes)")); // the path cut, not echoed whole
  CHECK(r.err.size() < 1000);
}

TEST_CASE("a ROOFLINE_MEASURE_LAYER that does not exist: --measure and compare --gpus local say "
          "why, --gpu auto falls back with a notice, a datasheet analysis never loads it") {
  const roofline::test::scoped_env layer("ROOFLINE_MEASURE_LAYER", "/nonexistent/plugin.so");
  const std::string net = source_path("examples/alexnet-classifier.yaml");
  cli_result r = run_cli({net, "--gpu", "h100", "--measure"});
  CHECK(r.status == 1);
  CHECK(r.err == "roofline-advise: error: measuring needs the CUDA measurement layer: "
                 "ROOFLINE_MEASURE_LAYER=/nonexistent/plugin.so does not exist\n");
  r = run_cli({"compare", net, "--gpus", "local,h100"});
  CHECK(r.status == 1);
  CHECK(roofline::test::contains(r.err, "--gpus local needs the CUDA measurement layer: "
                                        "ROOFLINE_MEASURE_LAYER=/nonexistent/plugin.so does not "
                                        "exist"));
  r = run_cli({net, "--gpu", "auto"});
  CHECK(r.status == 0);
  CHECK(r.err == "roofline-advise: ROOFLINE_MEASURE_LAYER=/nonexistent/plugin.so does not exist; "
                 "using the default spec h200-sxm (choose one with --gpu, see `roofline-advise "
                 "specs`)\n");
  r = run_cli({net, "--gpu", "h100"});
  CHECK(r.status == 0);
  CHECK(r.err.empty());
}

TEST_CASE("an empty output file name is refused, not a report silently lost") {
  const std::string config = source_path("examples/configs/gpt2.json");
  for (const auto &[option, file] : {std::pair{"--output", alexnet},
                                     {"-o", alexnet},
                                     {"--plot", alexnet},
                                     {"--html", alexnet},
                                     {"--emit-yaml", config}}) {
    CAPTURE(option);
    const cli_result r = run_cli({file, "--gpu", "h100", option, ""});
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find("an empty file name; expected a path to write to") != std::string::npos);
  }
}

TEST_CASE("layout options the step cannot take are refused before any analysis") {
  const std::string llama = source_path("examples/configs/llama-3-8b.json");
  const std::string mixtral = source_path("examples/configs/mixtral-8x7b.json");
  check_usage_error(run_cli({mixtral, "--gpu", "h100", "--tp", "2", "--ep", "4"}),
                    {"--ep 4 with --tp 2: a served step's experts spread over its "
                     "tensor-parallel GPUs"});
  check_usage_error(
      run_cli({mixtral, "--gpu", "h100", "--mode", "training", "--dp", "1", "--zero", "3"}),
      {"--zero shards the state over data-parallel GPUs: give --dp"});
  check_usage_error(
      run_cli({mixtral, "--gpu", "h100", "--mode", "training", "--ep", "4", "--dp", "2"}),
      {"--ep 4: in training the experts spread over data-parallel GPUs", "--dp 2"});
  check_usage_error(run_cli({"compare", mixtral, "--gpus", "h100", "--tp", "2", "--ep", "4",
                             "--prompt-tokens", "100", "--output-tokens", "10"}),
                    {"a served setup spreads its experts over its tensor-parallel GPUs"});
  check_usage_error(run_cli({llama, "--gpu", "h100", "--dp", "2"}),
                    {"--dp applies to a training step"});
  check_usage_error(run_cli({llama, "--gpu", "h100", "--zero", "1"}),
                    {"--zero applies to a training step"});
  check_usage_error(run_cli({llama, "--gpu", "h100", "--mode", "training", "--zero", "4"}),
                    {"--zero", "not in range"});
  check_usage_error(run_cli({llama, "--cluster", "dgx-h100", "--gpu", "h200"}),
                    {"--gpu h200 with --cluster dgx-h100, whose GPU is h100-sxm5"});
  check_usage_error(run_cli({llama, "--cluster", "no-such-cluster"}),
                    {"unknown cluster `no-such-cluster`"});
  check_usage_error(run_cli({"compare", llama, "--gpus", "h100", "--cluster", "no-such-cluster"}),
                    {"unknown cluster `no-such-cluster`"});
  // Before a command, where the command would drop them.
  check_usage_error(run_cli({"--cluster", "dgx-h100", "gemm", "64", "64", "64"}),
                    {"--cluster before `gemm`: the network analysis's"});
  check_usage_error(run_cli({"--tp", "2", "compare", llama, "--gpus", "h100"}),
                    {"--tp before `compare`: give it after the command"});
  check_usage_error(run_cli({"--batch", "64", "compare", llama, "--gpus", "h100"}),
                    {"--batch before `compare`: give it after the command"});
  check_usage_error(run_cli({"--recompute", "full", "train", llama, "--cluster", "dgx-h100",
                             "--global-batch", "8", "--seq-len", "8"}),
                    {"--recompute before `train`"});
}
