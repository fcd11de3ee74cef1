// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/measurement.hpp"
#include "roofline/op.hpp"

#include <vector>

namespace roofline::cuda {

/// Runs every GEMM of `ops` on GPU 0 and returns what each showed (nullopt for ops that are not
/// GEMMs): the result is first checked against a double-precision reference on sampled outputs,
/// then timed twice, as back-to-back calls issued eagerly (time_s) and as the same calls captured
/// into a CUDA graph and replayed (device_time_s: the GPU's time per call, no host gap; 0 when the
/// engine's calls cannot be captured), each the median of its timed samples (with `rounds`, each
/// the median round), then profiled under CUPTI counters (one user range around one call,
/// replayed once per pass). An op that does not fit in free memory is recorded as skipped with the
/// memory it needed; an op whose engine fails is recorded as failed; the run goes on either way.
/// Notes for the whole run (e.g. counters not permitted) are in the result's `notes`. Throws
/// cuda_error only when no GPU can be used at all.
measurements measure(const std::vector<op> &ops, const measure_options &options);

} // namespace roofline::cuda
