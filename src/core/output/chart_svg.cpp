// SPDX-License-Identifier: Apache-2.0
#include "chart_svg.hpp"

#include "text_format.hpp"
#include "utf8.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace roofline::detail {

plot_frame frame_of(const chart &c) {
  plot_frame f;
  f.left = 78;
  f.top = 58;
  f.width = svg_width - f.left - 24;
  f.height = svg_height - f.top - 96;
  f.x = c.x;
  f.y = c.y;
  return f;
}

namespace {

/// A rough width of `text` in pixels at `size` (labels are placed before a browser lays them
/// out): 0.6 em per character, UTF-8 continuation bytes not counted.
double text_width(const std::string &text, double size) {
  std::size_t characters = 0;
  for (char ch : text)
    characters += (static_cast<unsigned char>(ch) & 0xC0) != 0x80;
  return 0.6 * size * static_cast<double>(characters);
}

struct box {
  double x0, y0, x1, y1;
  bool overlaps(const box &o) const { return x0 < o.x1 && o.x0 < x1 && y0 < o.y1 && o.y0 < y1; }
};

/// Labels placed where they overlap nothing placed before them (points, other labels).
class label_placer {
public:
  explicit label_placer(const plot_frame &f) : m_frame(f) {}
  void occupy(box b) { m_taken.push_back(b); }
  /// Takes `b` when it overlaps nothing taken before.
  bool take(box b) {
    if (std::any_of(m_taken.begin(), m_taken.end(), [&](const box &t) { return t.overlaps(b); }))
      return false;
    m_taken.push_back(b);
    return true;
  }
  /// The first of the candidate anchors (text start, baseline) where `text` fits; none.
  std::optional<std::pair<double, double>> place(const std::string &text, double size,
                                                 const std::vector<std::pair<double, double>> &at) {
    const double w = text_width(text, size);
    for (const auto &[x, y] : at) {
      const box b{x, y - size, x + w, y + 3};
      if (b.x0 < m_frame.left || b.x1 > m_frame.left + m_frame.width || b.y0 < m_frame.top ||
          b.y1 > m_frame.top + m_frame.height)
        continue;
      if (std::any_of(m_taken.begin(), m_taken.end(), [&](const box &t) { return t.overlaps(b); }))
        continue;
      m_taken.push_back(b);
      return std::pair{x, y};
    }
    return std::nullopt;
  }

private:
  const plot_frame &m_frame;
  std::vector<box> m_taken;
};

double radius_of(double share, double largest) {
  constexpr double smallest = 3.5, biggest = 16;
  if (!(largest > 0))
    return smallest;
  return smallest + (biggest - smallest) * std::sqrt(std::max(0.0, share) / largest);
}

std::string dash(bool dashed) {
  return dashed ? " stroke-dasharray=\"6 4\"" : "";
}

/// "0.01", "1", "100", "1 k", "10 T": a decade as the axes label it.
} // namespace

namespace {

/// The highest roof of `gpu`'s colour in `c`: where its slopes end; 0 when it has none.
double top_roof(const chart &c, std::size_t gpu) {
  double top_rate = 0;
  for (const chart_roof &r : c.roofs)
    if (r.gpu == gpu)
      top_rate = std::max(top_rate, r.flop_per_s);
  return top_rate;
}

/// The notes under the plot, wrapped at spaces to the width of the picture: one line each.
std::vector<std::string> note_lines(const chart &c) {
  const std::size_t line_length =
      static_cast<std::size_t>((svg_width - frame_of(c).left - 16) / (0.6 * 11));
  std::vector<std::string> lines;
  for (const std::string &note : c.notes) {
    std::string rest = note;
    while (!rest.empty()) {
      std::size_t cut = rest.size();
      if (rest.size() > line_length) {
        cut = rest.rfind(' ', line_length);
        cut = cut == std::string::npos || cut == 0 ? line_length : cut;
      }
      lines.push_back(rest.substr(0, cut));
      rest = cut < rest.size() ? rest.substr(cut + (rest[cut] == ' ' ? 1 : 0)) : std::string{};
    }
  }
  return lines;
}

/// Where the first note line's baseline sits below the plot, and the step between lines.
constexpr double first_note_below_plot = 56, note_line_step = 15, note_descent = 10;

/// One chart drawn as SVG, layer by layer in the order they stack: the frame and its axes, the
/// roofs, the points, their labels, the legend and the notes. Labels are placed around what was
/// drawn (or reserved) before them.
class svg_painter {
public:
  explicit svg_painter(const chart &c)
      : m_chart(c), m_frame(frame_of(c)), m_right(m_frame.left + m_frame.width),
        m_bottom(m_frame.top + m_frame.height), m_labels(m_frame) {
    for (const chart_point &p : c.points)
      m_largest = std::max(m_largest, p.share);
    for (const legend_entry &e : c.legend)
      m_legend_width = std::max(m_legend_width, text_width(e.label, 11) + 34);
    m_legend_height = 18.0 * static_cast<double>(c.legend.size()) + 6;
    // The largest points first, so that small ones stay visible on top.
    m_order.resize(c.points.size());
    for (std::size_t i = 0; i < m_order.size(); ++i)
      m_order[i] = i;
    std::stable_sort(m_order.begin(), m_order.end(), [&](std::size_t a, std::size_t b) {
      return c.points[a].share > c.points[b].share;
    });
  }

