// SPDX-License-Identifier: Apache-2.0
#include "chart.hpp"

#include "json_writer.hpp"
#include "roofline/analysis/report.hpp"
#include "roofline/compare/comparison.hpp"
#include "roofline/model/gemm_model.hpp"
#include "roofline/output/output_format.hpp"
#include "text_table.hpp"
#include "utf8.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

namespace roofline::detail {

namespace {

// Okabe & Ito's palette: told apart with every common colour-vision deficiency.
constexpr const char *blue = "#0072B2";
constexpr const char *orange = "#E69F00";
constexpr const char *vermillion = "#D55E00";
constexpr const char *green = "#009E73";
constexpr const char *purple = "#CC79A7";
constexpr const char *sky = "#56B4E9";
constexpr const char *ink = "#222222";
constexpr const char *gpu_colours[] = {blue, vermillion, green, purple, orange, sky, ink};

constexpr std::size_t labelled_points = 6; ///< the largest shares get their names drawn

/// The flat roofs of the units `ops` run on, precisions of one peak joined ("fp16/bf16 tensor");
/// dashed 2:4-sparse roofs beside them when `sparse`.
std::vector<chart_roof> roofs_of(const gpu_spec &gpu, const std::set<precision> &units, bool sparse,
                                 const std::string &colour, const std::string &prefix,
                                 std::size_t index) {
  std::map<double, std::vector<precision>, std::greater<>> by_peak;
  for (precision p : units)
    if (gpu.supports(p))
      by_peak[gpu.peak_flop_per_s(p)].push_back(p);
  std::vector<chart_roof> roofs;
  for (const auto &[peak, precisions] : by_peak) {
    std::string names;
    for (precision p : precisions)
      names += (names.empty() ? "" : "/") + std::string(to_string(p));
    const std::string unit = runs_on_tensor_cores(precisions.front()) ? " tensor" : "";
    roofs.push_back({fmt::format("{}{}{} {}FLOP/s", prefix, names, unit, si(peak)), peak,
                     gpu.ridge_intensity(precisions.front()), colour, false, true, index});
    if (sparse && gpu.peaks.at(precisions.front()).sparse_flop_per_s) {
      const double sparse_peak = gpu.peak_flop_per_s(precisions.front(), true);
      roofs.push_back(
          {fmt::format("{}{}{} 2:4 sparse {}FLOP/s", prefix, names, unit, si(sparse_peak)),
           sparse_peak, gpu.ridge_intensity(precisions.front(), true), colour, true, true, index});
    }
  }
  return roofs;
}

/// DRAM as the analysis used it (measured where ceilings were), the datasheet's beside it when
/// they differ, and L2 as the GEMM model sees it.
std::vector<chart_slope> slopes_of(const gpu_spec &gpu, const model_parameters &parameters,
                                   const std::string &colour, const std::string &prefix,
                                   std::size_t index, bool with_l2) {
  std::vector<chart_slope> slopes;
  slopes.push_back({fmt::format("{}DRAM {}B/s{}", prefix, si(gpu.dram_bytes_per_s),
                                gpu.paper ? " measured" : ""),
                    gpu.dram_bytes_per_s, colour, false, index});
  if (gpu.paper && gpu.paper->dram_bytes_per_s != gpu.dram_bytes_per_s)
    slopes.push_back(
        {fmt::format("{}DRAM {}B/s datasheet", prefix, si(gpu.paper->dram_bytes_per_s)),
         gpu.paper->dram_bytes_per_s, colour, true, index});
  if (with_l2) {
    const double l2 = l2_bytes_per_s(model_basis(gpu), parameters);
    slopes.push_back(
        {fmt::format("{}L2 {}B/s (GEMM model)", prefix, si(l2)), l2, sky, true, index});
  }
  return slopes;
}

/// Ops that are the same work (kind, shape, precision, pass, FLOPs and bytes) as one point: their
/// shares summed, named by the first.
struct distinct_op {
  std::size_t first = 0; ///< index into the analysis's ops
  std::size_t layers = 0;
  double share = 0;
};

std::vector<distinct_op> distinct_ops(const analysis &a) {
  std::map<std::tuple<std::string, int, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                      std::int64_t, int, std::int64_t, std::int64_t>,
           std::size_t>
      index;
  std::vector<distinct_op> result;
  for (std::size_t i = 0; i < a.ops.size(); ++i) {
    const op &o = a.ops[i].op;
    const gemm_shape s = o.gemm.value_or(gemm_shape{0, 0, 0, 0});
    const auto [found, added] =
        index.try_emplace({o.kind, static_cast<int>(o.precision), s.m, s.n, s.k, s.batch_count,
                           o.elements, static_cast<int>(o.pass), o.flops, o.bytes},
                          result.size());
    if (added)
      result.push_back({i, 0, 0});
    distinct_op &d = result[found->second];
    ++d.layers;
    d.share += a.ops[i].time_share;
  }
  return result;
}

std::string point_label(const op &o, std::size_t layers) {
  std::string label = o.layer;
  if (o.pass != pass::forward)
    label += " (" + std::string(to_string(o.pass)) + ")";
  if (layers > 1)
    label += fmt::format(" ×{}", layers);
  return label;
}

/// Whether a point can be drawn on log axes; counted in a note where not.
/// An op of a comparison drawn at its time on one GPU (`gpu`, its colour), sized by `share`.
chart_point compared_point(const op &o, std::size_t layers, const gpu_result &gpu,
                           std::size_t index, double share, std::size_t colour) {
  chart_point point;
  point.label = point_label(o, layers);
  point.intensity = o.arithmetic_intensity();
  point.flop_per_s = static_cast<double>(o.flops) / gpu.op_times_s[index];
  point.share = share;
  point.colour = gpu_colour(colour);
  point.launch_bound = gpu.analysis.ops[index].prediction.launch_bound;
  return point;
}

bool drawable(double intensity, double flop_per_s) {
  return intensity > 0 && flop_per_s > 0 && std::isfinite(intensity) && std::isfinite(flop_per_s);
}

/// The note for the ops drawable() left out, if any.
void note_undrawn(chart &c, std::size_t undrawn) {
  if (undrawn > 0)
    c.notes.push_back(fmt::format("{} op{} with no FLOPs or no time not drawn (log axes)", undrawn,
                                  undrawn == 1 ? "" : "s"));
}

/// Labels the points of `candidates` (indices into the chart's points) with the largest shares.
void label_largest(chart &c, std::vector<std::size_t> candidates) {
  std::stable_sort(candidates.begin(), candidates.end(), [&](std::size_t a, std::size_t b) {
    return c.points[a].share > c.points[b].share;
  });
  for (std::size_t i = 0; i < candidates.size() && i < labelled_points; ++i)
    c.points[candidates[i]].labelled = c.points[candidates[i]].share > 0;
}

/// Whole decades around every point, roof and ridge, at least three wide on each axis.
void fit_axes(chart &c) {
  double x_low = INFINITY, x_high = 0, y_low = INFINITY, y_high = 0;
  const auto take = [&](double x, double y) {
    x_low = std::min(x_low, x);
    x_high = std::max(x_high, x);
    y_low = std::min(y_low, y);
    y_high = std::max(y_high, y);
  };
  for (const chart_point &p : c.points) {
    take(p.intensity, p.flop_per_s);
    if (p.measured_flop_per_s)
      take(p.measured_intensity.value_or(p.intensity), *p.measured_flop_per_s);
  }
  for (const chart_roof &r : c.roofs)
    take(r.ridge, r.flop_per_s);
  if (!(x_high > 0)) { // nothing to place: one decade either side of 1 FLOP/B, 1 TFLOP/s
    x_low = 0.1, x_high = 10, y_low = 1e11, y_high = 1e13;
  }
  c.x.low = static_cast<int>(std::floor(std::log10(x_low)));
  // A decade right of the largest ridge, so that its flat roof shows.
  c.x.high = static_cast<int>(std::ceil(std::log10(x_high))) + 1;
  c.y.low = static_cast<int>(std::floor(std::log10(y_low)));
  c.y.high = static_cast<int>(std::ceil(std::log10(y_high * 1.5)));
  if (c.x.high - c.x.low < 3)
    c.x.low = c.x.high - 3;
  if (c.y.high - c.y.low < 3)
    c.y.low = c.y.high - 3;
}

} // namespace

chart roofline_chart(const report &r) {
  const analysis &a = r.analysis;
  const gpu_spec &gpu = a.model.spec();
  chart c;
  c.title = fmt::format("{} on {}", a.network.name, gpu.display_name);
  c.subtitle = fmt::format("{}, batch {}, {} · {}", to_string(a.network.precision), a.network.batch,
                           step_tokens(a.network), a.device_selection);

  std::set<precision> units;
  for (const analysed_op &entry : a.ops)
    units.insert(entry.op.unit());
  c.roofs = roofs_of(gpu, units, a.model.options().sparse, ink, "", 0);
  c.slopes = slopes_of(gpu, a.model.parameters(), ink, "", 0, true);

  std::size_t undrawn = 0;
  bool any_gemm = false, any_attention = false, any_memory = false, any_launch = false,
       any_measured = false;
  double main_share = -1;
  for (const distinct_op &d : distinct_ops(a)) {
    const analysed_op &entry = a.ops[d.first];
    const op &o = entry.op;
    const prediction &p = entry.prediction;
    chart_point point;
    point.label = point_label(o, d.layers);
    point.intensity = o.arithmetic_intensity();
    point.flop_per_s = p.flop_per_s;
    point.share = d.share;
    point.launch_bound = p.launch_bound;
    point.colour = p.launch_bound           ? purple
                   : o.is_gemm()            ? blue
                   : o.is_fused_attention() ? green
                                            : orange;
    if (!drawable(point.intensity, point.flop_per_s)) {
      ++undrawn;
      continue;
    }
    if (const measurement *m = r.measured_op(d.first);
        m && m->status == measurement_status::measured) {
      point.measured_flop_per_s = achieved_flop_per_s(o, *m);
      point.measured_intensity = measured_intensity(o, *m);
      any_measured = any_measured || drawable(point.measured_intensity.value_or(point.intensity),
                                              *point.measured_flop_per_s);
      if (!drawable(point.measured_intensity.value_or(point.intensity), *point.measured_flop_per_s))
        point.measured_flop_per_s.reset();
    }
    any_gemm = any_gemm || (o.is_gemm() && !p.launch_bound);
    any_attention = any_attention || (o.is_fused_attention() && !p.launch_bound);
    any_memory = any_memory || (!o.is_gemm() && !o.is_fused_attention() && !p.launch_bound);
    any_launch = any_launch || p.launch_bound;
    // The regions split at the ridge of the roof that holds most of the step's time.
    if (d.share > main_share) {
      main_share = d.share;
      c.region_ridge = gpu.ridge_intensity(o.unit(), a.model.options().sparse && o.is_gemm());
    }
    c.points.push_back(std::move(point));
  }
  std::vector<std::size_t> every_point(c.points.size());
  for (std::size_t i = 0; i < every_point.size(); ++i)
    every_point[i] = i;
  label_largest(c, std::move(every_point));
  fit_axes(c);

  if (any_gemm)
    c.legend.push_back({"GEMM", blue, legend_entry::mark::hollow_point});
  if (any_attention)
    c.legend.push_back({"fused attention", green, legend_entry::mark::hollow_point});
  if (any_memory)
    c.legend.push_back({"memory op (held against fp32)", orange, legend_entry::mark::hollow_point});
  if (any_launch)
    c.legend.push_back({"launch-bound: the host's per-call floor, no roof, sets its time", purple,
                        legend_entry::mark::launch_bound});
  if (any_measured)
    c.legend.push_back(
        {"measured (filled), joined to its prediction", ink, legend_entry::mark::point});
  c.notes.push_back("point area: share of the step's predicted time; hollow: predicted");
  if (any_measured)
    c.notes.push_back("measured: FLOPs over the eager time, at the intensity the DRAM counters saw "
                      "(operands served from L2 move a point right of its prediction)");
  note_undrawn(c, undrawn);
  return c;
}

namespace {

/// Each compared GPU's roofs and bandwidth slope, in its setup's colour, with its legend line;
/// a GPU at another tensor-parallel degree drawn once, its later setups' points named after it.
void add_compared_roofs(chart &c, const comparison &first, const std::set<precision> &units) {
  std::vector<std::string> named_roof;       ///< each roof's label before GPU names joined it
  std::map<std::string, std::size_t> roofed; ///< each GPU's spec: the first setup that drew it
  for (std::size_t g = 0; g < first.gpus.size(); ++g) {
    const gpu_result &gpu = first.gpus[g];
    const std::string colour = gpu_colour(g);
    const std::string shards =
        gpu.tensor_parallel > 1 ? fmt::format(" ×{} (tensor parallel)", gpu.tensor_parallel) : "";
    // The same GPU at another tensor-parallel degree has the same roofs: drawn once, in the
    // colour of its first setup; the legend names this setup's points.
    const gpu_spec &spec = gpu.analysis.model.spec();
    if (const auto [drawn, fresh] = roofed.emplace(spec.name, g); !fresh) {
      c.legend.push_back({fmt::format("{}{} · points; its roofs drawn as {}'s", spec.display_name,
                                      shards, first.gpus[drawn->second].name),
                          colour, legend_entry::mark::point});
      continue;
    }
    const std::string prefix = spec.name + " ";
    std::string peaks; // the legend names every roof: the chart has room for only some labels
    for (chart_roof &roof : roofs_of(gpu.analysis.model.spec(), units,
                                     gpu.analysis.model.options().sparse, colour, "", g)) {
      peaks += (peaks.empty() ? "" : ", ") + roof.label;
      // GPUs of the same peak share a roof's height: one label names them all.
      const auto same = std::find_if(c.roofs.begin(), c.roofs.end(), [&](const chart_roof &r) {
        return r.flop_per_s == roof.flop_per_s && r.dashed == roof.dashed &&
               named_roof.at(&r - c.roofs.data()) == roof.label;
      });
      named_roof.push_back(roof.label);
      if (same == c.roofs.end()) {
        roof.label = prefix + roof.label;
      } else {
        same->label = spec.name + ", " + same->label;
        roof.label.clear();
      }
      c.roofs.push_back(std::move(roof));
    }
    c.slopes.push_back(slopes_of(gpu.analysis.model.spec(), gpu.analysis.model.parameters(), colour,
                                 prefix, g, false)
                           .front());
    c.slopes.back().labelled = false; // the legend names each GPU's bandwidth
    c.legend.push_back(
        {fmt::format("{}{} · DRAM {}B/s · {}", gpu.analysis.model.spec().display_name, shards,
                     si(gpu.analysis.model.spec().dram_bytes_per_s), peaks),
         colour, legend_entry::mark::line});
  }
}

/// Every batch's points, each op joined across the GPUs at its batch; labels are the first
/// batch's (the others' ops are the same layers). Returns the ops of the first batch's baseline
/// not drawn, and `baseline_points`, those drawn.
std::size_t add_compared_points(chart &c, const std::vector<comparison> &comparisons,
                                const std::vector<distinct_op> &ops,
                                std::vector<std::size_t> &baseline_points) {
  const comparison &first = comparisons.front();
  std::size_t undrawn = 0;
  for (const comparison &at : comparisons) {
    const bool labelled = &at == &first;
    const gpu_result &at_base = at.gpus.front();
    for (const distinct_op &d : labelled ? ops : distinct_ops(at_base.analysis)) {
      const op &o = at_base.analysis.ops[d.first].op;
      std::vector<std::size_t> link;
      for (std::size_t g = 0; g < at.gpus.size(); ++g) {
        const gpu_result &gpu = at.gpus[g];
        if (gpu.op_speedups.empty())
          continue; // another set of ops (sharded otherwise): drawn on its own below
        // The baseline's share: one size per op across GPUs.
        chart_point point = compared_point(o, d.layers, gpu, d.first, d.share, g);
        if (!drawable(point.intensity, point.flop_per_s)) {
          undrawn += g == 0 && labelled ? 1 : 0;
          continue;
        }
        if (g == 0 && labelled)
          baseline_points.push_back(c.points.size());
        link.push_back(c.points.size());
        c.points.push_back(std::move(point));
      }
      if (link.size() > 1)
        c.links.push_back(std::move(link));
    }
    // A side sharded otherwise runs other ops: its own points, joined to nothing.
    for (std::size_t g = 1; g < at.gpus.size(); ++g) {
      const gpu_result &gpu = at.gpus[g];
      if (!gpu.op_speedups.empty())
        continue;
      for (const distinct_op &d : distinct_ops(gpu.analysis)) {
        chart_point point =
            compared_point(gpu.analysis.ops[d.first].op, d.layers, gpu, d.first, d.share, g);
        if (drawable(point.intensity, point.flop_per_s))
          c.points.push_back(std::move(point));
      }
    }
  }
  return undrawn;
}

} // namespace

chart comparison_chart(const std::vector<comparison> &comparisons) {
  chart c;
  if (comparisons.empty())
    return c;
  const comparison &first = comparisons.front();
  const gpu_result &base = first.gpus.front();
  const bool sharded_apart = std::any_of(first.gpus.begin(), first.gpus.end(),
                                         [](const gpu_result &g) { return g.op_speedups.empty(); });
  c.title = fmt::format("{} on {} {}", first.network_name, first.gpus.size(),
                        sharded_apart ? "setups" : "GPUs");
  std::string batches;
  for (const comparison &at : comparisons)
    batches += (batches.empty() ? "" : ", ") + std::to_string(at.batch);
  // An image model has no tokens to name (comparison::unit).
  c.subtitle = fmt::format(
      "batch{} {}{} · each op at its time on each GPU, joined", comparisons.size() > 1 ? "es" : "",
      batches, first.unit == throughput_unit::tokens ? ", " + first.tokens : std::string{});
  std::set<precision> units;
  for (const analysed_op &entry : base.analysis.ops)
    units.insert(entry.op.unit());
  const std::vector<distinct_op> ops = distinct_ops(base.analysis);
  add_compared_roofs(c, first, units);
  std::vector<std::size_t> baseline_points;
  const std::size_t undrawn = add_compared_points(c, comparisons, ops, baseline_points);
  label_largest(c, std::move(baseline_points)); // once per op, at the baseline's point
  // Ridges labelled for the first roof of each GPU only: the rest would crowd the chart.
  std::set<std::size_t> ridge_labelled;
  for (chart_roof &roof : c.roofs)
    roof.ridge_label = !roof.dashed && ridge_labelled.insert(roof.gpu).second;
  fit_axes(c);
  c.notes.push_back("point area: share of the baseline's step time; an op's points share its "
                    "intensity, so only its height moves: with bandwidth (left of a ridge) or "
                    "with compute (right)");
  if (sharded_apart)
    c.notes.push_back("a setup sharded over another number of GPUs runs other shapes: its points "
                      "(one GPU's ops) stand alone, sized by its own step");
  if (comparisons.size() > 1)
    c.notes.push_back(fmt::format("every batch ({}) drawn, each sized by its own step: an op's "
                                  "points move right as its batch grows its intensity; labels are "
                                  "batch {}'s",
                                  batches, first.batch));
  note_undrawn(c, undrawn);
  return c;
}

// ------------------------------------------------------------------ SVG

std::string si(double value) {
  static constexpr std::pair<double, const char *> prefixes[] = {
      {1e18, "E"}, {1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}};
  for (const auto &[scale, prefix] : prefixes)
    if (std::fabs(value) >= scale)
      return significant(value / scale) + " " + prefix;
  return significant(value) + " ";
}

std::string escape_xml(const std::string &text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const char ch = text[i];
    if (static_cast<unsigned char>(ch) >= 0x80) {
      // Only well-formed UTF-8 in a document that declares it; a stray byte as U+FFFD. C1 and
      // bidirectional-text controls shown as the terminal shows them (printable_text).
      const std::size_t length = utf8_sequence(std::string_view(text).substr(i));
      // U+FFFE and U+FFFF are not XML characters at all: shown as their escapes.
      const std::string sequence = text.substr(i, length);
      const std::uint32_t code = length == 0 ? 0 : utf8_code_point(sequence, length);
      if (length == 0)
        out += "\xEF\xBF\xBD";
      else if (code == 0xFFFE || code == 0xFFFF)
        out += fmt::format("\\u{:04x}", code);
      else
        out += printable_text(sequence);
      i += std::max<std::size_t>(length, 1);
      continue;
    }
    switch (ch) {
    case '&': out += "&amp;"; break;
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '"': out += "&quot;"; break;
    default:
      // Control characters are not allowed in XML 1.0 text (DEL is, but shows nothing):
      // escaped as on a terminal; tabs and line breaks are white space.
      if ((static_cast<unsigned char>(ch) < 0x20 || ch == 0x7F) && ch != '\t' && ch != '\n')
        out += control_escape(static_cast<unsigned char>(ch));
      else
        out += ch;
    }
    ++i;
  }
  return out;
}

