// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/model/gpu_spec.hpp"
#include "roofline/model/precision.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace roofline {

/// What one ceiling measures: bytes/s of a memory level, FLOP/s of a unit, seconds of latency, or
/// the host floor: the seconds the host takes to issue one library call (a small cuBLAS GEMM of
/// one kernel issued eagerly, back to back), below which no eager call of that library goes,
/// whatever its GPU time; fallback_host_floor the same for a call cuBLAS runs on its CUTLASS
/// fallback kernels (rows breaking the 16-byte rule), whose host path is its own.
enum class ceiling_kind {
  dram_bandwidth,
  l2_bandwidth,
  flop_rate,
  latency,
  host_floor,
  fallback_host_floor,
  /// Read through NVML (issue 39): the board's draw doing nothing, watts; a unit's energy per
  /// FLOP and DRAM's per byte beyond that draw, joules, under sustained load; the FLOP/s a unit
  /// holds at the power limit.
  idle_power,
  energy_per_flop,
  energy_per_byte,
  sustained_flop_rate,
};

/// The kind's name in the cache document: "dram_bandwidth", "l2_bandwidth", "flop_rate",
/// "latency", "host_floor", "fallback_host_floor".
std::string_view to_string(ceiling_kind kind);
/// The kind of a name to_string gives; nullopt for any other text.
std::optional<ceiling_kind> parse_ceiling_kind(std::string_view name);
/// Whether the kind's value is seconds (latency, the host floors) rather than a rate.
bool is_time(ceiling_kind kind);

/// The seconds a host call (a cuBLAS call, a kernel launch) may take in a measured floor or
/// latency: 0.1 µs to 1 s. A cached time outside is damaged: hosts take a few µs.
inline constexpr double min_host_call_s = 1e-7;
inline constexpr double max_host_call_s = 1.0;

/// The values a measured ceiling of a kind may hold, in its SI unit: the spec loader's bounds
/// for bandwidths (bytes/s) and peak rates (FLOP/s), min_/max_host_call_s for the times.
struct ceiling_range {
  double min, max;
  const char *unit; ///< "bytes/s", "FLOP/s" or "s"
};
ceiling_range ceiling_value_range(ceiling_kind kind);

/// One measured ceiling: the median of repeated timed runs and its spread.
struct ceiling_result {
  std::string name; ///< "dram copy", "fp16 cuBLASLt 8192³", "launch latency"
  ceiling_kind kind = ceiling_kind::flop_rate;
  std::optional<roofline::precision> precision; ///< for flop_rate and the host floors
  double value = 0;                             ///< bytes/s, FLOP/s or s
  double spread = 0;                            ///< (max − min) / median of the timed runs
  std::string method;                           ///< how it was measured, in a few words
  std::string failure;                          ///< non-empty when the measurement failed
};

/// A GPU's measured ceilings, as saved in the cache (keyed by the GPU's UUID).
struct measured_ceilings {
  std::string uuid;
  std::string device_name;
  std::string measured_at; ///< ISO 8601 UTC
  std::vector<ceiling_result> results;

  /// The DRAM roof: the copy kernel's bandwidth (reads + writes), the pattern GEMMs and elementwise
  /// ops have; nullopt when not measured.
  std::optional<double> dram_bytes_per_s() const;
  /// The best measured rate of a precision (cuBLAS or our kernels, whichever is faster).
  std::optional<double> flop_per_s(precision p) const;
  /// The back-to-back launch time of an empty kernel (the host floor of a plain kernel launch, as
  /// memory ops pay it), seconds: the first non-failed latency result; nullopt when none.
  std::optional<double> launch_latency_s() const;
  /// The host floor of a cuBLAS call of precision `p`: the eager seconds per call of a tiny GEMM
  /// issued back to back (the first non-failed host_floor result of `p`); nullopt when not measured
  /// or failed.
  std::optional<double> host_floor_s(precision p) const;
  /// The same for a call of misaligned rows (the fallback_host_floor result of `p`).
  std::optional<double> fallback_host_floor_s(precision p) const;
  /// What NVML read (the first non-failed result of each kind; `p`'s for energy per FLOP):
  /// nullopt where not measured (no NVML, a cache written before power was measured).
  std::optional<double> idle_power_w() const;
  std::optional<double> energy_per_flop_j(precision p) const;
  std::optional<double> energy_per_dram_byte_j() const;
};

