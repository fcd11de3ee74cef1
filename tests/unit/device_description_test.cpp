// SPDX-License-Identifier: Apache-2.0
// device_description: the theoretical DRAM bandwidth and peaks a device query implies (SMs × clock
// × per-SM rate), the per-architecture rate table with its GeForce half rates, and matching a
// queried device to its datasheet spec in the catalog. Expected values are worked out by hand
// below.
#include "roofline/common/error.hpp"
#include "roofline/model/device_description.hpp"
#include "roofline/model/precision.hpp"
#include "roofline/model/spec_catalog.hpp"

#include "test_support.hpp"

#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <string_view>
#include <utility>

using namespace roofline;
using namespace roofline::test;

namespace {

/// H100 SXM5 80 GB: the same GH100 (132 SMs, cc 9.0) with 80 GB.
device_description h100_description() {
  device_description d = h200_description();
  d.name = "NVIDIA H100 80GB HBM3";
  d.memory_clock_hz = 2619e6;
  d.memory_bus_width_bits = 5120;
  d.memory_bytes = 80e9;
  return d;
}

device_description description(const std::string &name, int major, int minor, int sms,
                               double clock_hz, double memory_bytes) {
  device_description d;
  d.name = name;
  d.cc_major = major;
  d.cc_minor = minor;
  d.sm_count = sms;
  d.sm_clock_hz = clock_hz;
  d.memory_bytes = memory_bytes;
  d.memory_clock_hz = 1e9;
  d.memory_bus_width_bits = 4096;
  return d;
}

double per_clock(const std::optional<sm_rates> &rates, precision p) {
  REQUIRE(rates.has_value());
  REQUIRE_MESSAGE(rates->flop_per_clock.count(p) == 1, "no " << to_string(p) << " rate");
  return rates->flop_per_clock.at(p);
}

std::string matched_name(const device_description &d) {
  const gpu_spec *spec = matching_spec(spec_catalog::builtin(), d);
  return spec ? spec->name : std::string("(none)");
}

} // namespace

TEST_CASE("H200 theoretical DRAM bandwidth: 2 × 3201 MHz × 6016 bit / 8 = 4.8143 TB/s") {
  // 2 · 3.201e9 · 6016 / 8 = 2 · 3.201e9 · 752 = 4,814,304,000,000 B/s
  CHECK(theoretical_dram_bytes_per_s(h200_description()) ==
        doctest::Approx(4.814304e12).epsilon(1e-12));
  // V100 SXM2: 2 · 877 MHz · 4096 bit / 8 = 2 · 0.877e9 · 512 = 898.048 GB/s (datasheet 900)
  device_description v100 = description("Tesla V100-SXM2-32GB", 7, 0, 80, 1530e6, 34.09e9);
  v100.memory_clock_hz = 877e6;
  CHECK(theoretical_dram_bytes_per_s(v100) == doctest::Approx(898.048e9).epsilon(1e-12));
  // Nothing reported: 0, not a crash.
  CHECK(theoretical_dram_bytes_per_s(device_description{}) == 0);
}

