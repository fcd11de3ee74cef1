// SPDX-License-Identifier: Apache-2.0
#include "roofline/model/device_report.hpp"

#include "roofline/common/error.hpp"
#include "roofline/model/ceilings.hpp"
#include "roofline/model/model_fit.hpp"
#include "roofline/model/spec_catalog.hpp"

namespace roofline {

gpu_spec paper_spec(const device_report &r) {
  // A catalog match inherited its architecture's parameters when the catalog was built.
  return r.datasheet ? *r.datasheet : spec_catalog::builtin().inherit(r.theoretical);
}

gpu_spec local_spec(const device_report &r) {
  gpu_spec spec = paper_spec(r);
  spec.name = "local";
  spec.aliases.clear();
  spec.display_name = r.device.name;
  spec.origin =
      r.datasheet ? r.datasheet->origin + " (matched by device query)" : r.theoretical.origin;
  return r.ceilings ? apply_ceilings(spec, *r.ceilings) : spec;
}

namespace {

std::string all_reduce_cache_name(const std::string &gpus_key) {
  return "all-reduce-" + gpus_key + ".json";
}

} // namespace

std::optional<std::filesystem::path> all_reduce_cache_file(const std::string &gpus_key) {
  return cache_file(all_reduce_cache_name(gpus_key));
}

std::optional<all_reduce_table> load_cached_all_reduce(const std::string &gpus_key) {
  return load_cache_file(all_reduce_cache_name(gpus_key), parse_all_reduce_table);
}

std::filesystem::path save_all_reduce(const std::string &gpus_key, const all_reduce_table &table) {
  return write_cache_file(all_reduce_cache_name(gpus_key), to_json_text(table) + "\n");
}

local_gpu local_gpu_of(const device_report &r) {
  gpu_spec datasheet = paper_spec(r);
  datasheet.name = "local";
  local_gpu local{local_spec(r), datasheet, "local GPU " + r.device.name,
                  r.ceilings ? measured_host_floor(*r.ceilings) : typical_host_floor(),
                  r.all_reduce};
  // Fitted on this very GPU: it overrides what it measured of the architecture's parameters.
  try {
    if (auto calibration = load_calibration(r.device.uuid))
      local.spec.parameters = apply(local.spec.parameters, *calibration);
  } catch (const input_error &e) {
    local.selection += std::string("; local calibration not used: ") + e.what();
  }
  local.selection +=
      r.ceilings
          ? ", ceilings measured " + r.ceilings->measured_at
          : ", " + std::string(r.datasheet ? "datasheet " + r.datasheet->name : "theoretical") +
                " roofline: `describe_local_gpu::measure` measures it";
  // A cache file left out, and why.
  if (!r.ceilings && !r.ceilings_source.empty())
    local.selection += "; ceilings " + r.ceilings_source;
  if (!r.all_reduce && !r.all_reduce_source.empty())
    local.selection += "; all-reduce table " + r.all_reduce_source;
  return local;
}

} // namespace roofline
