// SPDX-License-Identifier: Apache-2.0
#include "roofline/ceilings.hpp"

#include "roofline/atomic_file.hpp"

#include "roofline/error.hpp"

#include "json_reader.hpp"

#include <nlohmann/json.hpp>

#include <array>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace roofline {

namespace {

using nlohmann::json;

// 2: host_floor and fallback_host_floor results. Version 1 documents lack them and are read as
// they are; older binaries refuse version 2 as "another format version", which says what to do,
// rather than stumbling on the unknown kind.
constexpr int cache_format_version = 2;
constexpr int oldest_readable_version = 1;

struct ceiling_kind_entry {
  ceiling_kind kind;
  std::string_view name;
  bool is_time;
};

constexpr std::array<ceiling_kind_entry, 6> ceiling_kinds{{
    {ceiling_kind::dram_bandwidth, "dram_bandwidth", false},
    {ceiling_kind::l2_bandwidth, "l2_bandwidth", false},
    {ceiling_kind::flop_rate, "flop_rate", false},
    {ceiling_kind::latency, "latency", true},
    {ceiling_kind::host_floor, "host_floor", true},
    {ceiling_kind::fallback_host_floor, "fallback_host_floor", true},
}};

} // namespace

std::string_view to_string(ceiling_kind kind) {
  for (const auto &entry : ceiling_kinds)
    if (entry.kind == kind)
      return entry.name;
  return "?";
}

std::optional<ceiling_kind> parse_ceiling_kind(std::string_view name) {
  for (const auto &entry : ceiling_kinds)
    if (entry.name == name)
      return entry.kind;
  return std::nullopt;
}

bool is_time(ceiling_kind kind) {
  for (const auto &entry : ceiling_kinds)
    if (entry.kind == kind)
      return entry.is_time;
  return false;
}

std::optional<double> measured_ceilings::dram_bytes_per_s() const {
  for (const ceiling_result &r : results)
    if (r.kind == ceiling_kind::dram_bandwidth && r.name == "dram copy" && r.failure.empty())
      return r.value;
  return std::nullopt;
}

std::optional<double> measured_ceilings::flop_per_s(precision p) const {
  std::optional<double> best;
  for (const ceiling_result &r : results)
    if (r.kind == ceiling_kind::flop_rate && r.precision == p && r.failure.empty() &&
        (!best || r.value > *best))
      best = r.value;
  return best;
}

std::optional<double> measured_ceilings::launch_latency_s() const {
  for (const ceiling_result &r : results)
    if (r.kind == ceiling_kind::latency && r.failure.empty())
      return r.value;
  return std::nullopt;
}

namespace {

std::optional<double> first_time(const std::vector<ceiling_result> &results, ceiling_kind kind,
                                 precision p) {
  for (const ceiling_result &r : results)
    if (r.kind == kind && r.precision == p && r.failure.empty())
      return r.value;
  return std::nullopt;
}

} // namespace

std::optional<double> measured_ceilings::host_floor_s(precision p) const {
  return first_time(results, ceiling_kind::host_floor, p);
}

std::optional<double> measured_ceilings::fallback_host_floor_s(precision p) const {
  return first_time(results, ceiling_kind::fallback_host_floor, p);
}

gpu_spec apply_ceilings(gpu_spec spec, const measured_ceilings &ceilings) {
  if (!spec.paper)
    spec.paper = gpu_spec::paper_numbers{spec.dram_bytes_per_s, spec.peaks};
  if (auto dram = ceilings.dram_bytes_per_s())
    spec.dram_bytes_per_s = *dram;
  for (auto &[prec, rate] : spec.peaks) {
    const auto measured = ceilings.flop_per_s(prec);
    if (!measured)
      continue;
    if (rate.sparse_flop_per_s)
      rate.sparse_flop_per_s = *rate.sparse_flop_per_s * (*measured / rate.dense_flop_per_s);
    rate.dense_flop_per_s = *measured;
  }
  spec.origin += " + ceilings measured " + ceilings.measured_at;
  return spec;
}

