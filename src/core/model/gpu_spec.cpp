// SPDX-License-Identifier: Apache-2.0
#include "roofline/model/gpu_spec.hpp"

#include "roofline/common/error.hpp"
#include "suggest.hpp"
#include "text_format.hpp"
#include "yaml_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace roofline {

std::string gpu_spec::unsupported_message(precision p) const {
  std::string known;
  for (const auto &[have, rate] : peaks)
    known += (known.empty() ? "" : ", ") + std::string(to_string(have));
  return name + " has no " + std::string(to_string(p)) + " rate in its spec (" + origin +
         "); it has " + known;
}

double gpu_spec::peak_flop_per_s(precision p, bool sparse) const {
  const auto found = peaks.find(p);
  if (found == peaks.end())
    throw input_error(unsupported_message(p));
  const peak_rate &rate = found->second;
  const double printed =
      sparse && rate.sparse_flop_per_s ? *rate.sparse_flop_per_s : rate.dense_flop_per_s;
  // A datasheet's peaks assume the boost clock, which a power-capped card does not hold under
  // tensor load: the rate per clock stays, the clock is the one it holds.
  if (rate.measured || !sustained_clock_hz)
    return printed;
  return printed * (*sustained_clock_hz / boost_clock_hz);
}

double gpu_spec::ridge_intensity(precision p, bool sparse) const {
  return peak_flop_per_s(p, sparse) / dram_bytes_per_s;
}

