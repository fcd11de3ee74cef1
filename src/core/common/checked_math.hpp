// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/common/error.hpp"

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>

namespace roofline::detail {

/// The product of non-negative factors, or nullopt when it overflows 64 bits.
inline std::optional<std::int64_t> checked_product(std::initializer_list<std::int64_t> factors) {
  std::int64_t product = 1;
  for (std::int64_t factor : factors)
    if (__builtin_mul_overflow(product, factor, &product))
      return std::nullopt;
  return product;
}

/// The sum of non-negative terms, or nullopt when it overflows 64 bits.
inline std::optional<std::int64_t>
checked_sum(std::initializer_list<std::optional<std::int64_t>> terms) {
  std::int64_t sum = 0;
  for (const auto &term : terms)
    if (!term || __builtin_add_overflow(sum, *term, &sum))
      return std::nullopt;
  return sum;
}

/// `value` (non-negative) rounded up to a multiple of `multiple`; nullopt where that overflows.
inline std::optional<std::int64_t> checked_round_up(std::int64_t value, std::int64_t multiple) {
  const std::optional<std::int64_t> sum = checked_sum({value, multiple - 1});
  if (!sum)
    return std::nullopt;
  return *sum / multiple * multiple;
}

/// `value`, or an input_error at `where` saying that `subject`'s `what` overflows.
inline std::int64_t require_no_overflow(std::optional<std::int64_t> value,
                                        const source_location &where, const std::string &subject,
                                        const std::string &what) {
  if (!value)
    throw input_error(where, subject + ": " + what + " overflows a 64-bit integer");
  return *value;
}

} // namespace roofline::detail
