// SPDX-License-Identifier: Apache-2.0
#pragma once

// Helpers several unit tests share: text checks, CSV splitting, model configs and their ops, and a
// device and its ceilings as an H200 reports them.
#include "../scoped_env.hpp"
#include "roofline/common/error.hpp"
#include "roofline/input/model_config.hpp"
#include "roofline/model/ceilings.hpp"
#include "roofline/model/device_description.hpp"
#include "roofline/model/op.hpp"

#include <doctest/doctest.h>

#include <algorithm>

#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace roofline::test {

inline bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

inline std::vector<std::string> lines_of(const std::string &text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  return lines;
}

/// Splits a CSV line that has no quoted fields.
inline std::vector<std::string> fields_of(const std::string &line) {
  std::vector<std::string> fields;
  std::string field;
  std::istringstream in(line);
  while (std::getline(in, field, ','))
    fields.push_back(field);
  if (!line.empty() && line.back() == ',')
    fields.emplace_back();
  return fields;
}

/// Splits a CSV line whose fields may be double-quoted (RFC 4180: "" inside quotes is a quote).
inline std::vector<std::string> csv_fields(const std::string &line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      fields.back() += '"';
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  return fields;
}

inline bool is_number(const std::string &text) {
  if (text.empty())
    return false;
  char *end = nullptr;
  (void)std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size();
}

/// What the CUDA device query reports on an H200 SXM.
inline device_description h200_description() {
  device_description d;
  d.ordinal = 0;
  d.name = "NVIDIA H200";
  d.uuid = "GPU-5a1c0c2e-0f3d-4b7e-9a61-1d2c3b4a5f60";
  d.cc_major = 9;
  d.cc_minor = 0;
  d.sm_count = 132;
  d.sm_clock_hz = 1980e6;
  d.memory_clock_hz = 3201e6;
  d.memory_bus_width_bits = 6016;
  d.l2_bytes = 62914560; // 60 MiB
  d.memory_bytes = 150.1e9;
  d.driver_version = "560.35.03";
  d.runtime_version = "12.6";
  return d;
}

/// One measured ceiling (spread 1.2%), failed when `failure` is set.
inline ceiling_result result(std::string name, ceiling_kind kind, std::optional<precision> p,
                             double value, std::string failure = {}) {
  ceiling_result r;
  r.name = std::move(name);
  r.kind = kind;
  r.precision = p;
  r.value = value;
  r.spread = 0.012;
  r.method = "median of 20 timed runs";
  r.failure = std::move(failure);
  return r;
}

/// Ceilings as an H200 measurement might report them, with a failed run and distractors.
inline measured_ceilings h200_ceilings() {
  measured_ceilings c;
  c.uuid = "GPU-5a1c0c2e-0f3d-4b7e-9a61-1d2c3b4a5f60";
  c.device_name = "NVIDIA H200";
  c.measured_at = "2025-01-02T03:04:05Z";
  c.results = {
      result("dram read", ceiling_kind::dram_bandwidth, std::nullopt,
             4.5e12), // not the copy: no roof
      result("dram copy", ceiling_kind::dram_bandwidth, std::nullopt, 4.2e12),
      result("l2 read", ceiling_kind::l2_bandwidth, std::nullopt, 10e12),
      result("fp16 mma kernel", ceiling_kind::flop_rate, precision::fp16, 6.5e14),
      result("fp16 cuBLASLt 8192³", ceiling_kind::flop_rate, precision::fp16, 7.0e14),
      result("fp16 cuBLASLt 16384³", ceiling_kind::flop_rate, precision::fp16, 9.9e14,
             "CUBLAS_STATUS_NOT_SUPPORTED"),
      result("fp32 fma kernel", ceiling_kind::flop_rate, precision::fp32, 5.0e13),
      result("fp8 cuBLASLt 8192³", ceiling_kind::flop_rate, precision::fp8, 1.3e15,
             "out of memory"),
      result("launch latency", ceiling_kind::latency, std::nullopt, 2.5e-6),
  };
  return c;
}

/// h200_ceilings() with cuBLAS host floors (eager seconds per call of a tiny GEMM) as the probe
/// records them: fp16 and bf16 measured, tf32 failed, fp32 twice (a failed run, then a good one),
/// and a distractor host floor without a precision.
inline measured_ceilings h200_ceilings_with_host_floors() {
  measured_ceilings c = h200_ceilings();
  const auto floor = [](std::string name, std::optional<precision> p, double seconds,
                        std::string failure = {}) {
    ceiling_result r =
        result(std::move(name), ceiling_kind::host_floor, p, seconds, std::move(failure));
    r.method = "eager 6.1 µs per call vs 2.0 µs graph-replayed: 64³ cuBLASLt, 200 calls per run, "
               "median of 20 runs";
    return r;
  };
  c.results.push_back(floor("cuBLAS call host floor fp32", precision::fp32, 9.9e-6, "timeout"));
  c.results.push_back(floor("cuBLAS call host floor fp32", precision::fp32, 7.3e-6));
  c.results.push_back(
      floor("cuBLAS call host floor tf32", precision::tf32, 7.0e-6, "CUBLAS_STATUS_NOT_SUPPORTED"));
  c.results.push_back(floor("cuBLAS call host floor fp16", precision::fp16, 6.1e-6));
  c.results.push_back(floor("cuBLAS call host floor bf16", precision::bf16, 6.2e-6));
  c.results.push_back(floor("some host floor", std::nullopt, 1e-3));
  return c;
}

/// examples/configs/<name> in the source tree.
inline std::string config_path(const std::string &name) {
  return std::string(ROOFLINE_SOURCE_DIR) + "/examples/configs/" + name;
}

/// The first op of `ops` at the layer path `layer`; the test fails there when there is none.
inline const op &op_named(const std::vector<op> &ops, const std::string &layer) {
  const auto found =
      std::find_if(ops.begin(), ops.end(), [&](const op &o) { return o.layer == layer; });
  REQUIRE_MESSAGE(found != ops.end(), layer);
  return *found;
}

/// The message a config (read as "bad.json") is refused with; "no error" when it is built.
inline std::string config_error(const std::string &json, const config_options &options = {}) {
  try {
    network_from_config(json, "bad.json", options);
  } catch (const input_error &e) {
    return e.what();
  }
  return "no error";
}

} // namespace roofline::test
