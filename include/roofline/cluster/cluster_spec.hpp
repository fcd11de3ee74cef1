// SPDX-License-Identifier: Apache-2.0
#pragma once
// A cluster: nodes of GPUs joined by NVLink (or NVSwitch) inside and by a network (InfiniBand,
// RoCE) between them, as a file in clusters/ describes it (docs/cluster-format.md).

#include "roofline/model/collectives.hpp"

#include <filesystem>
#include <optional>
#include <string>

namespace roofline {

struct cluster_spec {
  std::string name;         ///< "dgx-h100"
  std::string display_name; ///< "DGX H100 SuperPOD (8 × H100 SXM, 8 × 400 Gb/s NDR)"
  std::string gpu;          ///< its GPU's spec name ("h100-sxm5")
  /// GPUs one NVLink domain joins: a node (8 on an HGX board), or a rack (72 in a GB200 NVL72).
  int gpus_per_node = 8;
  /// Nodes in the cluster (its size where a question names no GPU count).
  int nodes = 1;
  /// Between nodes, per GPU and per direction: its NIC's bandwidth (a 400 Gb/s NDR port: 50e9).
  double network_bytes_per_s = 0;
  double network_latency_s = 5e-6; ///< one message across the network, end to end
  /// The share of network_bytes_per_s collectives reach (NCCL's bus bandwidth over InfiniBand).
  double network_efficiency = 0.8;
  std::string network_kind;                 ///< "infiniband-ndr", "roce", ...
  std::optional<double> price_per_gpu_hour; ///< USD, all in; none: the GPU spec's
  std::string origin;                       ///< the file it was read from

  int gpus() const { return gpus_per_node * nodes; }
};

/// What joins `cluster`'s nodes, as collectives reach it (its NIC's bandwidth × efficiency).
node_network network_of(const cluster_spec &cluster);

/// Reads a cluster file (YAML). Throws input_error naming the file, the line and what was
/// expected: a missing or unknown key, a count or bandwidth out of its range.
cluster_spec load_cluster_spec(const std::filesystem::path &file);

/// `name_or_file` as a cluster: a file where one is there, else clusters/<name>.yaml of the
/// source tree. Throws input_error naming the clusters known where it is neither.
cluster_spec find_cluster_spec(const std::string &name_or_file);

} // namespace roofline
