// SPDX-License-Identifier: Apache-2.0
#include "roofline/model/gemm.hpp"

#include "checked_math.hpp"

#include <algorithm>

namespace roofline {

std::optional<std::int64_t> gemm_flops(const gemm_shape &s) {
  return detail::checked_product({2, s.m, s.n, s.k, s.batch_count});
}

namespace {

/// Fp16 scales per output column: one per group of K, or one in all.
std::int64_t scale_groups(const gemm_shape &s) {
  const std::int64_t group = s.weights->group_size;
  return group > 0 ? s.k / group + (s.k % group != 0) : 1;
}

} // namespace

/// fp4's scales: one byte per 16 weights along K (nvfp4's; mxfp4's one per 32 is counted so too).
constexpr std::int64_t fp4_scale_group = 16;

std::optional<std::int64_t> weight_bytes(const gemm_shape &s, precision p) {
  const std::optional<std::int64_t> elements = detail::checked_product({s.k, s.n});
  if (elements && p == precision::fp4 && !s.weights)
    return detail::checked_sum(
        {*elements / 2 + *elements % 2,
         detail::checked_product({s.n, (s.k + fp4_scale_group - 1) / fp4_scale_group})});
  if (!elements || !s.weights)
    return elements ? detail::checked_product({*elements, element_bytes(p)}) : std::nullopt;
  // Packed integers, a partly filled last byte counted whole, then the scales.
  const std::optional<std::int64_t> bits = detail::checked_product({*elements, s.weights->bits});
  if (!bits)
    return std::nullopt;
  return detail::checked_sum(
      {*bits / 8 + (*bits % 8 != 0), detail::checked_product({2, s.n, scale_groups(s)})});
}

double weight_element_bytes(const gemm_shape &s, precision p) {
  if (p == precision::fp4 && !s.weights)
    return 0.5 + 1.0 / fp4_scale_group;
  if (!s.weights)
    return element_bytes(p);
  return s.weights->bits / 8.0 + 2.0 * static_cast<double>(scale_groups(s)) /
                                     static_cast<double>(std::max<std::int64_t>(s.k, 1));
}

std::optional<std::int64_t> gemm_min_bytes(const gemm_shape &s, precision p) {
  const auto activations = detail::checked_sum(
      {detail::checked_product({s.m, s.k}), detail::checked_product({s.m, s.n})});
  if (!activations)
    return std::nullopt;
  const auto per_instance = detail::checked_sum(
      {detail::checked_product({*activations, element_bytes(p)}), weight_bytes(s, p)});
  if (!per_instance)
    return std::nullopt;
  return detail::checked_product({*per_instance, s.batch_count});
}

gemm_shape data_grad_shape(const gemm_shape &forward) {
  return {forward.m, forward.k, forward.n, forward.batch_count};
}

gemm_shape weight_grad_shape(const gemm_shape &forward) {
  return {forward.k, forward.n, forward.m, forward.batch_count};
}

int row_alignment_bytes(std::int64_t elements, precision p) {
  // The row's bytes modulo 16, all the alignment depends on, without the product's overflow.
  const std::int64_t bytes = elements % 16 * element_bytes(p);
  int alignment = 16;
  while (alignment > 1 && bytes % alignment != 0)
    alignment /= 2;
  return alignment;
}

int row_alignment_bytes(const gemm_shape &s, precision p) {
  return std::min(row_alignment_bytes(s.k, p), row_alignment_bytes(s.n, p));
}

std::int64_t alignment_elements(precision p) {
  return 16 / element_bytes(p);
}

} // namespace roofline
