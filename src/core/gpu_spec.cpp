// SPDX-License-Identifier: Apache-2.0
#include "roofline/gpu_spec.hpp"

#include "roofline/error.hpp"
#include "yaml_reader.hpp"

#include <algorithm>

namespace roofline {

std::string gpu_spec::unsupported_message(precision p) const {
  std::string known;
  for (const auto &[have, rate] : peaks)
    known += (known.empty() ? "" : ", ") + std::string(to_string(have));
  return name + " has no " + std::string(to_string(p)) + " rate in its spec (" + origin +
         "); it has " + known;
}

double gpu_spec::peak_flop_per_s(precision p, bool sparse) const {
  const auto found = peaks.find(p);
  if (found == peaks.end())
    throw input_error(unsupported_message(p));
  const peak_rate &rate = found->second;
  return sparse && rate.sparse_flop_per_s ? *rate.sparse_flop_per_s : rate.dense_flop_per_s;
}

double gpu_spec::ridge_intensity(precision p, bool sparse) const {
  return peak_flop_per_s(p, sparse) / dram_bytes_per_s;
}

namespace {

/// A spec's `model:` section: the GEMM model's parameters as `roofline-advise calibrate` fitted
/// them.
model_parameters parse_model_parameters(const YAML::Node &node, const std::string &origin) {
  using detail::yaml_map;
  // Scalars by name; "group.key" parameters as one mapping per group.
  std::vector<std::string> keys{"origin"}, groups;
  for (const auto &[name, value] : flatten(model_parameters{})) {
    const std::string key = name.substr(0, name.find('.'));
    if (std::find(keys.begin(), keys.end(), key) == keys.end())
      keys.push_back(key);
    if (key != name && std::find(groups.begin(), groups.end(), key) == groups.end())
      groups.push_back(key);
  }
  const yaml_map map(node, origin, "GPU spec `model`", keys);
  model_parameters parameters;
  parameters.origin = map.string_or("origin", "spec " + origin);
  for (const std::string &key : keys) {
    if (key == "origin" || !map.has(key))
      continue;
    if (std::find(groups.begin(), groups.end(), key) != groups.end()) {
      const YAML::Node entries = map.required(key);
      if (!entries.IsMap())
        map.fail(key, "`" + key + "` must be a mapping");
      for (const auto &entry : entries) {
        const std::string name = key + "." + entry.first.as<std::string>("");
        double value = 0;
        try {
          value = entry.second.as<double>();
        } catch (const YAML::Exception &) {
          map.fail(key, "`" + name + "` must be a number");
        }
        // A split-K threshold of 0 waves is a rule that never fires; every other value is > 0.
        const bool allowed =
            value > 0 || (key.find("split_k_below_waves") != std::string::npos && value == 0);
        if (!allowed || !set_parameter(parameters, name, value))
          map.fail(key, "`" + name + "` is not a model parameter with a positive value");
      }
      continue;
    }
    set_parameter(parameters, key, map.positive_number(key));
  }
  return parameters;
}

} // namespace

gpu_spec parse_gpu_spec(std::string_view yaml_text, const std::string &origin) {
  using detail::yaml_map;
  const yaml_map doc(detail::parse_yaml(yaml_text, origin), origin, "GPU spec",
                     {"name", "aliases", "display_name", "architecture", "compute_capability",
                      "sm_count", "boost_clock_mhz", "memory_gb", "memory_type",
                      "dram_bandwidth_gb_per_s", "l2_cache_mb", "tdp_w", "price_per_hour_usd",
                      "peak_tflop_per_s", "model"});
  gpu_spec spec;
  spec.origin = origin;
  spec.name = doc.string("name");
  spec.aliases = doc.strings_or_empty("aliases");
  spec.display_name = doc.string_or("display_name", spec.name);
  spec.architecture = doc.string("architecture");
  spec.compute_capability = doc.string("compute_capability");
  const std::int64_t sm_count = doc.positive_int("sm_count");
  if (sm_count > 100000)
    doc.fail("sm_count",
             "`sm_count` = " + std::to_string(sm_count) + " is not a plausible number of SMs");
  spec.sm_count = static_cast<int>(sm_count);
  spec.boost_clock_hz = doc.positive_number("boost_clock_mhz") * 1e6;
  spec.memory_bytes = doc.positive_number("memory_gb") * 1e9;
  spec.memory_type = doc.string_or("memory_type", "");
  spec.dram_bytes_per_s = doc.positive_number("dram_bandwidth_gb_per_s") * 1e9;
  spec.l2_bytes =
      doc.positive_number("l2_cache_mb") * 1024.0 * 1024.0; // NVIDIA's "MB" of cache are MiB
  spec.tdp_w = doc.positive_number("tdp_w");
  spec.price_per_hour_usd = doc.optional_positive_number("price_per_hour_usd");

  std::vector<std::string> precision_names;
  for (precision p : all_precisions)
    precision_names.emplace_back(to_string(p));
  const yaml_map peaks(doc.required("peak_tflop_per_s"), origin, "GPU spec `peak_tflop_per_s`",
                       precision_names);
  for (precision p : all_precisions) {
    const std::string key(to_string(p));
    if (!peaks.has(key))
      continue;
    const yaml_map rate(peaks.required(key), origin, "GPU spec peak `" + key + "`",
                        {"dense", "sparse"});
    peak_rate parsed;
    parsed.dense_flop_per_s = rate.positive_number("dense") * 1e12;
    if (auto sparse = rate.optional_positive_number("sparse"))
      parsed.sparse_flop_per_s = *sparse * 1e12;
    spec.peaks.emplace(p, parsed);
  }
  if (doc.has("model"))
    spec.calibration = parse_model_parameters(doc.required("model"), origin);
  if (spec.peaks.empty())
    doc.fail("peak_tflop_per_s", "`peak_tflop_per_s` must list at least one precision");
  if (!spec.supports(precision::fp32))
    doc.fail("peak_tflop_per_s",
             "`peak_tflop_per_s` must have fp32: memory-bound ops are held against it");
  return spec;
}

gpu_spec load_gpu_spec(const std::filesystem::path &file) {
  return parse_gpu_spec(detail::read_text_file(file, "GPU spec"), file.string());
}

} // namespace roofline
