// SPDX-License-Identifier: Apache-2.0
#include "document.hpp"
#include "json_fields.hpp"
#include "roofline/analysis/advice_thresholds.hpp"
#include "roofline/analysis/report.hpp"
#include "roofline/output/writers.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>

namespace roofline {

namespace {

using detail::align;
using detail::cell;
using detail::column;
using detail::device_json;
using detail::document;
using detail::json_writer;
using detail::range_us_json;
using detail::text_document;
using detail::text_table;
using detail::tone;
using detail::write_document;
using nlohmann::json;

using detail::duration;
using detail::duration_range;
using detail::gigabytes;
using detail::percent;
using detail::raw;
using detail::significant;

std::string raw(std::int64_t value) {
  return std::to_string(value);
}

// ------------------------------------------------------------------ the analysis as a table

/// The clock the peak of `p` is held at: "boost clock" (the datasheet's), "sustained 900 MHz
/// under its 70 W limit" for a power-capped card, or "measured" for a peak measured on the GPU.
std::string clock_phrase(const gpu_spec &d, precision p) {
  if (d.peaks.at(p).measured)
    return "measured";
  if (!d.sustained_clock_hz)
    return "boost clock";
  std::string text = fmt::format("sustained {:.0f} MHz", *d.sustained_clock_hz / 1e6);
  if (d.tdp_w > 0)
    text += fmt::format(" under its {:g} W limit", d.tdp_w);
  return text;
}

/// One line on the GPU and how it was chosen, one on the roof the network's precision meets.
std::vector<std::string> header_lines(const analysis &r) {
  const gpu_spec &d = r.model.spec();
  const network &net = r.network;
  const bool sparse_asked = r.model.options().sparse;
  std::vector<std::string> lines;
  lines.push_back(
      fmt::format("{} · {} ({}, {})", net.name, d.display_name, d.name, r.device_selection));
  std::string roof = fmt::format("DRAM {} GB/s", significant(d.dram_bytes_per_s / 1e9));
  if (d.supports(net.precision)) {
    const bool sparse = sparse_asked && d.peaks.at(net.precision).sparse_flop_per_s;
    roof =
        fmt::format("{} peak {} TFLOP/s {} at {} · {} · ridge {} FLOP/B", peak_name(net.precision),
                    significant(d.peak_flop_per_s(net.precision, sparse_asked) / 1e12, 4),
                    sparse ? "(2:4 sparse)" : "dense", clock_phrase(d, net.precision), roof,
                    significant(d.ridge_intensity(net.precision, sparse_asked)));
  }
  if (net.trace)
    lines.push_back(fmt::format("{} · {}, a captured program ({})", roof, to_string(net.mode),
                                net.trace->captured.empty() ? net.origin : net.trace->captured));
  else
    lines.push_back(fmt::format("{} · {}, batch {}, {}{}", roof, to_string(net.mode), net.batch,
                                step_tokens(net),
                                net.glue.empty() ? "" : ", " + net.glue + " glue"));
  return lines;
}

/// A GEMM dimension; memory-bound ops have none: "—" for people, an empty CSV field.
cell dims(const std::optional<gemm_shape> &gemm, std::int64_t gemm_shape::*field) {
  if (!gemm)
    return {"—", std::string{}, tone::dim};
  return {std::to_string((*gemm).*field)};
}

/// The GEMM model's view in a few words: "256×128, 1.30 waves, 8-byte rows, L2, launch-bound".
std::string model_summary(const prediction &p) {
  if (!p.gemm)
    return p.launch_bound ? "launch-bound" : "";
  const gemm_estimate &g = *p.gemm;
  std::string text =
      fmt::format("{}×{}{}, {:.2f} waves", g.tile_m, g.tile_n,
                  g.split_k > 1 ? fmt::format(" split-K {}", g.split_k) : std::string{}, g.waves);
  if (g.alignment_bytes < 16)
    text += fmt::format(", {}-byte rows", g.alignment_bytes);
  if (g.l2_resident)
    text += ", L2";
  if (p.launch_bound)
    text += ", launch-bound";
  return text;
}

text_table ops_table(const analysis &r) {
  // The key columns fit a terminal; the pass only where there is more than one.
  const bool passes =
      detail::beyond_forward(r.ops, [](const analysed_op &entry) { return entry.op.pass; });
  constexpr bool wide = true;
  text_table table;
  table.columns = {{"layer", "layer", align::left},
                   {"pass", "pass", align::left, !passes},
                   {"kind", "kind", align::left},
                   {"prec", "precision", align::left, wide},
                   {"M", "m"},
                   {"N", "n"},
                   {"K", "k"},
                   {"batch", "batch_count", align::right, wide},
                   {"runs", "count", align::right, wide},
                   {"GFLOP", "flops", align::right, wide},
                   {"MB", "bytes", align::right, wide},
                   {"FLOP/B", "arithmetic_intensity"},
                   {"ridge", "ridge_intensity", align::right, wide},
                   {"bound", "bound", align::left},
                   {"roofline", "roofline_time_us", align::right, wide},
                   {"device", "device_time_us", align::right, wide},
                   {"host floor", "host_floor_us", align::right, wide},
                   {"predicted", "predicted_time_us"},
                   {"TFLOP/s", "predicted_flop_per_s", align::right, wide},
                   {"share", "time_share"},
                   {"J/run", "energy_j", align::right, wide},
                   {"model", "model_summary", align::left, wide}};
  for (const analysed_op &entry : r.ops) {
    const op &o = entry.op;
    const prediction &p = entry.prediction;
    const bool memory = p.bound == bound::memory;
    table.rows.push_back({
        {o.layer},
        {std::string(to_string(o.pass))},
        {o.kind},
        {o.precision_label()},
        dims(o.gemm, &gemm_shape::m),
        dims(o.gemm, &gemm_shape::n),
        dims(o.gemm, &gemm_shape::k),
        dims(o.gemm, &gemm_shape::batch_count),
        {std::to_string(o.count)},
        {significant(static_cast<double>(o.flops) / 1e9), raw(o.flops)},
        {significant(static_cast<double>(o.bytes) / 1e6), raw(o.bytes)},
        o.is_collective()
            ? detail::cell{"—"}
            : detail::cell{significant(o.arithmetic_intensity()), raw(o.arithmetic_intensity())},
        o.is_collective()
            ? detail::cell{"—"}
            : detail::cell{significant(p.ridge_intensity) + (p.sparse_peak ? "*" : ""),
                           raw(p.ridge_intensity)},
        {std::string(to_string(p.bound)), {}, memory ? tone::warn : tone::good},
        {duration(p.roofline_time_s), raw(p.roofline_time_s * 1e6)},
        {duration(p.device_time_s), raw(p.device_time_s * 1e6)},
        {duration(p.host_floor_s), raw(p.host_floor_s * 1e6),
         p.launch_bound ? tone::warn : tone::dim},
        {duration_range(p.time_s, p.range.low_s, p.range.high_s), raw(p.time_s * 1e6)},
        {significant(p.flop_per_s / 1e12), raw(p.flop_per_s)},
        {percent(entry.time_share), raw(entry.time_share),
         entry.time_share < 0.01 ? tone::dim : tone::plain},
        {significant(entry.energy_j), raw(entry.energy_j)},
        {model_summary(p)},
    });
  }
  return table;
}

std::string optional_number(std::optional<double> value, double scale = 1) {
  return value ? significant(*value / scale) : std::string("—");
}

/// What running the ops showed, beside what the roofline predicted.
text_table measured_table(const report &r) {
  text_table table;
  table.columns = {{"layer", "layer", align::left},
                   {"pass", "pass", align::left},
                   {"engine", "engine", align::left},
                   {"status", "status", align::left},
                   {"predicted", "predicted_time_us"},
                   {"measured", "time_us"},
                   {"pred. device", "predicted_device_time_us"},
                   {"device", "device_time_us"},
                   {"kernels µs", "kernel_time_us"},
                   {"held", "held_time_us"},
                   {"pred. J", "predicted_energy_j"},
                   {"held J", "held_energy_j"},
                   {"spread", "spread"},
                   {"% roof", "roofline_fraction"},
                   {"TFLOP/s", "achieved_flop_per_s"},
                   {"DRAM MB", "dram_bytes"},
                   {"min MB", "min_bytes"},
                   {"FLOP/B", "measured_intensity"},
                   {"GB/s", "dram_bytes_per_s"},
                   {"error", "relative_error"},
                   {"kernels", "kernels", align::left}};
  for (std::size_t i = 0; i < r.analysis.ops.size(); ++i) {
    const measurement *measured = r.measured_op(i);
    if (!measured)
      continue;
    const analysed_op &entry = r.analysis.ops[i];
    const op &o = entry.op;
    const measurement &m = *measured;
    const bool ok = m.status == measurement_status::measured;
    const bool device = ok && m.device_time_s > 0;
    const bool held = ok && m.held;
    const auto dram = measured_dram_bytes(m);
    const auto dram_rate = measured_dram_bytes_per_s(m);
    std::string kernels;
    for (const std::string &name : m.kernels)
      kernels += (kernels.empty() ? "" : " + ") + name;
    const auto opt_raw = [](std::optional<double> v) { return v ? raw(*v) : std::string{}; };
    const double spread = eager_spread(m);
    table.rows.push_back({
        {o.layer},
        {std::string(to_string(o.pass))},
        {m.engine},
        // A measured op's note says what is missing (device time, counters).
        {ok ? (m.note.empty() ? std::string("ok") : "ok: " + m.note)
            : std::string(to_string(m.status)) + ": " + m.note,
         {},
         ok && m.note.empty() ? tone::plain : tone::warn},
        {duration(entry.prediction.time_s), raw(entry.prediction.time_s * 1e6)},
        {ok ? duration(m.time_s) : "—", ok ? raw(m.time_s * 1e6) : std::string{}},
        {duration(entry.prediction.device_time_s), raw(entry.prediction.device_time_s * 1e6)},
        {device ? duration(m.device_time_s) : "—",
         device ? raw(m.device_time_s * 1e6) : std::string{}},
        {ok && m.kernel_time_s > 0 ? duration(m.kernel_time_s) : "—",
         ok && m.kernel_time_s > 0 ? raw(m.kernel_time_s * 1e6) : std::string{}},
        {held ? duration(m.held->time_s) : "—", held ? raw(m.held->time_s * 1e6) : std::string{}},
        {significant(entry.energy_j), raw(entry.energy_j)},
        {held ? significant(m.held->energy_j) : "—", held ? raw(m.held->energy_j) : std::string{}},
        {ok ? percent(spread) : "—", ok ? raw(spread) : std::string{}},
        {ok ? percent(roofline_fraction(entry.prediction, m)) : "—",
         ok ? raw(roofline_fraction(entry.prediction, m)) : std::string{}},
        {ok ? significant(achieved_flop_per_s(o, m) / 1e12) : "—",
         ok ? raw(achieved_flop_per_s(o, m)) : std::string{}},
        {optional_number(dram, 1e6), opt_raw(dram)},
        {significant(static_cast<double>(o.bytes) / 1e6), raw(o.bytes)},
        {optional_number(measured_intensity(o, m)), opt_raw(measured_intensity(o, m))},
        {ok ? optional_number(dram_rate, 1e9) : "—", ok ? opt_raw(dram_rate) : std::string{}},
        {ok ? fmt::format("{:.1e}", m.relative_error) : "—",
         ok ? raw(m.relative_error) : std::string{}},
        {kernels.empty() ? "—" : kernels, kernels},
    });
  }
  return table;
}

/// One CSV row per op: the prediction's columns, then the measurement's (empty for unmeasured ops).
text_table with_measured_columns(const report &r) {
  text_table table = ops_table(r.analysis);
  const text_table measured = measured_table(r);
  constexpr std::size_t shared = 2; // layer and pass begin both tables
  for (std::size_t c = shared; c < measured.columns.size(); ++c) {
    column extra = measured.columns[c];
    extra.key = "measured_" + extra.key;
    table.columns.push_back(extra);
  }
  std::size_t next = 0;
  for (std::size_t i = 0; i < r.analysis.ops.size(); ++i) {
    auto &row = table.rows[i];
    if (r.measured_op(i)) {
      const auto &source = measured.rows[next++];
      row.insert(row.end(), source.begin() + shared, source.end());
    } else {
      row.resize(table.columns.size(), cell{"", std::string{}});
    }
  }
  return table;
}

std::string measured_line(const measured_totals &t) {
  return fmt::format(
      "measured: {} ops{}, {} per step eager (predicted {}), {} replayed from a CUDA graph "
      "(predicted device time {}); the roofline bound is {} (of the replayed ops: {} of their "
      "device time){}{}",
      t.ops,
      t.skipped + t.failed > 0
          ? fmt::format(" ({} skipped, {} failed: their notes say why)", t.skipped, t.failed)
          : std::string(),
      duration(t.time_s), duration(t.predicted_time_s),
      t.device_time_s > 0 ? duration(t.device_time_s) : "—", duration(t.predicted_device_time_s),
      duration(t.roofline_time_s),
      t.device_time_s > 0 ? percent(t.roofline_of_device_s / t.device_time_s) : "—",
      t.cold_l2 ? ", cold L2" : "",
      t.held > 0
          ? fmt::format("; {} op{} held at the power limit one at a time: {} and {} J per step "
                        "(predicted in the step: {} and {} J)",
                        t.held, t.held == 1 ? "" : "s", duration(t.held_time_s),
                        significant(t.held_energy_j), duration(t.predicted_time_of_held_s),
                        significant(t.predicted_energy_of_held_j))
          : std::string());
}

std::string shape_text(const gemm_shape &s) {
  return s.batch_count > 1 ? fmt::format("{}×{}×{} (×{})", s.m, s.n, s.k, s.batch_count)
                           : fmt::format("{}×{}×{}", s.m, s.n, s.k);
}

/// "in_channels 3 → 8, out_channels 60 → 64".
std::string changes_text(const std::vector<size_change> &changes) {
  std::string text;
  for (const size_change &c : changes)
    text += fmt::format("{}{} {} → {}", text.empty() ? "" : ", ", c.size, c.from, c.to);
  return text;
}

std::string speedup_text(double before_s, double after_s) {
  return fmt::format("×{:.2f} ({} → {})", before_s / after_s, duration(before_s),
                     duration(after_s));
}

text_table padding_table(const report &r) {
  const advice &a = *r.advice;
  const bool passes =
      detail::beyond_forward(a.padding, [](const padding_advice &p) { return p.pass; });
  bool measured_any = false;
  for (std::size_t i = 0; i < a.padding.size(); ++i)
    measured_any = measured_any || r.measured_pad(i) != nullptr;
  constexpr bool wide = true;
  text_table table;
  table.columns = {{"pad", "layer", align::left},
                   {"pass", "pass", align::left, !passes},
                   {"change", "change", align::left},
                   {"from", "shape", align::left, wide},
                   {"to", "padded_shape", align::left, wide},
                   {"predicted", "predicted_speedup"},
                   {"measured", "measured_speedup", align::right, !measured_any},
                   {"+FLOPs", "extra_flops"},
                   {"why", "reason", align::left}};
  for (std::size_t i = 0; i < a.padding.size(); ++i) {
    const padding_advice &p = a.padding[i];
    const padding_timing *measured = r.measured_pad(i);
    table.rows.push_back({{p.layer},
                          {std::string(to_string(p.pass))},
                          {changes_text(p.changes)},
                          {shape_text(p.original)},
                          {shape_text(p.padded)},
                          {speedup_text(p.time_s, p.padded_time_s), raw(p.predicted_speedup())},
                          {measured ? speedup_text(measured->time_s, measured->padded_time_s) : "—",
                           measured ? raw(measured->speedup()) : std::string{}},
                          {fmt::format("{:+.2f}%", 100 * p.extra_flops), raw(p.extra_flops)},
                          {p.reason}});
  }
  return table;
}

text_table batch_table(const advice &a) {
  const bool passes = detail::beyond_forward(a.batch, [](const auto &b) { return b.pass; });
  text_table table;
  table.columns = {{"batch", "layer", align::left},
                   {"pass", "pass", align::left, !passes},
                   {"now", "batch"},
                   {"compute-bound from", "compute_bound_batch"},
                   {"whole waves at", "full_wave_batch"}};
  for (const batch_advice &b : a.batch)
    table.rows.push_back({{b.layer},
                          {std::string(to_string(b.pass))},
                          {std::to_string(b.batch)},
                          {b.compute_bound_batch           ? std::to_string(*b.compute_bound_batch)
                           : b.compute_bound_beyond_memory ? std::string("beyond memory")
                                                           : std::string("never")},
                          {b.full_wave_batch ? std::to_string(*b.full_wave_batch) : "—"}});
  return table;
}

void write_shape(json_writer &w, const gemm_shape &s) {
  w.begin_object();
  w.field("m", s.m);
  w.field("n", s.n);
  w.field("k", s.k);
  w.field("batch_count", s.batch_count);
  w.end_object();
}

void write_advice(json_writer &w, const report &r) {
  const advice &a = *r.advice;
  w.begin_object();
  w.key("padding");
  w.begin_array();
  for (std::size_t i = 0; i < a.padding.size(); ++i) {
    const padding_advice &p = a.padding[i];
    const padding_timing *measured = r.measured_pad(i);
    w.begin_object();
    w.field("layer", p.layer);
    w.field("pass", to_string(p.pass));
    w.field("precision", to_string(p.prec));
    w.key("shape");
    write_shape(w, p.original);
    w.key("padded_shape");
    write_shape(w, p.padded);
    w.key("changes");
    w.begin_array();
    for (const size_change &c : p.changes) {
      w.begin_object();
      w.field("size", c.size);
      w.field("from", c.from);
      w.field("to", c.to);
      w.end_object();
    }
    w.end_array();
    w.field("reason", p.reason);
    w.field("predicted_time_us", p.time_s * 1e6);
    w.field("padded_predicted_time_us", p.padded_time_s * 1e6);
    w.field("predicted_speedup", p.predicted_speedup());
    w.field("extra_flops", p.extra_flops);
    w.field("extra_bytes", p.extra_bytes);
    if (measured) {
      w.field("measured_time_us", measured->time_s * 1e6);
      w.field("padded_measured_time_us", measured->padded_time_s * 1e6);
    } else {
      w.null_field("measured_time_us");
      w.null_field("padded_measured_time_us");
    }
    w.end_object();
  }
  w.end_array();
  w.key("batch");
  w.begin_array();
  for (const batch_advice &b : a.batch) {
    w.begin_object();
    w.field("layer", b.layer);
    w.field("pass", to_string(b.pass));
    w.field("batch", b.batch);
    w.field("compute_bound_batch", b.compute_bound_batch);
    w.field("compute_bound_beyond_memory", b.compute_bound_beyond_memory);
    w.field("full_wave_batch", b.full_wave_batch);
    w.end_object();
  }
  w.end_array();
  w.key("launch_bound");
  if (a.launch_bound) {
    const launch_bound_advice &l = *a.launch_bound;
    w.begin_object();
    w.field("ops", l.ops);
    w.field("runs", l.runs);
    w.field("time_us", l.time_s * 1e6);
    w.field("share", l.share);
    w.field("device_time_us", l.device_time_s * 1e6);
    w.field("step_time_us", l.step_time_s * 1e6);
    w.field("graph_step_time_us", l.graph_step_time_s * 1e6);
    w.field("measured_floor", l.measured_floor);
    w.end_object();
  } else {
    w.null();
  }
  w.field("network_compute_bound_batch", a.network_compute_bound_batch);
  w.field("largest_fitting_batch", a.largest_fitting_batch);
  w.field("compute_bound_beyond_memory", a.compute_bound_beyond_memory);
  w.field("warnings", a.warnings);
  w.end_object();
}

/// The advice section of the human formats.
void add_advice(const report &r, text_document &doc) {
  if (!r.advice)
    return;
  for (const std::string &warning : r.advice->warnings)
    doc.warning(warning);
  if (!r.advice->padding.empty())
    doc.table(padding_table(r));
  if (!r.advice->batch.empty())
    doc.table(batch_table(*r.advice));
}

/// What the memory holds: "13.5 GB weights + 34.4 GB KV cache + 0.00 GB activations"; a
/// training step's gradients and optimizer state (named) in place of the cache.
std::string memory_terms(const memory_use &m) {
  if (m.traced)
    return fmt::format("{} parameters + {} gradients + {} optimizer state + {} activations and "
                       "temporaries, at the captured program's peak",
                       gigabytes(m.weights_bytes), gigabytes(m.gradient_bytes),
                       gigabytes(m.optimizer_bytes), gigabytes(m.activation_bytes));
  if (!m.optimizer)
    return fmt::format("{} weights + {} KV cache + {} activations", gigabytes(m.weights_bytes),
                       gigabytes(m.kv_cache_bytes), gigabytes(m.activation_bytes));
  return fmt::format(
      "{} weights + {} gradients + {} optimizer state ({}: fp32 master weights and {}) + {} "
      "activations kept for the backward pass ({})",
      gigabytes(m.weights_bytes), gigabytes(m.gradient_bytes), gigabytes(m.optimizer_bytes),
      to_string(*m.optimizer),
      *m.optimizer == optimizer::adamw ? "two fp32 moments" : "an fp32 momentum",
      gigabytes(m.activation_bytes),
      m.recompute == recomputation::full
          ? "config_options::recompute full: each block's input, and one "
            "block's results at a time"
          : "every forward result; config_options::recompute full keeps less");
}

/// Weights + cache + activations (training: + gradients + optimizer state) against the GPU's
/// memory, and the room left.
std::string memory_line(const memory_use &m) {
  std::string line = fmt::format(
      "memory: {} = {} of {} less {} kept back (the framework's workspace, CUDA context, "
      "fragmentation: pipeline_options::memory_reserve): ",
      memory_terms(m), gigabytes(m.total_bytes), gigabytes(m.capacity_bytes),
      gigabytes(m.reserve_bytes));
  line += m.fits ? fmt::format("fits with {} to spare", gigabytes(m.usable_bytes() - m.total_bytes))
                 : fmt::format("does not fit (needs {} more)",
                               gigabytes(m.total_bytes - m.usable_bytes()));
  if (m.traced)
    line += m.max_batch ? fmt::format(" · the largest batch that fits, its activations growing "
                                      "with the batch it was captured at: {}",
                                      *m.max_batch)
                        : std::string(" · at the batch it was captured with (its batch not "
                                      "recorded, or not even that one fits)");
  else
    line += m.max_batch ? fmt::format(" · the largest {} that fits at this context: {}",
                                      m.optimizer ? "micro-batch" : "batch", *m.max_batch)
                        : fmt::format(" · no {} fits", m.optimizer ? "micro-batch" : "batch");
  if (m.max_kv_len)
    line += fmt::format(" · the longest KV cache at this batch: {} tokens", *m.max_kv_len);
  return line;
}

/// "1.23 ms (1.05–1.41)": a predicted time with its interval.
std::string range_of(double seconds, const time_range &range) {
  return duration_range(seconds, range.low_s, range.high_s);
}

/// A language model's step as serving asks of it: time to first token, or time per output token
/// and tokens per second (eager, and replayed from a CUDA graph where the host's floor costs).
std::string serving_line(const analysis &a) {
  const step_totals &t = a.totals;
  const int stages = a.network.pipeline_stages;
  if (stages > 1) { // one stage's step: a token passes every stage in turn
    const bool prefill = *a.network.phase == inference_phase::prefill;
    const double through = pipeline_passes(a) * t.time_s;
    return fmt::format(
        "{}: about {} through a pipeline of {} stages of {} each (the embedding and the LM head "
        "once; the sends between stages left out){}",
        prefill ? "time to first token" : "time per output token", duration(through), stages,
        duration(t.time_s),
        prefill
            ? std::string()
            : fmt::format(
                  ", batch {}: {} tokens/s with one batch in flight; {} batches in flight "
                  "would serve up to {} times as many, holding {} times the KV cache (a serving "
                  "question, serving_question::pipeline_parallel, sizes that)",
                  a.network.batch, significant(static_cast<double>(a.network.batch) / through),
                  stages, stages, stages));
  }
  if (*a.network.phase == inference_phase::prefill)
    return fmt::format("time to first token: {} (prefill of {} tokens, batch {}; {} from a CUDA "
                       "graph)",
                       range_of(t.time_s, t.range), a.network.seq_len, a.network.batch,
                       range_of(t.device_time_s, t.device_range));
  const double tokens = static_cast<double>(a.network.batch);
  std::string line =
      fmt::format("time per output token: {} at a {}-token KV cache, batch {}: {} tokens/s",
                  range_of(t.time_s, t.range), a.network.kv_len, a.network.batch,
                  significant(tokens / t.time_s));
  if (launch_bound_worth_saying(t.launch_bound_share))
    line += fmt::format("; {} of the step is launch-bound (the host issues those kernels more "
                        "slowly than the GPU runs them): from a CUDA graph, {} per token, {} "
                        "tokens/s",
                        percent(t.launch_bound_share), range_of(t.device_time_s, t.device_range),
                        significant(tokens / t.device_time_s));
  return line;
}

/// "measured on every GPU at once: GPU 0: GEMMs … (predicted …), all-reduces …; …; the spread".
std::vector<std::string> gpu_step_lines(const std::vector<gpu_step> &steps) {
  const auto versus = [](double measured, double predicted) {
    return measured > 0 ? fmt::format("{} (predicted {}, {:+.0f}%)", duration(measured),
                                      duration(predicted), 100 * (predicted - measured) / measured)
                        : std::string("none measured");
  };
  std::vector<std::string> lines{"measured on every GPU at once (device times, graph-replayed; "
                                 "the other ops at their predicted device time):"};
  double fastest = 0, slowest = 0;
  for (const gpu_step &s : steps) {
    lines.push_back(fmt::format("GPU {}: GEMMs {} · all-reduces {} · step {}", s.gpu,
                                versus(s.gemm_time_s, s.predicted_gemm_time_s),
                                versus(s.all_reduce_time_s, s.predicted_all_reduce_time_s),
                                versus(s.step_time_s, s.predicted_step_time_s)));
    fastest = fastest > 0 ? std::min(fastest, s.step_time_s) : s.step_time_s;
    slowest = std::max(slowest, s.step_time_s);
  }
  if (steps.size() > 1 && fastest > 0)
    lines.push_back(fmt::format("spread between GPUs: {:.1f}% (slowest over fastest step); the "
                                "step waits for the slowest",
                                100 * (slowest - fastest) / fastest));
  return lines;
}

std::string totals_line(const analysis &r) {
  const step_totals &t = r.totals;
  const std::string communication =
      t.communication_time_s > 0
          ? fmt::format(" · {} in collectives between GPUs", percent(t.communication_share))
          : std::string{};
  return fmt::format(
      "total: {} per step ({} on the GPU) · {} GFLOP · {} GB · {} of time memory-bound · {} "
      "launch-bound{} · {} GEMM runs, {} distinct ops",
      range_of(t.time_s, t.range), range_of(t.device_time_s, t.device_range),
      significant(t.flops / 1e9), significant(t.bytes / 1e9), percent(t.memory_bound_share),
      percent(t.launch_bound_share), communication, t.gemm_count, t.op_count);
}

/// "joules per token" and its like: the step's energy over what it processes.
std::string energy_per_item(const analysis &r) {
  const network &net = r.network;
  const throughput_unit unit = throughput_unit_of(net);
  const double items = static_cast<double>(net.batch) *
                       (unit == throughput_unit::tokens ? static_cast<double>(net.seq_len) : 1);
  if (!(items > 0) || net.batch <= 0)
    return {};
  const std::string name(to_string(unit));
  return fmt::format(" · {} J per {}", significant(r.power.energy_j / items),
                     name.substr(0, name.size() - 1)); // "tokens" → "token"
}

void write_power(json_writer &w, const analysis &a) {
  const power_draw &d = a.power;
  w.begin_object();
  w.field("clock", to_string(d.regime));
  w.field("limit_w", a.budget.cap_w);
  w.field("idle_w", a.budget.idle_w);
  w.field("capped", d.capped);
  w.field("above_limit", d.above_cap);
  w.field("clock_bound_slowdown", d.slowdown);
  w.field("energy_j", d.energy_j);
  w.field("average_power_w", d.average_w);
  w.field("energy_fitted", energy_fitted(a.model.parameters()));
  w.end_object();
}

std::string power_line(const analysis &r) {
  const power_draw &d = r.power;
  const power_budget &b = r.budget;
  if (b.cap_w <= 0)
    return "power: the spec gives no power limit (tdp_w): no cap held, no energy predicted";
  std::string clock;
  if (d.regime == clock_regime::burst)
    clock = d.above_cap
                ? fmt::format("a burst from idle at the boost clock, above the {:g} W "
                              "limit, which it holds for about {} at most",
                              b.cap_w, duration(r.model.parameters()[parameter::power_burst_s]))
                : fmt::format("a burst from idle at the boost clock, under the {:g} W "
                              "limit",
                              b.cap_w);
  else if (d.capped)
    clock = fmt::format("sustained: the {:g} W limit holds {} to {}× {} boost-clock time", b.cap_w,
                        d.whole_step ? "all the GPU's work (its compute-bound ops alone could "
                                       "not take the cut)"
                                     : "the compute-bound ops",
                        significant(d.slowdown), d.whole_step ? "its" : "their");
  else if (d.above_cap)
    clock = fmt::format("sustained, above the {:g} W limit: nothing the limit could slow (the "
                        "host sets every op's time)",
                        b.cap_w);
  else
    clock = fmt::format("sustained, under the {:g} W limit: the boost clock", b.cap_w);
  const std::string source =
      energy_fitted(r.model.parameters())
          ? std::string{}
          : " · energies not fitted for this architecture: each unit at its dense datasheet peak, "
            "and DRAM at its bandwidth, taken to draw the whole limit";
  return fmt::format("power: {} · {} J per step at {} W (idle {} W){}{}", clock,
                     significant(d.energy_j), significant(d.average_w), significant(b.idle_w),
                     energy_per_item(r), source);
}

std::string notes_line(const analysis &r) {
  std::string note =
      "roofline: max(FLOPs/peak, bytes/bandwidth) per run; device: the GPU's time per run with no "
      "host gap, " +
      std::string(r.model.options().roofline_only ? "the roofline"
                                                  : "the GEMM model (tiles, waves, alignment, L2; "
                                                    "parameters: " +
                                                        r.model.parameters().origin + ")") +
      "; host floor: " + r.model.host().origin +
      "; predicted: max(device, host floor), back-to-back eager calls, with (in brackets) "
      "where 8 in 10 measured times fall: the device time × its op class's p10–p90 of measured / "
      "predicted on held-out rows (docs/benchmarks.md), the host floor as it is; runs: times per "
      "step; "
      "memory-bound ops are held against the fp32 (CUDA core) peak";
  if (std::any_of(r.ops.begin(), r.ops.end(),
                  [](const analysed_op &entry) { return entry.prediction.sparse_peak; }))
    note += "; * marks a 2:4-sparse peak";
  return note;
}

// ------------------------------------------------------------------ JSON

void write_gemm_model(json_writer &w, const gemm_estimate &g) {
  w.begin_object();
  w.field("kernel_family", to_string(g.family));
  w.field("tile_m", g.tile_m);
  w.field("tile_n", g.tile_n);
  w.field("split_k", g.split_k);
  w.field("launches", g.launches);
  w.field("work_items", g.tiles);
  w.field("waves", g.waves);
  w.field("wave_efficiency", g.wave_efficiency);
  w.field("tile_efficiency", g.tile_efficiency);
  w.field("alignment_bytes", g.alignment_bytes);
  w.field("l2_resident", g.l2_resident);
  w.end_object();
}

/// A captured program's coverage: what was priced, what ran no kernel, what was not priced.
void write_trace(json_writer &w, const traced_program &t) {
  w.begin_object();
  w.field("captured", t.captured);
  w.field("aten_ops", t.aten_ops);
  w.field("priced_ops", t.priced_ops);
  w.field("free_ops", t.free_ops);
  w.key("unpriced");
  w.begin_array();
  for (const auto &[name, runs] : t.unpriced) {
    w.begin_object();
    w.field("op", name);
    w.field("runs", runs);
    w.end_object();
  }
  w.end_array();
  w.field("peak_bytes", t.memory.peak_bytes);
  w.end_object();
}

/// What was analysed: its name, file, precision, batch and mode, and a captured program's coverage.
void write_network(json_writer &w, const network &net) {
  w.begin_object();
  w.field("name", net.name);
  w.field("origin", net.origin);
  w.field("precision", to_string(net.precision));
  w.field("batch", net.batch);
  w.field("seq_len", net.seq_len);
  w.field("mode", to_string(net.mode));
  w.key("trace");
  if (net.trace)
    write_trace(w, *net.trace);
  else
    w.null();
  w.end_object();
}

void write_measurement(json_writer &w, const op &o, const prediction &p, const measurement &m) {
  const bool ok = m.status == measurement_status::measured;
  const bool device = ok && m.device_time_s > 0;
  const auto when = [](bool known, double value) {
    return known ? std::optional<double>(value) : std::nullopt;
  };
  w.begin_object();
  w.field("engine", m.engine);
  w.field("status", to_string(m.status));
  w.field("note", m.note);
  w.field("time_us", when(ok, m.time_s * 1e6));
  w.field("min_time_us", when(ok, m.min_time_s * 1e6));
  w.field("max_time_us", when(ok, m.max_time_s * 1e6));
  w.field("device_time_us", when(device, m.device_time_s * 1e6));
  w.field("device_min_time_us", when(device, m.device_min_time_s * 1e6));
  w.field("device_max_time_us", when(device, m.device_max_time_s * 1e6));
  w.field("kernel_time_us", when(m.kernel_time_s > 0, m.kernel_time_s * 1e6));
  w.key("held");
  if (ok && m.held) {
    w.begin_object();
    w.field("time_us", m.held->time_s * 1e6);
    w.field("energy_j", m.held->energy_j);
    w.field("power_w", m.held->power_w);
    w.field("sm_clock_hz", m.held->sm_clock_hz);
    w.field("throttle", m.held->throttle);
    w.end_object();
  } else {
    w.null();
  }
  w.field("samples", m.samples);
  w.field("cold_l2", m.cold_l2);
  w.field("relative_error", when(ok, m.relative_error));
  w.field("achieved_flop_per_s", ok ? std::optional(achieved_flop_per_s(o, m)) : std::nullopt);
  w.field("dram_bytes", measured_dram_bytes(m));
  w.field("measured_intensity", measured_intensity(o, m));
  w.field("roofline_fraction", ok ? std::optional(roofline_fraction(p, m)) : std::nullopt);
  w.key("counters");
  if (m.counters) {
    const counter_readings &c = *m.counters;
    w.begin_object();
    w.field("kernel_time_us", c.kernel_time_s * 1e6);
    w.field("dram_read_bytes", c.dram_read_bytes);
    w.field("dram_write_bytes", c.dram_write_bytes);
    w.field("l2_bytes", c.l2_bytes);
    w.field("tensor_flops", c.tensor_flops);
    w.field("fp32_flops", c.fp32_flops);
    w.field("fp64_flops", c.fp64_flops);
    w.field("sm_clock_hz", c.sm_clock_hz);
    w.field("passes", c.passes);
    w.end_object();
  } else {
    w.null();
  }
  w.field("kernels", m.kernels);
  w.field("launches", m.launches != 0 ? std::optional(m.launches) : std::nullopt);
  w.end_object();
}

json model_json(const perf_model &model) {
  json parameters = json::object();
  for (const parameter_info &row : parameter_table())
    parameters[row.name] = model.parameters()[row.id];
  json gemm_call = json::object(), fallback_call = json::object();
  for (precision p : all_precisions) {
    gemm_call[std::string(to_string(p))] = model.host().gemm(p) * 1e6;
    fallback_call[std::string(to_string(p))] = model.host().gemm(p, 1, true) * 1e6;
  }
  return {{"name", model.options().roofline_only ? "roofline" : "gemm-model"},
          {"sparse", model.options().sparse},
          {"operand_cache", to_string(model.operand_cache())},
          {"parameters_origin", model.parameters().origin},
          {"parameters", parameters},
          {"host_floor",
           {{"measured", model.host().measured},
            {"origin", model.host().origin},
            {"gemm_call_us", gemm_call},
            {"fallback_call_us", fallback_call},
            {"kernel_launch_us", model.host().kernel_launch_s * 1e6}}}};
}

} // namespace

void detail::write_op_fields(json_writer &w, const analysed_op &entry,
                             const measurement *measured) {
  const op &o = entry.op;
  const prediction &p = entry.prediction;
  const auto dimension = [&](std::int64_t gemm_shape::*field) {
    return o.gemm ? std::optional((*o.gemm).*field) : std::nullopt;
  };
  w.field("layer", o.layer);
  w.field("pass", to_string(o.pass));
  w.field("kind", o.kind);
  w.field("m", dimension(&gemm_shape::m));
  w.field("n", dimension(&gemm_shape::n));
  w.field("k", dimension(&gemm_shape::k));
  w.field("batch_count", dimension(&gemm_shape::batch_count));
  w.field("elements", o.is_gemm() ? std::nullopt : std::optional(o.elements));
  w.field("gpus", o.is_collective() ? std::optional<std::int64_t>(o.gpus) : std::nullopt);
  w.field("count", o.count);
  w.field("precision", to_string(o.precision));
  w.key("weights"); // weight-only quantization of B
  if (o.gemm && o.gemm->weights) {
    w.begin_object();
    w.field("bits", o.gemm->weights->bits);
    w.field("group_size", o.gemm->weights->group_size);
    w.end_object();
  } else {
    w.null();
  }
  w.field("flops", o.flops);
  w.field("bytes", o.bytes);
  w.field("arithmetic_intensity", o.arithmetic_intensity());
  w.field("ridge_intensity", p.ridge_intensity);
  w.field("peak_flop_per_s", p.peak_flop_per_s);
  w.field("sparse_peak", p.sparse_peak);
  w.field("bound", to_string(p.bound));
  w.field("predicted_time_us", p.time_s * 1e6);
  w.field("predicted_time_range_us", range_us_json(p.range));
  w.field("device_time_us", p.device_time_s * 1e6);
  w.field("device_time_range_us", range_us_json(p.device_range));
  w.field("host_floor_us", p.host_floor_s * 1e6);
  w.field("launch_bound", p.launch_bound);
  w.field("roofline_time_us", p.roofline_time_s * 1e6);
  w.field("memory_roof", p.l2_roof ? "l2" : "dram");
  w.key("gemm_model");
  if (p.gemm)
    write_gemm_model(w, *p.gemm);
  else
    w.null();
  w.field("model_summary", model_summary(p));
  w.field("total_time_us", entry.total_time_s * 1e6);
  w.field("total_time_range_us", range_us_json(entry.total_range));
  w.field("attainable_flop_per_s", p.attainable_flop_per_s);
  w.field("predicted_flop_per_s", p.flop_per_s);
  w.field("time_share", entry.time_share);
  w.field("energy_j", entry.energy_j);
  w.field("factors", p.factors);
  w.field("line", o.where.line);
  w.key("measured");
  if (measured)
    write_measurement(w, o, p, *measured);
  else
    w.null();
}

namespace {

class report_document final : public document {
public:
  explicit report_document(const report &r) : m_report(r) {}

