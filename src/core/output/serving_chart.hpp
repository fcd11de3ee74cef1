// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/compare/serving.hpp"

#include <string>

namespace roofline::detail {

/// The throughput–latency curves of a serving question as a standalone SVG: output tokens per
/// second per GPU against TPOT, one curve per setup with the batch along it, the chosen batch
/// ringed and the TPOT target drawn.
std::string serving_curve_svg(const serving_comparison &c);

} // namespace roofline::detail
