// SPDX-License-Identifier: Apache-2.0
// spec_catalog and gpu_spec parsing: the built-in GPUs, names and aliases, resolving a name or a
// spec file, and the errors for unknown names and bad spec files.
#include "roofline/common/error.hpp"
#include "roofline/model/device_description.hpp"
#include "roofline/model/gpu_spec.hpp"
#include "roofline/model/spec_catalog.hpp"
#include "suggest.hpp"

#include "test_support.hpp"

#include <doctest/doctest.h>

#include <map>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

using namespace roofline;
using namespace roofline::test;
namespace fs = std::filesystem;

namespace {

std::vector<fs::path> spec_files(const char *directory = ROOFLINE_SOURCE_DIR "/specs") {
  std::vector<fs::path> files;
  for (const auto &entry : fs::directory_iterator(directory))
    if (entry.path().extension() == ".yaml")
      files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

void write_file(const fs::path &file, const std::string &text) {
  std::FILE *out = std::fopen(file.string().c_str(), "w");
  REQUIRE(out != nullptr);
  std::fputs(text.c_str(), out);
  std::fclose(out);
}

/// A minimal valid spec; `extra_peaks` lines go under peak_tflop_per_s.
std::string spec_yaml(const std::string &name, const std::string &peaks = "  fp32: {dense: 10}\n") {
  return "name: " + name +
         "\narchitecture: test\ncompute_capability: \"1.0\"\nsm_count: 4\nboost_clock_mhz: 1000\n"
         "memory_gb: 8\ndram_bandwidth_gb_per_s: 500\nl2_cache_mb: 2\ntdp_w: "
         "100\npeak_tflop_per_s:\n" +
         peaks;
}

} // namespace

TEST_CASE("every specs/*.yaml is built in, and the built-in copy equals the file") {
  const std::vector<fs::path> files = spec_files();
  const spec_catalog &catalog = spec_catalog::builtin();
  CHECK(files.size() >= 14);
  CHECK(catalog.specs().size() == files.size());
  for (const fs::path &file : files) {
    CAPTURE(file.string());
    const gpu_spec from_file = load_gpu_spec(file);
    CHECK(from_file.origin == file.string());
    const gpu_spec *built_in = catalog.find(from_file.name);
    REQUIRE(built_in != nullptr);
    CHECK(built_in->origin == "specs/" + file.filename().string());
    CHECK(built_in->name == file.stem().string()); // the file is named after the GPU
    CHECK(built_in->dram_bytes_per_s == from_file.dram_bytes_per_s);
    CHECK(built_in->peaks.size() == from_file.peaks.size());
    CHECK(built_in->aliases == from_file.aliases);
  }
}

TEST_CASE("built-in specs are sane: fp32 present, positive rates, sparse peaks about twice the "
          "dense ones") {
  for (const gpu_spec &spec : spec_catalog::builtin().specs()) {
    CAPTURE(spec.name);
    CHECK(spec.supports(precision::fp32));
    CHECK(spec.dram_bytes_per_s > 0);
    CHECK(spec.sm_count > 0);
    CHECK(spec.boost_clock_hz > 0);
    CHECK_FALSE(spec.display_name.empty());
    CHECK_FALSE(spec.architecture.empty());
    for (const auto &[p, rate] : spec.peaks) {
      CAPTURE(to_string(p));
      CHECK(rate.dense_flop_per_s > 0);
      // Within 3%: the L40S datasheet prints fp16 dense 362.05 and sparse 733 (ratio 2.025), and
      // the spec keeps the printed figures on purpose (see specs/l40s.yaml).
      if (rate.sparse_flop_per_s)
        CHECK(*rate.sparse_flop_per_s / rate.dense_flop_per_s ==
              doctest::Approx(2.0).epsilon(0.03));
    }
  }
}

TEST_CASE("names and aliases are unique across the catalog, and the catalog is sorted by name") {
  std::set<std::string> seen;
  std::vector<std::string> names;
  for (const gpu_spec &spec : spec_catalog::builtin().specs()) {
    names.push_back(spec.name);
    CHECK_MESSAGE(seen.insert(detail::to_lower(spec.name)).second, "duplicate name " << spec.name);
    for (const std::string &alias : spec.aliases)
      CHECK_MESSAGE(seen.insert(detail::to_lower(alias)).second, "duplicate alias " << alias);
  }
  CHECK(std::is_sorted(names.begin(), names.end()));
}

TEST_CASE(
    "aliases v100, a100, h100, h200 resolve to v100-sxm2, a100-sxm4-80gb, h100-sxm5, h200-sxm") {
  const spec_catalog &catalog = spec_catalog::builtin();
  CHECK(catalog.resolve("v100").name == "v100-sxm2");
  CHECK(catalog.resolve("a100").name == "a100-sxm4-80gb");
  CHECK(catalog.resolve("h100").name == "h100-sxm5");
  CHECK(catalog.resolve("h200").name == "h200-sxm");
  CHECK(catalog.resolve("a100-40gb").name == "a100-sxm4-40gb");
  CHECK(catalog.resolve("rtx-pro-6000-server").name == "rtx-pro-6000");
  CHECK(catalog.resolve("gh200-96gb").name == "gh200");
  // A full name resolves to itself.
  CHECK(catalog.resolve("a100-sxm4-40gb").name == "a100-sxm4-40gb");
}

TEST_CASE("the GPUs people choose between are in the catalog, each of its architecture") {
  const spec_catalog &catalog = spec_catalog::builtin();
  const std::vector<std::pair<std::string, std::string>> expected{
      {"b300", "blackwell"},  {"gb200", "blackwell"},
      {"gb300", "blackwell"}, {"gh200", "hopper"},
      {"h20", "hopper"},      {"h100-nvl", "hopper"},
      {"l40", "ada"},         {"a10g", "ampere"},
      {"a30", "ampere"},      {"rtx-pro-6000", "blackwell-sm120"}};
  for (const auto &[name, architecture] : expected) {
    CAPTURE(name);
    const gpu_spec *spec = catalog.find(name);
    REQUIRE(spec != nullptr);
    CHECK(spec->architecture == architecture);
    CHECK(spec->interconnect.has_value());
  }
  CHECK(catalog.find("b300")->compute_capability == "10.3");
  CHECK(catalog.find("gb300")->compute_capability == "10.3");
  CHECK(catalog.find("gb200")->compute_capability == "10.0");
  CHECK(catalog.find("rtx-pro-6000")->compute_capability == "12.0");
}

TEST_CASE("an sm_120 GPU does not inherit the parameters fitted for sm_100 Blackwell") {
  // RTX PRO 6000 lacks sm_100's TMEM and 2-CTA MMA: what B200-class timings teach does not hold.
  architecture_parameters blackwell{"blackwell", {"fitted on a B200", {}}};
  blackwell.parameters.values.emplace_back(parameter::dram_efficiency, 0.5);
  const spec_catalog &builtin = spec_catalog::builtin();
  const spec_catalog catalog({*builtin.find("b200"), *builtin.find("rtx-pro-6000")}, {blackwell});
  CHECK(catalog.find("b200")->parameters[parameter::dram_efficiency] == 0.5);
  const gpu_spec &rtx = *catalog.find("rtx-pro-6000");
  CHECK(rtx.parameters[parameter::dram_efficiency] ==
        info(parameter::dram_efficiency).default_value);
  CHECK(contains(rtx.parameters.origin, "generic defaults"));
}

TEST_CASE("names and aliases match case-insensitively") {
  const spec_catalog &catalog = spec_catalog::builtin();
  REQUIRE(catalog.find("V100") != nullptr);
  CHECK(catalog.find("V100")->name == "v100-sxm2");
  REQUIRE(catalog.find("H200-SXM") != nullptr);
  CHECK(catalog.find("H200-SXM")->name == "h200-sxm");
  CHECK(catalog.resolve("A100").name == "a100-sxm4-80gb");
  CHECK(catalog.find("no-such-gpu") == nullptr);
}

TEST_CASE("the names buyers type resolve: bus, memory size and spelling variants") {
  const spec_catalog &catalog = spec_catalog::builtin();
  const std::pair<const char *, const char *> names[] = {{"h100", "h100-sxm5"},
                                                         {"h100-sxm", "h100-sxm5"},
                                                         {"H100 SXM", "h100-sxm5"},
                                                         {"h100_sxm5", "h100-sxm5"},
                                                         {"h100-pcie", "h100-pcie"},
                                                         {"h100-nvl", "h100-nvl"},
                                                         {"h200", "h200-sxm"},
                                                         {"a100", "a100-sxm4-80gb"},
                                                         {"a100-80gb", "a100-sxm4-80gb"},
                                                         {"a100-sxm", "a100-sxm4-80gb"},
                                                         {"a100-40gb", "a100-sxm4-40gb"},
                                                         {"a100-pcie", "a100-pcie-80gb"},
                                                         {"l40s", "l40s"},
                                                         {"L40S", "l40s"},
                                                         {"b200", "b200"},
                                                         {"rtx4090", "rtx-4090"},
                                                         {"v100", "v100-sxm2"},
                                                         {"v100-pcie", "v100-pcie"}};
  for (const auto &[typed, spec] : names) {
    CAPTURE(typed);
    const gpu_spec *found = catalog.find(typed);
    REQUIRE(found != nullptr);
    CHECK(found->name == spec);
  }
  // No two specs answer to one spelling: each name and alias is its spec's alone.
  std::map<std::string, std::string> owner;
  for (const gpu_spec &spec : catalog.specs()) {
    std::vector<std::string> spellings = spec.aliases;
    spellings.push_back(spec.name);
    for (const std::string &name : spellings) {
      const auto [earlier, fresh] = owner.emplace(gpu_name_key(name), spec.name);
      CHECK_MESSAGE((fresh || earlier->second == spec.name),
                    name << " of " << spec.name << " is also " << earlier->second << "'s");
    }
  }
}

TEST_CASE("an unknown GPU name is an input_error asking whether the closest known names were "
          "meant") {
  const spec_catalog &catalog = spec_catalog::builtin();
  try {
    (void)catalog.resolve("h210");
    FAIL("h210 resolved");
  } catch (const input_error &e) {
    const std::string what = e.what();
    CAPTURE(what);
    CHECK(contains(what, "unknown GPU `h210`"));
    CHECK(contains(what, "(did you mean"));
    CHECK(contains(what, "`h200-sxm`")); // specs by their names, not an alias each
    CHECK(contains(what, "`h20`"));
  }
  // The H200 NVL is a spec of its own now (it was a typo of the SXM's before).
  CHECK(catalog.resolve("h200 nvl").name == "h200-nvl");
  // A model number is a typo only of the same model: no A100 for a V100, nothing for a GPU
  // of another generation.
  for (const auto &[typed, meant, not_meant] :
       {std::tuple{"v100-16gb", "(did you mean `v100-pcie` or `v100-sxm2`?)", "a100"},
        {"3090", "known GPUs:", "(did you mean"},
        {"rtx3090", "known GPUs:", "(did you mean"}}) {
    CAPTURE(typed);
    try {
      (void)catalog.resolve(typed);
      FAIL("resolved");
    } catch (const input_error &e) {
      CHECK(contains(e.what(), meant));
      CHECK_FALSE(contains(e.what(), not_meant));
    }
  }
  // The name a report prints is a name too.
  for (const gpu_spec &spec : catalog.specs()) {
    CAPTURE(spec.display_name);
    CHECK(catalog.resolve(spec.display_name).name == spec.name);
  }
  try {
    (void)catalog.resolve("a100-sxm4-80");
    FAIL("a100-sxm4-80 resolved");
  } catch (const input_error &e) {
    CHECK(contains(e.what(), "`a100-sxm4-80gb`"));
  }
  // Nothing close: every known name is listed.
  try {
    (void)catalog.resolve("quantum-accelerator-9000");
    FAIL("a made-up name resolved");
  } catch (const input_error &e) {
    const std::string what = e.what();
    CAPTURE(what);
    CHECK(contains(what, "known GPUs"));
    for (const gpu_spec &spec : catalog.specs())
      CHECK(contains(what, "`" + spec.name + "`"));
  }
}

TEST_CASE("resolve() of a path loads that spec file") {
  const fs::path file = fs::temp_directory_path() / "roofline-spec-test-custom.yaml";
  write_file(file, spec_yaml("my-gpu", "  fp32: {dense: 10}\n  fp16: {dense: 80, sparse: 160}\n"));
  const gpu_spec spec = spec_catalog::builtin().resolve(file.string());
  CHECK(spec.name == "my-gpu");
  CHECK(spec.origin == file.string());
  CHECK(spec.display_name == "my-gpu"); // defaults to the name
  CHECK(spec.dram_bytes_per_s == doctest::Approx(500e9).epsilon(1e-12));
  CHECK(spec.boost_clock_hz == doctest::Approx(1e9).epsilon(1e-12));
  CHECK(spec.l2_bytes == doctest::Approx(2.0 * 1024 * 1024).epsilon(1e-12)); // MiB
  CHECK(spec.peak_flop_per_s(precision::fp16) == doctest::Approx(80e12).epsilon(1e-12));
  CHECK(spec.peak_flop_per_s(precision::fp16, true) == doctest::Approx(160e12).epsilon(1e-12));
  // 80e12 / 500e9 = 160 FLOP/B
  CHECK(spec.ridge_intensity(precision::fp16) == doctest::Approx(160.0).epsilon(1e-12));
  CHECK_FALSE(spec.price_per_hour_usd.has_value());
  fs::remove(file);

  // A path that does not exist is an input_error, not an unknown-name lookup.
  CHECK_THROWS_AS((void)spec_catalog::builtin().resolve("/no/such/dir/gpu.yaml"), input_error);
}

TEST_CASE("parse_gpu_spec rejects specs without fp32, with unknown keys or with bad numbers") {
  CHECK_NOTHROW((void)parse_gpu_spec(spec_yaml("ok"), "ok.yaml"));
  try {
    (void)parse_gpu_spec(spec_yaml("no-fp32", "  fp16: {dense: 10}\n"), "x.yaml");
    FAIL("a spec without fp32 was accepted");
  } catch (const input_error &e) {
    CHECK(contains(e.what(), "fp32"));
    CHECK(e.where().file == "x.yaml");
  }
  CHECK_THROWS_AS((void)parse_gpu_spec(spec_yaml("typo") + "tdp: 3\n", "x.yaml"), input_error);
  CHECK_THROWS_AS((void)parse_gpu_spec(spec_yaml("bad", "  fp32: {dense: -1}\n"), "x.yaml"),
                  input_error);
  CHECK_THROWS_AS((void)parse_gpu_spec(spec_yaml("bad", "  fp32: {dense: lots}\n"), "x.yaml"),
                  input_error);
  CHECK_THROWS_AS((void)parse_gpu_spec(spec_yaml("bad", "  fp17: {dense: 1}\n"), "x.yaml"),
                  input_error);
  // Model parameters are positive, except a split-K threshold of 0 waves: a rule that never fires.
  const gpu_spec never = parse_gpu_spec(
      spec_yaml("ok") +
          "model:\n  split_k_below_waves: {fp16: 0}\n  narrow_split_k_below_waves: {fp32: 0}\n",
      "x.yaml");
  CHECK(never.parameters.split_k_below_waves(precision::fp16) == 0);
  CHECK(never.parameters.narrow_split_k_below_waves(precision::fp32) == 0);
  // What the file set, and nothing else, is its overrides.
  REQUIRE(never.model_overrides.values.size() == 2);
  CHECK(never.model_overrides.values[0].first ==
        parameter_at(parameter::split_k_below_waves, precision::fp16));
  CHECK(never.model_overrides.values[0].second == 0);
  CHECK(never.model_overrides.values[1].first ==
        parameter_at(parameter::narrow_split_k_below_waves, precision::fp32));
  CHECK(never.model_overrides.origin == "parameters of x.yaml");
  // A file without `model:` overrides nothing.
  const gpu_spec plain = parse_gpu_spec(spec_yaml("ok"), "ok.yaml");
  CHECK(plain.model_overrides.values.empty());
  CHECK(plain.parameters == model_parameters{});
  CHECK_THROWS_AS(
      (void)parse_gpu_spec(spec_yaml("bad") + "model:\n  efficiency: {fp16: 0}\n", "x.yaml"),
      input_error);
  CHECK_THROWS_AS((void)parse_gpu_spec(
                      spec_yaml("bad") + "model:\n  split_k_below_waves: {fp16: -1}\n", "x.yaml"),
                  input_error);
}

TEST_CASE("parse_gpu_spec refuses numbers that are not finite, not written in full or outside "
          "their range once scaled, and keys given twice in any group") {
  const auto refused = [](const std::string &from, const std::string &to,
                          const std::string &fragment,
                          const std::string &peaks = "  fp32: {dense: 10}\n") {
    std::string yaml = spec_yaml("bad", peaks);
    if (!from.empty()) {
      REQUIRE(yaml.find(from) != std::string::npos);
      yaml.replace(yaml.find(from), from.size(), to);
    } else {
      yaml += to;
    }
    CAPTURE(yaml);
    try {
      (void)parse_gpu_spec(yaml, "x.yaml");
      FAIL("accepted");
    } catch (const input_error &e) {
      CHECK(e.where().file == "x.yaml");
      CHECK(e.where().line > 0);
      CHECK(contains(e.what(), fragment));
    }
  };
  // 1e308 GB/s overflows to infinity once scaled; 1e-300 GB/s is no bandwidth at all.
  refused("dram_bandwidth_gb_per_s: 500", "dram_bandwidth_gb_per_s: 1e308",
          "`dram_bandwidth_gb_per_s` = 1e308 is outside the range any GPU has: [1, 1e+06] GB/s");
  refused("dram_bandwidth_gb_per_s: 500", "dram_bandwidth_gb_per_s: 1e-300", "[1, 1e+06] GB/s");
  refused("dram_bandwidth_gb_per_s: 500", "dram_bandwidth_gb_per_s: .inf", "a positive number");
  refused("boost_clock_mhz: 1000", "boost_clock_mhz: 1e305", "[100, 10000] MHz");
  refused("memory_gb: 8", "memory_gb: 1e-300", "[0.1, 10000] GB");
  refused("l2_cache_mb: 2", "l2_cache_mb: 1e9", "[0.1, 10000] MB");
  refused("tdp_w: 100", "tdp_w: .nan", "`tdp_w` must be a positive number");
  refused("tdp_w: 100", "tdp_w: 0x1p6", "`tdp_w` must be a positive number, got '0x1p6'");
  refused("tdp_w: 100", "tdp_w: \" 100\"", "`tdp_w` must be a positive number");
  refused("tdp_w: 100", "tdp_w: 1e400", "`tdp_w` must be a positive number");
  refused("sm_count: 4", "sm_count: 1001", "`sm_count` = 1001 is outside the range");
  refused("", "price_per_hour_usd: 1e300\n", "[0.001, 10000] USD per hour");
  refused("", "", "[0.001, 1e+06] TFLOP/s", "  fp32: {dense: 1e300}\n");
  refused("", "", "[0.001, 1e+06] TFLOP/s", "  fp32: {dense: 10}\n  fp16: {dense: 1e-300}\n");
  refused("", "", "`sparse` (2:4 structured sparsity) must be at least `dense`",
          "  fp32: {dense: 10}\n  fp16: {dense: 100, sparse: 50}\n");
  // The interconnect's numbers, as the others.
  refused("", "interconnect: {kind: x, links: 1, gb_per_s: 1e-300, pcie_gb_per_s: 64}\n",
          "`gb_per_s` = 1e-300 is outside the range any GPU has: [0.1, 1e+06] GB/s");
  refused("", "interconnect: {kind: x, links: 1, gb_per_s: 50, pcie_gb_per_s: .inf}\n",
          "`pcie_gb_per_s` must be a positive number");
  // A key given twice: at the top, in a peak, in the interconnect, in a `model:` group.
  refused("tdp_w: 100", "tdp_w: 100\ntdp_w: 200", "duplicate key `tdp_w`");
  refused("", "", "duplicate key `dense`", "  fp32: {dense: 10, dense: 20}\n");
  refused("", "interconnect: {kind: x, kind: y, gb_per_s: 50, pcie_gb_per_s: 64}\n",
          "duplicate key `kind`");
  refused("", "model:\n  efficiency: {fp16: 0.5, fp16: 0.6}\n",
          "`model` `efficiency`: duplicate key `fp16`");
  refused("", "model:\n  dram_efficiency: .inf\n", "`dram_efficiency` must be a number");
  // The range's ends are in it.
  std::string edges = spec_yaml("edges", "  fp32: {dense: 0.001}\n");
  edges.replace(edges.find("dram_bandwidth_gb_per_s: 500"), 28, "dram_bandwidth_gb_per_s: 1e6");
  const gpu_spec edge = parse_gpu_spec(edges, "x.yaml");
  CHECK(edge.dram_bytes_per_s == 1e15);
  CHECK(edge.peak_flop_per_s(precision::fp32) == doctest::Approx(1e9));
}

TEST_CASE("the default GPU is in the built-in catalog") {
  const gpu_spec *spec = spec_catalog::builtin().find(spec_catalog::default_gpu);
  REQUIRE(spec != nullptr);
  CHECK(spec->name == "h200-sxm");
}

TEST_CASE("a catalog built from given specs finds them by name or alias") {
  gpu_spec a = parse_gpu_spec(spec_yaml("zeta"), "z.yaml");
  gpu_spec b = parse_gpu_spec(spec_yaml("alpha") + "aliases: [al]\n", "a.yaml");
  const spec_catalog catalog({a, b});
  REQUIRE(catalog.specs().size() == 2);
  CHECK(catalog.specs()[0].name == "alpha"); // sorted
  REQUIRE(catalog.find("AL") != nullptr);
  CHECK(catalog.find("AL")->name == "alpha");
  CHECK(catalog.resolve("zeta").origin == "z.yaml");
  CHECK_THROWS_AS((void)catalog.resolve("v100"), input_error);
}

TEST_CASE("every specs/arch/*.yaml is built in, and the built-in copy equals the file") {
  const std::vector<fs::path> files = spec_files(ROOFLINE_SOURCE_DIR "/specs/arch");
  const spec_catalog &catalog = spec_catalog::builtin();
  CHECK_FALSE(files.empty());
  CHECK(catalog.architectures().size() == files.size());
  for (const fs::path &file : files) {
    CAPTURE(file.string());
    std::ifstream in(file);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const architecture_parameters from_file = parse_architecture_parameters(text, file.string());
    CHECK(from_file.architecture == file.stem().string()); // the file is named after it
    const architecture_parameters *built_in = catalog.architecture(from_file.architecture);
    REQUIRE(built_in != nullptr);
    CHECK_FALSE(from_file.parameters.values.empty());
    for (const auto &[id, value] : from_file.parameters.values) {
      CAPTURE(info(id).name);
      CHECK_FALSE(out_of_bounds(id, value).has_value()); // inside the table's bounds
    }
    if (from_file.inherits.empty()) {
      CHECK(built_in->parameters.values == from_file.parameters.values);
      CHECK(built_in->parameters.origin == from_file.parameters.origin);
      continue;
    }
    // An architecture that inherits: its base's values first, then its own, which win.
    const architecture_parameters *base = catalog.architecture(from_file.inherits);
    REQUIRE(base != nullptr);
    CHECK(base->inherits.empty());
    const std::vector<std::pair<parameter, double>> &values = built_in->parameters.values;
    REQUIRE(values.size() == base->parameters.values.size() + from_file.parameters.values.size());
    CHECK(
        std::equal(from_file.parameters.values.begin(), from_file.parameters.values.end(),
                   values.end() - static_cast<std::ptrdiff_t>(from_file.parameters.values.size())));
    CHECK(built_in->parameters.origin.rfind(from_file.parameters.origin, 0) == 0);
    CHECK(contains(built_in->parameters.origin, "as the " + from_file.inherits));
  }
  REQUIRE(catalog.architecture("hopper") != nullptr);
  CHECK(catalog.architecture("volta") == nullptr);
  CHECK(catalog.architecture("") == nullptr);
}

TEST_CASE("every built-in GPU has its architecture's parameters, then its own file's") {
  const spec_catalog &catalog = spec_catalog::builtin();
  for (const gpu_spec &spec : catalog.specs()) {
    CAPTURE(spec.name);
    model_parameters expected;
    if (const architecture_parameters *arch = catalog.architecture(spec.architecture)) {
      expected = apply(expected, arch->parameters);
      CHECK(contains(spec.parameters.origin, spec.architecture + " architecture"));
    } else {
      CHECK(contains(spec.parameters.origin, "generic defaults"));
    }
    expected = apply(expected, spec.model_overrides);
    CHECK(spec.parameters == expected);
    // resolve() by name gives the same parameters as the catalog's copy.
    CHECK(catalog.resolve(spec.name).parameters == spec.parameters);
  }
}

TEST_CASE("a catalog built with an architecture resolves its GPUs against it") {
  architecture_parameters test_arch{"test", {"fitted on a test GPU", {}}};
  test_arch.parameters.values.emplace_back(parameter::dram_efficiency, 0.5);
  test_arch.parameters.values.emplace_back(parameter_at(parameter::efficiency, precision::fp16),
                                           0.7);
  // zeta's own file overrides fp16's efficiency on top of the architecture's.
  const gpu_spec zeta =
      parse_gpu_spec(spec_yaml("zeta") + "model:\n  efficiency: {fp16: 0.9}\n", "z.yaml");
  const gpu_spec alpha = parse_gpu_spec(spec_yaml("alpha"), "a.yaml");
  const spec_catalog catalog({zeta, alpha}, {test_arch});
  const gpu_spec &a = *catalog.find("alpha");
  const gpu_spec &z = *catalog.find("zeta");
  CHECK(a.parameters[parameter::dram_efficiency] == 0.5);
  CHECK(a.parameters.efficiency(precision::fp16) == 0.7);
  CHECK(contains(a.parameters.origin, "test architecture"));
  CHECK(contains(a.parameters.origin, "fitted on a test GPU"));
  CHECK(z.parameters[parameter::dram_efficiency] == 0.5);
  CHECK(z.parameters.efficiency(precision::fp16) == 0.9);
  CHECK(contains(z.parameters.origin, "test architecture"));
  CHECK(contains(z.parameters.origin, "z.yaml"));
  // Everything neither names keeps its default.
  CHECK(a.parameters[parameter::kernel_overhead_s] ==
        info(parameter::kernel_overhead_s).default_value);
}

TEST_CASE("an architecture that inherits takes its base's values for what it did not measure") {
  architecture_parameters base{"base", {"fitted on a base GPU", {}}};
  base.parameters.values.emplace_back(parameter::dram_efficiency, 0.5);
  base.parameters.values.emplace_back(parameter::kernel_overhead_s, 4e-6);
  architecture_parameters child{"child", {"fitted on a child GPU", {}}, "base"};
  child.parameters.values.emplace_back(parameter::dram_efficiency, 0.7);
  const spec_catalog catalog({}, {base, child});
  const architecture_parameters &resolved = *catalog.architecture("child");
  const model_parameters p = apply(model_parameters{}, resolved.parameters);
  CHECK(p[parameter::dram_efficiency] == 0.7);    // its own wins
  CHECK(p[parameter::kernel_overhead_s] == 4e-6); // the base's, where it has none
  CHECK(p[parameter::wave_quantization] == info(parameter::wave_quantization).default_value);
  CHECK(contains(resolved.parameters.origin, "fitted on a child GPU"));
  CHECK(contains(resolved.parameters.origin, "as the base architecture's"));
  // An unknown base, itself, one that inherits in turn (a loop too), or a name given twice is
  // refused naming the architecture, at its file and line where it has them (no invented file
  // for one built in code).
  architecture_parameters orphan{"orphan", {"x", {}}, "nowhere"};
  CHECK_THROWS_WITH_AS(spec_catalog({}, {orphan}),
                       "architecture `orphan`: `inherits: nowhere`: no architecture of that name",
                       input_error);
  architecture_parameters grandchild{"grandchild", {"x", {}}, "child"};
  CHECK_THROWS_WITH_AS(spec_catalog({}, {base, child, grandchild}),
                       doctest::Contains("architecture `grandchild`: `inherits: child`, which "
                                         "inherits base in turn"),
                       input_error);
  const architecture_parameters itself = parse_architecture_parameters(
      "architecture: mine\ninherits: mine\nmodel:\n  origin: \"x\"\n", "mine.yaml");
  CHECK_THROWS_WITH_AS(spec_catalog({}, {itself}),
                       "mine.yaml:2:11: architecture `mine`: `inherits: mine`: an architecture "
                       "cannot inherit itself",
                       input_error);
  architecture_parameters loop_a{"loop-a", {"x", {}}, "loop-b"},
      loop_b{"loop-b", {"x", {}}, "loop-a"};
  CHECK_THROWS_WITH_AS(spec_catalog({}, {loop_a, loop_b}), doctest::Contains("in turn"),
                       input_error);
  const architecture_parameters twice =
      parse_architecture_parameters("architecture: base\nmodel:\n  origin: \"x\"\n", "second.yaml");
  CHECK_THROWS_WITH_AS(spec_catalog({}, {base, twice}),
                       "second.yaml:1:15: architecture `base` a second time (first in code): give "
                       "each architecture one file",
                       input_error);
  // The YAML key.
  const architecture_parameters parsed = parse_architecture_parameters(
      "architecture: child\ninherits: base\nmodel:\n  origin: \"x\"\n  dram_efficiency: 0.7\n",
      "child.yaml");
  CHECK(parsed.inherits == "base");
}

TEST_CASE("sustained_clock_mhz is parsed and scales the peaks the analysis uses, not the printed "
          "ones") {
  // boost 1000 MHz, held at 600 under load: every datasheet peak at 0.6.
  const gpu_spec spec = parse_gpu_spec(
      spec_yaml("capped", "  fp32: {dense: 10}\n  fp16: {dense: 80, sparse: 160}\n") +
          "sustained_clock_mhz: 600\n",
      "capped.yaml");
  REQUIRE(spec.sustained_clock_hz);
  CHECK(*spec.sustained_clock_hz == doctest::Approx(600e6).epsilon(1e-12));
  CHECK(spec.clock_hz() == doctest::Approx(600e6).epsilon(1e-12));
  CHECK(spec.clock_basis() == "sustained");
  // The datasheet's figures stay as printed ...
  CHECK(spec.peaks.at(precision::fp16).dense_flop_per_s == doctest::Approx(80e12).epsilon(1e-12));
  // ... and the rates the analysis holds ops against are at the held clock, ridge included.
  CHECK(spec.peak_flop_per_s(precision::fp16) == doctest::Approx(48e12).epsilon(1e-12));
  CHECK(spec.peak_flop_per_s(precision::fp16, true) == doctest::Approx(96e12).epsilon(1e-12));
  CHECK(spec.peak_flop_per_s(precision::fp32) == doctest::Approx(6e12).epsilon(1e-12));
  CHECK(spec.ridge_intensity(precision::fp16) ==
        doctest::Approx(96.0).epsilon(1e-12)); // 48e12/500e9
  // Without one: the boost clock, peaks as printed.
  const gpu_spec plain = parse_gpu_spec(spec_yaml("plain"), "plain.yaml");
  CHECK_FALSE(plain.sustained_clock_hz);
  CHECK(plain.clock_basis() == "boost");
  CHECK(plain.clock_hz() == plain.boost_clock_hz);
  CHECK(plain.peak_flop_per_s(precision::fp32) == doctest::Approx(10e12).epsilon(1e-12));
  // Equal to the boost clock: allowed, and scales nothing.
  const gpu_spec equal =
      parse_gpu_spec(spec_yaml("equal") + "sustained_clock_mhz: 1000\n", "equal.yaml");
  CHECK(equal.peak_flop_per_s(precision::fp32) == doctest::Approx(10e12).epsilon(1e-12));
}

TEST_CASE("sustained_clock_mhz is refused above the boost clock, at zero or below, or not a "
          "number: an input error naming the file and line") {
  const auto refused = [](const std::string &value, const std::string &fragment) {
    const std::string yaml = spec_yaml("bad") + "sustained_clock_mhz: " + value + "\n";
    CAPTURE(yaml);
    try {
      (void)parse_gpu_spec(yaml, "capped.yaml");
      FAIL("accepted");
    } catch (const input_error &e) {
      CHECK(e.where().file == "capped.yaml");
      CHECK(e.where().line == 12); // the key's own line, after spec_yaml's eleven
      CHECK(contains(e.what(), fragment));
    }
  };
  refused("1001", "`sustained_clock_mhz` = 1001 exceeds `boost_clock_mhz` (1000)");
  refused("0", "`sustained_clock_mhz` must be a positive number");
  refused("-900", "`sustained_clock_mhz` must be a positive number");
  refused("fast", "`sustained_clock_mhz` must be a positive number");
  refused("1e-300", "[100, 10000] MHz");
}

TEST_CASE("memory_mib is the card's reported capacity, refused beyond 10% of memory_gb") {
  // spec_yaml's memory_gb is 8: 7,629 MiB (8.0e9 B) and 8,192 MiB (8.6e9 B) are both a card's.
  const gpu_spec mib = parse_gpu_spec(spec_yaml("card") + "memory_mib: 8192\n", "card.yaml");
  CHECK(mib.memory_bytes == 8192.0 * 1024 * 1024);
  const gpu_spec gb = parse_gpu_spec(spec_yaml("card"), "card.yaml");
  CHECK(gb.memory_bytes == 8e9);
  for (const char *slip : {"8", "6800", "9000", "8192000"}) {
    CAPTURE(slip);
    try {
      (void)parse_gpu_spec(spec_yaml("card") + "memory_mib: " + slip + "\n", "card.yaml");
      FAIL("accepted");
    } catch (const input_error &e) {
      CHECK(e.where().file == "card.yaml");
      CHECK(e.where().line == 12);
      CHECK(contains(e.what(), "memory_mib"));
    }
  }
}

namespace {

/// The number a spec file gives `key` (the first `key: N` at the start of a line); nullopt when
/// the file gives none.
std::optional<double> file_number(const fs::path &file, const std::string &key) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(key + ":", 0) == 0)
      return std::stod(line.substr(key.size() + 1));
  return std::nullopt;
}

} // namespace

