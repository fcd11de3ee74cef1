// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/model/precision.hpp"

#include <array>
#include <string>

namespace roofline {

struct measured_ceilings;

/// The host's cost of issuing GPU work eagerly, a property of one machine (its CPU, driver and
/// cuBLAS), never of a datasheet: back-to-back eager calls take max(device time, host floor).
struct host_floor {
  /// One cuBLAS GEMM call of one kernel, per precision (index: the precision), in seconds.
  std::array<double, all_precisions.size()> gemm_call_s{};
  /// One call cuBLAS runs on its CUTLASS fallback kernels (rows breaking the 16-byte rule): a
  /// host path of its own (lighter for fp16/bf16, heavier for tf32), per precision, in seconds.
  std::array<double, all_precisions.size()> fallback_call_s{};
  /// One plain kernel launch: a memory-bound op, or a call's every further kernel (split-K's
  /// reduction), in seconds.
  double kernel_launch_s = 0;
  /// PyTorch eager's host time per aten op it dispatches, views included (the Python module
  /// code around it, the dispatcher, autograd's bookkeeping): a captured program's floor.
  double framework_op_s = 0;
  bool measured = false; ///< false: typical_host_floor(), not this machine's
  std::string origin;    ///< "measured on this machine, 2026-11-22" or "typical ..."

  /// The floor of one GEMM call that launches `launches` kernels (on the fallback kernels when
  /// `fallback`).
  double gemm(precision p, int launches = 1, bool fallback = false) const;
};

/// A documented typical floor, for machines that have not measured theirs (docs/json-schema.md
/// gives where its numbers come from).
host_floor typical_host_floor();

/// The floor `roofline-advise device --measure` measured: each precision's cuBLAS calls where they
/// were measured (fp16's for precisions that were not), typical_host_floor()'s elsewhere. Marked
/// measured when its GEMM calls were.
host_floor measured_host_floor(const measured_ceilings &ceilings);

/// This machine's floor without touching a GPU: the newest one `device --measure` cached (of any
/// of its GPUs), else typical_host_floor(). Cache files that cannot be used (damaged, out of
/// range, not regular files, in a directory that is not this user's own: read_cache_file) are
/// skipped, and its origin names them.
host_floor cached_host_floor();

} // namespace roofline