TEST_CASE("H200 theoretical spec: peaks = 132 SMs × 1.98 GHz × Hopper FLOP/clock/SM") {
  const gpu_spec spec = theoretical_spec(h200_description());
  CHECK(spec.name == "local");
  CHECK(spec.display_name == "NVIDIA H200");
  CHECK(spec.architecture == "hopper");
  CHECK(spec.compute_capability == "9.0");
  CHECK(spec.sm_count == 132);
  CHECK(spec.boost_clock_hz == doctest::Approx(1.98e9));
  CHECK(spec.memory_bytes == doctest::Approx(150.1e9));
  CHECK(spec.l2_bytes == doctest::Approx(62914560));
  CHECK(spec.origin == "device query");
  CHECK(spec.dram_bytes_per_s == doctest::Approx(4.814304e12).epsilon(1e-12));

  // 132 · 1.98e9 = 2.6136e11 SM-clocks per second
  // fp16 dense: 2.6136e11 · 4096 = 1.07053056e15 (datasheet 989.4e12 assumes ~1.83 GHz)
  CHECK(spec.peak_flop_per_s(precision::fp16) == doctest::Approx(1.07053056e15).epsilon(1e-12));
  CHECK(spec.peak_flop_per_s(precision::bf16) == doctest::Approx(1.07053056e15).epsilon(1e-12));
  // fp32 (SIMT): 2.6136e11 · 256 = 6.690816e13 (datasheet 67)
  CHECK(spec.peak_flop_per_s(precision::fp32) == doctest::Approx(6.690816e13).epsilon(1e-12));
  // fp64 (tensor): 2.6136e11 · 256 = 6.690816e13
  CHECK(spec.peak_flop_per_s(precision::fp64) == doctest::Approx(6.690816e13).epsilon(1e-12));
  // fp8: 2.6136e11 · 8192 = 2.14106112e15; int8 the same
  CHECK(spec.peak_flop_per_s(precision::fp8) == doctest::Approx(2.14106112e15).epsilon(1e-12));
  CHECK(spec.peak_flop_per_s(precision::int8) == doctest::Approx(2.14106112e15).epsilon(1e-12));
  // tf32: 2.6136e11 · 2048 = 5.3526528e14
  CHECK(spec.peak_flop_per_s(precision::tf32) == doctest::Approx(5.3526528e14).epsilon(1e-12));
  // A device query knows no sparse rates.
  for (const auto &entry : spec.peaks) {
    const std::string_view p =
        to_string(entry.first); // structured bindings cannot be captured in C++17
    CAPTURE(p);
    CHECK_FALSE(entry.second.sparse_flop_per_s.has_value());
  }
  CHECK(spec.peaks.size() == 7);
  // fp16 ridge: 1.07053056e15 / 4.814304e12 = 222.3646 FLOP/B
  CHECK(spec.ridge_intensity(precision::fp16) == doctest::Approx(222.3646).epsilon(1e-6));
}

TEST_CASE("V100 derivation cross-check: 80 SMs × 1.53 GHz × 1024 = 125.3 TFLOP/s (datasheet 125)") {
  const gpu_spec spec =
      theoretical_spec(description("Tesla V100-SXM2-32GB", 7, 0, 80, 1530e6, 34.09e9));
  CHECK(spec.architecture == "volta");
  // 80 · 1.53e9 · 1024 = 1.253376e14
  CHECK(spec.peak_flop_per_s(precision::fp16) == doctest::Approx(1.253376e14).epsilon(1e-12));
  // fp32 80 · 1.53e9 · 128 = 1.56672e13 (datasheet 15.7); fp64 · 64 = 7.8336e12 (datasheet 7.8)
  CHECK(spec.peak_flop_per_s(precision::fp32) == doctest::Approx(1.56672e13).epsilon(1e-12));
  CHECK(spec.peak_flop_per_s(precision::fp64) == doctest::Approx(7.8336e12).epsilon(1e-12));
  // Within 0.5% of the datasheet figures the catalog carries (fp64: 7.8336 vs 7.8 = +0.43%).
  const gpu_spec *sheet = spec_catalog::builtin().find("v100-sxm2");
  REQUIRE(sheet != nullptr);
  for (precision p : {precision::fp64, precision::fp32, precision::fp16}) {
    CAPTURE(to_string(p));
    CHECK(spec.peak_flop_per_s(p) == doctest::Approx(sheet->peak_flop_per_s(p)).epsilon(5e-3));
  }
  // Volta has no bf16/tf32/fp8/int8 path: the spec says so rather than inventing one.
  CHECK_FALSE(spec.supports(precision::bf16));
  CHECK_FALSE(spec.supports(precision::tf32));
  CHECK_THROWS_AS((void)spec.peak_flop_per_s(precision::bf16), input_error);
}

