// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a collective between GPUs costs: inside a node over its NVLink (the all-reduce model
// interconnect.hpp fits), across nodes over the network, and hierarchically for a group that
// spans nodes (inside each node first, then across, then inside again).

#include "roofline/model/interconnect.hpp"
#include "roofline/model/model_parameters.hpp"

#include <optional>
#include <string_view>

namespace roofline {

enum class collective { all_reduce, reduce_scatter, all_gather, all_to_all, send };

/// The share of a node's link bandwidth collective `c` reaches over `gpus` of it: the
/// all-reduce's fitted link efficiency, times the kind's bandwidth against an all-reduce's (NCCL's
/// rings for a reduce-scatter or an all-gather, its peer-to-peer sends for an all-to-all; a
/// send's, 1).
double collective_link_efficiency(collective c, int gpus, const model_parameters &p);

/// "all_reduce", "reduce_scatter", "all_gather", "all_to_all", "send": an op's kind.
std::string_view to_string(collective c);
/// The collective an op kind names; nullopt for any other kind.
std::optional<collective> parse_collective(std::string_view kind);

/// A collective's GPUs: how many, and how many of them share a node (an NVLink domain); the
/// others are on as many nodes as it takes, `per_node` on each.
struct rank_group {
  int ranks = 1;
  int per_node = 1;
};

/// The GPUs of a group of `ranks` whose members are `stride` ranks apart that share a node of
/// `gpus_per_node` (ranks numbered node by node).
int per_node(int ranks, std::int64_t stride, int gpus_per_node);

/// What joins nodes: each GPU's NIC (a cluster's, clusters/*.yaml). A node is what the GPU's
/// own links and host join (interconnect_spec::max_gpus).
struct node_network {
  double bytes_per_s = 0;  ///< per GPU, one direction, as collectives reach it
  double latency_s = 5e-6; ///< one message across the network, end to end
};

/// What joins a cluster's GPUs: a node's links (the GPU spec's, with its fitted all-reduce
/// parameters) and the network between nodes.
struct cluster_links {
  interconnect_spec nvlink;
  model_parameters parameters;
  double network_bytes_per_s = 0; ///< per GPU, one direction, as collectives reach it
  double network_latency_s = 0;
};

/// `parameters` with every collective inside a node at its links' full bandwidth, with no latency
/// and no one-shot path: what a collective's bound (its roofline time) is priced with.
model_parameters at_full_link_speed(model_parameters parameters);

/// The links of GPUs joined by `nvlink` (with its model `parameters`) inside a node, and by
/// `network` between nodes.
cluster_links links_of(const interconnect_spec &nvlink, const model_parameters &parameters,
                       const node_network &network);

/// The time of collective `c` over `group` of a message of `bytes` per GPU: an all-reduce's
/// buffer; a reduce-scatter's input and an all-gather's output (whole, on each GPU); an
/// all-to-all's send buffer; a send's message (from one GPU of the group to another, on the same
/// node where per_node is 2 or more). Rings inside a node; across nodes, rings of bandwidth and
/// trees of latency (2·log2 n hops for an all-reduce, log2 n for the others). 0 for a group of
/// one.
double collective_s(collective c, double bytes, rank_group group, const cluster_links &links);

} // namespace roofline
