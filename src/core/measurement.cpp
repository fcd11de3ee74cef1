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

std::string_view to_string(gemm_engine e) {
  switch (e) {
  case gemm_engine::cublas: return "cublas";
  case gemm_engine::naive: return "naive";
  case gemm_engine::tiled: return "tiled";
  case gemm_engine::tensorcore: return "tensorcore";
  }
  return "?";
}

std::optional<gemm_engine> parse_gemm_engine(std::string_view name) {
  for (gemm_engine e :
       {gemm_engine::cublas, gemm_engine::naive, gemm_engine::tiled, gemm_engine::tensorcore})
    if (to_string(e) == name)
      return e;
  return std::nullopt;
}

double achieved_flop_per_s(const op &o, const measurement &m) {
  return m.time_s > 0 ? static_cast<double>(o.flops) / m.time_s : 0;
}

double eager_spread(const measurement &m) {
  return m.time_s > 0 ? (m.max_time_s - m.min_time_s) / m.time_s : 0;
}

std::optional<double> measured_dram_bytes_per_s(const measurement &m) {
  const auto bytes = measured_dram_bytes(m);
  return bytes && m.time_s > 0 ? std::optional(*bytes / m.time_s) : std::nullopt;
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