/// `spec` with its DRAM bandwidth and every measured peak replaced by the measured ceilings;
/// sparse peaks scale with their dense ones; its power parameters by what NVML read (its idle
/// share and energies per FLOP; DRAM's energy per byte only where its architecture has none
/// fitted). `origin` notes the measurement.
gpu_spec apply_ceilings(gpu_spec spec, const measured_ceilings &ceilings);

/// The cache document (JSON, format_version 2).
std::string to_json_text(const measured_ceilings &ceilings);
/// Reads a cache document of format_version 2, or of version 1 (written before host floors were
/// measured: it has none). Throws input_error naming `origin` when the text is not a ceilings
/// document of either version, or a value lies outside what its kind may take
/// (ceiling_value_range; a failed result's value: finite and non-negative).
measured_ceilings parse_ceilings(const std::string &json_text, const std::string &origin);

/// The largest cache file read, in bytes: a cache holds a few kB, so a larger one is damaged
/// (and reading it whole could take any amount of memory).
inline constexpr std::uintmax_t max_cache_file_bytes = 1 << 20;

/// This user's cache directory: $ROOFLINE_CACHE_DIR when set; else
/// $XDG_CACHE_HOME/roofline-advise when XDG_CACHE_HOME is an absolute path; else
/// $HOME/.cache/roofline-advise when HOME is one; else nullopt, no cache at all (never a folder
/// other users share, such as /tmp).
std::optional<std::filesystem::path> cache_directory();
/// cache_directory() when it exists and can be trusted; nullopt when there is none. Throws
/// input_error naming it when it is not a directory, belongs to another user, or others (its
/// group included) may write to it: what they put there would be read as this user's.
std::optional<std::filesystem::path> readable_cache_directory();
/// The file `name` in cache_directory(); nullopt when there is none.
std::optional<std::filesystem::path> cache_file(const std::string &name);
/// The text of a cache file (what every cache loader reads); nullopt when it, or its directory,
/// does not exist. Throws input_error naming the file when it cannot be used: not a regular file
/// (a symbolic link, a FIFO or a device: never followed, opened or waited on), larger than
/// max_cache_file_bytes, or unreadable; or naming its directory as readable_cache_directory().
std::optional<std::string> read_cache_file(const std::filesystem::path &file);
/// The cache file `name` read (read_cache_file) and parsed by `parse(text, path)`; nullopt when
/// there is no such file, or no cache directory. Throws what they throw.
template <class Parse>
auto load_cache_file(const std::string &name, Parse parse)
    -> std::optional<decltype(parse(std::string(), std::string()))> {
  const std::optional<std::filesystem::path> file = cache_file(name);
  const std::optional<std::string> text = file ? read_cache_file(*file) : std::nullopt;
  if (!text)
    return std::nullopt;
  return parse(*text, file->string());
}
/// Writes the cache file `name` atomically, creating cache_directory() with mode 0700 where it
/// is missing; returns its path. Throws roofline::error when there is no cache directory (HOME
/// and XDG_CACHE_HOME unset or not absolute), it cannot be trusted, or the file cannot be written.
std::filesystem::path write_cache_file(const std::string &name, const std::string &text);

/// The ceilings cache file of the GPU `uuid`; nullopt when there is no cache directory.
std::optional<std::filesystem::path> ceilings_cache_file(const std::string &uuid);

/// The cached ceilings of a GPU, or nullopt when none are saved (a damaged file, or one that
/// cannot be used: read_cache_file, throws input_error).
std::optional<measured_ceilings> load_cached_ceilings(const std::string &uuid);
/// Writes the cache file (write_cache_file) and returns its path. Throws roofline::error on
/// failure.
std::filesystem::path save_ceilings(const measured_ceilings &ceilings);

} // namespace roofline
