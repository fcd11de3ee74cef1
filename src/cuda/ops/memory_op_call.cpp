// SPDX-License-Identifier: Apache-2.0
#include "memory_op_call.hpp"

#include "host_elements.hpp"
#include "memory_ops.hpp"
#include "roofline/cuda/detail/cuda_check.hpp"
#include "roofline/cuda/detail/device_buffer.hpp"
#include "roofline/model/memory_op.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace roofline::cuda::detail {

namespace {

using kernels::element_type;
using kernels::memory_kernel;

// Which kernel runs each memory op kind: a new kind with a kernel is one line here; a kind
// without one is measured as skipped, with the reason.
struct kernel_entry {
  memory_op_kind kind;
  memory_kernel kernel;
};
constexpr kernel_entry kernel_table[] = {
    {memory_op_kind::relu, memory_kernel::relu},
    {memory_op_kind::gelu, memory_kernel::gelu},
    {memory_op_kind::silu, memory_kernel::silu},
    {memory_op_kind::add, memory_kernel::add},
    {memory_op_kind::mul, memory_kernel::mul},
    {memory_op_kind::layernorm, memory_kernel::layernorm},
    {memory_op_kind::rmsnorm, memory_kernel::rmsnorm},
    {memory_op_kind::batchnorm, memory_kernel::batchnorm},
    {memory_op_kind::softmax, memory_kernel::softmax},
    {memory_op_kind::maxpool, memory_kernel::maxpool},
    {memory_op_kind::avgpool, memory_kernel::avgpool},
    {memory_op_kind::rope, memory_kernel::rope},
    {memory_op_kind::kv_append, memory_kernel::kv_append},
    {memory_op_kind::embedding, memory_kernel::embedding},
    {memory_op_kind::copy, memory_kernel::transpose},
};

// The glue's shapes where the op does not carry them: Llama's head width; a cache of 4 positions
// a sequence, the new token written at the last; a vocabulary of Llama's 32000 rows, fewer where
// the table would pass 256 MiB (it is shared by every operand set, so its size barely matters).
constexpr std::int64_t default_head_dim = 128;
constexpr std::int64_t cache_slots = 4;
constexpr std::int64_t vocabulary = 32000;
constexpr std::int64_t table_bytes = std::int64_t{256} << 20;

constexpr int reference_samples = 48;

std::optional<memory_kernel> kernel_for(std::string_view kind) {
  const std::optional<memory_op_kind> parsed = parse_memory_op_kind(kind);
  if (!parsed)
    return std::nullopt;
  for (const kernel_entry &entry : kernel_table)
    if (entry.kind == *parsed)
      return entry.kernel;
  return std::nullopt;
}

bool binary(memory_kernel k) {
  return k == memory_kernel::add || k == memory_kernel::mul;
}
bool by_row(memory_kernel k) {
  return k == memory_kernel::layernorm || k == memory_kernel::rmsnorm ||
         k == memory_kernel::softmax || k == memory_kernel::batchnorm;
}
bool pooling(memory_kernel k) {
  return k == memory_kernel::maxpool || k == memory_kernel::avgpool;
}
/// Whole rows: the row kernels and the glue's.
bool needs_rows(memory_kernel k) {
  return by_row(k) || k == memory_kernel::rope || k == memory_kernel::kv_append ||
         k == memory_kernel::embedding || k == memory_kernel::transpose;
}
bool has_scale(memory_kernel k) {
  return k == memory_kernel::layernorm || k == memory_kernel::rmsnorm ||
         k == memory_kernel::batchnorm;
}

/// The output's rounding (fp32 arithmetic inside every kernel; a row's sums in fp32 too).
double tolerance_of(element_type type) {
  switch (type) {
  case element_type::f32: return 1e-4;
  case element_type::f16: return 5e-3;
  default: return 2e-2; // bf16
  }
}

class memory_op_call final : public op_call {
public:
  memory_op_call(memory_kernel kernel, element_type type, const kernels::memory_kernel_shape &shape,
                 const operand_sets &sets, cudaStream_t stream)
      : m_kernel(kernel), m_type(type), m_shape(shape) {
    const std::size_t size = kernels::element_size(type);
    const auto inputs = static_cast<std::size_t>(kernels::memory_kernel_inputs(kernel, shape));
    const auto outputs = static_cast<std::size_t>(kernels::memory_kernel_outputs(kernel, shape));
    m_x_stride = operand_stride(inputs * size);
    m_y_stride = binary(kernel) ? m_x_stride : 0;
    m_out_stride = operand_stride(outputs * size);
    const bool gather = kernel == memory_kernel::embedding;
    const auto tokens = static_cast<std::size_t>(gather ? shape.elements / shape.row : 0);
    m_ids_stride = operand_stride(tokens * sizeof(std::int32_t));
    // One table for every set: each set's own ids gather other rows of it, and a set's bytes
    // are the rows it reads, its ids and its output.
    m_sets = gather ? sets(m_ids_stride + 2 * m_out_stride)
                    : sets(m_x_stride + m_y_stride + m_out_stride);
    if (gather)
      m_x_stride = 0;
    m_x = device_buffer(gather ? operand_stride(inputs * size) : m_x_stride * m_sets);
    m_out = device_buffer(m_out_stride * m_sets);
    // Uniform in [-1, 1]: never zero everywhere, and within every activation's interesting range.
    ROOFLINE_CUDA_CHECK(
        kernels::fill_random(m_x.get(), m_x.bytes() / size, type, 11, 1.0f, stream));
    if (binary(kernel)) {
      m_y = device_buffer(m_y_stride * m_sets);
      ROOFLINE_CUDA_CHECK(
          kernels::fill_random(m_y.get(), m_y.bytes() / size, type, 12, 1.0f, stream));
    }
    if (gather) {
      // Uniform over the table's rows, from the host: the reference reads them back from here.
      std::mt19937_64 random(15);
      m_host_ids.resize(m_ids_stride / sizeof(std::int32_t) * m_sets);
      for (std::int32_t &id : m_host_ids)
        id = static_cast<std::int32_t>(random() % static_cast<std::uint64_t>(shape.table_rows));
      m_ids = device_buffer(m_host_ids.size() * sizeof(std::int32_t));
      ROOFLINE_CUDA_CHECK(
          cudaMemcpy(m_ids.get(), m_host_ids.data(), m_ids.bytes(), cudaMemcpyHostToDevice));
    }
    if (has_scale(kernel)) {
      // One set of parameters for every operand set: they are `row` long, noise beside the tensors.
      const auto row = static_cast<std::size_t>(shape.row);
      m_scale = device_buffer(row * sizeof(float));
      m_shift = device_buffer(row * sizeof(float));
      ROOFLINE_CUDA_CHECK(
          kernels::fill_random(m_scale.get(), row, element_type::f32, 13, 1.0f, stream));
      ROOFLINE_CUDA_CHECK(
          kernels::fill_random(m_shift.get(), row, element_type::f32, 14, 1.0f, stream));
      ROOFLINE_CUDA_CHECK(cudaStreamSynchronize(stream));
      m_host_scale = fetch_elements(m_scale.get(), 0, row, element_type::f32);
      m_host_shift = fetch_elements(m_shift.get(), 0, row, element_type::f32);
    }
  }

