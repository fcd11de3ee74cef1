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
/// they differ, and L2 (the GEMM model's rate, the roof of memory-bound ops a step leaves in L2).
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
    slopes.push_back({fmt::format("{}L2 {}B/s", prefix, si(l2)), l2, sky, true, index});
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

/// The power roof of `unit` where `a` is sustained under a known limit that lowers its roofs
/// somewhere on the chart; none otherwise.
std::optional<chart_power_roof> power_roof_of(const analysis &a, precision unit) {
  const gpu_spec &gpu = a.model.spec();
  const power_budget &b = a.budget;
  if (a.power.regime != clock_regime::sustained || !(b.cap_w > b.idle_w) ||
      gpu.peaks.find(unit) == gpu.peaks.end())
    return std::nullopt;
  chart_power_roof r;
  r.headroom_w = b.cap_w - b.idle_w;
  r.joules_per_flop = energy_per_flop_j(unit, gpu, a.model.parameters());
  r.joules_per_byte = energy_per_dram_byte_j(gpu, a.model.parameters());
  r.peak_flop_per_s = gpu.peak_flop_per_s(unit);
  r.bytes_per_s = gpu.dram_bytes_per_s;
  r.colour = vermillion;
  r.label = fmt::format("{:g} W power limit ({})", b.cap_w, to_string(unit));
  // The limit's rate rises with the intensity and each roof's falls or stays, relative to it, away
  // from the ridge: it binds somewhere exactly where it binds at the ridge.
  const double ridge = r.peak_flop_per_s / r.bytes_per_s;
  if (!(r.joules_per_flop > 0) || r.flop_per_s(ridge) >= r.peak_flop_per_s)
    return std::nullopt;
  return r;
}

/// Leaves out the chart's regions where they would put an op in the region the table does not
/// (an op of another unit, whose roof has another ridge): the table's bound is the answer.
/// `bounds`: each point's intensity and its bound in the table.
void keep_regions_that_agree(chart &c, const std::vector<std::pair<double, bound>> &bounds) {
  const auto disagrees = [&](const std::pair<double, bound> &b) {
    return (b.first < *c.region_ridge) != (b.second == bound::memory);
  };
  if (c.region_ridge && std::any_of(bounds.begin(), bounds.end(), disagrees)) {
    c.region_ridge.reset();
    c.notes.push_back("no memory- and compute-bound regions: the ops are held against roofs of "
                      "different ridges (each op's bound is its own roof's, as the table says)");
  }
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
  std::vector<std::pair<double, bound>> bounds; // each point's intensity and the table's bound
  std::optional<precision> main_unit;           // the unit of the op with the most time
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
    // The regions split at the ridge of the roof that holds most of the step's time, as the
    // table placed that op.
    if (d.share > main_share) {
      main_share = d.share;
      c.region_ridge = p.ridge_intensity;
      main_unit = o.unit();
    }
    bounds.push_back({point.intensity, p.bound});
    c.points.push_back(std::move(point));
  }
  keep_regions_that_agree(c, bounds);
  if (main_unit)
    c.power_roof = power_roof_of(a, *main_unit);
  if (c.power_roof)
    c.notes.push_back("dotted: the power roof, what the power limit lets the main unit sustain at "
                      "each intensity (its energy per FLOP and per DRAM byte over the limit)");
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

const char *gpu_colour(std::size_t i) {
  return gpu_colours[i % std::size(gpu_colours)];
}

} // namespace roofline::detail