  text_document text() const override {
    const analysis &a = m_report.analysis;
    text_document doc;
    doc.title(header_lines(a));
    doc.table(ops_table(a));
    if (a.memory && !a.memory->fits)
      doc.warning(fmt::format(
          "{} does not fit in the {}'s {} ({} kept back): it needs {} ({}); the times below "
          "are what it would take if it did",
          a.network.name, a.model.spec().display_name, gigabytes(a.memory->capacity_bytes),
          gigabytes(a.memory->reserve_bytes), gigabytes(a.memory->total_bytes),
          memory_terms(*a.memory)));
    std::vector<std::string> summary{totals_line(a), power_line(a)};
    if (a.network.phase)
      summary.push_back(serving_line(a));
    if (a.memory)
      summary.push_back(memory_line(*a.memory));
    summary.push_back(notes_line(a));
    doc.lines(summary, true);
    if (m_report.measured_sums) {
      doc.table(measured_table(m_report));
      doc.lines({measured_line(*m_report.measured_sums)}, true);
    }
    if (!m_report.gpu_steps.empty())
      doc.lines(gpu_step_lines(m_report.gpu_steps), true);
    add_advice(m_report, doc);
    for (const std::string &note : m_report.notes)
      doc.note(note);
    return doc;
  }

  text_table csv() const override {
    return m_report.measured_sums ? with_measured_columns(m_report) : ops_table(m_report.analysis);
  }

