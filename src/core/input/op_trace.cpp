// SPDX-License-Identifier: Apache-2.0
#include "roofline/input/op_trace.hpp"

#include "roofline/common/error.hpp"
#include "roofline/model/conv_shape.hpp"
#include "roofline/model/gemm.hpp"
#include "roofline/model/memory_op.hpp"

#include "checked_math.hpp"
#include "json_reader.hpp"
#include "yaml_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>

namespace roofline {

namespace {

using detail::yaml_map;
using detail::yaml_node;

/// A dtype's element size in bytes and the precision the tool prices it at (PyTorch's names);
/// integers and booleans are priced by their bytes on the CUDA cores, as fp32.
struct dtype_info {
  int bytes;
  precision prec;
};

std::optional<dtype_info> dtype_of(std::string_view name) {
  static const std::map<std::string_view, dtype_info> known{
      {"float32", {4, precision::fp32}},        {"float", {4, precision::fp32}},
      {"float16", {2, precision::fp16}},        {"half", {2, precision::fp16}},
      {"bfloat16", {2, precision::bf16}},       {"float64", {8, precision::fp64}},
      {"double", {8, precision::fp64}},         {"float8_e4m3fn", {1, precision::fp8}},
      {"float8_e5m2", {1, precision::fp8}},     {"float8_e4m3fnuz", {1, precision::fp8}},
      {"float8_e5m2fnuz", {1, precision::fp8}}, {"int8", {1, precision::int8}},
      {"uint8", {1, precision::fp32}},          {"bool", {1, precision::fp32}},
      {"int16", {2, precision::fp32}},          {"int32", {4, precision::fp32}},
      {"int64", {8, precision::fp32}},          {"complex64", {8, precision::fp32}},
      {"complex128", {16, precision::fp64}},
  };
  const auto found = known.find(name);
  return found == known.end() ? std::nullopt : std::optional(found->second);
}

/// One tensor argument or result.
struct tensor {
  std::int64_t storage = -1;
  std::vector<std::int64_t> shape, stride;
  dtype_info dtype{4, precision::fp32};

  std::int64_t elements() const {
    std::int64_t n = 1;
    for (const std::int64_t d : shape)
      n = detail::checked_product({n, d}).value_or(0);
    return n;
  }
  /// The elements it holds in memory: a broadcast dimension (stride 0) once.
  std::int64_t stored_elements() const {
    std::int64_t n = 1;
    for (std::size_t i = 0; i < shape.size(); ++i)
      if (i >= stride.size() || stride[i] != 0)
        n = detail::checked_product({n, shape[i]}).value_or(0);
    return n;
  }
  std::int64_t bytes() const { return stored_elements() * dtype.bytes; }
  std::int64_t dim(std::size_t i) const { return i < shape.size() ? shape[i] : 0; }
  std::int64_t last() const { return shape.empty() ? 1 : shape.back(); }
};

/// Reads the located JSON of one trace; every failure is an input_error at the node.
class trace_reader {
public:
  trace_reader(std::string file) : m_file(std::move(file)) {}

  [[noreturn]] void fail(const yaml_node &at, const std::string &expected) const {
    throw input_error(detail::location_of(at, m_file),
                      "op trace: expected " + expected + "; got " + detail::describe(at));
  }

  std::int64_t integer(const yaml_node &node, const std::string &what) const {
    const std::optional<double> value = detail::finite_number(node);
    // In range before the cast (a double past int64's range converts to nothing defined).
    if (!value || !(*value >= -9.2e18 && *value <= 9.2e18) || *value != std::floor(*value))
      fail(node, what + " (an integer)");
    return static_cast<std::int64_t>(*value);
  }

  std::vector<std::int64_t> integers(const yaml_node &node, const std::string &what) const {
    if (!node.is_sequence())
      fail(node, what + " (a list of integers)");
    std::vector<std::int64_t> values;
    values.reserve(node.size());
    for (std::size_t i = 0; i < node.size(); ++i)
      values.push_back(integer(node[i], what));
    return values;
  }

  /// A tensor: an object with `shape` and `dtype`.
  static bool is_tensor(const yaml_node &node) {
    if (!node.is_map())
      return false;
    for (std::size_t i = 0; i < node.size(); ++i)
      if (node.key(i).scalar() == "shape")
        return true;
    return false;
  }

  tensor read_tensor(const yaml_node &node) const {
    const yaml_map map(node, m_file, "tensor", yaml_map::any_keys{});
    tensor t;
    t.storage = map.has("storage") ? integer(map.required("storage"), "`storage`") : -1;
    t.shape = integers(map.required("shape"), "`shape`");
    for (const std::int64_t d : t.shape)
      if (d < 0)
        map.fail("shape", "a tensor's sizes are not negative");
    if (map.has("stride"))
      t.stride = integers(map.required("stride"), "`stride`");
    const std::string dtype = map.string("dtype");
    const std::optional<dtype_info> info = dtype_of(dtype);
    if (!info)
      map.fail("dtype", "unknown dtype `" + dtype +
                            "`; expected PyTorch's name (float32, bfloat16, float16, int64, …)");
    t.dtype = *info;
    std::optional<std::int64_t> bytes = t.dtype.bytes;
    for (const std::int64_t d : t.shape)
      bytes = bytes ? detail::checked_product({*bytes, d}) : std::nullopt;
    if (!bytes)
      map.fail("shape", "a tensor of fewer than 2^63 bytes");
    return t;
  }

  /// The tensors of an argument list, in order, lists of tensors flattened.
  std::vector<tensor> tensors_in(const yaml_node &list) const {
    std::vector<tensor> found;
    if (!list.is_sequence())
      return found;
    for (std::size_t i = 0; i < list.size(); ++i) {
      const yaml_node item = list[i];
      if (is_tensor(item))
        found.push_back(read_tensor(item));
      else if (item.is_sequence())
        for (std::size_t j = 0; j < item.size(); ++j)
          if (is_tensor(item[j]))
            found.push_back(read_tensor(item[j]));
    }
    return found;
  }

