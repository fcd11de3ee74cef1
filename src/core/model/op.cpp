// SPDX-License-Identifier: Apache-2.0
#include "roofline/model/op.hpp"

#include "checked_math.hpp"
#include "roofline/model/collectives.hpp"

#include <utility>

namespace roofline {

std::string_view to_string(pass p) {
  switch (p) {
  case pass::forward: return "forward";
  case pass::data_grad: return "data-grad";
  case pass::weight_grad: return "weight-grad";
  case pass::optimizer: return "optimizer";
  }
  return "?";
}

std::string op::precision_label() const {
  std::string label(to_string(precision));
  if (gemm && gemm->weights)
    label += "+int" + std::to_string(gemm->weights->bits) + "w";
  return label;
}

bool op::is_collective() const noexcept {
  return parse_collective(kind).has_value();
}

double op::arithmetic_intensity() const noexcept {
  return bytes > 0 ? static_cast<double>(flops) / static_cast<double>(bytes) : 0.0;
}

op make_gemm_op(std::string layer, const gemm_shape &shape, precision p, source_location where) {
  op result;
  // The messages are written only on overflow: this runs for every GEMM.
  const std::optional<std::int64_t> flops = gemm_flops(shape), bytes = gemm_min_bytes(shape, p);
  result.flops = flops ? *flops
                       : detail::require_no_overflow(flops, where, "layer `" + layer + "`",
                                                     "its FLOP count (2·M·N·K·batch_count)");
  result.bytes =
      bytes ? *bytes
            : detail::require_no_overflow(bytes, where, "layer `" + layer + "`", "its byte count");
  result.layer = std::move(layer);
  result.kind = "gemm";
  result.precision = p;
  result.gemm = shape;
  result.where = std::move(where);
  return result;
}

} // namespace roofline