  std::string paint() {
    heading();
    regions();
    axes();
    // The legend's corner (top left: above the memory roofs, where ops seldom are) is taken
    // first.
    if (!m_chart.legend.empty())
      m_labels.occupy({m_frame.left + 8, m_frame.top + 6, m_frame.left + 8 + m_legend_width,
                       m_frame.top + 6 + m_legend_height});
    roofs();
    // Points take their space first: labels go around them.
    for (const chart_point &p : m_chart.points) {
      const double r = radius_of(p.share, m_largest);
      const double x = m_frame.x_of(p.intensity), y = m_frame.y_of(p.flop_per_s);
      m_labels.occupy({x - r, y - r, x + r, y + r});
    }
    roof_labels();
    slope_labels();
    links();
    points();
    point_labels();
    legend();
    notes();
    m_out += "</svg>\n";
    return std::move(m_out);
  }

private:
  void heading() {
    const plot_frame &f = m_frame;
    svg_open(m_out, svg_height_of(m_chart), m_chart.title);
    put(m_out,
        "<defs><clipPath id=\"plot\"><rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" "
        "height=\"{:.1f}\"/></clipPath></defs>\n",
        f.left, f.top, f.width, f.height);
    svg_heading(m_out, f.left, m_chart.title, m_chart.subtitle);
  }

  /// Regions: left of the ridge no op can reach the compute roof.
  void regions() {
    const plot_frame &f = m_frame;
    if (!m_chart.region_ridge || !(*m_chart.region_ridge > 0))
      return;
    const double split = std::clamp(f.x_of(*m_chart.region_ridge), f.left, m_right);
    put(m_out,
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\" "
        "fill-opacity=\"0.07\"/>\n",
        f.left, f.top, split - f.left, f.height, orange);
    put(m_out,
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\" "
        "fill-opacity=\"0.06\"/>\n",
        split, f.top, m_right - split, f.height, blue);
    if (split - f.left > 110)
      put(m_out,
          "<text x=\"{:.1f}\" y=\"{:.1f}\" fill=\"#8a5a00\" "
          "text-anchor=\"end\">memory-bound</text>\n",
          split - 8, m_bottom - 8);
    if (m_right - split > 110)
      put(m_out, "<text x=\"{:.1f}\" y=\"{:.1f}\" fill=\"#004f7c\">compute-bound</text>\n",
          split + 8, m_bottom - 8);
  }

  /// Decades: grid, ticks, labels; the frame and the axes' titles.
  void axes() {
    svg_log_axes(m_out, m_frame, decade_text, decade_text,
                 "arithmetic intensity (FLOP/byte of DRAM traffic)", "FLOP/s");
  }

