// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the GPU spec loader (parse_gpu_spec, and parse_architecture_parameters on the same
// text), then a small network of every precision the spec has, predicted on it: the spec's numbers
// meet sizes in the model's arithmetic.
#include "fuzz_support.hpp"

#include "roofline/model/gpu_spec.hpp"
#include "roofline/model/spec_catalog.hpp"

#include <string>

namespace {

// Every kind of op the model predicts differently: GEMMs (a skinny one among them), a
// convolution, attention both ways, memory-bound ops, pooling and an all-reduce.
constexpr const char *probe_network = R"(name: probe
batch: 8
seq_len: 128
layers:
  - {name: proj, type: linear, in: 4096, out: 4096}
  - {name: skinny, type: matmul, m: 1, n: 50257, k: 768}
  - {name: norm, type: layernorm}
  - {name: attn, type: attention, heads: 32, head_dim: 128, kv_heads: 8, causal: true, fused: true}
  - {name: scores, type: attention, heads: 12, head_dim: 64}
  - {name: reduce, type: all_reduce, gpus: 8, features: 4096}
  - {name: conv, type: conv2d, in_channels: 64, out_channels: 128, kernel: 3, padding: 1, input: [56, 56]}
  - {name: relu, type: relu}
  - {name: pool, type: maxpool, kernel: 2, stride: 2}
)";

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  using namespace roofline;
  static const network probe = parse_network(probe_network, "probe.yaml");
  const std::string_view text = fuzz::text_of(data, size);
  fuzz::answer([&] { parse_architecture_parameters(text, "fuzz-arch.yaml"); });
  return fuzz::answer([&] {
    const gpu_spec spec = spec_catalog::builtin().inherit(parse_gpu_spec(text, "fuzz.yaml"));
    for (const auto &[p, peak] : spec.peaks) {
      network net = probe;
      net.precision = p;
      fuzz::answer([&] { fuzz::analyse(net, perf_model(spec)); });
    }
  });
}
