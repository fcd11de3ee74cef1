// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/analysis/analysis.hpp"
#include "roofline/analysis/measurement.hpp"
#include "roofline/model/gpu_spec.hpp"

#include "json_writer.hpp"

#include <nlohmann/json.hpp>

// JSON objects that several documents share, written in one place.
namespace roofline::detail {

/// A GPU: identity, memory, and every peak with its dense (and sparse) ridge point.
nlohmann::json device_json(const gpu_spec &d);

/// `range` in microseconds as {"low": …, "high": …}: what every predicted time's `…_range_us`
/// field holds beside it.
nlohmann::json range_us_json(const time_range &range);

/// A memory fit as an object (null when there is none).
void write_memory(json_writer &w, const std::optional<memory_use> &memory);

/// One op of an analysis as fields of the object open in `w`: its shape, work and prediction;
/// with `measured`, what running it showed.
void write_op_fields(json_writer &w, const analysed_op &entry,
                     const measurement *measured = nullptr);

} // namespace roofline::detail