  /// Roofs: each slope up to the highest roof of its colour, each roof from its ridge rightwards.
  void roofs() {
    const plot_frame &f = m_frame;
    put(m_out, "<g clip-path=\"url(#plot)\" fill=\"none\" stroke-width=\"2\">\n");
    const double x_left = std::pow(10.0, m_chart.x.low), x_right = std::pow(10.0, m_chart.x.high);
    for (const chart_slope &s : m_chart.slopes) {
      // Up to the highest roof of its GPU, else the top of the plot.
      double top_rate = top_roof(m_chart, s.gpu);
      if (!(top_rate > 0))
        top_rate = std::pow(10.0, m_chart.y.high);
      const double x_end = top_rate / s.bytes_per_s;
      put(m_out,
          "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\"{}/>\n",
          f.x_of(x_left), f.y_of(s.bytes_per_s * x_left), f.x_of(x_end), f.y_of(top_rate), s.colour,
          dash(s.dashed));
    }
    for (const chart_roof &r : m_chart.roofs)
      put(m_out,
          "<line x1=\"{0:.1f}\" y1=\"{2:.1f}\" x2=\"{1:.1f}\" y2=\"{2:.1f}\" stroke=\"{3}\"{4}/>\n",
          f.x_of(r.ridge), f.x_of(x_right), f.y_of(r.flop_per_s), r.colour, dash(r.dashed));
    if (m_chart.power_roof)
      power_roof(*m_chart.power_roof, x_left, x_right);
    put(m_out, "</g>\n");
  }

  /// The power roof: sampled along the intensity axis where it is below both roofs it lowers,
  /// labelled at its right end.
  void power_roof(const chart_power_roof &r, double x_left, double x_right) {
    const plot_frame &f = m_frame;
    std::string path;
    double last_x = 0, last_y = 0;
    constexpr int samples = 160;
    for (int i = 0; i <= samples; ++i) {
      const double intensity = x_left * std::pow(x_right / x_left, i / double(samples));
      const double rate = r.flop_per_s(intensity);
      if (rate >= std::min(r.peak_flop_per_s, r.bytes_per_s * intensity))
        continue;
      last_x = f.x_of(intensity);
      last_y = f.y_of(rate);
      path += fmt::format("{}{:.1f},{:.1f}", path.empty() ? "M" : " L", last_x, last_y);
    }
    if (path.empty())
      return;
    put(m_out, "<path d=\"{}\" stroke=\"{}\" stroke-dasharray=\"3 3\"/>\n", path, r.colour);
    const double w = text_width(r.label, 11);
    if (const auto at =
            m_labels.place(r.label, 11, {{last_x - w, last_y + 14}, {last_x - w, last_y - 5}}))
      put(m_out, "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" fill=\"{}\">{}</text>\n",
          at->first, at->second, r.colour, escape_xml(r.label));
  }

  /// Ridge points and roof labels.
  void roof_labels() {
    const plot_frame &f = m_frame;
    for (const chart_roof &r : m_chart.roofs) {
      const double x = f.x_of(r.ridge), y = f.y_of(r.flop_per_s);
      if (r.ridge_label)
        ridge(r, x, y);
      // At the right end, above or below the line, else further left (roofs of equal peaks
      // overlap).
      const double w = text_width(r.label, 11);
      std::vector<std::pair<double, double>> along;
      for (double end = m_right - 6; end - w > f.x_of(r.ridge); end -= w + 16) {
        along.emplace_back(end - w, y - 5);
        along.emplace_back(end - w, y + 14);
      }
      if (r.label.empty())
        continue;
      if (const auto at = m_labels.place(r.label, 11, along))
        put(m_out, "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" fill=\"{}\">{}</text>\n",
            at->first, at->second, r.colour, escape_xml(r.label));
    }
  }

  /// A roof's ridge point at (x, y), always labelled: where nothing else is, else below it.
  void ridge(const chart_roof &r, double x, double y) {
    put(m_out, "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" fill=\"{}\"/>\n", x, y, r.colour);
    m_labels.occupy({x - 4, y - 4, x + 4, y + 4});
    const std::string text = fmt::format("ridge {} FLOP/B", significant(r.ridge));
    const double w = text_width(text, 11);
    // Nearest first; further down for ridges that sit close together (one GPU's at several
    // precisions, or GPUs of near ridges).
    std::vector<std::pair<double, double>> around{
        {x + 7, y + 16}, {x + 7, y - 7}, {x - w - 7, y + 16}, {x - w - 7, y - 7}};
    for (double below = 30; below <= 86; below += 14) {
      around.emplace_back(x + 7, y + below);
      around.emplace_back(x - w - 7, y + below);
    }
    const auto at = m_labels.place(text, 11, around).value_or(around.front());
    put(m_out,
        "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" fill=\"{}\" "
        "class=\"ridge\">{}</text>\n",
        at.first, at.second, r.colour, escape_xml(text));
  }

