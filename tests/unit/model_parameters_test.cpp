// SPDX-License-Identifier: Apache-2.0
// roofline/model/model_parameters.hpp and where a GPU's parameters come from: the one parameter
// table, bounds checked on every set, overrides layered generic defaults <- architecture file <-
// the GPU's own `model:` section, their YAML form, and calibrations saved beside a GPU's ceilings.
// The values of specs/arch/hopper.yaml are a placeholder until a GPU fit: read through the catalog,
// never written here.
#include "roofline/common/error.hpp"
#include "roofline/model/gpu_spec.hpp"
#include "roofline/model/model_fit.hpp"
#include "roofline/model/model_parameters.hpp"
#include "roofline/model/op.hpp"
#include "roofline/model/perf_model.hpp"
#include "roofline/model/spec_catalog.hpp"

#include "test_support.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <sys/stat.h>
#include <vector>

using namespace roofline;
using namespace roofline::test;
namespace fs = std::filesystem;

namespace {

const spec_catalog &catalog() {
  return spec_catalog::builtin();
}

/// A spec file in the temp directory, removed at the end of the scope.
class temp_spec {
public:
  temp_spec(const std::string &name, const std::string &text)
      : m_path(fs::temp_directory_path() / ("roofline-model-parameters-test-" + name + ".yaml")) {
    std::ofstream out(m_path);
    out << text;
  }
  ~temp_spec() {
    std::error_code ec;
    fs::remove(m_path, ec);
  }
  temp_spec(const temp_spec &) = delete;
  temp_spec &operator=(const temp_spec &) = delete;
  std::string path() const { return m_path.string(); }

private:
  fs::path m_path;
};

/// A Hopper GPU's spec (lines 1–12), then `model_lines` from line 13 on.
std::string hopper_spec(const std::string &model_lines = {}) {
  return "name: my-hopper\n"                          // 1
         "architecture: hopper\n"                     // 2
         "compute_capability: \"9.0\"\n"              // 3
         "sm_count: 132\n"                            // 4
         "boost_clock_mhz: 1980\n"                    // 5
         "memory_gb: 80\n"                            // 6
         "dram_bandwidth_gb_per_s: 3350\n"            // 7
         "l2_cache_mb: 50\n"                          // 8
         "tdp_w: 700\n"                               // 9
         "peak_tflop_per_s:\n"                        // 10
         "  fp32: {dense: 67}\n"                      // 11
         "  fp16: {dense: 989.4, sparse: 1978.9}\n" + // 12
         model_lines;
}

/// The input_error resolving `text` as a spec file throws; fails the test when none is thrown.
std::string resolve_error(const std::string &name, const std::string &text,
                          source_location *where = nullptr) {
  const temp_spec file(name, text);
  try {
    (void)catalog().resolve(file.path());
  } catch (const input_error &e) {
    if (where)
      *where = e.where();
    return e.what();
  }
  FAIL("resolved a bad spec: " << text);
  return {};
}

} // namespace

TEST_CASE("the parameter table: parameter_count rows in slot order, unique names, defaults "
          "inside their bounds") {
  const std::vector<parameter_info> &table = parameter_table();
  REQUIRE(table.size() == parameter_count);
  std::set<std::string> names;
  for (std::size_t i = 0; i < table.size(); ++i) {
    const parameter_info &row = table[i];
    CAPTURE(row.name);
    CHECK(static_cast<std::size_t>(row.id) == i);
    CHECK(&info(row.id) == &row);
    CHECK(names.insert(row.name).second);
    CHECK_FALSE(row.name.empty());
    CHECK_FALSE(row.unit.empty());
    CHECK_FALSE(row.doc.empty());
    CHECK(std::isfinite(row.min));
    CHECK(std::isfinite(row.max));
    CHECK(row.min <= row.max);
    CHECK(row.default_value >= row.min);
    CHECK(row.default_value <= row.max);
    CHECK(model_parameters{}[row.id] == row.default_value);
  }
  // Groups take consecutive slots named after their precision or row width.
  for (precision p : all_precisions) {
    CHECK(info(parameter_at(parameter::efficiency, p)).name ==
          "efficiency." + std::string(to_string(p)));
    CHECK(info(parameter_at(parameter::split_k_below_waves, p)).name ==
          "split_k_below_waves." + std::string(to_string(p)));
  }
  for (int bytes : misaligned_row_bytes)
    CHECK(info(misalignment_slowdown_at(bytes)).name ==
          "misalignment_slowdown." + std::to_string(bytes));
  CHECK_THROWS_AS((void)misalignment_slowdown_at(16), std::out_of_range);
  CHECK_THROWS_AS((void)misalignment_slowdown_at(3), std::out_of_range);
  CHECK(info(parameter::dram_efficiency).name == "dram_efficiency");
  // Nothing of the host is a model parameter any more.
  for (const char *gone : {"launch_floor_s", "gemm_launch_floor_s.fp16", "fallback_launch_floor_s",
                           "split_k_overhead_s"})
    CHECK_FALSE(find_parameter(gone).has_value());
}

