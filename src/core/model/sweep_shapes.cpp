// SPDX-License-Identifier: Apache-2.0
#include "roofline/model/detail/sweep_shapes.hpp"

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <random>
#include <set>
#include <tuple>
#include <utility>

namespace roofline {

std::vector<sweep_shape> sweep_shapes() {
  std::mt19937_64 random(20261122);
  std::vector<sweep_shape> list;
  std::set<std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t>> seen;
  const auto add = [&](const std::string &category, gemm_shape s) {
    if (s.m * s.n * s.k * s.batch_count > (std::int64_t{1} << 38)) // each call under ~10 ms in fp32
      return;
    if (seen.insert({s.m, s.n, s.k, s.batch_count}).second)
      list.push_back({category, s, false});
  };
  const auto pick = [&](std::initializer_list<std::int64_t> values) {
    return *(values.begin() + static_cast<std::ptrdiff_t>(random() % values.size()));
  };
  // Transformer projections: tokens × hidden, with the usual expansions.
  for (int i = 0; i < 110; ++i) {
    const std::int64_t h = pick({768, 1024, 1536, 2048, 2560, 4096, 5120, 8192});
    const std::int64_t tokens = pick({1, 4, 16, 64, 128, 256, 512, 1024, 2048, 4096, 8192});
    switch (random() % 5) {
    case 0: add("transformer", {tokens, 3 * h, h, 1}); break;
    case 1: add("transformer", {tokens, h, h, 1}); break;
    case 2: add("transformer", {tokens, 4 * h, h, 1}); break;
    case 3: add("transformer", {tokens, h, 4 * h, 1}); break;
    default: add("transformer", {tokens, pick({11008, 13824, 14336}), h, 1}); break;
    }
  }
  // LM heads: vocabularies that do and do not meet the 16-byte rule, and their padded sizes.
  for (std::int64_t vocab : {32000, 32001, 33708, 33712, 50257, 50264, 50304, 51200, 30522, 30528})
    for (std::int64_t tokens : {1, 64, 512, 2048})
      add("lm-head", {tokens, vocab, pick({768, 1024, 2048}), 1});
  // Attention's batched GEMMs.
  for (int i = 0; i < 30; ++i) {
    const std::int64_t seq = pick({128, 256, 512, 1024, 2048}), d = pick({64, 80, 96, 128});
    const std::int64_t instances = pick({8, 16, 32, 64, 96, 128});
    if (random() % 2)
      add("attention", {seq, seq, d, instances});
    else
      add("attention", {seq, d, seq, instances});
  }
  // Convolutions as implicit GEMMs: M = batch·P·Q, N = out channels, K = in channels · R·S.
  for (int i = 0; i < 45; ++i) {
    const std::int64_t hw = pick({7, 14, 28, 56, 112});
    const std::int64_t batch = pick({1, 8, 32, 64});
    const std::int64_t cin = pick({3, 64, 128, 256, 512, 1024}),
                       cout = pick({64, 128, 256, 512, 1024, 2048});
    add("conv", {batch * hw * hw, cout, cin * pick({1, 9, 49}), 1});
  }
  // Odd sizes: log-uniform in [1, 16384], anything goes.
  std::uniform_real_distribution<double> exponent(0.0, 14.0);
  const auto odd = [&] {
    return static_cast<std::int64_t>(std::exp2(exponent(random))) +
           static_cast<std::int64_t>(random() % 7);
  };
  for (int i = 0; i < 90; ++i) {
    const std::int64_t m = odd(), n = odd(), k = odd();
    add("odd", {m, n, k, 1});
  }
  for (std::size_t i = 0; i < list.size(); ++i)
    list[i].calibration = i % 3 == 0;
  return list;
}

namespace {

/// Draws accuracy_shapes()' shapes, category by category, from one seeded generator: the draws
/// happen in a fixed order, so the list is the same on every platform.
class accuracy_drawer {
public:
  accuracy_drawer() {
    // The shapes the model may have been calibrated or scored on are left out, so that this set
    // scores it on shapes it has never seen.
    for (const sweep_shape &s : sweep_shapes())
      m_seen.insert({s.shape.m, s.shape.n, s.shape.k, s.shape.batch_count});
  }

  std::vector<sweep_shape> draw() {
    fill("projection", 105, [&] { return projection(); });
    fill("mlp", 80, [&] { return mlp(); });
    fill("attention", 60, [&] { return attention(); });
    fill("decode", 70, [&] { return decode(); });
    fill("conv", 55, [&] { return conv(); });
    fill("odd", 60, [&] {
      const std::int64_t m = odd(), n = odd(), k = odd();
      return gemm_shape{m, n, k, 1};
    });
    return std::move(m_list);
  }

private:
  using key = std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t>;

  bool add(const char *category, gemm_shape s) {
    // 2³⁷ multiply-adds: an fp32 call of ~5 ms on an H200, so the sweep stays short.
    if (s.m < 1 || s.n < 1 || s.k < 1 || s.batch_count < 1 ||
        s.m * s.n * s.k * s.batch_count > (std::int64_t{1} << 37))
      return false;
    if (!m_seen.insert({s.m, s.n, s.k, s.batch_count}).second)
      return false;
    m_list.push_back({category, s, false});
    return true;
  }

  std::int64_t pick(std::initializer_list<std::int64_t> values) {
    return *(values.begin() + static_cast<std::ptrdiff_t>(m_random() % values.size()));
  }

