// SPDX-License-Identifier: Apache-2.0
#include "roofline/measurement.hpp"

namespace roofline {

std::string_view to_string(measurement_status s) {
  switch (s) {
  case measurement_status::measured: return "measured";
  case measurement_status::skipped: return "skipped";
  case measurement_status::failed: return "failed";
  }
  return "?";
}

double achieved_flop_per_s(const op &o, const measurement &m) {
  return m.time_s > 0 ? static_cast<double>(o.flops) / m.time_s : 0;
}

std::optional<double> measured_dram_bytes(const measurement &m) {
  if (!m.counters)
    return std::nullopt;
  return m.counters->dram_read_bytes + m.counters->dram_write_bytes;
}

std::optional<double> measured_intensity(const op &o, const measurement &m) {
  const auto bytes = measured_dram_bytes(m);
  if (!bytes || *bytes <= 0)
    return std::nullopt;
  return static_cast<double>(o.flops) / *bytes;
}

double roofline_fraction(const prediction &p, const measurement &m) {
  return m.time_s > 0 ? p.roofline_time_s / m.time_s : 0;
}

} // namespace roofline
