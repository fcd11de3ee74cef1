// SPDX-License-Identifier: Apache-2.0
#include "roofline/analysis/measurement.hpp"

#include "roofline/common/median.hpp"

#include <algorithm>
#include <array>

namespace roofline {

std::string_view to_string(measurement_status s) {
  switch (s) {
  case measurement_status::measured: return "measured";
  case measurement_status::skipped: return "skipped";
  case measurement_status::failed: return "failed";
  }
  return "?";
}

namespace {

constexpr std::array<enum_name<gemm_engine>, 4> engine_names{{
    {gemm_engine::cublas, "cublas"},
    {gemm_engine::naive, "naive"},
    {gemm_engine::tiled, "tiled"},
    {gemm_engine::tensorcore, "tensorcore"},
}};

} // namespace

template <> const enum_table<gemm_engine> &names_of<gemm_engine>() {
  static constexpr enum_table<gemm_engine> table{engine_names};
  return table;
}

std::string_view to_string(gemm_engine e) {
  return names_of<gemm_engine>().name(e);
}

std::optional<gemm_engine> parse_gemm_engine(std::string_view name) {
  return names_of<gemm_engine>().parse(name);
}

namespace {

/// `note` without its clause that starts with `start` (clauses are joined by "; ", and an error's
/// text holds none).
void drop_note(std::string &note, std::string_view start) {
  const std::size_t at = note.find(start);
  if (at == std::string::npos || (at != 0 && note.compare(at - 2, 2, "; ") != 0))
    return;
  const std::size_t end = note.find("; ", at);
  const std::size_t from = at == 0 ? 0 : at - 2; // with the separator before it
  note.erase(from, end == std::string::npos ? std::string::npos : (at == 0 ? end + 2 : end) - from);
}

} // namespace

void add_note(std::string &note, const std::string &clause) {
  note += (note.empty() ? "" : "; ") + clause;
}

measurement merge_rounds(const std::vector<measurement> &rounds) {
  if (rounds.empty())
    return {};
  measurement m = rounds.front();
  if (m.status != measurement_status::measured)
    return m;
  std::vector<double> times{m.time_s}, device_times;
  if (m.device_time_s > 0)
    device_times.push_back(m.device_time_s);
  for (auto again = rounds.begin() + 1; again != rounds.end(); ++again) {
    if (again->status != measurement_status::measured)
      continue; // the earlier rounds' result stands
    times.push_back(again->time_s);
    m.min_time_s = std::min(m.min_time_s, again->min_time_s);
    m.max_time_s = std::max(m.max_time_s, again->max_time_s);
    m.samples += again->samples;
    // Device time: the rounds whose calls were captured (0: not measured in that round).
    if (again->device_time_s > 0) {
      const bool none_yet = device_times.empty();
      if (none_yet) // the first round could not capture the calls; this one did
        drop_note(m.note, device_time_missing);
      device_times.push_back(again->device_time_s);
      m.device_min_time_s = none_yet ? again->device_min_time_s
                                     : std::min(m.device_min_time_s, again->device_min_time_s);
      m.device_max_time_s = none_yet ? again->device_max_time_s
                                     : std::max(m.device_max_time_s, again->device_max_time_s);
    }
  }
  if (times.size() > 1) {
    m.time_s = upper_median(times);
    if (!device_times.empty())
      m.device_time_s = upper_median(device_times);
  }
  return m;
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
