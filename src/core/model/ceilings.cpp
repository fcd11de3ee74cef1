// SPDX-License-Identifier: Apache-2.0
#include "roofline/model/ceilings.hpp"

#include "roofline/common/atomic_file.hpp"
#include "roofline/common/error.hpp"

#include "json_reader.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <array>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace roofline {

namespace {

using nlohmann::json;

// 2: host_floor and fallback_host_floor results; 3: what NVML read (idle_power, energy_per_flop,
// energy_per_byte, sustained_flop_rate). Older documents lack them and are read as they are;
// older binaries refuse a newer version as "another format version", which says what to do,
// rather than stumbling on the unknown kind.
constexpr int cache_format_version = 3;
constexpr int oldest_readable_version = 1;

struct ceiling_kind_entry {
  ceiling_kind kind;
  std::string_view name;
  bool is_time;
  ceiling_range range;
};

constexpr ceiling_range bandwidth_range{min_bandwidth_bytes_per_s, max_bandwidth_bytes_per_s,
                                        "bytes/s"};
constexpr ceiling_range time_range{min_host_call_s, max_host_call_s, "s"};

constexpr std::array<ceiling_kind_entry, 10> ceiling_kinds{{
    {ceiling_kind::dram_bandwidth, "dram_bandwidth", false, bandwidth_range},
    {ceiling_kind::l2_bandwidth, "l2_bandwidth", false, bandwidth_range},
    {ceiling_kind::flop_rate,
     "flop_rate",
     false,
     {min_peak_flop_per_s, max_peak_flop_per_s, "FLOP/s"}},
    {ceiling_kind::latency, "latency", true, time_range},
    {ceiling_kind::host_floor, "host_floor", true, time_range},
    {ceiling_kind::fallback_host_floor, "fallback_host_floor", true, time_range},
    {ceiling_kind::idle_power, "idle_power", false, {1, 10000, "W"}},
    {ceiling_kind::energy_per_flop, "energy_per_flop", false, {1e-16, 1e-9, "J/FLOP"}},
    {ceiling_kind::energy_per_byte, "energy_per_byte", false, {1e-14, 1e-8, "J/byte"}},
    {ceiling_kind::sustained_flop_rate,
     "sustained_flop_rate",
     false,
     {min_peak_flop_per_s, max_peak_flop_per_s, "FLOP/s"}},
}};

} // namespace

std::string_view to_string(ceiling_kind kind) {
  for (const auto &entry : ceiling_kinds)
    if (entry.kind == kind)
      return entry.name;
  return "?";
}

std::optional<ceiling_kind> parse_ceiling_kind(std::string_view name) {
  for (const auto &entry : ceiling_kinds)
    if (entry.name == name)
      return entry.kind;
  return std::nullopt;
}

bool is_time(ceiling_kind kind) {
  for (const auto &entry : ceiling_kinds)
    if (entry.kind == kind)
      return entry.is_time;
  return false;
}

ceiling_range ceiling_value_range(ceiling_kind kind) {
  for (const auto &entry : ceiling_kinds)
    if (entry.kind == kind)
      return entry.range;
  return {0, 0, "?"};
}

std::optional<double> measured_ceilings::dram_bytes_per_s() const {
  for (const ceiling_result &r : results)
    if (r.kind == ceiling_kind::dram_bandwidth && r.name == "dram copy" && r.failure.empty())
      return r.value;
  return std::nullopt;
}

std::optional<double> measured_ceilings::flop_per_s(precision p) const {
  std::optional<double> best;
  for (const ceiling_result &r : results)
    if (r.kind == ceiling_kind::flop_rate && r.precision == p && r.failure.empty() &&
        (!best || r.value > *best))
      best = r.value;
  return best;
}

namespace {

/// The value of the first result of `kind` (and `p`'s, where one is given) that did not fail.
std::optional<double> first_of(const std::vector<ceiling_result> &results, ceiling_kind kind,
                               std::optional<precision> p = std::nullopt) {
  for (const ceiling_result &r : results)
    if (r.kind == kind && (!p || r.precision == p) && r.failure.empty())
      return r.value;
  return std::nullopt;
}

} // namespace

