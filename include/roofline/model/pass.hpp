// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string_view>

namespace roofline {

/// Which pass of training an op belongs to (inference has only the forward pass); `optimizer`:
/// the optimizer's step of a captured program (an op trace).
enum class pass { forward, data_grad, weight_grad, optimizer };

/// "forward", "data-grad", "weight-grad", "optimizer".
std::string_view to_string(pass p);

} // namespace roofline
