// SPDX-License-Identifier: Apache-2.0
#include "json_fields.hpp"

namespace roofline::detail {

using nlohmann::json;

json device_json(const gpu_spec &d) {
  json peaks = json::object();
  for (const auto &[p, rate] : d.peaks) {
    json entry{{"dense_flop_per_s", rate.dense_flop_per_s},
               {"dense_ridge_intensity", d.ridge_intensity(p)}};
    if (rate.sparse_flop_per_s) {
      entry["sparse_flop_per_s"] = *rate.sparse_flop_per_s;
      entry["sparse_ridge_intensity"] = d.ridge_intensity(p, true);
    }
    peaks[std::string(to_string(p))] = entry;
  }
  json device{{"name", d.name},
              {"aliases", d.aliases},
              {"display_name", d.display_name},
              {"architecture", d.architecture},
              {"compute_capability", d.compute_capability},
              {"sm_count", d.sm_count},
              {"boost_clock_hz", d.boost_clock_hz},
              {"memory_bytes", d.memory_bytes},
              {"memory_type", d.memory_type},
              {"dram_bytes_per_s", d.dram_bytes_per_s},
              {"l2_bytes", d.l2_bytes},
              {"tdp_w", d.tdp_w},
              {"peaks", peaks},
              {"origin", d.origin}};
  device["price_per_hour_usd"] = d.price_per_hour_usd ? json(*d.price_per_hour_usd) : json(nullptr);
  return device;
}

} // namespace roofline::detail
