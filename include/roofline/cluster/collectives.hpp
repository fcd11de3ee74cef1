// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a collective between GPUs of a cluster costs: inside a node over its NVLink (the
// all-reduce model interconnect.hpp fits), across nodes over the network, and hierarchically
// for a group that spans nodes (inside each node first, then across, then inside again).

#include "roofline/model/interconnect.hpp"
#include "roofline/model/model_parameters.hpp"

namespace roofline {

struct cluster_spec;

enum class collective { all_reduce, reduce_scatter, all_gather, all_to_all, send };

/// A collective's GPUs: how many, and how many of them share a node (an NVLink domain); the
/// others are on as many nodes as it takes, `per_node` on each.
struct rank_group {
  int ranks = 1;
  int per_node = 1;
};

/// What joins a cluster's GPUs: a node's links (the GPU spec's, with its fitted all-reduce
/// parameters) and the network between nodes.
struct cluster_links {
  interconnect_spec nvlink;
  model_parameters parameters;
  double network_bytes_per_s = 0; ///< per GPU, one direction, as collectives reach it
  double network_latency_s = 0;
};

/// The links of `cluster`, whose GPU is `nvlink` with its model `parameters`.
cluster_links links_of(const cluster_spec &cluster, const interconnect_spec &nvlink,
                       const model_parameters &parameters);

/// The time of collective `c` over `group` of a message of `bytes` per GPU: an all-reduce's
/// buffer; a reduce-scatter's input and an all-gather's output (whole, on each GPU); an
/// all-to-all's send buffer; a send's message (from one GPU of the group to another, on the same
/// node where per_node is 2 or more). Rings inside a node; across nodes, rings of bandwidth and
/// trees of latency (2·log2 n hops for an all-reduce, log2 n for the others). 0 for a group of
/// one.
double collective_s(collective c, double bytes, rank_group group, const cluster_links &links);

} // namespace roofline