TEST_CASE("find_parameter round-trips every name and knows no other") {
  for (const parameter_info &row : parameter_table()) {
    CAPTURE(row.name);
    const std::optional<parameter> found = find_parameter(row.name);
    REQUIRE(found.has_value());
    CHECK(*found == row.id);
  }
  for (const char *unknown : {"", "efficiency", "efficiency.", "efficiency.fp17", "Efficiency.fp16",
                              "dram_efficiency ", "misalignment_slowdown.16", "origin"}) {
    CAPTURE(unknown);
    CHECK_FALSE(find_parameter(unknown).has_value());
  }
}

TEST_CASE("set refuses values outside the table's bounds and non-finite values") {
  for (const parameter_info &row : parameter_table()) {
    CAPTURE(row.name);
    model_parameters p;
    p.set(row.id, row.min); // the bounds are inclusive
    CHECK(p[row.id] == row.min);
    p.set(row.id, row.max);
    CHECK(p[row.id] == row.max);
    const double below = row.min - std::max(1.0, std::fabs(row.min));
    const double above = row.max + std::max(1.0, std::fabs(row.max));
    for (double bad :
         {below, above, std::nextafter(row.max, 2 * above),
          std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
          -std::numeric_limits<double>::infinity()}) {
      CAPTURE(bad);
      CHECK_THROWS_AS(p.set(row.id, bad), std::out_of_range);
      CHECK(p[row.id] == row.max); // unchanged
    }
  }
  // The message names the parameter and its bounds.
  model_parameters p;
  try {
    p.set(parameter_at(parameter::efficiency, precision::fp16), 1.5);
    FAIL("efficiency 1.5 was accepted");
  } catch (const std::out_of_range &e) {
    CHECK(contains(e.what(), "efficiency.fp16"));
  }
}

TEST_CASE("the accessors read their group's slot") {
  model_parameters p;
  p.set(parameter_at(parameter::efficiency, precision::bf16), 0.5);
  p.set(parameter_at(parameter::wave_overhead_s, precision::fp8), 2e-6);
  p.set(parameter_at(parameter::split_k_below_waves, precision::fp32), 0.125);
  p.set(parameter_at(parameter::narrow_split_k_below_waves, precision::tf32), 0.375);
  p.set(misalignment_slowdown_at(4), 3.5);
  CHECK(p.efficiency(precision::bf16) == 0.5);
  CHECK(p.efficiency(precision::fp16) == info(parameter_at(parameter::efficiency, precision::fp16))
                                             .default_value); // its neighbour is untouched
  CHECK(p.wave_overhead_s(precision::fp8) == 2e-6);
  CHECK(p.split_k_below_waves(precision::fp32) == 0.125);
  CHECK(p.narrow_split_k_below_waves(precision::tf32) == 0.375);
  CHECK(p.misalignment_slowdown(4) == 3.5);
  CHECK(p.misalignment_slowdown(16) == 1.0); // rows that meet the rule
  CHECK(p.misalignment_slowdown(8) == info(misalignment_slowdown_at(8)).default_value);
}

