// SPDX-License-Identifier: Apache-2.0
#include "roofline/cuda/ceiling_probe.hpp"
#include "roofline/cuda/device.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>

using namespace roofline;

TEST_CASE("the device query describes a real GPU") {
  REQUIRE(cuda::device_count() > 0);
  const device_description d = cuda::describe_device(0);
  CHECK_FALSE(d.name.empty());
  CHECK(d.uuid.rfind("GPU-", 0) == 0);
  CHECK(d.uuid.size() == 40);
  CHECK(d.sm_count > 0);
  CHECK(d.sm_clock_hz > 1e8);
  CHECK(d.memory_clock_hz > 1e8);
  CHECK(d.memory_bus_width_bits >= 64);
  CHECK(d.memory_bytes > 1e9);
  const gpu_spec theory = theoretical_spec(d);
  CHECK(theory.dram_bytes_per_s ==
        doctest::Approx(2.0 * d.memory_clock_hz * d.memory_bus_width_bits / 8));
  MESSAGE(d.name << ": " << d.sm_count << " SMs, " << d.sm_clock_hz / 1e6 << " MHz, memory "
                 << d.memory_clock_hz / 1e6 << " MHz x " << d.memory_bus_width_bits << " bit");
}

TEST_CASE("measured ceilings are physically possible, complete, and survive the cache") {
  const std::filesystem::path cache =
      std::filesystem::temp_directory_path() / "roofline-gpu-test-cache";
  std::filesystem::remove_all(cache);
  setenv("ROOFLINE_CACHE_DIR", cache.c_str(), 1);
  const device_report measured = cuda::measured_device_report(0, true);
  REQUIRE(measured.ceilings);
  for (const ceiling_result &r : measured.ceilings->results) {
    CAPTURE(r.name);
    CHECK(r.failure.empty());
    CHECK(r.value > 0);
  }
  // Above the theoretical peak means a kernel did less work than counted (a measurement bug).
  const auto dram = measured.ceilings->dram_bytes_per_s();
  REQUIRE(dram);
  CHECK(*dram <= 1.02 * measured.theoretical.dram_bytes_per_s);
  for (const auto &[p, rate] : measured.theoretical.peaks)
    if (auto flops = measured.ceilings->flop_per_s(p)) {
      CAPTURE(to_string(p));
      CHECK(*flops <= 1.02 * rate.dense_flop_per_s);
    }
  const device_report cached = cuda::local_device_report(0);
  REQUIRE(cached.ceilings);
  CHECK(cached.ceilings->results.size() == measured.ceilings->results.size());
  CHECK(*cached.ceilings->dram_bytes_per_s() == doctest::Approx(*dram));
  const auto local = cuda::find_local_gpu();
  REQUIRE(local);
  CHECK(local->spec.dram_bytes_per_s == doctest::Approx(*dram));
  std::filesystem::remove_all(cache);
}
