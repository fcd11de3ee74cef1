// SPDX-License-Identifier: Apache-2.0
#include "roofline/interconnect.hpp"

#include <algorithm>
#include <cmath>

namespace roofline {

double algorithm_bandwidth(std::int64_t bytes, double time_s) {
  return time_s > 0 ? static_cast<double>(bytes) / time_s : 0.0;
}

double bus_bandwidth(std::int64_t bytes, double time_s, int gpus) {
  return gpus > 1 ? algorithm_bandwidth(bytes, time_s) * 2.0 * (gpus - 1) / gpus : 0.0;
}

double all_reduce_bound_s(std::int64_t bytes, int gpus, const interconnect_spec &links) {
  if (gpus < 2)
    return 0;
  return static_cast<double>(bytes) * 2.0 * (gpus - 1) / gpus / links.bytes_per_s;
}

double modelled_all_reduce_s(std::int64_t bytes, int gpus, const interconnect_spec &links) {
  if (gpus < 2)
    return 0;
  return all_reduce_latency_s + all_reduce_bound_s(bytes, gpus, links) / all_reduce_link_efficiency;
}

std::optional<double> measured_all_reduce_s(std::int64_t bytes, int gpus,
                                            const all_reduce_table &table) {
  const std::vector<all_reduce_sample> &s = table.samples;
  if (table.gpus != gpus || s.empty())
    return std::nullopt;
  if (bytes <= s.front().bytes)
    return s.front().time_s;
  if (bytes >= s.back().bytes)
    return s.back().time_s * static_cast<double>(bytes) / static_cast<double>(s.back().bytes);
  const auto above = std::upper_bound(
      s.begin(), s.end(), bytes,
      [](std::int64_t b, const all_reduce_sample &sample) { return b < sample.bytes; });
  const all_reduce_sample &low = *(above - 1), &high = *above;
  const double where = std::log(static_cast<double>(bytes) / static_cast<double>(low.bytes)) /
                       std::log(static_cast<double>(high.bytes) / static_cast<double>(low.bytes));
  return std::exp(std::log(low.time_s) + where * (std::log(high.time_s) - std::log(low.time_s)));
}

} // namespace roofline