namespace {

/// The `model:` keys: "origin", then each group ("efficiency") or scalar name, in table order.
std::vector<std::string> model_keys() {
  std::vector<std::string> keys{"origin"};
  for (const parameter_info &row : parameter_table()) {
    const std::string key = row.name.substr(0, row.name.find('.'));
    if (std::find(keys.begin(), keys.end(), key) == keys.end())
      keys.push_back(key);
  }
  return keys;
}

/// A `model:` section: the parameters it names, each checked against the table's bounds.
parameter_overrides parse_model_section(const detail::yaml_node &node, const std::string &origin) {
  using detail::yaml_map;
  const std::vector<std::string> keys = model_keys();
  const yaml_map map(node, origin, "`model`", keys);
  parameter_overrides overrides;
  overrides.origin = map.string_or("origin", "parameters of " + origin);
  // Errors point at the value itself: in a block-style group, its own line.
  const auto add = [&](const std::string &name, const detail::yaml_node &value) {
    const auto fail = [&](const std::string &message) {
      throw input_error(detail::location_of(value, origin), map.context() + ": " + message);
    };
    const std::optional<parameter> id = find_parameter(name);
    if (!id)
      fail("`" + name + "` is not a model parameter");
    const std::optional<double> number = detail::finite_number(value);
    if (!number)
      fail("`" + name + "` must be a number, not " + detail::describe(value));
    const parameter_info &row = info(*id);
    if (out_of_bounds(*id, *number))
      fail(fmt::format("`{}` must be a number in [{:g}, {:g}] ({}), not {}", name, row.min, row.max,
                       row.unit, value.scalar()));
    overrides.values.emplace_back(*id, *number);
  };
  for (const std::string &key : keys) {
    if (key == "origin" || !map.has(key))
      continue;
    const detail::yaml_node value = map.required(key);
    if (find_parameter(key)) {
      add(key, value);
      continue;
    }
    if (!value.is_map())
      map.fail(key, "`" + key + "` must be a mapping, not " + detail::describe(value));
    // Its keys are checked one by one below; a key given twice is refused here, with both places.
    (void)yaml_map(value, origin, "`model` `" + key + "`", yaml_map::any_keys{});
    for (std::size_t i = 0; i < value.size(); ++i)
      add(key + "." + detail::key_text(value.key(i)), value.value(i));
  }
  return overrides;
}

/// The ratios measured / predicted an `accuracy:` band may hold: beyond them a band is a slip
/// (a percentage, an error instead of a ratio), not a model's spread.
constexpr double min_accuracy_ratio = 0.01;
constexpr double max_accuracy_ratio = 100;

/// An `accuracy:` section: class → {p10, p90}, each a ratio in [min_, max_accuracy_ratio] with
/// p10 ≤ p90.
accuracy_bands parse_accuracy_section(const detail::yaml_node &node, const std::string &origin) {
  using detail::yaml_map;
  const yaml_map map(node, origin, "`accuracy`", names_of<op_class>().names());
  accuracy_bands bands;
  for (const std::string &name : names_of<op_class>().names()) {
    if (!map.has(name))
      continue;
    const yaml_map band(map.required(name), origin, "`accuracy` `" + name + "`", {"p10", "p90"});
    const auto ratio = [&](const std::string &key) {
      const double value = band.positive_number(key);
      if (value < min_accuracy_ratio || value > max_accuracy_ratio)
        band.fail(key, fmt::format("`{}` must be a ratio measured / predicted in [{:g}, {:g}], not "
                                   "{:g}",
                                   key, min_accuracy_ratio, max_accuracy_ratio, value));
      return value;
    };
    const accuracy_band parsed{ratio("p10"), ratio("p90")};
    if (parsed.p10 > parsed.p90)
      band.fail("p90",
                fmt::format("`p90` ({:g}) must be at least `p10` ({:g})", parsed.p90, parsed.p10));
    bands.by_class[*names_of<op_class>().parse(name)] = parsed;
  }
  return bands;
}

/// The range a spec number may take, in the unit its file gives it in: bounds generous enough
/// for every GPU from a T4 to a B200 and those to come (docs/spec-format.md lists them), narrow
/// enough that a slip of units, a typo, or a number that overflows or vanishes once scaled to SI
/// units is refused instead of analysed.
struct spec_range {
  double min, max;
  const char *unit;
};

constexpr spec_range sm_range{1, 1000, "SMs"};
constexpr spec_range clock_range{100, 10000, "MHz"};
constexpr spec_range memory_range{0.1, 10000, "GB"};
constexpr spec_range memory_mib_range{100, 1e7, "MiB"};
constexpr spec_range dram_range{min_bandwidth_bytes_per_s / 1e9, max_bandwidth_bytes_per_s / 1e9,
                                "GB/s (1 GB/s to 1 PB/s)"};
constexpr spec_range l2_range{0.1, 10000, "MB"};
constexpr spec_range tdp_range{1, 10000, "W"};
constexpr spec_range price_range{min_price_per_hour_usd, max_price_per_hour_usd, "USD per hour"};
constexpr spec_range link_range{0.1, 1e6, "GB/s (100 MB/s to 1 PB/s)"};
constexpr spec_range peak_range{min_peak_flop_per_s / 1e12, max_peak_flop_per_s / 1e12,
                                "TFLOP/s (1 GFLOP/s to 1 EFLOP/s)"};

/// `key`'s positive number scaled by `scale` to SI units, refused (located at its value) unless
/// the value lies in `range` once scaled.
double scaled_number(const detail::yaml_map &map, const std::string &key, double scale,
                     const spec_range &range) {
  const double value = map.positive_number(key);
  const double scaled = value * scale;
  if (!(std::isfinite(scaled) && scaled >= range.min * scale && scaled <= range.max * scale))
    map.fail(key, fmt::format("`{}` = {} is outside the range any GPU has: [{:g}, {:g}] {}", key,
                              map.required(key).scalar(), range.min, range.max, range.unit));
  return scaled;
}

std::optional<double> optional_scaled_number(const detail::yaml_map &map, const std::string &key,
                                             double scale, const spec_range &range) {
  if (!map.has(key))
    return std::nullopt;
  return scaled_number(map, key, scale, range);
}

/// `sustained_clock_mhz`, where the spec gives one: a clock above the boost clock would credit
/// the card with more than its datasheet's peaks, so it is refused.
std::optional<double> sustained_clock_of(const detail::yaml_map &doc, double boost_clock_hz) {
  const std::optional<double> sustained =
      optional_scaled_number(doc, "sustained_clock_mhz", 1e6, clock_range);
  if (sustained && *sustained > boost_clock_hz)
    doc.fail("sustained_clock_mhz",
             fmt::format("`sustained_clock_mhz` = {} exceeds `boost_clock_mhz` ({:g}): the clock a "
                         "card holds under load is at most its boost clock",
                         doc.required("sustained_clock_mhz").scalar(), boost_clock_hz / 1e6));
  return sustained;
}

/// How far a card's reported memory may lie from its datasheet's GB. Cards report 0-8% more
/// bytes than the GB printed ("80 GB" H100: 81,559 MiB = 85.5e9 bytes; a T4's 16 GB: 15,360 MiB),
/// since a marketed GB is often a GiB less what the driver reserves; a MiB count outside ±10%
/// is a slip of units (GiB or MB written as MiB) and is refused.
constexpr double reported_memory_tolerance = 0.10;

/// The bytes of device memory an analysis fits a network into: what the card reports
/// (`memory_mib`) where the spec gives it, as that is what allocations can use; else the
/// datasheet's `memory_gb`, which every spec gives.
double memory_bytes_of(const detail::yaml_map &doc) {
  const double datasheet = scaled_number(doc, "memory_gb", 1e9, memory_range);
  const std::optional<double> reported =
      optional_scaled_number(doc, "memory_mib", 1024.0 * 1024.0, memory_mib_range);
  if (!reported)
    return datasheet;
  if (std::fabs(*reported / datasheet - 1) > reported_memory_tolerance)
    doc.fail("memory_mib",
             fmt::format("`memory_mib` = {} ({:.4g} GB) is not within {:g}% of `memory_gb` ({:g} "
                         "GB): the card's reported MiB and the datasheet's GB describe one memory",
                         doc.required("memory_mib").scalar(), *reported / 1e9,
                         reported_memory_tolerance * 100, datasheet / 1e9));
  return *reported;
}

} // namespace

