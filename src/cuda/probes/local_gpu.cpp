// SPDX-License-Identifier: Apache-2.0
#include "roofline/cuda/local_gpu.hpp"

#include "roofline/common/error.hpp"
#include "roofline/cuda/ceiling_probe.hpp"
#include "roofline/cuda/device.hpp"
#include "roofline/model/ceilings.hpp"
#include "roofline/model/interconnect.hpp"
#include "roofline/model/spec_catalog.hpp"

#include "roofline/cuda/detail/nccl_all_reduce.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <string>

namespace roofline::cuda {

namespace {

/// The set of GPUs an all-reduce table spans: GPU 0's UUID, their count and a hash (FNV-1a) of
/// every UUID, so that another subset of the host's GPUs (CUDA_VISIBLE_DEVICES) gets its own
/// table, in a file name of bounded length.
std::string all_reduce_key(const device_description &first, int count) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (int i = 0; i < count; ++i)
    for (unsigned char c : i == 0 ? first.uuid : describe_device(i).uuid) {
      hash ^= c;
      hash *= 0x100000001b3ULL;
    }
  return fmt::format("{}-{}gpus-{:016x}", first.uuid, count, hash);
}

} // namespace

device_report local_device_report(int ordinal) {
  device_report r;
  r.device = describe_device(ordinal);
  r.theoretical = theoretical_spec(r.device);
  if (const gpu_spec *match = matching_spec(spec_catalog::builtin(), r.device))
    r.datasheet = *match;
  // A cache file that cannot be used is left out, with why: `device --measure` measures again.
  try {
    r.ceilings = load_cached_ceilings(r.device.uuid);
    if (r.ceilings)
      r.ceilings_source = "cache " + ceilings_cache_file(r.device.uuid)->string();
  } catch (const roofline::input_error &e) {
    r.ceilings_source = std::string("cache not used: ") + e.what();
  }
  if (const int gpus = device_count(); gpus >= 2) {
    const std::string key = all_reduce_key(r.device, gpus);
    try {
      r.all_reduce = load_cached_all_reduce(key);
      if (r.all_reduce)
        r.all_reduce_source = "cache " + all_reduce_cache_file(key)->string();
    } catch (const roofline::input_error &e) {
      r.all_reduce_source = std::string("cache not used: ") + e.what();
    }
  }
  return r;
}

device_report measured_device_report(int ordinal, bool refresh,
                                     const std::function<void(const std::string &)> &progress) {
  device_report r = local_device_report(ordinal);
  if (!r.ceilings || refresh) {
    r.ceilings = measure_ceilings(ordinal, {progress});
    // Without a cache directory the measurement still stands, for this report.
    try {
      r.ceilings_source = "measured now, saved to " + save_ceilings(*r.ceilings).string();
    } catch (const roofline::error &e) {
      r.ceilings_source = std::string("measured now, not saved: ") + e.what();
    }
  }
  // A host of several GPUs: NCCL's all-reduce over all of them too. Without NCCL the ceilings
  // stand, and the report says why the table is missing.
  if (device_count() >= 2 && (!r.all_reduce || refresh)) {
    try {
      r.all_reduce = measure_all_reduce(default_all_reduce_sizes(), progress);
      const std::string key = all_reduce_key(r.device, device_count());
      try {
        r.all_reduce_source =
            "measured now, saved to " + save_all_reduce(key, *r.all_reduce).string();
      } catch (const roofline::error &e) {
        r.all_reduce_source = std::string("measured now, not saved: ") + e.what();
      }
    } catch (const std::exception &e) {
      r.all_reduce_source = std::string("not measured: ") + e.what();
    }
  }
  return r;
}

std::optional<local_gpu> find_local_gpu() {
  if (device_count() == 0)
    return std::nullopt;
  return local_gpu_of(local_device_report(0));
}

} // namespace roofline::cuda
