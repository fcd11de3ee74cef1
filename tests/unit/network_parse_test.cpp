// SPDX-License-Identifier: Apache-2.0
// parse_network / load_network: what a good file becomes, and that every bad one is an input_error
// located at file:line:column (1-based) with a message that says what is wrong.
#include "roofline/analysis/lowering.hpp"
#include "roofline/analysis/report.hpp"
#include "roofline/common/error.hpp"
#include "roofline/input/network.hpp"
#include "roofline/input/network_yaml.hpp"
#include "roofline/model/op.hpp"
#include "roofline/model/perf_model.hpp"
#include "roofline/model/spec_catalog.hpp"

#include "test_support.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <typeinfo>
#include <variant>
#include <vector>

using namespace roofline;
using namespace roofline::test;

namespace {

/// Parses `yaml` as "bad.yaml" and returns the error it must raise.
input_error parse_error(const std::string &yaml) {
  try {
    (void)parse_network(yaml, "bad.yaml");
  } catch (const input_error &e) {
    return e;
  }
  FAIL("parse_network accepted:\n" << yaml);
  return input_error("unreachable");
}

/// Checks the error's location and that what() is "bad.yaml:line:column: ..." and contains `text`.
void check_error(const input_error &e, int line, int column, const std::string &text) {
  const std::string what = e.what();
  CAPTURE(what);
  CHECK(e.where().file == "bad.yaml");
  CHECK(e.where().line == line);
  CHECK(e.where().column == column);
  CHECK(what.rfind("bad.yaml:" + std::to_string(line) + ":" + std::to_string(column) + ": ", 0) ==
        0);
  CHECK(contains(what, text));
  CHECK(contains(e.message(), text));
}

/// A network whose only layer is `layer` (a flow mapping), which starts on line 3, column 5.
std::string one_layer(const std::string &layer) {
  return "name: t\nlayers:\n  - " + layer + "\n";
}

} // namespace

// ------------------------------------------------------------------ good input

TEST_CASE("a norm run unfused: 8 kernels over its passes at the activations' size and fp32's") {
  const std::vector<op> ops =
      lower(parse_network("name: t\nbatch: 2\nseq_len: 3\nprecision: bf16\nlayers:\n"
                          "  - {name: n, type: rmsnorm, features: 64, unfused: true}\n"
                          "  - {name: f, type: rmsnorm}\n",
                          "t.yaml"));
  REQUIRE(ops.size() == 2);
  CHECK(ops[0].launches == 8);
  CHECK(ops[0].bytes == 6 * 64 * (4 * 2 + 7 * 4));
  CHECK(ops[1].launches == 1); // the same op, fused: in and out once
  CHECK(ops[1].bytes == 6 * 64 * 2 * 2);
}