TEST_CASE("apply() overrides only what it names and joins the origins") {
  const model_parameters defaults;
  CHECK(defaults.origin == "generic defaults");
  const parameter_overrides arch{"hopper fit",
                                 {{parameter::dram_efficiency, 0.75},
                                  {parameter_at(parameter::efficiency, precision::fp16), 0.85}}};
  const model_parameters once = apply(defaults, arch);
  CHECK(once.origin == "hopper fit"); // replaces the defaults' origin
  CHECK(once[parameter::dram_efficiency] == 0.75);
  CHECK(once.efficiency(precision::fp16) == 0.85);
  for (const parameter_info &row : parameter_table())
    if (row.id != parameter::dram_efficiency &&
        row.id != parameter_at(parameter::efficiency, precision::fp16)) {
      CAPTURE(row.name);
      CHECK(once[row.id] == row.default_value);
    }
  const model_parameters twice =
      apply(once, {"my GPU's file", {{parameter::dram_efficiency, 0.8}}});
  CHECK(twice.origin == "hopper fit; my GPU's file");
  CHECK(twice[parameter::dram_efficiency] == 0.8);
  CHECK(twice.efficiency(precision::fp16) == 0.85);
  // No origin: the values change, the origin does not.
  const model_parameters quiet = apply(twice, {"", {{parameter::kernel_overhead_s, 0}}});
  CHECK(quiet.origin == twice.origin);
  CHECK(quiet[parameter::kernel_overhead_s] == 0);
  // Nothing named: nothing changes.
  CHECK(apply(defaults, {}) == defaults);
  // A value outside the bounds is refused.
  CHECK_THROWS_AS((void)apply(defaults, {"bad", {{parameter::dram_efficiency, 2.0}}}),
                  std::out_of_range);
}

TEST_CASE("changed() lists only the values that differ, in table order") {
  const model_parameters start;
  CHECK(changed(start, start, "nothing").values.empty());
  CHECK(changed(start, start, "nothing").origin == "nothing");
  model_parameters fitted = start;
  fitted.set(parameter::kernel_overhead_s, 3e-6);
  fitted.set(parameter_at(parameter::efficiency, precision::tf32), 0.6);
  fitted.set(parameter::dram_efficiency,
             start[parameter::dram_efficiency]); // same value: no change
  fitted.origin = "another origin";              // origins are not values
  const parameter_overrides diff = changed(start, fitted, "calibrated on test");
  CHECK(diff.origin == "calibrated on test");
  REQUIRE(diff.values.size() == 2);
  CHECK(diff.values[0].first == parameter_at(parameter::efficiency, precision::tf32));
  CHECK(diff.values[0].second == 0.6);
  CHECK(diff.values[1].first == parameter::kernel_overhead_s);
  CHECK(diff.values[1].second == 3e-6);
  // Applying the difference to the start gives the fitted values back.
  CHECK(apply(start, diff) == fitted);
}

TEST_CASE("every GPU of the catalog: its architecture's fitted parameters, inside the table's "
          "bounds, or the generic defaults saying so") {
  std::set<std::string> fitted;
  for (const architecture_parameters &a : catalog().architectures()) {
    CAPTURE(a.architecture);
    fitted.insert(a.architecture);
    CHECK_FALSE(a.parameters.values.empty());
    CHECK(contains(a.parameters.origin, "fitted"));
    for (const auto &[id, value] : a.parameters.values) {
      CAPTURE(info(id).name);
      CHECK_FALSE(out_of_bounds(id, value).has_value());
    }
  }
  // The architectures issue 29 asks for: fitted (Hopper on our GPUs, the rest on shared data).
  for (const char *a : {"ampere", "ada", "hopper", "blackwell", "blackwell-sm120"})
    CHECK(fitted.count(a) == 1);
  for (const gpu_spec &listed : catalog().specs()) {
    CAPTURE(listed.name);
    const gpu_spec spec = catalog().resolve(listed.name);
    if (fitted.count(spec.architecture)) {
      CHECK_FALSE(spec.parameters == model_parameters{});
      CHECK(contains(spec.parameters.origin, spec.architecture + " architecture"));
    } else {
      CHECK(contains(spec.parameters.origin, "generic defaults"));
    }
  }
  // fp8 linears (their GEMM and quantize op) are fitted wherever the architecture has fp8;
  // Ampere has no fp8 tensor cores. (B200's efficiency.fp8 came back to the default, 0.8.)
  const parameter quantize_floor =
      memory_parameter_at(parameter::memory_floor_s, memory_op_kind::quantize);
  for (const char *name : {"h100", "l40s", "b200", "rtx-pro-6000"}) {
    CAPTURE(name);
    const model_parameters p = catalog().resolve(name).parameters;
    CHECK(p.wave_overhead_s(precision::fp8) != model_parameters{}.wave_overhead_s(precision::fp8));
    CHECK(p[quantize_floor] != model_parameters{}[quantize_floor]);
  }
}

