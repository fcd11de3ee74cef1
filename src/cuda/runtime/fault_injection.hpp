// SPDX-License-Identifier: Apache-2.0
#pragma once

// TEST-ONLY. Faults injected into a measurement run through the environment, so that the GPU tests
// can check that a fault of one op marks that op and the run goes on. Not part of the tool's
// interface: nothing but tests sets ROOFLINE_INJECT_FAULT.

#include <cstddef>
#include <map>

namespace roofline::cuda::detail {

enum class injected_fault {
  none,
  /// the op's first (checked) call fails as a cuBLAS GEMM would: CUBLAS_STATUS_EXECUTION_FAILED,
  /// whatever the op (every op runs as an op_call: GEMMs, memory-bound ops, cuDNN's)
  cublas,
  oom,    ///< allocating the op's operands fails: a real cudaMalloc beyond the GPU's memory
  cupti,  ///< CUPTI fails while it reads the op's counters or traces its kernels
  sigint, ///< the process raises SIGINT as the op starts: Ctrl-C while it is in flight
};

/// The faults ROOFLINE_INJECT_FAULT asks for: `INDEX:KIND[,INDEX:KIND...]`, KIND one of cublas,
/// oom, cupti or sigint (above), INDEX the op's position in the list given to measure() (from 0,
/// every op counted, GEMM or not; each measure() call of the process counts its own list, so a
/// pipeline's padding pairs can be hit too). Only the first round of a run sees them.
class fault_plan {
public:
  /// From the environment; empty when ROOFLINE_INJECT_FAULT is unset or empty. Throws
  /// roofline::error for a value it cannot read.
  static fault_plan from_environment();
  /// From `text` as the variable would hold it (throws roofline::error as above).
  static fault_plan parse(const char *text);

  injected_fault at(std::size_t index) const;

private:
  std::map<std::size_t, injected_fault> m_faults;
};

/// Throws the cuda_error that the real fault throws, through the same checker (cuBLAS:
/// CUBLAS_STATUS_EXECUTION_FAILED; oom: the status of a real cudaMalloc larger than the GPU's
/// memory; CUPTI: CUPTI_ERROR_UNKNOWN), its expression naming the injection. `none` and `sigint`
/// throw nothing.
void raise_injected(injected_fault fault);

} // namespace roofline::cuda::detail