TEST_CASE("parse_network reads the top-level keys and each layer's body") {
  const network net =
      parse_network("name: demo\n"
                    "description: a test\n"
                    "precision: bf16\n"
                    "batch: 8\n"
                    "seq_len: 128\n"
                    "mode: training\n"
                    "layers:\n"
                    "  - {name: fc, type: linear, in: 64, out: 32, bias: true}\n"
                    "  - {name: c, type: conv2d, in_channels: 3, out_channels: 8, kernel: [3, 5],"
                    " stride: 2, input: [32, 32]}\n"
                    "  - {name: a, type: attention, heads: 4, head_dim: 16, causal: true}\n"
                    "  - name: blk\n"
                    "    repeat: 2\n"
                    "    layers:\n"
                    "      - {name: r, type: relu, features: 10, precision: fp32}\n",
                    "demo.yaml");
  CHECK(net.name == "demo");
  CHECK(net.description == "a test");
  CHECK(net.precision == precision::bf16);
  CHECK(net.batch == 8);
  CHECK(net.seq_len == 128);
  CHECK(net.mode == run_mode::training);
  CHECK(net.origin == "demo.yaml");
  REQUIRE(net.layers.size() == 4);

  const auto *fc = std::get_if<linear_layer>(&net.layers[0].body);
  REQUIRE(fc != nullptr);
  CHECK(net.layers[0].name == "fc");
  CHECK(fc->in == 64);
  CHECK(fc->out == 32);
  CHECK_FALSE(net.layers[0].precision.has_value());
  CHECK(net.layers[0].where.line == 8);

  const auto *conv = std::get_if<conv2d_layer>(&net.layers[1].body);
  REQUIRE(conv != nullptr);
  CHECK(conv->kernel_h == 3);
  CHECK(conv->kernel_w == 5);
  CHECK(conv->stride_h == 2);
  CHECK(conv->stride_w == 2);
  CHECK(conv->padding_h == 0); // default
  CHECK(conv->padding_w == 0);
  CHECK(conv->input_h == 32);

  const auto *attention = std::get_if<attention_layer>(&net.layers[2].body);
  REQUIRE(attention != nullptr);
  CHECK(attention->seq_len == 128); // the network's
  CHECK(attention->kv_len == 128);  // the layer's seq_len
  CHECK(attention->causal);

  const auto *block = std::get_if<repeat_block>(&net.layers[3].body);
  REQUIRE(block != nullptr);
  CHECK(net.layers[3].name == "blk");
  CHECK(block->times == 2);
  REQUIRE(block->layers.size() == 1);
  const auto *relu = std::get_if<memory_layer>(&block->layers[0].body);
  REQUIRE(relu != nullptr);
  CHECK(relu->kind == memory_op_kind::relu);
  CHECK(relu->features == 10);
  CHECK(block->layers[0].precision == precision::fp32);
}

TEST_CASE("parse_network defaults: fp16, batch 1, seq_len 1, inference") {
  const network net = parse_network(one_layer("{name: fc, type: linear, in: 1, out: 1}"), "d.yaml");
  CHECK(net.precision == precision::fp16);
  CHECK(net.batch == 1);
  CHECK(net.seq_len == 1);
  CHECK(net.mode == run_mode::inference);
  CHECK(net.description.empty());
}

// ------------------------------------------------------------------ bad input, located

TEST_CASE("a YAML syntax error is an input_error at the offending position") {
  // The flow mapping on line 3 is never closed: libyaml notices at the end of input, 4:1.
  check_error(parse_error("name: t\nlayers:\n  - {name: fc, type: linear\n"), 4, 1,
              "YAML syntax error: did not find expected ',' or '}' while parsing a flow mapping");
  // A tab where indentation is expected, at the start of line 2.
  check_error(parse_error("name: t\n\tbatch: 2\nlayers: []\n"), 2, 1, "YAML syntax error");
}

TEST_CASE(
    "an unknown layer type is located at the type and suggests the closest (lineer → linear)") {
  const input_error e = parse_error(one_layer("{name: fc, type: lineer, in: 1, out: 2}"));
  check_error(e, 3, 22, "unknown layer type 'lineer'");
  CHECK(contains(e.what(), "did you mean `linear`"));
  CHECK(contains(e.what(), "layer `fc`"));
}

TEST_CASE("an unknown key is located at the key and suggests the closest (outt → out)") {
  //                 col 5 ↓                              col 37 ↓
  const input_error e = parse_error(one_layer("{name: fc, type: linear, in: 1, outt: 2}"));
  check_error(e, 3, 37, "unknown key `outt`");
  CHECK(contains(e.what(), "did you mean `out`"));
  // Attention's head_dims → head_dim, as the format doc promises.
  const input_error attn =
      parse_error(one_layer("{name: a, type: attention, heads: 2, head_dims: 64}"));
  CHECK(contains(attn.what(), "did you mean `head_dim`"));
  // At the top level: batchsize → batch, at line 2, column 1.
  const input_error top =
      parse_error("name: t\nbatchsize: 4\nlayers:\n  - {name: fc, type: linear, in: 1, out: 1}\n");
  check_error(top, 2, 1, "unknown key `batchsize`");
  CHECK(contains(top.what(), "`batch`"));
}