std::string to_json_text(const measured_ceilings &ceilings) {
  json results = json::array();
  for (const ceiling_result &r : ceilings.results) {
    json entry{{"name", r.name},     {"kind", to_string(r.kind)}, {"value", r.value},
               {"spread", r.spread}, {"method", r.method},        {"failure", r.failure}};
    entry["precision"] = r.precision ? json(std::string(to_string(*r.precision))) : json(nullptr);
    results.push_back(entry);
  }
  return json{{"format_version", cache_format_version},
              {"uuid", ceilings.uuid},
              {"device_name", ceilings.device_name},
              {"measured_at", ceilings.measured_at},
              {"results", results}}
      .dump(2);
}

measured_ceilings parse_ceilings(const std::string &json_text, const std::string &origin) {
  try {
    const json doc = detail::parse_json_once_per_key(json_text, [&](const std::string &why) {
      throw input_error({origin}, "damaged ceilings cache (re-measure with --refresh): " + why);
    });
    const int version = doc.at("format_version").get<int>();
    if (version < oldest_readable_version || version > cache_format_version)
      throw input_error({origin},
                        "ceilings cache of another format version; re-measure with --refresh");
    measured_ceilings ceilings;
    ceilings.uuid = doc.at("uuid").get<std::string>();
    ceilings.device_name = doc.at("device_name").get<std::string>();
    ceilings.measured_at = doc.at("measured_at").get<std::string>();
    for (const json &entry : doc.at("results")) {
      ceiling_result r;
      r.name = entry.at("name").get<std::string>();
      const auto kind = parse_ceiling_kind(entry.at("kind").get<std::string>());
      if (!kind)
        throw input_error({origin}, "unknown ceiling kind in `" + r.name + "`");
      r.kind = *kind;
      if (!entry.at("precision").is_null()) {
        r.precision = parse_precision(entry.at("precision").get<std::string>());
        if (!r.precision)
          throw input_error({origin}, "unknown precision in `" + r.name + "`");
      }
      r.value = entry.at("value").get<double>();
      r.spread = entry.at("spread").get<double>();
      r.method = entry.at("method").get<std::string>();
      r.failure = entry.at("failure").get<std::string>();
      // JSON holds no infinity: a measured value is only ever out of sign (or 0 where it worked).
      if (r.value < 0 || r.spread < 0 || (r.failure.empty() && !(r.value > 0)))
        throw input_error({origin}, "damaged ceilings cache (re-measure with --refresh): `" +
                                        r.name + "` has a value or spread out of range");
      ceilings.results.push_back(r);
    }
    return ceilings;
  } catch (const json::exception &e) {
    throw input_error(
        {origin}, std::string("damaged ceilings cache (re-measure with --refresh): ") + e.what());
  }
}

std::filesystem::path cache_directory() {
  if (const char *dir = std::getenv("ROOFLINE_CACHE_DIR"); dir && *dir)
    return dir;
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return std::filesystem::path(xdg) / "roofline-advise";
  const char *home = std::getenv("HOME");
  return std::filesystem::path(home && *home ? home : "/tmp") / ".cache" / "roofline-advise";
}

std::filesystem::path ceilings_cache_file(const std::string &uuid) {
  return cache_directory() / ("ceilings-" + uuid + ".json");
}

std::optional<std::string> read_cache_file(const std::filesystem::path &file) {
  std::ifstream in(file);
  if (!in)
    return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::optional<measured_ceilings> load_cached_ceilings(const std::string &uuid) {
  const std::filesystem::path file = ceilings_cache_file(uuid);
  const std::optional<std::string> text = read_cache_file(file);
  return text ? std::optional(parse_ceilings(*text, file.string())) : std::nullopt;
}

void save_ceilings(const measured_ceilings &ceilings) {
  write_cache_file(ceilings_cache_file(ceilings.uuid), to_json_text(ceilings) + "\n");
}

} // namespace roofline
