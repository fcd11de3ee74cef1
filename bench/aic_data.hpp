// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the benches fitting on ../shared/data/aic (NVIDIA AIConfigurator's TensorRT-LLM timings,
// third-party: its README says what they are) share: the GPUs they hold with our spec names and
// architectures, and the seeded split of their shapes into a `fit` half and a `score` half.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace roofline::bench {

/// One GPU of the shared data: the suffix of its files ("h100_sxm") and its spec in specs/.
struct aic_gpu {
  std::string_view files; ///< gemm_<files>_trtllm.csv
  std::string_view spec;  ///< a name or alias in the spec catalog
};

inline const std::vector<aic_gpu> &aic_gpus() {
  static const std::vector<aic_gpu> gpus{
      {"a100_sxm", "a100-sxm4-80gb"}, {"l40s", "l40s"},     {"h100_sxm", "h100-sxm5"},
      {"h200_sxm", "h200-sxm"},       {"b200_sxm", "b200"}, {"b300_sxm", "b300"},
      {"gb200", "gb200"},             {"gb300", "gb300"},   {"rtx_pro_6000_server", "rtx-pro-6000"}};
  return gpus;
}

/// Whether a shape (its key: the row's shape columns joined, GPU left out so that every GPU
/// splits the same shapes the same way) is in the `fit` half. FNV-1a of the key with a fixed
/// seed: the split is the same on every machine and was chosen before any fit.
inline bool in_fit_half(std::string_view shape_key) {
  std::uint64_t h = 0xcbf29ce484222325ULL ^ 20261126ULL;
  for (const char c : shape_key) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  h ^= h >> 29;
  return (h & 1) == 0;
}

} // namespace roofline::bench
