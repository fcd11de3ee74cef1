// SPDX-License-Identifier: Apache-2.0
#include "roofline/model/device_description.hpp"

#include "roofline/common/error.hpp"

#include <cmath>

namespace roofline {

namespace {

using p = precision;

// Dense FLOP per clock per SM (FMA = 2). Hopper's row was read from the counters' peak_sustained
// values (CUPTI) on an H200; the others are datasheet totals
// divided by SMs × clock, cross-checked: V100 80×1024×1.53 GHz = 125 TF, A100 108×2048×1.41 GHz =
// 312 TF. Blackwell (sm_100) is derived from B200 datasheet totals and not verified on hardware;
// sm_120 from the RTX PRO 6000 table of the RTX Blackwell whitepaper, not verified either.
const sm_rates volta{"volta", {{p::fp64, 64}, {p::fp32, 128}, {p::fp16, 1024}}};
const sm_rates turing{"turing", {{p::fp64, 4}, {p::fp32, 128}, {p::fp16, 1024}, {p::int8, 2048}}};
const sm_rates ampere{"ampere",
                      {{p::fp64, 128},
                       {p::fp32, 128},
                       {p::tf32, 1024},
                       {p::fp16, 2048},
                       {p::bf16, 2048},
                       {p::int8, 4096}}};
const sm_rates ga10x{"ampere",
                     {{p::fp64, 4},
                      {p::fp32, 256},
                      {p::tf32, 512},
                      {p::fp16, 1024},
                      {p::bf16, 1024},
                      {p::int8, 2048}}};
const sm_rates ada{"ada",
                   {{p::fp64, 4},
                    {p::fp32, 256},
                    {p::tf32, 512},
                    {p::fp16, 1024},
                    {p::bf16, 1024},
                    {p::fp8, 2048},
                    {p::int8, 2048}}};
const sm_rates hopper{"hopper",
                      {{p::fp64, 256},
                       {p::fp32, 256},
                       {p::tf32, 2048},
                       {p::fp16, 4096},
                       {p::bf16, 4096},
                       {p::fp8, 8192},
                       {p::int8, 8192}}};
const sm_rates blackwell{"blackwell",
                         {{p::fp64, 128},
                          {p::fp32, 256},
                          {p::tf32, 4096},
                          {p::fp16, 8192},
                          {p::bf16, 8192},
                          {p::fp8, 16384},
                          {p::int8, 16384}}};
// sm_120 (RTX PRO 6000 Blackwell, RTX 50): Ada's per-SM rates (RTX PRO 6000: 503.8 dense fp16
// TFLOPS = 188 · 1024 · 2.617 GHz). An architecture of its own: it lacks sm_100's TMEM and 2-CTA
// MMA, so it must not inherit sm_100's model parameters.
const sm_rates blackwell_sm120{"blackwell-sm120", ada.flop_per_clock};
// sm_110 (Jetson Thor, sm_101 before CUDA 13): taken as sm_100's tensor rates, unchecked on a
// Thor; no fp64 rate, which a datacenter part's would overstate.
const sm_rates thor = [] {
  sm_rates rates = blackwell;
  rates.flop_per_clock.erase(p::fp64);
  return rates;
}();

} // namespace

std::optional<sm_rates> sm_rates_for(int cc_major, int cc_minor, bool geforce) {
  std::optional<sm_rates> rates;
  if (cc_major == 7 && cc_minor < 5)
    rates = volta;
  else if (cc_major == 7)
    rates = turing;
  else if (cc_major == 8 && cc_minor == 0)
    rates = ampere;
  else if (cc_major == 8 && cc_minor == 9)
    rates = ada;
  else if (cc_major == 8)
    rates = ga10x;
  else if (cc_major == 9)
    rates = hopper;
  else if (cc_major == 10)
    rates = blackwell;
  else if (cc_major == 11)
    rates = thor;
  else if (cc_major == 12)
    rates = blackwell_sm120;
  if (rates && geforce) // GeForce tensor cores accumulate in fp32 at half rate (fp16/bf16/tf32/fp8)
    for (precision half_rate : {p::tf32, p::fp16, p::bf16, p::fp8})
      if (rates->flop_per_clock.count(half_rate))
        rates->flop_per_clock[half_rate] /= 2;
  return rates;
}

double theoretical_dram_bytes_per_s(const device_description &d) {
  return 2.0 * d.memory_clock_hz * d.memory_bus_width_bits / 8.0;
}

gpu_spec theoretical_spec(const device_description &d) {
  const bool geforce = d.name.find("GeForce") != std::string::npos;
  const auto rates = sm_rates_for(d.cc_major, d.cc_minor, geforce);
  if (!rates)
    throw error("no per-SM rate table for compute capability " + std::to_string(d.cc_major) + "." +
                std::to_string(d.cc_minor) + " (" + d.name +
                "); analyse against a spec with choose_gpu::request");
  gpu_spec spec;
  spec.name = "local";
  spec.display_name = d.name;
  spec.architecture = rates->architecture;
  spec.compute_capability = std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor);
  spec.sm_count = d.sm_count;
  spec.boost_clock_hz = d.sm_clock_hz;
  spec.memory_bytes = d.memory_bytes;
  spec.dram_bytes_per_s = theoretical_dram_bytes_per_s(d);
  spec.l2_bytes = d.l2_bytes;
  for (const auto &[prec, per_clock] : rates->flop_per_clock)
    spec.peaks[prec].dense_flop_per_s = d.sm_count * d.sm_clock_hz * per_clock;
  spec.origin = "device query";
  return spec;
}

const gpu_spec *matching_spec(const spec_catalog &catalog, const device_description &d) {
  // Form factors of one chip (V100 SXM2 and PCIe, A100 SXM4 and PCIe) share compute capability, SM
  // count and memory size; their clocks and bandwidth tell them apart.
  const std::string cc = std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor);
  const double bandwidth = theoretical_dram_bytes_per_s(d);
  const gpu_spec *best = nullptr;
  double best_distance = 0;
  for (const gpu_spec &spec : catalog.specs()) {
    if (spec.compute_capability != cc || spec.sm_count != d.sm_count ||
        std::fabs(spec.memory_bytes - d.memory_bytes) > 0.15 * spec.memory_bytes)
      continue;
    const double distance = std::fabs(spec.dram_bytes_per_s - bandwidth) / spec.dram_bytes_per_s +
                            std::fabs(spec.boost_clock_hz - d.sm_clock_hz) / spec.boost_clock_hz;
    if (!best || distance < best_distance) {
      best = &spec;
      best_distance = distance;
    }
  }
  return best;
}

} // namespace roofline
