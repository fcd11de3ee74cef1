// SPDX-License-Identifier: Apache-2.0
#include "gemm_call.hpp"

#include "gemm_kernels.hpp"
#include "host_elements.hpp"
#include "kernels.hpp"
#include "roofline/cuda/detail/cuda_check.hpp"
#include "roofline/cuda/detail/cuda_owners.hpp"
#include "roofline/cuda/detail/device_buffer.hpp"
#include "roofline/cuda/detail/lt_gemm.hpp"

#include <array>
#include <cmath>
#include <optional>
#include <random>
#include <string>

namespace roofline::cuda::detail {

namespace {

using kernels::element_type;

constexpr int reference_samples = 48;

/// The largest acceptable ‖out − ref‖/‖ref‖ on sampled outputs: the output format's rounding plus
/// the accumulation over K in fp32 (or the reduced-precision inputs of tf32).
double tolerance_of(precision p) {
  switch (p) {
  case precision::fp64: return 1e-10;
  case precision::fp32: return 1e-4;
  case precision::tf32: return 5e-3;
  case precision::fp16: return 5e-3;
  case precision::bf16: return 2e-2;
  case precision::fp8: return 2e-2;
  case precision::int8: return 0;
  case precision::fp4: break; // never run: the measurer skips fp4 ops
  }
  return 0;
}

/// One row of a device matrix, as doubles.
std::vector<double> fetch_row(const void *base, std::size_t row, std::int64_t length,
                              element_type type) {
  const auto count = static_cast<std::size_t>(length);
  return fetch_elements(base, row * count, count, type);
}

/// ‖out − ref‖/‖ref‖ over randomly sampled outputs of C = A·Bᵀ, reference in double.
double sampled_error(const gemm_shape &s, element_type input, element_type output, const void *a,
                     const void *b, const void *c) {
  std::mt19937_64 random(12345);
  double difference = 0, norm = 0;
  for (int i = 0; i < reference_samples; ++i) {
    const auto batch =
        static_cast<std::size_t>(random() % static_cast<std::uint64_t>(s.batch_count));
    const auto row = static_cast<std::size_t>(random() % static_cast<std::uint64_t>(s.m));
    const auto column = static_cast<std::size_t>(random() % static_cast<std::uint64_t>(s.n));
    const auto x = fetch_row(a, batch * s.m + row, s.k, input);
    const auto y = fetch_row(b, batch * s.n + column, s.k, input);
    double expected = 0;
    for (std::size_t k = 0; k < x.size(); ++k)
      expected += x[k] * y[k];
    const double got = fetch_row(c, (batch * s.m + row) * s.n + column, 1, output)[0];
    if (!std::isfinite(got))
      return INFINITY;
    difference += (got - expected) * (got - expected);
    norm += expected * expected;
  }
  return norm > 0 ? std::sqrt(difference / norm) : std::sqrt(difference);
}

kernels::gemm_engine kernel_engine(gemm_engine e) {
  switch (e) {
  case gemm_engine::naive: return kernels::gemm_engine::naive;
  case gemm_engine::tiled: return kernels::gemm_engine::tiled;
  default: return kernels::gemm_engine::tensorcore;
  }
}

/// A whole operand's sets in one allocation, each at its operand_stride: cold L2 rotates through
/// hundreds of small sets, which allocated and filled one by one cost seconds an op.
class operand_pool {
public:
  operand_pool(std::size_t set_bytes, std::size_t sets)
      : m_stride(operand_stride(set_bytes)), m_memory(m_stride * sets) {}
  void *set(std::size_t i) const {
    return static_cast<void *>(m_memory.as<unsigned char>() + m_stride * i);
  }
  const device_buffer &memory() const { return m_memory; }

private:
  std::size_t m_stride;
  device_buffer m_memory;
};

class gemm_call final : public op_call {
public:
  gemm_call(const gemm_shape &s, precision p, const gemm_runner &runner,
            const std::array<std::size_t, 3> &set_bytes, std::size_t sets, cudaStream_t stream)
      : m_shape(s), m_precision(p), m_types(types_for(p)), m_runner(runner), m_sets(sets),
        m_a(set_bytes[0], sets), m_b(set_bytes[1], sets), m_c(set_bytes[2], sets) {
    if (runner.engine == gemm_engine::cublas) {
      m_lt.emplace(runner.lt, s, p, runner.workspace, lt_workspace_bytes);
    } else if (!kernels::gemm_engine_supports(kernel_engine(runner.engine), m_types.input)) {
      throw roofline::error("the " + std::string(to_string(runner.engine)) +
                            " engine does not run " + std::string(to_string(p)));
    }
    const std::size_t input_size = kernels::element_size(m_types.input);
    ROOFLINE_CUDA_CHECK(kernels::fill_random(m_a.set(0), m_a.memory().bytes() / input_size,
                                             m_types.input, 1, 1.0f, stream));
    ROOFLINE_CUDA_CHECK(kernels::fill_random(m_b.set(0), m_b.memory().bytes() / input_size,
                                             m_types.input, 2, 1.0f, stream));
    m_c_elements = set_bytes[2] / kernels::element_size(m_types.output);
  }

  void run(std::size_t set, cudaStream_t stream) override {
    if (m_lt) {
      m_lt->run(m_a.set(set), m_b.set(set), m_c.set(set), stream);
      return;
    }
    ROOFLINE_CUDA_CHECK(kernels::gemm(kernel_engine(m_runner.engine), m_types.input, m_a.set(set),
                                      m_b.set(set), m_c.set(set), m_shape.m, m_shape.n, m_shape.k,
                                      m_shape.batch_count, stream));
  }

  double check(cudaStream_t stream) override {
    ROOFLINE_CUDA_CHECK(
        kernels::fill_constant(m_c.set(0), m_c_elements, m_types.output,
                               m_types.output == element_type::i32 ? -7777777.0 : NAN, stream));
    run(0, stream);
    ROOFLINE_CUDA_CHECK(cudaStreamSynchronize(stream));
    return sampled_error(m_shape, m_types.input, m_types.output, m_a.set(0), m_b.set(0),
                         m_c.set(0));
  }

  double tolerance() const override { return tolerance_of(m_precision); }
  std::size_t sets() const override { return m_sets; }

private:
  gemm_shape m_shape;
  precision m_precision;
  gemm_types m_types;
  gemm_runner m_runner;
  std::size_t m_sets;
  operand_pool m_a, m_b, m_c;
  std::size_t m_c_elements = 0;
  std::optional<lt_gemm> m_lt;
};

} // namespace

std::unique_ptr<op_call> make_gemm_call(const gemm_shape &shape, precision p,
                                        const gemm_runner &runner, const operand_sets &sets,
                                        cudaStream_t stream) {
  const gemm_types types = types_for(p);
  const auto elements = [](std::int64_t x, std::int64_t y, std::int64_t z) {
    return static_cast<std::size_t>(x) * static_cast<std::size_t>(y) * static_cast<std::size_t>(z);
  };
  const std::array<std::size_t, 3> bytes = {
      elements(shape.m, shape.k, shape.batch_count) * kernels::element_size(types.input),
      elements(shape.n, shape.k, shape.batch_count) * kernels::element_size(types.input),
      elements(shape.m, shape.n, shape.batch_count) * kernels::element_size(types.output)};
  const std::size_t count = sets(bytes[0] + bytes[1] + bytes[2]);
  return std::make_unique<gemm_call>(shape, p, runner, bytes, count, stream);
}

} // namespace roofline::cuda::detail
