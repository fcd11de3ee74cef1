// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/analysis/measurement_layer.hpp"

namespace roofline::cuda {

/// This library as the measurement layer (roofline/analysis/measurement_layer.hpp): hand it to
/// roofline::choose_gpu (`auto`), pipeline_options::layer (measurements) and
/// compare_request::layer (`local`) to analyse with the local GPU without the plugin.
const measurement_layer &layer();

} // namespace roofline::cuda
