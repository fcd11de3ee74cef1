// SPDX-License-Identifier: Apache-2.0
#include "cudnn_conv.hpp"

#include "host_elements.hpp"
#include "kernels.hpp"
#include "roofline/cuda/cuda_error.hpp"
#include "roofline/cuda/detail/cuda_check.hpp"
#include "roofline/cuda/detail/device_buffer.hpp"

#if ROOFLINE_HAVE_CUDNN_HEADER
#include "cudnn_library.hpp"
#endif

#include <fmt/format.h>

#include <cmath>
#include <optional>
#include <random>
#include <stdexcept>
#include <vector>

namespace roofline::cuda::detail {

#if !ROOFLINE_HAVE_CUDNN_HEADER

// Built where CMake found no cudnn.h: convolutions run as their implicit GEMMs, and say why.
std::unique_ptr<op_call> make_conv_call(const cudnn_handle &, const conv_shape &, precision,
                                        const operand_sets &, cudaStream_t) {
  throw op_skipped("this roofline-advise was built without cuDNN's header (cudnn.h)");
}

#else

namespace {

using kernels::element_type;

/// What cuDNN's descriptors take: every extent of a tensor fits an int, or it is not run.
int extent(std::int64_t value) {
  if (value <= 0 || value > (std::int64_t{1} << 31) - 1)
    throw op_skipped("an extent of " + std::to_string(value) + " is beyond cuDNN's int sizes");
  return static_cast<int>(value);
}

struct conv_types {
  cudnnDataType_t data;
  element_type element;
  cudnnMathType_t math;
  double tolerance; ///< sampled outputs against the double reference, as the GEMMs'
};

std::optional<conv_types> types_of(precision p) {
  switch (p) {
  case precision::fp16:
    return conv_types{CUDNN_DATA_HALF, element_type::f16, CUDNN_TENSOR_OP_MATH, 5e-3};
  case precision::bf16:
    return conv_types{CUDNN_DATA_BFLOAT16, element_type::bf16, CUDNN_TENSOR_OP_MATH, 2e-2};
  // fp32 storage both: TF32 tensor cores where allowed (the default math), plain FMAs where not.
  case precision::tf32:
    return conv_types{CUDNN_DATA_FLOAT, element_type::f32, CUDNN_DEFAULT_MATH, 5e-3};
  case precision::fp32:
    return conv_types{CUDNN_DATA_FLOAT, element_type::f32, CUDNN_FMA_MATH, 1e-4};
  default: return std::nullopt;
  }
}

constexpr int reference_samples = 48;
constexpr std::size_t workspace_limit = std::size_t{256} << 20;

class conv_call final : public op_call {
public:
  conv_call(cudnnHandle_t handle, const conv_shape &s, const conv_types &types,
            const operand_sets &sets, cudaStream_t stream)
      : m_handle(handle), m_shape(s), m_types(types) {
    const cudnn_api &api = cudnn();
    ROOFLINE_CUDA_CHECK(api.set_tensor_4d(m_input.get(), CUDNN_TENSOR_NHWC, types.data,
                                          extent(s.batch), extent(s.in_channels), extent(s.input_h),
                                          extent(s.input_w)));
    // A grouped convolution's filters each see their group's channels.
    ROOFLINE_CUDA_CHECK(api.set_filter_4d(m_filter.get(), types.data, CUDNN_TENSOR_NHWC,
                                          extent(s.out_channels), extent(group_channels()),
                                          extent(s.kernel_h), extent(s.kernel_w)));
    ROOFLINE_CUDA_CHECK(api.set_convolution_2d(
        m_convolution.get(), static_cast<int>(s.padding_h), static_cast<int>(s.padding_w),
        extent(s.stride_h), extent(s.stride_w), 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    ROOFLINE_CUDA_CHECK(api.set_math_type(m_convolution.get(), types.math));
    ROOFLINE_CUDA_CHECK(api.set_group_count(m_convolution.get(), extent(s.groups)));
    int n = 0, k = 0;
    ROOFLINE_CUDA_CHECK(api.output_dim(m_convolution.get(), m_input.get(), m_filter.get(), &n, &k,
                                       &m_output_h, &m_output_w));
    // One fact: the output the lowering sized (and the model costed) is the one cuDNN writes.
    if (n != s.batch || k != s.out_channels || m_output_h != s.out_h || m_output_w != s.out_w)
      throw std::logic_error(
          fmt::format("cuDNN's output {}×{}×{}×{} is not the convolution's {}×{}×{}×{}", n, k,
                      m_output_h, m_output_w, s.batch, s.out_channels, s.out_h, s.out_w));
    ROOFLINE_CUDA_CHECK(api.set_tensor_4d(m_output.get(), CUDNN_TENSOR_NHWC, types.data, n, k,
                                          m_output_h, m_output_w));

    // The heuristics' ranking, best first (what PyTorch runs unless told to benchmark): the first
    // that cuDNN supports for these descriptors within a workspace we grant.
    int returned = 0;
    cudnnConvolutionFwdAlgoPerf_t ranked[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    ROOFLINE_CUDA_CHECK(api.forward_algorithms(
        handle, m_input.get(), m_filter.get(), m_convolution.get(), m_output.get(),
        CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned, ranked));
    bool chosen = false;
    for (int i = 0; i < returned && !chosen; ++i)
      if (ranked[i].status == CUDNN_STATUS_SUCCESS && ranked[i].memory <= workspace_limit) {
        m_algorithm = ranked[i].algo;
        chosen = true;
      }
    if (!chosen)
      throw op_skipped("cuDNN's heuristics offer no forward algorithm for this convolution");
    ROOFLINE_CUDA_CHECK(api.forward_workspace(handle, m_input.get(), m_filter.get(),
                                              m_convolution.get(), m_output.get(), m_algorithm,
                                              &m_workspace_bytes));
    if (m_workspace_bytes > 0)
      m_workspace = device_buffer(m_workspace_bytes);

    const std::size_t size = kernels::element_size(types.element);
    m_input_stride = operand_stride(count(s.batch, s.input_h, s.input_w, s.in_channels) * size);
    m_filter_stride =
        operand_stride(count(s.out_channels, s.kernel_h, s.kernel_w, group_channels()) * size);
    m_output_stride = operand_stride(outputs() * size);
    m_sets = sets(m_input_stride + m_filter_stride + m_output_stride);
    m_x = device_buffer(m_input_stride * m_sets);
    m_w = device_buffer(m_filter_stride * m_sets);
    m_y = device_buffer(m_output_stride * m_sets);
    ROOFLINE_CUDA_CHECK(
        kernels::fill_random(m_x.get(), m_x.bytes() / size, types.element, 21, 1.0f, stream));
    ROOFLINE_CUDA_CHECK(
        kernels::fill_random(m_w.get(), m_w.bytes() / size, types.element, 22, 1.0f, stream));
  }

  void run(std::size_t set, cudaStream_t) override {
    // alpha and beta are floats for every data type here (cuDNN's rule for half, bf16, float).
    const float alpha = 1, beta = 0;
    ROOFLINE_CUDA_CHECK(cudnn().forward(
        m_handle, &alpha, m_input.get(), m_x.as<unsigned char>() + set * m_input_stride,
        m_filter.get(), m_w.as<unsigned char>() + set * m_filter_stride, m_convolution.get(),
        m_algorithm, m_workspace.get(), m_workspace_bytes, &beta, m_output.get(),
        m_y.as<unsigned char>() + set * m_output_stride));
  }

  double check(cudaStream_t stream) override {
    ROOFLINE_CUDA_CHECK(kernels::fill_constant(m_y.get(), outputs(), m_types.element, NAN, stream));
    run(0, stream);
    ROOFLINE_CUDA_CHECK(cudaStreamSynchronize(stream));
    const conv_shape &s = m_shape;
    const auto c = static_cast<std::size_t>(group_channels());
    const auto c_all = static_cast<std::size_t>(s.in_channels);
    const auto k_group = static_cast<std::size_t>(s.out_channels / s.groups);
    std::mt19937_64 random(12345);
    double difference = 0, norm = 0;
    for (int sample = 0; sample < reference_samples; ++sample) {
      const std::size_t i = random() % outputs();
      const std::size_t k = i % static_cast<std::size_t>(s.out_channels);
      const std::size_t position = i / static_cast<std::size_t>(s.out_channels);
      const auto q = static_cast<std::int64_t>(position % static_cast<std::size_t>(m_output_w));
      const auto p = static_cast<std::int64_t>(position / static_cast<std::size_t>(m_output_w) %
                                               static_cast<std::size_t>(m_output_h));
      const auto n =
          static_cast<std::int64_t>(position / static_cast<std::size_t>(m_output_w * m_output_h));
      // Filter k is R·S·C contiguous (KRSC); input pixel (n, h, w) is C contiguous (NHWC).
      const std::size_t filter_size = static_cast<std::size_t>(s.kernel_h * s.kernel_w) * c;
      const std::vector<double> filter =
          fetch_elements(m_w.get(), k * filter_size, filter_size, m_types.element);
      double expected = 0;
      for (std::int64_t r = 0; r < s.kernel_h; ++r)
        for (std::int64_t t = 0; t < s.kernel_w; ++t) {
          const std::int64_t h = p * s.stride_h - s.padding_h + r;
          const std::int64_t w = q * s.stride_w - s.padding_w + t;
          if (h < 0 || h >= s.input_h || w < 0 || w >= s.input_w)
            continue;
          // Output channel k reads its group's slice of the pixel's channels.
          const std::vector<double> pixel =
              fetch_elements(m_x.get(),
                             static_cast<std::size_t>((n * s.input_h + h) * s.input_w + w) * c_all +
                                 k / k_group * c,
                             c, m_types.element);
          const std::size_t base = static_cast<std::size_t>(r * s.kernel_w + t) * c;
          for (std::size_t j = 0; j < c; ++j)
            expected += pixel[j] * filter[base + j];
        }
      const double got = fetch_elements(m_y.get(), i, 1, m_types.element)[0];
      if (!std::isfinite(got))
        return INFINITY;
      difference += (got - expected) * (got - expected);
      norm += expected * expected;
    }
    return norm > 0 ? std::sqrt(difference / norm) : std::sqrt(difference);
  }

  double tolerance() const override { return m_types.tolerance; }
  std::size_t sets() const override { return m_sets; }

private:
  std::int64_t group_channels() const { return m_shape.in_channels / m_shape.groups; }
  static std::size_t count(std::int64_t a, std::int64_t b, std::int64_t c, std::int64_t d) {
    return static_cast<std::size_t>(a) * static_cast<std::size_t>(b) * static_cast<std::size_t>(c) *
           static_cast<std::size_t>(d);
  }
  std::size_t outputs() const {
    return count(m_shape.batch, m_output_h, m_output_w, m_shape.out_channels);
  }

  cudnnHandle_t m_handle;
  conv_shape m_shape;
  conv_types m_types;
  tensor_descriptor m_input, m_output;
  filter_descriptor m_filter;
  convolution_descriptor m_convolution;
  int m_output_h = 0, m_output_w = 0;
  cudnnConvolutionFwdAlgo_t m_algorithm{};
  std::size_t m_workspace_bytes = 0;
  device_buffer m_workspace;
  std::size_t m_input_stride = 0, m_filter_stride = 0, m_output_stride = 0, m_sets = 1;
  device_buffer m_x, m_w, m_y;
};

} // namespace

std::unique_ptr<op_call> make_conv_call(const cudnn_handle &handle, const conv_shape &shape,
                                        precision p, const operand_sets &sets,
                                        cudaStream_t stream) {
  const std::optional<conv_types> types = types_of(p);
  if (!types)
    throw op_skipped("cuDNN convolutions run here in fp16, bf16, tf32 or fp32, not " +
                     std::string(to_string(p)));
  return std::make_unique<conv_call>(handle.get().handle, shape, *types, sets, stream);
}

#endif

} // namespace roofline::cuda::detail