  const std::string &file() const noexcept { return m_file; }

private:
  std::string m_file;
};

/// `aten::add.Tensor` → `add`.
std::string_view base_name(std::string_view op) {
  if (const auto colons = op.find("::"); colons != std::string_view::npos)
    op.remove_prefix(colons + 2);
  if (const auto dot = op.find('.'); dot != std::string_view::npos)
    op = op.substr(0, dot);
  return op;
}

/// Ops that launch no kernel: views, metadata, allocation without initialisation.
// clang-format off
constexpr std::string_view free_ops[] = {
    "view", "_unsafe_view", "reshape", "_reshape_alias", "transpose", "t", "permute", "expand",
    "expand_as", "slice", "select", "unsqueeze", "squeeze", "detach", "alias", "split",
    "split_with_sizes", "chunk", "unbind", "narrow", "as_strided", "empty", "empty_like",
    "empty_strided", "new_empty", "new_empty_strided", "lift_fresh", "_local_scalar_dense",
    "sym_size", "sym_stride", "sym_numel", "is_same_size", "diagonal", "view_as", "unflatten",
    "flatten", "numel", "size", "stride", "dim", "item", "set_", "resolve_conj", "resolve_neg",
    "detach_", "requires_grad_", "_has_compatible_shallow_copy_type", "record_stream",
    "_nested_tensor_from_mask_left_aligned", "is_nonzero", "_to_dense", "movedim", "swapaxes",
    "transpose_", "t_", "unsqueeze_", "squeeze_", "as_strided_", "_unsafe_view_", "unfold",
    "view_as_real", "view_as_complex", "_conj", "conj", "real", "imag", "_neg_view", "lift",
    "_assert_async", "_assert_tensor_metadata", "_functional_assert_async",
    "sym_constrain_range_for_size", "_propagate_xla_data", "expand_copy_", "result_type",
    "_efficientzerotensor", "_fused_sdp_choice", "_index_put_impl_meta",
};
// clang-format on

bool costs_nothing(std::string_view name) {
  static const std::set<std::string_view> free(std::begin(free_ops), std::end(free_ops));
  return free.count(name) > 0;
}

/// The memory-bound kinds aten's elementwise, norm, reduction, gather and optimizer ops are
/// priced as (the kind whose fitted kernel runs most like theirs).
// clang-format off
constexpr std::pair<std::string_view, memory_op_kind> memory_kinds[] = {
    {"relu", memory_op_kind::relu}, {"relu_", memory_op_kind::relu},
    {"threshold_backward", memory_op_kind::relu}, {"hardtanh", memory_op_kind::relu},
    {"hardtanh_", memory_op_kind::relu}, {"hardtanh_backward", memory_op_kind::relu},
    {"leaky_relu", memory_op_kind::relu}, {"leaky_relu_backward", memory_op_kind::relu},
    {"clamp", memory_op_kind::relu}, {"clamp_", memory_op_kind::relu},
    {"clamp_min", memory_op_kind::relu}, {"clamp_max", memory_op_kind::relu},
    {"abs", memory_op_kind::relu}, {"neg", memory_op_kind::relu}, {"sign", memory_op_kind::relu},
    {"fill_", memory_op_kind::relu}, {"fill", memory_op_kind::relu},
    {"zero_", memory_op_kind::relu}, {"zeros", memory_op_kind::relu},
    {"ones", memory_op_kind::relu}, {"full", memory_op_kind::relu},
    {"zeros_like", memory_op_kind::relu}, {"ones_like", memory_op_kind::relu},
    {"full_like", memory_op_kind::relu}, {"scalar_tensor", memory_op_kind::relu},
    {"arange", memory_op_kind::relu}, {"new_zeros", memory_op_kind::relu},
    {"new_ones", memory_op_kind::relu}, {"new_full", memory_op_kind::relu},
    {"uniform_", memory_op_kind::relu}, {"normal_", memory_op_kind::relu},
    {"bernoulli_", memory_op_kind::relu}, {"rand", memory_op_kind::relu},
    {"randn", memory_op_kind::relu}, {"randint", memory_op_kind::relu},
    {"rand_like", memory_op_kind::relu}, {"randn_like", memory_op_kind::relu},
    {"floor", memory_op_kind::relu}, {"ceil", memory_op_kind::relu},
    {"round", memory_op_kind::relu}, {"trunc", memory_op_kind::relu},
    {"logical_not", memory_op_kind::relu}, {"bitwise_not", memory_op_kind::relu},
    {"gelu", memory_op_kind::gelu}, {"gelu_", memory_op_kind::gelu},
    {"gelu_backward", memory_op_kind::gelu},
    {"silu", memory_op_kind::silu}, {"silu_", memory_op_kind::silu},
    {"silu_backward", memory_op_kind::silu}, {"sigmoid", memory_op_kind::silu},
    {"sigmoid_", memory_op_kind::silu}, {"sigmoid_backward", memory_op_kind::silu},
    {"tanh", memory_op_kind::silu}, {"tanh_", memory_op_kind::silu},
    {"tanh_backward", memory_op_kind::silu}, {"exp", memory_op_kind::silu},
    {"exp_", memory_op_kind::silu}, {"exp2", memory_op_kind::silu}, {"log", memory_op_kind::silu},
    {"log_", memory_op_kind::silu}, {"log1p", memory_op_kind::silu}, {"log2", memory_op_kind::silu},
    {"rsqrt", memory_op_kind::silu}, {"rsqrt_", memory_op_kind::silu},
    {"sqrt", memory_op_kind::silu}, {"sqrt_", memory_op_kind::silu}, {"pow", memory_op_kind::silu},
    {"pow_", memory_op_kind::silu}, {"reciprocal", memory_op_kind::silu},
    {"reciprocal_", memory_op_kind::silu}, {"erf", memory_op_kind::silu},
    {"erfinv", memory_op_kind::silu}, {"sin", memory_op_kind::silu}, {"cos", memory_op_kind::silu},
    {"hardswish", memory_op_kind::silu}, {"hardswish_backward", memory_op_kind::silu},
    {"hardsigmoid", memory_op_kind::silu}, {"mish", memory_op_kind::silu},
    {"mish_backward", memory_op_kind::silu}, {"softplus", memory_op_kind::silu},
    {"softplus_backward", memory_op_kind::silu}, {"elu", memory_op_kind::silu},
    {"elu_backward", memory_op_kind::silu}, {"square", memory_op_kind::silu},
    {"sgn", memory_op_kind::silu}, {"atan2", memory_op_kind::silu},
    {"add", memory_op_kind::add}, {"add_", memory_op_kind::add}, {"sub", memory_op_kind::add},
    {"sub_", memory_op_kind::add}, {"rsub", memory_op_kind::add}, {"div", memory_op_kind::add},
    {"div_", memory_op_kind::add}, {"where", memory_op_kind::add}, {"maximum", memory_op_kind::add},
    {"minimum", memory_op_kind::add}, {"lerp", memory_op_kind::add}, {"lerp_", memory_op_kind::add},
    {"addcmul", memory_op_kind::add}, {"addcmul_", memory_op_kind::add},
    {"addcdiv", memory_op_kind::add}, {"addcdiv_", memory_op_kind::add},
    {"eq", memory_op_kind::add}, {"ne", memory_op_kind::add}, {"gt", memory_op_kind::add},
    {"lt", memory_op_kind::add}, {"ge", memory_op_kind::add}, {"le", memory_op_kind::add},
    {"logical_and", memory_op_kind::add}, {"logical_or", memory_op_kind::add},
    {"masked_fill", memory_op_kind::add}, {"masked_fill_", memory_op_kind::add},
    {"bitwise_and", memory_op_kind::add}, {"bitwise_or", memory_op_kind::add},
    {"bitwise_xor", memory_op_kind::add}, {"fmod", memory_op_kind::add},
    {"remainder", memory_op_kind::add}, {"isnan", memory_op_kind::add},
    {"isinf", memory_op_kind::add}, {"nan_to_num", memory_op_kind::add},
    {"nll_loss_forward", memory_op_kind::add}, {"nll_loss_backward", memory_op_kind::add},
    {"nll_loss2d_forward", memory_op_kind::add}, {"nll_loss2d_backward", memory_op_kind::add},
    {"mse_loss", memory_op_kind::add}, {"mse_loss_backward", memory_op_kind::add},
    {"binary_cross_entropy_with_logits", memory_op_kind::add},
    {"smooth_l1_loss", memory_op_kind::add},
    {"mul", memory_op_kind::mul}, {"mul_", memory_op_kind::mul},
    {"native_dropout", memory_op_kind::mul}, {"native_dropout_backward", memory_op_kind::mul},
    {"_fused_adamw_", memory_op_kind::mul}, {"_fused_adam_", memory_op_kind::mul},
    {"_fused_sgd_", memory_op_kind::mul},
    {"_amp_foreach_non_finite_check_and_unscale_", memory_op_kind::mul},
    {"_amp_update_scale_", memory_op_kind::mul}, {"_fused_adagrad_", memory_op_kind::mul},
    {"copy_", memory_op_kind::copy}, {"_to_copy", memory_op_kind::copy},
    {"clone", memory_op_kind::copy}, {"cat", memory_op_kind::copy}, {"stack", memory_op_kind::copy},
    {"_copy_from", memory_op_kind::copy}, {"_copy_from_and_resize", memory_op_kind::copy},
    {"to", memory_op_kind::copy}, {"repeat", memory_op_kind::copy}, {"roll", memory_op_kind::copy},
    {"flip", memory_op_kind::copy}, {"constant_pad_nd", memory_op_kind::copy},
    {"triu", memory_op_kind::copy}, {"tril", memory_op_kind::copy}, {"triu_", memory_op_kind::copy},
    {"tril_", memory_op_kind::copy}, {"slice_scatter", memory_op_kind::copy}, {"slice_backward", memory_op_kind::copy}, {"select_backward", memory_op_kind::copy},
    {"select_scatter", memory_op_kind::copy}, {"as_strided_scatter", memory_op_kind::copy},
    {"masked_scatter", memory_op_kind::copy}, {"pixel_shuffle", memory_op_kind::copy},
    {"reflection_pad2d", memory_op_kind::copy}, {"replicate_pad2d", memory_op_kind::copy},
    {"col2im", memory_op_kind::copy}, {"im2col", memory_op_kind::copy},
    {"_pdist", memory_op_kind::copy},
    {"native_layer_norm", memory_op_kind::layernorm},
    {"native_layer_norm_backward", memory_op_kind::layernorm},
    {"layer_norm", memory_op_kind::layernorm}, {"native_group_norm", memory_op_kind::layernorm},
    {"native_group_norm_backward", memory_op_kind::layernorm},
    {"_fused_rms_norm", memory_op_kind::rmsnorm},
    {"_fused_rms_norm_backward", memory_op_kind::rmsnorm}, {"rms_norm", memory_op_kind::rmsnorm},
    {"native_batch_norm", memory_op_kind::batchnorm},
    {"_native_batch_norm_legit", memory_op_kind::batchnorm},
    {"_native_batch_norm_legit_no_training", memory_op_kind::batchnorm},
    {"_native_batch_norm_legit_functional", memory_op_kind::batchnorm},
    {"cudnn_batch_norm", memory_op_kind::batchnorm},
    {"native_batch_norm_backward", memory_op_kind::batchnorm},
    {"cudnn_batch_norm_backward", memory_op_kind::batchnorm},
    {"_batch_norm_impl_index", memory_op_kind::batchnorm},
    {"batch_norm_backward", memory_op_kind::batchnorm},
    {"_softmax", memory_op_kind::softmax}, {"_safe_softmax", memory_op_kind::softmax}, {"_log_softmax", memory_op_kind::softmax},
    {"_softmax_backward_data", memory_op_kind::softmax},
    {"_log_softmax_backward_data", memory_op_kind::softmax}, {"softmax", memory_op_kind::softmax},
    {"log_softmax", memory_op_kind::softmax}, {"sum", memory_op_kind::softmax},
    {"mean", memory_op_kind::softmax}, {"amax", memory_op_kind::softmax},
    {"amin", memory_op_kind::softmax}, {"max", memory_op_kind::softmax},
    {"min", memory_op_kind::softmax}, {"var_mean", memory_op_kind::softmax},
    {"var", memory_op_kind::softmax}, {"std", memory_op_kind::softmax},
    {"std_mean", memory_op_kind::softmax}, {"norm", memory_op_kind::softmax},
    {"linalg_vector_norm", memory_op_kind::softmax}, {"prod", memory_op_kind::softmax},
    {"argmax", memory_op_kind::softmax}, {"argmin", memory_op_kind::softmax},
    {"logsumexp", memory_op_kind::softmax}, {"cumsum", memory_op_kind::softmax},
    {"all", memory_op_kind::softmax}, {"any", memory_op_kind::softmax},
    {"topk", memory_op_kind::softmax}, {"sort", memory_op_kind::softmax},
    {"_euclidean_dist", memory_op_kind::softmax},
    {"embedding", memory_op_kind::embedding},
    {"embedding_dense_backward", memory_op_kind::embedding},
    {"index_select", memory_op_kind::embedding}, {"gather", memory_op_kind::embedding},
    {"index", memory_op_kind::embedding}, {"_unsafe_index", memory_op_kind::embedding},
    {"scatter", memory_op_kind::embedding}, {"scatter_", memory_op_kind::embedding},
    {"scatter_add", memory_op_kind::embedding}, {"scatter_add_", memory_op_kind::embedding},
    {"index_add", memory_op_kind::embedding}, {"index_add_", memory_op_kind::embedding},
    {"index_put", memory_op_kind::embedding}, {"index_put_", memory_op_kind::embedding},
    {"_index_put_impl_", memory_op_kind::embedding}, {"index_copy", memory_op_kind::embedding},
    {"index_copy_", memory_op_kind::embedding}, {"masked_select", memory_op_kind::embedding},
    {"nonzero", memory_op_kind::embedding}, {"_embedding_bag", memory_op_kind::embedding},
    {"embedding_backward", memory_op_kind::embedding},
    {"max_pool2d_with_indices", memory_op_kind::maxpool},
    {"max_pool2d_with_indices_backward", memory_op_kind::maxpool},
    {"max_pool2d", memory_op_kind::maxpool}, {"max_pool1d", memory_op_kind::maxpool},
    {"max_pool3d_with_indices", memory_op_kind::maxpool},
    {"avg_pool2d", memory_op_kind::avgpool}, {"avg_pool2d_backward", memory_op_kind::avgpool},
    {"adaptive_avg_pool2d", memory_op_kind::avgpool},
    {"_adaptive_avg_pool2d", memory_op_kind::avgpool},
    {"_adaptive_avg_pool2d_backward", memory_op_kind::avgpool},
    {"adaptive_avg_pool1d", memory_op_kind::avgpool},
    {"upsample_nearest2d", memory_op_kind::avgpool},
    {"upsample_bilinear2d", memory_op_kind::avgpool},
    {"upsample_nearest2d_backward", memory_op_kind::avgpool},
    {"upsample_bilinear2d_backward", memory_op_kind::avgpool},
};
// clang-format on

std::optional<memory_op_kind> memory_kind(std::string_view name) {
  static const std::map<std::string_view, memory_op_kind> kinds(std::begin(memory_kinds),
                                                                std::end(memory_kinds));
  if (name.rfind("_foreach_", 0) == 0)
    return memory_op_kind::mul;
  const auto found = kinds.find(name);
  return found == kinds.end() ? std::nullopt : std::optional(found->second);
}

/// Where an attention op's query and is_causal sit in its arguments (aten's schemas; B, H, S, D
/// layout for every `_scaled_dot_product_*` op).
struct attention_args {
  std::size_t query, causal;
  bool backward;
};

std::optional<attention_args> attention_of(std::string_view name) {
  static const std::map<std::string_view, attention_args> known{
      {"_scaled_dot_product_flash_attention", {0, 4, false}},
      {"_scaled_dot_product_flash_attention_backward", {1, 11, true}},
      {"_scaled_dot_product_efficient_attention", {0, 6, false}},
      {"_scaled_dot_product_efficient_attention_backward", {1, 11, true}},
      {"_scaled_dot_product_cudnn_attention", {0, 6, false}},
      {"_scaled_dot_product_cudnn_attention_backward", {1, 14, true}},
      {"_scaled_dot_product_flash_attention_for_cpu", {0, 4, false}},
      {"_scaled_dot_product_flash_attention_for_cpu_backward", {1, 7, true}},
  };
  const auto found = known.find(name);
  return found == known.end() ? std::nullopt : std::optional(found->second);
}

bool is_gemm_op(std::string_view name) {
  return name == "mm" || name == "addmm" || name == "bmm" || name == "baddbmm" ||
         name == "_scaled_mm" || name == "addbmm" || name == "_addmm_activation";
}

bool is_conv_op(std::string_view name) {
  return name == "convolution" || name == "_convolution" || name == "cudnn_convolution" ||
         name == "convolution_overrideable" || name == "convolution_backward";
}

/// Where a convolution's arguments sit: convolution, _convolution and convolution_overrideable
/// (input, weight, bias, stride, padding, dilation, transposed, output_padding, groups);
/// cudnn_convolution (self, weight, padding, stride, dilation, groups, ...: never transposed);
/// convolution_backward (grad_output, input, weight, bias_sizes, stride, padding, dilation,
/// transposed, output_padding, groups, output_mask).
struct conv_positions {
  static constexpr std::size_t none = ~std::size_t{0};
  std::size_t input, stride, padding, dilation, transposed, groups;
};

conv_positions conv_positions_of(std::string_view base) {
  if (base == "convolution_backward")
    return {1, 4, 5, 6, 7, 9};
  if (base == "cudnn_convolution")
    return {0, 3, 2, 4, conv_positions::none, 5};
  return {0, 3, 4, 5, 6, 8};
}

/// What one op of the trace says, read once.
struct traced_op {
  std::string name; ///< as the trace spells it: "aten::addmm"
  std::string_view base;
  pass phase = pass::forward;
  yaml_node inputs, outputs;
  std::vector<tensor> in, out;
  /// An in-place op that returns nothing (the optimizers' foreach and fused ops): the tensors
  /// it writes, which `outputs` does not list.
  std::vector<tensor> written;
  yaml_node node;
};

/// A scalar argument as a boolean; false where absent or not one.
bool boolean_at(const yaml_node &list, std::size_t i) {
  return list.is_sequence() && i < list.size() && list[i].is_scalar() && list[i].scalar() == "true";
}

/// A list-of-integers argument (a conv's stride, padding, ...); `fallback` where absent.
std::vector<std::int64_t> ints_at(const trace_reader &r, const yaml_node &list, std::size_t i,
                                  std::vector<std::int64_t> fallback) {
  if (!list.is_sequence() || i >= list.size() || !list[i].is_sequence())
    return fallback;
  return r.integers(list[i], "a list of integers");
}

/// The tensor at argument `i` (not flattened), where it is one.
std::optional<tensor> tensor_at(const trace_reader &r, const yaml_node &list, std::size_t i) {
  if (!list.is_sequence() || i >= list.size() || !trace_reader::is_tensor(list[i]))
    return std::nullopt;
  return r.read_tensor(list[i]);
}

class pricer {
public:
  explicit pricer(const trace_reader &reader) : m_reader(reader) {}