  void run(std::size_t set, cudaStream_t stream) override {
    kernels::memory_kernel_operands operands;
    operands.x = m_x.as<unsigned char>() + set * m_x_stride;
    operands.y = binary(m_kernel) ? m_y.as<unsigned char>() + set * m_y_stride : nullptr;
    operands.scale = m_scale.as<float>();
    operands.shift = m_shift.as<float>();
    operands.ids = m_ids.as<std::int32_t>() + set * (m_ids_stride / sizeof(std::int32_t));
    operands.out = m_out.as<unsigned char>() + set * m_out_stride;
    ROOFLINE_CUDA_CHECK(kernels::memory_op(m_kernel, m_type, m_shape, operands, stream));
  }

  double check(cudaStream_t stream) override {
    ROOFLINE_CUDA_CHECK(kernels::fill_constant(
        m_out.get(), static_cast<std::size_t>(kernels::memory_kernel_outputs(m_kernel, m_shape)),
        m_type, NAN, stream));
    run(0, stream);
    ROOFLINE_CUDA_CHECK(cudaStreamSynchronize(stream));
    std::mt19937_64 random(12345);
    double difference = 0, norm = 0;
    for (int s = 0; s < reference_samples; ++s) {
      const auto i =
          static_cast<std::int64_t>(random() % static_cast<std::uint64_t>(m_shape.elements));
      const auto at =
          static_cast<std::size_t>(kernels::memory_kernel_output_index(m_kernel, m_shape, i));
      const double got = fetch_elements(m_out.get(), at, 1, m_type)[0];
      if (!std::isfinite(got))
        return INFINITY;
      const double expected = reference(i);
      difference += (got - expected) * (got - expected);
      norm += expected * expected;
    }
    return norm > 0 ? std::sqrt(difference / norm) : std::sqrt(difference);
  }