TEST_CASE("a missing required key is reported at its mapping") {
  check_error(parse_error(one_layer("{name: fc, type: linear, in: 1}")), 3, 5,
              "missing required key `out`");
  check_error(parse_error(one_layer("{name: fc, in: 1, out: 2}")), 3, 5,
              "missing required key `type`");
  check_error(parse_error("name: t\nbatch: 2\n"), 1, 1, "missing required key `layers`");
  check_error(parse_error("batch: 2\nlayers:\n  - {name: fc, type: linear, in: 1, out: 1}\n"), 1, 1,
              "missing required key `name`");
}

TEST_CASE("a layer without `name` is an input_error, not an escaping parser exception") {
  // parse_layer reads `name` before it checks keys: a missing one must still end up located.
  try {
    (void)parse_network(one_layer("{type: linear, in: 1, out: 2}"), "bad.yaml");
    FAIL("a layer without a name was accepted");
  } catch (const input_error &e) {
    check_error(e, 3, 5, "missing required key `name`");
  } catch (const std::exception &e) {
    FAIL_CHECK("escaped as a " << std::string(typeid(e).name())
                               << ", not roofline::input_error: " << std::string(e.what()));
  }
  // The same holds for a repeat block's layers.
  try {
    (void)parse_network(
        "name: t\nlayers:\n  - repeat: 2\n    layers:\n      - {type: relu, features: 4}\n",
        "bad.yaml");
    FAIL("a layer without a name was accepted");
  } catch (const input_error &e) {
    CHECK(e.where().line == 5);
  } catch (const std::exception &e) {
    FAIL_CHECK("escaped as a " << std::string(typeid(e).name())
                               << ", not roofline::input_error: " << std::string(e.what()));
  }
}

TEST_CASE("a size that is not an integer is reported at its value") {
  //                                           col 34 ↓
  check_error(parse_error(one_layer("{name: fc, type: linear, in: 1.5, out: 2}")), 3, 34,
              "`in` must be a positive integer, got '1.5'");
  check_error(parse_error(one_layer("{name: fc, type: linear, in: abc, out: 2}")), 3, 34,
              "`in` must be a positive integer, got 'abc'");
  check_error(parse_error(one_layer("{name: fc, type: linear, in: 1e3, out: 2}")), 3, 34,
              "must be a positive integer");
  check_error(parse_error(one_layer("{name: fc, type: linear, in: [1], out: 2}")), 3, 34,
              "must be a positive integer");
}

TEST_CASE("zero and negative sizes are rejected") {
  check_error(parse_error(one_layer("{name: fc, type: linear, in: 0, out: 2}")), 3, 34,
              "`in` must be a positive integer, got 0");
  check_error(parse_error(one_layer("{name: fc, type: linear, in: -4, out: 2}")), 3, 34,
              "`in` must be a positive integer, got -4");
  check_error(
      parse_error("name: t\nbatch: 0\nlayers:\n  - {name: fc, type: linear, in: 1, out: 1}\n"), 2,
      8, "`batch` must be a positive integer");
  // Padding may be 0 but not negative.
  check_error(
      parse_error(one_layer("{name: c, type: conv2d, in_channels: 1, out_channels: 1, kernel: 1,"
                            " padding: -1, input: [4, 4]}")),
      3, 82, "`padding` must be a non-negative integer, got -1");
}

TEST_CASE("an integer too large for 64 bits is rejected") {
  check_error(parse_error(one_layer("{name: fc, type: linear, in: 99999999999999999999, out: 2}")),
              3, 34, "`in` = 99999999999999999999 does not fit in a 64-bit integer");
  // 2^63 - 1 itself still parses.
  const network net = parse_network(
      one_layer("{name: fc, type: linear, in: 9223372036854775807, out: 2}"), "m.yaml");
  CHECK(std::get<linear_layer>(net.layers.at(0).body).in == 9223372036854775807);
}