TEST_CASE("a GPU of an architecture without a parameter file gets the generic defaults, and says "
          "so") {
  for (const char *name : {"v100", "v100-pcie", "t4"}) { // volta and turing: none fitted
    CAPTURE(name);
    const gpu_spec spec = catalog().resolve(name);
    REQUIRE(catalog().architecture(spec.architecture) == nullptr);
    CHECK(spec.parameters == model_parameters{});
    CHECK(contains(spec.parameters.origin, "generic defaults"));
    CHECK(contains(spec.parameters.origin, spec.architecture));
    CHECK(spec.model_overrides.values.empty());
  }
}

TEST_CASE("h100-sxm5 and h200-sxm share the Hopper parameters, and their origins name it") {
  const gpu_spec h100 = catalog().resolve("h100");
  const gpu_spec h200 = catalog().resolve("h200");
  CHECK(h100.architecture == "hopper");
  CHECK(h200.architecture == "hopper");
  CHECK(h100.parameters == h200.parameters);
  CHECK(h100.model_overrides.values.empty()); // neither file has a `model:` section
  CHECK(h200.model_overrides.values.empty());
  const architecture_parameters *hopper = catalog().architecture("hopper");
  REQUIRE(hopper != nullptr);
  CHECK_FALSE(hopper->parameters.values.empty());
  CHECK(h200.parameters == apply(model_parameters{}, hopper->parameters));
  for (const gpu_spec *spec : {&h100, &h200}) {
    CAPTURE(spec->name);
    CHECK(contains(spec->parameters.origin, "hopper architecture"));
    CHECK(contains(spec->parameters.origin, hopper->parameters.origin));
  }
  // H100 PCIe is Hopper too, but for its all-reduce's link efficiency (PCIe, not NVSwitch's).
  model_parameters pcie = catalog().resolve("h100-pcie").parameters;
  CHECK_FALSE(pcie == h200.parameters);
  for (const int gpus : all_reduce_gpu_counts) {
    const parameter efficiency =
        all_reduce_parameter_at(parameter::all_reduce_link_efficiency, gpus);
    CHECK(pcie[efficiency] == info(efficiency).default_value);
    pcie.set(efficiency, h200.parameters[efficiency]);
  }
  pcie.origin = h200.parameters.origin;
  CHECK(pcie == h200.parameters);
}

TEST_CASE("--gpu h100 and --gpu h200 predict the same device time for compute-bound GEMMs") {
  // Operands larger than either L2 holds, compute-bound on both. Same SMs, clock, L2 and peaks,
  // same (Hopper) parameters: the same device time, whatever the DRAM bandwidth. (4096³ once
  // differed: the L2's bandwidth was a multiple of the DRAM's, and the tile choice followed it.)
  for (const gemm_shape shape : {gemm_shape{8192, 8192, 8192, 1}, gemm_shape{4096, 4096, 4096, 1},
                                 gemm_shape{2048, 8192, 4096, 1}})
    for (precision p : {precision::fp16, precision::bf16, precision::tf32}) {
      CAPTURE(shape.m);
      CAPTURE(shape.n);
      CAPTURE(to_string(p));
      const op gemm = make_gemm_op("g", shape, p);
      const prediction h100 = perf_model(catalog().resolve("h100")).predict(gemm);
      const prediction h200 = perf_model(catalog().resolve("h200")).predict(gemm);
      REQUIRE(h100.gemm);
      REQUIRE(h200.gemm);
      CHECK_FALSE(h100.gemm->l2_resident);
      CHECK_FALSE(h200.gemm->l2_resident);
      CHECK(h100.bound == bound::compute);
      CHECK(h200.bound == bound::compute);
      CHECK(h100.device_time_s == doctest::Approx(h200.device_time_s).epsilon(1e-9));
      CHECK(h100.gemm->tile_m == h200.gemm->tile_m);
      CHECK(h100.gemm->tile_n == h200.gemm->tile_n);
      CHECK_FALSE(h100.launch_bound);
    }
}

