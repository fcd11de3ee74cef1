// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/model/ceilings.hpp"

#include <functional>
#include <string>

namespace roofline::cuda {

struct probe_options {
  /// Called before each measurement with its name (for a progress display).
  std::function<void(const std::string &)> progress;
};

/// Measures the GPU's ceilings: DRAM read/write/copy bandwidth and cudaMemcpy, L2 bandwidth, FP32
/// and FP64 FMA rates, tensor-core rates per precision (cuBLASLt at 8192³ and our mma.sync kernel),
/// the host floor of a cuBLAS call per precision (fp32, tf32, fp16, bf16: a 64³ cuBLASLt GEMM
/// issued eagerly back to back, seconds per call, its method naming the graph-replayed time too),
/// and the launch overhead of an empty kernel. Random data, warm-up, median of timed runs (CUDA
/// events).
/// A measurement that fails is recorded with its failure; the others still run.
measured_ceilings measure_ceilings(int ordinal, const probe_options &options = {});

} // namespace roofline::cuda