TEST_CASE("every catalog spec loads, and its capacity is what the card reports where the file "
          "says, within 10% of the datasheet's GB") {
  const spec_catalog &catalog = spec_catalog::builtin();
  for (const fs::path &file : spec_files()) {
    CAPTURE(file.string());
    const gpu_spec spec = load_gpu_spec(file);
    const gpu_spec *built_in = catalog.find(spec.name);
    REQUIRE(built_in != nullptr);
    const std::optional<double> gb = file_number(file, "memory_gb");
    REQUIRE(gb);
    const std::optional<double> mib = file_number(file, "memory_mib");
    // Every GPU of the catalog has a reported size on record.
    REQUIRE(mib);
    CHECK(built_in->memory_bytes == *mib * 1024 * 1024);
    CHECK(built_in->memory_bytes == doctest::Approx(*gb * 1e9).epsilon(0.10));
    // An "80 GB" H100 reports 81,559 MiB; nothing reports less than about 1% under its GB.
    CHECK(built_in->memory_bytes >= 0.99 * *gb * 1e9);
    // And every clock it is held at lies in (0, boost].
    CHECK(built_in->clock_hz() > 0);
    CHECK(built_in->clock_hz() <= built_in->boost_clock_hz);
  }
  CHECK(catalog.find("h100-sxm5")->memory_bytes == 81559.0 * 1024 * 1024);
}