  /// Slope labels along their line, ending short of where it meets its highest roof (points
  /// gather lower down), slid down the line until they overlap nothing.
  void slope_labels() {
    const plot_frame &f = m_frame;
    const double decade_x = f.width / (m_chart.x.high - m_chart.x.low),
                 decade_y = f.height / (m_chart.y.high - m_chart.y.low);
    const double angle = std::atan(decade_y / decade_x);
    for (const chart_slope &s : m_chart.slopes) {
      if (!s.labelled)
        continue;
      const double top_rate = top_roof(m_chart, s.gpu);
      const double end_x = std::min(f.x_of(top_rate / s.bytes_per_s), m_right) - 24;
      const double w = text_width(s.label, 11);
      for (double start = end_x - w * std::cos(angle); start > f.left; start -= 30) {
        const double intensity = std::pow(10.0, m_chart.x.low + (start - f.left) / decade_x);
        const double x = start, y = f.y_of(s.bytes_per_s * intensity) - 5;
        const box b{x, y - w * std::sin(angle) - 11, x + w * std::cos(angle), y + 2};
        if (b.y0 < f.top || b.y1 > m_bottom || !m_labels.take(b))
          continue;
        put(m_out,
            "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" fill=\"{}\" "
            "transform=\"rotate({:.1f} {:.1f} {:.1f})\">{}</text>\n",
            x, y, s.colour, -angle * 180 / 3.14159265358979, x, y, escape_xml(s.label));
        break;
      }
    }
  }

  /// Links between points, drawn under them.
  void links() {
    for (const std::vector<std::size_t> &link : m_chart.links) {
      std::string path;
      for (std::size_t i : link)
        path += fmt::format("{}{:.1f} {:.1f}", path.empty() ? "M" : " L",
                            m_frame.x_of(m_chart.points[i].intensity),
                            m_frame.y_of(m_chart.points[i].flop_per_s));
      put(m_out, "<path d=\"{}\" fill=\"none\" stroke=\"#999999\" stroke-width=\"1\"/>\n", path);
    }
  }

  /// Points, the largest first so that small ones stay visible on top; a measured point beside
  /// its predicted one, joined by a line.
  void points() {
    for (std::size_t i : m_order) {
      const chart_point &p = m_chart.points[i];
      const double r = radius_of(p.share, m_largest);
      const double x = m_frame.x_of(p.intensity), y = m_frame.y_of(p.flop_per_s);
      const std::string title =
          fmt::format("<title>{}: {} FLOP/B, {}FLOP/s, {} of the step</title>", escape_xml(p.label),
                      significant(p.intensity), si(p.flop_per_s), percent(p.share));
      if (p.measured_flop_per_s) {
        const double mx = m_frame.x_of(p.measured_intensity.value_or(p.intensity)),
                     my = m_frame.y_of(*p.measured_flop_per_s);
        put(m_out,
            "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" "
            "stroke-width=\"1.2\"/>\n",
            x, y, mx, my, p.colour);
        put(m_out,
            "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{:.1f}\" fill=\"{}\" fill-opacity=\"0.85\" "
            "class=\"measured\"/>\n",
            mx, my, r, p.colour);
      }
      if (p.launch_bound)
        put(m_out,
            "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"#ffffff\" "
            "fill-opacity=\"0.6\" stroke=\"{}\" stroke-width=\"1.6\" stroke-dasharray=\"3 2\" "
            "transform=\"rotate(45 {:.1f} {:.1f})\" class=\"op launch-bound\">{}</rect>\n",
            x - r * 0.8, y - r * 0.8, 1.6 * r, 1.6 * r, p.colour, x, y, title);
      else
        put(m_out,
            "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{:.1f}\" fill=\"#ffffff\" "
            "fill-opacity=\"0.6\" stroke=\"{}\" stroke-width=\"1.8\" class=\"op\">{}</circle>\n",
            x, y, r, p.colour, title);
    }
  }

