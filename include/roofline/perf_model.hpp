// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/gpu_spec.hpp"
#include "roofline/op.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace roofline {

/// Which resource limits an op: DRAM bandwidth or arithmetic.
enum class bound { memory, compute };

std::string_view to_string(bound b);

/// Choices that change which roof an op is held against.
struct model_options {
  bool sparse = false; ///< use 2:4-sparse peaks where the GPU has them
};

/// What the model says of one op on one GPU.
struct prediction {
  double time_s = 0;                 ///< per run
  double peak_flop_per_s = 0;        ///< the roof of the unit that runs the op
  bool sparse_peak = false;          ///< that roof is a 2:4-sparse figure
  double ridge_intensity = 0;        ///< peak / DRAM bandwidth (FLOP/byte)
  double attainable_flop_per_s = 0;  ///< min(peak, intensity × bandwidth)
  roofline::bound bound = bound::compute;
  std::vector<std::string> factors;  ///< why: one short phrase per effect that shaped time_s
};

/// The roofline performance model of one GPU: time = max(FLOPs / peak, bytes / bandwidth).
/// GEMMs are held against the precision's unit (tensor cores for fp16/bf16/tf32/fp8/int8);
/// memory-bound ops run on the CUDA cores, so against the fp32 (SIMT) peak.
class perf_model {
public:
  explicit perf_model(gpu_spec spec, model_options options = {});

  const gpu_spec& spec() const noexcept { return m_spec; }
  const model_options& options() const noexcept { return m_options; }

  /// Throws input_error when the GPU has no rate for the op's precision.
  prediction predict(const op& o) const;

private:
  gpu_spec m_spec;
  model_options m_options;
};

} // namespace roofline
