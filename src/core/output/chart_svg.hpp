// SPDX-License-Identifier: Apache-2.0
#pragma once
// A roofline chart drawn as SVG: the chart decides what is shown, this only where.

#include "chart.hpp"
#include "svg.hpp"

#include <string>

namespace roofline::detail {

/// The plot area of `c`'s SVG.
plot_frame frame_of(const chart &c);

/// The height of `c`'s SVG: svg_height, grown so that its last note line is not clipped.
double svg_height_of(const chart &c);

/// A standalone SVG document (no script, no external font or image).
std::string render_svg(const chart &c);

} // namespace roofline::detail
