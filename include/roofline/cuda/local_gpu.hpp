// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/model/device_report.hpp"

#include <functional>
#include <optional>
#include <string>

// The local GPU as the analyses see it: the device query with its datasheet match and its cached
// (or freshly measured) ceilings.
namespace roofline::cuda {

/// The GPU as queried, its theoretical roofline, its datasheet match and its cached ceilings.
device_report local_device_report(int ordinal = 0);

/// local_device_report() with measured ceilings: the cached ones, or (when none are cached or
/// `refresh`) measured now and saved to the cache. `progress` sees each measurement's name.
device_report measured_device_report(int ordinal, bool refresh,
                                     const std::function<void(const std::string &)> &progress = {});

/// The local GPU (ordinal 0) as local_spec() builds it; nullopt when there is no GPU. A local
/// calibration the library cannot use (written by an older version) is left out, and the
/// selection text says so.
std::optional<local_gpu> find_local_gpu();

} // namespace roofline::cuda
