// SPDX-License-Identifier: Apache-2.0
#include "nvml_library.hpp"

#include "roofline/common/error.hpp"
#include "roofline/cuda/detail/cuda_check.hpp"
#include "shared_library.hpp"

#include <cuda_runtime_api.h>

#include <array>
#include <utility>

namespace roofline::cuda::detail {

namespace {

// NVML's C ABI (nvml.h, stable across drivers): an nvmlReturn_t is an int, 0 success.
using nvml_return = int;
using nvml_device_handle = void *;
constexpr unsigned nvml_clock_sm = 0;

struct nvml_api {
  std::string path;
  nvml_return (*init)() = nullptr;
  const char *(*error_string)(nvml_return) = nullptr;
  nvml_return (*by_pci_bus_id)(const char *, nvml_device_handle *) = nullptr;
  nvml_return (*energy)(nvml_device_handle, unsigned long long *) = nullptr;
  nvml_return (*power)(nvml_device_handle, unsigned *) = nullptr;
  nvml_return (*clock)(nvml_device_handle, unsigned, unsigned *) = nullptr;
  nvml_return (*limit)(nvml_device_handle, unsigned *) = nullptr;
  nvml_return (*reasons)(nvml_device_handle, unsigned long long *) = nullptr;
};

/// What a missing function means.
const char *const needs = "reading the GPU's power needs the driver's NVML";

nvml_api open_nvml() {
  const loaded_library library = load_library(
      {"NVML", "reading the GPU's power", "ROOFLINE_NVML_LIBRARY", "libnvidia-ml.so.1", ""});
  nvml_api api;
  api.path = library.path;
  library.resolve("nvmlInit_v2", api.init, needs);
  library.resolve("nvmlErrorString", api.error_string, needs);
  library.resolve("nvmlDeviceGetHandleByPciBusId_v2", api.by_pci_bus_id, needs);
  library.resolve("nvmlDeviceGetTotalEnergyConsumption", api.energy, needs);
  library.resolve("nvmlDeviceGetPowerUsage", api.power, needs);
  library.resolve("nvmlDeviceGetClockInfo", api.clock, needs);
  library.resolve("nvmlDeviceGetEnforcedPowerLimit", api.limit, needs);
  library.resolve("nvmlDeviceGetCurrentClocksEventReasons", api.reasons, needs);
  if (const nvml_return status = api.init(); status != 0)
    throw error(std::string("NVML did not initialise (") + api.error_string(status) + ") in " +
                api.path);
  return api;
}

/// NVML, loaded and initialised once per process (a failed load is tried again next time).
const nvml_api &nvml() {
  static const nvml_api api = open_nvml();
  return api;
}

void check(nvml_return status, const char *call) {
  if (status != 0)
    throw error(std::string("NVML error in ") + call + ": " + nvml().error_string(status));
}

} // namespace

nvml_device::nvml_device(int device) {
  std::array<char, 32> bus_id{};
  ROOFLINE_CUDA_CHECK(
      cudaDeviceGetPCIBusId(bus_id.data(), static_cast<int>(bus_id.size()), device));
  check(nvml().by_pci_bus_id(bus_id.data(), &m_handle), "nvmlDeviceGetHandleByPciBusId_v2");
}

double nvml_device::energy_j() const {
  unsigned long long millijoules = 0;
  check(nvml().energy(m_handle, &millijoules), "nvmlDeviceGetTotalEnergyConsumption");
  return static_cast<double>(millijoules) * 1e-3;
}

double nvml_device::power_w() const {
  unsigned milliwatts = 0;
  check(nvml().power(m_handle, &milliwatts), "nvmlDeviceGetPowerUsage");
  return milliwatts * 1e-3;
}

unsigned nvml_device::sm_clock_mhz() const {
  unsigned mhz = 0;
  check(nvml().clock(m_handle, nvml_clock_sm, &mhz), "nvmlDeviceGetClockInfo");
  return mhz;
}

double nvml_device::limit_w() const {
  unsigned milliwatts = 0;
  check(nvml().limit(m_handle, &milliwatts), "nvmlDeviceGetEnforcedPowerLimit");
  return milliwatts * 1e-3;
}

std::string nvml_device::throttle_reasons() const {
  unsigned long long bits = 0;
  check(nvml().reasons(m_handle, &bits), "nvmlDeviceGetCurrentClocksEventReasons");
  // nvmlClocksEventReasons (nvml.h); idle and the applications' clocks are no slowdown.
  constexpr std::pair<unsigned long long, const char *> names[] = {
      {0x4, "sw power cap"}, {0x8, "hw slowdown"},     {0x20, "sw thermal"},
      {0x40, "hw thermal"},  {0x80, "hw power brake"}, {0x10, "sync boost"}};
  std::string text;
  for (const auto &[bit, name] : names)
    if (bits & bit)
      text += (text.empty() ? "" : ", ") + std::string(name);
  return text;
}

} // namespace roofline::cuda::detail
