// SPDX-License-Identifier: Apache-2.0
#include "roofline/cuda/device.hpp"

#include "roofline/cuda/detail/cuda_check.hpp"

#include <cstdio>

namespace roofline::cuda {

int device_count() noexcept {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError(); // no driver or no GPU: clear the error, report none
    return 0;
  }
  return count;
}

namespace {

int attribute(cudaDeviceAttr which, int ordinal) {
  int value = 0;
  ROOFLINE_CUDA_CHECK(cudaDeviceGetAttribute(&value, which, ordinal));
  return value;
}

std::string uuid_text(const cudaUUID_t &uuid) {
  const auto *b = reinterpret_cast<const unsigned char *>(uuid.bytes);
  char text[64];
  std::snprintf(text, sizeof text,
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                b[14], b[15]);
  return text;
}

std::string version_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

} // namespace

device_description describe_device(int ordinal) {
  cudaDeviceProp properties{};
  ROOFLINE_CUDA_CHECK(cudaGetDeviceProperties(&properties, ordinal));
  device_description d;
  d.ordinal = ordinal;
  d.name = properties.name;
  d.uuid = uuid_text(properties.uuid);
  d.cc_major = properties.major;
  d.cc_minor = properties.minor;
  d.sm_count = properties.multiProcessorCount;
  d.l2_bytes = properties.l2CacheSize;
  d.memory_bytes = static_cast<double>(properties.totalGlobalMem);
  // CUDA 13 removed the clock fields from cudaDeviceProp: the attributes report them, in kHz.
  d.sm_clock_hz = attribute(cudaDevAttrClockRate, ordinal) * 1e3;
  d.memory_clock_hz = attribute(cudaDevAttrMemoryClockRate, ordinal) * 1e3;
  d.memory_bus_width_bits = attribute(cudaDevAttrGlobalMemoryBusWidth, ordinal);
  int driver = 0, runtime = 0;
  ROOFLINE_CUDA_CHECK(cudaDriverGetVersion(&driver));
  ROOFLINE_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  d.driver_version = "CUDA " + version_text(driver);
  d.runtime_version = "CUDA " + version_text(runtime);
  return d;
}

} // namespace roofline::cuda
