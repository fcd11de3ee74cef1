// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/common/error.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>

namespace roofline::cuda::detail {

/// Thrown while an op is made ready when it cannot run here for a reason that is no fault of the
/// GPU's (no kernel for its kind, no library to run it, not enough free memory): the measurer
/// records the op as skipped, the message as its reason.
class op_skipped : public roofline::error {
public:
  using roofline::error::error;
};

/// `bytes` rounded up to the 256-byte boundary every operand set starts at (cuBLASLt's
/// alignment, and our kernels' 16-byte packs).
constexpr std::size_t operand_stride(std::size_t bytes) {
  return (bytes + 255) / 256 * 256;
}

/// How many copies of an op's operands to allocate, given the bytes of one copy: more than one
/// when each call must find its operands evicted from L2 (cold L2). Throws op_skipped when they
/// do not fit in the GPU's free memory.
using operand_sets = std::function<std::size_t(std::size_t set_bytes)>;

/// One op made ready to run on the GPU, outside cuBLAS's GEMMs: its operands allocated (as many
/// sets as operand_sets said) and filled with random data that is nowhere zero everywhere.
class op_call {
public:
  virtual ~op_call() = default;
  /// Enqueues one call on operand set `set` on `stream`; capture-safe (no allocation, no
  /// synchronization), idempotent. Throws cuda_error.
  virtual void run(std::size_t set, cudaStream_t stream) = 0;
  /// Poisons set 0's output, runs once on it and returns ‖out − ref‖/‖ref‖ over sampled outputs
  /// against a double-precision host reference (infinity where an output is not finite).
  virtual double check(cudaStream_t stream) = 0;
  /// The largest acceptable check(): the output type's rounding and the op's accumulation.
  virtual double tolerance() const = 0;
  /// Operand sets allocated (run's `set` is below it).
  virtual std::size_t sets() const = 0;
};

} // namespace roofline::cuda::detail