TEST_CASE("a spec file's `model:` overrides only what it names, on top of its architecture's") {
  const temp_spec file("override", hopper_spec("model:\n  efficiency: {fp16: 0.5}\n"));
  const gpu_spec mine = catalog().resolve(file.path());
  const gpu_spec h200 = catalog().resolve("h200");
  CHECK(mine.name == "my-hopper");
  CHECK(mine.parameters.efficiency(precision::fp16) == 0.5);
  for (const parameter_info &row : parameter_table()) {
    if (row.id == parameter_at(parameter::efficiency, precision::fp16))
      continue;
    CAPTURE(row.name);
    CHECK(mine.parameters[row.id] == h200.parameters[row.id]);
  }
  REQUIRE(mine.model_overrides.values.size() == 1);
  CHECK(mine.model_overrides.values[0].first ==
        parameter_at(parameter::efficiency, precision::fp16));
  CHECK(mine.model_overrides.values[0].second == 0.5);
  CHECK(contains(mine.parameters.origin, "hopper architecture"));
  CHECK(contains(mine.parameters.origin, file.path()));
  // An `origin:` in the section names the source instead.
  const temp_spec named("named", hopper_spec("model:\n  origin: \"fitted by hand\"\n"
                                             "  dram_efficiency: 0.7\n"));
  const gpu_spec other = catalog().resolve(named.path());
  CHECK(other.parameters[parameter::dram_efficiency] == 0.7);
  CHECK(contains(other.parameters.origin, "fitted by hand"));
  // The same file of an architecture with no parameters: the defaults under the override.
  std::string text = hopper_spec("model:\n  efficiency: {fp16: 0.5}\n");
  text.replace(text.find("architecture: hopper"), 20, "architecture: future");
  text.replace(text.find("\"9.0\""), 5, "\"15.0\"");
  const temp_spec future("future", text);
  const gpu_spec unfitted = catalog().resolve(future.path());
  model_parameters expected;
  expected.set(parameter_at(parameter::efficiency, precision::fp16), 0.5);
  CHECK(unfitted.parameters == expected);
  CHECK(contains(unfitted.parameters.origin, "generic defaults"));
  CHECK(contains(unfitted.parameters.origin, "future"));
}

TEST_CASE("a `model:` value outside its bounds, not finite or given twice is an input_error at "
          "its file and line") {
  struct bad_case {
    const char *name;
    std::string model; // from line 13 on
    int line;          // where the error points
    const char *says;
  };
  const std::vector<bad_case> cases{
      {"efficiency", "model:\n  efficiency: {fp16: 1.5}\n", 14, "efficiency.fp16"},
      {"negative", "model:\n  kernel_overhead_s: -1e-6\n", 14, "kernel_overhead_s"},
      {"negative-group", "model:\n  dram_efficiency: 0.5\n  wave_overhead_s: {fp32: -2e-6}\n", 15,
       "wave_overhead_s.fp32"},
      {"inf", "model:\n  dram_efficiency: .inf\n", 14,
       "`dram_efficiency` must be a number, not '.inf'"},
      {"nan", "model:\n  dram_efficiency: .nan\n", 14,
       "`dram_efficiency` must be a number, not '.nan'"},
      {"duplicate", "model:\n  efficiency: {fp16: 0.5, fp16: 0.6}\n", 14,
       "`model` `efficiency`: duplicate key `fp16` (first given at line 14)"},
      {"duplicate-key", "model:\n  dram_efficiency: 0.5\n  dram_efficiency: 0.6\n", 15,
       "duplicate key"},
      {"unknown", "model:\n  efficiency: {fp17: 0.5}\n", 14, "efficiency.fp17"},
      {"not-a-number", "model:\n  kernel_overhead_s: soon\n", 14, "kernel_overhead_s"},
      {"not-a-mapping", "model:\n  efficiency: 0.5\n", 14, "mapping"},
      {"launch-floor", "model:\n  launch_floor_s: 5e-6\n", 14, "launch_floor_s"},
  };
  for (const bad_case &c : cases) {
    CAPTURE(c.name);
    source_location where;
    const std::string what = resolve_error(c.name, hopper_spec(c.model), &where);
    CAPTURE(what);
    CHECK(contains(what, "roofline-model-parameters-test-" + std::string(c.name) +
                             ".yaml:" + std::to_string(c.line) + ":"));
    CHECK(where.line == c.line);
    CHECK(contains(what, c.says));
  }
  // parse_gpu_spec and parse_architecture_parameters check the same way.
  CHECK_THROWS_AS((void)parse_gpu_spec(hopper_spec("model:\n  efficiency: {fp16: 1.5}\n"), "x"),
                  input_error);
  CHECK_THROWS_AS((void)parse_architecture_parameters(
                      "architecture: a\nmodel:\n  efficiency: {fp16: 0}\n", "a.yaml"),
                  input_error);
  CHECK_THROWS_AS((void)parse_architecture_parameters("architecture: a\n", "a.yaml"),
                  input_error); // no `model:`
}

