// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/common/error.hpp"
#include "roofline/model/accuracy.hpp"
#include "roofline/model/interconnect.hpp"
#include "roofline/model/model_parameters.hpp"
#include "roofline/model/precision.hpp"

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace roofline {

/// A peak arithmetic rate of one precision, in FLOP/s (operations/s for int8); FMA counts as 2.
struct peak_rate {
  double dense_flop_per_s = 0;
  std::optional<double> sparse_flop_per_s; ///< with 2:4 structured sparsity, where the GPU has it
  /// Measured on the GPU itself (apply_ceilings): taken at whatever clock it held, so
  /// gpu_spec::peak_flop_per_s never scales it by a sustained clock.
  bool measured = false;
};

/// The hourly prices (USD per GPU) a spec's `price_per_hour_usd` and a comparison's prices may
/// take: anything outside is a slip of units, refused rather than priced (docs/spec-format.md).
inline constexpr double min_price_per_hour_usd = 0.001;
inline constexpr double max_price_per_hour_usd = 10000;
/// Whether `usd_per_hour` (USD per GPU-hour) is a price a spec or a comparison may give: from
/// min_price_per_hour_usd to max_price_per_hour_usd; false for NaN. The one check of a price.
constexpr bool price_in_range(double usd_per_hour) {
  return usd_per_hour >= min_price_per_hour_usd && usd_per_hour <= max_price_per_hour_usd;
}
/// The DRAM bandwidths (bytes/s) a spec may give and a measured ceiling (DRAM or L2) may hold:
/// 1 GB/s to 1 PB/s.
inline constexpr double min_bandwidth_bytes_per_s = 1e9;
inline constexpr double max_bandwidth_bytes_per_s = 1e15;
/// The peak rates (FLOP/s) a spec may give and a measured ceiling may hold: 1 GFLOP/s to
/// 1 EFLOP/s.
inline constexpr double min_peak_flop_per_s = 1e9;
inline constexpr double max_peak_flop_per_s = 1e18;

/// A GPU as its datasheet (or a device query, or a measurement) describes it. SI units throughout.
struct gpu_spec {
  std::string name;                 ///< lower-case with dashes: "h200-sxm"
  std::vector<std::string> aliases; ///< short names: "h200"
  std::string display_name;         ///< "NVIDIA H200 SXM 141GB"
  std::string architecture;         ///< "hopper"
  std::string compute_capability;   ///< "9.0"
  int sm_count = 0;
  double boost_clock_hz = 0;
  /// The SM clock a power-capped card holds under full tensor load, where its spec gives one
  /// (`sustained_clock_mhz`, at most the boost clock): peak_flop_per_s scales the datasheet's
  /// peaks, printed at the boost clock, down to it.
  std::optional<double> sustained_clock_hz;
  /// The device memory the card reports (nvidia-smi's total: a spec's `memory_mib` × 2²⁰), else
  /// its datasheet's GB × 10⁹.
  double memory_bytes = 0;
  std::string memory_type;
  double dram_bytes_per_s = 0;
  double l2_bytes = 0;
  double tdp_w = 0;
  std::optional<double> price_per_hour_usd; ///< in [min_, max_price_per_hour_usd]
  /// Its links to the host's other GPUs (NVLink, else PCIe), as the datasheet gives them.
  std::optional<interconnect_spec> interconnect;
  std::map<precision, peak_rate> peaks;
  /// The GEMM model's parameters for this GPU: its architecture's (specs/arch/<architecture>.yaml,
  /// generic defaults where none was fitted), then what its own file overrides (as resolved by
  /// spec_catalog; parse_gpu_spec alone applies the file's on the defaults).
  model_parameters parameters;
  /// What the GPU's own file (its `model:` section) sets, on top of its architecture's.
  parameter_overrides model_overrides;
  /// How far measured device times fall from the model's, by op class: its architecture's
  /// (spec_catalog), default_accuracy_band for every class where none was measured.
  accuracy_bands accuracy;
  /// The datasheet's DRAM bandwidth and peaks, where measured ceilings replaced them above
  /// (apply_ceilings): the GEMM model's parameters are fractions of these, whatever was measured.
  struct paper_numbers {
    double dram_bytes_per_s = 0;
    std::map<precision, peak_rate> peaks;
  };
  std::optional<paper_numbers> paper;
  std::string
      origin; ///< where the numbers come from: "specs/h200-sxm.yaml", a path, "device query"

  /// True when the GPU has a rate for this precision.
  bool supports(precision p) const { return peaks.count(p) != 0; }

  /// "gpu has no bf16 rate in its spec (origin); it has fp64, fp32, fp16": why `p` cannot be
  /// analysed.
  std::string unsupported_message(precision p) const;

  /// The SM clock (Hz) the peaks are held at: sustained_clock_hz where the spec gives one, else
  /// boost_clock_hz.
  double clock_hz() const { return sustained_clock_hz ? *sustained_clock_hz : boost_clock_hz; }

  /// "sustained" when the peaks are held at sustained_clock_hz, else "boost".
  std::string_view clock_basis() const { return sustained_clock_hz ? "sustained" : "boost"; }

  /// The peak the analysis holds `p` against, in FLOP/s: the 2:4-sparse one when `sparse` and the
  /// GPU has one, else the dense one; a datasheet peak scaled by sustained_clock_hz /
  /// boost_clock_hz where the spec gives a sustained clock (a measured one as it is). Throws
  /// input_error naming the precisions the GPU has when it has none for `p`.
  double peak_flop_per_s(precision p, bool sparse = false) const;

  /// Ops:byte ridge point: peak_flop_per_s(p, sparse) / dram_bytes_per_s.
  double ridge_intensity(precision p, bool sparse = false) const;
};

/// The GPU architectures a spec may name, oldest first: "volta", "turing", "ampere", "ada",
/// "hopper", "blackwell" (sm_100) and "blackwell-sm120".
const std::vector<std::string> &architecture_names();

/// The architecture of compute capability major.minor (9.0: "hopper"); nullopt for one no GPU
/// here has. device_description's per-SM rate tables follow it.
std::optional<std::string> architecture_of(int cc_major, int cc_minor);

/// Parses a spec from YAML text; `origin` names it in errors. Throws input_error: for a key
/// missing or malformed, a number out of its range, an `architecture` that is a near miss of
/// one of architecture_names() (any case is read: `Hopper`; a name far from all is a new
/// architecture, on generic defaults), a `compute_capability` not written MAJOR.MINOR or, for a
/// known architecture, of another one.
gpu_spec parse_gpu_spec(std::string_view yaml_text, const std::string &origin);

/// Reads and parses a spec file. Throws input_error.
gpu_spec load_gpu_spec(const std::filesystem::path &file);

/// The spec the GEMM model runs against: `spec` with its datasheet numbers back where measured
/// ceilings replaced them (the model's efficiencies are fitted against the datasheet's roofs, and
/// a measured roof would count the same shortfall twice).
gpu_spec model_basis(gpu_spec spec);

/// The parameters one architecture's GPUs share (specs/arch/<architecture>.yaml).
struct architecture_parameters {
  std::string architecture; ///< "hopper"
  parameter_overrides parameters;
  /// The architecture whose values it takes for what it did not measure ("hopper": the one
  /// measured most); empty: the generic defaults. Resolved by the catalog, one level deep.
  std::string inherits = {};
  /// Its `accuracy:` bands (measured / predicted on held-out rows), by class; a class it lacks
  /// takes the base's where it inherits.
  accuracy_bands accuracy = {};
  /// Where `architecture:` and `inherits:` stand in the file it was read from (the file alone
  /// for one built in code).
  source_location where = {}, inherits_where = {};
};

/// Parses an architecture file: `architecture:` (read as a spec's is), a `model:` section and an
/// optional `accuracy:` one (class → {p10, p90}). Throws input_error.
architecture_parameters parse_architecture_parameters(std::string_view yaml_text,
                                                      const std::string &origin);

/// `spec` with its parameters resolved: `architecture`'s (nullptr: none fitted, generic
/// defaults), then the spec's own overrides; its accuracy bands `architecture`'s.
gpu_spec with_architecture(gpu_spec spec, const architecture_parameters *architecture);

/// A `model:` section (of a spec, an architecture or a calibration) as YAML text, holding
/// `overrides`' values in the parameter table's order.
std::string to_yaml(const parameter_overrides &overrides);

} // namespace roofline