TEST_CASE("an unknown precision is reported with the known ones (fp17 → fp16)") {
  const input_error e = parse_error(
      "name: t\nprecision: fp17\nlayers:\n  - {name: fc, type: linear, in: 1, out: 1}\n");
  check_error(e, 2, 12, "unknown precision `fp17`");
  CHECK(contains(e.what(), "did you mean `fp16`"));
  CHECK(contains(e.what(), "`bf16`")); // in the list of expected ones
  // On a layer, too.
  const input_error layer =
      parse_error(one_layer("{name: fc, type: linear, in: 1, out: 1, precision: half}"));
  CHECK(contains(layer.what(), "unknown precision `half`"));
  CHECK(layer.where().line == 3);
}

TEST_CASE("a bad mode is rejected with a suggestion") {
  const input_error e =
      parse_error("name: t\nmode: train\nlayers:\n  - {name: fc, type: linear, in: 1, out: 1}\n");
  check_error(e, 2, 7, "`mode` must be `inference` or `training`, got `train`");
  CHECK(contains(e.what(), "did you mean `training`"));
}

TEST_CASE("empty or missing layer lists are rejected") {
  check_error(parse_error("name: t\nlayers: []\n"), 2, 9,
              "`layers` must be a non-empty list of layers");
  // An empty value: the null node is marked where it is missing, right after the colon (2:8).
  check_error(parse_error("name: t\nlayers:\n"), 2, 8,
              "`layers` must be a non-empty list of layers, got nothing");
  check_error(parse_error("name: t\nlayers:\n  - repeat: 2\n    layers: []\n"), 4, 13,
              "`layers` must be a non-empty list of layers");
}

TEST_CASE("a document that is not a mapping is rejected at 1:1") {
  check_error(parse_error("- a\n- b\n"), 1, 1, "expected a network");
  check_error(parse_error("just a string\n"), 1, 1, "expected a network");
  check_error(parse_error(""), 1, 1, "expected a network");
}

TEST_CASE("a layer that is not a mapping, and malformed layer values, are rejected") {
  check_error(parse_error("name: t\nlayers:\n  - fc1\n"), 3, 5, "a layer must be a mapping");
  check_error(parse_error(one_layer(
                  "{name: c, type: conv2d, in_channels: 1, out_channels: 1, kernel: [1, 2, 3],"
                  " input: [4, 4]}")),
              3, 70, "`kernel` must be one integer or a list of two, got a list of 3");
  check_error(
      parse_error(one_layer("{name: a, type: attention, heads: 1, head_dim: 1, causal: maybe}")), 3,
      63, "`causal` must be true or false");
  // A key that another layer type takes is still unknown for this one.
  check_error(parse_error(one_layer("{name: r, type: relu, in: 4}")), 3, 27, "unknown key `in`");
}

TEST_CASE("repeat blocks nested deeper than 32 are rejected") {
  std::string yaml = "name: t\nlayers:\n";
  std::string indent = "  ";
  for (int depth = 0; depth < 40; ++depth) {
    yaml += indent + "- repeat: 1\n" + indent + "  layers:\n";
    indent += "    ";
  }
  yaml += indent + "- {name: fc, type: linear, in: 1, out: 1}\n";
  CHECK(contains(parse_error(yaml).what(), "nest deeper than 32"));
}

TEST_CASE("load_network on a missing file or a directory is an input_error naming the path") {
  namespace fs = std::filesystem;
  const fs::path missing = fs::temp_directory_path() / "roofline-network-test-no-such-file.yaml";
  fs::remove(missing);
  try {
    (void)load_network(missing);
    FAIL("a missing file loaded");
  } catch (const input_error &e) {
    CHECK(e.where().file == missing.string());
    CHECK(contains(e.what(), "no such file"));
  }
  try {
    (void)load_network(fs::temp_directory_path());
    FAIL("a directory loaded");
  } catch (const input_error &e) {
    CHECK(contains(e.what(), "not a regular file"));
  }
}

