// SPDX-License-Identifier: Apache-2.0
#include "serving_chart.hpp"

#include "svg.hpp"
#include "text_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <vector>

namespace roofline::detail {

namespace {

/// Whole decades around [low, high], at least one wide.
log_axis decades(double low, double high) {
  if (!(low > 0) || !(high >= low) || !std::isfinite(high)) // no positive range: one decade
    low = high = high > 0 && std::isfinite(high) ? high : 1;
  log_axis axis{static_cast<int>(std::floor(std::log10(low))),
                static_cast<int>(std::ceil(std::log10(high)))};
  if (axis.high <= axis.low)
    axis.high = axis.low + 1;
  return axis;
}

/// "10.0 ms": a decade of seconds' tick label.
std::string seconds_tick(int decade) {
  return duration(std::pow(10.0, decade));
}

/// How setup `i` is drawn, so that every setup of a chart is told apart: the palette's colours in
/// turn with round markers and solid curves, then each round of colours again with another
/// marker (square, triangle, diamond) and a dashed curve.
struct setup_style {
  const char *colour;
  enum class marker { circle, square, triangle, diamond } shape;
  bool dashed;
};

setup_style style_of(std::size_t i) {
  const std::size_t round = i / std::size(gpu_colours);
  return {gpu_colour(i), static_cast<setup_style::marker>(round % 4), round > 0};
}

/// The loads simulated on a setup: the one asked, and the highest meeting the targets.
std::vector<const simulation_result *> simulated_loads(const serving_setup &s) {
  std::vector<const simulation_result *> loads;
  if (s.simulated)
    loads.push_back(&*s.simulated);
  if (s.highest_load)
    loads.push_back(&s.highest_load->simulated);
  return loads;
}

/// A marker of `style` centred on (x, y), `size` its radius, with `title` as its tooltip (none
/// where empty).
std::string marker_svg(const setup_style &style, double x, double y, double size,
                       const std::string &title) {
  std::string shape;
  switch (style.shape) {
  case setup_style::marker::circle:
    shape = fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{}\"", x, y, size);
    break;
  case setup_style::marker::square:
    shape = fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\"",
                        x - size, y - size, 2 * size, 2 * size);
    break;
  case setup_style::marker::triangle:
    shape =
        fmt::format("<polygon points=\"{:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f}\"", x,
                    y - 1.2 * size, x - 1.1 * size, y + 0.9 * size, x + 1.1 * size, y + 0.9 * size);
    break;
  case setup_style::marker::diamond:
    shape = fmt::format("<polygon points=\"{0:.1f},{1:.1f} {2:.1f},{3:.1f} {0:.1f},{4:.1f} "
                        "{5:.1f},{3:.1f}\"",
                        x, y - 1.3 * size, x + 1.3 * size, y, y + 1.3 * size, x - 1.3 * size);
    break;
  }
  shape += fmt::format(" fill=\"{}\"", style.colour);
  return title.empty() ? shape + "/>\n"
                       : shape + "><title>" + title + "</title>" + "</" +
                             shape.substr(1, shape.find(' ') - 1) + ">\n";
}

