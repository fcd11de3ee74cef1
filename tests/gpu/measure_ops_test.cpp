// SPDX-License-Identifier: Apache-2.0
// --measure beyond GEMMs: every memory-bound op kind through our kernels (kernels/memory_ops.cu)
// in fp16, bf16 and fp32, each checked against a double reference on sampled outputs of random
// data; convolutions through cuDNN (loaded at run time; as their implicit GEMMs when it is not on
// the machine); fused attention through cuDNN's graph API, checked the same way; kinds no kernel
// runs skipped with the reason.
#include "cudnn_attention.hpp"
#include "roofline/analysis/lowering.hpp"
#include "roofline/cuda/detail/cuda_owners.hpp"
#include "roofline/cuda/measurer.hpp"
#include "roofline/input/network.hpp"
#include "roofline/model/memory_op.hpp"

#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <vector>

using namespace roofline;

namespace {

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

measure_options quick() {
  measure_options options;
  options.counters = false;
  options.time_budget_s = 0.002;
  return options;
}

/// A result measured, checked against the reference within `precision`'s bound (as the GEMMs'
/// and the conv's: 2e-2 for bf16, 5e-3 else) and timed graph-replayed.
void checked_and_timed(const measurement &m, const std::string &precision) {
  INFO("engine " << m.engine << ", note: " << m.note);
  REQUIRE(m.status == measurement_status::measured);
  CHECK(m.relative_error > 0); // random operands, rounded outputs
  CHECK(m.relative_error < (precision == "bf16" ? 2e-2 : 5e-3));
  CHECK(m.device_time_s > 0);
}

/// Every memory op kind, with tails after the 16-byte packs (4·63·1001 elements), a row that is
/// not a power of two, pools over a conv's NHWC map, and the glue: RoPE over 128-wide heads and
/// over a row of one head, the cache write and the gather in packs and element by element, the
/// transposed copy of 128- and 64-wide heads and (the pool's 24 channels) a plain copy.
std::string every_kind(const char *precision) {
  return std::string("name: every-kind\nbatch: 4\nseq_len: 63\nprecision: ") + precision +
         "\nlayers:\n"
         "  - {name: fc, type: linear, in: 64, out: 1001}\n"
         "  - {name: relu, type: relu}\n"
         "  - {name: gelu, type: gelu}\n"
         "  - {name: silu, type: silu}\n"
         "  - {name: add, type: add}\n"
         "  - {name: mul, type: mul}\n"
         "  - {name: layernorm, type: layernorm}\n"
         "  - {name: rmsnorm, type: rmsnorm, features: 4096}\n"
         "  - {name: softmax, type: softmax, features: 333}\n"
         "  - {name: conv, type: conv2d, in_channels: 16, out_channels: 24, kernel: 3,"
         " padding: 1, input: [14, 14]}\n"
         "  - {name: batchnorm, type: batchnorm}\n"
         "  - {name: maxpool, type: maxpool, kernel: 3, stride: 2, padding: 1}\n"
         "  - {name: avgpool, type: avgpool, kernel: 2, stride: 2}\n"
         "  - {name: copy, type: copy}\n"
         "  - {name: embedding, type: embedding, features: 1024}\n"
         "  - {name: embedding_odd, type: embedding, features: 333}\n"
         "  - {name: rope, type: rope, features: 640}\n"
         "  - {name: rope_one_head, type: rope, features: 200}\n"
         "  - {name: kv_append, type: kv_append, features: 256}\n"
         "  - {name: kv_append_odd, type: kv_append, features: 333}\n"
         "  - {name: copy_heads, type: copy, features: 384}\n"
         "  - {name: copy_small_heads, type: copy, features: 192}\n";
}

} // namespace

TEST_CASE("every memory op kind runs through our kernels, checked against the reference") {
  for (const char *precision : {"fp16", "bf16", "fp32"}) {
    CAPTURE(precision);
    const std::vector<op> ops = lower(parse_network(every_kind(precision), "every-kind.yaml"));
    const measurements r = cuda::measure(ops, quick());
    REQUIRE(r.ops.size() == ops.size());
    std::set<std::string> kinds;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (ops[i].is_gemm())
        continue;
      CAPTURE(ops[i].layer);
      REQUIRE(r.ops[i]);
      const measurement &m = *r.ops[i];
      INFO("note: " << m.note);
      CHECK(m.engine == "roofline-kernels");
      REQUIRE(m.status == measurement_status::measured);
      // Exact kinds (relu, maxpool) may match to the bit; none may be off.
      CHECK(m.relative_error >= 0);
      CHECK(m.relative_error < (std::string(precision) == "fp32" ? 1e-4 : 2e-2));
      CHECK(m.time_s > 0);
      CHECK(m.device_time_s > 0);
      kinds.insert(ops[i].kind);
    }
    // Every kind was among them but quantize: no kernel here runs it yet (its own case below).
    CHECK(kinds.size() + 1 == memory_op_names().size());
    CHECK(kinds.count("quantize") == 0);
  }
}

