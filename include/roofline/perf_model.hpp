// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/gemm_model.hpp"
#include "roofline/gpu_spec.hpp"
#include "roofline/model_parameters.hpp"
#include "roofline/op.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace roofline {

/// Which resource limits an op: DRAM bandwidth or arithmetic.
enum class bound { memory, compute };

std::string_view to_string(bound b);

/// Choices that change which roof an op is held against and how time is predicted.
struct model_options {
  bool sparse = false;        ///< use 2:4-sparse peaks where the GPU has them
  bool roofline_only = false; ///< predict the plain roofline bound instead of the GEMM model
  /// The GEMM model's parameters; unset: the GPU's calibration where it has one, else the defaults.
  std::optional<model_parameters> parameters;
};

/// What the model says of one op on one GPU.
struct prediction {
  double time_s = 0;          ///< per run: what the model predicts
  double roofline_time_s = 0; ///< per run: max(FLOPs / peak, bytes / bandwidth), a lower bound
  double peak_flop_per_s = 0; ///< the roof of the unit that runs the op
  bool sparse_peak = false;   ///< that roof is a 2:4-sparse figure
  double ridge_intensity = 0; ///< peak / DRAM bandwidth (FLOP/byte)
  double attainable_flop_per_s = 0; ///< min(peak, intensity × bandwidth)
  roofline::bound bound = bound::compute;
  std::vector<std::string> factors;  ///< why: one short phrase per effect that shaped time_s
  std::optional<gemm_estimate> gemm; ///< the GEMM model's view (GEMMs, unless roofline_only)
};

/// The performance model of one GPU. The roofline places each op (intensity against the ridge:
/// memory- or compute-bound); the time it predicts is the GEMM model's (estimate_gemm) for GEMMs
/// and the roofline with achievable bandwidth and a launch floor for memory-bound ops.
/// GEMMs are held against the precision's unit (tensor cores for fp16/bf16/tf32/fp8/int8);
/// memory-bound ops run on the CUDA cores, so against the fp32 (SIMT) peak.
class perf_model {
public:
  explicit perf_model(gpu_spec spec, model_options options = {});

  const gpu_spec &spec() const noexcept { return m_spec; }
  const model_options &options() const noexcept { return m_options; }
  /// The GEMM model's parameters in use.
  const model_parameters &parameters() const noexcept { return m_parameters; }

  /// Throws input_error when the GPU has no rate for the op's precision.
  prediction predict(const op &o) const;

private:
  gpu_spec m_spec;
  model_options m_options;
  model_parameters m_parameters;
};

} // namespace roofline