const std::vector<std::string> &architecture_names() {
  static const std::vector<std::string> names{"volta",  "turing",    "ampere",         "ada",
                                              "hopper", "blackwell", "blackwell-sm120"};
  return names;
}

std::optional<std::string> architecture_of(int cc_major, int cc_minor) {
  switch (cc_major) {
  case 7: return cc_minor < 5 ? "volta" : "turing";
  case 8: return cc_minor == 9 ? "ada" : "ampere";
  case 9: return "hopper";
  case 10:
  case 11: return "blackwell"; // 11.0: Jetson Thor (sm_101 before CUDA 13)
  case 12: return "blackwell-sm120";
  default: return std::nullopt;
  }
}

namespace {

bool is_known_architecture(const std::string &name) {
  const std::vector<std::string> &known = architecture_names();
  return std::find(known.begin(), known.end(), name) != known.end();
}

/// The architecture `key` names, in lower case. A near miss of a known one ("hoper",
/// "blackwell_sm120") is refused: it would silently leave that architecture's fitted parameters
/// out. A name far from all is an architecture of its own (a GPU newer than this tool), whose
/// report says it runs on generic defaults.
std::string architecture_name(const detail::yaml_map &doc, const std::string &key) {
  const std::string named = doc.string(key);
  const std::string name = detail::to_lower(named);
  const std::vector<std::string> &known = architecture_names();
  if (!is_known_architecture(name))
    if (const std::string hint = detail::did_you_mean(name, known); !hint.empty())
      doc.fail(key, fmt::format("unknown architecture `{}`{}; the architectures known are {}",
                                detail::shown_value(named), hint, detail::quoted_list(known)));
  return name;
}

/// The spec's `architecture` and its `compute_capability`, checked against each other where the
/// architecture is known.
void read_architecture(const detail::yaml_map &doc, gpu_spec &spec) {
  spec.architecture = architecture_name(doc, "architecture");
  spec.compute_capability = doc.string("compute_capability");
  const std::string &cc = spec.compute_capability;
  const std::size_t dot = cc.find('.');
  const auto digits = [](std::string_view text) {
    return !text.empty() && text.size() <= 2 &&
           text.find_first_not_of("0123456789") == std::string_view::npos;
  };
  if (dot == std::string::npos || !digits(std::string_view(cc).substr(0, dot)) ||
      !digits(std::string_view(cc).substr(dot + 1)))
    doc.fail("compute_capability",
             fmt::format("`compute_capability` must be MAJOR.MINOR, as \"9.0\" for a Hopper "
                         "GPU; got '{}'",
                         detail::shown_value(cc)));
  const int major = std::stoi(cc.substr(0, dot)), minor = std::stoi(cc.substr(dot + 1));
  const auto of_cc = architecture_of(major, minor);
  // A name of its own is a GPU newer than this tool: one of a known compute capability is not.
  if (!is_known_architecture(spec.architecture) && of_cc)
    doc.fail("architecture",
             fmt::format("unknown architecture `{}`, of compute capability {}: that is the {} "
                         "architecture; name it, or give a newer GPU's compute capability",
                         detail::shown_value(doc.string("architecture")), cc, *of_cc));
  if (!is_known_architecture(spec.architecture))
    return;
  if (of_cc != spec.architecture)
    doc.fail("compute_capability",
             fmt::format("`compute_capability` {} is {}, not the `architecture` {}", cc,
                         of_cc ? "of the " + *of_cc + " architecture" : "of no known architecture",
                         spec.architecture));
}

} // namespace

