// SPDX-License-Identifier: Apache-2.0
#include "roofline/precision.hpp"

namespace roofline {

std::string_view to_string(precision p) {
  switch (p) {
  case precision::fp64: return "fp64";
  case precision::fp32: return "fp32";
  case precision::tf32: return "tf32";
  case precision::fp16: return "fp16";
  case precision::bf16: return "bf16";
  case precision::fp8: return "fp8";
  case precision::int8: return "int8";
  }
  return "?";
}

std::optional<precision> parse_precision(std::string_view name) {
  for (precision p : all_precisions)
    if (to_string(p) == name)
      return p;
  return std::nullopt;
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
  case precision::int8: return 1;
  }
  return 0;
}

int activation_bytes(precision p) {
  return p == precision::fp8 || p == precision::int8 ? element_bytes(precision::bf16)
                                                     : element_bytes(p);
}

std::string peak_name(precision p) {
  return runs_on_tensor_cores(p) ? std::string(to_string(p)) + " tensor"
                                 : std::string(to_string(p));
}

} // namespace roofline
