// SPDX-License-Identifier: Apache-2.0
#include "roofline/model/precision.hpp"

namespace roofline {

namespace {

constexpr std::array<enum_name<precision>, 8> precision_names{{
    {precision::fp64, "fp64"},
    {precision::fp32, "fp32"},
    {precision::tf32, "tf32"},
    {precision::fp16, "fp16"},
    {precision::bf16, "bf16"},
    {precision::fp8, "fp8"},
    {precision::int8, "int8"},
    {precision::fp4, "fp4"},
}};

} // namespace

template <> const enum_table<precision> &names_of<precision>() {
  static constexpr enum_table<precision> table{precision_names};
  return table;
}

std::string_view to_string(precision p) {
  return names_of<precision>().name(p);
}

std::optional<precision> parse_precision(std::string_view name) {
  return names_of<precision>().parse(name);
}

int element_bytes(precision p) {
  switch (p) {
  case precision::fp64: return 8;
  case precision::fp32:
  case precision::tf32:
    return 4; // tf32 is an fp32 tensor read by the tensor cores at reduced precision
  case precision::fp16:
  case precision::bf16: return 2;
  case precision::fp8:
  case precision::int8:
  case precision::fp4: return 1;
  }
  return 0;
}

int activation_bytes(precision p) {
  return p == precision::fp8 || p == precision::int8 || p == precision::fp4
             ? element_bytes(precision::bf16)
             : element_bytes(p);
}

std::string peak_name(precision p) {
  return runs_on_tensor_cores(p) ? std::string(to_string(p)) + " tensor"
                                 : std::string(to_string(p));
}

} // namespace roofline
