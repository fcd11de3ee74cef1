// SPDX-License-Identifier: Apache-2.0
// The op-trace reader (docs/op-trace-format.md) against a hand-written trace whose prices and
// memory are computed by hand: tests/data/traces/hand-mlp-step.json.
#include "roofline/analysis/analysis.hpp"
#include "roofline/analysis/lowering.hpp"
#include "roofline/input/network.hpp"
#include "roofline/input/op_trace.hpp"
#include "roofline/model/spec_catalog.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>

using namespace roofline;

namespace {

const char *const hand_trace = ROOFLINE_SOURCE_DIR "/tests/data/traces/hand-mlp-step.json";

std::string text_of(const std::string &file) {
  std::ifstream in(file);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

const op &named(const traced_program &p, const std::string &layer) {
  const auto found =
      std::find_if(p.ops.begin(), p.ops.end(), [&](const op &o) { return o.layer == layer; });
  REQUIRE(found != p.ops.end());
  return *found;
}

} // namespace

TEST_CASE("an op trace: GEMMs, memory-bound ops and the optimizer's priced; views free; what no "
          "model prices listed with its count") {
  const std::string text = text_of(hand_trace);
  REQUIRE(is_op_trace(text));
  const traced_program p = read_op_trace(text, hand_trace);
  CHECK(p.name == "hand MLP step");
  CHECK(p.training);
  CHECK(p.aten_ops == 10);
  CHECK(p.free_ops == 1); // aten::t
  CHECK(p.priced_ops == 8);
  REQUIRE(p.unpriced.size() == 1);
  CHECK(p.unpriced[0].first == "aten::frobnicate");
  CHECK(p.unpriced[0].second == 1);

  // addmm(bias, x[4096, 2048], w.t()[2048, 2048]): M 4096, N 2048, K 2048.
  const op &addmm = named(p, "aten::addmm");
  REQUIRE(addmm.gemm);
  CHECK(addmm.gemm->m == 4096);
  CHECK(addmm.gemm->n == 2048);
  CHECK(addmm.gemm->k == 2048);
  CHECK(addmm.precision == precision::bf16);
  CHECK(addmm.pass == pass::forward);
  // The backward's two GEMMs: the input's gradient, then the weight's (K = the batch's rows).
  const op &dgrad = named(p, "aten::mm");
  const op &wgrad = named(p, "aten::mm #2");
  CHECK(dgrad.pass == pass::data_grad);
  CHECK(dgrad.gemm->k == 2048);
  CHECK(wgrad.gemm->k == 4096);
  CHECK(wgrad.gemm->m == 2048);

  // gelu reads 4096·2048 bf16 and writes as much.
  const op &gelu = named(p, "aten::gelu");
  CHECK(gelu.kind == "gelu");
  CHECK(gelu.bytes == 2 * 4096 * 2048 * 2);
  CHECK(gelu.elements == 4096 * 2048);
  CHECK(gelu.row == 0); // rows are the norms' and softmax's alone
  // gelu_backward's gradient is a broadcast scalar (strides 0): read once, 2 bytes.
  CHECK(named(p, "aten::gelu_backward").bytes == 2 + 2 * 4096 * 2048 * 2);
  // The sum is priced as a reduction over its input, with no row terms (a kernel that splits
  // a long row over many blocks).
  CHECK(named(p, "aten::sum").kind == "softmax");
  CHECK(named(p, "aten::sum").row == 0);
  // The optimizer's foreach op: both lists read, the first written in place (it returns
  // nothing, so its outputs list none).
  const op &step = named(p, "aten::_foreach_add_");
  CHECK(step.pass == pass::optimizer);
  CHECK(step.bytes == 3 * 2048 * 2048 * 2);
}

TEST_CASE("an op trace's memory: the peak of its live storages, and what was alive then") {
  const traced_program p = read_op_trace(text_of(hand_trace), hand_trace);
  // Before: the weight (8 MiB), the bias (8 KiB) and the input (16 MiB); the peak comes as the
  // weight's gradient (8 MiB) is made, with the addmm's output, gelu_backward's and the first
  // mm's (16 MiB each) and ones_like's 2 bytes alive.
  const double mib = 1 << 20;
  CHECK(p.memory.peak_bytes == 8 * mib + 8192 + 16 * mib + 3 * 16 * mib + 2 + 8 * mib);
  CHECK(p.memory.parameter_bytes == 8 * mib + 8192);
  CHECK(p.memory.gradient_bytes == 8 * mib); // `end.gradient` names it
  CHECK(p.memory.optimizer_bytes == 0);
  CHECK(p.memory.activation_bytes == 16 * mib + 3 * 16 * mib + 2);
}

TEST_CASE("a trace as a network: its ops lowered as they ran, its memory the trace's, its "
          "coverage in the notes") {
  network net = network_of_trace(read_op_trace(text_of(hand_trace), hand_trace), hand_trace);
  CHECK(net.mode == run_mode::training);
  CHECK(net.precision == precision::bf16);
  REQUIRE_FALSE(net.notes.empty());
  CHECK(net.notes.front().find("1 not priced: aten::frobnicate ×1") != std::string::npos);
  CHECK(lower(net).size() == net.trace->ops.size());
  const analysis a = analyze(net, perf_model(*spec_catalog::builtin().find("h100")), "test");
  REQUIRE(a.memory);
  CHECK(a.memory->traced);
  CHECK(a.memory->total_bytes == net.trace->memory.peak_bytes);
  CHECK(a.memory->fits);
  CHECK_FALSE(a.memory->max_batch); // the trace records no batch
  CHECK(a.totals.op_count == 8);

  // Captured at batch 2: the activations grow in proportion to it, the rest stays.
  nlohmann::json doc = nlohmann::json::parse(text_of(hand_trace));
  doc["captured"]["batch"] = 2;
  const network at_two = network_of_trace(read_op_trace(doc.dump(), "two.json"), "two.json");
  CHECK(at_two.batch == 2);
  const analysis b = analyze(at_two, perf_model(*spec_catalog::builtin().find("h100")), "test");
  const traced_memory &m = at_two.trace->memory;
  const double fixed = m.parameter_bytes + m.gradient_bytes + m.optimizer_bytes;
  REQUIRE(b.memory->max_batch);
  CHECK(*b.memory->max_batch ==
        static_cast<std::int64_t>((b.memory->usable_bytes() - fixed) / (m.activation_bytes / 2)));
}

TEST_CASE("runs of the same op, shapes and phase are one op counted; a JSON that is no trace is "
          "not taken for one") {
  // The gelu once more, in the same phase: counted, not listed twice.
  nlohmann::json doc = nlohmann::json::parse(text_of(hand_trace));
  nlohmann::json &ops = doc.at("ops");
  const auto gelu = std::find_if(
      ops.begin(), ops.end(), [](const nlohmann::json &o) { return o.at("op") == "aten::gelu"; });
  REQUIRE(gelu != ops.end());
  const nlohmann::json again = *gelu;
  ops.insert(gelu + 1, again);
  const std::string text = doc.dump();
  const traced_program p = read_op_trace(text, "twice.json");
  CHECK(named(p, "aten::gelu").count == 2);
  CHECK(p.priced_ops == 9);
  CHECK_FALSE(is_op_trace(R"({"model_type": "llama", "hidden_size": 4096})"));
}

TEST_CASE("traces captured on an H200 (PyTorch 2.11): every op priced or free, the attention of "
          "nn.MultiheadAttention's fast path as its three kernels") {
  const std::string dir = ROOFLINE_SOURCE_DIR "/tests/data/traces/";
  for (const char *name : {"resnet50-fp16-h200.json", "vit-b16-fp16-h200.json"}) {
    CAPTURE(name);
    const traced_program p = read_op_trace(text_of(dir + name), name);
    CHECK(p.unpriced.empty());
    CHECK(p.priced_ops + p.free_ops == p.aten_ops);
    CHECK_FALSE(p.training);
    CHECK(p.memory.parameter_bytes > 0);
    CHECK(p.memory.peak_bytes >= p.memory.parameter_bytes);
  }
  const traced_program vit = read_op_trace(text_of(dir + "vit-b16-fp16-h200.json"), "vit");
  // ViT-B/16 at batch 128: 12 encoder blocks, each one fused attention over 197 tokens, 12 heads.
  const op &attention = named(vit, "aten::_native_multi_head_attention (attention)");
  REQUIRE(attention.attention);
  CHECK(attention.count == 12);
  CHECK(attention.attention->batch == 128);
  CHECK(attention.attention->heads == 12);
  CHECK(attention.attention->q_len == 197);
  CHECK(attention.attention->head_dim == 64);
  const op &qkv = named(vit, "aten::_native_multi_head_attention (qkv)");
  CHECK(qkv.gemm->m == 128 * 197);
  CHECK(qkv.gemm->n == 3 * 768);
  const traced_program resnet = read_op_trace(text_of(dir + "resnet50-fp16-h200.json"), "r50");
  const auto convs = std::count_if(resnet.ops.begin(), resnet.ops.end(),
                                   [](const op &o) { return o.conv.has_value(); });
  CHECK(convs > 10); // 53 convolutions of ResNet-50, fewer distinct shapes
}

namespace {

nlohmann::json tensor_json(std::int64_t storage, std::vector<std::int64_t> shape,
                           const char *dtype = "float16") {
  return {{"storage", storage}, {"shape", shape}, {"dtype", dtype}};
}

/// A trace of one forward op with these inputs.
std::string one_op(const char *name, nlohmann::json inputs) {
  nlohmann::json op{{"op", name},
                    {"phase", "forward"},
                    {"inputs", std::move(inputs)},
                    {"outputs", nlohmann::json::array()}};
  return nlohmann::json{
      {"format", "roofline-op-trace"}, {"version", 1}, {"ops", nlohmann::json::array({op})}}
      .dump();
}

} // namespace

TEST_CASE("aten's argument positions: causal attention aligned top-left, cuDNN's convolution, a "
          "dilated one; sizes past 64 bits refused") {
  // Causal flash attention of 128 queries over 4096 keys: each query meets the keys up to its
  // own position (PyTorch's top-left mask), 128·129/2 pairs, never negative.
  const traced_program causal =
      read_op_trace(one_op("aten::_scaled_dot_product_flash_attention",
                           {tensor_json(0, {1, 8, 128, 64}), tensor_json(1, {1, 8, 4096, 64}),
                            tensor_json(2, {1, 8, 4096, 64}), 0.0, true}),
                    "causal.json");
  REQUIRE(causal.ops.size() == 1);
  CHECK(causal.ops[0].flops == 4LL * 8 * (128 * 129 / 2) * 64);
  CHECK(causal.ops[0].attention->kv_len == 128);
  // cudnn_convolution(self, weight, padding, stride, dilation, groups, benchmark, ...): a 3×3
  // conv of 56² at padding 1, stride 1; groups read from its own place.
  const traced_program cudnn =
      read_op_trace(one_op("aten::cudnn_convolution", {tensor_json(0, {8, 64, 56, 56}),
                                                       tensor_json(1, {64, 64, 3, 3}),
                                                       {1, 1},
                                                       {1, 1},
                                                       {1, 1},
                                                       1,
                                                       true,
                                                       false,
                                                       true}),
                    "cudnn.json");
  REQUIRE(cudnn.ops.size() == 1);
  CHECK(cudnn.ops[0].gemm->m == 8 * 56 * 56);
  CHECK(cudnn.ops[0].gemm->k == 64 * 9);
  // Dilation 2 at padding 1: the window spans 5, so 54² outputs (56² undilated).
  const traced_program dilated =
      read_op_trace(one_op("aten::convolution", {tensor_json(0, {8, 64, 56, 56}),
                                                 tensor_json(1, {64, 64, 3, 3}),
                                                 nullptr,
                                                 {1, 1},
                                                 {1, 1},
                                                 {2, 2},
                                                 false,
                                                 {0, 0},
                                                 1}),
                    "dilated.json");
  CHECK(dilated.ops[0].gemm->m == 8 * 54 * 54);
  // A tensor of more than 2^63 bytes, a storage of negative size: input errors, not wrapped.
  CHECK_THROWS_AS(
      read_op_trace(one_op("aten::relu", {tensor_json(0, {1LL << 40, 1LL << 40})}), "huge.json"),
      input_error);
  nlohmann::json negative = nlohmann::json::parse(one_op("aten::relu", {tensor_json(0, {4})}));
  negative["storages"] = {{{"id", 0}, {"bytes", -8}, {"kind", "input"}}};
  CHECK_THROWS_AS(read_op_trace(negative.dump(), "negative.json"), input_error);
}
