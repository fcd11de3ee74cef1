// SPDX-License-Identifier: Apache-2.0
// The roofline chart: points where their numbers say, ridges labelled with their values, axes
// that hold every op and ridge, and an SVG whose text is escaped.
#include "chart_svg.hpp"
#include "text_format.hpp"

#include "roofline/analysis/report.hpp"
#include "roofline/compare/comparison.hpp"
#include "roofline/input/model_config.hpp"
#include "roofline/input/network.hpp"
#include "roofline/model/perf_model.hpp"
#include "roofline/model/spec_catalog.hpp"

#include "test_support.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <utility>

using namespace roofline;
using namespace roofline::detail;
using roofline::test::contains;

namespace {

report report_of(const std::string &yaml, const std::string &gpu, bool sparse = false) {
  const network net = parse_network(yaml, "chart.yaml");
  model_options options;
  options.sparse = sparse;
  const perf_model model(spec_catalog::builtin().resolve(gpu), options);
  return assemble_report(analyze(net, model, "--gpu " + gpu));
}

const std::string square_gemm = "name: square\nprecision: fp16\nlayers:\n"
                                "  - {name: mm, type: matmul, m: 4096, n: 4096, k: 4096}\n";

} // namespace

TEST_CASE("a GEMM sits at its intensity and its FLOP/s at the predicted time") {
  const report r = report_of(square_gemm, "h100");
  const chart c = roofline_chart(r);
  REQUIRE(c.points.size() == 1);
  const chart_point &p = c.points.front();
  // 2·4096³ FLOPs over 2 bytes × (3 · 4096²) elements: 4096 / 3 FLOP/B.
  CHECK(p.intensity == doctest::Approx(4096.0 / 3));
  const prediction &predicted = r.analysis.ops.front().prediction;
  CHECK(p.flop_per_s == doctest::Approx(2.0 * 4096 * 4096 * 4096 / predicted.time_s));
  CHECK(p.share == doctest::Approx(1.0));

  // The frame: 78 px from the left, 858 px wide; 58 px from the top, 466 px high.
  const plot_frame f = frame_of(c);
  const double x = 78 + (std::log10(4096.0 / 3) - c.x.low) / (c.x.high - c.x.low) * 858;
  const double y = 58 + 466 - (std::log10(p.flop_per_s) - c.y.low) / (c.y.high - c.y.low) * 466;
  CHECK(f.x_of(p.intensity) == doctest::Approx(x));
  CHECK(f.y_of(p.flop_per_s) == doctest::Approx(y));
  const std::string svg = render_svg(c);
  CHECK(contains(svg, fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\"", x, y)));
  CHECK(contains(svg, ">mm</text>")); // the largest share is labelled
}

TEST_CASE("every roof's ridge is marked with its value, and the axes hold every ridge") {
  // fp16 dense on an H100: 989.4 TFLOP/s over 3.35 TB/s = 295.3 FLOP/B; the ReLU is held
  // against fp32's 67 TFLOP/s: 20.0 FLOP/B.
  const report r = report_of(square_gemm + "  - {name: act, type: relu, features: 4096}\n", "h100");
  const chart c = roofline_chart(r);
  const std::string svg = render_svg(c);
  CHECK(contains(svg, "ridge 295 FLOP/B"));
  CHECK(contains(svg, "ridge 20.0 FLOP/B"));
  CHECK(contains(svg, "fp16 tensor 989 TFLOP/s"));
  CHECK(contains(svg, "DRAM 3.35 TB/s"));
  for (const chart_roof &roof : c.roofs) {
    CHECK(std::pow(10.0, c.x.low) <= roof.ridge);
    CHECK(roof.ridge < std::pow(10.0, c.x.high));
    CHECK(roof.flop_per_s < std::pow(10.0, c.y.high));
  }
  for (const chart_point &p : c.points) {
    CHECK(std::pow(10.0, c.x.low) <= p.intensity);
    CHECK(std::pow(10.0, c.y.low) <= p.flop_per_s);
  }
  // The memory-bound region ends at the ridge of the roof that holds most of the time.
  REQUIRE(c.region_ridge);
  CHECK(*c.region_ridge == doctest::Approx(989.4 / 3.35));
}