gpu_spec parse_gpu_spec(std::string_view yaml_text, const std::string &origin) {
  using detail::yaml_map;
  const yaml_map doc(detail::parse_yaml(yaml_text, origin), origin, "GPU spec",
                     {"name", "aliases", "display_name", "architecture", "compute_capability",
                      "sm_count", "boost_clock_mhz", "sustained_clock_mhz", "memory_gb",
                      "memory_mib", "memory_type", "dram_bandwidth_gb_per_s", "l2_cache_mb",
                      "tdp_w", "price_per_hour_usd", "interconnect", "peak_tflop_per_s", "model"});
  gpu_spec spec;
  spec.origin = origin;
  spec.name = doc.string("name");
  spec.aliases = doc.strings_or_empty("aliases");
  spec.display_name = doc.string_or("display_name", spec.name);
  read_architecture(doc, spec);
  const std::int64_t sm_count = doc.positive_int("sm_count");
  if (static_cast<double>(sm_count) > sm_range.max)
    doc.fail("sm_count", fmt::format("`sm_count` = {} is outside the range any GPU has: [{:g}, "
                                     "{:g}] {}",
                                     sm_count, sm_range.min, sm_range.max, sm_range.unit));
  spec.sm_count = static_cast<int>(sm_count);
  spec.boost_clock_hz = scaled_number(doc, "boost_clock_mhz", 1e6, clock_range);
  spec.sustained_clock_hz = sustained_clock_of(doc, spec.boost_clock_hz);
  spec.memory_bytes = memory_bytes_of(doc);
  spec.memory_type = doc.string_or("memory_type", "");
  spec.dram_bytes_per_s = scaled_number(doc, "dram_bandwidth_gb_per_s", 1e9, dram_range);
  // NVIDIA's "MB" of cache are MiB.
  spec.l2_bytes = scaled_number(doc, "l2_cache_mb", 1024.0 * 1024.0, l2_range);
  spec.tdp_w = scaled_number(doc, "tdp_w", 1, tdp_range);
  spec.price_per_hour_usd = optional_scaled_number(doc, "price_per_hour_usd", 1, price_range);
  if (doc.has("interconnect")) {
    const yaml_map links(doc.required("interconnect"), origin, "GPU spec `interconnect`",
                         {"kind", "links", "gb_per_s", "pcie_gb_per_s", "gpus", "host_gpus"});
    interconnect_spec ic;
    ic.kind = links.string("kind");
    const std::int64_t count = links.non_negative_int_or("links", 0);
    if (count > 1000)
      links.fail("links", "`links` = " + std::to_string(count) + " is not a plausible link count");
    ic.links = static_cast<int>(count);
    ic.bytes_per_s = scaled_number(links, "gb_per_s", 1e9, link_range);
    ic.pcie_bytes_per_s = scaled_number(links, "pcie_gb_per_s", 1e9, link_range);
    for (auto [key, field, what] : {std::tuple{"gpus", &ic.gpus, "one set of links joins"},
                                    {"host_gpus", &ic.host_gpus, "one host holds"}}) {
      const std::int64_t n = links.non_negative_int_or(key, *field);
      if (n < 1 || n > 1024)
        links.fail(key, fmt::format("`{}` = {} is not a number of GPUs {} (from 1 to 1024)", key, n,
                                    what));
      *field = static_cast<int>(n);
    }
    spec.interconnect = ic;
  }

  std::vector<std::string> precision_names;
  for (precision p : all_precisions)
    precision_names.emplace_back(to_string(p));
  const yaml_map peaks(doc.required("peak_tflop_per_s"), origin, "GPU spec `peak_tflop_per_s`",
                       precision_names);
  for (precision p : all_precisions) {
    const std::string key(to_string(p));
    if (!peaks.has(key))
      continue;
    const yaml_map rate(peaks.required(key), origin, "GPU spec peak `" + key + "`",
                        {"dense", "sparse"});
    peak_rate parsed;
    parsed.dense_flop_per_s = scaled_number(rate, "dense", 1e12, peak_range);
    parsed.sparse_flop_per_s = optional_scaled_number(rate, "sparse", 1e12, peak_range);
    if (parsed.sparse_flop_per_s && *parsed.sparse_flop_per_s < parsed.dense_flop_per_s)
      rate.fail("sparse", "`sparse` (2:4 structured sparsity) must be at least `dense`, not "
                          "below it");
    spec.peaks.emplace(p, parsed);
  }
  if (doc.has("model")) {
    spec.model_overrides = parse_model_section(doc.required("model"), origin);
    spec.parameters = apply(model_parameters{}, spec.model_overrides);
  }
  if (spec.peaks.empty())
    doc.fail("peak_tflop_per_s", "`peak_tflop_per_s` must list at least one precision");
  if (!spec.supports(precision::fp32))
    doc.fail("peak_tflop_per_s",
             "`peak_tflop_per_s` must have fp32: memory-bound ops are held against it");
  return spec;
}

