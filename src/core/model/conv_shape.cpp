// SPDX-License-Identifier: Apache-2.0
#include "roofline/model/conv_shape.hpp"

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

} // namespace

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