TEST_CASE("A100 and L4 cross-checks: theoretical peaks agree with the datasheets to 1%") {
  // A100: 108 · 1.41e9 · 2048 = 3.1186944e14 (datasheet 312)
  const gpu_spec a100 =
      theoretical_spec(description("NVIDIA A100-SXM4-80GB", 8, 0, 108, 1410e6, 85.9e9));
  CHECK(a100.architecture == "ampere");
  CHECK(a100.peak_flop_per_s(precision::fp16) == doctest::Approx(3.1186944e14).epsilon(1e-12));
  // L4 (Ada, not GeForce): fp16 58 · 2.04e9 · 1024 = 1.2115968e14 (datasheet 121), fp8 · 2048
  // = 2.4231936e14
  const gpu_spec l4 = theoretical_spec(description("NVIDIA L4", 8, 9, 58, 2040e6, 24e9));
  CHECK(l4.architecture == "ada");
  CHECK(l4.peak_flop_per_s(precision::fp16) == doctest::Approx(1.2115968e14).epsilon(1e-12));
  CHECK(l4.peak_flop_per_s(precision::fp8) == doctest::Approx(2.4231936e14).epsilon(1e-12));
  for (const char *name : {"a100-sxm4-80gb", "l4"}) {
    CAPTURE(name);
    const gpu_spec *sheet = spec_catalog::builtin().find(name);
    REQUIRE(sheet != nullptr);
    const gpu_spec &derived = std::string(name) == "l4" ? l4 : a100;
    // e.g. L4 tf32 58 · 2.04e9 · 512 = 60.58e12 vs 60 (0.96%); A100 fp64 108 · 1.41e9 · 128
    // = 19.49e12 vs 19.5
    for (const auto &entry : derived.peaks) {
      const precision p = entry.first;
      CAPTURE(to_string(p));
      REQUIRE(sheet->supports(p));
      // The datasheet's peak as printed: the L4's spec holds it at its sustained clock.
      CHECK(entry.second.dense_flop_per_s ==
            doctest::Approx(sheet->peaks.at(p).dense_flop_per_s).epsilon(0.01));
    }
  }
}

TEST_CASE("GeForce RTX 4090: tf32/fp16/bf16/fp8 at half rate, fp32 and int8 at full rate") {
  // 128 · 2.52e9 = 3.2256e11 SM-clocks/s; Ada fp16 1024 → 512 on GeForce: 1.6515072e14 (datasheet
  // 165.2)
  const gpu_spec spec =
      theoretical_spec(description("NVIDIA GeForce RTX 4090", 8, 9, 128, 2520e6, 25.3e9));
  CHECK(spec.peak_flop_per_s(precision::fp16) == doctest::Approx(1.6515072e14).epsilon(1e-12));
  CHECK(spec.peak_flop_per_s(precision::bf16) == doctest::Approx(1.6515072e14).epsilon(1e-12));
  // tf32 512 → 256: 8.257536e13; fp8 2048 → 1024: 3.3030144e14
  CHECK(spec.peak_flop_per_s(precision::tf32) == doctest::Approx(8.257536e13).epsilon(1e-12));
  CHECK(spec.peak_flop_per_s(precision::fp8) == doctest::Approx(3.3030144e14).epsilon(1e-12));
  // fp32 256 (unchanged): 8.257536e13; int8 2048 (unchanged): 6.6060288e14
  CHECK(spec.peak_flop_per_s(precision::fp32) == doctest::Approx(8.257536e13).epsilon(1e-12));
  CHECK(spec.peak_flop_per_s(precision::int8) == doctest::Approx(6.6060288e14).epsilon(1e-12));
  // ... which is what the rtx-4090 datasheet spec says, to 0.1%.
  const gpu_spec *sheet = spec_catalog::builtin().find("rtx-4090");
  REQUIRE(sheet != nullptr);
  for (precision p : {precision::fp32, precision::tf32, precision::fp16, precision::bf16,
                      precision::fp8, precision::int8}) {
    CAPTURE(to_string(p));
    CHECK(spec.peak_flop_per_s(p) == doctest::Approx(sheet->peak_flop_per_s(p)).epsilon(1e-3));
  }
}