TEST_CASE("load_network errors name the file they come from") {
  namespace fs = std::filesystem;
  const fs::path file = fs::temp_directory_path() / "roofline-network-test-bad.yaml";
  {
    std::FILE *out = std::fopen(file.string().c_str(), "w");
    REQUIRE(out != nullptr);
    std::fputs("name: t\nlayers:\n  - {name: fc, type: linear, in: 0, out: 1}\n", out);
    std::fclose(out);
  }
  try {
    (void)load_network(file);
    FAIL("in: 0 was accepted");
  } catch (const input_error &e) {
    CHECK(e.where().file == file.string());
    CHECK(e.where().line == 3);
    CHECK(std::string(e.what()).rfind(file.string() + ":3:", 0) == 0);
  }
  fs::remove(file);
}

TEST_CASE(
    "every file in examples/ parses, lowers and is analysed on the default GPU without error") {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (const auto &entry : fs::directory_iterator(ROOFLINE_SOURCE_DIR "/examples"))
    if (entry.path().extension() == ".yaml")
      files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  CHECK(files.size() >= 9);
  const gpu_spec *gpu = spec_catalog::builtin().find(spec_catalog::default_gpu);
  REQUIRE(gpu != nullptr);
  for (const fs::path &file : files) {
    CAPTURE(file.string());
    try {
      const network net = load_network(file);
      CHECK_FALSE(net.layers.empty());
      const std::vector<op> ops = lower(net);
      CHECK_FALSE(ops.empty());
      const analysis r = analyze(net, perf_model(*gpu), "test");
      CHECK(r.totals.time_s > 0);
      for (const op &o : ops) {
        // Only what moves data and computes nothing (a copy, a gather) runs no FLOPs.
        const auto kind = parse_memory_op_kind(o.kind);
        CHECK((o.flops > 0 || (kind && cost_of(*kind).flops_per_element == 0)));
        CHECK(o.bytes > 0);
        CHECK(o.count > 0);
      }
    } catch (const input_error &e) {
      FAIL_CHECK(std::string(e.what()));
    }
  }
}

TEST_CASE("a mixture of experts, a sliding window and a KV cache format: read, and refused "
          "where they make no sense") {
  const network net = parse_network(
      "name: t\nbatch: 4\nlayers:\n"
      "  - {name: attn, type: attention, heads: 8, head_dim: 64, window: 256, fused: true,\n"
      "     kv_precision: fp8}\n"
      "  - {name: moe, type: moe, experts: 8, top_k: 2, in: 64, intermediate: 128,\n"
      "     activation: gelu, gated: false}\n",
      "t.yaml");
  const auto &attention = std::get<attention_layer>(net.layers.at(0).body);
  CHECK(attention.window == 256);
  CHECK(attention.kv_precision == precision::fp8);
  const auto &moe = std::get<moe_layer>(net.layers.at(1).body);
  CHECK(moe.experts == 8);
  CHECK(moe.top_k == 2);
  CHECK(moe.in == 64);
  CHECK(moe.intermediate == 128);
  CHECK_FALSE(moe.gated);
  CHECK(moe.activation == memory_op_kind::gelu);

  check_error(parse_error(one_layer("{name: m, type: moe, experts: 4, top_k: 5, in: 8, "
                                    "intermediate: 8}")),
              3, 45, "`top_k` = 5 is more than the 4 experts");
  check_error(parse_error(one_layer("{name: m, type: moe, experts: 4, top_k: 1, in: 8, "
                                    "intermediate: 8, activation: sigmoid}")),
              3, 84, "unknown expert activation `sigmoid`");
  check_error(parse_error(one_layer("{name: a, type: attention, heads: 2, head_dim: 8, "
                                    "window: 0}")),
              3, 63, "`window`");
  check_error(parse_error(one_layer("{name: a, type: attention, heads: 4, kv_heads: 4, "
                                    "head_dim: 8, fused: true, expanded_kv: true}")),
              3, 94, "it needs `fused: true` and `kv_heads` below `heads`");
  // Only a kind a framework runs unfused has an unfused form.
  check_error(parse_error(one_layer("{name: r, type: relu, features: 8, unfused: true}")), 3, 49,
              "`relu` has no unfused form");
  // An fp8 cache beside unfused GEMMs fails where it is lowered.
  CHECK_THROWS_WITH_AS(lower(parse_network(one_layer("{name: a, type: attention, heads: 2, "
                                                     "head_dim: 8, kv_precision: fp8}"),
                                           "bad.yaml")),
                       doctest::Contains("modelled for fused attention only"), input_error);
  // Experts train: each expert GEMM with its two gradients.
  CHECK(lower(parse_network("name: t\nmode: training\nlayers:\n  - {name: m, type: "
                            "moe, experts: 4, top_k: 1, in: 8, intermediate: 8}\n",
                            "ok.yaml"))
            .size() == 19);
}

