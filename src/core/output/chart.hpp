// SPDX-License-Identifier: Apache-2.0
#pragma once

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

// Okabe & Ito's palette: told apart with every common colour-vision deficiency.
inline constexpr const char *blue = "#0072B2";
inline constexpr const char *orange = "#E69F00";
inline constexpr const char *vermillion = "#D55E00";
inline constexpr const char *green = "#009E73";
inline constexpr const char *purple = "#CC79A7";
inline constexpr const char *sky = "#56B4E9";
inline constexpr const char *ink = "#222222";
inline constexpr const char *gpu_colours[] = {blue, vermillion, green, purple, orange, sky, ink};

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

/// The power roof: what a unit sustains at each intensity when its power limit binds,
/// FLOP/s = headroom_w / (joules_per_flop + joules_per_byte / intensity); drawn where it is
/// below the roofs (power_model.hpp).
struct chart_power_roof {
  std::string label; ///< "700 W power limit (bf16)"
  double headroom_w = 0, joules_per_flop = 0, joules_per_byte = 0;
  double peak_flop_per_s = 0, bytes_per_s = 0; ///< the roofs it lowers: drawn only below them
  std::string colour;

  /// The FLOP/s the limit allows at `intensity`.
  double flop_per_s(double intensity) const {
    return headroom_w / (joules_per_flop + joules_per_byte / intensity);
  }
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
  std::optional<chart_power_roof> power_roof; ///< a sustained analysis's, of its main unit
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

} // namespace roofline::detail