TEST_CASE("sm_rates_for: the rate table by compute capability") {
  SUBCASE("Volta 7.0: fp16 1024, no bf16, tf32, fp8 or int8") {
    const auto volta = sm_rates_for(7, 0, false);
    REQUIRE(volta);
    CHECK(volta->architecture == "volta");
    CHECK(per_clock(volta, precision::fp16) == 1024);
    CHECK(per_clock(volta, precision::fp32) == 128);
    CHECK(per_clock(volta, precision::fp64) == 64);
    CHECK(volta->flop_per_clock.count(precision::bf16) == 0);
    CHECK(volta->flop_per_clock.count(precision::tf32) == 0);
    CHECK(volta->flop_per_clock.count(precision::fp8) == 0);
    CHECK(volta->flop_per_clock.count(precision::int8) == 0);
  }
  SUBCASE("Turing 7.5: int8 2048, fp16 1024, no bf16") {
    const auto turing = sm_rates_for(7, 5, false);
    REQUIRE(turing);
    CHECK(turing->architecture == "turing");
    CHECK(per_clock(turing, precision::int8) == 2048);
    CHECK(per_clock(turing, precision::fp16) == 1024);
    CHECK(turing->flop_per_clock.count(precision::bf16) == 0);
  }
  SUBCASE("A100 8.0: fp16 2048, tf32 1024, int8 4096, fp64 tensor 128, no fp8") {
    const auto a100 = sm_rates_for(8, 0, false);
    REQUIRE(a100);
    CHECK(a100->architecture == "ampere");
    CHECK(per_clock(a100, precision::fp16) == 2048);
    CHECK(per_clock(a100, precision::bf16) == 2048);
    CHECK(per_clock(a100, precision::tf32) == 1024);
    CHECK(per_clock(a100, precision::int8) == 4096);
    CHECK(per_clock(a100, precision::fp64) == 128);
    CHECK(a100->flop_per_clock.count(precision::fp8) == 0);
  }
  SUBCASE("GA10x 8.6: fp16 1024, fp32 256 (dual-issue FP32), no fp8") {
    const auto ga10x = sm_rates_for(8, 6, false);
    REQUIRE(ga10x);
    CHECK(ga10x->architecture == "ampere");
    CHECK(per_clock(ga10x, precision::fp16) == 1024);
    CHECK(per_clock(ga10x, precision::fp32) == 256);
    CHECK(ga10x->flop_per_clock.count(precision::fp8) == 0);
  }
  SUBCASE("Ada 8.9 has fp8 (2048)") {
    const auto ada = sm_rates_for(8, 9, false);
    REQUIRE(ada);
    CHECK(ada->architecture == "ada");
    CHECK(per_clock(ada, precision::fp8) == 2048);
    CHECK(per_clock(ada, precision::fp16) == 1024);
  }
  SUBCASE("Hopper 9.0 and Blackwell 10.0") {
    const auto hopper = sm_rates_for(9, 0, false);
    REQUIRE(hopper);
    CHECK(hopper->architecture == "hopper");
    CHECK(per_clock(hopper, precision::fp16) == 4096);
    CHECK(per_clock(hopper, precision::fp8) == 8192);
    CHECK(per_clock(hopper, precision::tf32) == 2048);
    const auto blackwell = sm_rates_for(10, 0, false);
    REQUIRE(blackwell);
    CHECK(blackwell->architecture == "blackwell");
    CHECK(per_clock(blackwell, precision::fp16) == 8192);
    // B300 and GB300 (10.3) are sm_100's family too.
    REQUIRE(sm_rates_for(10, 3, false));
    CHECK(sm_rates_for(10, 3, false)->architecture == "blackwell");
  }
  SUBCASE("RTX Blackwell 12.0: its own architecture, Ada's per-SM rates") {
    // RTX PRO 6000: 188 · 1024 · 2.617 GHz = 503.8 dense fp16 TFLOPS (RTX Blackwell whitepaper).
    const auto sm120 = sm_rates_for(12, 0, false);
    REQUIRE(sm120);
    CHECK(sm120->architecture == "blackwell-sm120");
    CHECK(per_clock(sm120, precision::fp16) == 1024);
    CHECK(per_clock(sm120, precision::fp8) == 2048);
    CHECK(per_clock(sm120, precision::fp32) == 256);
  }
  SUBCASE("unknown architectures: nullopt") {
    CHECK_FALSE(sm_rates_for(6, 1, false).has_value());  // Pascal
    CHECK_FALSE(sm_rates_for(5, 2, false).has_value());  // Maxwell
    CHECK_FALSE(sm_rates_for(13, 0, false).has_value()); // newer than the table
    CHECK_FALSE(sm_rates_for(0, 0, false).has_value());
  }
}