TEST_CASE("a `model:` error in a block mapping points at the line of the bad entry") {
  source_location where;
  const std::string what = resolve_error(
      "block", hopper_spec("model:\n  efficiency:\n    fp16: 0.5\n    fp32: 1.5\n"), &where);
  CAPTURE(what);
  CHECK(contains(what, "efficiency.fp32"));
  CHECK(where.line == 16);
}

TEST_CASE("to_yaml(overrides) parses back to the same values") {
  parameter_overrides overrides{"fitted on a test GPU, 2026-11-22", {}};
  overrides.values = {
      {parameter_at(parameter::efficiency, precision::fp16), 0.8222},
      {parameter_at(parameter::efficiency, precision::fp32), 0.7718},
      {parameter_at(parameter::wave_overhead_s, precision::bf16), 1.503e-06},
      {parameter_at(parameter::split_k_below_waves, precision::fp32), 0},
      {misalignment_slowdown_at(8), 2.62},
      {misalignment_slowdown_at(1), 8},
      {parameter::dram_efficiency, 0.756},
      {parameter::kernel_overhead_s, 2.609e-06},
      {parameter::deep_split_k_min_k, 768},
      {parameter::min_split_k_depth, 256},
  };
  const std::string yaml = to_yaml(overrides);
  CAPTURE(yaml);
  // The text the YAML emitter used before wrote (recorded): calibration files keep their form.
  CHECK(yaml == "model:\n"
                "  origin: \"fitted on a test GPU, 2026-11-22\"\n"
                "  efficiency: {fp32: 0.7718, fp16: 0.8222}\n"
                "  wave_overhead_s: {bf16: 1.503e-06}\n"
                "  split_k_below_waves: {fp32: 0}\n"
                "  misalignment_slowdown: {8: 2.62, 1: 8}\n"
                "  dram_efficiency: 0.756\n"
                "  kernel_overhead_s: 2.609e-06\n"
                "  deep_split_k_min_k: 768\n"
                "  min_split_k_depth: 256\n");
  const architecture_parameters back =
      parse_architecture_parameters("architecture: test\n" + yaml, "back.yaml");
  CHECK(back.architecture == "test");
  CHECK(back.parameters.origin == overrides.origin);
  // Back in table order: the groups first, in the order the table has them.
  REQUIRE(back.parameters.values.size() == overrides.values.size());
  CHECK(apply(model_parameters{}, back.parameters) == apply(model_parameters{}, overrides));
  for (const auto &[id, value] : back.parameters.values) {
    CAPTURE(info(id).name);
    CHECK(value == apply(model_parameters{}, overrides)[id]);
  }
  // Nothing overridden: an empty section that still parses.
  const architecture_parameters none =
      parse_architecture_parameters("architecture: test\n" + to_yaml({"empty", {}}), "none.yaml");
  CHECK(none.parameters.values.empty());
  CHECK(none.parameters.origin == "empty");
}

