// SPDX-License-Identifier: Apache-2.0
#pragma once
// NVML, the driver's management library (libnvidia-ml.so.1), loaded at run time (never linked:
// only `device --measure` reads it, and a machine without the driver's library still runs
// everything else). The few calls used are declared here, as NVML's C ABI has them (no nvml.h
// is needed to build).

#include <cstdint>
#include <string>

namespace roofline::cuda::detail {

/// One GPU as NVML reads it.
class nvml_device {
public:
  /// The GPU of CUDA ordinal `device`, matched by its PCI bus id. Throws roofline::error when
  /// NVML cannot be loaded or initialised (the message says why), or does not know the GPU.
  explicit nvml_device(int device);

  /// Energy used since the driver loaded, joules (NVML's counter: millijoules).
  double energy_j() const;
  /// The board's draw now, watts (NVML averages it over about a second).
  double power_w() const;
  /// The SM clock now, MHz.
  unsigned sm_clock_mhz() const;
  /// The power limit the driver enforces, watts.
  double limit_w() const;
  /// Why the clocks are below their maximum now, in words ("sw power cap, hw slowdown"); "" for
  /// no reason.
  std::string throttle_reasons() const;

private:
  void *m_handle = nullptr; ///< nvmlDevice_t
};

} // namespace roofline::cuda::detail