/// Setup `i` of a chart framed by `f`: its legend line, its curve (its points at `latency`), its
/// largest batch and its chosen batch ringed.
void add_setup(std::string &out, const plot_frame &f, const serving_setup &s, std::size_t i,
               const std::function<double(const serving_point &)> &latency) {
  const setup_style style = style_of(i);
  const char *colour = style.colour;
  const char *dash = style.dashed ? " stroke-dasharray=\"7 3\"" : "";
  const double legend_y = f.top + 8 + 18.0 * static_cast<double>(i);
  put(out,
      "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{2:.1f}\" y2=\"{1:.1f}\" stroke=\"{3}\" "
      "stroke-width=\"2\"{7}/>\n<text x=\"{4:.1f}\" y=\"{5:.1f}\">{6}</text>\n",
      f.left + f.width + 16, legend_y, f.left + f.width + 40, colour, f.left + f.width + 46,
      legend_y + 4, escape_xml(s.name), dash);
  if (style.shape != setup_style::marker::circle || style.dashed)
    out += marker_svg(style, f.left + f.width + 28, legend_y, 3.5, {});
  if (s.curve.empty())
    return;
  std::string path;
  for (const serving_point &p : s.curve)
    path += fmt::format("{}{:.1f},{:.1f}", path.empty() ? "M" : " L", f.x_of(latency(p)),
                        f.y_of(p.output_tokens_per_s_per_gpu));
  put(out, "<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{}/>\n", path, colour,
      dash);
  for (const serving_point &p : s.curve)
    out += marker_svg(
        style, f.x_of(latency(p)), f.y_of(p.output_tokens_per_s_per_gpu), 3.5,
        escape_xml(fmt::format("{} at batch {}: {}TTFT {}, {} output tokens/s per GPU", s.name,
                               p.batch, p.has_tpot ? "TPOT " + duration(p.tpot_s) + ", " : "",
                               duration(p.ttft_s), significant(p.output_tokens_per_s_per_gpu))));
  const serving_point &last = s.curve.back();
  put(out, "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"10\" fill=\"{}\">{}</text>\n",
      f.x_of(latency(last)) + 5, f.y_of(last.output_tokens_per_s_per_gpu) - 5, colour, last.batch);
  if (s.chosen)
    put(out,
        "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"7\" fill=\"none\" stroke=\"{}\" "
        "stroke-width=\"2\"/>\n",
        f.x_of(latency(*s.chosen)), f.y_of(s.chosen->output_tokens_per_s_per_gpu), colour);
}

/// A setup's simulated loads (the one asked, and the highest meeting the targets): each a bar
/// of its latency from p50 to p99 at its output tokens per second per GPU, ticked at p90.
void add_simulated(std::string &out, const plot_frame &f, const serving_setup &s, std::size_t i,
                   bool by_ttft) {
  const char *colour = style_of(i).colour;
  for (const simulation_result *r : simulated_loads(s)) {
    const percentiles &p = by_ttft ? r->ttft : r->tpot;
    if (!(p.p50 > 0))
      continue;
    const double y = f.y_of(r->output_tokens_per_s / s.gpus());
    put(out,
        "<line x1=\"{0:.1f}\" y1=\"{3:.1f}\" x2=\"{2:.1f}\" y2=\"{3:.1f}\" stroke=\"{4}\" "
        "stroke-width=\"3\" stroke-opacity=\"0.6\"><title>{5}</title></line>\n"
        "<line x1=\"{1:.1f}\" y1=\"{6:.1f}\" x2=\"{1:.1f}\" y2=\"{7:.1f}\" stroke=\"{4}\" "
        "stroke-width=\"2\"/>\n",
        f.x_of(p.p50), f.x_of(p.p90), f.x_of(p.p99), y, colour,
        escape_xml(fmt::format("{} simulated: {} p50 {}, p90 {}, p99 {}; {} output tokens/s per "
                               "GPU",
                               s.name, by_ttft ? "TTFT" : "TPOT", duration(p.p50), duration(p.p90),
                               duration(p.p99), significant(r->output_tokens_per_s / s.gpus()))),
        y - 6, y + 6);
  }
}

} // namespace

