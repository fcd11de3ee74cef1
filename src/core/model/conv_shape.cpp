// SPDX-License-Identifier: Apache-2.0
#include "roofline/model/conv_shape.hpp"

#include "checked_math.hpp"

#include <algorithm>
#include <array>

namespace roofline {

namespace {

struct conv_variant_entry {
  conv_variant variant;
  std::string_view name;
};

constexpr std::array<conv_variant_entry, 5> conv_variants{{
    {conv_variant::pointwise, "pointwise"},
    {conv_variant::strided_pointwise, "strided_pointwise"},
    {conv_variant::spatial, "spatial"},
    {conv_variant::small_channel, "small_channel"},
    {conv_variant::grouped, "grouped"},
}};

/// Input positions along one axis that some output's window reads. Window i covers padded
/// positions [i·stride, i·stride + kernel), so padded position y is read when y mod stride <
/// kernel (always when kernel ≥ stride) and y comes before the last window's end,
/// (outputs − 1)·stride + kernel; of those, the real input is [padding, padding + input).
/// Where kernel < stride (a 1×1 stride-2 conv) only every stride-th position is read; where
/// kernel ≥ stride the whole input is, less a tail the last window stops short of.
std::int64_t read_extent(std::int64_t input, std::int64_t padding, std::int64_t kernel,
                         std::int64_t stride, std::int64_t outputs) {
  // Read positions in [0, n): whole periods of `stride` read min(kernel, stride) each, then
  // the partial period. No overflow: every argument below is at most the padded extent.
  const auto read_before = [&](std::int64_t n) {
    return n / stride * std::min(kernel, stride) + std::min(n % stride, kernel);
  };
  const std::int64_t end = std::min(padding + input, (outputs - 1) * stride + kernel);
  return end > padding ? read_before(end) - read_before(padding) : 0;
}

} // namespace

std::optional<std::int64_t> conv_bytes(const conv_shape &s, precision p) {
  const std::optional<std::int64_t> input =
      s.pass == pass::data_grad
          ? detail::checked_product({s.batch, s.in_channels, s.input_h, s.input_w})
          : detail::checked_product(
                {s.batch, s.in_channels,
                 read_extent(s.input_h, s.padding_h, s.kernel_h, s.stride_h, s.out_h),
                 read_extent(s.input_w, s.padding_w, s.kernel_w, s.stride_w, s.out_w)});
  const std::optional<std::int64_t> filters =
      detail::checked_product({s.out_channels, s.in_channels / s.groups, s.kernel_h, s.kernel_w});
  const std::optional<std::int64_t> output =
      detail::checked_product({s.batch, s.out_h, s.out_w, s.out_channels});
  const std::optional<std::int64_t> tensors = detail::checked_sum({input, filters, output});
  if (!tensors)
    return std::nullopt;
  return detail::checked_product({*tensors, element_bytes(p)});
}

conv_variant variant_of(const conv_shape &shape) {
  if (shape.groups > 1)
    return conv_variant::grouped;
  // cuDNN's tensor-core kernels load channels 8 at a time (16 bytes of fp16): fewer, or a count
  // they do not divide, takes a padded path (an RGB stem's 3 channels).
  if (shape.in_channels % 8 != 0)
    return conv_variant::small_channel;
  if (shape.kernel_h == 1 && shape.kernel_w == 1)
    return shape.stride_h == 1 && shape.stride_w == 1 ? conv_variant::pointwise
                                                      : conv_variant::strided_pointwise;
  return conv_variant::spatial;
}

std::string_view to_string(conv_variant v) {
  for (const auto &entry : conv_variants)
    if (entry.variant == v)
      return entry.name;
  return "?";
}

std::vector<std::string_view> conv_gemm_variant_names() {
  std::vector<std::string_view> names;
  for (const auto &entry : conv_variants)
    if (static_cast<int>(entry.variant) < conv_gemm_variant_count)
      names.push_back(entry.name);
  return names;
}

} // namespace roofline
