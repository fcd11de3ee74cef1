// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/output/output_format.hpp"

#include <ostream>
#include <vector>

namespace roofline {

struct report;
struct gpu_spec;
struct device_report;
struct comparison;
struct serving_comparison;
struct training_comparison;

// Every document in every format, each a pure function of its value (one writer file each).

/// An analysis: the ops with their predictions (and measurements), totals, advice and notes.
void write_report(const report &r, output_format format, std::ostream &out,
                  const write_options &options = {});

/// The GPU catalog: peaks, bandwidth and ridge points.
void write_spec_list(const std::vector<gpu_spec> &specs, output_format format, std::ostream &out,
                     const write_options &options = {});

/// The local GPU: the device, then every roof side by side (theory, datasheet, measured).
void write_device_report(const device_report &r, output_format format, std::ostream &out,
                         const write_options &options = {});

/// Comparisons (one per batch): totals per GPU, per-op times and speedups, the verdict.
void write_comparison(const std::vector<comparison> &comparisons, output_format format,
                      std::ostream &out, const write_options &options = {});

/// A serving question: each setup's batch, TTFT, TPOT, throughput and price, the verdict.
void write_serving(const serving_comparison &serving, output_format format, std::ostream &out,
                   const write_options &options = {});

/// A training question on one cluster or several: the layouts ranked, each step's parts, the
/// verdict.
void write_training(const training_comparison &training, output_format format, std::ostream &out,
                    const write_options &options = {});

} // namespace roofline
