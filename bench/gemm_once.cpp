// SPDX-License-Identifier: Apache-2.0
// Runs one GEMM shape through the same cuBLASLt plan as `roofline-advise --measure`: `warmup`
// calls, a device synchronisation, then exactly one call inside the NVTX range "measured", which
// ncu selects with --nvtx --nvtx-include "measured/" (bench/ncu_check.sh).
//   gemm_once M N K [precision=fp16] [batch_count=1] [warmup=3]
#include "kernels.hpp"
#include "roofline/cuda/detail/cuda_check.hpp"
#include "roofline/cuda/detail/cuda_owners.hpp"
#include "roofline/cuda/detail/device_buffer.hpp"
#include "roofline/cuda/detail/lt_gemm.hpp"

#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <cstdlib>
#include <string>

int main(int argc, char **argv) {
  using namespace roofline;
  if (argc < 4) {
    std::fprintf(stderr, "usage: gemm_once M N K [precision] [batch_count] [warmup]\n");
    return 2;
  }
  const gemm_shape shape{std::atoll(argv[1]), std::atoll(argv[2]), std::atoll(argv[3]),
                         argc > 5 ? std::atoll(argv[5]) : 1};
  const auto p = parse_precision(argc > 4 ? argv[4] : "fp16");
  const int warmup = argc > 6 ? std::atoi(argv[6]) : 3;
  if (!p || shape.m <= 0 || shape.n <= 0 || shape.k <= 0 || shape.batch_count <= 0) {
    std::fprintf(stderr, "gemm_once: bad arguments\n");
    return 2;
  }
  try {
    const cuda::detail::lt_handle handle;
    cuda::detail::device_buffer workspace(cuda::detail::lt_workspace_bytes);
    const cuda::detail::lt_gemm gemm(handle.get(), shape, *p, workspace.get(), workspace.bytes());
    const auto types = cuda::detail::types_for(*p);
    cuda::detail::device_buffer a(gemm.a_elements() * kernels::element_size(types.input));
    cuda::detail::device_buffer b(gemm.b_elements() * kernels::element_size(types.input));
    cuda::detail::device_buffer c(gemm.c_elements() * kernels::element_size(types.output));
    ROOFLINE_CUDA_CHECK(
        kernels::fill_random(a.get(), gemm.a_elements(), types.input, 1, 1.0f, nullptr));
    ROOFLINE_CUDA_CHECK(
        kernels::fill_random(b.get(), gemm.b_elements(), types.input, 2, 1.0f, nullptr));
    for (int i = 0; i < warmup; ++i)
      gemm.run(a.get(), b.get(), c.get(), nullptr);
    ROOFLINE_CUDA_CHECK(cudaDeviceSynchronize());
    nvtxRangePushA("measured");
    gemm.run(a.get(), b.get(), c.get(), nullptr);
    nvtxRangePop();
    ROOFLINE_CUDA_CHECK(cudaDeviceSynchronize());
  } catch (const std::exception &e) {
    std::fprintf(stderr, "gemm_once: %s\n", e.what());
    return 1;
  }
  return 0;
}