  double tolerance() const override { return tolerance_of(m_type); }
  std::size_t sets() const override { return m_sets; }

private:
  double x_at(std::int64_t i) const {
    return fetch_elements(m_x.get(), static_cast<std::size_t>(i), 1, m_type)[0];
  }

  /// Output `i` of set 0 (kv_append: the one of input `i`), in double, from the inputs the kernel
  /// read.
  double reference(std::int64_t i) const {
    const kernels::memory_kernel_shape &s = m_shape;
    switch (m_kernel) {
    case memory_kernel::rope: {
      const std::int64_t r = i / s.row, j = i % s.head_dim, half = s.head_dim / 2;
      const double angle =
          kernels::rope_angle(r, kernels::rope_inverse_frequency(j % half, s.head_dim));
      // rotate_half(x) = (−second half, first half)
      const double rotated = j < half ? -x_at(i + half) : x_at(i - half);
      return x_at(i) * std::cos(angle) + rotated * std::sin(angle);
    }
    case memory_kernel::kv_append: return x_at(i);
    case memory_kernel::embedding:
      return x_at(m_host_ids[static_cast<std::size_t>(i / s.row)] * s.row + i % s.row);
    case memory_kernel::transpose: return x_at(kernels::transpose_source(s, i));
    default: break;
    }
    if (pooling(m_kernel)) {
      const std::int64_t c = i % s.row, q = i / s.row % s.output_w,
                         p = i / (s.row * s.output_w) % s.output_h,
                         n = i / (s.row * s.output_w * s.output_h);
      double best = -INFINITY, sum = 0;
      int inside = 0;
      for (std::int64_t dy = 0; dy < s.window; ++dy)
        for (std::int64_t dx = 0; dx < s.window; ++dx) {
          const std::int64_t h = p * s.stride - s.padding + dy, w = q * s.stride - s.padding + dx;
          if (h < 0 || h >= s.input_h || w < 0 || w >= s.input_w)
            continue;
          const double v = x_at(((n * s.input_h + h) * s.input_w + w) * s.row + c);
          best = std::max(best, v);
          sum += v;
          ++inside;
        }
      if (inside == 0)
        return 0;
      return m_kernel == memory_kernel::avgpool ? sum / inside : best;
    }
    if (by_row(m_kernel) && m_kernel != memory_kernel::batchnorm) {
      const std::int64_t r = i / s.row, j = i % s.row;
      const std::vector<double> row = fetch_elements(m_x.get(), static_cast<std::size_t>(r * s.row),
                                                     static_cast<std::size_t>(s.row), m_type);
      const auto column = static_cast<std::size_t>(j);
      const double width = static_cast<double>(s.row);
      if (m_kernel == memory_kernel::softmax) {
        const double peak = *std::max_element(row.begin(), row.end());
        double sum = 0;
        for (double v : row)
          sum += std::exp(v - peak);
        return std::exp(row[column] - peak) / sum;
      }
      double mean = 0, squares = 0;
      if (m_kernel == memory_kernel::layernorm) {
        for (double v : row)
          mean += v;
        mean /= width;
      }
      for (double v : row)
        squares += (v - mean) * (v - mean);
      const double normalised = (row[column] - mean) /
                                std::sqrt(squares / width + kernels::norm_epsilon) *
                                m_host_scale[column];
      return m_kernel == memory_kernel::layernorm ? normalised + m_host_shift[column] : normalised;
    }
    const double x = x_at(i);
    switch (m_kernel) {
    case memory_kernel::relu: return std::max(x, 0.0);
    case memory_kernel::gelu:
      return 0.5 * x *
             (1 + std::tanh(kernels::gelu_tanh_scale * (x + kernels::gelu_tanh_cube * x * x * x)));
    case memory_kernel::silu: return x / (1 + std::exp(-x));
    case memory_kernel::add:
    case memory_kernel::mul: {
      const double y = fetch_elements(m_y.get(), static_cast<std::size_t>(i), 1, m_type)[0];
      return m_kernel == memory_kernel::add ? x + y : x * y;
    }
    case memory_kernel::batchnorm: {
      const auto c = static_cast<std::size_t>(i % s.row);
      return x * m_host_scale[c] + m_host_shift[c];
    }
    default: return NAN; // the row kernels and pools are handled above
    }
  }

