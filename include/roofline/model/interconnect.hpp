// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/model/model_parameters.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

// How the GPUs of one host talk to each other, and what an all-reduce between them costs: from
// the datasheet's links, or from NCCL measured on the host.
namespace roofline {

/// A GPU's links to its peers, as its datasheet gives them (per GPU, per direction).
struct interconnect_spec {
  std::string kind;            ///< "nvlink4", "pcie5", ...
  int links = 0;               ///< NVLink links per GPU; 0 for PCIe only
  double bytes_per_s = 0;      ///< all links together, one direction
  double pcie_bytes_per_s = 0; ///< the PCIe fallback (x16), one direction
  /// The most GPUs these links join: one host (8 on an HGX board, the default), a pair of
  /// bridged cards (2), an NVL72 rack (72).
  int gpus = default_host_gpus;
  /// The most GPUs of one host. Between `gpus` and these a collective runs over PCIe; beyond
  /// both it crosses hosts, over a cluster's network where one is given (collectives.hpp).
  int host_gpus = default_host_gpus;
  static constexpr int default_host_gpus = 8;

  /// The most GPUs a collective is modelled over: the links' domain or the host, the larger.
  int max_gpus() const { return gpus > host_gpus ? gpus : host_gpus; }
  /// The bandwidth (one direction) a collective over `n` GPUs runs at: the links' where they
  /// join that many, else PCIe's.
  double bytes_per_s_over(int n) const { return n > gpus ? pcie_bytes_per_s : bytes_per_s; }
};

/// One all-reduce timed on the host: `bytes` per GPU reduced over all of them.
struct all_reduce_sample {
  std::int64_t bytes = 0;
  double time_s = 0; ///< the slowest GPU's, median of the runs
};

/// NCCL's all-reduce over a host's GPUs, measured for a range of sizes (`roofline-advise device
/// --measure` on a host with two or more GPUs).
struct all_reduce_table {
  int gpus = 0;
  std::string precision = "bf16";         ///< of the elements reduced (summed)
  std::string library;                    ///< "NCCL 2.27.7"
  std::string origin;                     ///< what measured it, where and when
  std::vector<all_reduce_sample> samples; ///< by increasing bytes
};

/// The cache document (JSON): the table and every sample with its algbw and busbw.
std::string to_json_text(const all_reduce_table &table);
/// Reads a cache document. Throws input_error naming `origin` when it is not one.
all_reduce_table parse_all_reduce_table(const std::string &json_text, const std::string &origin);

/// Algorithm bandwidth, bytes / time: what nccl-tests calls algbw.
double algorithm_bandwidth(std::int64_t bytes, double time_s);

/// Bus bandwidth, algbw · 2(N − 1) / N: the bytes each GPU's links carry per second in a ring
/// all-reduce over N GPUs (nccl-tests' busbw), comparable with the links' bandwidth.
double bus_bandwidth(std::int64_t bytes, double time_s, int gpus);

/// `group`'s value (all_reduce_latency_s or all_reduce_link_efficiency) for an all-reduce over
/// `gpus`: its own for 2, 4 and 8 GPUs, else interpolated in log2 of the count between them, the
/// end values outside.
double all_reduce_parameter(const model_parameters &params, parameter group, int gpus);

/// The bytes each GPU's links carry in an all-reduce of `bytes` over `gpus`: the ring's
/// 2(N − 1)/N of them, or (N − 1)× them below `all_reduce_oneshot_below_bytes` (the one-shot
/// kernel, each GPU reading every peer's whole message). 0 for fewer than 2 GPUs.
double all_reduce_traffic_bytes(std::int64_t bytes, int gpus, const model_parameters &params);

/// An all-reduce's time without a measured table: `all_reduce_latency_s` plus its traffic
/// (all_reduce_traffic_bytes) at `all_reduce_link_efficiency` of the links' bandwidth, both for
/// `gpus` (specs/arch/<architecture>.yaml fits them; the table's defaults are typical figures,
/// docs/benchmarks.md). 0 for fewer than 2 GPUs.
double modelled_all_reduce_s(std::int64_t bytes, int gpus, const interconnect_spec &links,
                             const model_parameters &params);

/// An all-reduce's time from a measured table over the same number of GPUs: interpolated
/// log-log between the sizes measured; below the smallest, the smallest's time (the latency
/// floor); above the largest, at the largest's bus bandwidth. nullopt for another GPU count or
/// an empty table.
std::optional<double> measured_all_reduce_s(std::int64_t bytes, int gpus,
                                            const all_reduce_table &table);

} // namespace roofline
