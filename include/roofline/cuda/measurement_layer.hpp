// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/measurement_layer.hpp"

namespace roofline::cuda {

/// This library as the measurement layer (roofline/measurement_layer.hpp): give it to
/// roofline::use_measurement_layer() to analyse with `auto` GPUs and measurements without the
/// plugin.
const measurement_layer &layer();

} // namespace roofline::cuda