TEST_CASE("power-capped cards hold a sustained clock; GPUs fitted at the clock they hold do not") {
  const spec_catalog &catalog = spec_catalog::builtin();
  // Documented to throttle under full tensor load at their power limit.
  for (const char *name : {"t4", "l4", "a10"}) {
    CAPTURE(name);
    const gpu_spec &spec = *catalog.find(name);
    REQUIRE(spec.sustained_clock_hz);
    CHECK(*spec.sustained_clock_hz < spec.boost_clock_hz);
    CHECK(spec.peak_flop_per_s(precision::fp16) < spec.peaks.at(precision::fp16).dense_flop_per_s);
  }
  // Their model parameters are (or will be) fitted to timings at the clock they hold, so the
  // fitted efficiency already absorbs it: a sustained clock would count it twice.
  for (const char *name : {"a100-sxm4-40gb", "a100-sxm4-80gb", "h100-sxm5", "h200-sxm", "b200",
                           "b300", "gb200", "gb300", "l40s", "rtx-pro-6000"}) {
    CAPTURE(name);
    CHECK_FALSE(catalog.find(name)->sustained_clock_hz.has_value());
  }
}

TEST_CASE("a spec's architecture is read in any case, a near miss refused, a new one on defaults") {
  const auto spec_of = [](const std::string &architecture, const std::string &cc) {
    std::string yaml = spec_yaml("x");
    yaml.replace(yaml.find("architecture: test"), 18, "architecture: " + architecture);
    yaml.replace(yaml.find("\"1.0\""), 5, "\"" + cc + "\"");
    return parse_gpu_spec(yaml, "x.yaml");
  };
  // `Hopper` is hopper: its fitted parameters, not the generic defaults it silently ran on.
  const gpu_spec capitalised = spec_catalog::builtin().inherit(spec_of("Hopper", "9.0"));
  CHECK(capitalised.architecture == "hopper");
  CHECK(contains(capitalised.parameters.origin, "hopper architecture: fitted"));
  CHECK_THROWS_WITH_AS(spec_of("Hoper", "9.0"),
                       doctest::Contains("x.yaml:2:15: GPU spec: unknown architecture `Hoper` "
                                         "(did you mean `hopper`?)"),
                       input_error);
  const gpu_spec future = spec_catalog::builtin().inherit(spec_of("rubin", "15.0"));
  CHECK(contains(future.parameters.origin, "generic defaults"));
  // A name of its own at a known compute capability is the known architecture misnamed.
  CHECK_THROWS_WITH_AS(spec_of("GH100", "9.0"),
                       doctest::Contains("x.yaml:2:15: GPU spec: unknown architecture `GH100`, of "
                                         "compute capability 9.0: that is the hopper "
                                         "architecture; name it"),
                       input_error);
  CHECK_THROWS_WITH_AS(spec_of("thor", "11.0"), doctest::Contains("that is the blackwell"),
                       input_error);
  CHECK(spec_of("blackwell", "11.0").architecture == "blackwell");
  CHECK_THROWS_WITH_AS(spec_of("hopper", "banana"),
                       doctest::Contains("`compute_capability` must be MAJOR.MINOR"), input_error);
  CHECK_THROWS_WITH_AS(spec_of("hopper", "9."), doctest::Contains("must be MAJOR.MINOR"),
                       input_error);
  CHECK_THROWS_WITH_AS(spec_of("ada", "9.0"),
                       doctest::Contains("`compute_capability` 9.0 is of the hopper architecture, "
                                         "not the `architecture` ada"),
                       input_error);
}

TEST_CASE("architecture_of agrees with the per-SM rate tables and names only known architectures") {
  const std::vector<std::string> &known = architecture_names();
  for (int major = 1; major <= 20; ++major)
    for (int minor = 0; minor <= 9; ++minor) {
      CAPTURE(major);
      CAPTURE(minor);
      const auto architecture = architecture_of(major, minor);
      const auto rates = sm_rates_for(major, minor, false);
      CHECK(architecture.has_value() == rates.has_value());
      if (architecture && rates) {
        CHECK(*architecture == rates->architecture);
        CHECK(std::find(known.begin(), known.end(), *architecture) != known.end());
      }
    }
  for (const gpu_spec &spec : spec_catalog::builtin().specs()) // every spec's pair agrees
    CHECK(std::find(known.begin(), known.end(), spec.architecture) != known.end());
}