std::string serving_curve_svg(const serving_comparison &c) {
  // A request of one output token has no TPOT: its curve runs along TTFT.
  const bool by_ttft = c.question.output_tokens == 1;
  const auto latency = [&](const serving_point &p) { return by_ttft ? p.ttft_s : p.tpot_s; };
  const std::string axis = by_ttft ? "TTFT" : "TPOT";
  double x_low = std::numeric_limits<double>::max(), x_high = 0;
  double y_low = std::numeric_limits<double>::max(), y_high = 0;
  for (const serving_setup &s : c.setups)
    for (const serving_point &p : s.curve) {
      x_low = std::min(x_low, latency(p));
      x_high = std::max(x_high, latency(p));
      y_low = std::min(y_low, p.output_tokens_per_s_per_gpu);
      y_high = std::max(y_high, p.output_tokens_per_s_per_gpu);
    }
  for (const serving_setup &s : c.setups)
    for (const simulation_result *r : simulated_loads(s)) {
      const percentiles &p = by_ttft ? r->ttft : r->tpot;
      if (!(p.p50 > 0)) // no request of more than one token: no TPOT to draw
        continue;
      x_low = std::min(x_low, p.p50);
      x_high = std::max(x_high, p.p99);
      y_low = std::min(y_low, r->output_tokens_per_s / s.gpus());
      y_high = std::max(y_high, r->output_tokens_per_s / s.gpus());
    }
  if (c.question.tpot_s) {
    x_low = std::min(x_low, *c.question.tpot_s);
    x_high = std::max(x_high, *c.question.tpot_s);
  }
  if (!(x_high > 0 && y_high > 0)) { // no setup fits: empty axes around 10 ms and 1000 tokens/s
    x_low = x_high = 0.01;
    y_low = y_high = 1000;
  }
  // Each note one line, short enough for the SVG's width at 11 px.
  std::vector<std::string> notes = {
      "Each curve: a setup at batch 1, 2, 4, … up to the largest that fits (its last point).",
      by_ttft ? "Ringed: the batch chosen. TTFT: a decode step plus the prefills a step admits."
              : "Ringed: the batch chosen. TPOT: a decode step at the mean cache plus its share "
                "of prefills.",
      "Batched continuously; output tokens per second per GPU."};
  if (std::any_of(c.setups.begin(), c.setups.end(),
                  [](const serving_setup &s) { return s.simulated.has_value(); }))
    notes.push_back(fmt::format("Bars: a simulated load's {} from p50 to p99, ticked at p90 (the "
                                "load asked, and the highest meeting the targets).",
                                by_ttft ? "TTFT" : "TPOT"));
  for (const serving_setup &s : c.setups)
    if (s.curve.empty())
      notes.push_back(s.name + ": not one request fits, no curve.");
  plot_frame f;
  f.left = 86;
  f.top = 58;
  f.width = svg_width - f.left - 200; // the legend to the right
  f.height = 440;
  f.x = decades(x_low, x_high);
  f.y = decades(y_low, y_high);
  // Below the plot its notes; beside it the legend, one line a setup, however many.
  const double height = std::max(f.top + f.height + 56 + 16.0 * static_cast<double>(notes.size()),
                                 f.top + 24 + 18.0 * static_cast<double>(c.setups.size()));
  std::string out;
  const std::string title = c.network_name + ": output tokens per second per GPU against " + axis;
  svg_open(out, height, title);
  svg_heading(out, f.left, title,
              fmt::format("requests of {} prompt + {} output tokens{}", c.question.prompt_tokens,
                          c.question.output_tokens,
                          c.question.eager ? ", eager" : ", CUDA graphs"));
  svg_log_axes(out, f, seconds_tick, decade_text,
               by_ttft ? "TTFT (time to the first token, log)"
                       : "TPOT (time per output token, log)",
               "output tokens/s per GPU (log)");
  if (c.question.tpot_s) {
    const double x = f.x_of(*c.question.tpot_s);
    put(out,
        "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#D55E00\" "
        "stroke-dasharray=\"6 4\"/>\n<text x=\"{3:.1f}\" y=\"{4:.1f}\" fill=\"#D55E00\">TPOT "
        "target {5}</text>\n",
        x, f.top, f.top + f.height, x + 4, f.top + 14, escape_xml(duration(*c.question.tpot_s)));
  }
  for (std::size_t i = 0; i < c.setups.size(); ++i) {
    add_setup(out, f, c.setups[i], i, latency);
    add_simulated(out, f, c.setups[i], i, by_ttft);
  }
  for (std::size_t i = 0; i < notes.size(); ++i)
    put(out, "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" fill=\"#555555\">{}</text>\n",
        f.left, f.top + f.height + 60 + 16.0 * static_cast<double>(i), escape_xml(notes[i]));
  out += "</svg>\n";
  return out;
}

} // namespace roofline::detail
