// SPDX-License-Identifier: Apache-2.0
// lower(): every layer type to its GEMMs and memory-bound ops, with shapes, FLOPs and bytes
// worked out by hand (docs/network-format.md gives the rules).
#include "roofline/analysis/analysis.hpp"
#include "roofline/analysis/lowering.hpp"
#include "roofline/common/error.hpp"
#include "roofline/input/model_config.hpp"
#include "roofline/input/network.hpp"
#include "roofline/model/op.hpp"
#include "roofline/model/spec_catalog.hpp"

#include "test_support.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

using namespace roofline;
using namespace roofline::test;

namespace {

std::vector<op> lower_yaml(const std::string &yaml, const std::string &origin = "net.yaml") {
  return lower(parse_network(yaml, origin));
}

void check_gemm(const op &o, std::int64_t m, std::int64_t n, std::int64_t k,
                std::int64_t batch_count) {
  CAPTURE(o.layer);
  CAPTURE(to_string(o.pass));
  REQUIRE(o.is_gemm());
  CHECK(o.kind == "gemm");
  CHECK(o.gemm->m == m);
  CHECK(o.gemm->n == n);
  CHECK(o.gemm->k == k);
  CHECK(o.gemm->batch_count == batch_count);
}

} // namespace

// ------------------------------------------------------------------ GEMM layers

