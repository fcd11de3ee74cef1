// SPDX-License-Identifier: Apache-2.0
// src/core/output/serving_chart: every setup of a serving chart told apart.
#include "roofline/compare/serving.hpp"

#include "serving_chart.hpp"

#include <doctest/doctest.h>

#include <regex>
#include <set>
#include <string>

using namespace roofline;

namespace {

/// A comparison of "net" serving 128 prompt and 64 output tokens, with no setup yet.
serving_comparison question_of_net() {
  serving_comparison c;
  c.network_name = "net";
  c.question.prompt_tokens = 128;
  c.question.output_tokens = 64;
  return c;
}

} // namespace

TEST_CASE("a serving chart of 12 setups tells every one apart: its colour, its marker and its "
          "curve's dashes together are its own") {
  serving_comparison c = question_of_net();
  for (int i = 0; i < 12; ++i) {
    serving_setup s;
    s.name = "setup" + std::to_string(i);
    for (std::int64_t batch : {1, 2, 4}) {
      serving_point p;
      p.batch = batch;
      p.ttft_s = 0.01 * static_cast<double>(batch) * (1 + i);
      p.tpot_s = 0.001 * static_cast<double>(batch) * (1 + i);
      p.output_tokens_per_s_per_gpu = 100.0 * static_cast<double>(batch) / (1 + i);
      s.curve.push_back(p);
    }
    c.setups.push_back(s);
  }
  const std::string svg = detail::serving_curve_svg(c);
  // Each curve: its stroke and dashes; each point: its marker element and fill.
  const std::regex curve(
      R"re(<path d="[^"]*" fill="none" stroke="([^"]+)" stroke-width="2"( stroke-dasharray="[^"]+")?/>)re");
  const std::regex point(R"re(<(circle|rect|polygon) [^>]*fill="([^"]+)"><title>(setup\d+) at)re");
  std::set<std::string> curves, styles;
  for (auto m = std::sregex_iterator(svg.begin(), svg.end(), curve); m != std::sregex_iterator();
       ++m)
    curves.insert((*m)[1].str() + ((*m)[2].matched ? " dashed" : ""));
  for (auto m = std::sregex_iterator(svg.begin(), svg.end(), point); m != std::sregex_iterator();
       ++m)
    styles.insert((*m)[3].str() + " " + (*m)[1].str() + " " + (*m)[2].str());
  // Eight curves share a colour with another setup's; with the dashes each look is its own.
  CHECK(curves.size() == 12);
  // One marker shape and colour per setup (three points each), and no two setups alike.
  CHECK(styles.size() == 12);
  std::set<std::string> looks;
  for (const std::string &s : styles)
    looks.insert(s.substr(s.find(' ') + 1));
  CHECK(looks.size() == 12);
}

TEST_CASE("a simulated load is drawn as a bar of its TPOT from p50 to p99 at its throughput; "
          "every tooltip's element is closed") {
  serving_comparison c = question_of_net();
  serving_setup s;
  s.name = "one";
  serving_point p;
  p.tpot_s = 0.01;
  p.ttft_s = 0.02;
  p.output_tokens_per_s_per_gpu = 1000;
  s.curve.push_back(p);
  simulation_result r;
  r.tpot = {0.010, 0.020, 0.040};
  r.output_tokens_per_s = 800;
  s.simulated = r;
  c.setups.push_back(s);
  const std::string svg = detail::serving_curve_svg(c);
  CHECK(svg.find("one simulated: TPOT p50 10.0 ms, p90 20.0 ms, p99 40.0 ms; 800 output "
                 "tokens/s per GPU") != std::string::npos);
  // A marker with a tooltip is one element: <circle …><title>…</title></circle>.
  const auto count = [&](const std::string &text) {
    std::size_t n = 0;
    for (std::size_t at = svg.find(text); at != std::string::npos; at = svg.find(text, at + 1))
      ++n;
    return n;
  };
  CHECK(count("<circle ") == count("</circle>") + count("r=\"7\" fill=\"none\""));
}