  /// The ops `t` runs as the tool prices them; none (and `unpriced`) where no model fits.
  std::optional<std::vector<op>> price(const traced_op &t) const {
    if (is_gemm_op(t.base))
      return gemm(t);
    if (is_conv_op(t.base))
      return conv(t);
    if (const auto args = attention_of(t.base))
      return attention(t, *args);
    if (t.base == "_native_multi_head_attention")
      return multi_head_attention(t);
    if (const auto kind = memory_kind(t.base))
      return memory(t, *kind);
    return std::nullopt;
  }

private:
  /// The product of `factors`, an input_error at the op when it overflows 64 bits.
  std::int64_t product_at(const traced_op &t, std::initializer_list<std::int64_t> factors,
                          const char *what) const {
    const std::optional<std::int64_t> product = detail::checked_product(factors);
    if (!product)
      throw input_error(detail::location_of(t.node, m_reader.file()),
                        t.name + ": " + what + " overflows a 64-bit integer");
    return *product;
  }

  /// The unique bytes an op reads and writes: each input storage once, each output (and each
  /// tensor an in-place op writes) once more; a tensor with no storage id is its own.
  std::int64_t moved_bytes(const traced_op &t) const {
    std::optional<std::int64_t> total = 0;
    const auto side = [&](const std::vector<tensor> &tensors) {
      std::map<std::int64_t, std::int64_t> by_storage;
      for (const tensor &x : tensors) {
        if (x.storage < 0)
          total = detail::checked_sum({total, x.bytes()});
        else
          by_storage[x.storage] = std::max(by_storage[x.storage], x.bytes());
      }
      for (const auto &[_, bytes] : by_storage)
        total = detail::checked_sum({total, bytes});
    };
    side(t.in);
    side(t.out);
    side(t.written);
    if (!total)
      throw input_error(detail::location_of(t.node, m_reader.file()),
                        t.name + ": its bytes overflow a 64-bit integer");
    return *total;
  }

