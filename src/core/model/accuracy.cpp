// SPDX-License-Identifier: Apache-2.0
#include "roofline/model/accuracy.hpp"

#include <array>

namespace roofline {

namespace {

constexpr std::array<enum_name<op_class>, 5> class_names{{
    {op_class::gemm, "gemm"},
    {op_class::attention, "attention"},
    {op_class::memory, "memory"},
    {op_class::conv, "conv"},
    {op_class::all_reduce, "all_reduce"},
}};

} // namespace

template <> const enum_table<op_class> &names_of<op_class>() {
  static constexpr enum_table<op_class> table{class_names};
  return table;
}

std::string_view to_string(op_class c) {
  return names_of<op_class>().name(c);
}

accuracy_band accuracy_bands::of(op_class c) const {
  const auto found = by_class.find(c);
  return found == by_class.end() ? default_accuracy_band : found->second;
}

} // namespace roofline