  /// Draws until `category` has `target` new shapes (draws over the size cap or already seen do
  /// not count); the attempt limit only guards against a draw that can never succeed.
  template <class Draw> void fill(const char *category, int target, Draw &&draw) {
    int added = 0;
    for (int attempt = 0; added < target && attempt < 100 * target; ++attempt)
      if (add(category, draw()))
        ++added;
  }

  std::int64_t hidden() {
    return pick(
        {512, 768, 1024, 1280, 1536, 2048, 2560, 2880, 3072, 3584, 4096, 5120, 6144, 7168, 8192});
  }

  std::int64_t tokens() {
    return pick({32, 48, 64, 96, 128, 192, 256, 320, 384, 512, 768, 1000, 1024, 1536, 2048, 3072,
                 4096, 6144, 8192});
  }

  /// Gated MLPs' widths (≈ 8/3·h, rounded up to a multiple the model's authors chose) with their
  /// h: n = the MLP width, k = h.
  gemm_shape gated() {
    switch (m_random() % 12) {
    case 0: return gemm_shape{0, 2816, 1024, 1};
    case 1: return gemm_shape{0, 5632, 2048, 1};
    case 2: return gemm_shape{0, 6912, 2560, 1};
    case 3: return gemm_shape{0, 7680, 2880, 1};
    case 4: return gemm_shape{0, 8192, 3072, 1};
    case 5: return gemm_shape{0, 18944, 3584, 1};
    case 6: return gemm_shape{0, 11008, 4096, 1};
    case 7: return gemm_shape{0, 14336, 4096, 1};
    case 8: return gemm_shape{0, 13824, 5120, 1};
    case 9: return gemm_shape{0, 16384, 6144, 1};
    case 10: return gemm_shape{0, 22016, 8192, 1};
    default: return gemm_shape{0, 28672, 8192, 1};
    }
  }

  gemm_shape projection() {
    const std::int64_t h = hidden(), t = tokens();
    switch (m_random() % 4) {
    case 0: return gemm_shape{t, 3 * h, h, 1};                    // fused QKV
    case 1: return gemm_shape{t, h + 2 * h / pick({4, 8}), h, 1}; // grouped-query QKV
    case 2: return gemm_shape{t, h, h, 1};                        // attention output
    default: return gemm_shape{t, 4 * h, h, 1};                   // a plain MLP's up projection
    }
  }

  gemm_shape mlp() {
    gemm_shape w = gated();
    if (m_random() % 3 == 0) // 4h, the classic MLP
      w.n = 4 * w.k;
    const std::int64_t t = tokens(), f = w.n, h = w.k;
    switch (m_random() % 3) {
    case 0: return gemm_shape{t, f, h, 1};     // up (or gate)
    case 1: return gemm_shape{t, 2 * f, h, 1}; // gate and up fused
    default: return gemm_shape{t, h, f, 1};    // down
    }
  }

  gemm_shape attention() {
    const std::int64_t seq =
        pick({64, 96, 128, 192, 256, 384, 512, 640, 768, 1024, 1536, 2048, 3072, 4096});
    const std::int64_t d = pick({64, 80, 96, 112, 128});
    const std::int64_t instances = pick({8, 12, 16, 24, 32, 40, 48, 64, 96, 128});
    return m_random() % 2 ? gemm_shape{seq, seq, d, instances}  // scores: Q·Kᵀ
                          : gemm_shape{seq, d, seq, instances}; // context: P·V
  }

  gemm_shape decode() {
    const std::int64_t m = pick({1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64});
    const std::int64_t h = hidden();
    const gemm_shape w = gated();
    switch (m_random() % 5) {
    case 0:
      return gemm_shape{
          m,
          pick({32000, 32064, 32768, 50257, 50304, 65024, 100352, 128256, 151936, 152064, 256000}),
          pick({768, 1024, 2048, 2560, 4096, 5120, 8192}), 1}; // LM head
    case 1: return gemm_shape{m, 3 * h, h, 1};
    case 2: return gemm_shape{m, h, h, 1};
    case 3: return gemm_shape{m, w.n, w.k, 1};
    default: return gemm_shape{m, w.k, w.n, 1};
    }
  }

  gemm_shape conv() {
    const std::int64_t pq = pick({7, 8, 13, 14, 16, 17, 28, 32, 35, 56, 64, 112});
    const std::int64_t batch = pick({1, 2, 4, 8, 16, 32, 64, 128});
    const std::int64_t cin =
        pick({3, 16, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 2048});
    const std::int64_t cout = pick({16, 32, 48, 64, 96, 128, 192, 256, 384, 512, 1024, 2048});
    return gemm_shape{batch * pq * pq, cout, cin * pick({1, 9, 25, 49}), 1};
  }

  /// Odd sizes: log-uniform in [1, 16384] (from the raw bits: distributions differ between
  /// standard libraries), and primes near powers of two, which no tile divides.
  std::int64_t odd() {
    if (m_random() % 3 == 0)
      return pick({2,   3,   5,   7,    11,   13,   17,   31,   61,   97,   127,  251,
                   257, 509, 521, 1021, 1031, 2039, 2053, 4093, 4099, 8191, 8209, 16381});
    const double u = static_cast<double>(m_random() >> 11) * 0x1.0p-53;
    return static_cast<std::int64_t>(std::exp2(14.0 * u)) +
           static_cast<std::int64_t>(m_random() % 7);
  }

  std::set<key> m_seen;
  // mt19937_64's output is fixed by the standard: the same list on every platform.
  std::mt19937_64 m_random{20261207};
  std::vector<sweep_shape> m_list;
};

} // namespace

std::vector<sweep_shape> accuracy_shapes() {
  return accuracy_drawer().draw();
}

} // namespace roofline