  op located(op o, const traced_op &t) const {
    o.layer = t.name;
    o.pass = t.phase == pass::forward ? pass::forward : o.pass;
    o.where = detail::location_of(t.node, m_reader.file());
    return o;
  }

  std::optional<std::vector<op>> gemm(const traced_op &t) const {
    // addmm(bias, a, b), baddbmm(bias, a, b): the product's operands follow the bias.
    const bool biased = t.base == "addmm" || t.base == "baddbmm" || t.base == "addbmm" ||
                        t.base == "_addmm_activation";
    const std::optional<tensor> a = tensor_at(m_reader, t.inputs, biased ? 1 : 0);
    const std::optional<tensor> b = tensor_at(m_reader, t.inputs, biased ? 2 : 1);
    if (!a || !b || a->shape.size() != b->shape.size() || a->shape.size() < 2 ||
        a->shape.size() > 3)
      return std::nullopt;
    const bool batched = a->shape.size() == 3;
    const std::size_t row = batched ? 1 : 0;
    gemm_shape shape{a->dim(row), b->dim(row + 1), a->dim(row + 1), batched ? a->dim(0) : 1};
    if (t.base == "addbmm") // a sum over the batch into one M×N result
      shape = {a->dim(1), b->dim(2), product_at(t, {a->dim(2), a->dim(0)}, "its K"), 1};
    if (shape.m <= 0 || shape.n <= 0 || shape.k <= 0 || shape.batch_count <= 0)
      return std::vector<op>{}; // an empty product: no kernel
    const precision p = a->dtype.prec;
    op o = make_gemm_op(t.name, shape, p, detail::location_of(t.node, m_reader.file()));
    o.pass = t.phase == pass::forward ? pass::forward : pass::data_grad;
    if (t.phase == pass::optimizer)
      o.pass = pass::optimizer;
    return std::vector<op>{located(o, t)};
  }