TEST_CASE("GeForce halves tf32/fp16/bf16/fp8 but not fp32, fp64 or int8, on every architecture") {
  for (const std::pair<int, int> &cc :
       {std::pair{7, 5}, std::pair{8, 0}, std::pair{8, 6}, std::pair{8, 9}, std::pair{9, 0},
        std::pair{10, 0}, std::pair{12, 0}}) {
    const int major = cc.first, minor = cc.second;
    CAPTURE(major);
    CAPTURE(minor);
    const auto full = sm_rates_for(major, minor, false);
    const auto geforce = sm_rates_for(major, minor, true);
    REQUIRE(full);
    REQUIRE(geforce);
    CHECK(geforce->architecture == full->architecture);
    CHECK(geforce->flop_per_clock.size() ==
          full->flop_per_clock.size()); // halving adds no precision
    for (const auto &entry : full->flop_per_clock) {
      const precision p = entry.first;
      const double rate = entry.second;
      CAPTURE(to_string(p));
      const bool half = p == precision::tf32 || p == precision::fp16 || p == precision::bf16 ||
                        p == precision::fp8;
      CHECK(geforce->flop_per_clock.at(p) == (half ? rate / 2 : rate));
    }
  }
  // Ada GeForce concretely: fp16 1024 → 512, fp8 2048 → 1024, int8 stays 2048, fp32 stays 256.
  const auto ada = sm_rates_for(8, 9, true);
  CHECK(per_clock(ada, precision::fp16) == 512);
  CHECK(per_clock(ada, precision::fp8) == 1024);
  CHECK(per_clock(ada, precision::int8) == 2048);
  CHECK(per_clock(ada, precision::fp32) == 256);
}

TEST_CASE("theoretical_spec of an unknown compute capability throws roofline::error naming it") {
  for (const std::pair<int, int> &cc : {std::pair{6, 1}, std::pair{13, 0}}) {
    const int major = cc.first, minor = cc.second;
    CAPTURE(major);
    device_description d = description("NVIDIA Mystery GPU", major, minor, 28, 1.5e9, 12e9);
    try {
      (void)theoretical_spec(d);
      FAIL("no exception");
    } catch (const input_error &) {
      FAIL("an unknown architecture is not the user's input error");
    } catch (const error &e) {
      const std::string what = e.what();
      CHECK(contains(what, std::to_string(major) + "." + std::to_string(minor)));
      CHECK(contains(what, "NVIDIA Mystery GPU"));
      CHECK(contains(what, "choose_gpu::request"));
    }
  }
}

