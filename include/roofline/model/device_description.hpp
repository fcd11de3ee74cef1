// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/model/gpu_spec.hpp"
#include "roofline/model/precision.hpp"
#include "roofline/model/spec_catalog.hpp"

#include <map>
#include <optional>
#include <string>

namespace roofline {

/// What a device query reports about a GPU (filled by roofline::measure; plain data here so that
/// the derivations below run and are tested without CUDA).
struct device_description {
  int ordinal = 0;
  std::string name; ///< "NVIDIA H200"
  std::string uuid; ///< "GPU-xxxxxxxx-..."
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  double sm_clock_hz = 0;     ///< maximum SM clock
  double memory_clock_hz = 0; ///< as the driver reports it (DDR: data moves on both edges)
  int memory_bus_width_bits = 0;
  double l2_bytes = 0;
  double memory_bytes = 0;
  std::string driver_version;
  std::string runtime_version;
};

/// Dense operations per clock per SM (FMA = 2) of each precision for an architecture.
/// fp64 is the best fp64 path (tensor cores from sm_80 on the data-centre parts).
struct sm_rates {
  std::string architecture;
  std::map<precision, double> flop_per_clock;
};

/// The rates of compute capability major.minor; GeForce parts run fp16/tf32/fp8 tensor ops with
/// fp32 accumulate at half rate. nullopt for architectures the table does not know.
std::optional<sm_rates> sm_rates_for(int cc_major, int cc_minor, bool geforce);

/// 2 × memory clock × bus width / 8 (double data rate).
double theoretical_dram_bytes_per_s(const device_description &d);

/// The theoretical roofline from the device query: peaks = SMs × max clock × per-SM rate.
/// Throws roofline::error for an architecture the rate table does not know.
gpu_spec theoretical_spec(const device_description &d);

/// The catalog spec that describes this device (same compute capability and SM count, memory
/// size within 15%), or nullptr.
const gpu_spec *matching_spec(const spec_catalog &catalog, const device_description &d);

} // namespace roofline