  std::optional<std::vector<op>> conv(const traced_op &t) const {
    const bool backward = t.base == "convolution_backward";
    const conv_positions at = conv_positions_of(t.base);
    const std::optional<tensor> input = tensor_at(m_reader, t.inputs, at.input);
    const std::optional<tensor> weight = tensor_at(m_reader, t.inputs, at.input + 1);
    if (!input || !weight ||
        (at.transposed != conv_positions::none && boolean_at(t.inputs, at.transposed)))
      return std::nullopt; // transposed convolutions are not modelled
    // 1-D as 2-D of height 1; 3-D is not modelled.
    if (input->shape.size() != weight->shape.size() || input->shape.size() < 3 ||
        input->shape.size() > 4)
      return std::nullopt;
    const bool one_d = input->shape.size() == 3;
    const auto extent = [&](const tensor &x, std::size_t i) {
      return one_d ? (i == 2 ? std::int64_t{1} : x.dim(i == 3 ? 2 : i)) : x.dim(i);
    };
    const std::vector<std::int64_t> stride = ints_at(m_reader, t.inputs, at.stride, {1});
    const std::vector<std::int64_t> padding = ints_at(m_reader, t.inputs, at.padding, {0});
    const std::vector<std::int64_t> dilation = ints_at(m_reader, t.inputs, at.dilation, {1});
    const std::int64_t groups =
        t.inputs.is_sequence() && at.groups < t.inputs.size()
            ? m_reader.integer(t.inputs[at.groups], "the convolution's groups")
            : 1;
    // (height, width) of a per-dimension list: a 1-D conv's one value is its width's; one value
    // for a 2-D conv is both.
    const auto per_dim = [&](const std::vector<std::int64_t> &v, std::int64_t height_of_1d) {
      if (v.empty())
        return std::pair{height_of_1d, height_of_1d};
      if (one_d)
        return std::pair{height_of_1d, v[0]};
      return std::pair{v[0], v.size() > 1 ? v[1] : v[0]};
    };
    conv_shape cs;
    cs.batch = input->dim(0);
    cs.in_channels = input->dim(1);
    cs.out_channels = weight->dim(0);
    cs.input_h = extent(*input, 2);
    cs.input_w = extent(*input, 3);
    cs.kernel_h = extent(*weight, 2);
    cs.kernel_w = extent(*weight, 3);
    std::tie(cs.stride_h, cs.stride_w) = per_dim(stride, 1);
    std::tie(cs.padding_h, cs.padding_w) = per_dim(padding, 0);
    cs.stride_h = std::max<std::int64_t>(1, cs.stride_h);
    cs.stride_w = std::max<std::int64_t>(1, cs.stride_w);
    cs.groups = std::max<std::int64_t>(1, groups);
    const auto [dilation_h, dilation_w] = per_dim(dilation, 1);
    if (cs.padding_h < 0 || cs.padding_w < 0 || dilation_h < 1 || dilation_w < 1)
      return std::nullopt;
    // A dilated window spans dilation·(kernel − 1) + 1 of the padded input; its taps, and so
    // its FLOPs, stay kernel_h × kernel_w.
    const std::int64_t padded_h = product_at(t, {2, cs.padding_h}, "its padding") + cs.input_h;
    const std::int64_t padded_w = product_at(t, {2, cs.padding_w}, "its padding") + cs.input_w;
    const std::int64_t span_h = product_at(t, {dilation_h, cs.kernel_h - 1}, "its span") + 1;
    const std::int64_t span_w = product_at(t, {dilation_w, cs.kernel_w - 1}, "its span") + 1;
    if (cs.kernel_h < 1 || cs.kernel_w < 1 || padded_h < span_h || padded_w < span_w ||
        cs.in_channels % cs.groups != 0 || cs.out_channels % cs.groups != 0 || cs.batch <= 0)
      return std::nullopt;
    cs.out_h = (padded_h - span_h) / cs.stride_h + 1;
    cs.out_w = (padded_w - span_w) / cs.stride_w + 1;
    const std::optional<std::int64_t> m = detail::checked_product({cs.batch, cs.out_h, cs.out_w});
    const std::optional<std::int64_t> k =
        detail::checked_product({cs.in_channels / cs.groups, cs.kernel_h, cs.kernel_w});
    if (!m || !k)
      return std::nullopt;
    const gemm_shape forward{*m, cs.out_channels / cs.groups, *k, cs.groups};
    const precision p = input->dtype.prec;
    std::vector<op> ops;
    const auto add = [&](pass which, const gemm_shape &shape) {
      cs.pass = which;
      op o = make_gemm_op(t.name, shape, p, detail::location_of(t.node, m_reader.file()));
      o.pass = which;
      o.conv = cs;
      if (const std::optional<std::int64_t> bytes = conv_bytes(cs, p))
        o.bytes = *bytes;
      ops.push_back(located(o, t));
    };
    if (!backward) {
      add(pass::forward, forward);
      return ops;
    }
    // output_mask: which gradients it computes (input, weight, bias).
    constexpr std::size_t output_mask = 10;
    const yaml_node mask = t.inputs.is_sequence() && t.inputs.size() > output_mask
                               ? t.inputs[output_mask]
                               : yaml_node{};
    const auto wanted = [&](std::size_t i) { return !mask.is_sequence() || boolean_at(mask, i); };
    if (wanted(0))
      add(pass::data_grad, data_grad_shape(forward));
    if (wanted(1))
      add(pass::weight_grad, weight_grad_shape(forward));
    return ops;
  }

