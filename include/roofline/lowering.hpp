// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/network.hpp"
#include "roofline/op.hpp"

#include <vector>

namespace roofline {

/// Lowers a network to its ops, in execution order: the forward pass, then (training) the backward
/// pass in reverse layer order. Throws input_error for shapes that make no sense (a conv whose
/// kernel exceeds its padded input, an op whose size is unknown) or whose counts overflow 64 bits.
std::vector<op> lower(const network &net);

} // namespace roofline
