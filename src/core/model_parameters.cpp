// SPDX-License-Identifier: Apache-2.0
#include "roofline/model_parameters.hpp"

namespace roofline {

double model_parameters::efficiency_of(precision p) const {
  const auto found = efficiency.find(p);
  return found == efficiency.end() ? 0.8 : found->second;
}

std::vector<std::pair<std::string, double>> flatten(const model_parameters &p) {
  std::vector<std::pair<std::string, double>> values;
  for (precision prec : all_precisions)
    values.emplace_back("efficiency." + std::string(to_string(prec)), p.efficiency_of(prec));
  values.emplace_back("dram_efficiency", p.dram_efficiency);
  values.emplace_back("l2_to_dram_bandwidth", p.l2_to_dram_bandwidth);
  values.emplace_back("launch_floor_s", p.launch_floor_s);
  values.emplace_back("wave_overhead_s", p.wave_overhead_s);
  values.emplace_back("k_step_latency_s", p.k_step_latency_s);
  values.emplace_back("split_k_overhead_s", p.split_k_overhead_s);
  for (int alignment : {8, 4, 2, 1})
    values.emplace_back(
        "misalignment_slowdown." + std::to_string(alignment),
        p.misalignment_slowdown.count(alignment) ? p.misalignment_slowdown.at(alignment) : 1.0);
  return values;
}

bool set_parameter(model_parameters &p, const std::string &name, double value) {
  const std::string efficiency = "efficiency.", slowdown = "misalignment_slowdown.";
  if (name.rfind(efficiency, 0) == 0) {
    const auto prec = parse_precision(name.substr(efficiency.size()));
    if (!prec)
      return false;
    p.efficiency[*prec] = value;
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
        std::pair{"split_k_overhead_s", &model_parameters::split_k_overhead_s}})
    if (name == key) {
      p.*field = value;
      return true;
    }
  return false;
}

} // namespace roofline