TEST_CASE("matching_spec finds the catalog's datasheet spec of a queried device") {
  SUBCASE("H200 (132 SMs, cc 9.0, 150.1e9 B: within 15% of the 150.8e9 it reports) → h200-sxm") {
    CHECK(matched_name(h200_description()) == "h200-sxm");
    // The pointer is into the catalog itself.
    const gpu_spec *spec = matching_spec(spec_catalog::builtin(), h200_description());
    CHECK(spec == spec_catalog::builtin().find("h200"));
  }
  SUBCASE("H100 (132 SMs, cc 9.0, 80e9 B: 70.8 GB from the H200's 150.8, its window ±22.6 GB) → "
          "h100-sxm5") {
    CHECK(matched_name(h100_description()) == "h100-sxm5");
  }
  SUBCASE("an SM count no catalog GPU has → nullptr") {
    device_description d = h200_description();
    d.sm_count = 100;
    CHECK(matching_spec(spec_catalog::builtin(), d) == nullptr);
  }
  SUBCASE("the right SM count under another compute capability → nullptr") {
    device_description d = h200_description();
    d.cc_major = 8;
    CHECK(matching_spec(spec_catalog::builtin(), d) == nullptr);
  }
  SUBCASE("132 SMs, cc 9.0 but 64 GB: 21.5 GB from the H100's 85.5 (> 12.8), 36.5 from the H100 "
          "NVL's 100.5 (> 15.1) → nullptr") {
    device_description d = h200_description();
    d.memory_bytes = 64e9;
    CHECK(matching_spec(spec_catalog::builtin(), d) == nullptr);
  }
  SUBCASE("H100 NVL (95,830 MiB, 1785 MHz, 2·2539 MHz·6144/8 = 3.9 TB/s) → h100-nvl, not the "
          "GH200 of nearly the same memory (97,871 MiB, 1980 MHz, 4 TB/s)") {
    device_description d = h200_description();
    d.name = "NVIDIA H100 NVL";
    d.memory_bytes = 95830.0 * 1024 * 1024;
    d.sm_clock_hz = 1785e6;
    d.memory_clock_hz = 2539e6;
    d.memory_bus_width_bits = 6144;
    CHECK(matched_name(d) == "h100-nvl");
  }
  SUBCASE("an empty catalog matches nothing") {
    const spec_catalog empty({});
    CHECK(matching_spec(empty, h200_description()) == nullptr);
  }
  SUBCASE("the PCIe parts match their own specs") {
    // Tesla V100-PCIE-32GB: 80 SMs, 1380 MHz, 32510 MiB = 34.09e9 B
    CHECK(matched_name(description("Tesla V100-PCIE-32GB", 7, 0, 80, 1380e6, 34.09e9)) ==
          "v100-pcie");
    // NVIDIA A100 80GB PCIe: 108 SMs, 1410 MHz, 81920 MiB = 85.9e9 B
    CHECK(matched_name(description("NVIDIA A100 80GB PCIe", 8, 0, 108, 1410e6, 85.9e9)) ==
          "a100-pcie-80gb");
  }
}

// Before the fix (src/core/model/device_description.cpp, matching_spec): the catalog holds two specs with
// the same compute capability, SM count and memory size for V100 (v100-pcie, v100-sxm2: 7.0, 80
// SMs, 32 GB) and for A100 80 GB (a100-pcie-80gb, a100-sxm4-80gb: 8.0, 108 SMs, 80 GB).
// matching_spec returns the first in name order, so an SXM part is analysed against its PCIe
// datasheet (V100: 112 instead of 125 TFLOP/s fp16; A100: 1935 instead of 2039 GB/s). The query
// tells them apart: the V100s by max SM clock (1530 vs 1380 MHz), the A100s by theoretical
// bandwidth (2·1593 MHz·5120/8 = 2.039 TB/s vs 2·1512 MHz·5120/8 = 1.935 TB/s) and both by name
// ("SXM"), as matching_spec now does.
TEST_CASE("matching_spec tells SXM from PCIe parts of the same chip and memory size") {
  device_description v100_sxm2 = description("Tesla V100-SXM2-32GB", 7, 0, 80, 1530e6, 34.09e9);
  v100_sxm2.memory_clock_hz = 877e6;
  v100_sxm2.memory_bus_width_bits = 4096;
  CHECK(matched_name(v100_sxm2) == "v100-sxm2");

  device_description a100_sxm4 = description("NVIDIA A100-SXM4-80GB", 8, 0, 108, 1410e6, 85.9e9);
  a100_sxm4.memory_clock_hz = 1593e6;
  a100_sxm4.memory_bus_width_bits = 5120;
  CHECK(matched_name(a100_sxm4) == "a100-sxm4-80gb");
}
