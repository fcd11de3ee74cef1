// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string_view>

namespace roofline {

/// The kinds of kernel cuBLAS runs for a GEMM, each with its own rate, floor and tiles.
enum class kernel_family {
  tensor,   ///< the GPU's own tensor-core kernels (Hopper: nvjet, xmma sm90): aligned rows
  fallback, ///< older CUTLASS tensor-core kernels: rows breaking the 16-byte rule
  simt,     ///< CUDA-core FMA kernels: fp32
  gemv,     ///< GEMV and gemmSN kernels: decode-like M
};

constexpr std::string_view to_string(kernel_family f) {
  switch (f) {
  case kernel_family::tensor: return "tensor";
  case kernel_family::fallback: return "fallback";
  case kernel_family::simt: return "simt";
  case kernel_family::gemv: return "gemv";
  }
  return "?";
}

} // namespace roofline
