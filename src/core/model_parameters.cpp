// SPDX-License-Identifier: Apache-2.0
#include "roofline/model_parameters.hpp"

#include <stdexcept>

namespace roofline {

namespace {

double lookup(const std::map<precision, double> &values, precision p, double fallback) {
  const auto found = values.find(p);
  return found == values.end() ? fallback : found->second;
}

using per_precision = std::map<precision, double> model_parameters::*;
using scalar = double model_parameters::*;

/// The per-precision groups, in flatten's order, with the value a precision has when unset.
struct precision_group {
  const char *name;
  per_precision values;
  double (model_parameters::*value_of)(precision) const;
};
const precision_group precision_groups[] = {
    {"efficiency", &model_parameters::efficiency, &model_parameters::efficiency_of},
    {"gemm_launch_floor_s", &model_parameters::gemm_launch_floor_s,
     &model_parameters::gemm_launch_floor_of},
    {"wave_overhead_s", &model_parameters::wave_overhead_s, &model_parameters::wave_overhead_of},
    {"split_k_below_waves", &model_parameters::split_k_below_waves,
     &model_parameters::split_k_below_waves_of},
    {"narrow_split_k_below_waves", &model_parameters::narrow_split_k_below_waves,
     &model_parameters::narrow_split_k_below_waves_of},
};

const std::pair<const char *, scalar> scalars[] = {
    {"dram_efficiency", &model_parameters::dram_efficiency},
    {"l2_to_dram_bandwidth", &model_parameters::l2_to_dram_bandwidth},
    {"launch_floor_s", &model_parameters::launch_floor_s},
    {"fallback_launch_floor_s", &model_parameters::fallback_launch_floor_s},
    {"k_step_latency_s", &model_parameters::k_step_latency_s},
    {"deep_split_k_below_waves", &model_parameters::deep_split_k_below_waves},
    {"deep_split_k_min_k", &model_parameters::deep_split_k_min_k},
    {"split_k_overhead_s", &model_parameters::split_k_overhead_s},
    {"misaligned_bandwidth_slowdown", &model_parameters::misaligned_bandwidth_slowdown},
    {"ampere_slowdown", &model_parameters::ampere_slowdown},
    {"gemv_bandwidth_slowdown", &model_parameters::gemv_bandwidth_slowdown},
    {"misaligned_gemv_bandwidth_slowdown", &model_parameters::misaligned_gemv_bandwidth_slowdown},
    {"wave_quantization", &model_parameters::wave_quantization},
    {"kernel_overhead_s", &model_parameters::kernel_overhead_s},
};

constexpr int alignments[] = {8, 4, 2, 1};
constexpr const char *slowdown_group = "misalignment_slowdown";

} // namespace

double model_parameters::efficiency_of(precision p) const {
  return lookup(efficiency, p, 0.8);
}

double model_parameters::gemm_launch_floor_of(precision p) const {
  return lookup(gemm_launch_floor_s, p, launch_floor_s);
}

double model_parameters::wave_overhead_of(precision p) const {
  return lookup(wave_overhead_s, p, 1.5e-6);
}

double model_parameters::split_k_below_waves_of(precision p) const {
  return lookup(split_k_below_waves, p, 0.25);
}

double model_parameters::narrow_split_k_below_waves_of(precision p) const {
  return lookup(narrow_split_k_below_waves, p, split_k_below_waves_of(p));
}

std::vector<std::pair<std::string, double>> flatten(const model_parameters &p) {
  std::vector<std::pair<std::string, double>> values;
  for (const precision_group &group : precision_groups)
    for (precision prec : all_precisions)
      values.emplace_back(std::string(group.name) + "." + std::string(to_string(prec)),
                          (p.*group.value_of)(prec));
  for (const auto &[name, field] : scalars)
    values.emplace_back(name, p.*field);
  for (int alignment : alignments)
    values.emplace_back(
        std::string(slowdown_group) + "." + std::to_string(alignment),
        p.misalignment_slowdown.count(alignment) ? p.misalignment_slowdown.at(alignment) : 1.0);
  return values;
}

double value_of(const model_parameters &p, const std::string &name) {
  for (const auto &[key, value] : flatten(p))
    if (key == name)
      return value;
  throw std::out_of_range("unknown model parameter " + name);
}

bool set_parameter(model_parameters &p, const std::string &name, double value) {
  const auto dot = name.find('.');
  const std::string group = name.substr(0, dot);
  const std::string key = dot == std::string::npos ? std::string{} : name.substr(dot + 1);
  for (const precision_group &g : precision_groups)
    if (group == g.name) {
      const auto prec = parse_precision(key);
      if (!prec)
        return false;
      (p.*g.values)[*prec] = value;
      return true;
    }
  if (group == slowdown_group) {
    for (int alignment : alignments)
      if (key == std::to_string(alignment)) {
        p.misalignment_slowdown[alignment] = value;
        return true;
      }
    return false;
  }
  for (const auto &[scalar_name, field] : scalars)
    if (name == scalar_name) {
      p.*field = value;
      return true;
    }
  return false;
}

} // namespace roofline
