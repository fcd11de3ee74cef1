// SPDX-License-Identifier: Apache-2.0
#include "roofline/cluster/cluster_spec.hpp"

#include "roofline/common/error.hpp"
#include "yaml_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

namespace roofline {

namespace {

/// Where the clusters of the source tree are (set by the build).
std::filesystem::path clusters_dir() {
#ifdef ROOFLINE_CLUSTERS_DIR
  return ROOFLINE_CLUSTERS_DIR;
#else
  return "clusters";
#endif
}

double ranged(const detail::yaml_map &map, const std::string &key, double low, double high,
              const char *unit) {
  const double value = map.positive_number(key);
  if (value < low || value > high)
    map.fail(key,
             fmt::format("`{}` = {:g} is outside [{:g}, {:g}] {}", key, value, low, high, unit));
  return value;
}

} // namespace

cluster_spec load_cluster_spec(const std::filesystem::path &file) {
  const std::string origin = file.string();
  const detail::yaml_node root =
      detail::parse_yaml(detail::read_text_file(file, "cluster file"), origin);
  const detail::yaml_map map(root, origin, "cluster",
                             {"name", "display_name", "gpu", "gpus_per_node", "nodes", "network",
                              "price_per_gpu_hour_usd"});
  cluster_spec c;
  c.origin = origin;
  c.name = map.string("name");
  c.display_name = map.string_or("display_name", c.name);
  c.gpu = map.string("gpu");
  const std::int64_t per_node = map.positive_int("gpus_per_node");
  const std::int64_t nodes = map.positive_int("nodes");
  if (per_node > 1024)
    map.fail("gpus_per_node", "at most 1024 GPUs in one NVLink domain");
  if (nodes > 1'000'000 || per_node * nodes > 10'000'000)
    map.fail("nodes", "a cluster of at most 10,000,000 GPUs");
  c.gpus_per_node = static_cast<int>(per_node);
  c.nodes = static_cast<int>(nodes);
  const detail::yaml_map net(map.required("network"), origin, "cluster `network`",
                             {"kind", "gb_per_s_per_gpu", "latency_us", "efficiency"});
  c.network_kind = net.string("kind");
  c.network_bytes_per_s = ranged(net, "gb_per_s_per_gpu", 0.1, 10000, "GB/s") * 1e9;
  if (net.has("latency_us"))
    c.network_latency_s = ranged(net, "latency_us", 0.01, 10000, "µs") * 1e-6;
  if (net.has("efficiency"))
    c.network_efficiency = ranged(net, "efficiency", 0.01, 1, "of the bandwidth");
  if (map.has("price_per_gpu_hour_usd"))
    c.price_per_gpu_hour = ranged(map, "price_per_gpu_hour_usd", 0.001, 10000, "USD per hour");
  return c;
}

cluster_spec find_cluster_spec(const std::string &name_or_file) {
  if (std::filesystem::is_regular_file(name_or_file))
    return load_cluster_spec(name_or_file);
  const std::filesystem::path named = clusters_dir() / (name_or_file + ".yaml");
  if (std::filesystem::is_regular_file(named))
    return load_cluster_spec(named);
  std::vector<std::string> known;
  std::error_code ignored;
  for (const auto &entry : std::filesystem::directory_iterator(clusters_dir(), ignored))
    if (entry.path().extension() == ".yaml")
      known.push_back(entry.path().stem().string());
  std::sort(known.begin(), known.end());
  std::string list;
  for (const std::string &k : known)
    list += (list.empty() ? "" : ", ") + k;
  throw input_error(fmt::format("unknown cluster `{}`: expected a cluster file or one of {}{}",
                                name_or_file, list.empty() ? "(none found)" : list,
                                did_you_mean(name_or_file, known)));
}

node_network network_of(const cluster_spec &cluster) {
  return {cluster.network_bytes_per_s * cluster.network_efficiency, cluster.network_latency_s};
}

} // namespace roofline
