// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/analysis/analysis.hpp"
#include "roofline/model/pass.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace roofline {

/// Batch sizes for one GEMM whose rows grow with the batch.
struct batch_advice {
  std::string layer;
  roofline::pass pass = pass::forward;
  std::int64_t batch = 0; ///< the network's
  std::optional<std::int64_t>
      compute_bound_batch; ///< smallest batch with intensity ≥ ridge; unset: never
  std::optional<std::int64_t>
      full_wave_batch; ///< `batch` if its tiles fill ≥ 95% of the last wave, else the smallest
                       ///< multiple of 8 that does and costs ≥ 3% less time per sample
  /// Compute-bound only at a batch that does not fit in the GPU's memory: compute_bound_batch
  /// is then unset (no advice names a batch that does not fit).
  bool compute_bound_beyond_memory = false;
};

/// What a larger batch would do to a network's step.
struct batch_outlook {
  /// One per GEMM whose rows grow with the batch, in the order of the analysis's ops.
  std::vector<batch_advice> gemms;
  /// Smallest power-of-two batch at which less than half the time of those GEMMs is
  /// memory-bound; unset: none ≤ 65536.
  std::optional<std::int64_t> network_compute_bound_batch;
  /// The largest batch whose step fits in the GPU's memory (analysis::memory; 0: not even one);
  /// unset where memory is not known. No batch above it is advised.
  std::optional<std::int64_t> largest_fitting_batch;
  /// The network's compute-bound batch where it lies beyond largest_fitting_batch (and
  /// network_compute_bound_batch is unset): memory-bound at every batch that fits.
  std::optional<std::int64_t> compute_bound_beyond_memory;
  /// Set when most of the step is memory-bound: how much, in what, and what a larger batch does.
  std::optional<std::string> memory_bound_warning;
};

/// The batch advice of `analysed`: which GEMMs grow with the batch and how, read from lowering's
/// tags (op::scaling, at_batch) rather than from the network lowered again, predicted with the
/// analysis's model. Nothing grows where the batch cannot double (twice it, or the sizes of a
/// GEMM that grows with it, overflow 64 bits); batches whose sizes would overflow are not
/// suggested.
batch_outlook advise_batch(const analysis &analysed);

} // namespace roofline