  /// The labelled points' labels, each where it overlaps nothing; none where nothing is free.
  void point_labels() {
    for (std::size_t i : m_order) {
      const chart_point &p = m_chart.points[i];
      if (!p.labelled)
        continue;
      const double r = radius_of(p.share, m_largest);
      const double x = m_frame.x_of(p.intensity), y = m_frame.y_of(p.flop_per_s);
      const double w = text_width(p.label, 11);
      if (const auto at = m_labels.place(p.label, 11,
                                         {{x + r + 4, y + 4},
                                          {x - r - 4 - w, y + 4},
                                          {x - w / 2, y - r - 4},
                                          {x - w / 2, y + r + 13},
                                          {x + r + 4, y - r - 2},
                                          {x + r + 4, y + r + 11}}))
        put(m_out,
            "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" fill=\"#222222\" "
            "class=\"label\">{}</text>\n",
            at->first, at->second, escape_xml(p.label));
    }
  }

  /// Legend: top left, where no op can be (above the memory roof).
  void legend() {
    const plot_frame &f = m_frame;
    double ly = f.top + 16;
    if (!m_chart.legend.empty())
      put(m_out,
          "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"#ffffff\" "
          "fill-opacity=\"0.9\" stroke=\"#cccccc\"/>\n",
          f.left + 8, f.top + 6, m_legend_width, m_legend_height);
    for (const legend_entry &e : m_chart.legend) {
      legend_mark(e, f.left + 20, ly);
      put(m_out, "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\">{}</text>\n", f.left + 20 + 14,
          ly, escape_xml(e.label));
      ly += 18;
    }
  }

  /// The mark of legend entry `e`, centred at x, 4 px above the baseline `ly`.
  void legend_mark(const legend_entry &e, double x, double ly) {
    switch (e.shape) {
    case legend_entry::mark::point:
      put(m_out, "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"5\" fill=\"{}\"/>\n", x, ly - 4,
          e.colour);
      break;
    case legend_entry::mark::hollow_point:
      put(m_out,
          "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"5\" fill=\"#ffffff\" stroke=\"{}\" "
          "stroke-width=\"1.8\"/>\n",
          x, ly - 4, e.colour);
      break;
    case legend_entry::mark::launch_bound:
      put(m_out,
          "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"8\" height=\"8\" fill=\"#ffffff\" "
          "stroke=\"{}\" stroke-width=\"1.6\" stroke-dasharray=\"3 2\" transform=\"rotate(45 "
          "{:.1f} {:.1f})\"/>\n",
          x - 4, ly - 8, e.colour, x, ly - 4);
      break;
    case legend_entry::mark::line:
      put(m_out,
          "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" "
          "stroke-width=\"2\"/>\n",
          x - 8, ly - 4, x + 8, ly - 4, e.colour);
      break;
    }
  }

  /// The notes under the plot (note_lines).
  void notes() {
    double ny = m_bottom + first_note_below_plot;
    for (const std::string &line : note_lines(m_chart)) {
      put(m_out, "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" fill=\"#555555\">{}</text>\n",
          m_frame.left, ny, escape_xml(line));
      ny += note_line_step;
    }
  }

  const chart &m_chart;
  const plot_frame m_frame;
  const double m_right, m_bottom;
  label_placer m_labels;
  double m_largest = 0;
  double m_legend_width = 0, m_legend_height = 0;
  std::vector<std::size_t> m_order; ///< the points, largest first
  std::string m_out;
};

} // namespace

double svg_height_of(const chart &c) {
  const std::size_t lines = note_lines(c).size();
  if (lines == 0)
    return svg_height;
  const plot_frame f = frame_of(c);
  const double last_note =
      f.top + f.height + first_note_below_plot + note_line_step * static_cast<double>(lines - 1);
  return std::max(svg_height, std::ceil(last_note + note_descent));
}

std::string render_svg(const chart &c) {
  return svg_painter(c).paint();
}

} // namespace roofline::detail
