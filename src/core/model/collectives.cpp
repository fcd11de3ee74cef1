// SPDX-License-Identifier: Apache-2.0
#include "roofline/model/collectives.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace roofline {

namespace {

/// One pass of collective `c`, (k − 1)/k of `bytes` over k GPUs of a node (a reduce-scatter's,
/// an all-gather's, an all-to-all's, a send's), at its link efficiency there and the
/// all-reduce's latency.
double node_pass_s(collective c, double bytes, int k, const cluster_links &l) {
  if (k < 2)
    return 0;
  const model_parameters &p = l.parameters;
  return all_reduce_parameter(p, parameter::all_reduce_latency_s, k) +
         (k - 1.0) / k * bytes /
             (collective_link_efficiency(c, k, p) * l.nvlink.bytes_per_s_over(k));
}

/// `passes` passes of (n − 1)/n of `bytes` over n nodes, each GPU through its own NIC, with
/// `hops` network latencies.
double network_pass_s(double bytes, int n, double passes, double hops, const cluster_links &l) {
  if (n < 2)
    return 0;
  return hops * l.network_latency_s + passes * (n - 1.0) / n * bytes / l.network_bytes_per_s;
}

} // namespace

double collective_link_efficiency(collective c, int gpus, const model_parameters &p) {
  const double all_reduce = all_reduce_parameter(p, parameter::all_reduce_link_efficiency, gpus);
  const auto ratio = [&](parameter group) { return all_reduce_parameter(p, group, gpus); };
  switch (c) {
  case collective::reduce_scatter:
    return all_reduce * ratio(parameter::reduce_scatter_bandwidth_ratio);
  case collective::all_gather: return all_reduce * ratio(parameter::all_gather_bandwidth_ratio);
  case collective::all_to_all: return all_reduce * ratio(parameter::all_to_all_bandwidth_ratio);
  case collective::all_reduce:
  case collective::send: return all_reduce;
  }
  return all_reduce;
}

std::string_view to_string(collective c) {
  switch (c) {
  case collective::all_reduce: return "all_reduce";
  case collective::reduce_scatter: return "reduce_scatter";
  case collective::all_gather: return "all_gather";
  case collective::all_to_all: return "all_to_all";
  case collective::send: return "send";
  }
  return "all_reduce";
}

std::optional<collective> parse_collective(std::string_view kind) {
  for (const collective c : {collective::all_reduce, collective::reduce_scatter,
                             collective::all_gather, collective::all_to_all, collective::send})
    if (kind == to_string(c))
      return c;
  return std::nullopt;
}

int per_node(int ranks, std::int64_t stride, int gpus_per_node) {
  if (stride >= gpus_per_node)
    return 1;
  return static_cast<int>(
      std::min<std::int64_t>(ranks, gpus_per_node / std::max<std::int64_t>(1, stride)));
}

model_parameters at_full_link_speed(model_parameters p) {
  for (const int gpus : all_reduce_gpu_counts) {
    p.set(all_reduce_parameter_at(parameter::all_reduce_latency_s, gpus), 0);
    for (const parameter efficiency :
         {parameter::all_reduce_link_efficiency, parameter::reduce_scatter_bandwidth_ratio,
          parameter::all_gather_bandwidth_ratio, parameter::all_to_all_bandwidth_ratio})
      p.set(all_reduce_parameter_at(efficiency, gpus), 1);
  }
  p.set(parameter::all_reduce_oneshot_below_bytes, 0);
  return p;
}

cluster_links links_of(const interconnect_spec &nvlink, const model_parameters &parameters,
                       const node_network &network) {
  return {nvlink, parameters, network.bytes_per_s, network.latency_s};
}

double collective_s(collective c, double bytes, rank_group group, const cluster_links &l) {
  const int ranks = std::max(1, group.ranks);
  if (ranks < 2 || bytes <= 0)
    return 0;
  const int k = std::clamp(group.per_node, 1, ranks); // GPUs of the group on each node
  const int n = (ranks + k - 1) / k;                  // nodes
  const double hops = std::log2(static_cast<double>(n));
  switch (c) {
  case collective::all_reduce:
    if (n == 1)
      return modelled_all_reduce_s(static_cast<std::int64_t>(bytes), k, l.nvlink, l.parameters);
    // Reduce-scatter inside each node, all-reduce across, all-gather inside again.
    return node_pass_s(collective::reduce_scatter, bytes, k, l) +
           network_pass_s(bytes / k, n, 2, 2 * hops, l) +
           node_pass_s(collective::all_gather, bytes, k, l);
  case collective::reduce_scatter:
  case collective::all_gather:
    return node_pass_s(c, bytes, k, l) + network_pass_s(bytes / k, n, 1, hops, l);
  case collective::all_to_all: {
    // Each GPU's share for its own node crosses NVLink, the rest its NIC, at once.
    const double inside = node_pass_s(c, bytes * k / ranks, k, l);
    const double across =
        n < 2 ? 0 : l.network_latency_s + bytes * (ranks - k) / ranks / l.network_bytes_per_s;
    return std::max(inside, across);
  }
  case collective::send:
    return k >= 2 ? node_pass_s(c, 2 * bytes, 2, l) // (2 − 1)/2 of twice the message: the message
                  : l.network_latency_s + bytes / l.network_bytes_per_s;
  }
  return 0;
}

} // namespace roofline
