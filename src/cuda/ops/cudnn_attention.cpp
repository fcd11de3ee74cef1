// SPDX-License-Identifier: Apache-2.0
#include "cudnn_attention.hpp"

#include "host_elements.hpp"
#include "kernels.hpp"
#include "roofline/cuda/cuda_error.hpp"
#include "roofline/cuda/detail/cuda_check.hpp"
#include "roofline/cuda/detail/device_buffer.hpp"

#if ROOFLINE_HAVE_CUDNN_HEADER
#include "cudnn_library.hpp"
#endif

#include <array>
#include <cmath>
#include <deque>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace roofline::cuda::detail {

#if !ROOFLINE_HAVE_CUDNN_HEADER

std::unique_ptr<op_call> make_attention_call(const cudnn_handle &, const attention_shape &,
                                             precision, attention_layout, const operand_sets &,
                                             cudaStream_t) {
  throw op_skipped("fused attention runs through cuDNN, and this roofline-advise was built "
                   "without cuDNN's header (cudnn.h)");
}

#else

namespace {

using kernels::element_type;

/// Why `s` is not run here; empty when it is.
std::string not_run(const attention_shape &s, precision p) {
  if (s.backward)
    return "fused attention runs forward (inference) only here, not its backward pass";
  if (s.window > 0)
    return "a sliding window (" + std::to_string(s.window) +
           " keys) is not run here: cuDNN's windowed mask is not built";
  if (s.kv_precision)
    return "a KV cache stored as " + std::string(to_string(*s.kv_precision)) + " beside " +
           std::string(to_string(p)) +
           " queries is not run here: cuDNN's fp8 attention (fp8 Q, K and V with their scales) "
           "is not built";
  if (p != precision::fp16 && p != precision::bf16)
    return "cuDNN's fused attention runs fp16 or bf16 here, not " + std::string(to_string(p));
  if (s.causal && s.kv_len < s.q_len)
    return "a causal mask with fewer keys than queries leaves a query no key";
  if (s.kv_heads <= 0 || s.heads % s.kv_heads != 0)
    return "kv_heads (" + std::to_string(s.kv_heads) + ") does not divide heads (" +
           std::to_string(s.heads) + ")";
  return {};
}

// The attribute type cuDNN is told for each C++ type set here (chosen by overload).
constexpr cudnnBackendAttributeType_t type_of(const cudnnBackendDescriptor_t *) {
  return CUDNN_TYPE_BACKEND_DESCRIPTOR;
}
constexpr cudnnBackendAttributeType_t type_of(const cudnnHandle_t *) {
  return CUDNN_TYPE_HANDLE;
}
constexpr cudnnBackendAttributeType_t type_of(const std::int64_t *) {
  return CUDNN_TYPE_INT64;
}
constexpr cudnnBackendAttributeType_t type_of(const float *) {
  return CUDNN_TYPE_FLOAT;
}
constexpr cudnnBackendAttributeType_t type_of(const bool *) {
  return CUDNN_TYPE_BOOLEAN;
}
constexpr cudnnBackendAttributeType_t type_of(const cudnnDataType_t *) {
  return CUDNN_TYPE_DATA_TYPE;
}
constexpr cudnnBackendAttributeType_t type_of(const cudnnPointwiseMode_t *) {
  return CUDNN_TYPE_POINTWISE_MODE;
}
constexpr cudnnBackendAttributeType_t type_of(const cudnnReduceTensorOp_t *) {
  return CUDNN_TYPE_REDUCTION_OPERATOR_TYPE;
}
constexpr cudnnBackendAttributeType_t type_of(const cudnnBackendHeurMode_t *) {
  return CUDNN_TYPE_HEUR_MODE;
}

template <class T>
cudnnStatus_t set(const backend_descriptor &d, cudnnBackendAttributeName_t name, const T *values,
                  std::int64_t count) {
  return cudnn().backend_set(d.get(), name, type_of(values), count, values);
}
template <class T>
cudnnStatus_t set(const backend_descriptor &d, cudnnBackendAttributeName_t name, T value) {
  return set(d, name, &value, 1);
}
cudnnStatus_t finalize(const backend_descriptor &d) {
  return cudnn().backend_finalize(d.get());
}

using extents = std::array<std::int64_t, 4>;

/// The operation graph of one attention, node by node: it owns every descriptor (cuDNN's plan
/// refers to them for as long as it runs).
class graph_builder {
public:
  enum class storage { memory, on_chip, host_scalar };