TEST_CASE("the chart's regions never contradict the table: where an op of another roof would "
          "sit in the other region, no regions are drawn, and a note says why") {
  // The fp16 GEMM holds most of the time (the regions split at fp16's ridge, 295 FLOP/B); the
  // fp32 GEMM (intensity 171) is compute-bound against fp32's ridge of 20 FLOP/B.
  const std::string mixed = square_gemm + "  - {name: mm32, type: matmul, m: 512, n: 512, k: 512, "
                                          "precision: fp32}\n";
  for (const auto &[yaml, agree] : {std::pair{square_gemm, true}, std::pair{mixed, false}}) {
    const report r = report_of(yaml, "h100");
    const chart c = roofline_chart(r);
    CHECK(c.region_ridge.has_value() == agree);
    CHECK(contains(fmt::format("{}", fmt::join(c.notes, "\n")), "no memory- and compute-bound "
                                                                "regions") == !agree);
    if (!c.region_ridge)
      continue;
    for (const analysed_op &e : r.analysis.ops)
      CHECK((e.op.arithmetic_intensity() < *c.region_ridge) ==
            (e.prediction.bound == bound::memory));
  }
}

TEST_CASE("a sustained analysis draws its power roof: below the compute roof where the limit "
          "binds; a burst draws none") {
  const std::string big = "name: big\nprecision: bf16\nlayers:\n"
                          "  - {name: mm, type: matmul, m: 8192, n: 8192, k: 8192}\n";
  const report r = report_of(big, "h200");
  const chart c = roofline_chart(r);
  REQUIRE(c.power_roof);
  const chart_power_roof &p = *c.power_roof;
  CHECK(p.headroom_w == doctest::Approx(r.analysis.budget.cap_w - r.analysis.budget.idle_w));
  // Far right, only the FLOPs' energy counts: the limit over it, below the bf16 peak.
  CHECK(p.flop_per_s(1e9) == doctest::Approx(p.headroom_w / p.joules_per_flop).epsilon(1e-6));
  CHECK(p.flop_per_s(1e9) < p.peak_flop_per_s);
  const std::string svg = render_svg(c);
  CHECK(contains(svg, "700 W power limit (bf16)"));
  CHECK(contains(svg, "stroke-dasharray=\"3 3\""));
  // The boost clock of a burst: no power roof.
  const network net = parse_network(big, "big.yaml");
  model_options burst;
  burst.clock = clock_regime::burst;
  const perf_model model(spec_catalog::builtin().resolve("h200"), burst);
  CHECK_FALSE(roofline_chart(assemble_report(analyze(net, model, "test"))).power_roof);
}

TEST_CASE("--sparse adds the dashed 2:4 roof and its ridge") {
  const chart c = roofline_chart(report_of(square_gemm, "h100", true));
  const std::string svg = render_svg(c);
  CHECK(contains(svg, "fp16 tensor 2:4 sparse 1.98 PFLOP/s"));
  CHECK(contains(svg, "ridge 591 FLOP/B"));
  CHECK(contains(svg, "stroke-dasharray=\"6 4\""));
}

TEST_CASE("a comparison draws each GPU's roofs and each op once per GPU, joined") {
  compare_request request;
  request.source = parse_network(square_gemm, "chart.yaml");
  request.gpus = {"a100", "h100"};
  const chart c = comparison_chart(compare_gpus(request));
  CHECK(c.points.size() == 2);
  REQUIRE(c.links.size() == 1);
  CHECK(c.links.front().size() == 2);
  CHECK(c.points[0].intensity == c.points[1].intensity);
  const std::string svg = render_svg(c);
  CHECK(contains(svg, "a100-sxm4-80gb fp16 tensor 312 TFLOP/s"));
  CHECK(contains(svg, "h100-sxm5 fp16 tensor 989 TFLOP/s"));
  CHECK(contains(svg, "ridge 295 FLOP/B"));
}

