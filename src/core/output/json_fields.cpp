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
  device["sustained_clock_hz"] = d.sustained_clock_hz ? json(*d.sustained_clock_hz) : json(nullptr);
  device["clock_hz"] = d.clock_hz();
  device["clock_basis"] = std::string(d.clock_basis());
  json accuracy = json::object();
  for (const std::string &name : names_of<op_class>().names()) {
    const accuracy_band band = d.accuracy.of(*names_of<op_class>().parse(name));
    accuracy[name] = {{"p10", band.p10}, {"p90", band.p90}};
  }
  device["accuracy"] = accuracy;
  return device;
}

json range_us_json(const time_range &range) {
  return {{"low", range.low_s * 1e6}, {"high", range.high_s * 1e6}};
}

void write_memory(json_writer &w, const std::optional<memory_use> &memory) {
  if (!memory) {
    w.null();
    return;
  }
  const memory_use &m = *memory;
  w.begin_object();
  w.field("weights_bytes", m.weights_bytes);
  w.field("gradient_bytes", m.gradient_bytes);
  w.field("optimizer_bytes", m.optimizer_bytes);
  w.field("kv_cache_bytes", m.kv_cache_bytes);
  w.field("activation_bytes", m.activation_bytes);
  const auto name = [](const auto &choice) {
    return choice ? std::optional<std::string_view>(to_string(*choice)) : std::nullopt;
  };
  w.field("optimizer", name(m.optimizer));
  w.field("recompute", name(m.recompute));
  w.field("parameters", m.parameters);
  w.field("expert_parameters", m.expert_parameters);
  w.field("updated_parameters", m.updated_parameters);
  w.field("total_bytes", m.total_bytes);
  w.field("capacity_bytes", m.capacity_bytes);
  w.field("reserve_bytes", m.reserve_bytes);
  w.field("fits", m.fits);
  w.field("traced", m.traced);
  w.field("max_batch", m.max_batch);
  w.field("max_kv_len", m.max_kv_len);
  w.end_object();
}

} // namespace roofline::detail
