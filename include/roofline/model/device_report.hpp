// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/model/ceilings.hpp"
#include "roofline/model/device_description.hpp"
#include "roofline/model/gpu_spec.hpp"
#include "roofline/model/host_floor.hpp"
#include "roofline/model/interconnect.hpp"

#include <filesystem>
#include <optional>
#include <string>

namespace roofline {

/// The local GPU three ways: as the device query derives it, as its datasheet says, as measured.
struct device_report {
  device_description device;
  gpu_spec theoretical;              ///< theoretical_spec(device)
  std::optional<gpu_spec> datasheet; ///< matching_spec(), where the catalog has it
  std::optional<measured_ceilings> ceilings;
  /// "measured now, saved to <file>", "cache <file>", "cache not used: <why>", or empty
  std::string ceilings_source;
  /// NCCL's all-reduce over the host's GPUs (two or more), measured or cached.
  std::optional<all_reduce_table> all_reduce;
  std::string all_reduce_source; ///< as ceilings_source; or why it was not measured
};

/// The host's all-reduce table in the cache, under `gpus_key`: what names the set of GPUs it
/// spans (the measurement layer's: GPU 0's UUID, their count and a hash of every UUID); nullopt
/// when there is no cache directory.
std::optional<std::filesystem::path> all_reduce_cache_file(const std::string &gpus_key);
/// The cached table, or nullopt when none is saved (a damaged file, or one that cannot be used:
/// read_cache_file, throws input_error).
std::optional<all_reduce_table> load_cached_all_reduce(const std::string &gpus_key);
/// Writes the cache file (write_cache_file) and returns its path. Throws roofline::error on
/// failure.
std::filesystem::path save_all_reduce(const std::string &gpus_key, const all_reduce_table &table);

/// The GPU on paper: its catalog match, else the theoretical spec with its architecture's model
/// parameters.
gpu_spec paper_spec(const device_report &r);

/// The roofline the analyses use for this GPU: paper_spec with the measured ceilings applied
/// where there are any. Named "local".
gpu_spec local_spec(const device_report &r);

/// The roofline `--gpu auto` analyses against, and a line saying where its numbers come from.
struct local_gpu {
  gpu_spec spec;      ///< with the measured ceilings and fitted model, where there are any
  gpu_spec datasheet; ///< the same GPU on paper (its catalog spec, else the theoretical roofline)
  std::string selection;
  roofline::host_floor host; ///< this machine's, measured with the ceilings; else typical
  std::optional<all_reduce_table> all_reduce; ///< the host's, where measured
};

/// The local GPU as `--gpu auto` analyses against it: local_spec(), with the parameters a local
/// calibration fitted on it (left out, with a word in the selection, when it cannot be used), and
/// the host floor measured with its ceilings (else the typical one).
local_gpu local_gpu_of(const device_report &r);

} // namespace roofline
