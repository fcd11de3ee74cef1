// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/model/gemm.hpp"

#include <string>
#include <vector>

namespace roofline {

/// A shape of the benchmark sweep: its family and whether it calibrates or scores.
struct sweep_shape {
  std::string category; ///< "transformer", "lm-head", "attention", "conv", "odd"
  gemm_shape shape;
  bool calibration = false; ///< one shape in three calibrates; the others score (disjoint sets)
};

/// The fixed, seeded set of GEMM shapes `roofline-advise calibrate` and bench/gemm_sweep measure.
std::vector<sweep_shape> sweep_shapes();

/// A second fixed, seeded set of GEMM shapes for scoring a calibrated model on shapes it has never
/// seen (bench/gemm_sweep's set "fresh"): at least 420 shapes, none equal in (m, n, k, batch_count)
/// to any of sweep_shapes(), every one with m·n·k·batch_count ≤ 2³⁷ (an fp32 call of a few ms at
/// most), all with calibration = false. Categories: "projection" (transformer QKV, output and MLP
/// projections, hidden widths 512–8192 including 2880, 3584, 5120, 6144, 7168, 32–8192 tokens),
/// "mlp" (gated 8/3·h and 4h feed-forward widths, up and down), "attention" (batched seq×seq×d and
/// seq×d×seq, d of 64–128, 8–128 instances), "decode" (M of 1–64 against projection, MLP and
/// vocabulary widths), "conv" (implicit GEMMs: M = batch·P·Q, N = out channels, K = in
/// channels·R·S), "odd" (log-uniform sizes and primes). Deterministic: the same list on every call
/// and platform.
std::vector<sweep_shape> accuracy_shapes();

} // namespace roofline
