// SPDX-License-Identifier: Apache-2.0
// Sizing a decoder in a design tool: a Llama-style transformer built in code, swept over its
// hidden size and decode batch on two GPUs. For each size: the share of the GEMMs' time that is
// compute-bound, the time per output token, and whether weights and KV cache fit. Exits 1 when
// the answers contradict the roofline (the example doubles as a test of the installed package).
#include <roofline/analysis/analysis.hpp>
#include <roofline/analysis/pipeline.hpp>
#include <roofline/input/network.hpp>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace {

roofline::layer make(std::string name, decltype(roofline::layer::body) body) {
  roofline::layer l;
  l.name = std::move(name);
  l.body = std::move(body);
  return l;
}

roofline::layer linear(std::string name, std::int64_t in, std::int64_t out) {
  return make(std::move(name), roofline::linear_layer{in, out});
}

roofline::layer elementwise(std::string name, roofline::memory_op_kind kind,
                            std::int64_t features) {
  return make(std::move(name), roofline::memory_layer{kind, features});
}

/// One decode step of a Llama-style model: `hidden` wide in heads of 128 (a quarter of them
/// key/value heads), a SwiGLU MLP 8/3 as wide rounded up to 256, `layers` blocks, a 32k
/// vocabulary, bf16, reading a KV cache of `kv_len` tokens.
roofline::network decoder(std::int64_t hidden, std::int64_t layers, std::int64_t batch,
                          std::int64_t kv_len) {
  using roofline::memory_op_kind;
  const std::int64_t heads = hidden / 128, kv_heads = heads / 4, vocab = 32000;
  const std::int64_t intermediate = (8 * hidden / 3 + 255) / 256 * 256;
  roofline::attention_layer attention;
  attention.heads = heads;
  attention.kv_heads = kv_heads;
  attention.head_dim = 128;
  attention.seq_len = 1;
  attention.kv_len = kv_len;
  attention.fused = true;

  roofline::repeat_block block;
  block.times = layers;
  block.layers = {elementwise("input_norm", memory_op_kind::rmsnorm, hidden),
                  linear("q_proj", hidden, heads * 128),
                  linear("k_proj", hidden, kv_heads * 128),
                  linear("v_proj", hidden, kv_heads * 128),
                  make("self_attn", attention),
                  linear("o_proj", heads * 128, hidden),
                  elementwise("attn_add", memory_op_kind::add, hidden),
                  elementwise("post_norm", memory_op_kind::rmsnorm, hidden),
                  linear("gate_proj", hidden, intermediate),
                  linear("up_proj", hidden, intermediate),
                  elementwise("silu", memory_op_kind::silu, intermediate),
                  elementwise("mul", memory_op_kind::mul, intermediate),
                  linear("down_proj", intermediate, hidden),
                  elementwise("mlp_add", memory_op_kind::add, hidden)};

  roofline::network net;
  net.name = "decoder-" + std::to_string(hidden);
  net.precision = roofline::precision::bf16;
  net.batch = batch;
  net.phase = roofline::inference_phase::decode;
  net.kv_len = kv_len;
  net.resident_weight_bytes = 2.0 * static_cast<double>(vocab * hidden); // the embedding table
  net.layers = {make("decoder_layer", std::move(block)),
                elementwise("final_norm", memory_op_kind::rmsnorm, hidden),
                linear("lm_head", hidden, vocab)};
  return net;
}

/// The share of the GEMMs' predicted time spent in compute-bound GEMMs.
double compute_bound_share(const roofline::analysis &a) {
  double compute = 0, all = 0;
  for (const roofline::analysed_op &entry : a.ops)
    if (entry.op.is_gemm()) {
      all += entry.total_time_s;
      if (entry.prediction.bound == roofline::bound::compute)
        compute += entry.total_time_s;
    }
  return all > 0 ? compute / all : 0;
}

} // namespace

int main() {
  struct size {
    std::int64_t hidden, layers;
  };
  const std::vector<size> sizes{{2048, 24}, {4096, 32}, {5120, 40}, {8192, 80}};
  const std::vector<std::int64_t> batches{1, 16, 128, 512};
  const std::int64_t kv_len = 4096;
  bool surprised = false;
  for (const char *gpu_name : {"h100", "a100-sxm4-40gb"}) {
    const roofline::gpu_choice gpu = roofline::choose_gpu(gpu_name);
    std::printf("\n%s, decode against a %lld-token KV cache, bf16\n",
                gpu.model.spec().display_name.c_str(), static_cast<long long>(kv_len));
    std::printf("%7s %6s %6s %16s %14s %10s  %s\n", "hidden", "layers", "batch", "compute-bound",
                "ms per token", "tokens/s", "memory");
    for (const size &s : sizes) {
      double previous_share = -1;
      for (std::int64_t batch : batches) {
        const roofline::analysis a =
            roofline::analyze(decoder(s.hidden, s.layers, batch, kv_len), gpu.model, gpu_name);
        const double share = compute_bound_share(a);
        const roofline::memory_use &m = a.memory.value();
        char fit[96];
        if (m.fits)
          std::snprintf(fit, sizeof fit, "fits: %.1f GB, up to batch %lld", m.total_bytes / 1e9,
                        static_cast<long long>(m.max_batch.value_or(batch)));
        else
          std::snprintf(fit, sizeof fit, "does not fit: needs %.1f GB of %.1f", m.total_bytes / 1e9,
                        m.capacity_bytes / 1e9);
        std::printf("%7lld %6lld %6lld %15.0f%% %14.3f %10.0f  %s\n",
                    static_cast<long long>(s.hidden), static_cast<long long>(s.layers),
                    static_cast<long long>(batch), 100 * share, a.totals.time_s * 1e3,
                    static_cast<double>(batch) / a.totals.time_s, fit);
        // A larger batch reuses each weight over more rows: the compute-bound share never falls.
        // At batch 1 every weight GEMM is a GEMV, far below any ridge.
        surprised |= share + 1e-9 < previous_share;
        surprised |= batch == 1 && share > 0;
        surprised |= !(a.totals.time_s > 0);
        previous_share = share;
      }
    }
  }
  // An 80-layer, 8192-wide model's 110 GB of bf16 weights fit on neither GPU.
  for (const char *gpu_name : {"h100", "a100-sxm4-40gb"})
    surprised |= roofline::analyze(decoder(8192, 80, 1, kv_len),
                                   roofline::choose_gpu(gpu_name).model, gpu_name)
                     .memory->fits;
  if (surprised)
    std::fprintf(stderr, "embed: the sweep contradicts the roofline\n");
  return surprised ? 1 : 0;
}
