// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace roofline::detail {

/// One hash of several integers for the hashed tables' keys. Every value is mixed as an unsigned
/// 64-bit word, so no arithmetic on a caller's signed sizes can overflow.
template <class Values> std::size_t hash_integers(const Values &values) noexcept {
  std::uint64_t h = 0x9e3779b97f4a7c15ULL;
  for (const auto v : values) {
    h ^= static_cast<std::uint64_t>(v) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    h *= 0xff51afd7ed558ccdULL;
  }
  return static_cast<std::size_t>(h ^ (h >> 32));
}

/// Integers as the key of a hashed table.
template <std::size_t size> struct integers_key {
  std::array<std::int64_t, size> values;

  bool operator==(const integers_key &o) const { return values == o.values; }
  struct hash {
    std::size_t operator()(const integers_key &key) const noexcept {
      return hash_integers(key.values);
    }
  };
};

} // namespace roofline::detail
