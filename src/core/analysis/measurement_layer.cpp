// SPDX-License-Identifier: Apache-2.0
#include "roofline/analysis/measurement_layer.hpp"

#include "roofline/common/error.hpp"

namespace roofline {

measurement_layer_ref measurement_layer_ref::none(std::string why) {
  measurement_layer_ref ref;
  ref.missing = std::move(why);
  return ref;
}

const measurement_layer &measurement_layer_ref::required(std::string_view needing,
                                                         std::string_view advice) const {
  if (layer)
    return *layer;
  throw error(std::string(needing) + " needs the CUDA measurement layer: " + missing +
              std::string(advice));
}

} // namespace roofline
