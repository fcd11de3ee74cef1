// SPDX-License-Identifier: Apache-2.0
#include "gemm_kernels.hpp"
#include "gpu_test_support.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>

using namespace roofline;
using namespace roofline::test;
using kernels::gemm_engine;

namespace {

struct shape {
  std::int64_t m, n, k, batch_count;
};

/// Row-major C[b][M][N] = Σ_k A[b][M][K] · B[b][N][K], in double.
std::vector<double> reference(const std::vector<double> &a, const std::vector<double> &b,
                              const shape &s) {
  std::vector<double> c(static_cast<std::size_t>(s.batch_count * s.m * s.n));
  for (std::int64_t batch = 0; batch < s.batch_count; ++batch)
    for (std::int64_t i = 0; i < s.m; ++i)
      for (std::int64_t j = 0; j < s.n; ++j) {
        const double *x = &a[static_cast<std::size_t>((batch * s.m + i) * s.k)];
        const double *y = &b[static_cast<std::size_t>((batch * s.n + j) * s.k)];
        double sum = 0;
        for (std::int64_t k = 0; k < s.k; ++k)
          sum += x[k] * y[k];
        c[static_cast<std::size_t>((batch * s.m + i) * s.n + j)] = sum;
      }
  return c;
}

/// The output's rounding and the inputs' (the tensor cores round f32 inputs to tf32).
double tolerance(gemm_engine engine, element_type type) {
  switch (type) {
  case element_type::f64: return 1e-12;
  case element_type::f32: return engine == gemm_engine::tensorcore ? 3e-3 : 1e-5;
  case element_type::f16: return 2e-3;
  case element_type::bf16: return 1e-2;
  default: return 0;
  }
}

const char *name(gemm_engine engine) {
  switch (engine) {
  case gemm_engine::naive: return "naive";
  case gemm_engine::tiled: return "tiled";
  case gemm_engine::tensorcore: return "tensorcore";
  }
  return "?";
}

const char *name(element_type type) {
  switch (type) {
  case element_type::f64: return "f64";
  case element_type::f32: return "f32";
  case element_type::f16: return "f16";
  case element_type::bf16: return "bf16";
  default: return "?";
  }
}

constexpr gemm_engine engines[] = {gemm_engine::naive, gemm_engine::tiled, gemm_engine::tensorcore};
constexpr element_type types[] = {element_type::f64, element_type::f32, element_type::f16,
                                  element_type::bf16};

} // namespace

TEST_CASE("custom GEMMs match a double-precision reference for every engine, type and edge shape") {
  // Odd and non-multiple-of-vector K (1, 65, 100), odd N (1, 33, 129), partial tiles everywhere,
  // batches, and more tile rows than one L2 group (1100 rows: 9 tensor-core tiles).
  const shape shapes[] = {{1, 1, 1, 1},       {17, 33, 65, 1},    {96, 80, 144, 3},
                          {128, 128, 256, 1}, {257, 129, 100, 2}, {1100, 300, 200, 1}};
  std::uint64_t seed = 1000;
  for (const shape &s : shapes)
    for (element_type type : types) {
      const std::size_t a_count = static_cast<std::size_t>(s.batch_count * s.m * s.k);
      const std::size_t b_count = static_cast<std::size_t>(s.batch_count * s.n * s.k);
      const std::size_t c_count = static_cast<std::size_t>(s.batch_count * s.m * s.n);
      const std::size_t size = kernels::element_size(type);
      device_buffer a(a_count * size), b(b_count * size), c(c_count * size);
      ROOFLINE_CUDA_CHECK(kernels::fill_random(a.get(), a_count, type, ++seed, 1.0f, nullptr));
      ROOFLINE_CUDA_CHECK(kernels::fill_random(b.get(), b_count, type, ++seed, 1.0f, nullptr));
      const auto ref = reference(to_host(a, a_count, type), to_host(b, b_count, type), s);
      for (gemm_engine engine : engines) {
        if (!kernels::gemm_engine_supports(engine, type))
          continue;
        const std::string what = std::string(name(engine)) + " " + name(type) +
                                 " M=" + std::to_string(s.m) + " N=" + std::to_string(s.n) +
                                 " K=" + std::to_string(s.k) +
                                 " batch=" + std::to_string(s.batch_count);
        CAPTURE(what);
        // Poison the output: every element must be written.
        ROOFLINE_CUDA_CHECK(kernels::fill_constant(c.get(), c_count, type, NAN, nullptr));
        CHECK(kernels::gemm(engine, type, a.get(), b.get(), c.get(), s.m, s.n, s.k, s.batch_count,
                            nullptr) == cudaSuccess);
        ROOFLINE_CUDA_CHECK(cudaDeviceSynchronize());
        const auto out = to_host(c, c_count, type);
        CHECK(std::all_of(out.begin(), out.end(), [](double v) { return std::isfinite(v); }));
        const double error = relative_error(out, ref);
        CAPTURE(error);
        CHECK(error <= tolerance(engine, type));
      }
    }
}

TEST_CASE("custom GEMMs reject unsupported types and empty sizes") {
  device_buffer a(64), b(64), c(64);
  for (gemm_engine engine : engines) {
    CAPTURE(name(engine));
    CHECK(kernels::gemm(engine, element_type::f32, a.get(), b.get(), c.get(), 0, 1, 1, 1,
                        nullptr) == cudaErrorInvalidValue);
    CHECK(kernels::gemm(engine, element_type::f32, a.get(), b.get(), c.get(), 1, 1, 0, 1,
                        nullptr) == cudaErrorInvalidValue);
    CHECK(kernels::gemm(engine, element_type::f32, a.get(), b.get(), c.get(), 1, 1, 1, 0,
                        nullptr) == cudaErrorInvalidValue);
    CHECK(kernels::gemm(engine, element_type::i8, a.get(), b.get(), c.get(), 1, 1, 1, 1, nullptr) ==
          cudaErrorInvalidValue);
  }
  CHECK_FALSE(kernels::gemm_engine_supports(gemm_engine::tensorcore, element_type::f64));
  CHECK(kernels::gemm(gemm_engine::tensorcore, element_type::f64, a.get(), b.get(), c.get(), 1, 1,
                      1, 1, nullptr) == cudaErrorInvalidValue);
  CHECK(cudaGetLastError() == cudaSuccess); // nothing was launched
}