TEST_CASE("to_yaml(overrides) writes numbers and the origin as the emitter used before did") {
  // Recorded from the emitter this writer replaced; DEL is escaped too now (libyaml reads no raw
  // DEL).
  CHECK(to_yaml({"", {}}) == "model:\n  origin: \"\"\n");
  CHECK(to_yaml({"q\"b\\c: d\ne\tf\x01g\xc2\xa0h\x7f", {}}) ==
        "model:\n  origin: \"q\\\"b\\\\c: d\\ne\\tf\\x01g\\xa0h\\x7f\"\n");
  CHECK(contains(to_yaml({"o", {{parameter::deep_split_k_min_k, 1e6}}}),
                 "\n  deep_split_k_min_k: 1e+06\n"));
}

TEST_CASE("to_yaml(overrides) escapes the origin so that it reads back the same") {
  for (const std::string &origin :
       {std::string("calibrated on \"GPU-0\": C:\\cache\\dir\nsecond line"),
        std::string("# not a comment, - not a list, {not: a mapping}, 'single' & *star"),
        std::string(
            "tab\t, return\r, bell\a, DEL\x7f, NEL\xc2\x85, BOM\xef\xbb\xbf, \xc3\xa9\xe2\x82\xac"),
        std::string(" leading and trailing spaces ")}) {
    CAPTURE(origin);
    const parameter_overrides overrides{origin, {{parameter::dram_efficiency, 0.5}}};
    const std::string yaml = to_yaml(overrides);
    CAPTURE(yaml);
    architecture_parameters back;
    REQUIRE_NOTHROW(back = parse_architecture_parameters("architecture: t\n" + yaml, "t.yaml"));
    CHECK(back.parameters.origin == origin);
    CHECK(back.parameters.values == overrides.values);
  }
  // Bytes that are not UTF-8 cannot be read back as they are: they become U+FFFD, still readable.
  const std::string yaml = to_yaml({"bad\xff byte", {}});
  CHECK(parse_architecture_parameters("architecture: t\n" + yaml, "t.yaml").parameters.origin ==
        "bad\xef\xbf\xbd byte");
}

TEST_CASE("to_yaml(overrides) round-trips every parameter at its bounds, others to 6 digits") {
  // 6 significant digits: every bound has at most 6, and rounding is monotonic, so no value inside
  // the bounds is written outside them (65536 stays 65536; 4 digits once wrote 6.554e+04).
  for (bool at_max : {false, true}) {
    CAPTURE(at_max);
    parameter_overrides overrides{"bounds", {}};
    for (const parameter_info &row : parameter_table())
      overrides.values.emplace_back(row.id, at_max ? row.max : row.min);
    const std::string yaml = to_yaml(overrides);
    CAPTURE(yaml);
    architecture_parameters back;
    REQUIRE_NOTHROW(back = parse_architecture_parameters("architecture: t\n" + yaml, "t.yaml"));
    CHECK(apply(model_parameters{}, back.parameters) == apply(model_parameters{}, overrides));
  }
  const parameter_overrides fitted{"fitted", {{parameter::dram_efficiency, 0.123456789}}};
  const architecture_parameters back =
      parse_architecture_parameters("architecture: t\n" + to_yaml(fitted), "t.yaml");
  REQUIRE(back.parameters.values.size() == 1);
  CHECK(back.parameters.values[0].second == doctest::Approx(0.123456789).epsilon(5e-6));
}