TEST_CASE("names reach the SVG escaped") {
  const report r = report_of("name: \"a<b>&c\"\nlayers:\n"
                             "  - {name: \"x<y\", type: linear, in: 1024, out: 1024}\n",
                             "h100");
  const std::string svg = render_svg(roofline_chart(r));
  CHECK(contains(svg, "a&lt;b&gt;&amp;c"));
  CHECK(contains(svg, "x&lt;y"));
  CHECK_FALSE(contains(svg, "x<y"));
}

TEST_CASE("escape_xml writes only XML characters: U+FFFE and U+FFFF escaped, others kept") {
  // Issue 27: both reached SVG and HTML raw, which no XML parser reads.
  CHECK(escape_xml("a\xEF\xBF\xBE"
                   "b\xEF\xBF\xBF") == "a\\ufffeb\\uffff");
  CHECK(escape_xml("\xEF\xBF\xBD \xEF\xB7\x90 \xF0\x9F\x98\x80") ==
        "\xEF\xBF\xBD \\ufdd0 \xF0\x9F\x98\x80"); // U+FFFD, U+1F600 kept; U+FDD0, a noncharacter,
                                                  // shown
  CHECK(escape_xml("\xC2\x9B") == "\\u009b");          // C1 control
  CHECK(escape_xml("\xFF") == "\xEF\xBF\xBD");         // not UTF-8
}

TEST_CASE("si writes SI prefixes with three significant digits") {
  CHECK(si(989.4e12) == "989 T");
  CHECK(si(1.9789e15) == "1.98 P");
  CHECK(si(3.35e12) == "3.35 T");
  CHECK(si(10e9) == "10.0 G");
  CHECK(si(5) == "5.00 ");
}

TEST_CASE("a measured op is filled where it ran, joined to its prediction") {
  const network net = parse_network(square_gemm, "chart.yaml");
  const perf_model model(spec_catalog::builtin().resolve("h100"));
  measurement m;
  m.engine = "cublas";
  m.time_s = 250e-6; // 2·4096³ FLOPs in 250 µs: 550 TFLOP/s
  counter_readings counters;
  counters.dram_read_bytes = 90e6; // 100 MB moved: 1374 FLOP/B
  counters.dram_write_bytes = 10e6;
  m.counters = counters;
  measurements measured;
  measured.ops.push_back(m);
  const report r = assemble_report(analyze(net, model, "--gpu h100"), std::nullopt, measured);
  const chart c = roofline_chart(r);
  REQUIRE(c.points.size() == 1);
  const chart_point &p = c.points.front();
  REQUIRE(p.measured_flop_per_s);
  CHECK(*p.measured_flop_per_s == doctest::Approx(2.0 * 4096 * 4096 * 4096 / 250e-6));
  REQUIRE(p.measured_intensity);
  CHECK(*p.measured_intensity == doctest::Approx(2.0 * 4096 * 4096 * 4096 / 100e6));
  const plot_frame f = frame_of(c);
  const std::string svg = render_svg(c);
  CHECK(contains(svg, fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\"",
                                  f.x_of(*p.measured_intensity), f.y_of(*p.measured_flop_per_s))));
  CHECK(contains(svg, "class=\"measured\""));
  CHECK(contains(svg, "measured (filled)"));
}

namespace {

/// The `height` of an SVG document and the y of its lowest text baseline.
std::pair<double, double> height_and_lowest_text(const std::string &svg) {
  const auto number_after = [&](const std::string &key, std::size_t from) {
    const std::size_t at = svg.find(key, from);
    REQUIRE(at != std::string::npos);
    return std::stod(svg.substr(at + key.size()));
  };
  const double height = number_after("height=\"", svg.find("<svg"));
  double lowest = 0;
  for (std::size_t at = svg.find("<text"); at != std::string::npos; at = svg.find("<text", at + 1))
    lowest = std::max(lowest, number_after(" y=\"", at));
  return {height, lowest};
}

} // namespace

