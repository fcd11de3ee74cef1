// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string_view>

namespace roofline {

/// Which pass of training an op belongs to (inference has only the forward pass).
enum class pass { forward, data_grad, weight_grad };

/// "forward", "data-grad", "weight-grad".
std::string_view to_string(pass p);

} // namespace roofline