std::optional<double> measured_ceilings::launch_latency_s() const {
  return first_of(results, ceiling_kind::latency);
}

std::optional<double> measured_ceilings::host_floor_s(precision p) const {
  return first_of(results, ceiling_kind::host_floor, p);
}

std::optional<double> measured_ceilings::fallback_host_floor_s(precision p) const {
  return first_of(results, ceiling_kind::fallback_host_floor, p);
}

std::optional<double> measured_ceilings::idle_power_w() const {
  return first_of(results, ceiling_kind::idle_power);
}

std::optional<double> measured_ceilings::energy_per_flop_j(precision p) const {
  return first_of(results, ceiling_kind::energy_per_flop, p);
}

std::optional<double> measured_ceilings::energy_per_dram_byte_j() const {
  return first_of(results, ceiling_kind::energy_per_byte);
}

gpu_spec apply_ceilings(gpu_spec spec, const measured_ceilings &ceilings) {
  if (!spec.paper)
    spec.paper = gpu_spec::paper_numbers{spec.dram_bytes_per_s, spec.peaks};
  if (auto dram = ceilings.dram_bytes_per_s())
    spec.dram_bytes_per_s = *dram;
  for (auto &[prec, rate] : spec.peaks) {
    const auto measured = ceilings.flop_per_s(prec);
    if (!measured)
      continue;
    if (rate.sparse_flop_per_s)
      rate.sparse_flop_per_s = *rate.sparse_flop_per_s * (*measured / rate.dense_flop_per_s);
    rate.dense_flop_per_s = *measured;
    rate.measured = true;
  }
  // What NVML read is this board's own: it replaces the architecture's power parameters.
  bool power = false;
  if (const auto idle = ceilings.idle_power_w(); idle && spec.tdp_w > 0 && *idle < spec.tdp_w) {
    spec.parameters.set(parameter::idle_power_share, *idle / spec.tdp_w);
    power = true;
  }
  for (const precision p : all_precisions)
    if (const auto joules = ceilings.energy_per_flop_j(p)) {
      spec.parameters.set(parameter_at(parameter::energy_per_flop_pj, p), *joules * 1e12);
      power = true;
    }
  // DRAM's energy per byte depends on the kernel that moves the bytes: our streaming copy draws
  // 86 pJ/byte on an H200 where PyTorch's copy_, whose kind the model prices, draws 122
  // (docs/benchmarks.md). Ours stands in only for an architecture with no fit of its own.
  if (const auto joules = ceilings.energy_per_dram_byte_j();
      joules && !(spec.parameters[parameter::dram_energy_per_byte_pj] > 0)) {
    spec.parameters.set(parameter::dram_energy_per_byte_pj, *joules * 1e12);
    power = true;
  }
  spec.origin +=
      " + ceilings measured " + ceilings.measured_at + (power ? ", power read through NVML" : "");
  return spec;
}

std::string to_json_text(const measured_ceilings &ceilings) {
  json results = json::array();
  for (const ceiling_result &r : ceilings.results) {
    json entry{{"name", r.name},     {"kind", to_string(r.kind)}, {"value", r.value},
               {"spread", r.spread}, {"method", r.method},        {"failure", r.failure}};
    entry["precision"] = r.precision ? json(std::string(to_string(*r.precision))) : json(nullptr);
    results.push_back(entry);
  }
  return json{{"format_version", cache_format_version},
              {"uuid", ceilings.uuid},
              {"device_name", ceilings.device_name},
              {"measured_at", ceilings.measured_at},
              {"results", results}}
      .dump(2);
}