  std::optional<std::vector<op>> attention(const traced_op &t, const attention_args &args) const {
    const std::optional<tensor> q = tensor_at(m_reader, t.inputs, args.query);
    const std::optional<tensor> k = tensor_at(m_reader, t.inputs, args.query + 1);
    if (!q || !k || q->shape.size() != 4 || k->shape.size() != 4)
      return std::nullopt;
    attention_shape shape;
    shape.batch = q->dim(0);
    shape.heads = q->dim(1);
    shape.kv_heads = k->dim(1);
    shape.q_len = q->dim(2);
    shape.kv_len = k->dim(2);
    shape.head_dim = q->dim(3);
    shape.causal = boolean_at(t.inputs, args.causal);
    shape.backward = args.backward;
    if (shape.batch <= 0 || shape.heads <= 0 || shape.q_len <= 0 || shape.kv_len <= 0 ||
        shape.head_dim <= 0 || shape.kv_heads <= 0 || shape.heads % shape.kv_heads != 0)
      return std::nullopt;
    // PyTorch's causal mask is aligned top-left: query i meets keys 0..i. With no more queries
    // than keys that is the square causal case over the first q_len keys; with more, every
    // query meets every key past the diagonal (priced unmasked: a little more than it does).
    const std::int64_t s = shape.q_len;
    if (shape.causal && s <= shape.kv_len)
      shape.kv_len = s;
    else if (shape.causal)
      shape.causal = false;
    const std::int64_t kv = shape.kv_len;
    const std::int64_t pairs = shape.causal ? product_at(t, {s, s + 1}, "its attended pairs") / 2
                                            : product_at(t, {s, kv}, "its attended pairs");
    const std::int64_t forward =
        product_at(t, {4, shape.batch, shape.heads, pairs, shape.head_dim}, "its FLOP count");
    op o;
    o.kind = std::string(fused_attention_kind);
    o.precision = q->dtype.prec;
    o.elements = q->elements();
    o.flops = args.backward ? product_at(t, {5, forward / 2}, "its FLOP count") : forward;
    o.bytes = moved_bytes(t);
    o.attention = shape;
    o.pass = args.backward ? pass::data_grad : pass::forward;
    return std::vector<op>{located(o, t)};
  }

  /// nn.MultiheadAttention's inference fast path, one aten op: (query, key, value, embed_dim,
  /// num_head, qkv_weight, qkv_bias, proj_weight, proj_bias, mask, ...): the QKV projection, the
  /// fused attention over its heads, the output projection.
  std::optional<std::vector<op>> multi_head_attention(const traced_op &t) const {
    const std::optional<tensor> query = tensor_at(m_reader, t.inputs, 0);
    const std::optional<tensor> key = tensor_at(m_reader, t.inputs, 1);
    if (!query || !key || query->shape.size() != 3 || key->shape.size() != 3 ||
        !t.inputs.is_sequence() || t.inputs.size() < 5)
      return std::nullopt;
    const std::int64_t embed = m_reader.integer(t.inputs[3], "embed_dim");
    const std::int64_t heads = m_reader.integer(t.inputs[4], "num_head");
    const std::int64_t batch = query->dim(0), s = query->dim(1), kv = key->dim(1);
    if (embed <= 0 || heads <= 0 || embed % heads != 0 || batch <= 0 || s <= 0 || kv <= 0)
      return std::nullopt;
    const precision p = query->dtype.prec;
    const source_location where = detail::location_of(t.node, m_reader.file());
    // Each part named by the aten op and its role, so that the three stay apart.
    const auto part = [&](op o, const char *role) {
      o = located(std::move(o), t);
      o.layer = t.name + role;
      return o;
    };
    std::vector<op> ops;
    const std::int64_t rows = product_at(t, {batch, s}, "its rows");
    ops.push_back(
        part(make_gemm_op(t.name, {rows, product_at(t, {3, embed}, "its QKV width"), embed, 1}, p,
                          where),
             " (qkv)"));
    op attention;
    attention.kind = std::string(fused_attention_kind);
    attention.precision = p;
    attention.elements = product_at(t, {rows, embed}, "its output size");
    attention.flops = product_at(t, {4, batch, heads, s, kv, embed / heads}, "its FLOP count");
    // Q and O over the queries, K and V over the keys.
    attention.bytes =
        product_at(t,
                   {2 * query->dtype.bytes, batch,
                    product_at(t, {s, embed}, "its size") + product_at(t, {kv, embed}, "its size")},
                   "its byte count");
    attention.attention =
        attention_shape{batch, heads, heads, s, kv, embed / heads, false, 0, false, std::nullopt};
    ops.push_back(part(attention, " (attention)"));
    ops.push_back(part(make_gemm_op(t.name, {rows, embed, embed, 1}, p, where), " (out)"));
    return ops;
  }