std::string decade_text(int power) {
  if (power < 0)
    return fmt::format("{:.{}f}", std::pow(10.0, power), -power);
  static constexpr const char *prefixes[] = {"", " k", " M", " G", " T", " P", " E", " Z"};
  const int group = std::min(power / 3, static_cast<int>(std::size(prefixes)) - 1);
  return fmt::format("{:.0f}{}", std::pow(10.0, power - 3 * group), prefixes[group]);
}

void svg_open(std::string &out, double height, const std::string &title) {
  put(out,
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} "
      "{1}\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" font-size=\"12\" "
      "role=\"img\">\n",
      svg_width, height);
  put(out, "<title>{}</title>\n", escape_xml(title));
  put(out, "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n");
}

void svg_heading(std::string &out, double left, const std::string &title,
                 const std::string &subtitle) {
  put(out, "<text x=\"{:.1f}\" y=\"24\" font-size=\"16\" font-weight=\"bold\">{}</text>\n", left,
      escape_xml(title));
  put(out, "<text x=\"{:.1f}\" y=\"43\" fill=\"#555555\">{}</text>\n", left, escape_xml(subtitle));
}

void svg_log_axes(std::string &out, const plot_frame &f,
                  const std::function<std::string(int)> &x_tick,
                  const std::function<std::string(int)> &y_tick, const std::string &x_title,
                  const std::string &y_title) {
  const double right = f.left + f.width, bottom = f.top + f.height;
  for (int p = f.x.low; p <= f.x.high; ++p) {
    const double x = f.x_of(std::pow(10.0, p));
    put(out,
        "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" "
        "stroke=\"#dddddd\"/>\n",
        x, f.top, bottom);
    put(out, "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" fill=\"#333333\">{}</text>\n",
        x, bottom + 17, escape_xml(x_tick(p)));
  }
  for (int p = f.y.low; p <= f.y.high; ++p) {
    const double y = f.y_of(std::pow(10.0, p));
    put(out,
        "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{2:.1f}\" y2=\"{1:.1f}\" "
        "stroke=\"#dddddd\"/>\n",
        f.left, y, right);
    put(out, "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\" fill=\"#333333\">{}</text>\n",
        f.left - 6, y + 4, escape_xml(y_tick(p)));
  }
  put(out,
      "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"none\" "
      "stroke=\"#888888\"/>\n",
      f.left, f.top, f.width, f.height);
  put(out, "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n",
      f.left + f.width / 2, bottom + 36, escape_xml(x_title));
  put(out,
      "<text transform=\"translate(18 {:.1f}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n",
      f.top + f.height / 2, escape_xml(y_title));
}

const char *gpu_colour(std::size_t i) {
  return gpu_colours[i % std::size(gpu_colours)];
}

double plot_frame::x_of(double intensity) const {
  return left + (std::log10(intensity) - x.low) / (x.high - x.low) * width;
}

double plot_frame::y_of(double flop_per_s) const {
  return top + height - (std::log10(flop_per_s) - y.low) / (y.high - y.low) * height;
}

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
    put(m_out, "</g>\n");
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