measured_ceilings parse_ceilings(const std::string &json_text, const std::string &origin) {
  try {
    const json doc = detail::parse_json_once_per_key(json_text, [&](const std::string &why) {
      throw input_error(
          {origin}, "damaged ceilings cache (re-measure with describe_local_gpu::refresh): " + why);
    });
    const int version = doc.at("format_version").get<int>();
    if (version < oldest_readable_version || version > cache_format_version)
      throw input_error(
          {origin},
          "ceilings cache of another format version; re-measure with describe_local_gpu::refresh");
    measured_ceilings ceilings;
    ceilings.uuid = doc.at("uuid").get<std::string>();
    ceilings.device_name = doc.at("device_name").get<std::string>();
    ceilings.measured_at = doc.at("measured_at").get<std::string>();
    for (const json &entry : doc.at("results")) {
      ceiling_result r;
      r.name = entry.at("name").get<std::string>();
      const auto kind = parse_ceiling_kind(entry.at("kind").get<std::string>());
      if (!kind)
        throw input_error({origin}, "unknown ceiling kind in `" + r.name + "`");
      r.kind = *kind;
      if (!entry.at("precision").is_null()) {
        r.precision = parse_precision(entry.at("precision").get<std::string>());
        if (!r.precision)
          throw input_error({origin}, "unknown precision in `" + r.name + "`");
      }
      r.value = entry.at("value").get<double>();
      r.spread = entry.at("spread").get<double>();
      r.method = entry.at("method").get<std::string>();
      r.failure = entry.at("failure").get<std::string>();
      // A number past a double's range reads as infinity; one in range may still be none a GPU
      // or host gives (a host floor of 1e308 s would make every time infinite).
      const ceiling_range range = ceiling_value_range(r.kind);
      const bool value_ok = r.failure.empty() ? r.value >= range.min && r.value <= range.max
                                              : std::isfinite(r.value) && r.value >= 0;
      if (!value_ok || !(std::isfinite(r.spread) && r.spread >= 0))
        throw input_error(
            {origin},
            fmt::format(
                "damaged ceilings cache (re-measure with describe_local_gpu::refresh): `{}` "
                "has a value or spread out of range (a {} is from {:g} to "
                "{:g} {}; a spread is finite and non-negative)",
                r.name, to_string(r.kind), range.min, range.max, range.unit));
      ceilings.results.push_back(r);
    }
    return ceilings;
  } catch (const json::exception &e) {
    throw input_error(
        {origin},
        std::string("damaged ceilings cache (re-measure with describe_local_gpu::refresh): ") +
            e.what());
  }
}

namespace {

/// The path in an environment variable when it is set to an absolute one.
std::optional<std::filesystem::path> absolute_path_in(const char *name) {
  const char *value = std::getenv(name);
  if (!value || !*value || value[0] != '/')
    return std::nullopt;
  return std::filesystem::path(value);
}

/// Why a cache directory of status `st` is not to be trusted; nullopt when it is.
std::optional<std::string> distrust(const struct stat &st) {
  if (!S_ISDIR(st.st_mode))
    return std::string("not a directory");
  if (st.st_uid != ::geteuid())
    return fmt::format("owned by another user (uid {})", st.st_uid);
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    return std::string("others may write to it (`chmod 700` it)");
  return std::nullopt;
}

/// The type of a file that is not a regular one, in words.
std::string file_type(mode_t mode) {
  if (S_ISLNK(mode))
    return "a symbolic link";
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISSOCK(mode))
    return "a socket";
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  if (S_ISDIR(mode))
    return "a directory";
  return "not a regular file";
}

/// `dir` when it exists and can be trusted (distrust()); nullopt when it does not exist.
std::optional<std::filesystem::path> trusted(const std::filesystem::path &dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR)
      return std::nullopt;
    throw input_error({dir.string()},
                      std::string("cache directory not used: ") + std::strerror(errno));
  }
  if (const auto why = distrust(st))
    throw input_error({dir.string()}, "cache directory not used: " + *why);
  return dir;
}

std::string ceilings_cache_name(const std::string &uuid) {
  return "ceilings-" + uuid + ".json";
}

/// Closes a file descriptor at the end of its scope.
struct fd_closer {
  int fd;
  ~fd_closer() { ::close(fd); }
};

} // namespace

