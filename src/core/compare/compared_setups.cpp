// SPDX-License-Identifier: Apache-2.0
#include "compared_setups.hpp"

#include "roofline/analysis/advice_thresholds.hpp"
#include "roofline/common/error.hpp"
#include "roofline/model/host_floor.hpp"
#include "roofline/model/spec_catalog.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <variant>

namespace roofline {

namespace {

/// Remembers the name given for each spec (by the name its results carry): a second name of one
/// spec (an alias, another case) is refused, as `what` (--gpus: a GPU compared with itself;
/// --price: a price silently replaced).
class spelled_once {
public:
  spelled_once(std::string what, std::string advice)
      : m_what(std::move(what)), m_advice(std::move(advice)) {}
  void add(const std::string &spec, const std::string &given) {
    const auto [first, fresh] = m_given.emplace(spec, given);
    if (!fresh)
      throw input_error(fmt::format("{}: `{}` and `{}` are the same GPU ({}); {}", m_what,
                                    first->second, given, spec, m_advice));
  }

private:
  std::string m_what, m_advice;
  std::map<std::string, std::string> m_given; // spec name → the name given
};

} // namespace

std::map<std::string, gpu_spec> resolve_compared_gpus(const compare_request &request) {
  if (request.gpus.empty())
    throw input_error("compare_request::gpus: name at least one GPU");
  for (std::size_t i = 0; i < request.gpus.size(); ++i)
    if (std::find(request.gpus.begin(), request.gpus.begin() + static_cast<std::ptrdiff_t>(i),
                  request.gpus[i]) != request.gpus.begin() + static_cast<std::ptrdiff_t>(i))
      throw input_error("compare_request::gpus: `" + request.gpus[i] + "` is named twice");
  const spec_catalog &catalog = spec_catalog::builtin();
  std::map<std::string, gpu_spec> specs;
  const auto spec_of = [&](const std::string &name) -> const gpu_spec & {
    const auto found = specs.find(name);
    return found != specs.end() ? found->second
                                : specs.emplace(name, catalog.resolve(name)).first->second;
  };
  spelled_once gpus("compare_request::gpus", "name each GPU once"),
      prices("compare_request::prices", "give it one price");
  std::vector<std::string> compared; // the compared GPUs' spec names
  for (const std::string &name : request.gpus) {
    compared.push_back(name == "local" ? name : spec_of(name).name);
    if (name != "local")
      gpus.add(compared.back(), name);
  }
  for (const auto &[name, price] : request.prices) {
    const std::string spec = name == "local" ? name : spec_of(name).name;
    // A price for a GPU left out would be dropped, and the verdict then say no price is known.
    if (std::find(compared.begin(), compared.end(), spec) == compared.end())
      throw input_error(
          fmt::format("compare_request::prices {}: `{}` is not among the GPUs compared ({}); price "
                      "the GPUs given to compare_request::gpus",
                      name, name, fmt::join(request.gpus, ", ")));
    prices.add(spec, name);
  }
  return specs;
}

namespace detail {

network network_at(const network_source &source, int gpus, std::int64_t batch) {
  if (const auto *config = std::get_if<config_source>(&source)) {
    config_options options = config->options;
    options.tensor_parallel = gpus;
    options.batch = batch;
    return config->config.build(options);
  }
  network net = std::get<network>(source);
  net.batch = batch;
  return net;
}

void check_prices_and_degrees(const compare_request &request) {
  for (const auto &[name, price] : request.prices)
    if (!price_in_range(price))
      throw input_error(
          fmt::format("compare_request::prices {}={}: a GPU's price must be from {:g} to {:g} USD "
                      "per hour",
                      name, price, min_price_per_hour_usd, max_price_per_hour_usd));
  if (request.tensor_parallel.empty())
    return;
  if (!std::holds_alternative<config_source>(request.source))
    throw input_error("compare_request::tensor_parallel: only a model config can be sharded (a "
                      "network YAML says its own "
                      "all_reduce layers)");
  if (std::find(request.gpus.begin(), request.gpus.end(), "local") != request.gpus.end())
    throw input_error("compare_request::tensor_parallel with compare_request::gpus local: the "
                      "local GPU is measured running the network as "
                      "given; name its spec instead");
  const std::vector<int> &degrees = request.tensor_parallel;
  for (std::size_t i = 0; i < degrees.size(); ++i) {
    check_tensor_parallel(degrees[i]);
    if (std::find(degrees.begin(), degrees.begin() + static_cast<std::ptrdiff_t>(i), degrees[i]) !=
        degrees.begin() + static_cast<std::ptrdiff_t>(i))
      throw input_error("compare_request::tensor_parallel: " + std::to_string(degrees[i]) +
                        " is named twice");
  }
}

compared_sides sides_of(const compare_request &request,
                        const std::map<std::string, gpu_spec> &specs) {
  // Each GPU runs with its own parameters (its architecture's, overridden by what was fitted on
  // it) and all with this machine's host floor: the host does not change with the GPU.
  model_options options{request.sparse, false, {}, cached_host_floor()};
  options.clock = request.clock;
  options.network = request.network;
  compared_sides sides;
  for (const std::string &name : request.gpus) {
    std::optional<gpu_spec> spec;
    std::string selection = "compare_request::gpus " + name;
    if (name == "local") {
      const auto local_gpu = request.layer.required("compare_request::gpus local").find_local_gpu();
      if (!local_gpu)
        throw error(
            "compare_request::gpus local: no GPU found; name a spec instead (spec_catalog::specs)");
      // Its ops are measured; the other GPUs are scaled from them by datasheet-to-datasheet
      // ratios, so the local side is held to its datasheet too (a measured ceiling would make its
      // own spec look faster).
      spec = local_gpu->datasheet;
      selection = "local: " + local_gpu->selection;
      sides.local = sides.gpus.size();
      sides.local_name = spec->name;
    } else {
      spec = specs.at(name);
    }
    for (int tp : request.tensor_parallel.empty() ? std::vector<int>{1} : request.tensor_parallel)
      sides.gpus.push_back({perf_model(*spec, options), selection, std::nullopt, tp, std::nullopt,
                            request.memory_reserve, request.energy_usd_per_kwh});
  }
  return sides;
}

std::map<std::string, double> prices_by_spec(const compare_request &request,
                                             const std::map<std::string, gpu_spec> &specs,
                                             const std::string &local_name) {
  std::map<std::string, double> prices;
  spelled_once priced("compare_request::prices", "give it one price");
  for (const auto &[name, price] : request.prices) {
    const std::string spec = name == "local" ? local_name : specs.at(name).name;
    priced.add(spec, name);
    prices[spec] = price;
  }
  return prices;
}

std::optional<double> price_per_hour(const gpu_spec &spec,
                                     const std::map<std::string, double> &prices, int gpus) {
  if (auto price = prices.find(spec.name); price != prices.end())
    return price->second * gpus;
  if (spec.price_per_hour_usd)
    return *spec.price_per_hour_usd * gpus;
  return std::nullopt;
}

std::string setup_name(const gpu_spec &spec, int gpus) {
  return spec.name + (gpus > 1 ? fmt::format(" ×{}", gpus) : std::string{});
}

double usd_per_million(double usd_per_hour, double per_second) {
  return usd_per_hour / 3600.0 / per_second * 1e6;
}

} // namespace detail

} // namespace roofline