  std::vector<detail::json_field> json() const override {
    const report &r = m_report;
    const analysis &a = r.analysis;
    nlohmann::json device = device_json(a.model.spec());
    device["selection"] = a.device_selection;
    std::vector<detail::json_field> fields = detail::fields_of(
        {{"device", std::move(device)}, {"model", model_json(a.model)}, {"notes", r.notes}});
    fields.push_back({"network", [&a](json_writer &w) { write_network(w, a.network); }});
    fields.push_back({"advice", [&r](json_writer &w) {
                        if (r.advice)
                          write_advice(w, r);
                        else
                          w.null();
                      }});
    fields.push_back({"memory", [&a](json_writer &w) { detail::write_memory(w, a.memory); }});
    fields.push_back(
        {"serving", [&a](json_writer &w) {
           if (!a.network.phase) {
             w.null();
             return;
           }
           const step_totals &t = a.totals;
           const bool prefill = *a.network.phase == inference_phase::prefill;
           const std::string step = prefill ? "time_to_first_token" : "time_per_output_token";
           // A pipeline stage's: one batch through every stage.
           const double passes = pipeline_passes(a);
           w.begin_object();
           w.field("phase", prefill ? "prefill" : "decode");
           w.field("pipeline_stages", a.network.pipeline_stages);
           w.key(prefill ? "time_to_first_token_us" : "time_per_output_token_us");
           w.value(passes * t.time_s * 1e6);
           w.field(step + "_range_us", range_us_json(t.range * passes));
           w.field("graph_time_us", passes * t.device_time_s * 1e6);
           w.field("graph_time_range_us", range_us_json(t.device_range * passes));
           w.field("tokens_per_s", static_cast<double>(a.network.batch) *
                                       static_cast<double>(prefill ? a.network.seq_len : 1) /
                                       (passes * t.time_s));
           w.field("launch_bound_share", t.launch_bound_share);
           w.field("kv_len", a.network.kv_len);
           w.end_object();
         }});
    fields.push_back({"totals", [&t = a.totals](json_writer &w) {
                        w.begin_object();
                        w.field("predicted_time_us", t.time_s * 1e6);
                        w.field("predicted_time_range_us", range_us_json(t.range));
                        w.field("device_time_us", t.device_time_s * 1e6);
                        w.field("device_time_range_us", range_us_json(t.device_range));
                        w.field("flops", t.flops);
                        w.field("bytes", t.bytes);
                        w.field("memory_bound_time_us", t.memory_bound_time_s * 1e6);
                        w.field("memory_bound_share", t.memory_bound_share);
                        w.field("launch_bound_time_us", t.launch_bound_time_s * 1e6);
                        w.field("launch_bound_share", t.launch_bound_share);
                        w.field("launch_bound_ops", t.launch_bound_ops);
                        w.field("gemm_time_us", t.gemm_time_s * 1e6);
                        w.field("gemm_count", t.gemm_count);
                        w.field("dispatch_us", t.dispatch_s * 1e6);
                        w.field("communication_time_us", t.communication_time_s * 1e6);
                        w.field("communication_share", t.communication_share);
                        w.field("op_count", t.op_count);
                        w.end_object();
                      }});
    fields.push_back({"power", [&a](json_writer &w) { write_power(w, a); }});
    fields.push_back({"complete", [&r](json_writer &w) { w.value(r.complete); }});
    fields.push_back({"gpu_steps", [&r](json_writer &w) {
                        w.begin_array();
                        for (const gpu_step &s : r.gpu_steps) {
                          w.begin_object();
                          w.field("gpu", s.gpu);
                          w.field("gemm_time_us", s.gemm_time_s * 1e6);
                          w.field("predicted_gemm_time_us", s.predicted_gemm_time_s * 1e6);
                          w.field("all_reduce_time_us", s.all_reduce_time_s * 1e6);
                          w.field("predicted_all_reduce_time_us",
                                  s.predicted_all_reduce_time_s * 1e6);
                          w.field("step_time_us", s.step_time_s * 1e6);
                          w.field("predicted_step_time_us", s.predicted_step_time_s * 1e6);
                          w.end_object();
                        }
                        w.end_array();
                      }});
    fields.push_back({"ops", [&r, &a](json_writer &w) {
                        w.begin_array();
                        for (std::size_t i = 0; i < a.ops.size(); ++i) {
                          w.begin_object();
                          detail::write_op_fields(w, a.ops[i], r.measured_op(i));
                          w.end_object();
                        }
                        w.end_array();
                      }});
    return fields;
  }

  std::optional<detail::chart> roofline() const override {
    return detail::roofline_chart(m_report);
  }

private:
  const report &m_report;
};

} // namespace

void write_report(const report &r, output_format format, std::ostream &out,
                  const write_options &options) {
  write_document(report_document(r), format, out, options);
}

} // namespace roofline
