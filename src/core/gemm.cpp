// SPDX-License-Identifier: Apache-2.0
#include "roofline/gemm.hpp"

#include "checked_math.hpp"

#include <algorithm>

namespace roofline {

std::optional<std::int64_t> gemm_flops(const gemm_shape &s) {
  return detail::checked_product({2, s.m, s.n, s.k, s.batch_count});
}

std::optional<std::int64_t> gemm_min_bytes(const gemm_shape &s, precision p) {
  const auto elements =
      detail::checked_sum({detail::checked_product({s.m, s.k}), detail::checked_product({s.k, s.n}),
                           detail::checked_product({s.m, s.n})});
  if (!elements)
    return std::nullopt;
  return detail::checked_product({*elements, s.batch_count, element_bytes(p)});
}

gemm_shape data_grad_shape(const gemm_shape &forward) {
  return {forward.m, forward.k, forward.n, forward.batch_count};
}

gemm_shape weight_grad_shape(const gemm_shape &forward) {
  return {forward.k, forward.n, forward.m, forward.batch_count};
}

int row_alignment_bytes(std::int64_t elements, precision p) {
  const std::int64_t bytes = elements * element_bytes(p);
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