  std::optional<std::vector<op>> memory(const traced_op &t, memory_op_kind kind) const {
    op o;
    o.kind = std::string(to_string(kind));
    o.bytes = moved_bytes(t);
    // The largest tensor it touches decides its elements (a reduction's input, a fill's
    // output), and the first floating one its precision.
    const tensor *largest = nullptr;
    for (const std::vector<tensor> *side : {&t.out, &t.in})
      for (const tensor &x : *side)
        if (!largest || x.elements() > largest->elements())
          largest = &x;
    if (!largest || o.bytes <= 0)
      return std::vector<op>{}; // nothing to move: no kernel worth pricing
    o.elements = largest->elements();
    // Rows only for the kernels fitted by row (norms, softmax); a reduction's kernel splits a
    // long row over many blocks, which the row terms would not see.
    o.row = kind == memory_op_kind::layernorm || kind == memory_op_kind::rmsnorm ||
                    (kind == memory_op_kind::softmax &&
                     t.base.find("softmax") != std::string_view::npos)
                ? largest->last()
                : 0;
    o.precision = largest->dtype.prec;
    o.flops = detail::checked_product({std::max(1, cost_of(kind).flops_per_element), o.elements})
                  .value_or(o.elements);
    o.pass = t.phase == pass::optimizer ? pass::optimizer
             : t.phase == pass::forward ? pass::forward
                                        : pass::data_grad;
    return std::vector<op>{located(o, t)};
  }

  const trace_reader &m_reader;
};

/// The tensors an in-place op that returns nothing writes: its first argument's (a foreach op's
/// list), and a fused optimizer's moments or momentum buffers beside its parameters.
std::vector<tensor> written_in_place(const trace_reader &reader, const traced_op &t) {
  if (!t.out.empty() || t.base.empty() || t.base.back() != '_' || !t.inputs.is_sequence())
    return {};
  std::vector<std::size_t> arguments{0};
  if (t.base == "_fused_adamw_" || t.base == "_fused_adam_")
    arguments = {0, 2, 3}; // params, exp_avgs, exp_avg_sqs (grads: read)
  else if (t.base == "_fused_sgd_")
    arguments = {0, 2}; // params, momentum buffers
  std::vector<tensor> written;
  for (const std::size_t i : arguments) {
    if (i >= t.inputs.size())
      continue;
    const yaml_node argument = t.inputs[i];
    if (trace_reader::is_tensor(argument))
      written.push_back(reader.read_tensor(argument));
    else if (argument.is_sequence())
      for (std::size_t j = 0; j < argument.size(); ++j)
        if (trace_reader::is_tensor(argument[j]))
          written.push_back(reader.read_tensor(argument[j]));
  }
  return written;
}

/// The storages alive as the trace goes, their peak, and what was alive at it (found by playing
/// the trace's allocations and frees again up to the peak: no copy of the live set per op).
class memory_walk {
public:
  /// A storage made (before the first op, or by an op): counted from now on; its kind
  /// "parameter", "buffer", "gradient", "optimizer", "input", "activation" or "other".
  /// False where the storage is alive already (nothing changes).
  bool add(std::int64_t id, double bytes, const std::string &kind) {
    if (!m_live.try_emplace(id, bytes).second)
      return false;
    m_kind.try_emplace(id, kind);
    m_live_bytes += bytes;
    m_events.push_back({id, bytes});
    if (m_live_bytes > m_peak_bytes) {
      m_peak_bytes = m_live_bytes;
      m_peak_event = m_events.size();
    }
    return true;
  }
  /// What a storage turned out to be (the trace's `end`: gradients, optimizer state).
  void name(std::int64_t id, const std::string &kind) { m_kind[id] = kind; }
  void free(std::int64_t id) {
    if (const auto found = m_live.find(id); found != m_live.end()) {
      m_live_bytes -= found->second;
      m_events.push_back({id, -found->second});
      m_live.erase(found);
    }
  }