TEST_CASE("weight-only quantization in a network YAML: inherited by linear layers, refused where "
          "it makes no sense") {
  const network net =
      parse_network("name: t\nprecision: bf16\nweights: int4\nbatch: 2\nlayers:\n"
                    "  - {name: a, type: linear, in: 256, out: 512}\n"
                    "  - {name: b, type: linear, in: 512, out: 256, weights: int8}\n"
                    "  - {name: c, type: linear, in: 256, out: 256, weights: int4, "
                    "weight_group: 64}\n",
                    "t.yaml");
  const std::vector<op> ops = lower(net);
  REQUIRE(ops.size() == 3);
  CHECK(ops[0].gemm->weights == quantized_weights{4, 128});
  CHECK(ops[1].gemm->weights == quantized_weights{8, 0});
  CHECK(ops[2].gemm->weights == quantized_weights{4, 64});
  // a: 256 × 512 int4 = 65,536 B, 2 groups of 128 × 512 columns × 2 B; A and C in bf16.
  CHECK(ops[0].bytes == 65'536 + 2 * 512 * 2 + 2 * 2 * (256 + 512));

  check_error(parse_error(one_layer("{name: a, type: linear, in: 8, out: 8, weights: int3}")), 3,
              53, "unknown weight format `int3`");
  check_error(parse_error(one_layer("{name: a, type: linear, in: 8, out: 8, weight_group: 8}")), 3,
              58, "`weight_group` without `weights`");
  CHECK_THROWS_WITH_AS(lower(parse_network("name: t\nprecision: fp32\nweights: int8\nlayers:\n"
                                           "  - {name: a, type: linear, in: 8, out: 8}\n",
                                           "bad.yaml")),
                       doctest::Contains("widened to fp16 or bf16 activations, not fp32"),
                       input_error);
  CHECK_THROWS_WITH_AS(lower(parse_network("name: t\nmode: training\nweights: int8\nlayers:\n"
                                           "  - {name: a, type: linear, in: 8, out: 8}\n",
                                           "bad.yaml")),
                       doctest::Contains("inference only"), input_error);
}

TEST_CASE("conv2d `groups`: 1 by default, a divisor of both channel counts, else refused at it") {
  const auto conv_of = [](const std::string &yaml) {
    return std::get<conv2d_layer>(parse_network(one_layer(yaml), "g.yaml").layers.at(0).body);
  };
  CHECK(conv_of("{name: c, type: conv2d, in_channels: 8, out_channels: 8, kernel: 3, input: 7}")
            .groups == 1);
  CHECK(conv_of("{name: c, type: conv2d, in_channels: 96, out_channels: 192, kernel: 7, "
                "groups: 96, input: 7}")
            .groups == 96);
  check_error(parse_error(one_layer("{name: c, type: conv2d, in_channels: 96, out_channels: 96, "
                                    "kernel: 7, groups: 5, input: 7}")),
              3, 83, "`groups` = 5 must divide `in_channels` = 96 and `out_channels` = 96");
  check_error(parse_error(one_layer("{name: c, type: conv2d, in_channels: 96, out_channels: 100, "
                                    "kernel: 7, groups: 96, input: 7}")),
              3, 84, "must divide");
  check_error(parse_error(one_layer("{name: c, type: conv2d, in_channels: 8, out_channels: 8, "
                                    "kernel: 1, groups: 0, input: 7}")),
              3, 81, "`groups` must be a positive integer");
}

TEST_CASE("step_tokens: a decode step says its new tokens and its KV cache, not a bare seq_len") {
  network net;
  net.seq_len = 2048;
  CHECK(step_tokens(net) == "seq_len 2048");
  net.phase = inference_phase::prefill;
  CHECK(step_tokens(net) == "seq_len 2048");
  net.phase = inference_phase::decode;
  net.seq_len = 1;
  net.kv_len = 4096;
  CHECK(step_tokens(net) == "1 new token a sequence, KV cache 4096");
  net.seq_len = 4; // speculative decoding's draft tokens
  CHECK(step_tokens(net) == "4 new tokens a sequence, KV cache 4096");
}

namespace {

/// A training step on one GPU of 4 data-parallel ones (ZeRO-2, experts over 2 of them) and 2
/// stages, with a layer of each collective.
const char *const layout_yaml =
    "name: t\nmode: training\nbatch: 2\nseq_len: 8\n"
    "data_parallel: {gpus: 4, zero_stage: 2, stride: 2, expert_parallel: 2}\n"
    "pipeline_stages: 2\n"
    "layers:\n"
    "  - {name: fc, type: linear, in: 64, out: 64}\n"
    "  - {name: a2a, type: all_to_all, gpus: 4, features: 64, copies: 2}\n"
    "  - {name: moe, type: moe, experts: 8, top_k: 2, in: 64, intermediate: 128, "
    "expert_parallel: 4}\n"
    "  - {name: rs, type: reduce_scatter, gpus: 2, stride: 4}\n"
    "  - {name: ag, type: all_gather, gpus: 2, features: 32}\n"
    "  - {name: send, type: send, features: 64}\n";

/// The layout and collectives `net` holds that layout_yaml gives.
void check_layout(const network &net) {
  CHECK(net.mode == run_mode::training);
  CHECK(net.data_parallel.gpus == 4);
  CHECK(net.data_parallel.zero_stage == 2);
  CHECK(net.data_parallel.stride == 2);
  CHECK(net.data_parallel.expert_parallel == 2);
  CHECK(net.pipeline_stages == 2);
  REQUIRE(net.layers.size() == 6);
  const auto &a2a = std::get<collective_layer>(net.layers[1].body);
  CHECK(a2a.kind == collective::all_to_all);
  CHECK(a2a.gpus == 4);
  CHECK(a2a.stride == 1);
  CHECK(a2a.features == 64);
  CHECK(a2a.copies == 2);
  CHECK(std::get<moe_layer>(net.layers[2].body).expert_parallel == 4);
  CHECK(std::get<moe_layer>(net.layers[2].body).sending_ranks == 0);
  const auto &rs = std::get<collective_layer>(net.layers[3].body);
  CHECK(rs.kind == collective::reduce_scatter);
  CHECK(rs.gpus == 2);
  CHECK(rs.stride == 4);
  CHECK_FALSE(rs.features);
  const auto &ag = std::get<collective_layer>(net.layers[4].body);
  CHECK(ag.kind == collective::all_gather);
  CHECK(ag.features == 32);
  const auto &send = std::get<collective_layer>(net.layers[5].body);
  CHECK(send.kind == collective::send);
  CHECK(send.features == 64);
  CHECK(send.copies == 1);
}

} // namespace

TEST_CASE("a training step's layout and the collective layers: read, lowered, and written back "
          "as they were read") {
  const network net = parse_network(layout_yaml, "layout.yaml");
  check_layout(net);
  const std::vector<op> ops = lower(net);
  // 2 × 8 rows of 64 fp16 elements, each sent twice: 2048 elements, 4096 bytes a GPU.
  const op &a2a = op_named(ops, "a2a");
  CHECK(a2a.kind == "all_to_all");
  CHECK(a2a.elements == 2048);
  CHECK(a2a.bytes == 4096);
  // The reduce-scatter takes the mixture's 16 × 64 output; its gradient goes back gathered.
  std::vector<std::string> rs_kinds;
  for (const op &o : ops)
    if (o.layer == "rs")
      rs_kinds.push_back(o.kind);
  CHECK(rs_kinds == std::vector<std::string>{"reduce_scatter", "all_gather"});
  CHECK(op_named(ops, "rs").bytes == 16 * 64 * 2);
  CHECK(op_named(ops, "rs").stride == 4);
  CHECK(op_named(ops, "send").bytes == 16 * 64 * 2);
  CHECK(op_named(ops, "send").kind == "send");
  // The YAML written out reads back to the same layout and layers.
  const std::string yaml = to_network_yaml(net);
  CAPTURE(yaml);
  CHECK(contains(yaml, "data_parallel: {gpus: 4, zero_stage: 2, stride: 2, expert_parallel: 2}"));
  CHECK(contains(yaml, "pipeline_stages: 2"));
  const network again = parse_network(yaml, "emitted.yaml");
  check_layout(again);
  // Alike but for the header line, which names the file it came from.
  const auto body = [](const std::string &text) { return text.substr(text.find("\nname: ")); };
  CHECK(body(to_network_yaml(again)) == body(yaml));
}

TEST_CASE("a bad layout or collective is refused where it is written") {
  const std::string fc = "layers:\n  - {name: fc, type: linear, in: 8, out: 8}\n";
  // data_parallel's value starts after "data_parallel: ", at column 16.
  check_error(parse_error("name: t\ndata_parallel: {gpus: 2}\n" + fc), 2, 16,
              "`data_parallel` is a training step's: give `mode: training` with it");
  check_error(
      parse_error("name: t\nmode: training\ndata_parallel: {gpus: 2, zero_stage: 4}\n" + fc), 3, 38,
      "`zero_stage` = 4: ZeRO has stages 0 to 3");
  check_error(parse_error(one_layer("{name: a, type: all_to_all, gpus: 1, features: 8}")), 3, 39,
              "`gpus` = 1: all_to_all spans 2 to");
  check_error(parse_error(one_layer("{name: m, type: moe, experts: 8, top_k: 2, in: 8, "
                                    "intermediate: 8, expert_parallel: 3}")),
              3, 89, "`expert_parallel` = 3 does not divide the 8 experts");
  const std::string moe = "{name: m, type: moe, experts: 8, top_k: 2, in: 8, intermediate: 8, "
                          "expert_parallel: 4, ";
  CHECK(contains(parse_error(one_layer(moe + "sending_ranks: 5}")).what(),
                 "`sending_ranks` = 5 is more than the 4 GPUs of `expert_parallel`"));
  CHECK(contains(parse_error(one_layer(moe + "sending_ranks: 2, shared_tokens: true}")).what(),
                 "not both"));
  // `shared_tokens: true` is `sending_ranks: 1`; `sending_ranks` reads back as written.
  for (const auto &[key, senders] :
       {std::pair{std::string("shared_tokens: true}"), 1}, {"sending_ranks: 2}", 2}}) {
    const network net = parse_network("name: t\nseq_len: 4\nlayers:\n  - " + moe + key, "t.yaml");
    CHECK(std::get<moe_layer>(net.layers[0].body).sending_ranks == senders);
    const network again = parse_network(to_network_yaml(net), "again.yaml");
    CHECK(std::get<moe_layer>(again.layers[0].body).sending_ranks == senders);
  }
  // A send goes to one GPU: it takes no `gpus`.
  CHECK(contains(parse_error(one_layer("{name: s, type: send, gpus: 2, features: 8}")).what(),
                 "gpus"));
}