TEST_CASE("the SVG grows to hold every note: the last line is not clipped") {
  chart c = roofline_chart(report_of(square_gemm, "h100"));
  const auto [plain_height, plain_lowest] = height_and_lowest_text(render_svg(c));
  CHECK(plain_lowest < plain_height);
  for (int i = 0; i < 12; ++i)
    c.notes.push_back(fmt::format("note {}: {}", i, std::string(150, 'x')));
  const std::string svg = render_svg(c);
  const auto [height, lowest] = height_and_lowest_text(svg);
  CHECK(height == svg_height_of(c));
  CHECK(height > svg_height);
  CHECK(lowest + 4 <= height); // the last line's descenders too
  CHECK(contains(svg, "note 11:"));
}

TEST_CASE("a comparison draws one roof per GPU, however many tensor-parallel degrees it runs at, "
          "and every batch's points") {
  config_options options;
  options.phase = inference_phase::decode;
  compare_request request;
  request.source =
      config_source{model_config::load(roofline::test::config_path("llama-3-8b.json")), options};
  request.gpus = {"h100", "a100"};
  request.tensor_parallel = {1, 2};
  request.batches = {1, 16, 64};
  const std::vector<comparison> compared = compare_gpus(request);
  const chart c = comparison_chart(compared);
  // h100 and a100 at two degrees each: two GPUs' roofs and slopes, not four.
  compare_request one = request;
  one.tensor_parallel = {1};
  one.batches = {1};
  const chart alone = comparison_chart(compare_gpus(one));
  CHECK(c.roofs.size() == alone.roofs.size());
  CHECK(c.slopes.size() == 2);
  std::set<std::pair<double, std::size_t>> roofs;
  for (const chart_roof &roof : c.roofs)
    CHECK(roofs.emplace(roof.flop_per_s, roof.gpu).second); // no roof drawn twice for one GPU
  CHECK(c.legend.size() == 4);                              // every setup still named
  // Every batch: points at each batch's intensities, as many as the first batch's times three.
  std::set<double> intensities;
  for (const chart_point &p : c.points)
    intensities.insert(p.intensity);
  compare_request first_batch = request;
  first_batch.batches = {1};
  const chart first = comparison_chart(compare_gpus(first_batch));
  CHECK(c.points.size() == 3 * first.points.size());
  CHECK(c.links.size() == 3 * first.links.size());
  CHECK(contains(c.subtitle, "batches 1, 16, 64"));
  std::set<double> first_intensities;
  for (const chart_point &p : first.points)
    first_intensities.insert(p.intensity);
  CHECK(intensities.size() > first_intensities.size());
  const auto [height, lowest] = height_and_lowest_text(render_svg(c));
  CHECK(lowest < height);
}

TEST_CASE("ridge labels of near ridges do not overlap: two GPUs and their legend") {
  config_options options;
  options.phase = inference_phase::decode;
  compare_request request;
  request.source =
      config_source{model_config::load(roofline::test::config_path("llama-3-8b.json")), options};
  request.gpus = {"h100", "h200"};
  request.tensor_parallel = {1, 2};
  request.batches = {1, 64};
  const std::string svg = render_svg(comparison_chart(compare_gpus(request)));
  // Each ridge label's box (11 px text, 0.6 em a character, as the chart places them).
  struct label {
    double x, y, w;
  };
  std::vector<label> ridges;
  for (std::size_t at = svg.find("class=\"ridge\""); at != std::string::npos;
       at = svg.find("class=\"ridge\"", at + 1)) {
    const std::size_t open = svg.rfind("<text", at);
    const double x = std::stod(svg.substr(svg.find("x=\"", open) + 3));
    const double y = std::stod(svg.substr(svg.find("y=\"", open) + 3));
    const std::size_t text = svg.find('>', at) + 1;
    const double characters = static_cast<double>(svg.find('<', text) - text);
    ridges.push_back({x, y, 0.6 * 11 * characters});
  }
  REQUIRE(ridges.size() == 2);
  const label &a = ridges[0], &b = ridges[1];
  const bool apart = a.x + a.w <= b.x || b.x + b.w <= a.x || a.y <= b.y - 11 || b.y <= a.y - 11;
  CHECK_MESSAGE(apart, "ridge labels at (" << a.x << ", " << a.y << ") and (" << b.x << ", " << b.y
                                           << ")");
}
