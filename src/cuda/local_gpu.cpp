// SPDX-License-Identifier: Apache-2.0
#include "roofline/cuda/local_gpu.hpp"

#include "roofline/ceilings.hpp"
#include "roofline/cuda/ceiling_probe.hpp"
#include "roofline/cuda/device.hpp"
#include "roofline/interconnect.hpp"

#include "nccl_all_reduce.hpp"
#include "roofline/spec_catalog.hpp"

namespace roofline::cuda {

device_report local_device_report(int ordinal) {
  device_report r;
  r.device = describe_device(ordinal);
  r.theoretical = theoretical_spec(r.device);
  if (const gpu_spec *match = matching_spec(spec_catalog::builtin(), r.device))
    r.datasheet = *match;
  r.ceilings = load_cached_ceilings(r.device.uuid);
  if (r.ceilings)
    r.ceilings_source = "cache " + ceilings_cache_file(r.device.uuid).string();
  if (device_count() >= 2) {
    r.all_reduce = load_cached_all_reduce(r.device.uuid);
    if (r.all_reduce)
      r.all_reduce_source = "cache " + all_reduce_cache_file(r.device.uuid).string();
  }
  return r;
}

device_report measured_device_report(int ordinal, bool refresh,
                                     const std::function<void(const std::string &)> &progress) {
  device_report r = local_device_report(ordinal);
  if (!r.ceilings || refresh) {
    r.ceilings = measure_ceilings(ordinal, {progress});
    save_ceilings(*r.ceilings);
    r.ceilings_source = "measured now, saved to " + ceilings_cache_file(r.device.uuid).string();
  }
  // A host of several GPUs: NCCL's all-reduce over all of them too. Without NCCL the ceilings
  // stand, and the report says why the table is missing.
  if (device_count() >= 2 && (!r.all_reduce || refresh)) {
    try {
      r.all_reduce = measure_all_reduce(default_all_reduce_sizes(), progress);
      save_all_reduce(r.device.uuid, *r.all_reduce);
      r.all_reduce_source =
          "measured now, saved to " + all_reduce_cache_file(r.device.uuid).string();
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
