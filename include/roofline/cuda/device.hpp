// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/device_description.hpp"
#include "roofline/device_report.hpp"
#include "roofline/host_floor.hpp"

#include <functional>
#include <optional>
#include <string>

namespace roofline::cuda {

/// GPUs the CUDA runtime sees; 0 when there is none or no usable driver. Never throws.
int device_count() noexcept;

/// The device query of GPU `ordinal`. Throws cuda_error.
device_description describe_device(int ordinal = 0);

/// The GPU as queried, its theoretical roofline, its datasheet match and its cached ceilings.
device_report local_device_report(int ordinal = 0);

/// local_device_report() with measured ceilings: the cached ones, or (when none are cached or
/// `refresh`) measured now and saved to the cache. `progress` sees each measurement's name.
device_report measured_device_report(int ordinal, bool refresh,
                                     const std::function<void(const std::string &)> &progress = {});

/// The roofline `--gpu auto` analyses against, and a line saying where its numbers come from.
struct local_gpu {
  gpu_spec spec;      ///< with the measured ceilings and fitted model, where there are any
  gpu_spec datasheet; ///< the same GPU on paper (its catalog spec, else the theoretical roofline)
  std::string selection;
  host_floor host; ///< this machine's, measured with the ceilings; else typical_host_floor()
};

/// The local GPU (ordinal 0) as local_spec() builds it; nullopt when there is no GPU. A local
/// calibration the library cannot use (written by an older version) is left out, and the
/// selection text says so.
std::optional<local_gpu> find_local_gpu();

/// This machine's host floor: measured with GPU 0's cached ceilings, else typical_host_floor().
host_floor local_host_floor();

} // namespace roofline::cuda