std::optional<std::filesystem::path> cache_directory() {
  if (const char *dir = std::getenv("ROOFLINE_CACHE_DIR"); dir && *dir)
    return std::filesystem::path(dir);
  // XDG's base directory rules: a relative XDG_CACHE_HOME is invalid and ignored.
  if (auto xdg = absolute_path_in("XDG_CACHE_HOME"))
    return *xdg / "roofline-advise";
  if (auto home = absolute_path_in("HOME"))
    return *home / ".cache" / "roofline-advise";
  return std::nullopt;
}

std::optional<std::filesystem::path> readable_cache_directory() {
  const std::optional<std::filesystem::path> dir = cache_directory();
  return dir ? trusted(*dir) : std::nullopt;
}

std::optional<std::filesystem::path> cache_file(const std::string &name) {
  const std::optional<std::filesystem::path> dir = cache_directory();
  return dir ? std::optional(*dir / name) : std::nullopt;
}

std::optional<std::filesystem::path> ceilings_cache_file(const std::string &uuid) {
  return cache_file(ceilings_cache_name(uuid));
}

std::optional<std::string> read_cache_file(const std::filesystem::path &file) {
  if (!trusted(file.has_parent_path() ? file.parent_path() : "."))
    return std::nullopt;
  const auto unusable = [&](const std::string &why) {
    return input_error({file.string()},
                       fmt::format("cache file not used: {} (a cache file is a regular file of at "
                                   "most {} bytes)",
                                   why, max_cache_file_bytes));
  };
  // The type first, from the name: a FIFO or a device is never opened (opening one may block,
  // or do something), a symbolic link never followed.
  struct stat st {};
  if (::lstat(file.c_str(), &st) != 0) {
    if (errno == ENOENT)
      return std::nullopt;
    throw unusable(std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode))
    throw unusable(file_type(st.st_mode));
  // Then again from the open file, should it have been replaced in between.
  const int fd = ::open(file.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT)
      return std::nullopt;
    throw unusable(errno == ELOOP ? "a symbolic link" : std::strerror(errno));
  }
  const fd_closer closer{fd};
  if (::fstat(fd, &st) != 0)
    throw unusable(std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    throw unusable(file_type(st.st_mode));
  if (static_cast<std::uintmax_t>(st.st_size) > max_cache_file_bytes)
    throw unusable(fmt::format("{} bytes", st.st_size));
  // At most one byte past the bound: a file growing while it is read is cut there.
  std::string text;
  char buffer[8192];
  while (text.size() <= max_cache_file_bytes) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      throw unusable(std::strerror(errno));
    if (n == 0)
      return text;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  throw unusable(fmt::format("more than {} bytes", max_cache_file_bytes));
}

std::filesystem::path write_cache_file(const std::string &name, const std::string &text) {
  const std::optional<std::filesystem::path> dir = cache_directory();
  if (!dir)
    throw error("no cache directory: neither XDG_CACHE_HOME nor HOME is an absolute path (set "
                "one, or ROOFLINE_CACHE_DIR), so nothing is cached");
  // Each missing directory made private (XDG's rule: 0700), parents included.
  std::filesystem::path made;
  for (const std::filesystem::path &part : *dir) {
    made /= part;
    if (::mkdir(made.c_str(), 0700) != 0 && errno != EEXIST)
      throw error(fmt::format("{}: cannot create the cache directory: {}", made.string(),
                              std::strerror(errno)));
  }
  try {
    if (!trusted(*dir))
      throw error(dir->string() + ": cannot create the cache directory");
  } catch (const input_error &e) {
    throw error(e.what());
  }
  const std::filesystem::path file = *dir / name;
  replace_file_atomically(file, text);
  return file;
}

std::optional<measured_ceilings> load_cached_ceilings(const std::string &uuid) {
  return load_cache_file(ceilings_cache_name(uuid), parse_ceilings);
}

std::filesystem::path save_ceilings(const measured_ceilings &ceilings) {
  return write_cache_file(ceilings_cache_name(ceilings.uuid), to_json_text(ceilings) + "\n");
}

} // namespace roofline
