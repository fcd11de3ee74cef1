// SPDX-License-Identifier: Apache-2.0
#include "roofline/host_floor.hpp"

#include "roofline/ceilings.hpp"

namespace roofline {

double host_floor::gemm(precision p, int launches) const {
  return gemm_call_s[static_cast<std::size_t>(p)] +
         (launches > 1 ? launches - 1 : 0) * kernel_launch_s;
}

host_floor typical_host_floor() {
  // The mean of what `device --measure` found on the two hosts lent to this project, 2026-11-22
  // (an H200's and an H100's; docs/benchmarks.md): an eager cuBLASLt call of a 64³ GEMM, and an
  // empty kernel launch, back to back. Precisions not measured issue as fp16 does.
  host_floor floor;
  floor.gemm_call_s.fill(6.5e-6);
  floor.gemm_call_s[static_cast<std::size_t>(precision::bf16)] = 6.8e-6;
  floor.gemm_call_s[static_cast<std::size_t>(precision::tf32)] = 9.3e-6;
  floor.gemm_call_s[static_cast<std::size_t>(precision::fp32)] = 8.9e-6;
  floor.kernel_launch_s = 3.7e-6;
  floor.origin = "typical host floor (not measured on this machine: `roofline-advise device "
                 "--measure` measures it)";
  return floor;
}

host_floor measured_host_floor(const measured_ceilings &ceilings) {
  host_floor floor = typical_host_floor();
  bool any = false;
  // Precisions not measured (fp8, int8, fp64) issue through the same cuBLASLt path as fp16.
  const std::optional<double> fp16 = ceilings.host_floor_s(precision::fp16);
  for (precision p : all_precisions)
    if (const auto value = ceilings.host_floor_s(p) ? ceilings.host_floor_s(p) : fp16) {
      floor.gemm_call_s[static_cast<std::size_t>(p)] = *value;
      any = true;
    }
  if (const auto launch = ceilings.launch_latency_s()) {
    floor.kernel_launch_s = *launch;
    any = true;
  }
  if (any) {
    floor.measured = true;
    floor.origin = "measured on this machine " + ceilings.measured_at + " (device --measure)";
  }
  return floor;
}

} // namespace roofline
