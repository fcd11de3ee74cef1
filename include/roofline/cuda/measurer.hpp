// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/report.hpp"

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace roofline::cuda {

/// Which implementation runs the GEMMs.
enum class gemm_engine { cublas, naive, tiled, tensorcore };

std::string_view to_string(gemm_engine e);
std::optional<gemm_engine> parse_gemm_engine(std::string_view name);

struct measure_options {
  gemm_engine engine = gemm_engine::cublas;
  bool cold_l2 = false; ///< rotate operand buffers whose total exceeds twice the L2
  bool counters = true; ///< read hardware counters through CUPTI (passes + 1 extra calls per op)
  /// Without counters, still name the kernels each call launches (CUPTI activity, 1 extra call).
  bool trace_kernels = false;
  /// Timed calls per op are sized to about this much GPU time, for the eager timing; the graph
  /// replays time as many calls as often, which takes the GPU no longer.
  double time_budget_s = 0.05;
  /// Times every op this many times, in rounds over the whole report, and keeps the median round
  /// (checked and counted in the first): a spell of a slower host moves one round, not the result.
  int rounds = 1;
  /// Called before each op: (index, total, layer).
  std::function<void(std::size_t, std::size_t, const std::string &)> progress;
};

/// Runs every GEMM of `r` on GPU 0 and stores what it showed in each op's `measured`: the result is
/// first checked against a double-precision reference on sampled outputs, then timed twice, as
/// back-to-back calls issued eagerly (time_s) and as the same calls captured into a CUDA graph and
/// replayed (device_time_s: the GPU's time per call, no host gap; 0 when the engine's calls cannot
/// be captured), each the median of its timed samples (with `rounds`, each the median round), then
/// profiled under CUPTI counters (one user range around one call, replayed once per pass). An op
/// that does not fit in free memory is recorded as skipped with the memory it needed; an op whose
/// engine fails is recorded as failed; the run goes on either way. Warnings for the whole run (e.g.
/// counters not permitted) are added to `r.notes`. Throws cuda_error only when no GPU can be used
/// at all.
void measure_report(report &r, const measure_options &options);

/// What `roofline-advise calibrate` did: the fitted parameters and how well they fit.
struct calibration_result {
  model_parameters parameters; ///< as analyses will use them: the architecture's, then `fitted`
  parameter_overrides fitted;  ///< what the fit moved from the architecture's: what is saved
  std::size_t measured = 0;    ///< GEMM timings the fit used
  double median_error = 0, p90_error = 0; ///< |predicted − measured| / measured on them
  std::string saved_to;
};

/// Times the calibration shapes of sweep_shapes() × fp32, tf32, fp16, bf16 on GPU 0 with cuBLAS,
/// fits the GEMM model's parameters to their device times (graph-replayed; calls without one are
/// left out) with fit_model, from its architecture's parameters, and saves what the fit moved
/// beside the GPU's measured ceilings, where `--gpu auto` finds them.
calibration_result calibrate_local_gpu(
    const std::function<void(std::size_t, std::size_t, const std::string &)> &progress);

} // namespace roofline::cuda