TEST_CASE("linear lowers to one GEMM with M = batch·seq_len, N = out, K = in") {
  const std::vector<op> ops = lower_yaml("name: t\nbatch: 4\nseq_len: 16\nlayers:\n"
                                         "  - {name: fc, type: linear, in: 256, out: 512}\n");
  REQUIRE(ops.size() == 1);
  const op &fc = ops[0];
  check_gemm(fc, 64, 512, 256, 1); // M = 4 · 16
  CHECK(fc.layer == "fc");
  CHECK(fc.pass == pass::forward);
  CHECK(fc.precision == precision::fp16); // the network default
  CHECK(fc.count == 1);
  // FLOPs 2 · 64 · 512 · 256 = 16,777,216; bytes 2 · (64·256 + 256·512 + 64·512) = 2 · 180,224
  CHECK(fc.flops == 16'777'216);
  CHECK(fc.bytes == 360'448);
  // The op points back at its layer: line 5, the `{` of the flow mapping in column 5.
  CHECK(fc.where.file == "net.yaml");
  CHECK(fc.where.line == 5);
  CHECK(fc.where.column == 5);
}

TEST_CASE(
    "matmul lowers to exactly (m, n, k) with its batch_count, not scaled by batch or seq_len") {
  const std::vector<op> ops =
      lower_yaml("name: t\nbatch: 8\nseq_len: 3\nlayers:\n"
                 "  - {name: bmm, type: matmul, m: 128, n: 256, k: 64, batch_count: 12}\n"
                 "  - {name: mm, type: matmul, m: 10, n: 20, k: 30}\n"
                 "  - {name: r, type: relu}\n");
  REQUIRE(ops.size() == 3);
  check_gemm(ops[0], 128, 256, 64, 12);
  // 2 · 128 · 256 · 64 · 12 = 50,331,648; bytes 2 · (8,192 + 16,384 + 32,768) · 12 = 1,376,256
  CHECK(ops[0].flops == 50'331'648);
  CHECK(ops[0].bytes == 1'376'256);
  check_gemm(ops[1], 10, 20, 30, 1); // batch_count defaults to 1
  CHECK(ops[1].flops == 12'000);
  // The relu acts on mm's output: m·n·batch_count = 200 elements.
  CHECK(ops[2].elements == 200);
}

TEST_CASE("conv2d 3→64, 7×7, stride 2, padding 3 on 224×224 at batch 2 is the implicit GEMM "
          "(25088, 64, 147)") {
  const std::vector<op> ops = lower_yaml(
      "name: t\nbatch: 2\nlayers:\n"
      "  - {name: conv1, type: conv2d, in_channels: 3, out_channels: 64, kernel: 7, stride: 2,"
      " padding: 3, input: [224, 224]}\n"
      "  - {name: relu1, type: relu}\n");
  REQUIRE(ops.size() == 2);
  // P = Q = floor((224 + 2·3 - 7) / 2) + 1 = 111 + 1 = 112
  // M = 2 · 112 · 112 = 25,088; N = 64; K = 3 · 7 · 7 = 147
  check_gemm(ops[0], 25'088, 64, 147, 1);
  // FLOPs 2 · 25,088 · 64 · 147 = 472,055,808
  CHECK(ops[0].flops == 472'055'808);
  // bytes = 2 · (input 2·3·224·224 + filters 64·147 + output 2·64·112·112)
  //       = 2 · (301,056 + 9,408 + 1,605,632) = 3,832,192 (the real tensors, not im2col)
  CHECK(ops[0].bytes == 3'832'192);
  // The relu after it acts on the conv's output: 2 · 64 · 112 · 112 elements.
  CHECK(ops[1].elements == 1'605'632);
}

TEST_CASE("conv2d with non-square kernel, stride and padding lists") {
  // kernel [3, 5], stride [1, 2], padding [1, 2], input [32, 64]:
  // P = (32 + 2 - 3) / 1 + 1 = 32; Q = floor((64 + 4 - 5) / 2) + 1 = 31 + 1 = 32
  const std::vector<op> square_out =
      lower_yaml("name: t\nlayers:\n"
                 "  - {name: c, type: conv2d, in_channels: 16, out_channels: 32, kernel: [3, 5],"
                 " stride: [1, 2], padding: [1, 2], input: [32, 64]}\n");
  REQUIRE(square_out.size() == 1);
  check_gemm(square_out[0], 1024, 32, 240, 1); // M = 1·32·32, K = 16·3·5

  // kernel [3, 1], stride [2, 1], padding [1, 0], input [15, 10]:
  // P = floor((15 + 2 - 3) / 2) + 1 = 8; Q = (10 - 1) / 1 + 1 = 10
  const std::vector<op> ops =
      lower_yaml("name: t\nbatch: 3\nlayers:\n"
                 "  - {name: c, type: conv2d, in_channels: 4, out_channels: 6, kernel: [3, 1],"
                 " stride: [2, 1], padding: [1, 0], input: [15, 10]}\n"
                 "  - {name: r, type: relu}\n");
  REQUIRE(ops.size() == 2);
  check_gemm(ops[0], 240, 6, 12, 1); // M = 3·8·10, K = 4·3·1
  // bytes 2 · (3·4·15·10 + 6·12 + 3·6·8·10) = 2 · (1,800 + 72 + 1,440) = 6,624
  CHECK(ops[0].bytes == 6'624);
  CHECK(ops[1].elements == 1'440);
}

TEST_CASE("a 1×1 stride-2 conv reads only the sampled pixels of its input: M·K elements") {
  // 8 → 16 channels on 8×8 at batch 2: P = Q = floor((8 - 1) / 2) + 1 = 4, M = 2·4·4 = 32, K = 8.
  // The windows sit on rows and columns 0, 2, 4, 6: 4·4 of the 64 pixels, 2·8·16 = 256 = M·K
  // input elements, not the whole 2·8·64 = 1,024.
  const std::vector<op> ops =
      lower_yaml("name: t\nbatch: 2\nmode: training\nlayers:\n"
                 "  - {name: down, type: conv2d, in_channels: 8, out_channels: 16, kernel: 1,"
                 " stride: 2, input: [8, 8]}\n");
  REQUIRE(ops.size() == 3);
  check_gemm(ops[0], 32, 16, 8, 1);
  // forward: 2 · (input read 256 + filters 16·8 = 128 + output 32·16 = 512) = 1,792
  CHECK(ops[0].bytes == 1'792);
  // The weight grad reads the same sampled pixels; the data grad writes the whole input
  // gradient (zeros between the samples): 2 · (1,024 + 128 + 512) = 3,328.
  REQUIRE(ops[1].pass == pass::data_grad);
  CHECK(ops[1].bytes == 3'328);
  REQUIRE(ops[2].pass == pass::weight_grad);
  CHECK(ops[2].bytes == 1'792);

  // With padding 1 the 10×10 padded input gives P = floor(9 / 2) + 1 = 5 windows, at padded rows
  // 0, 2, 4, 6, 8 = real rows -1 (padding), 1, 3, 5, 7: 4 real rows and columns each, so 2·8·4·4
  // = 256 elements read again: 2 · (256 + 128 + 2·5·5·16 = 800) = 2,368.
  const std::vector<op> padded =
      lower_yaml("name: t\nbatch: 2\nlayers:\n"
                 "  - {name: down, type: conv2d, in_channels: 8, out_channels: 16, kernel: 1,"
                 " stride: 2, padding: 1, input: [8, 8]}\n");
  check_gemm(padded.at(0), 50, 16, 8, 1);
  CHECK(padded[0].bytes == 2'368);
}

TEST_CASE("a 3×3 stride-1 conv reads its whole input") {
  // 4 → 8 channels on 6×6, padding 1: P = Q = (6 + 2 - 3) / 1 + 1 = 6, M = 36, K = 4·9 = 36.
  // Windows start at every padded position: all 4·6·6 = 144 input elements are read.
  // bytes 2 · (144 + filters 8·36 = 288 + output 36·8 = 288) = 1,440
  const std::vector<op> ops =
      lower_yaml("name: t\nlayers:\n"
                 "  - {name: c, type: conv2d, in_channels: 4, out_channels: 8, kernel: 3,"
                 " padding: 1, input: [6, 6]}\n");
  check_gemm(ops.at(0), 36, 8, 36, 1);
  CHECK(ops[0].bytes == 1'440);
}

TEST_CASE("a 3×3 stride-2 conv reads its input up to where the last window ends") {
  // 2 → 4 channels on 8×8, no padding: P = Q = floor((8 - 3) / 2) + 1 = 3; the windows cover
  // rows [0, 3), [2, 5), [4, 7): rows 0..6 are read, row 7 never is. 2·7·7 = 98 of the 128
  // input elements; M = 9, K = 18; bytes 2 · (98 + filters 4·18 = 72 + output 9·4 = 36) = 412.
  const std::vector<op> ops =
      lower_yaml("name: t\nlayers:\n"
                 "  - {name: c, type: conv2d, in_channels: 2, out_channels: 4, kernel: 3,"
                 " stride: 2, input: [8, 8]}\n");
  check_gemm(ops.at(0), 9, 4, 18, 1);
  CHECK(ops[0].bytes == 412);
  // With padding 1 (ResNet's strided 3×3): P = floor((8 + 2 - 3) / 2) + 1 = 4, windows over
  // padded rows [0, 9): every real row 1..8 is read, all 128 elements; M = 16.
  // bytes 2 · (128 + 72 + 16·4 = 64) = 528
  const std::vector<op> padded =
      lower_yaml("name: t\nlayers:\n"
                 "  - {name: c, type: conv2d, in_channels: 2, out_channels: 4, kernel: 3,"
                 " stride: 2, padding: 1, input: [8, 8]}\n");
  check_gemm(padded.at(0), 16, 4, 18, 1);
  CHECK(padded[0].bytes == 528);
  // A 2×2 kernel at stride 3 on 8: windows [0, 2), [3, 5), [6, 8): 6 of 8 rows and columns,
  // 1·6·6 = 36 of 64 elements; P = 3, M = 9, K = 4; bytes 2 · (36 + 1·4 + 9·1) = 98.
  const std::vector<op> gaps =
      lower_yaml("name: t\nlayers:\n"
                 "  - {name: c, type: conv2d, in_channels: 1, out_channels: 1, kernel: 2,"
                 " stride: 3, input: [8, 8]}\n");
  check_gemm(gaps.at(0), 9, 1, 4, 1);
  CHECK(gaps[0].bytes == 98);
}

TEST_CASE("conv2d whose kernel is larger than its padded input is an input_error at the layer") {
  // 4 + 2·2 - 9 < 0
  const std::string yaml = "name: t\nlayers:\n"
                           "  - {name: c, type: conv2d, in_channels: 1, out_channels: 1, kernel: 9,"
                           " padding: 2, input: [4, 4]}\n";
  try {
    (void)lower_yaml(yaml, "conv.yaml");
    FAIL("a 9×9 kernel on a padded 8×8 input was accepted");
  } catch (const input_error &e) {
    CHECK(e.where().file == "conv.yaml");
    CHECK(e.where().line == 3);
    CHECK(contains(e.what(), "larger than the padded"));
  }
  // With padding 3 the padded input is 10×10: (10 - 9) / 1 + 1 = 2 positions each way, fine.
  const std::vector<op> ok =
      lower_yaml("name: t\nlayers:\n"
                 "  - {name: c, type: conv2d, in_channels: 1, out_channels: 1, kernel: 9,"
                 " padding: 3, input: [4, 4]}\n");
  check_gemm(ok.at(0), 4, 1, 81, 1); // M = 1 · 2 · 2, K = 1 · 9 · 9
}

TEST_CASE("attention (12 heads of 64, seq 512, batch 2) lowers to qk (512,512,64)×24, softmax, pv "
          "(512,64,512)×24") {
  const std::vector<op> ops =
      lower_yaml("name: t\nbatch: 2\nseq_len: 512\nlayers:\n"
                 "  - {name: attn, type: attention, heads: 12, head_dim: 64}\n"
                 "  - {name: r, type: relu}\n");
  REQUIRE(ops.size() == 4);
  const op &qk = ops[0];
  const op &softmax = ops[1];
  const op &pv = ops[2];
  CHECK(qk.layer == "attn/qk");
  CHECK(softmax.layer == "attn/softmax");
  CHECK(pv.layer == "attn/pv");
  check_gemm(qk, 512, 512, 64, 24); // batch_count = batch · heads = 24
  check_gemm(pv, 512, 64, 512, 24);
  // 2 · 512 · 512 · 64 · 24 = 805,306,368 each
  CHECK(qk.flops == 805'306'368);
  CHECK(pv.flops == 805'306'368);
  // softmax over 24 · 512 · 512 = 6,291,456 scores: 5 FLOPs each, read + write in fp16
  CHECK_FALSE(softmax.is_gemm());
  CHECK(softmax.kind == "softmax");
  CHECK(softmax.elements == 6'291'456);
  CHECK(softmax.flops == 31'457'280);
  CHECK(softmax.bytes == 25'165'824); // 2 tensors · 6,291,456 · 2 bytes
  // The layer's output is batch · seq · heads · head_dim = 2 · 512 · 12 · 64 = 786,432.
  CHECK(ops[3].elements == 786'432);
}

TEST_CASE("attention decode: seq_len 1 against a 2048-token KV cache") {
  const std::vector<op> ops =
      lower_yaml("name: t\nbatch: 1\nseq_len: 1\nlayers:\n"
                 "  - {name: attn, type: attention, heads: 32, head_dim: 128, kv_len: 2048}\n");
  REQUIRE(ops.size() == 3);
  check_gemm(ops[0], 1, 2048, 128, 32);
  CHECK(ops[1].elements == 65'536); // 32 · 1 · 2048
  check_gemm(ops[2], 1, 128, 2048, 32);
  // pv reads P (1·2048) and V (2048·128), writes 1·128: 2 · 264,320 · 32 = 16,916,480 bytes
  CHECK(ops[2].bytes == 16'916'480);
}

TEST_CASE("grouped-query attention reads each key/value head once: Llama-3-8B's 8 of 32") {
  // Llama-3-8B decode: 32 query heads share 8 key/value heads of 128, a 4096-token cache. Each
  // group's 4 queries are stacked into M against its key/value head.
  const std::vector<op> ops = lower_yaml(
      "name: t\nbatch: 1\nseq_len: 1\nlayers:\n"
      "  - {name: attn, type: attention, heads: 32, kv_heads: 8, head_dim: 128, kv_len: 4096}\n");
  REQUIRE(ops.size() == 3);
  check_gemm(ops[0], 4, 4096, 128, 8);
  check_gemm(ops[2], 4, 128, 4096, 8);
  CHECK(ops[1].elements == 131'072); // 32 heads · 4096 scores: as many as without groups
  // The cache read per token and layer: K (qk's B: 128 × 4096) and V (pv's B: 4096 × 128), per
  // key/value head, 2 bytes: 2 · 8 · 128 · 2 = 4,096 B; × 32 layers = 131,072 B per token, as
  // 2 × layers × kv_heads × head_dim × bytes says.
  const std::int64_t k_bytes = 2 * ops[0].gemm->k * ops[0].gemm->n * ops[0].gemm->batch_count;
  const std::int64_t v_bytes = 2 * ops[2].gemm->k * ops[2].gemm->n * ops[2].gemm->batch_count;
  CHECK((k_bytes + v_bytes) / 4096 * 32 == 131'072);
  // FLOPs are those of 32 heads: 2 · 32 · 4096 · 128 per product.
  CHECK(ops[0].flops == 2LL * 32 * 4096 * 128);
  CHECK(ops[2].flops == 2LL * 32 * 4096 * 128);
}

TEST_CASE("kv_heads must divide heads") {
  CHECK_THROWS_WITH_AS(
      lower_yaml("name: t\nlayers:\n"
                 "  - {name: attn, type: attention, heads: 32, kv_heads: 5, head_dim: 128}\n"),
      doctest::Contains("`kv_heads` = 5 must divide `heads` = 32"), input_error);
}

TEST_CASE("attention's own seq_len overrides the network's and kv_len defaults to it") {
  const std::vector<op> ops =
      lower_yaml("name: t\nseq_len: 100\nlayers:\n"
                 "  - {name: a, type: attention, heads: 2, head_dim: 8, seq_len: 16}\n");
  REQUIRE(ops.size() == 3);
  check_gemm(ops[0], 16, 16, 8, 2);
  check_gemm(ops[2], 16, 8, 16, 2);
}

// ------------------------------------------------------------------ memory-bound ops

TEST_CASE("a memory op without features acts on the previous layer's output") {
  // linear: 4·16 = 64 rows × 512 = 32,768 elements
  const std::vector<op> ops = lower_yaml("name: t\nbatch: 4\nseq_len: 16\nlayers:\n"
                                         "  - {name: fc, type: linear, in: 256, out: 512}\n"
                                         "  - {name: g, type: gelu}\n"
                                         "  - {name: ln, type: layernorm}\n");
  REQUIRE(ops.size() == 3);
  const op &gelu = ops[1];
  CHECK_FALSE(gelu.is_gemm());
  CHECK(gelu.kind == "gelu");
  CHECK(gelu.elements == 32'768);
  CHECK(gelu.flops == 262'144); // 8 per element
  CHECK(gelu.bytes == 131'072); // read + write, 2 bytes each
  // ... and a memory op after a memory op keeps the size.
  CHECK(ops[2].elements == 32'768);
}

TEST_CASE("features overrides the size: rows × features, and sets the size for the next op") {
  const std::vector<op> ops = lower_yaml("name: t\nbatch: 4\nseq_len: 16\nlayers:\n"
                                         "  - {name: fc, type: linear, in: 256, out: 512}\n"
                                         "  - {name: r, type: relu, features: 100}\n"
                                         "  - {name: s, type: silu}\n");
  REQUIRE(ops.size() == 3);
  CHECK(ops[1].elements == 6'400); // 64 rows · 100
  CHECK(ops[1].bytes == 25'600);
  CHECK(ops[2].elements == 6'400);
}

TEST_CASE("a first layer that is a memory op without features is an input_error at that layer") {
  try {
    (void)lower_yaml("name: t\nlayers:\n  - {name: r, type: relu}\n", "first.yaml");
    FAIL("a relu of unknown size was accepted");
  } catch (const input_error &e) {
    CHECK(e.where().file == "first.yaml");
    CHECK(e.where().line == 3);
    CHECK(contains(e.what(), "features"));
  }
}

TEST_CASE("add and mul read two tensors: bytes = 3 · elements · element size") {
  const std::vector<op> ops = lower_yaml("name: t\nprecision: fp32\nlayers:\n"
                                         "  - {name: a, type: add, features: 1000}\n"
                                         "  - {name: m, type: mul, features: 1000}\n"
                                         "  - {name: r, type: relu, features: 1000}\n");
  REQUIRE(ops.size() == 3);
  CHECK(ops[0].kind == "add");
  CHECK(ops[0].flops == 1'000);
  CHECK(ops[0].bytes == 12'000); // 3 · 1000 · 4
  CHECK(ops[1].bytes == 12'000);
  CHECK(ops[2].bytes == 8'000); // relu: 2 · 1000 · 4
}

TEST_CASE("maxpool takes its map from the previous conv: 112×112 → 56×56 with kernel 3, stride 2, "
          "padding 1") {
  const std::vector<op> ops = lower_yaml(
      "name: t\nbatch: 2\nlayers:\n"
      "  - {name: conv1, type: conv2d, in_channels: 3, out_channels: 64, kernel: 7, stride: 2,"
      " padding: 3, input: [224, 224]}\n"
      "  - {name: pool, type: maxpool, kernel: 3, stride: 2, padding: 1}\n"
      "  - {name: r, type: relu}\n");
  REQUIRE(ops.size() == 3);
  const op &pool = ops[1];
  CHECK(pool.kind == "maxpool");
  // P = Q = floor((112 + 2 - 3) / 2) + 1 = 56; output 2 · 64 · 56 · 56 = 401,408
  CHECK(pool.elements == 401'408);
  // reads the input 2 · 64 · 112 · 112 = 1,605,632, writes the output: 2 · 2,007,040 bytes
  CHECK(pool.bytes == 4'014'080);
  CHECK(pool.flops == 3'612'672); // 401,408 · 3 · 3
  CHECK(ops[2].elements == 401'408);
}

TEST_CASE(
    "avgpool with explicit channels and input, stride defaulting to the kernel (global pooling)") {
  const std::vector<op> ops =
      lower_yaml("name: t\nbatch: 64\nlayers:\n"
                 "  - {name: gap, type: avgpool, kernel: 7, channels: 2048, input: [7, 7]}\n");
  REQUIRE(ops.size() == 1);
  CHECK(ops[0].kind == "avgpool");
  CHECK(ops[0].elements == 131'072); // 64 · 2048 · 1 · 1
  // input 64 · 2048 · 49 = 6,422,528; bytes 2 · (6,422,528 + 131,072) = 13,107,200
  CHECK(ops[0].bytes == 13'107'200);
  CHECK(ops[0].flops == 6'422'528); // 131,072 · 49
}

TEST_CASE("a pool with no map to act on, or a window larger than its input, is an input_error") {
  CHECK_THROWS_AS((void)lower_yaml("name: t\nlayers:\n"
                                   "  - {name: fc, type: linear, in: 8, out: 8}\n"
                                   "  - {name: p, type: maxpool, kernel: 2}\n"),
                  input_error);
  CHECK_THROWS_AS(
      (void)lower_yaml("name: t\nlayers:\n"
                       "  - {name: p, type: maxpool, kernel: 9, channels: 1, input: [4, 4]}\n"),
      input_error);
}

// ------------------------------------------------------------------ repeat blocks and precision

TEST_CASE("repeat blocks multiply counts (2 × 3 = 6) and prefix names with the block's") {
  const std::vector<op> ops = lower_yaml("name: t\nlayers:\n"
                                         "  - repeat: 2\n"
                                         "    name: outer\n"
                                         "    layers:\n"
                                         "      - {name: fc0, type: linear, in: 8, out: 8}\n"
                                         "      - repeat: 3\n"
                                         "        name: inner\n"
                                         "        layers:\n"
                                         "          - {name: fc1, type: linear, in: 8, out: 8}\n"
                                         "  - repeat: 5\n"
                                         "    layers:\n"
                                         "      - {name: anon, type: linear, in: 8, out: 8}\n"
                                         "  - {name: head, type: linear, in: 8, out: 8}\n");
  REQUIRE(ops.size() == 4);
  CHECK(ops[0].layer == "outer/fc0");
  CHECK(ops[0].count == 2);
  CHECK(ops[1].layer == "outer/inner/fc1");
  CHECK(ops[1].count == 6);
  CHECK(ops[2].layer == "anon"); // an unnamed block adds no prefix
  CHECK(ops[2].count == 5);
  CHECK(ops[3].layer == "head");
  CHECK(ops[3].count == 1);
  // Counts are not folded into the per-run FLOPs: 2 · 1 · 8 · 8 = 128 each.
  for (const op &o : ops)
    CHECK(o.flops == 128);
}

TEST_CASE("precision: network default, per-block override, per-layer override") {
  // Each GEMM (1, 8, 8) moves 8 + 64 + 8 = 80 elements.
  const std::vector<op> ops =
      lower_yaml("name: t\nprecision: fp16\nlayers:\n"
                 "  - {name: a, type: linear, in: 8, out: 8}\n"
                 "  - repeat: 1\n"
                 "    name: block\n"
                 "    precision: bf16\n"
                 "    layers:\n"
                 "      - {name: b, type: linear, in: 8, out: 8}\n"
                 "      - {name: c, type: linear, in: 8, out: 8, precision: fp8}\n"
                 "      - {name: r, type: relu}\n"
                 "  - {name: d, type: linear, in: 8, out: 8, precision: fp32}\n");
  REQUIRE(ops.size() == 6);
  CHECK(ops[0].precision == precision::fp16);
  CHECK(ops[0].bytes == 160);
  CHECK(ops[1].layer == "block/b");
  CHECK(ops[1].precision == precision::bf16);
  CHECK(ops[1].bytes == 160);
  CHECK(ops[2].layer == "block/c/quantize"); // fp8: its activations quantized on entry
  CHECK(ops[3].layer == "block/c");
  CHECK(ops[3].precision == precision::fp8);
  CHECK(ops[3].bytes == 80);
  CHECK(ops[4].precision == precision::bf16); // the block's, for a memory op too
  CHECK(ops[4].bytes == 32);                  // relu on c's 8 outputs: 2 · 8 · 2
  CHECK(ops[5].precision == precision::fp32);
  CHECK(ops[5].bytes == 320);
}

TEST_CASE("fp8: a linear quantizes its activations on every call, a matmul does not; the "
          "activations between layers stay bf16") {
  const std::vector<op> ops = lower_yaml("name: t\nprecision: fp8\nbatch: 4\nlayers:\n"
                                         "  - {name: fc, type: linear, in: 64, out: 32}\n"
                                         "  - {name: act, type: silu}\n"
                                         "  - {name: mm, type: matmul, m: 4, n: 8, k: 32}\n");
  REQUIRE(ops.size() == 4);
  const op &quantize = ops[0];
  CHECK(quantize.layer == "fc/quantize");
  CHECK(quantize.kind == "quantize");
  CHECK(quantize.elements == 4 * 64);
  CHECK(quantize.row == 64);
  // Read twice in bf16 (the largest magnitude, then the scaling), written once in fp8.
  CHECK(quantize.bytes == 4 * 64 * (2 * 2 + 1));
  CHECK(quantize.flops == 3 * 4 * 64);
  CHECK(ops[1].is_gemm());
  CHECK(ops[1].bytes == 4 * 64 + 64 * 32 + 4 * 32); // the GEMM's operands at 1 byte
  CHECK(ops[2].kind == "silu");
  CHECK(ops[2].bytes == 2 * 4 * 32 * 2); // read and written in bf16
  CHECK(ops[3].is_gemm());               // no quantize op before a matmul
}

TEST_CASE("fp8 training: the forward pass quantizes, no quantize kernel runs backward") {
  const std::vector<op> ops =
      lower_yaml("name: t\nprecision: fp8\nmode: training\nbatch: 4\nlayers:\n"
                 "  - {name: fc, type: linear, in: 64, out: 32}\n");
  REQUIRE(ops.size() == 4); // quantize, forward GEMM, data- and weight-gradient GEMMs
  CHECK(ops[0].kind == "quantize");
  CHECK(ops[0].pass == pass::forward);
  for (std::size_t i = 1; i < ops.size(); ++i)
    CHECK(ops[i].is_gemm());
}

// ------------------------------------------------------------------ training

TEST_CASE("training: forward ops, then backward in reverse layer order; each GEMM gets data- and "
          "weight-grad") {
  const std::vector<op> ops = lower_yaml("name: t\nbatch: 4\nmode: training\nlayers:\n"
                                         "  - {name: fc1, type: linear, in: 8, out: 16}\n"
                                         "  - {name: act, type: relu}\n"
                                         "  - {name: res, type: add}\n"
                                         "  - {name: fc2, type: linear, in: 16, out: 2}\n");
  // forward: fc1, act, res, fc2; backward: fc2 (dA, dW), act, fc1 (dA, dW); add has none.
  REQUIRE(ops.size() == 9);
  const std::vector<std::pair<std::string, pass>> expected{
      {"fc1", pass::forward},   {"act", pass::forward},   {"res", pass::forward},
      {"fc2", pass::forward},   {"fc2", pass::data_grad}, {"fc2", pass::weight_grad},
      {"act", pass::data_grad}, {"fc1", pass::data_grad}, {"fc1", pass::weight_grad}};
  for (std::size_t i = 0; i < expected.size(); ++i) {
    CAPTURE(i);
    CHECK(ops[i].layer == expected[i].first);
    CHECK(ops[i].pass == expected[i].second);
  }
  // fc1 forward (M, N, K) = (4, 16, 8): dA (4, 8, 16), dW (8, 16, 4), all 2·4·16·8 = 1,024 FLOPs
  check_gemm(ops[0], 4, 16, 8, 1);
  check_gemm(ops[7], 4, 8, 16, 1);
  check_gemm(ops[8], 8, 16, 4, 1);
  CHECK(ops[0].flops == 1'024);
  CHECK(ops[7].flops == 1'024);
  CHECK(ops[8].flops == 1'024);
  // fc2 (4, 2, 16): dA (4, 16, 2), dW (16, 2, 4)
  check_gemm(ops[4], 4, 16, 2, 1);
  check_gemm(ops[5], 16, 2, 4, 1);
  // relu over 4 · 16 = 64 elements: forward 2 · 64 · 2 = 256 bytes; backward reads dY and X,
  // writes dX: 3 · 64 · 2 = 384 bytes, 1 FLOP per element.
  CHECK(ops[1].bytes == 256);
  CHECK(ops[6].kind == "relu");
  CHECK(ops[6].elements == 64);
  CHECK(ops[6].bytes == 384);
  CHECK(ops[6].flops == 64);
}

TEST_CASE("training attention: backward is pv grads, softmax grad, qk grads; counts are kept") {
  const std::vector<op> ops =
      lower_yaml("name: t\nbatch: 1\nseq_len: 4\nmode: training\nlayers:\n"
                 "  - repeat: 3\n"
                 "    name: blk\n"
                 "    layers:\n"
                 "      - {name: attn, type: attention, heads: 2, head_dim: 8}\n");
  REQUIRE(ops.size() == 8);
  const std::vector<std::pair<std::string, pass>> expected{
      {"blk/attn/qk", pass::forward},     {"blk/attn/softmax", pass::forward},
      {"blk/attn/pv", pass::forward},     {"blk/attn/pv", pass::data_grad},
      {"blk/attn/pv", pass::weight_grad}, {"blk/attn/softmax", pass::data_grad},
      {"blk/attn/qk", pass::data_grad},   {"blk/attn/qk", pass::weight_grad}};
  for (std::size_t i = 0; i < expected.size(); ++i) {
    CAPTURE(i);
    CHECK(ops[i].layer == expected[i].first);
    CHECK(ops[i].pass == expected[i].second);
    CHECK(ops[i].count == 3);
  }
  // qk (4, 4, 8) × 2: dA (4, 8, 4), dW (8, 4, 4)
  check_gemm(ops[6], 4, 8, 4, 2);
  check_gemm(ops[7], 8, 4, 4, 2);
  // softmax backward over 2 · 4 · 4 = 32 scores: 3 · 32 · 2 = 192 bytes, 4 FLOPs each
  CHECK(ops[5].elements == 32);
  CHECK(ops[5].bytes == 192);
  CHECK(ops[5].flops == 128);
}

TEST_CASE("training conv2d: the gradient GEMMs count the same real tensors as the forward (a conv "
          "that reads its whole input)") {
  const std::vector<op> ops = lower_yaml(
      "name: t\nbatch: 2\nmode: training\nlayers:\n"
      "  - {name: conv1, type: conv2d, in_channels: 3, out_channels: 64, kernel: 7, stride: 2,"
      " padding: 3, input: [224, 224]}\n");
  REQUIRE(ops.size() == 3);
  check_gemm(ops[0], 25'088, 64, 147, 1);
  check_gemm(ops[1], 25'088, 147, 64, 1); // dInput as a GEMM (M, K, N)
  check_gemm(ops[2], 147, 64, 25'088, 1); // dFilter (K, N, M)
  for (const op &o : ops) {
    CHECK(o.flops == 472'055'808);
    CHECK(o.bytes == 3'832'192);
  }
}

TEST_CASE("examples/mlp-training.yaml: 7 forward ops and 11 backward ops, backward GEMMs 2× "
          "forward FLOPs") {
  const std::vector<op> ops =
      lower(load_network(ROOFLINE_SOURCE_DIR "/examples/mlp-training.yaml"));
  REQUIRE(ops.size() == 18); // 4 linear + 3 gelu; 4 · 2 GEMM grads + 3 gelu grads
  std::int64_t forward_gemm = 0, backward_gemm = 0;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    CHECK((ops[i].pass == pass::forward) == (i < 7));
    if (ops[i].is_gemm())
      (ops[i].pass == pass::forward ? forward_gemm : backward_gemm) += ops[i].flops;
  }
  CHECK(backward_gemm == 2 * forward_gemm);
  // fc1 (512, 4096, 1024) comes last: its weight grad (1024, 4096, 512).
  CHECK(ops.back().layer == "fc1");
  check_gemm(ops.back(), 1024, 4096, 512, 1);
}

// ------------------------------------------------------------------ overflow

TEST_CASE("a linear whose 2·M·N·K overflows 64 bits is an input_error naming the file") {
  // in = out = 2^31: 2 · 1 · 2^31 · 2^31 = 2^63 > INT64_MAX
  try {
    (void)lower_yaml(
        "name: t\nlayers:\n  - {name: fc, type: linear, in: 2147483648, out: 2147483648}\n",
        "overflow.yaml");
    FAIL("an overflowing FLOP count was accepted");
  } catch (const input_error &e) {
    const std::string what = e.what();
    CAPTURE(what);
    CHECK(contains(what, "overflow.yaml"));
    CHECK(contains(what, "overflows"));
    CHECK(e.where().line == 3);
  }
}

TEST_CASE("batch × seq_len overflowing 64 bits is an input_error") {
  CHECK_THROWS_AS((void)lower_yaml("name: t\nbatch: 4294967296\nseq_len: 4294967296\nlayers:\n"
                                   "  - {name: fc, type: linear, in: 1, out: 1}\n"),
                  input_error);
}

TEST_CASE("a memory op whose FLOP count overflows 64 bits is an input_error") {
  // gelu does 8 FLOPs per element. 2^61 fp8 elements: traffic 2 · 2^61 = 2^62 bytes fits,
  // backward 3 · 2^61 fits, but 8 · 2^61 = 2^64 FLOPs does not.
  std::vector<op> ops;
  bool threw = false;
  try {
    ops = lower_yaml("name: t\nprecision: fp8\nlayers:\n"
                     "  - {name: g, type: gelu, features: 2305843009213693952}\n");
  } catch (const input_error &e) {
    threw = true;
    CHECK(contains(e.what(), "overflows"));
  }
  CHECK_MESSAGE(threw, "8 · 2^61 FLOPs did not throw");
  if (!threw && !ops.empty())
    CHECK_MESSAGE(ops[0].flops > 0, "the gelu's FLOP count wrapped to " << ops[0].flops);
}

TEST_CASE("an attention softmax whose FLOP count overflows 64 bits is an input_error") {
  // heads 1, head_dim 1, s = kv = 2^31 - 1 in fp8: the qk and pv GEMMs fit
  // (2 · (2^31-1)^2 < 2^63), but the softmax's 5 FLOPs per score (and its 3-tensor
  // backward traffic) over (2^31-1)^2 ≈ 2^62 scores do not.
  std::vector<op> ops;
  bool threw = false;
  try {
    ops =
        lower_yaml("name: t\nprecision: fp8\nlayers:\n"
                   "  - {name: a, type: attention, heads: 1, head_dim: 1, seq_len: 2147483647}\n");
  } catch (const input_error &e) {
    threw = true;
    CHECK(contains(e.what(), "overflows"));
  }
  CHECK_MESSAGE(threw, "5 · (2^31-1)^2 softmax FLOPs did not throw");
  if (!threw && ops.size() == 3)
    CHECK_MESSAGE(ops[1].flops > 0, "the softmax's FLOP count wrapped to " << ops[1].flops);
}

TEST_CASE("a pool whose backward traffic overflows 64 bits is an input_error, not a dropped "
          "backward op") {
  // avgpool over one 2^31 × 2^31 map with a 2^31 window, fp8, training: input 2^62 elements,
  // output 1. Forward traffic 2^62 + 1 fits; backward traffic output + 2 · input = 2^63 + 1 does
  // not.
  std::vector<op> ops;
  bool threw = false;
  try {
    ops = lower_yaml("name: t\nprecision: fp8\nmode: training\nlayers:\n"
                     "  - {name: p, type: avgpool, kernel: 2147483648, channels: 1,"
                     " input: [2147483648, 2147483648]}\n");
  } catch (const input_error &e) {
    threw = true;
    CHECK(contains(e.what(), "overflows"));
  }
  CHECK_MESSAGE(threw, "2^63 + 1 elements of backward traffic did not throw");
  if (!threw)
    CHECK_MESSAGE(ops.size() == 2, "the pool's backward op is missing: " << ops.size() << " op(s)");
}

// ------------------------------------------------------------------ limits on work

TEST_CASE("op_count says how many ops lower() makes of every layer type, in both modes") {
  const char *const layers[] = {
      "{name: l, type: linear, in: 8, out: 8}",
      "{name: l, type: matmul, m: 8, n: 8, k: 8}",
      "{name: l, type: conv2d, in_channels: 3, out_channels: 8, kernel: 3, input: 8}",
      "{name: l, type: attention, heads: 2, head_dim: 8, seq_len: 4}",
      "{name: l, type: attention, heads: 2, head_dim: 8, seq_len: 4, fused: true}",
      "{name: l, type: attention, heads: 4, kv_heads: 2, head_dim: 8, seq_len: 4, fused: true, "
      "expanded_kv: true}",
      "{name: l, type: moe, experts: 4, top_k: 2, in: 8, intermediate: 16}",
      "{name: l, type: moe, experts: 4, top_k: 2, in: 8, intermediate: 16, gated: false}",
      "{name: l, type: relu, features: 8}",
      "{name: l, type: add, features: 8}",
      "{name: l, type: softmax, features: 8}",
      "{name: l, type: all_reduce, gpus: 2, features: 8}",
      "{name: l, type: maxpool, kernel: 2, channels: 3, input: 8}",
      "{repeat: 5, name: b, layers: [{name: a, type: linear, in: 8, out: 8}, "
      "{name: r, type: relu}]}",
  };
  for (const char *mode : {"inference", "training"})
    for (const char *layer : layers) {
      const network net = parse_network(
          std::string("name: t\nmode: ") + mode + "\nlayers:\n  - " + layer + "\n", "t.yaml");
      CAPTURE(mode);
      CAPTURE(layer);
      std::vector<op> ops;
      try {
        ops = lower(net);
      } catch (const input_error &) {
        continue; // modelled for inference only (fused attention, moe)
      }
      CHECK(op_count(net.layers.front(), net.mode) == static_cast<std::int64_t>(ops.size()));
      // Training's forward ops are inference's, first (memory_fit's recomputation reads them so).
      const auto forward = std::count_if(ops.begin(), ops.end(),
                                         [](const op &o) { return o.pass == pass::forward; });
      CHECK(op_count(net.layers.front(), run_mode::inference) == forward);
      CHECK(std::all_of(ops.begin(), ops.begin() + forward,
                        [](const op &o) { return o.pass == pass::forward; }));
    }
}

namespace {

network flat_network(std::size_t layers, run_mode mode, const std::string &name = "fc") {
  network net;
  net.name = "flat";
  net.origin = "flat.yaml";
  net.mode = mode;
  for (std::size_t i = 0; i < layers; ++i) {
    layer l;
    l.name = name;
    l.where = {"flat.yaml", static_cast<int>(i) + 4, 5};
    l.body = linear_layer{8, 8};
    net.layers.push_back(l);
  }
  return net;
}

} // namespace

TEST_CASE("lower() refuses a network past max_ops before making any op, at the layer that "
          "crosses it") {
  // 100,001 linear layers in training: 3 ops each, 300,003 in all; the last one crosses.
  const network net = flat_network(static_cast<std::size_t>(max_ops / 3 + 1), run_mode::training);
  try {
    lower(net);
    FAIL("accepted");
  } catch (const input_error &e) {
    CHECK(e.where().line == static_cast<int>(max_ops / 3) + 4);
    CHECK(contains(e.message(), "the network lowers to more than 300000 ops, the limit"));
    CHECK(contains(e.message(), "`repeat`"));
  }
  // The same layers in inference: 100,001 ops, well within.
  CHECK(
      lower(flat_network(static_cast<std::size_t>(max_ops / 3 + 1), run_mode::inference)).size() ==
      static_cast<std::size_t>(max_ops / 3 + 1));
}

TEST_CASE("a layer's full name longer than max_layer_path_bytes is refused, located") {
  const std::string long_name(max_layer_path_bytes + 1, 'x');
  CHECK_THROWS_WITH_AS(lower(flat_network(1, run_mode::inference, long_name)),
                       doctest::Contains("more than the limit of 256"), input_error);
  CHECK(lower(flat_network(1, run_mode::inference, long_name.substr(1))).size() == 1);
  // Inside repeat blocks: the joined name counts, and is refused as the file is read.
  const std::string yaml = "name: t\nlayers:\n  - repeat: 2\n    name: " + std::string(200, 'b') +
                           "\n    layers:\n      - {name: " + std::string(60, 'c') +
                           ", type: relu, features: 4}\n";
  try {
    parse_network(yaml, "t.yaml");
    FAIL("accepted");
  } catch (const input_error &e) {
    CHECK(e.where().to_string() == "t.yaml:6:9");
    CHECK(contains(e.message(), "is 261 bytes, more than the limit of 256"));
  }
}

TEST_CASE("YAML aliases that expand past max_ops are refused as the file is read, at once") {
  // Issue 18: 507 bytes, 91,111 attention layers in training (8 ops each): 729,000 ops, under
  // the 100,000-layer cap; before the fix, 1.2 GB of JSON and 3 GB of memory in 30 s.
  const std::string yaml = "name: amp\nmode: training\nseq_len: 8\nlayers:\n"
                           "  - &a {name: a, type: attention, heads: 2, head_dim: 8}\n"
                           "  - &b {repeat: 1, layers: [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]}\n"
                           "  - &c {repeat: 1, layers: [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]}\n"
                           "  - &d {repeat: 1, layers: [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]}\n"
                           "  - &e {repeat: 1, layers: [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]}\n"
                           "  - {repeat: 1, layers: [*e, *e, *e, *e, *e, *e, *e, *e]}\n";
  try {
    parse_network(yaml, "amp.yaml");
    FAIL("accepted");
  } catch (const input_error &e) {
    CHECK(e.where().to_string() == "amp.yaml:5:5"); // the attention layer, aliased
    CHECK(contains(e.message(), "more than 300000 ops"));
  }
}

// What --measure needs to run an op for real: a memory op's row, a pool's window and map, a
// convolution's geometry.
TEST_CASE("a memory op's row is its innermost extent: features, the layer before's output width, "
          "a conv's channels (NHWC), an unfused attention's keys") {
  const std::vector<op> ops =
      lower_yaml("name: t\nbatch: 2\nseq_len: 8\nlayers:\n"
                 "  - {name: norm, type: layernorm, features: 96}\n"
                 "  - {name: fc, type: linear, in: 96, out: 40}\n"
                 "  - {name: act, type: gelu}\n"
                 "  - {name: attn, type: attention, heads: 4, head_dim: 10, kv_len: 24}\n");
  // norm, fc, gelu, qk, softmax, pv
  REQUIRE(ops.size() == 6);
  CHECK(ops[0].row == 96);
  CHECK(ops[0].elements == 2 * 8 * 96);
  CHECK(ops[1].row == 0);  // a GEMM has none
  CHECK(ops[2].row == 40); // the linear's out
  CHECK(ops[4].kind == "softmax");
  CHECK(ops[4].row == 24); // each query's scores over the 24 keys
  CHECK(ops[4].elements % ops[4].row == 0);

  const std::vector<op> conv = lower_yaml(
      "name: t\nbatch: 2\nlayers:\n"
      "  - {name: c, type: conv2d, in_channels: 3, out_channels: 16, kernel: 3, stride: 2,"
      " padding: 1, input: [9, 9]}\n"
      "  - {name: bn, type: batchnorm}\n"
      "  - {name: pool, type: maxpool, kernel: 3, stride: 2, padding: 1}\n"
      "  - {name: r, type: relu}\n");
  REQUIRE(conv.size() == 4);
  // P = Q = floor((9 + 2 − 3) / 2) + 1 = 5
  REQUIRE(conv[0].conv);
  CHECK(*conv[0].conv == conv_shape{2, 3, 16, 9, 9, 5, 5, 3, 3, 2, 2, 1, pass::forward, 1, 1});
  CHECK(conv[1].row == 16); // batchnorm's channels
  REQUIRE(conv[2].pool);
  // 5×5 → floor((5 + 2 − 3) / 2) + 1 = 3
  CHECK(*conv[2].pool == pool_shape{2, 16, 5, 5, 3, 3, 3, 2, 1});
  CHECK(conv[2].elements == 2 * 16 * 3 * 3);
  CHECK(conv[2].row == 16);
  CHECK(conv[3].row == 16); // the pool's output keeps the channels innermost
}

TEST_CASE("in training every pass of a conv carries its convolution, marked with its pass") {
  const std::vector<op> ops = lower_yaml(
      "name: t\nbatch: 2\nmode: training\nlayers:\n"
      "  - {name: c, type: conv2d, in_channels: 4, out_channels: 8, kernel: 3, padding: 1,"
      " input: [6, 6]}\n");
  REQUIRE(ops.size() == 3);
  for (const op &o : ops) {
    REQUIRE(o.conv);
    CHECK(o.conv->pass == o.pass); // the measurer runs the forward one through cuDNN only
  }
}

// ------------------------------------------------------------------ how GEMMs grow with the batch

namespace {

/// The growth lowering tagged the GEMM of `layer` in pass `p` with.
batch_growth growth_of(const std::vector<op> &ops, const std::string &layer, pass p) {
  for (const op &o : ops)
    if (o.layer == layer && o.pass == p && o.is_gemm())
      return o.scaling.growth;
  FAIL("no GEMM " << layer);
  return batch_growth::none;
}

/// Every tagged GEMM of `net`, remade by at_batch at batch `other`, is the GEMM lower() makes
/// there: the batch advice reads the tags instead of lowering the network again.
void check_at_batch(network net, std::int64_t other) {
  const std::vector<op> ops = lower(net);
  const std::int64_t batch = net.batch;
  net.batch = other;
  const std::vector<op> there = lower(net);
  REQUIRE(there.size() == ops.size());
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const op &o = ops[i];
    if (!o.is_gemm() || o.scaling.growth == batch_growth::none)
      continue;
    CAPTURE(net.name);
    CAPTURE(o.layer);
    CAPTURE(to_string(o.pass));
    CAPTURE(other);
    const std::optional<op> remade = at_batch(o, batch, other);
    REQUIRE(remade);
    const op &real = there[i];
    REQUIRE(real.is_gemm());
    CHECK(remade->gemm->m == real.gemm->m);
    CHECK(remade->gemm->n == real.gemm->n);
    CHECK(remade->gemm->k == real.gemm->k);
    CHECK(remade->gemm->batch_count == real.gemm->batch_count);
    CHECK(remade->flops == real.flops);
    CHECK(remade->bytes == real.bytes);
    CHECK(remade->count == real.count);
    CHECK(remade->scaling.growth == real.scaling.growth);
    CHECK(remade->conv.has_value() == real.conv.has_value());
    if (real.conv)
      CHECK(remade->conv->batch == real.conv->batch);
  }
}

} // namespace

TEST_CASE("lowering tags how each GEMM grows with the batch: M for a linear, a conv and a router, "
          "batch_count for attention's GEMMs, the routing for experts, neither for a matmul or a "
          "weight gradient") {
  const std::vector<op> trained =
      lower_yaml("name: t\nbatch: 4\nseq_len: 16\nmode: training\nlayers:\n"
                 "  - {name: fc, type: linear, in: 64, out: 64}\n"
                 "  - {name: attn, type: attention, heads: 4, head_dim: 16}\n"
                 "  - {name: mm, type: matmul, m: 8, n: 8, k: 8}\n"
                 "  - {name: conv, type: conv2d, in_channels: 3, out_channels: 8, input: [8, 8], "
                 "kernel: [3, 3]}\n");
  CHECK(growth_of(trained, "fc", pass::forward) == batch_growth::rows);
  CHECK(growth_of(trained, "fc", pass::data_grad) == batch_growth::rows);
  CHECK(growth_of(trained, "fc", pass::weight_grad) == batch_growth::none);
  CHECK(growth_of(trained, "conv", pass::forward) == batch_growth::rows);
  CHECK(growth_of(trained, "conv", pass::weight_grad) == batch_growth::none);
  for (pass p : {pass::forward, pass::data_grad, pass::weight_grad}) {
    CHECK(growth_of(trained, "attn/qk", p) == batch_growth::instances);
    CHECK(growth_of(trained, "attn/pv", p) == batch_growth::instances);
    CHECK(growth_of(trained, "mm", p) == batch_growth::none);
  }
  // The weights a linear reads at any batch: N·K elements of fp16.
  for (const op &o : trained)
    if (o.layer == "fc" && o.pass == pass::forward)
      CHECK(o.scaling.fixed_bytes == 2 * 64 * 64);

  const std::vector<op> moe =
      lower_yaml("name: m\nbatch: 2\nseq_len: 8\nlayers:\n"
                 "  - {name: moe, type: moe, experts: 8, top_k: 2, in: 64, intermediate: 128}\n");
  CHECK(growth_of(moe, "moe/router", pass::forward) == batch_growth::rows);
  for (const op &o : moe)
    if (o.is_gemm() && o.layer != "moe/router") {
      CHECK(o.scaling.growth == batch_growth::routed);
      CHECK(o.scaling.tokens == 16);
      CHECK(o.scaling.experts == 8);
      CHECK(o.scaling.top_k == 2);
    }
}

TEST_CASE("at_batch remakes a tagged GEMM as lower() makes it at another batch: every example, "
          "and mixtures of experts whose routing reaches more experts as the batch grows") {
  for (const char *example : {"alexnet-classifier", "bert-base", "gpt2-small-training",
                              "gpt2-small", "llama2-7b-decode-batch64", "llama2-7b-decode",
                              "llama2-7b-prefill", "mlp-training", "resnet50"}) {
    const network net =
        load_network(std::string(ROOFLINE_SOURCE_DIR) + "/examples/" + example + ".yaml");
    for (std::int64_t other : {std::int64_t{1}, std::int64_t{3}, 2 * net.batch, std::int64_t{1000}})
      check_at_batch(net, other);
  }
  for (const char *config : {"mixtral-8x7b.json", "qwen1.5-moe-a2.7b.json"})
    for (std::int64_t seq_len : {1, 15, 512}) {
      config_options options;
      options.seq_len = seq_len;
      options.fused_attention = false;
      const network net = load_model_config(config_path(config), options);
      for (std::int64_t other : {2, 3, 64, 4096})
        check_at_batch(net, other);
    }
  // Weight-only quantized weights set for the whole network stay quantized at another batch.
  check_at_batch(parse_network("name: q\nbatch: 8\nweights: int4\nweight_group: 128\nlayers:\n"
                               "  - {name: fc, type: linear, in: 4096, out: 4096}\n",
                               "q.yaml"),
                 16);
}

TEST_CASE("at_batch: nullopt where the remade GEMM's sizes overflow 64 bits") {
  const std::vector<op> ops =
      lower_yaml("name: big\nbatch: 4\nlayers:\n  - {name: fc, type: linear, in: 4096, out: "
                 "4096}\n");
  REQUIRE(ops.size() == 1);
  CHECK_FALSE(at_batch(ops.front(), 4, std::int64_t{1} << 50));
  REQUIRE(at_batch(ops.front(), 4, 8));
  CHECK(at_batch(ops.front(), 4, 8)->gemm->m == 8);
}

TEST_CASE("a network built in code with a zero size is refused, naming the layer and the field, "
          "not analysed as empty GEMMs") {
  const auto refusal = [](const network &net) {
    try {
      (void)lower(net);
    } catch (const input_error &e) {
      return std::string(e.what());
    }
    return std::string("lowered");
  };
  network net;
  net.name = "api";
  net.batch = 4;
  attention_layer attention;
  attention.heads = 8;
  attention.head_dim = 64;
  attention.kv_len = 128; // seq_len left at 0
  layer attn;
  attn.name = "attn";
  attn.body = attention;
  repeat_block block;
  block.times = 2;
  block.layers = {attn};
  layer blocks;
  blocks.name = "block";
  blocks.body = block;
  net.layers = {blocks};
  CHECK(refusal(net) == "layer `block/attn`: `seq_len` is 0; expected a positive integer");
  // analyze() lowers it too: the same refusal.
  CHECK_THROWS_WITH_AS(analyze(net, perf_model(*spec_catalog::builtin().find("h100")), "test"),
                       "layer `block/attn`: `seq_len` is 0; expected a positive integer",
                       input_error);
  std::get<attention_layer>(std::get<repeat_block>(net.layers[0].body).layers[0].body).seq_len =
      128;
  CHECK(lower(net).size() > 0);
  std::get<repeat_block>(net.layers[0].body).times = 0;
  CHECK(refusal(net) == "layer `block`: `times` is 0; expected a positive integer");
  layer mm;
  mm.name = "mm";
  mm.body = matmul_layer{16, 16, 0, 1};
  net.layers = {mm};
  CHECK(refusal(net) == "layer `mm`: `k` is 0; expected a positive integer");
  net.layers = {};
  net.batch = 0;
  CHECK(refusal(net) == "network `api`: `batch` is 0; expected a positive integer");
}