gpu_spec model_basis(gpu_spec spec) {
  if (spec.paper) {
    spec.dram_bytes_per_s = spec.paper->dram_bytes_per_s;
    spec.peaks = spec.paper->peaks;
    spec.paper.reset();
  }
  return spec;
}

gpu_spec load_gpu_spec(const std::filesystem::path &file) {
  return parse_gpu_spec(detail::read_text_file(file, "GPU spec"), file.string());
}

architecture_parameters parse_architecture_parameters(std::string_view yaml_text,
                                                      const std::string &origin) {
  using detail::yaml_map;
  const yaml_map doc(detail::parse_yaml(yaml_text, origin), origin, "architecture parameters",
                     {"architecture", "inherits", "model", "accuracy"});
  architecture_parameters a{
      architecture_name(doc, "architecture"), parse_model_section(doc.required("model"), origin),
      doc.has("inherits") ? architecture_name(doc, "inherits") : "",
      doc.has("accuracy") ? parse_accuracy_section(doc.required("accuracy"), origin)
                          : accuracy_bands{}};
  a.where = doc.where("architecture");
  a.inherits_where = doc.has("inherits") ? doc.where("inherits") : a.where;
  return a;
}

gpu_spec with_architecture(gpu_spec spec, const architecture_parameters *architecture) {
  model_parameters base;
  base.origin = architecture ? architecture->architecture +
                                   " architecture: " + architecture->parameters.origin
                             : "generic defaults (no parameters fitted for the " +
                                   spec.architecture + " architecture)";
  if (architecture) {
    base = apply(base, {{}, architecture->parameters.values});
    spec.accuracy = architecture->accuracy;
  }
  spec.parameters = apply(base, spec.model_overrides);
  return spec;
}

std::string to_yaml(const parameter_overrides &overrides) {
  std::string out = "model:\n  origin: " + detail::yaml_double_quoted(overrides.origin);
  // Groups ("efficiency.fp16") as one flow mapping each, in table order.
  std::string open_group;
  for (const parameter_info &row : parameter_table()) {
    const auto value = std::find_if(overrides.values.begin(), overrides.values.end(),
                                    [&](const auto &entry) { return entry.first == row.id; });
    if (value == overrides.values.end())
      continue;
    const auto dot = row.name.find('.');
    const std::string group = dot == std::string::npos ? std::string{} : row.name.substr(0, dot);
    if (!group.empty() && group == open_group) {
      out += ", ";
    } else {
      if (!open_group.empty())
        out += '}';
      out += "\n  ";
      if (!group.empty())
        out += group + ": {";
    }
    open_group = group;
    out += fmt::format("{}: {:.6g}", group.empty() ? row.name : row.name.substr(dot + 1),
                       value->second);
  }
  if (!open_group.empty())
    out += '}';
  return out + "\n";
}

} // namespace roofline
