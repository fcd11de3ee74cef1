// SPDX-License-Identifier: Apache-2.0
#include "roofline/advisor.hpp"

#include "roofline/error.hpp"

#include "roofline/gemm_model.hpp"
#include "roofline/report.hpp"
#include "text_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

namespace roofline {

namespace {

std::int64_t round_up(std::int64_t value, std::int64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

double predicted_time(const perf_model &model, const gemm_shape &shape, precision p) {
  return model.predict(make_gemm_op("padding", shape, p)).time_s;
}

/// The best padding of one GEMM: the alignment fix of N and K, then sizes of N up to 6% larger that
/// fill tiles and waves better. N is the layer's output features and K its input features, both the
/// network designer's to choose; M is the batch (see batch advice).
std::optional<padding_advice> pad(const op &o, const perf_model &model, double min_speedup) {
  const gemm_shape &s = *o.gemm;
  const std::int64_t unit = alignment_elements(o.precision);
  const double time = predicted_time(model, s, o.precision);
  padding_advice best;
  best.padded_time_s = time;
  std::vector<std::pair<gemm_shape, std::string>> candidates;
  const gemm_shape aligned{s.m, round_up(s.n, unit), round_up(s.k, unit), s.batch_count};
  const bool misaligned = aligned.n != s.n || aligned.k != s.k;
  if (misaligned) {
    std::string broken = aligned.n != s.n ? fmt::format("N={}", s.n) : std::string{};
    if (aligned.k != s.k)
      broken += (broken.empty() ? "" : " and ") + fmt::format("K={}", s.k);
    candidates.emplace_back(aligned,
                            fmt::format("{} break{} the 16-byte rule of {} (multiples of {})",
                                        broken, aligned.n != s.n && aligned.k != s.k ? "" : "s",
                                        to_string(o.precision), unit));
  }
  for (std::int64_t multiple : {64, 128, 256}) {
    const gemm_shape wider{s.m, round_up(s.n, multiple), aligned.k, s.batch_count};
    if (wider.n != aligned.n && static_cast<double>(wider.n) <= 1.06 * static_cast<double>(s.n))
      candidates.emplace_back(
          wider, fmt::format("N={} to a multiple of {}: fuller tiles and waves", s.n, multiple));
  }
  for (const auto &[shape, reason] : candidates) {
    const double padded_time = predicted_time(model, shape, o.precision);
    if (padded_time < best.padded_time_s) {
      best.padded = shape;
      best.padded_time_s = padded_time;
      best.reason = misaligned && shape.n % unit == 0 && reason.find("16-byte") == std::string::npos
                        ? candidates.front().second + "; " + reason
                        : reason;
    }
  }
  if (best.padded_time_s * min_speedup > time)
    return std::nullopt;
  best.layer = o.layer;
  best.pass = o.pass;
  best.prec = o.precision;
  best.original = s;
  best.time_s = time;
  best.extra_flops =
      static_cast<double>(*gemm_flops(best.padded)) / static_cast<double>(o.flops) - 1;
  best.extra_bytes = static_cast<double>(*gemm_min_bytes(best.padded, o.precision)) /
                         static_cast<double>(o.bytes) -
                     1;
  return best;
}

/// Ops whose M grows with the batch, and their rows per sample: lower the network at twice the
/// batch.
std::vector<std::pair<std::size_t, double>> batch_scaled(const network &net,
                                                         const std::vector<op> &ops) {
  network doubled = net;
  doubled.batch = net.batch * 2;
  std::vector<op> twice;
  try {
    twice = lower(doubled);
  } catch (const input_error &) {
    return {}; // a batch this large cannot double: no batch advice
  }
  std::vector<std::pair<std::size_t, double>> scaled;
  for (std::size_t i = 0; i < ops.size() && i < twice.size(); ++i)
    if (ops[i].is_gemm() && twice[i].is_gemm() && twice[i].gemm->m == 2 * ops[i].gemm->m &&
        twice[i].gemm->batch_count == ops[i].gemm->batch_count)
      scaled.emplace_back(i, static_cast<double>(ops[i].gemm->m) / static_cast<double>(net.batch));
  return scaled;
}

batch_advice batch_sizes(const op &o, double rows_per_sample, const network &net,
                         const perf_model &model) {
  batch_advice advice;
  advice.layer = o.layer;
  advice.pass = o.pass;
  advice.batch = net.batch;
  const gemm_shape &s = *o.gemm;
  const auto shape_at = [&](std::int64_t batch) {
    return gemm_shape{
        std::max<std::int64_t>(1, std::llround(rows_per_sample * static_cast<double>(batch))), s.n,
        s.k, s.batch_count};
  };
  const double ridge = model.spec().ridge_intensity(o.precision, model.options().sparse);
  const auto intensity = [&](std::int64_t batch) {
    const gemm_shape x = shape_at(batch);
    return static_cast<double>(*gemm_flops(x)) /
           static_cast<double>(*gemm_min_bytes(x, o.precision));
  };
  // Intensity grows with the batch towards 2·N·K / (element size · (N + K)): search the doubling,
  // then bisect.
  std::int64_t high = 1;
  while (high <= (std::int64_t{1} << 20) && intensity(high) < ridge)
    high *= 2;
  if (high <= (std::int64_t{1} << 20)) {
    std::int64_t low = high / 2;
    while (high - low > 1) {
      const std::int64_t middle = (low + high) / 2;
      (intensity(middle) < ridge ? low : high) = middle;
    }
    advice.compute_bound_batch = high;
  }
  // Batches people pick (multiples of 8), up to twice the batch, in at most ~2048 steps.
  const std::int64_t step = round_up(std::max<std::int64_t>(1, net.batch / 1024), 8);
  // A batch worth suggesting fills its last wave and also costs less time per sample (≥ 3% less
  // than now); the current batch qualifies by filling its waves.
  const auto per_sample_s = [&](std::int64_t batch, gemm_estimate *estimate) {
    *estimate = model.estimate(shape_at(batch), o.precision);
    return estimate->device_time_s / static_cast<double>(batch);
  };
  gemm_estimate e;
  const double now_s = per_sample_s(net.batch, &e);
  for (std::int64_t batch = net.batch; batch <= 2 * net.batch + 64;
       batch = batch == net.batch ? round_up(net.batch + 1, 8) : batch + step) {
    const double candidate_s = per_sample_s(batch, &e);
    const bool full = e.wave_efficiency >= 0.95 && e.waves >= 1;
    if (full && (batch == net.batch || candidate_s <= 0.97 * now_s)) {
      advice.full_wave_batch = batch;
      break;
    }
  }
  return advice;
}

} // namespace

advice advise(const network &net, const report &analysis, const perf_model &model,
              double min_speedup) {
  advice result;
  std::vector<op> ops;
  for (const op_report &entry : analysis.ops)
    ops.push_back(entry.op);
  const double memory_bound_share = analysis.totals.memory_bound_share;
  std::set<std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t, int>> seen;
  for (const op &o : ops) {
    if (!o.is_gemm() || !seen.insert({o.gemm->m, o.gemm->n, o.gemm->k, o.gemm->batch_count,
                                      static_cast<int>(o.precision)})
                             .second)
      continue;
    if (auto padding = pad(o, model, min_speedup))
      result.padding.push_back(*padding);
  }
  const auto scaled = batch_scaled(net, ops);
  for (const auto &[index, rows] : scaled)
    result.batch.push_back(batch_sizes(ops[index], rows, net, model));

  // The network's batch: where most of the time of the GEMMs that grow with it (the weight GEMMs)
  // is compute-bound. Ops keep their order when the batch changes, so the indices carry over.
  for (std::int64_t batch = 1; !scaled.empty() && batch <= 65536; batch *= 2) {
    network at = net;
    at.batch = batch;
    report r;
    try {
      r = analyze(at, model, "batch search");
    } catch (const input_error &) {
      break; // sizes overflow at this batch
    }
    double total = 0, memory = 0;
    for (const auto &[index, rows] : scaled) {
      const op_report &entry = r.ops[index];
      total += entry.total_time_s;
      memory += entry.prediction.bound == bound::memory ? entry.total_time_s : 0;
    }
    if (total > 0 && memory < 0.5 * total) {
      result.network_compute_bound_batch = batch;
      break;
    }
  }
  if (memory_bound_share > 0.5) {
    std::string warning =
        fmt::format("{:.0f}% of the step's predicted time is memory-bound at batch {}: the GEMMs "
                    "read more bytes than they have FLOPs to hide them",
                    100 * memory_bound_share, net.batch);
    if (result.network_compute_bound_batch && *result.network_compute_bound_batch > net.batch)
      warning +=
          fmt::format("; the weight GEMMs turn compute-bound from batch {} (per layer below)",
                      *result.network_compute_bound_batch);
    if (scaled.size() < static_cast<std::size_t>(std::count_if(
                            ops.begin(), ops.end(), [](const op &o) { return o.is_gemm(); })))
      warning += "; GEMMs whose batch_count grows instead of M (attention over a KV cache) stay "
                 "memory-bound at "
                 "any batch";
    result.warnings.push_back(warning);
  }
  if (analysis.totals.launch_bound_ops > 0) {
    launch_bound_advice launch;
    launch.ops = analysis.totals.launch_bound_ops;
    launch.time_s = analysis.totals.launch_bound_time_s;
    for (const op_report &entry : analysis.ops)
      if (entry.prediction.launch_bound) {
        launch.runs += entry.op.count;
        launch.device_time_s +=
            entry.prediction.device_time_s * static_cast<double>(entry.op.count);
      }
    launch.share = analysis.totals.launch_bound_share;
    launch.step_time_s = analysis.totals.time_s;
    launch.graph_step_time_s = analysis.totals.device_time_s;
    launch.measured_floor = analysis.host.measured;
    if (launch.share >= 0.05) // below, the advice says it without a warning
      result.warnings.push_back(fmt::format(
          "{} of {} ops ({} runs per step, {:.0f}% of the step) are launch-bound: the {} host "
          "issues each more slowly than the GPU runs it ({} of host time, {} on the GPU). A faster "
          "GPU will not shorten them; CUDA graphs (the whole step replayed: {} -> {} predicted) or "
          "fusing ops will",
          launch.ops, analysis.ops.size(), launch.runs, 100 * launch.share,
          launch.measured_floor ? "measured" : "typical", detail::duration(launch.time_s),
          detail::duration(launch.device_time_s), detail::duration(launch.step_time_s),
          detail::duration(launch.graph_step_time_s)));
    result.launch_bound = launch;
  }
  return result;
}

} // namespace roofline