  /// A tensor of `type`: in GPU memory (its pointer in the variant pack), virtual (an
  /// intermediate cuDNN keeps on chip), or one host value passed by value.
  cudnnBackendDescriptor_t tensor(std::int64_t uid, cudnnDataType_t type, const extents &dims,
                                  const extents &strides, storage where) {
    const backend_descriptor &t = own(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    ROOFLINE_CUDA_CHECK(set(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, uid));
    ROOFLINE_CUDA_CHECK(set(t, CUDNN_ATTR_TENSOR_DATA_TYPE, type));
    ROOFLINE_CUDA_CHECK(set(t, CUDNN_ATTR_TENSOR_DIMENSIONS, dims.data(), 4));
    ROOFLINE_CUDA_CHECK(set(t, CUDNN_ATTR_TENSOR_STRIDES, strides.data(), 4));
    // 16 bytes: what cudnn-frontend declares by default; our buffers start at 256-byte steps.
    ROOFLINE_CUDA_CHECK(set(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, std::int64_t{16}));
    if (where == storage::on_chip)
      ROOFLINE_CUDA_CHECK(set(t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, true));
    if (where == storage::host_scalar)
      ROOFLINE_CUDA_CHECK(set(t, CUDNN_ATTR_TENSOR_IS_BY_VALUE, true));
    ROOFLINE_CUDA_CHECK(finalize(t));
    return t.get();
  }

  /// A virtual tensor with the next free id.
  cudnnBackendDescriptor_t intermediate(cudnnDataType_t type, const extents &dims,
                                        const extents &strides) {
    return tensor(m_next_uid++, type, dims, strides, storage::on_chip);
  }

  /// c = a·b over the last two dimensions, batched over the first two, accumulated in fp32.
  void matmul(cudnnBackendDescriptor_t a, cudnnBackendDescriptor_t b, cudnnBackendDescriptor_t c) {
    const backend_descriptor &m = own(CUDNN_BACKEND_MATMUL_DESCRIPTOR);
    ROOFLINE_CUDA_CHECK(set(m, CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_DATA_FLOAT));
    ROOFLINE_CUDA_CHECK(finalize(m));
    const backend_descriptor &op = own(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
    ROOFLINE_CUDA_CHECK(set(op, CUDNN_ATTR_OPERATION_MATMUL_ADESC, a));
    ROOFLINE_CUDA_CHECK(set(op, CUDNN_ATTR_OPERATION_MATMUL_BDESC, b));
    ROOFLINE_CUDA_CHECK(set(op, CUDNN_ATTR_OPERATION_MATMUL_CDESC, c));
    ROOFLINE_CUDA_CHECK(set(op, CUDNN_ATTR_OPERATION_MATMUL_DESC, m.get()));
    add_operation(op);
  }

  /// y = mode(x, b) computed in `math` (b: none for unary modes; t: BINARY_SELECT's condition;
  /// axis: GEN_INDEX's dimension).
  void pointwise(cudnnPointwiseMode_t mode, cudnnDataType_t math, cudnnBackendDescriptor_t x,
                 cudnnBackendDescriptor_t b, cudnnBackendDescriptor_t y,
                 cudnnBackendDescriptor_t t = nullptr, std::int64_t axis = -1) {
    const backend_descriptor &p = own(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
    ROOFLINE_CUDA_CHECK(set(p, CUDNN_ATTR_POINTWISE_MODE, mode));
    ROOFLINE_CUDA_CHECK(set(p, CUDNN_ATTR_POINTWISE_MATH_PREC, math));
    if (mode == CUDNN_POINTWISE_GEN_INDEX)
      ROOFLINE_CUDA_CHECK(set(p, CUDNN_ATTR_POINTWISE_AXIS, axis));
    ROOFLINE_CUDA_CHECK(finalize(p));
    const backend_descriptor &op = own(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
    ROOFLINE_CUDA_CHECK(set(op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, p.get()));
    ROOFLINE_CUDA_CHECK(set(op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x));
    if (b)
      ROOFLINE_CUDA_CHECK(set(op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, b));
    if (t)
      ROOFLINE_CUDA_CHECK(set(op, CUDNN_ATTR_OPERATION_POINTWISE_TDESC, t));
    ROOFLINE_CUDA_CHECK(set(op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y));
    ROOFLINE_CUDA_CHECK(set(op, CUDNN_ATTR_OPERATION_POINTWISE_ALPHA1, 1.0f));
    ROOFLINE_CUDA_CHECK(set(op, CUDNN_ATTR_OPERATION_POINTWISE_ALPHA2, 1.0f));
    add_operation(op);
  }

  /// y = x reduced by `reduce` over the dimensions where y's extent is 1, in fp32.
  void reduction(cudnnReduceTensorOp_t reduce, cudnnBackendDescriptor_t x,
                 cudnnBackendDescriptor_t y) {
    const backend_descriptor &r = own(CUDNN_BACKEND_REDUCTION_DESCRIPTOR);
    ROOFLINE_CUDA_CHECK(set(r, CUDNN_ATTR_REDUCTION_OPERATOR, reduce));
    ROOFLINE_CUDA_CHECK(set(r, CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_DATA_FLOAT));
    ROOFLINE_CUDA_CHECK(finalize(r));
    const backend_descriptor &op = own(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR);
    ROOFLINE_CUDA_CHECK(set(op, CUDNN_ATTR_OPERATION_REDUCTION_DESC, r.get()));
    ROOFLINE_CUDA_CHECK(set(op, CUDNN_ATTR_OPERATION_REDUCTION_XDESC, x));
    ROOFLINE_CUDA_CHECK(set(op, CUDNN_ATTR_OPERATION_REDUCTION_YDESC, y));
    add_operation(op);
  }

#if CUDNN_VERSION >= 91301
  /// o = softmax(q·kᵀ·scale)·v as cuDNN's single SDPA forward operation.
  void sdpa_forward(cudnnBackendDescriptor_t q, cudnnBackendDescriptor_t k,
                    cudnnBackendDescriptor_t v, cudnnBackendDescriptor_t o,
                    cudnnBackendDescriptor_t scale) {
    const backend_descriptor &op = own(CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR);
    ROOFLINE_CUDA_CHECK(set(op, CUDNN_ATTR_OPERATION_SDPA_FWD_QDESC, q));
    ROOFLINE_CUDA_CHECK(set(op, CUDNN_ATTR_OPERATION_SDPA_FWD_KDESC, k));
    ROOFLINE_CUDA_CHECK(set(op, CUDNN_ATTR_OPERATION_SDPA_FWD_VDESC, v));
    ROOFLINE_CUDA_CHECK(set(op, CUDNN_ATTR_OPERATION_SDPA_FWD_ODESC, o));
    ROOFLINE_CUDA_CHECK(set(op, CUDNN_ATTR_OPERATION_SDPA_FWD_SCALEDESC, scale));
    add_operation(op);
  }
#endif

  /// The operation graph of every node added, finalized.
  const backend_descriptor &finish(cudnnHandle_t handle) {
    const backend_descriptor &graph = own(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    ROOFLINE_CUDA_CHECK(set(graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, handle));
    ROOFLINE_CUDA_CHECK(set(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, m_operations.data(),
                            static_cast<std::int64_t>(m_operations.size())));
    ROOFLINE_CUDA_CHECK(finalize(graph));
    return graph;
  }

private:
  const backend_descriptor &own(cudnnBackendDescriptorType_t type) {
    m_owned.emplace_back(type);
    return m_owned.back();
  }
  void add_operation(const backend_descriptor &op) {
    ROOFLINE_CUDA_CHECK(finalize(op));
    m_operations.push_back(op.get());
  }

  std::deque<backend_descriptor> m_owned; ///< a deque: own()'s references stay valid
  std::vector<cudnnBackendDescriptor_t> m_operations;
  std::int64_t m_next_uid = 100; ///< virtual tensors' ids, above the real ones
};

// The ids of the tensors the variant pack names.
enum : std::int64_t {
  q_uid = 1,
  k_uid,
  v_uid,
  o_uid,
  scale_uid,
  masked_uid,
  kv_len_uid,
  q_len_uid
};

constexpr int reference_rows = 48;
constexpr std::size_t workspace_limit = std::size_t{256} << 20;

/// Element strides of a [batch, heads, rows, head_dim] tensor in `layout`.
extents strides_of(attention_layout layout, std::int64_t heads, std::int64_t rows,
                   std::int64_t head_dim) {
  if (layout == attention_layout::bshd)
    return {rows * heads * head_dim, head_dim, heads * head_dim, 1};
  return {heads * rows * head_dim, rows * head_dim, head_dim, 1};
}

/// `rows` rows of `head_dim` elements from a device tensor, the first at element `first`, each
/// `pitch` elements after the last, as doubles. Throws cuda_error.
std::vector<double> fetch_rows(const void *base, std::int64_t first, std::int64_t rows,
                               std::int64_t pitch, std::int64_t head_dim, element_type type) {
  const std::size_t size = kernels::element_size(type);
  const std::size_t width = static_cast<std::size_t>(head_dim) * size;
  std::vector<unsigned char> bytes(width * static_cast<std::size_t>(rows));
  ROOFLINE_CUDA_CHECK(cudaMemcpy2D(
      bytes.data(), width, static_cast<const unsigned char *>(base) + first * std::int64_t(size),
      static_cast<std::size_t>(pitch) * size, width, static_cast<std::size_t>(rows),
      cudaMemcpyDeviceToHost));
  std::vector<double> values(bytes.size() / size);
  for (std::size_t i = 0; i < values.size(); ++i)
    values[i] = element_value(bytes.data() + i * size, type);
  return values;
}

class attention_call final : public op_call {
public:
  attention_call(cudnnHandle_t handle, const attention_shape &s, precision p,
                 attention_layout layout, const operand_sets &sets, cudaStream_t stream)
      : m_handle(handle), m_shape(s),
        m_element(p == precision::fp16 ? element_type::f16 : element_type::bf16),
        m_tolerance(p == precision::fp16 ? 5e-3 : 2e-2), // the conv's and GEMMs' bounds
        m_q_strides(strides_of(layout, s.heads, s.q_len, s.head_dim)),
        m_kv_strides(strides_of(layout, s.kv_heads, s.kv_len, s.head_dim)),
        m_scale(static_cast<float>(1 / std::sqrt(static_cast<double>(s.head_dim)))),
        m_kv_len(static_cast<std::int32_t>(s.kv_len)), m_q_len(static_cast<std::int32_t>(s.q_len)) {
    if (s.kv_len > std::numeric_limits<std::int32_t>::max())
      throw op_skipped("a KV length beyond cuDNN's int32 indices");
    build_plan(p == precision::fp16 ? CUDNN_DATA_HALF : CUDNN_DATA_BFLOAT16);

    const std::size_t size = kernels::element_size(m_element);
    m_q_stride = operand_stride(query_elements() * size);
    m_kv_stride = operand_stride(
        static_cast<std::size_t>(s.batch * s.kv_heads * s.kv_len * s.head_dim) * size);
    m_sets = sets(2 * m_q_stride + 2 * m_kv_stride);
    m_q = device_buffer(m_q_stride * m_sets);
    m_k = device_buffer(m_kv_stride * m_sets);
    m_v = device_buffer(m_kv_stride * m_sets);
    m_o = device_buffer(m_q_stride * m_sets);
    ROOFLINE_CUDA_CHECK(
        kernels::fill_random(m_q.get(), m_q.bytes() / size, m_element, 31, 1.0f, stream));
    ROOFLINE_CUDA_CHECK(
        kernels::fill_random(m_k.get(), m_k.bytes() / size, m_element, 32, 1.0f, stream));
    ROOFLINE_CUDA_CHECK(
        kernels::fill_random(m_v.get(), m_v.bytes() / size, m_element, 33, 1.0f, stream));
    // One variant pack per operand set, made here: a call only executes.
    for (std::size_t i = 0; i < m_sets; ++i)
      m_packs.push_back(variant_pack(i));
    // The fills' faults show here, in this op, not in the next op's first call.
    ROOFLINE_CUDA_CHECK(cudaStreamSynchronize(stream));
    m_stream = stream;
  }
  ~attention_call() override {
    // cuDNN's kernels may still read the operands, the workspace and the plan: wait before any
    // of them is freed (a destructor reports nothing).
    if (m_stream)
      cudaStreamSynchronize(m_stream);
  }
  attention_call(const attention_call &) = delete;
  attention_call &operator=(const attention_call &) = delete;

  void run(std::size_t set, cudaStream_t) override {
    ROOFLINE_CUDA_CHECK(cudnn().backend_execute(m_handle, m_plan->get(), m_packs[set].get()));
  }

  double check(cudaStream_t stream) override {
    ROOFLINE_CUDA_CHECK(
        kernels::fill_constant(m_o.get(), query_elements(), m_element, NAN, stream));
    run(0, stream);
    ROOFLINE_CUDA_CHECK(cudaStreamSynchronize(stream));
    const attention_shape &s = m_shape;
    const std::int64_t group = s.heads / s.kv_heads;
    std::mt19937_64 random(12345);
    double difference = 0, norm = 0;
    for (int sample = 0; sample < reference_rows; ++sample) {
      const auto b = static_cast<std::int64_t>(random() % static_cast<std::uint64_t>(s.batch));
      const auto h = static_cast<std::int64_t>(random() % static_cast<std::uint64_t>(s.heads));
      const auto i = static_cast<std::int64_t>(random() % static_cast<std::uint64_t>(s.q_len));
      const std::int64_t g = h / group; // the key/value head its group reads
      const std::int64_t row = b * m_q_strides[0] + h * m_q_strides[1] + i * m_q_strides[2];
      const std::int64_t keys_at = b * m_kv_strides[0] + g * m_kv_strides[1];
      // Causal: the queries are the last q_len positions, so query i meets keys up to
      // kv_len − q_len + i.
      const std::int64_t keys = s.causal ? s.kv_len - s.q_len + i + 1 : s.kv_len;
      const std::vector<double> q =
          fetch_rows(m_q.get(), row, 1, s.head_dim, s.head_dim, m_element);
      const std::vector<double> k =
          fetch_rows(m_k.get(), keys_at, keys, m_kv_strides[2], s.head_dim, m_element);
      const std::vector<double> v =
          fetch_rows(m_v.get(), keys_at, keys, m_kv_strides[2], s.head_dim, m_element);
      const std::vector<double> o =
          fetch_rows(m_o.get(), row, 1, s.head_dim, s.head_dim, m_element);
      const auto d = static_cast<std::size_t>(s.head_dim);
      std::vector<double> score(static_cast<std::size_t>(keys));
      double highest = -INFINITY;
      for (std::size_t j = 0; j < score.size(); ++j) {
        double dot = 0;
        for (std::size_t x = 0; x < d; ++x)
          dot += q[x] * k[j * d + x];
        score[j] = dot / std::sqrt(static_cast<double>(s.head_dim));
        highest = std::max(highest, score[j]);
      }
      double total = 0;
      std::vector<double> expected(d, 0.0);
      for (std::size_t j = 0; j < score.size(); ++j) {
        const double weight = std::exp(score[j] - highest);
        total += weight;
        for (std::size_t x = 0; x < d; ++x)
          expected[x] += weight * v[j * d + x];
      }
      for (std::size_t x = 0; x < d; ++x) {
        if (!std::isfinite(o[x]))
          return INFINITY;
        const double want = expected[x] / total;
        difference += (o[x] - want) * (o[x] - want);
        norm += want * want;
      }
    }
    return norm > 0 ? std::sqrt(difference / norm) : std::sqrt(difference);
  }

  double tolerance() const override { return m_tolerance; }
  std::size_t sets() const override { return m_sets; }

private:
  std::size_t query_elements() const {
    return static_cast<std::size_t>(m_shape.batch * m_shape.heads * m_shape.q_len *
                                    m_shape.head_dim);
  }
  /// Whether a mask is built: a causal one that hides a key from some query (a single query, the
  /// last position, meets every key).
  bool masked() const { return m_shape.causal && m_shape.q_len > 1; }
  /// Whether the mask's diagonal is moved to the bottom right (queries after a KV cache).
  bool shifted() const { return masked() && m_shape.kv_len != m_shape.q_len; }

  /// The graph cudnn-frontend's SDPA node builds for inference, as cuDNN's fused flash-attention
  /// engine recognizes it: S = Q·Kᵀ, S·scale, (causal: keep row + kv_len − q_len ≥ column, else
  /// −∞), softmax as max, subtract, exp, sum, divide (P rounded to the inputs' type), O = P·V.
  const backend_descriptor &composite_graph(graph_builder &g, cudnnDataType_t io) {
    const attention_shape &s = m_shape;
    using storage = graph_builder::storage;
    const extents scalar{1, 1, 1, 1};
    const cudnnBackendDescriptor_t q =
        g.tensor(q_uid, io, {s.batch, s.heads, s.q_len, s.head_dim}, m_q_strides, storage::memory);
    // Kᵀ: K's memory read as [batch, kv_heads, head_dim, kv_len].
    const cudnnBackendDescriptor_t kt = g.tensor(
        k_uid, io, {s.batch, s.kv_heads, s.head_dim, s.kv_len},
        {m_kv_strides[0], m_kv_strides[1], m_kv_strides[3], m_kv_strides[2]}, storage::memory);
    const cudnnBackendDescriptor_t v = g.tensor(
        v_uid, io, {s.batch, s.kv_heads, s.kv_len, s.head_dim}, m_kv_strides, storage::memory);
    const cudnnBackendDescriptor_t o =
        g.tensor(o_uid, io, {s.batch, s.heads, s.q_len, s.head_dim}, m_q_strides, storage::memory);
    const extents scores{s.batch, s.heads, s.q_len, s.kv_len};
    const extents score_strides{s.heads * s.q_len * s.kv_len, s.q_len * s.kv_len, s.kv_len, 1};
    const extents rows{s.batch, s.heads, s.q_len, 1};
    const extents row_strides{s.heads * s.q_len, s.q_len, 1, 1};
    const auto score_tensor = [&](cudnnDataType_t type) {
      return g.intermediate(type, scores, score_strides);
    };

    const cudnnBackendDescriptor_t product = score_tensor(CUDNN_DATA_FLOAT);
    g.matmul(q, kt, product);
    cudnnBackendDescriptor_t logits = score_tensor(CUDNN_DATA_FLOAT);
    g.pointwise(CUDNN_POINTWISE_MUL, CUDNN_DATA_FLOAT, product,
                g.tensor(scale_uid, CUDNN_DATA_FLOAT, scalar, scalar, storage::host_scalar),
                logits);
    if (masked()) {
      cudnnBackendDescriptor_t row = score_tensor(CUDNN_DATA_INT32);
      const cudnnBackendDescriptor_t column = score_tensor(CUDNN_DATA_INT32);
      g.pointwise(CUDNN_POINTWISE_GEN_INDEX, CUDNN_DATA_FLOAT, logits, nullptr, row, nullptr, 2);
      g.pointwise(CUDNN_POINTWISE_GEN_INDEX, CUDNN_DATA_FLOAT, logits, nullptr, column, nullptr, 3);
      if (shifted()) {
        // The bottom-right diagonal: query i is position i + kv_len − q_len, added then
        // subtracted as cudnn-frontend's bottom-right causal mask does.
        const cudnnBackendDescriptor_t past_cache = score_tensor(CUDNN_DATA_INT32);
        g.pointwise(CUDNN_POINTWISE_ADD, CUDNN_DATA_INT32, row,
                    g.tensor(kv_len_uid, CUDNN_DATA_INT32, scalar, scalar, storage::host_scalar),
                    past_cache);
        const cudnnBackendDescriptor_t position = score_tensor(CUDNN_DATA_INT32);
        g.pointwise(CUDNN_POINTWISE_SUB, CUDNN_DATA_INT32, past_cache,
                    g.tensor(q_len_uid, CUDNN_DATA_INT32, scalar, scalar, storage::host_scalar),
                    position);
        row = position;
      }
      const cudnnBackendDescriptor_t keep = score_tensor(CUDNN_DATA_BOOLEAN);
      g.pointwise(CUDNN_POINTWISE_CMP_GE, CUDNN_DATA_BOOLEAN, row, column, keep);
      const cudnnBackendDescriptor_t hidden = score_tensor(CUDNN_DATA_FLOAT);
      g.pointwise(CUDNN_POINTWISE_BINARY_SELECT, CUDNN_DATA_FLOAT, logits,
                  g.tensor(masked_uid, CUDNN_DATA_FLOAT, scalar, scalar, storage::host_scalar),
                  hidden, keep);
      logits = hidden;
    }
    const cudnnBackendDescriptor_t highest = g.intermediate(CUDNN_DATA_FLOAT, rows, row_strides);
    g.reduction(CUDNN_REDUCE_TENSOR_MAX, logits, highest);
    const cudnnBackendDescriptor_t centred = score_tensor(CUDNN_DATA_FLOAT);
    g.pointwise(CUDNN_POINTWISE_SUB, CUDNN_DATA_FLOAT, logits, highest, centred);
    const cudnnBackendDescriptor_t weights = score_tensor(CUDNN_DATA_FLOAT);
    g.pointwise(CUDNN_POINTWISE_EXP, CUDNN_DATA_FLOAT, centred, nullptr, weights);
    const cudnnBackendDescriptor_t total = g.intermediate(CUDNN_DATA_FLOAT, rows, row_strides);
    g.reduction(CUDNN_REDUCE_TENSOR_ADD, weights, total);
    // The softmax statistics max + log(sum), virtual: cudnn-frontend's composite softmax builds
    // them even for inference, and cuDNN's fused engines match the graph with them (without them
    // heuristics offered no engine at all).
    const cudnnBackendDescriptor_t log_total = g.intermediate(CUDNN_DATA_FLOAT, rows, row_strides);
    g.pointwise(CUDNN_POINTWISE_LOG, CUDNN_DATA_FLOAT, total, nullptr, log_total);
    g.pointwise(CUDNN_POINTWISE_ADD, CUDNN_DATA_FLOAT, highest, log_total,
                g.intermediate(CUDNN_DATA_FLOAT, rows, row_strides));
    // P·V's A operand is of the inputs' type (cuDNN's rule for the second matmul).
    const cudnnBackendDescriptor_t probabilities = score_tensor(io);
    g.pointwise(CUDNN_POINTWISE_DIV, CUDNN_DATA_FLOAT, weights, total, probabilities);
    g.matmul(probabilities, v, o);
    return g.finish(m_handle);
  }

  /// The same attention as cuDNN's single SDPA forward operation (cuDNN 9.13.1 and later, what
  /// cudnn-frontend picks first where the mask allows): Q, K and V as they lie in memory (K not
  /// transposed), the scale by value. cuDNN 9.19 takes no mask in it: unmasked attention only.
  const backend_descriptor *unified_graph(graph_builder &g, cudnnDataType_t io) {
#if CUDNN_VERSION >= 91301
    if (masked() || cudnn().get_version() < 91301)
      return nullptr;
    const attention_shape &s = m_shape;
    using storage = graph_builder::storage;
    const extents scalar{1, 1, 1, 1};
    const cudnnBackendDescriptor_t q =
        g.tensor(q_uid, io, {s.batch, s.heads, s.q_len, s.head_dim}, m_q_strides, storage::memory);
    const cudnnBackendDescriptor_t k = g.tensor(
        k_uid, io, {s.batch, s.kv_heads, s.kv_len, s.head_dim}, m_kv_strides, storage::memory);
    const cudnnBackendDescriptor_t v = g.tensor(
        v_uid, io, {s.batch, s.kv_heads, s.kv_len, s.head_dim}, m_kv_strides, storage::memory);
    const cudnnBackendDescriptor_t o =
        g.tensor(o_uid, io, {s.batch, s.heads, s.q_len, s.head_dim}, m_q_strides, storage::memory);
    const cudnnBackendDescriptor_t scale =
        g.tensor(scale_uid, CUDNN_DATA_FLOAT, scalar, scalar, storage::host_scalar);
    g.sdpa_forward(q, k, v, o, scale);
    return &g.finish(m_handle);
#else
    (void)g;
    (void)io;
    return nullptr;
#endif
  }

  /// Heuristics' engine configurations for `graph`, best first, mode by mode (A, then B, then
  /// FALLBACK, as cudnn-frontend may try them): the first whose plan builds within the workspace
  /// we grant becomes m_plan. Returns what each mode said when none does.
  std::string choose_plan(const backend_descriptor &graph) {
    std::string said;
    const auto note = [&](const std::string &what) { said += (said.empty() ? "" : "; ") + what; };
    for (const auto &[mode, name] :
         {std::pair{CUDNN_HEUR_MODE_A, "mode A"}, std::pair{CUDNN_HEUR_MODE_B, "mode B"},
          std::pair{CUDNN_HEUR_MODE_FALLBACK, "fallback"}}) {
      backend_descriptor heuristics(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
      ROOFLINE_CUDA_CHECK(set(heuristics, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph.get()));
      ROOFLINE_CUDA_CHECK(set(heuristics, CUDNN_ATTR_ENGINEHEUR_MODE, mode));
      // A mode that cannot rank this graph says so in its status: kept for the skip note.
      if (const cudnnStatus_t status = finalize(heuristics); status != CUDNN_STATUS_SUCCESS) {
        note(std::string(name) + ": " + cudnn().get_error_string(status));
        continue;
      }
      std::int64_t available = 0;
      if (const cudnnStatus_t status =
              cudnn().backend_get(heuristics.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                  CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &available, nullptr);
          status != CUDNN_STATUS_SUCCESS) {
        note(std::string(name) + ": " + cudnn().get_error_string(status));
        continue;
      }
      std::vector<backend_descriptor> configs;
      std::vector<cudnnBackendDescriptor_t> handles;
      for (std::int64_t i = 0; i < available; ++i) {
        configs.emplace_back(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
        handles.push_back(configs.back().get());
      }
      std::int64_t returned = 0;
      if (available > 0)
        ROOFLINE_CUDA_CHECK(cudnn().backend_get(heuristics.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                                CUDNN_TYPE_BACKEND_DESCRIPTOR, available, &returned,
                                                handles.data()));
      std::string first_failure;
      std::int64_t too_large = 0;
      for (std::int64_t i = 0; i < returned; ++i) {
        auto plan = std::make_unique<backend_descriptor>(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
        ROOFLINE_CUDA_CHECK(set(*plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, m_handle));
        ROOFLINE_CUDA_CHECK(set(*plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                                handles[static_cast<std::size_t>(i)]));
        // An engine that cannot build this plan (its own limits) gives way to the next.
        if (const cudnnStatus_t status = finalize(*plan); status != CUDNN_STATUS_SUCCESS) {
          if (first_failure.empty())
            first_failure = cudnn().get_error_string(status);
          continue;
        }
        std::int64_t workspace = 0, count = 0;
        ROOFLINE_CUDA_CHECK(cudnn().backend_get(plan->get(),
                                                CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                                CUDNN_TYPE_INT64, 1, &count, &workspace));
        if (workspace < 0 || static_cast<std::size_t>(workspace) > workspace_limit) {
          ++too_large;
          continue;
        }
        if (workspace > 0)
          m_workspace = device_buffer(static_cast<std::size_t>(workspace));
        m_plan = std::move(plan);
        m_config = std::make_unique<backend_descriptor>(
            std::move(configs[static_cast<std::size_t>(i)])); // the plan was built from it
        return {};
      }
      note(std::string(name) + ": " + std::to_string(returned) + " tried" +
           (first_failure.empty() ? "" : ", the first failed: " + first_failure) +
           (too_large > 0 ? ", " + std::to_string(too_large) + " over the workspace limit" : ""));
    }
    return said;
  }

  /// The unified SDPA operation where it applies, else (or when no engine builds it) the
  /// composite graph. Throws op_skipped, with what heuristics said of each, when neither builds.
  void build_plan(cudnnDataType_t io) {
    std::string why;
    try {
      if (const backend_descriptor *graph = unified_graph(m_graphs.emplace_back(), io)) {
        why = choose_plan(*graph);
        if (m_plan)
          return;
        why = "as one SDPA operation (" + why + "); ";
      }
    } catch (const cuda_error &e) {
      // This cuDNN may not build the operation at all (its GPU, its version): the graph below
      // still may.
      if (e.library() != "cuDNN")
        throw;
      why = std::string("as one SDPA operation (") + e.what() + "); ";
    }
    why += "as a graph of matmuls, pointwise and reductions (" +
           choose_plan(composite_graph(m_graphs.emplace_back(), io)) + ")";
    if (!m_plan)
      throw op_skipped("cuDNN's heuristics offer no engine that builds this attention " + why);
  }

  /// The pointers of operand set `set` (and the host scalars) for the plan.
  backend_descriptor variant_pack(std::size_t set) {
    std::vector<std::int64_t> uids{q_uid, k_uid, v_uid, o_uid, scale_uid};
    std::vector<void *> pointers{m_q.as<unsigned char>() + set * m_q_stride,
                                 m_k.as<unsigned char>() + set * m_kv_stride,
                                 m_v.as<unsigned char>() + set * m_kv_stride,
                                 m_o.as<unsigned char>() + set * m_q_stride, &m_scale};
    if (masked()) {
      uids.push_back(masked_uid);
      pointers.push_back(&m_masked);
    }
    if (shifted()) {
      uids.insert(uids.end(), {kv_len_uid, q_len_uid});
      pointers.insert(pointers.end(), {&m_kv_len, &m_q_len});
    }
    backend_descriptor pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    const auto count = static_cast<std::int64_t>(uids.size());
    ROOFLINE_CUDA_CHECK(cudnn().backend_set(pack.get(), CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS,
                                            CUDNN_TYPE_INT64, count, uids.data()));
    ROOFLINE_CUDA_CHECK(cudnn().backend_set(pack.get(), CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS,
                                            CUDNN_TYPE_VOID_PTR, count, pointers.data()));
    void *workspace = m_workspace.get();
    ROOFLINE_CUDA_CHECK(cudnn().backend_set(pack.get(), CUDNN_ATTR_VARIANT_PACK_WORKSPACE,
                                            CUDNN_TYPE_VOID_PTR, 1, &workspace));
    ROOFLINE_CUDA_CHECK(finalize(pack));
    return pack;
  }

  cudnnHandle_t m_handle;
  cudaStream_t m_stream = nullptr; ///< set once the operands are filled: waited for at the end
  attention_shape m_shape;
  element_type m_element;
  double m_tolerance;
  extents m_q_strides, m_kv_strides;
  // Host scalars the variant packs point at (read by each execution).
  float m_scale;
  float m_masked = -INFINITY;         ///< a masked score: its exp is 0
  std::int32_t m_kv_len, m_q_len;     ///< the causal diagonal's shift, kv_len − q_len
  std::deque<graph_builder> m_graphs; ///< every graph tried: a plan refers to its own
  std::unique_ptr<backend_descriptor> m_config, m_plan;
  device_buffer m_workspace;
  std::size_t m_q_stride = 0, m_kv_stride = 0, m_sets = 1;
  device_buffer m_q, m_k, m_v, m_o;
  std::vector<backend_descriptor> m_packs;
};

} // namespace

std::unique_ptr<op_call> make_attention_call(const cudnn_handle &handle,
                                             const attention_shape &shape, precision p,
                                             attention_layout layout, const operand_sets &sets,
                                             cudaStream_t stream) {
  if (const std::string why = not_run(shape, p); !why.empty())
    throw op_skipped(why);
  // A skip must leave the stream as it found it: a fault found here fails this op with its CUDA
  // error rather than the next op's first call.
  const auto healthy = [&] {
    ROOFLINE_CUDA_CHECK(cudaStreamSynchronize(stream));
    ROOFLINE_CUDA_CHECK(cudaGetLastError());
  };
  try {
    return std::make_unique<attention_call>(handle.get().handle, shape, p, layout, sets, stream);
  } catch (const op_skipped &) {
    healthy();
    throw;
  } catch (const cuda_error &e) {
    healthy();
    // cuDNN's "not supported" family: this shape (head_dim, alignment, GPU) has no engine here.
    if (e.library() == "cuDNN" && CUDNN_STATUS_CATEGORY(e.status()) == CUDNN_STATUS_NOT_SUPPORTED)
      throw op_skipped(std::string("cuDNN does not run this attention here: ") + e.what());
    throw;
  }
}

#endif

} // namespace roofline::cuda::detail
