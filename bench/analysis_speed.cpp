// SPDX-License-Identifier: Apache-2.0
// How fast the library predicts GEMMs (issue 14, part 4: at least 500,000 predictions per second on
// one core). Times perf_model::predict on a seeded set of GEMM shapes, first with every shape new
// to the model (nothing to reuse), then with a few shapes drawn again and again (as a network's
// layers repeat them: the model remembers what it predicted). Needs no GPU.
// bench/analysis_speed.sh runs it and times the CLI on networks of 5 to 100,000 layers.
//
//   analysis_speed [--gpu h100] [--shapes 20000] [--distinct 1000] [--repeats 200000]
#include "roofline/model/op.hpp"
#include "roofline/model/perf_model.hpp"
#include "roofline/model/spec_catalog.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace {

/// `count` GEMMs of seeded, varied shapes: M from decode-like to large batches, N and K of typical
/// layer widths and some breaking the 16-byte rule, a few batched; fp16, bf16, tf32, fp32 or fp8.
std::vector<roofline::op> gemms(std::size_t count, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  const auto pick = [&](std::int64_t low, std::int64_t high) {
    return std::uniform_int_distribution<std::int64_t>(low, high)(random);
  };
  constexpr roofline::precision precisions[] = {
      roofline::precision::fp16, roofline::precision::bf16, roofline::precision::tf32,
      roofline::precision::fp32, roofline::precision::fp8};
  std::vector<roofline::op> ops;
  ops.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    const auto width = [&] { return pick(0, 9) == 0 ? pick(1, 50304) : 64 * pick(1, 256); };
    const std::int64_t m = pick(0, 3) == 0 ? pick(1, 64) : pick(1, 16384);
    const std::int64_t n = width(), k = width();
    const roofline::gemm_shape shape{m, n, k, pick(0, 7) == 0 ? pick(2, 64) : 1};
    ops.push_back(
        roofline::make_gemm_op("gemm" + std::to_string(i), shape, precisions[pick(0, 4)]));
  }
  return ops;
}

/// Predictions per second of a fresh model of `spec` over `ops`, in the order `order` gives.
double rate(const roofline::gpu_spec &spec, const std::vector<roofline::op> &ops,
            const std::vector<std::size_t> &order) {
  const roofline::perf_model model(spec);
  double sum = 0;
  const auto start = std::chrono::steady_clock::now();
  for (std::size_t i : order)
    sum += model.predict(ops[i]).time_s;
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  if (!(sum > 0)) // uses the predictions, so that none is optimized away
    std::abort();
  return static_cast<double>(order.size()) / elapsed.count();
}

std::size_t count_argument(const char *text) {
  char *end = nullptr;
  const unsigned long long value = std::strtoull(text, &end, 10);
  if (*end != '\0' || value == 0) {
    fmt::print(stderr, "analysis_speed: `{}` is not a positive count\n", text);
    std::exit(2);
  }
  return static_cast<std::size_t>(value);
}

} // namespace

int main(int argc, char **argv) {
  std::string gpu = "h100";
  std::size_t shapes = 20000, distinct = 1000, repeats = 200000;
  for (int i = 1; i < argc; i += 2) {
    const std::string flag = argv[i];
    if (i + 1 == argc ||
        (flag != "--gpu" && flag != "--shapes" && flag != "--distinct" && flag != "--repeats")) {
      fmt::print(stderr, "usage: analysis_speed [--gpu NAME] [--shapes N] [--distinct N] "
                         "[--repeats N]\n");
      return 2;
    }
    if (flag == "--gpu")
      gpu = argv[i + 1];
    else
      (flag == "--shapes"     ? shapes
       : flag == "--distinct" ? distinct
                              : repeats) = count_argument(argv[i + 1]);
  }
  const roofline::gpu_spec spec = roofline::spec_catalog::builtin().resolve(gpu);

  // Every shape once: nothing to reuse.
  const std::vector<roofline::op> all = gemms(shapes, 14);
  std::vector<std::size_t> once(all.size());
  for (std::size_t i = 0; i < once.size(); ++i)
    once[i] = i;
  const double fresh = rate(spec, all, once);

  // `distinct` shapes drawn `repeats` times (seeded): a network whose layers repeat.
  const std::vector<roofline::op> few = gemms(distinct, 15);
  std::mt19937_64 random(16);
  std::vector<std::size_t> drawn(repeats);
  for (std::size_t &i : drawn)
    i = std::uniform_int_distribution<std::size_t>(0, few.size() - 1)(random);
  const double repeated = rate(spec, few, drawn);

  fmt::print("perf_model::predict on {} ({}), one thread\n", spec.display_name, spec.name);
  fmt::print("  {:>8} GEMMs, each shape once:       {:>9.0f} predictions/s\n", shapes, fresh);
  fmt::print("  {:>8} GEMMs of {} distinct shapes: {:>9.0f} predictions/s\n", repeats, distinct,
             repeated);
  fmt::print("  target (issue 14): 500000 predictions/s\n");
  return 0;
}
