// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/ceilings.hpp"
#include "roofline/device_description.hpp"
#include "roofline/gpu_spec.hpp"
#include "roofline/report_writer.hpp"

#include <optional>
#include <ostream>
#include <string>

namespace roofline {

/// The local GPU three ways: as the device query derives it, as its datasheet says, as measured.
struct device_report {
  device_description device;
  gpu_spec theoretical;              ///< theoretical_spec(device)
  std::optional<gpu_spec> datasheet; ///< matching_spec(), where the catalog has it
  std::optional<measured_ceilings> ceilings;
  std::string ceilings_source; ///< "measured now", "cache <file>", or empty
};

/// The GPU on paper: its catalog match, else the theoretical spec with its architecture's model
/// parameters.
gpu_spec paper_spec(const device_report &r);

/// The roofline the analyses use for this GPU: paper_spec with the measured ceilings applied
/// where there are any. Named "local".
gpu_spec local_spec(const device_report &r);

/// Writes the report: the device, then every roof side by side (theory, datasheet, measured).
void write_device_report(const device_report &r, output_format format, std::ostream &out,
                         const write_options &options = {});

} // namespace roofline