  memory_kernel m_kernel;
  element_type m_type;
  kernels::memory_kernel_shape m_shape;
  std::size_t m_x_stride = 0, m_y_stride = 0, m_out_stride = 0, m_ids_stride = 0, m_sets = 1;
  device_buffer m_x, m_y, m_out, m_scale, m_shift, m_ids;
  std::vector<double> m_host_scale, m_host_shift;
  std::vector<std::int32_t> m_host_ids; ///< every set's, set 0's first
};

} // namespace

std::unique_ptr<op_call> make_memory_op_call(const op &o, const operand_sets &sets,
                                             cudaStream_t stream) {
  const std::optional<memory_kernel> kernel = kernel_for(o.kind);
  if (!kernel)
    throw op_skipped("no kernel here runs `" + o.kind + "` ops yet");
  if (o.pass != pass::forward)
    throw op_skipped("the " + o.kind + " kernel here runs the forward pass only");
  std::optional<element_type> type;
  switch (o.precision) {
  case precision::fp16: type = element_type::f16; break;
  case precision::bf16: type = element_type::bf16; break;
  case precision::fp32:
  case precision::tf32: type = element_type::f32; break; // tf32 layers keep fp32 activations
  default: break;
  }
  if (!type)
    throw op_skipped("memory-bound ops run here on fp16, bf16 or fp32 tensors, not " +
                     std::string(to_string(o.precision)));
  kernels::memory_kernel_shape shape;
  shape.elements = o.elements;
  shape.row = o.row;
  if (pooling(*kernel)) {
    if (!o.pool)
      throw op_skipped("its pooling window and input map are not known");
    shape.row = o.pool->channels;
    shape.batch = o.pool->batch;
    shape.input_h = o.pool->input_h;
    shape.input_w = o.pool->input_w;
    shape.output_h = o.pool->output_h;
    shape.output_w = o.pool->output_w;
    shape.window = o.pool->kernel;
    shape.stride = o.pool->stride;
    shape.padding = o.pool->padding;
  } else if (*kernel == memory_kernel::rope && (o.row <= 0 || o.elements % o.row != 0)) {
    shape.row = default_head_dim; // queries and keys of unknown width: Llama's heads
  }
  if (!pooling(*kernel) && needs_rows(*kernel) && (shape.row <= 0 || o.elements % shape.row != 0))
    throw op_skipped("its row width is not known (" + std::to_string(shape.row) + " for " +
                     std::to_string(o.elements) + " elements)");
  if (*kernel == memory_kernel::rope) {
    shape.head_dim = shape.row % default_head_dim == 0 ? default_head_dim : shape.row;
    if (shape.head_dim % 2 != 0)
      throw op_skipped("an odd row (" + std::to_string(shape.row) + ") has no pairs to rotate");
  } else if (*kernel == memory_kernel::transpose) {
    // Attention's heads: 128 or 64 wide where the row holds them, else one head (a plain copy).
    shape.head_dim = shape.row;
    for (const std::int64_t width : {default_head_dim, std::int64_t{64}})
      if (shape.row % width == 0) {
        shape.head_dim = width;
        break;
      }
  } else if (*kernel == memory_kernel::kv_append) {
    shape.cache_slots = cache_slots;
    shape.cache_position = cache_slots - 1;
  } else if (*kernel == memory_kernel::embedding) {
    const auto row_bytes = shape.row * static_cast<std::int64_t>(kernels::element_size(*type));
    shape.table_rows = std::clamp<std::int64_t>(table_bytes / row_bytes, 1, vocabulary);
  }
  if (o.elements <= 0)
    throw op_skipped("it has no elements");
  return std::make_unique<memory_op_call>(*kernel, *type, shape, sets, stream);
}

} // namespace roofline::cuda::detail