TEST_CASE("a network with a norm, an activation, a conv and fused attention: each op measured, "
          "attention through cuDNN") {
  const std::vector<op> ops = lower(parse_network(
      "name: mixed\nbatch: 2\nseq_len: 128\nprecision: fp16\nlayers:\n"
      "  - {name: norm, type: rmsnorm, features: 512}\n"
      "  - {name: qkv, type: linear, in: 512, out: 1536}\n"
      "  - {name: attn, type: attention, heads: 8, head_dim: 64, causal: true, fused: true}\n"
      "  - {name: act, type: silu, features: 512}\n"
      "  - {name: conv, type: conv2d, in_channels: 64, out_channels: 64, kernel: 3, padding: 1,"
      " input: [28, 28]}\n",
      "mixed.yaml"));
  measure_options options = quick();
  options.trace_kernels = true;
  const measurements r = cuda::measure(ops, options);
  REQUIRE(r.ops.size() == ops.size());
  for (std::size_t i = 0; i < ops.size(); ++i) {
    CAPTURE(ops[i].layer);
    REQUIRE(r.ops[i]);
    const measurement &m = *r.ops[i];
    INFO("note: " << m.note);
    REQUIRE(m.status == measurement_status::measured);
    if (ops[i].is_fused_attention())
      CHECK(m.engine == "cudnn");
    CHECK(m.relative_error < 2e-2);
    CHECK(m.device_time_s > 0);
    CHECK_FALSE(m.kernels.empty()); // traced: the kernels the call launched
    if (ops[i].conv) {
      // cuDNN where it loads; else the implicit GEMM through cuBLAS, and the note says why.
      if (m.engine == "cudnn")
        CHECK(m.note.empty());
      else
        CHECK(contains(m.note, "measured as its implicit GEMM"));
      MESSAGE("conv engine: " << m.engine << (m.note.empty() ? "" : ": " + m.note));
    }
  }
}

TEST_CASE("convolutions through cuDNN match the reference in fp16, bf16 and fp32, strided and "
          "1×1 too") {
  for (const char *precision : {"fp16", "bf16", "fp32"}) {
    CAPTURE(precision);
    const std::vector<op> ops = lower(parse_network(
        std::string("name: convs\nbatch: 3\nprecision: ") + precision +
            "\nlayers:\n"
            "  - {name: stem, type: conv2d, in_channels: 3, out_channels: 32, kernel: 7,"
            " stride: 2, padding: 3, input: [57, 57]}\n"
            "  - {name: down, type: conv2d, in_channels: 32, out_channels: 48, kernel: 1,"
            " stride: 2, input: [29, 29]}\n"
            "  - {name: wide, type: conv2d, in_channels: 48, out_channels: 40, kernel: [3, 5],"
            " padding: [1, 2], input: [15, 15]}\n",
        "convs.yaml"));
    const measurements r = cuda::measure(ops, quick());
    for (std::size_t i = 0; i < ops.size(); ++i) {
      CAPTURE(ops[i].layer);
      REQUIRE(r.ops[i]);
      CHECK(r.ops[i]->engine == "cudnn");
      checked_and_timed(*r.ops[i], precision);
    }
  }
}

TEST_CASE("a convolution cuDNN does not run here (int8) is still timed, as its implicit GEMM") {
  const std::vector<op> ops = lower(parse_network(
      "name: int8\nbatch: 2\nprecision: int8\nlayers:\n"
      "  - {name: c, type: conv2d, in_channels: 32, out_channels: 64, kernel: 3, padding: 1,"
      " input: [14, 14]}\n",
      "int8.yaml"));
  const measurements r = cuda::measure(ops, quick());
  REQUIRE(r.ops.at(0));
  const measurement &m = *r.ops[0];
  INFO("engine " << m.engine << ", note: " << m.note);
  CHECK(m.status == measurement_status::measured);
  CHECK(m.engine == "cublas");
  CHECK(contains(m.note, "measured as its implicit GEMM"));
  CHECK(m.device_time_s > 0);
}

