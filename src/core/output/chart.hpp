// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <fmt/format.h>

#include <cstddef>
#include <functional>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

namespace roofline {
struct report;
struct comparison;
} // namespace roofline

// A roofline chart as plain values (what to draw, in data units), built from a report or a
// comparison, and its SVG. The chart decides what is shown; render_svg only where.
namespace roofline::detail {

/// A log axis from 10^low to 10^high (whole decades).
struct log_axis {
  int low = 0;
  int high = 1;
};

/// A flat compute roof: a peak rate, from where the memory roof meets it to the right edge.
struct chart_roof {
  std::string label; ///< "fp16 tensor 989 TFLOP/s"
  double flop_per_s = 0;
  double ridge = 0; ///< FLOP/byte where the main memory roof meets it (gpu_spec::ridge_intensity)
  std::string colour;
  bool dashed = false;      ///< 2:4-sparse roofs, datasheet roofs beside measured ones
  bool ridge_label = false; ///< mark and label its ridge point
  std::size_t gpu = 0;      ///< which GPU's (a comparison's index)
};

/// A memory roof: FLOP/s = bandwidth × intensity, from the left edge up to the highest roof.
struct chart_slope {
  std::string label; ///< "DRAM 4.80 TB/s"
  double bytes_per_s = 0;
  std::string colour;
  bool dashed = false;
  std::size_t gpu = 0;  ///< which GPU's: it rises to that GPU's highest roof
  bool labelled = true; ///< its label drawn along it (else the legend names it)
};

/// One distinct op: where it sits at its predicted (and measured) time.
struct chart_point {
  std::string label; ///< its layer (" ×3" when several layers run the same op)
  double intensity = 0;
  double flop_per_s = 0; ///< FLOPs / predicted time
  double share = 0;      ///< of the step's predicted time (the point's area)
  std::string colour;
  bool launch_bound = false; ///< the host's floor, not a roof, sets its time
  bool labelled = false;     ///< among the largest shares: its label is drawn
  /// Where it ran, when it was measured: intensity (from DRAM counters where read) and FLOP/s.
  std::optional<double> measured_intensity, measured_flop_per_s;
};

struct legend_entry {
  std::string label;
  std::string colour;
  enum class mark { point, hollow_point, launch_bound, line } shape = mark::point;
};

struct chart {
  std::string title, subtitle;
  std::vector<chart_slope> slopes;
  std::vector<chart_roof> roofs;
  std::vector<chart_point> points;
  /// Points drawn as one op seen on several GPUs: joined by a thin line (indices into points).
  std::vector<std::vector<std::size_t>> links;
  std::vector<legend_entry> legend;
  /// Where the memory- and compute-bound regions meet (the main roof's ridge); none: no regions.
  std::optional<double> region_ridge;
  std::vector<std::string> notes; ///< below the plot ("2 ops with no FLOPs are not drawn")
  log_axis x, y;                  ///< wide enough for every point and every ridge
};

/// The chart of an analysis: its GPU's roofs and one point per distinct op.
chart roofline_chart(const report &r);

/// Every GPU of the first comparison on the same axes: each GPU's roofs in its colour and each
/// op once per GPU, joined.
chart comparison_chart(const std::vector<comparison> &comparisons);

/// The colour of a comparison's `i`-th GPU (or setup): Okabe & Ito's palette, told apart with
/// every common colour-vision deficiency, in turn.
const char *gpu_colour(std::size_t i);

/// Where the plot area sits in the SVG, and data → pixel coordinates.
struct plot_frame {
  double left = 0, top = 0, width = 0, height = 0;
  log_axis x, y;
  double x_of(double intensity) const;
  double y_of(double flop_per_s) const;
};

/// The SVG's width, and its least height (svg_height_of: more where the notes need it).
inline constexpr double svg_width = 960, svg_height = 620;

plot_frame frame_of(const chart &c);

/// The height of `c`'s SVG: svg_height, grown so that its last note line is not clipped.
double svg_height_of(const chart &c);

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

/// A standalone SVG document (no script, no external font or image).
std::string render_svg(const chart &c);

/// `text` for XML and HTML: markup characters as entities, control characters as spaces.
std::string escape_xml(const std::string &text);

/// "1 T", "100 G", "1.5 P": `value` with an SI prefix (G, T, P ...), 3 significant digits.
std::string si(double value);

} // namespace roofline::detail
