// SPDX-License-Identifier: Apache-2.0
#pragma once
// What every chart's SVG is drawn with: the plot frame and its log axes, the document's opening
// and heading, XML escapes.

#include "chart.hpp"

#include <fmt/format.h>

#include <functional>
#include <iterator>
#include <string>

namespace roofline::detail {

/// Where the plot area sits in the SVG, and data → pixel coordinates.
struct plot_frame {
  double left = 0, top = 0, width = 0, height = 0;
  log_axis x, y;
  double x_of(double intensity) const;
  double y_of(double flop_per_s) const;
};

/// The SVG's width, and its least height (svg_height_of: more where the notes need it).
inline constexpr double svg_width = 960, svg_height = 620;

/// Appends `format` with `args` to `out`: how every chart writes its SVG.
template <class... Args>
void put(std::string &out, fmt::format_string<Args...> format, Args &&...args) {
  fmt::format_to(std::back_inserter(out), format, std::forward<Args>(args)...);
}

/// A decade's tick label: "0.1", "1", "10 k", "1 P".
std::string decade_text(int power);

/// An SVG document's opening: the element (svg_width wide, `height` high), its title and a white
/// ground.
void svg_open(std::string &out, double height, const std::string &title);

/// A chart's title and subtitle, from `left` (the plot's left edge).
void svg_heading(std::string &out, double left, const std::string &title,
                 const std::string &subtitle);

/// Log axes around `f`: a grid line and a tick label at every decade (`x_tick`, `y_tick` of its
/// power of ten), the plot's frame, and the axes' titles.
void svg_log_axes(std::string &out, const plot_frame &f,
                  const std::function<std::string(int)> &x_tick,
                  const std::function<std::string(int)> &y_tick, const std::string &x_title,
                  const std::string &y_title);

/// `text` for XML and HTML: markup characters as entities, control characters as spaces.
std::string escape_xml(const std::string &text);

} // namespace roofline::detail