TEST_CASE("calibrations round-trip through the cache; older or damaged files are refused") {
  const fs::path dir = fs::temp_directory_path() / "roofline-model-parameters-test-cache";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const scoped_env cache("ROOFLINE_CACHE_DIR", dir.string().c_str());
  const std::string uuid = "GPU-00000000-1111-2222-3333-444444444444";
  CHECK_FALSE(load_calibration(uuid).has_value()); // none saved

  const parameter_overrides saved{"calibrated on test GPU 2026-11-22",
                                  {{parameter_at(parameter::efficiency, precision::fp16), 0.8123},
                                   {parameter::kernel_overhead_s, 2.5e-6}}};
  save_calibration(uuid, saved);
  CHECK(calibration_cache_file(uuid)->parent_path() == dir);
  const std::optional<parameter_overrides> loaded = load_calibration(uuid);
  REQUIRE(loaded.has_value());
  CHECK(loaded->origin == saved.origin);
  CHECK(apply(model_parameters{}, *loaded) == apply(model_parameters{}, saved));
  CHECK(loaded->values.size() == saved.values.size());

  const auto refused_as_is = [&] {
    try {
      (void)load_calibration(uuid);
    } catch (const input_error &e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const auto refused = [&](const std::string &text) {
    {
      std::ofstream out(*calibration_cache_file(uuid));
      out << text;
    }
    return refused_as_is();
  };
  // format_version 1 held eager times with launch floors: refused as damaged.
  const std::string v1 = refused(R"({"format_version": 1, "uuid": "x", "origin": "old",
                                     "parameters": {"launch_floor_s": 5e-6}})");
  CHECK(contains(v1, "damaged"));
  CHECK(contains(v1, calibration_cache_file(uuid)->string()));
  CHECK(contains(refused(R"({"format_version": 2, "uuid": "x", "origin": "o",
                            "parameters": {"launch_floor_s": 5e-6}})"),
                 "launch_floor_s"));
  CHECK(contains(refused(R"({"format_version": 2, "uuid": "x", "origin": "o",
                            "parameters": {"efficiency.fp16": 1.5}})"),
                 "efficiency.fp16"));
  CHECK(contains(refused("not json"), "damaged"));
  // A parameter given twice: refused, not the last one kept.
  CHECK(contains(refused(R"({"format_version": 2, "uuid": "x", "origin": "o",
                            "parameters": {"dram_efficiency": 0.5, "dram_efficiency": 0.9}})"),
                 "duplicate key `dram_efficiency`"));
  // A number past a double's range is no number; nor is NaN (not JSON); huge or negative
  // values lie outside the table's bounds.
  CHECK(contains(refused(R"({"format_version": 2, "uuid": "x", "origin": "o",
                            "parameters": {"dram_efficiency": 1e999}})"),
                 "damaged"));
  CHECK(contains(refused(R"({"format_version": 2, "uuid": "x", "origin": "o",
                            "parameters": {"dram_efficiency": NaN}})"),
                 "damaged"));
  for (const char *value : {"1e308", "-1e-6", "-0.5"}) {
    CAPTURE(value);
    CHECK(contains(refused(std::string(R"({"format_version": 2, "uuid": "x", "origin": "o",
                            "parameters": {"kernel_overhead_s": )") +
                           value + "}}"),
                   "kernel_overhead_s"));
  }
  // A calibration that is not a regular file is never opened: a FIFO would block for ever.
  fs::remove(*calibration_cache_file(uuid));
  REQUIRE(::mkfifo(calibration_cache_file(uuid)->c_str(), 0600) == 0);
  CHECK(contains(refused_as_is(), "a FIFO"));
  fs::remove_all(dir);
}

TEST_CASE("each group's row is named for the key its slot serves") {
  for (const precision p : all_precisions)
    CHECK(info(parameter_at(parameter::efficiency, p)).name ==
          "efficiency." + std::string(to_string(p)));
  for (const int bytes : misaligned_row_bytes)
    CHECK(info(misalignment_slowdown_at(bytes)).name ==
          "misalignment_slowdown." + std::to_string(bytes));
  for (const int head_dim : attention_head_dims)
    CHECK(info(attention_efficiency_at(head_dim, parameter::attention_backward_efficiency)).name ==
          "attention_backward_efficiency." + std::to_string(head_dim));
  for (const std::string_view name : memory_op_names())
    CHECK(
        info(memory_parameter_at(parameter::memory_efficiency, *parse_memory_op_kind(name))).name ==
        "memory_efficiency." + std::string(name));
  for (const int gpus : all_reduce_gpu_counts)
    CHECK(info(all_reduce_parameter_at(parameter::all_reduce_link_efficiency, gpus)).name ==
          "all_reduce_link_efficiency." + std::to_string(gpus));
}