TEST_CASE("fused attention through cuDNN matches the reference in fp16 and bf16: causal and not, "
          "grouped-query, queries after a KV cache") {
  for (const char *precision : {"fp16", "bf16"}) {
    CAPTURE(precision);
    const std::vector<op> ops = lower(parse_network(
        std::string("name: attention\nbatch: 2\nseq_len: 128\nprecision: ") + precision +
            "\nlayers:\n"
            "  - {name: full, type: attention, heads: 8, head_dim: 64, fused: true}\n"
            "  - {name: causal, type: attention, heads: 4, head_dim: 128, causal: true,"
            " fused: true}\n"
            "  - {name: gqa, type: attention, heads: 8, kv_heads: 2, head_dim: 64, causal: true,"
            " fused: true}\n"
            "  - {name: cached, type: attention, heads: 8, kv_heads: 2, head_dim: 128, kv_len: 300,"
            " causal: true, fused: true}\n"
            "  - {name: decode, type: attention, heads: 8, kv_heads: 1, head_dim: 64, seq_len: 1,"
            " kv_len: 777, causal: true, fused: true}\n",
        "attention.yaml"));
    const measurements r = cuda::measure(ops, quick());
    int attention = 0;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (!ops[i].is_fused_attention())
        continue;
      ++attention;
      CAPTURE(ops[i].layer);
      REQUIRE(r.ops[i]);
      // Every op's outcome in the log: one that faults must not hide the others'.
      MESSAGE(ops[i].layer << ": " << to_string(r.ops[i]->status) << ", " << r.ops[i]->note);
      CHECK(r.ops[i]->engine == "cudnn");
      checked_and_timed(*r.ops[i], precision);
    }
    CHECK(attention == 5);
  }
}

TEST_CASE("fused attention in BHSD as in BSHD; the backward pass, a window and an fp8 KV cache "
          "skipped with the reason") {
  const cuda::detail::stream stream_owner;
  const cudaStream_t stream = stream_owner.get();
  std::unique_ptr<cuda::detail::cudnn_handle> cudnn;
  try {
    cudnn = std::make_unique<cuda::detail::cudnn_handle>(stream);
  } catch (const std::exception &e) {
    FAIL("cuDNN does not load: " << e.what());
  }
  const cuda::detail::operand_sets one = [](std::size_t) { return std::size_t{1}; };
  // batch, heads, kv_heads, q_len, kv_len, head_dim, causal: grouped, after a KV cache.
  const attention_shape s{3, 6, 2, 70, 200, 64, true};
  for (const auto layout :
       {cuda::detail::attention_layout::bshd, cuda::detail::attention_layout::bhsd}) {
    CAPTURE(static_cast<int>(layout));
    const auto call =
        cuda::detail::make_attention_call(*cudnn, s, precision::bf16, layout, one, stream);
    const double error = call->check(stream);
    CHECK(error > 0);
    CHECK(error < call->tolerance());
  }
  const auto skipped = [&](attention_shape shape, precision p) -> std::string {
    try {
      cuda::detail::make_attention_call(*cudnn, shape, p, cuda::detail::attention_layout::bshd, one,
                                        stream);
    } catch (const cuda::detail::op_skipped &e) {
      return e.what();
    }
    return "not skipped";
  };
  attention_shape backward = s;
  backward.backward = true;
  CHECK(contains(skipped(backward, precision::bf16), "forward (inference) only"));
  attention_shape window = s;
  window.window = 64;
  CHECK(contains(skipped(window, precision::bf16), "sliding window"));
  attention_shape fp8_cache = s;
  fp8_cache.kv_precision = precision::fp8;
  CHECK(contains(skipped(fp8_cache, precision::bf16), "KV cache stored as fp8"));
  CHECK(contains(skipped(s, precision::fp32), "fp16 or bf16"));
  cudnn.reset();
}

TEST_CASE("a kind no kernel runs, and a backward memory op, are skipped with the reason") {
  op unknown;
  unknown.layer = "scatter";
  unknown.kind = "scatter"; // a kind the model may learn before a kernel here runs it
  unknown.elements = 4096;
  unknown.row = 128;
  const std::vector<op> trained =
      lower(parse_network("name: t\nbatch: 8\nseq_len: 16\nmode: training\nprecision: bf16\n"
                          "layers:\n  - {name: act, type: gelu, features: 256}\n",
                          "t.yaml"));
  std::vector<op> ops{unknown};
  ops.insert(ops.end(), trained.begin(), trained.end());
  REQUIRE(ops.size() == 3); // scatter, gelu forward, gelu backward
  const measurements r = cuda::measure(ops, quick());
  REQUIRE(r.ops[0]);
  CHECK(r.ops[0]->status == measurement_status::skipped);
  CHECK(contains(r.ops[0]->note, "no kernel here runs `scatter` ops"));
  REQUIRE(r.ops[1]);
  CHECK(r.ops[1]->status == measurement_status::measured);
  REQUIRE(r.ops[2]);
  CHECK(r.ops[2]->status == measurement_status::skipped);
  CHECK(contains(r.ops[2]->note, "forward pass only"));
}
