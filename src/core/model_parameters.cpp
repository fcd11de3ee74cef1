// SPDX-License-Identifier: Apache-2.0
#include "roofline/model_parameters.hpp"

#include <stdexcept>

namespace roofline {

double model_parameters::efficiency_of(precision p) const {
  const auto found = efficiency.find(p);
  return found == efficiency.end() ? 0.8 : found->second;
}

double model_parameters::gemm_launch_floor_of(precision p) const {
  const auto found = gemm_launch_floor_s.find(p);
  return found == gemm_launch_floor_s.end() ? launch_floor_s : found->second;
}

std::vector<std::pair<std::string, double>> flatten(const model_parameters &p) {
  std::vector<std::pair<std::string, double>> values;
  for (precision prec : all_precisions)
    values.emplace_back("efficiency." + std::string(to_string(prec)), p.efficiency_of(prec));
  values.emplace_back("dram_efficiency", p.dram_efficiency);
  values.emplace_back("l2_to_dram_bandwidth", p.l2_to_dram_bandwidth);
  values.emplace_back("launch_floor_s", p.launch_floor_s);
  for (precision prec : all_precisions)
    values.emplace_back("gemm_launch_floor_s." + std::string(to_string(prec)),
                        p.gemm_launch_floor_of(prec));
  values.emplace_back("wave_overhead_s", p.wave_overhead_s);
  values.emplace_back("k_step_latency_s", p.k_step_latency_s);
  values.emplace_back("split_k_overhead_s", p.split_k_overhead_s);
  values.emplace_back("misaligned_bandwidth_slowdown", p.misaligned_bandwidth_slowdown);
  values.emplace_back("misaligned_launch_floor_s", p.misaligned_launch_floor_s);
  for (int alignment : {8, 4, 2, 1})
    values.emplace_back(
        "misalignment_slowdown." + std::to_string(alignment),
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
  const std::string slowdown = "misalignment_slowdown.";
  for (auto [group, values] :
       {std::pair{std::string("efficiency."), &model_parameters::efficiency},
        std::pair{std::string("gemm_launch_floor_s."), &model_parameters::gemm_launch_floor_s}})
    if (name.rfind(group, 0) == 0) {
      const auto prec = parse_precision(name.substr(group.size()));
      if (!prec)
        return false;
      (p.*values)[*prec] = value;
      return true;
    }
  if (name.rfind(slowdown, 0) == 0) {
    const std::string bytes = name.substr(slowdown.size());
    if (bytes != "8" && bytes != "4" && bytes != "2" && bytes != "1")
      return false;
    p.misalignment_slowdown[std::stoi(bytes)] = value;
    return true;
  }
  for (auto [key, field] :
       {std::pair{"dram_efficiency", &model_parameters::dram_efficiency},
        std::pair{"l2_to_dram_bandwidth", &model_parameters::l2_to_dram_bandwidth},
        std::pair{"launch_floor_s", &model_parameters::launch_floor_s},
        std::pair{"wave_overhead_s", &model_parameters::wave_overhead_s},
        std::pair{"k_step_latency_s", &model_parameters::k_step_latency_s},
        std::pair{"split_k_overhead_s", &model_parameters::split_k_overhead_s},
        std::pair{"misaligned_bandwidth_slowdown",
                  &model_parameters::misaligned_bandwidth_slowdown},
        std::pair{"misaligned_launch_floor_s", &model_parameters::misaligned_launch_floor_s}})
    if (name == key) {
      p.*field = value;
      return true;
    }
  return false;
}

} // namespace roofline
