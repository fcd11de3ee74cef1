// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/gpu_spec.hpp"
#include "roofline/report.hpp"

#include <nlohmann/json.hpp>

// JSON objects that several documents share, written in one place.
namespace roofline::detail {

/// A GPU: identity, memory, and every peak with its dense (and sparse) ridge point.
nlohmann::json device_json(const gpu_spec &d);

/// One op of an analysis: its shape, work, prediction and (with --measure) measurement.
nlohmann::json op_json(const op_report &entry);

} // namespace roofline::detail
