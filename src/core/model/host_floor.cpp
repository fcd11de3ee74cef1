// SPDX-License-Identifier: Apache-2.0
#include "roofline/model/host_floor.hpp"

#include "roofline/common/error.hpp"
#include "roofline/model/ceilings.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace roofline {

double host_floor::gemm(precision p, int launches, bool fallback) const {
  const std::size_t i = static_cast<std::size_t>(p);
  return (fallback ? fallback_call_s[i] : gemm_call_s[i]) +
         (launches > 1 ? launches - 1 : 0) * kernel_launch_s;
}

host_floor typical_host_floor() {
  // The mean of what `device --measure` found on the two machines lent to this project whose
  // floors docs/benchmarks.md scores (an H200's and an H100's, 2026-11-22): eager cuBLASLt calls
  // of a 512×512×64 GEMM (512×511×64 for the fallback path) and empty kernel launches, back to
  // back. Hosts differ by ±25% and drift within minutes (docs/benchmarks.md): a typical value.
  host_floor floor;
  const auto set = [&](precision p, double call_us, double fallback_us) {
    floor.gemm_call_s[static_cast<std::size_t>(p)] = call_us * 1e-6;
    floor.fallback_call_s[static_cast<std::size_t>(p)] = fallback_us * 1e-6;
  };
  for (precision p : all_precisions) // fp8, int8, fp64 issue through fp16's path
    set(p, 9.8, 7.9);
  set(precision::tf32, 8.1, 11.3);
  set(precision::fp32, 11.7, 11.7);
  floor.kernel_launch_s = 4.4e-6;
  // A Hugging Face T5-base's fp16 forward (2,918 aten ops, host-bound) eager on an H200 host,
  // 2026-11-29: 62.5 ms / 2,918 (bench/capture_check.py; its row `t5-infer` of
  // bench/data/capture/h200-capture-run1.json; docs/benchmarks.md scores it on five other
  // programs and a second host).
  floor.framework_op_s = 21.4e-6;
  floor.origin = "typical host floor (not measured on this machine: "
                 "`describe_local_gpu::measure` measures it)";
  return floor;
}

host_floor measured_host_floor(const measured_ceilings &ceilings) {
  host_floor floor = typical_host_floor();
  // Precisions not measured (fp8, int8, fp64) issue through the same cuBLASLt path as fp16.
  const auto fill = [&](std::array<double, all_precisions.size()> &calls, auto measured) {
    bool any = false;
    for (precision p : all_precisions)
      if (const auto value = measured(p) ? measured(p) : measured(precision::fp16)) {
        calls[static_cast<std::size_t>(p)] = *value;
        any = true;
      }
    return any;
  };
  const bool calls = fill(floor.gemm_call_s, [&](precision p) { return ceilings.host_floor_s(p); });
  if (!fill(floor.fallback_call_s,
            [&](precision p) { return ceilings.fallback_host_floor_s(p); }) &&
      calls) // a cache from before fallback floors: the aligned call's is the better guess
    floor.fallback_call_s = floor.gemm_call_s;
  if (const auto launch = ceilings.launch_latency_s())
    floor.kernel_launch_s = *launch;
  if (calls) {
    floor.measured = true;
    floor.origin =
        "measured on this machine " + ceilings.measured_at + " (describe_local_gpu::measure)";
  }
  return floor;
}

host_floor cached_host_floor() {
  // The host is the same whichever of its GPUs measured it: the newest measurement stands.
  std::optional<measured_ceilings> newest;
  std::vector<std::string> skipped; // `device --measure --refresh` rewrites a damaged file
  try {
    if (const std::optional<std::filesystem::path> dir = readable_cache_directory()) {
      std::error_code ec;
      for (std::filesystem::directory_iterator it(*dir, ec), end; !ec && it != end;
           it.increment(ec)) {
        const std::filesystem::path &file = it->path();
        const std::string name = file.filename().string();
        if (name.rfind("ceilings-", 0) != 0 || file.extension() != ".json")
          continue;
        try {
          const std::optional<std::string> text = read_cache_file(file);
          if (!text)
            continue;
          measured_ceilings ceilings = parse_ceilings(*text, file.string());
          if (ceilings.host_floor_s(precision::fp16) &&
              (!newest || ceilings.measured_at > newest->measured_at))
            newest = std::move(ceilings);
        } catch (const input_error &e) {
          skipped.push_back(e.what());
        }
      }
    }
  } catch (const input_error &e) { // the directory itself
    skipped.push_back(e.what());
  }
  host_floor floor = newest ? measured_host_floor(*newest) : typical_host_floor();
  // A few named, the rest counted: the origin stays a line.
  constexpr std::size_t named = 3;
  for (std::size_t i = 0; i < skipped.size() && i < named; ++i)
    floor.origin += "; skipped: " + skipped[i];
  if (skipped.size() > named)
    floor.origin += fmt::format("; and {} more cache files skipped", skipped.size() - named);
  return floor;
}

} // namespace roofline
