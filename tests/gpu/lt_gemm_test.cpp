// SPDX-License-Identifier: Apache-2.0
#include "gpu_test_support.hpp"
#include "roofline/cuda/detail/lt_gemm.hpp"

#include <doctest/doctest.h>

#include <cmath>

using namespace roofline;
using namespace roofline::test;

namespace {

/// Row-major C[b][M][N] = Σ_k A[b][M][K] · B[b][N][K], in double.
std::vector<double> reference(const std::vector<double> &a, const std::vector<double> &b,
                              const gemm_shape &s) {
  std::vector<double> c(static_cast<std::size_t>(s.batch_count * s.m * s.n));
  for (std::int64_t batch = 0; batch < s.batch_count; ++batch)
    for (std::int64_t i = 0; i < s.m; ++i)
      for (std::int64_t j = 0; j < s.n; ++j) {
        double sum = 0;
        for (std::int64_t k = 0; k < s.k; ++k)
          sum += a[static_cast<std::size_t>((batch * s.m + i) * s.k + k)] *
                 b[static_cast<std::size_t>((batch * s.n + j) * s.k + k)];
        c[static_cast<std::size_t>((batch * s.m + i) * s.n + j)] = sum;
      }
  return c;
}

/// Tolerances by precision: the output's rounding and the inputs' (fp8 writes bf16).
double tolerance(precision p) {
  switch (p) {
  case precision::fp64: return 1e-12;
  case precision::fp32: return 1e-5;
  case precision::tf32: return 3e-3;
  case precision::fp16: return 2e-3;
  case precision::bf16: return 1e-2;
  case precision::fp8: return 1e-2;
  case precision::int8: return 0; // exact
  case precision::fp4: break;     // not run: no fp4 engine
  }
  return 0;
}

} // namespace

TEST_CASE(
    "cuBLASLt GEMMs match a double-precision reference on random data, batched, every precision") {
  int major = 0, minor = 0;
  ROOFLINE_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
  ROOFLINE_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0));
  const cuda::detail::lt_handle handle;
  device_buffer workspace(cuda::detail::lt_workspace_bytes);
  const gemm_shape shape{96, 80, 144, 3};
  std::uint64_t seed = 100;
  for (precision p : all_precisions) {
    if ((p == precision::fp8 && major * 10 + minor < 89) || p == precision::fp4)
      continue; // fp4 has no engine of ours: its ops are skipped by the measurer
    CAPTURE(to_string(p));
    const cuda::detail::lt_gemm gemm(handle.get(), shape, p, workspace.get(), workspace.bytes());
    const auto types = cuda::detail::types_for(p);
    device_buffer a(gemm.a_elements() * kernels::element_size(types.input));
    device_buffer b(gemm.b_elements() * kernels::element_size(types.input));
    device_buffer c(gemm.c_elements() * kernels::element_size(types.output));
    ROOFLINE_CUDA_CHECK(
        kernels::fill_random(a.get(), gemm.a_elements(), types.input, ++seed, 1.0f, nullptr));
    ROOFLINE_CUDA_CHECK(
        kernels::fill_random(b.get(), gemm.b_elements(), types.input, ++seed, 1.0f, nullptr));
    // Poison the output: every element must be written.
    ROOFLINE_CUDA_CHECK(kernels::fill_constant(c.get(), gemm.c_elements(), types.output,
                                               types.output == element_type::i32 ? -1234567.0 : NAN,
                                               nullptr));
    gemm.run(a.get(), b.get(), c.get(), nullptr);
    ROOFLINE_CUDA_CHECK(cudaDeviceSynchronize());
    const auto ref = reference(to_host(a, gemm.a_elements(), types.input),
                               to_host(b, gemm.b_elements(), types.input), shape);
    const auto out = to_host(c, gemm.c_elements(), types.output);
    const double error = relative_error(out, ref);
    CAPTURE(error);
    CHECK(error <= tolerance(p));
  }
}

TEST_CASE("a transposed operand mix-up would be caught: the check fails on swapped operands") {
  const cuda::detail::lt_handle handle;
  device_buffer workspace(cuda::detail::lt_workspace_bytes);
  const gemm_shape shape{64, 48, 32, 1};
  const cuda::detail::lt_gemm gemm(handle.get(), shape, precision::fp32, workspace.get(),
                                   workspace.bytes());
  device_buffer a(gemm.a_elements() * 4), b(gemm.b_elements() * 4), c(gemm.c_elements() * 4);
  ROOFLINE_CUDA_CHECK(
      kernels::fill_random(a.get(), gemm.a_elements(), element_type::f32, 1, 1.0f, nullptr));
  ROOFLINE_CUDA_CHECK(
      kernels::fill_random(b.get(), gemm.b_elements(), element_type::f32, 2, 1.0f, nullptr));
  gemm.run(a.get(), b.get(), c.get(), nullptr);
  ROOFLINE_CUDA_CHECK(cudaDeviceSynchronize());
  const auto host_a = to_host(a, gemm.a_elements(), element_type::f32);
  const auto host_b = to_host(b, gemm.b_elements(), element_type::f32);
  const auto out = to_host(c, gemm.c_elements(), element_type::f32);
  CHECK(relative_error(out, reference(host_a, host_b, shape)) < 1e-5);
  // Reading B as [K,N] instead of [N,K] gives another function: the reference must notice.
  std::vector<double> b_as_kn(host_b.size());
  for (std::int64_t k = 0; k < shape.k; ++k)
    for (std::int64_t j = 0; j < shape.n; ++j)
      b_as_kn[static_cast<std::size_t>(j * shape.k + k)] =
          host_b[static_cast<std::size_t>(k * shape.n + j)];
  CHECK(relative_error(out, reference(host_a, b_as_kn, shape)) > 0.5);
}