  traced_memory at_peak() const {
    std::unordered_map<std::int64_t, double> alive;
    for (std::size_t i = 0; i < m_peak_event; ++i) {
      const auto &[id, bytes] = m_events[i];
      if (bytes >= 0)
        alive[id] = bytes;
      else
        alive.erase(id);
    }
    traced_memory m;
    m.peak_bytes = m_peak_bytes;
    for (const auto &[id, bytes] : alive) {
      const auto kind = m_kind.find(id);
      const std::string k = kind == m_kind.end() ? "activation" : kind->second;
      (k == "parameter" || k == "buffer" ? m.parameter_bytes
       : k == "gradient"                 ? m.gradient_bytes
       : k == "optimizer"                ? m.optimizer_bytes
                                         : m.activation_bytes) += bytes;
    }
    return m;
  }

private:
  std::unordered_map<std::int64_t, double> m_live;
  std::unordered_map<std::int64_t, std::string> m_kind;
  /// Each storage made (its bytes) or freed (minus its bytes), in order.
  std::vector<std::pair<std::int64_t, double>> m_events;
  double m_live_bytes = 0, m_peak_bytes = 0;
  std::size_t m_peak_event = 0; ///< events up to the peak
};

pass phase_of(const yaml_map &op_map) {
  const std::string phase = op_map.string_or("phase", "forward");
  if (phase == "forward")
    return pass::forward;
  if (phase == "backward")
    return pass::data_grad;
  if (phase == "optimizer")
    return pass::optimizer;
  op_map.fail("phase", "unknown phase `" + phase + "`; expected forward, backward or optimizer");
}

/// The storages alive before the first op, and what those alive at the end turned out to be.
memory_walk storages_of(const yaml_map &top, const trace_reader &reader) {
  memory_walk memory;
  const yaml_node storages = top.has("storages") ? top.required("storages") : yaml_node{};
  if (!storages.is_null() && !storages.is_sequence())
    reader.fail(storages, "`storages`: a list of {id, bytes, kind}");
  for (std::size_t i = 0; i < storages.size(); ++i) {
    const yaml_map s(storages[i], reader.file(), "storage", {"id", "bytes", "kind"});
    const std::int64_t bytes = reader.integer(s.required("bytes"), "a storage's `bytes`");
    if (bytes < 0)
      s.fail("bytes", "a storage's size: not negative");
    if (!memory.add(reader.integer(s.required("id"), "a storage's `id`"),
                    static_cast<double>(bytes), s.string_or("kind", "other")))
      s.fail("id", "a storage id not given before");
  }
  if (top.has("end")) {
    const yaml_map end(top.required("end"), reader.file(), "end", {"gradient", "optimizer"});
    for (const char *kind : {"gradient", "optimizer"})
      if (end.has(kind))
        for (const std::int64_t id : reader.integers(end.required(kind), kind))
          memory.name(id, kind);
  }
  return memory;
}

/// The key two runs of the same op share: its name, phase and tensors' shapes and dtypes.
std::string identity_of(const op &o) {
  return fmt::format(
      "{}|{}|{}|{}|{}|{}|{}|{}|{}|{}", o.layer, static_cast<int>(o.pass), o.kind,
      static_cast<int>(o.precision), o.flops, o.bytes, o.elements, o.row,
      o.gemm ? fmt::format("{}x{}x{}x{}", o.gemm->m, o.gemm->n, o.gemm->k, o.gemm->batch_count)
             : "",
      o.attention ? fmt::format("{}.{}.{}.{}.{}.{}.{}", o.attention->batch, o.attention->heads,
                                o.attention->kv_heads, o.attention->q_len, o.attention->kv_len,
                                o.attention->head_dim, o.attention->causal)
                  : "");
}

} // namespace

bool is_op_trace(std::string_view text) {
  // The format's name anywhere (keys may come in any order): no model config holds it.
  return text.find("\"roofline-op-trace\"") != std::string_view::npos;
}

traced_program read_op_trace(std::string_view text, const std::string &origin) {
  const yaml_node root = detail::parse_json(text, origin);
  const trace_reader reader(origin);
  const yaml_map top(root, origin, "op trace",
                     {"format", "version", "name", "captured", "storages", "ops", "end"});
  if (top.string("format") != "roofline-op-trace")
    top.fail("format", "expected `roofline-op-trace` (docs/op-trace-format.md)");
  if (const std::int64_t version = top.positive_int("version"); version != op_trace_version)
    top.fail("version", fmt::format("an op trace of version {}; this reader knows version {}",
                                    version, op_trace_version));
  traced_program program;
  program.name = top.string_or("name", "captured program");
  if (top.has("captured")) {
    const yaml_map captured(top.required("captured"), origin, "captured", yaml_map::any_keys{});
    program.captured =
        fmt::format("torch {} on {}, {}", captured.string_or("torch", "?"),
                    captured.string_or("device", "?"), captured.string_or("date", "?"));
    program.batch = captured.non_negative_int_or("batch", 0);
  }

  memory_walk memory = storages_of(top, reader);
  const yaml_node ops = top.required("ops");
  if (!ops.is_sequence())
    reader.fail(ops, "`ops`: the list of the program's aten ops");
  const pricer prices(reader);
  std::map<std::string, std::size_t> index; // identity → program.ops
  std::map<std::string, std::int64_t> unpriced;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const yaml_map op_map(ops[i], origin, "op",
                          {"op", "phase", "inputs", "args", "outputs", "allocated", "freed"});
    traced_op t;
    t.node = ops[i];
    t.name = op_map.string("op");
    t.base = base_name(t.name);
    t.phase = phase_of(op_map);
    ++program.aten_ops;
    program.training = program.training || t.phase == pass::data_grad;
    if (op_map.has("allocated")) {
      const yaml_node allocated = op_map.required("allocated");
      if (!allocated.is_sequence())
        reader.fail(allocated, "`allocated`: a list of [storage id, bytes]");
      for (std::size_t a = 0; a < allocated.size(); ++a) {
        const std::vector<std::int64_t> pair = reader.integers(allocated[a], "[storage id, bytes]");
        if (pair.size() != 2 || pair[1] < 0)
          reader.fail(allocated[a], "[storage id, bytes]");
        memory.add(pair[0], static_cast<double>(pair[1]), "activation");
      }
    }
    if (op_map.has("freed"))
      for (const std::int64_t id : reader.integers(op_map.required("freed"), "`freed`"))
        memory.free(id);
    if (costs_nothing(t.base)) {
      ++program.free_ops;
      continue;
    }
    t.inputs = op_map.has("inputs") ? op_map.required("inputs") : yaml_node{};
    t.outputs = op_map.has("outputs") ? op_map.required("outputs") : yaml_node{};
    t.in = reader.tensors_in(t.inputs);
    t.out = reader.tensors_in(t.outputs);
    t.written = written_in_place(reader, t);
    const std::optional<std::vector<op>> priced = prices.price(t);
    if (!priced) {
      ++unpriced[t.name];
      continue;
    }
    ++program.priced_ops;
    for (const op &o : *priced) {
      const auto [found, added] = index.try_emplace(identity_of(o), program.ops.size());
      if (added)
        program.ops.push_back(o);
      else
        ++program.ops[found->second].count;
    }
  }
  // Each distinct op named by its aten op and, where one aten op has several shapes, its place.
  std::map<std::string, int> seen;
  for (op &o : program.ops)
    if (++seen[o.layer] > 1)
      o.layer += fmt::format(" #{}", seen[o.layer]);

  program.unpriced.assign(unpriced.begin(), unpriced.end());
  std::stable_sort(program.unpriced.begin(), program.unpriced.end(),
                   [](const auto &a, const auto &b) { return a.second > b.second; });
  program.memory = memory.at_peak();
  return program;
}

std::string coverage_note(const traced_program &program) {
  std::string unpriced;
  for (std::size_t i = 0; i < program.unpriced.size() && i < 12; ++i)
    unpriced += fmt::format("{}{} ×{}", i == 0 ? ": " : ", ", program.unpriced[i].first,
                            program.unpriced[i].second);
  if (program.unpriced.size() > 12)
    unpriced += fmt::format(", and {} more", program.unpriced.size() - 12);
  std::int64_t unpriced_runs = 0;
  for (const auto &[_, runs] : program.unpriced)
    unpriced_runs += runs;
  const std::int64_t kernels = program.priced_ops + unpriced_runs;
  return fmt::format(
      "captured program{}: {} aten ops, {} priced ({:.1f}% of those that launch kernels), {} "
      "views and metadata (no kernel), {} not priced{}; memory: the peak of its tensors "
      "({:.3g} GB)",
      program.captured.empty() ? "" : " (" + program.captured + ")", program.aten_ops,
      program.priced_ops,
      kernels > 0 ? 100.0 * static_cast<double>(program.priced_ops) / static_cast<double>(kernels)
                  : 100.0,
      program.free_ops, unpriced_runs, unpriced, program.memory.peak_bytes / 1e9);
}

} // namespace roofline
