// SPDX-License-Identifier: Apache-2.0
#include "roofline/advisor.hpp"

#include "roofline/error.hpp"

#include "roofline/gemm_model.hpp"
#include "roofline/lowering.hpp"
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
  struct candidate {
    gemm_shape shape;
    std::string reason;
    bool alignment_fix = false; ///< the 16-byte fix itself, not a wider size
  };
  std::vector<candidate> candidates;
  const gemm_shape aligned{s.m, round_up(s.n, unit), round_up(s.k, unit), s.batch_count};
  const bool misaligned = aligned.n != s.n || aligned.k != s.k;
  if (misaligned) {
    std::string broken = aligned.n != s.n ? fmt::format("N={}", s.n) : std::string{};
    if (aligned.k != s.k)
      broken += (broken.empty() ? "" : " and ") + fmt::format("K={}", s.k);
    candidates.push_back(
        {aligned,
         fmt::format("{} break{} the 16-byte rule of {} (multiples of {})", broken,
                     aligned.n != s.n && aligned.k != s.k ? "" : "s", to_string(o.precision), unit),
         true});
  }
  for (std::int64_t multiple : {64, 128, 256}) {
    const gemm_shape wider{s.m, round_up(s.n, multiple), aligned.k, s.batch_count};
    if (wider.n != aligned.n && static_cast<double>(wider.n) <= 1.06 * static_cast<double>(s.n))
      candidates.push_back(
          {wider, fmt::format("N={} to a multiple of {}: fuller tiles and waves", s.n, multiple)});
  }
  for (const candidate &c : candidates) {
    const double padded_time = predicted_time(model, c.shape, o.precision);
    if (padded_time < best.padded_time_s) {
      best.padded = c.shape;
      best.padded_time_s = padded_time;
      // A wider size of a misaligned GEMM fixes the alignment too: say both.
      best.reason =
          misaligned && !c.alignment_fix ? candidates.front().reason + "; " + c.reason : c.reason;
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

/// How a GEMM whose M grows with the batch grows: its rows per sample, and its bytes at twice the
/// network's batch.
struct row_growth {
  double rows_per_sample = 0;
  std::int64_t bytes_at_twice = 0;
};

/// Ops whose M grows with the batch, and how: lower the network at twice the batch.
std::vector<std::pair<std::size_t, row_growth>> batch_scaled(const network &net,
                                                             const std::vector<op> &ops) {
  network doubled = net;
  doubled.batch = net.batch * 2;
  std::vector<op> twice;
  try {
    twice = lower(doubled);
  } catch (const input_error &) {
    return {}; // a batch this large cannot double: no batch advice
  }
  std::vector<std::pair<std::size_t, row_growth>> scaled;
  for (std::size_t i = 0; i < ops.size() && i < twice.size(); ++i)
    if (ops[i].is_gemm() && twice[i].is_gemm() && twice[i].gemm->m == 2 * ops[i].gemm->m &&
        twice[i].gemm->batch_count == ops[i].gemm->batch_count)
      scaled.emplace_back(
          i, row_growth{static_cast<double>(ops[i].gemm->m) / static_cast<double>(net.batch),
                        twice[i].bytes});
  return scaled;
}

batch_advice batch_sizes(const op &o, const row_growth &growth, const network &net,
                         const perf_model &model) {
  batch_advice advice;
  advice.layer = o.layer;
  advice.pass = o.pass;
  advice.batch = net.batch;
  const gemm_shape &s = *o.gemm;
  const auto shape_at = [&](std::int64_t batch) {
    return gemm_shape{std::max<std::int64_t>(
                          1, std::llround(growth.rows_per_sample * static_cast<double>(batch))),
                      s.n, s.k, s.batch_count};
  };
  const double ridge = model.spec().ridge_intensity(o.precision, model.options().sparse);
  // The op's own bytes, as the table shows them, not gemm_min_bytes of its shape: a conv reads its
  // real input (lowering), not the im2col matrix. FLOPs grow in proportion to the batch, bytes
  // affinely (the weights once, activations per sample): both from the op at batch and twice it.
  const double now = static_cast<double>(net.batch);
  const double flops_per_sample = static_cast<double>(o.flops) / now;
  const double bytes_per_sample = static_cast<double>(growth.bytes_at_twice - o.bytes) / now;
  const double fixed_bytes = static_cast<double>(o.bytes) - bytes_per_sample * now;
  const auto intensity = [&](std::int64_t batch) {
    const double b = static_cast<double>(batch);
    return flops_per_sample * b / (fixed_bytes + bytes_per_sample * b);
  };
  // Intensity grows with the batch towards flops_per_sample / bytes_per_sample (a linear layer's:
  // 2·N·K / (element size · (N + K))): search the doubling, then bisect.
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

/// The KV cache lengths of `layers`' attention layers that read more keys than they have queries
/// (kv_len > seq_len: docs/network-format.md's decode with a KV cache), in a set.
void kv_cache_lengths(const std::vector<layer> &layers, std::set<std::int64_t> &lengths) {
  for (const layer &l : layers)
    if (const auto *attention = std::get_if<attention_layer>(&l.body)) {
      if (attention->kv_len > attention->seq_len)
        lengths.insert(attention->kv_len);
    } else if (const auto *block = std::get_if<repeat_block>(&l.body)) {
      kv_cache_lengths(block->layers, lengths);
    }
}

/// Whether each op is a GEMM whose batch_count, not M, doubles with the batch (attention's score
/// and context GEMMs and their gradients): lower the network at twice the batch.
std::vector<bool> batch_count_scaled(const network &net, const std::vector<op> &ops) {
  network doubled = net;
  doubled.batch = net.batch * 2;
  std::vector<bool> scaled(ops.size(), false);
  try {
    const std::vector<op> twice = lower(doubled);
    for (std::size_t i = 0; i < ops.size() && i < twice.size(); ++i)
      scaled[i] = ops[i].is_gemm() && twice[i].is_gemm() && twice[i].gemm->m == ops[i].gemm->m &&
                  twice[i].gemm->batch_count == 2 * ops[i].gemm->batch_count;
  } catch (const input_error &) {
    // a batch this large cannot double: nothing to say of what grows with it
  }
  return scaled;
}

/// Most of the step is memory-bound: how much, in what (GEMMs or memory-bound ops), what a larger
/// batch does to the weight GEMMs (the searched batch said as such, beside the per-layer range of
/// the batch advice, so the two never seem to disagree), and which GEMMs no batch helps. Names only
/// what the network has: attention GEMMs when it has some, a KV cache when one is described.
std::string memory_bound_warning(const network &net, const analysis &analysed,
                                 const std::vector<op> &ops, const advice &result) {
  const step_totals &totals = analysed.totals;
  double gemm_memory_s = 0, other_memory_s = 0;
  std::vector<std::string> other_kinds; // the memory-bound ops' kinds, in order of first use
  for (const analysed_op &entry : analysed.ops) {
    if (entry.prediction.bound != bound::memory)
      continue;
    (entry.op.is_gemm() ? gemm_memory_s : other_memory_s) += entry.total_time_s;
    if (!entry.op.is_gemm() &&
        std::find(other_kinds.begin(), other_kinds.end(), entry.op.kind) == other_kinds.end())
      other_kinds.push_back(entry.op.kind);
  }
  std::string kinds;
  for (std::size_t i = 0; i < other_kinds.size(); ++i)
    kinds += (i == 0 ? "" : i + 1 == other_kinds.size() ? " and " : ", ") + other_kinds[i];
  // Percentages rounded once, so that the two parts add up to the whole as printed.
  const double whole = std::round(100 * totals.memory_bound_share);
  std::string warning = fmt::format(
      "{:.0f}% of the step's predicted time is memory-bound at batch {}", whole, net.batch);
  if (other_memory_s <= 0)
    warning += ": the GEMMs read more bytes than they have FLOPs to hide them";
  else if (gemm_memory_s <= 0)
    warning += fmt::format(", all of it in {} ops (memory-bound at any batch)", kinds);
  else {
    const double in_gemms = std::min(whole, std::round(100 * gemm_memory_s / totals.time_s));
    warning += fmt::format(": {:.0f}% in GEMMs that read more bytes than they have FLOPs to hide "
                           "them, {:.0f}% in {} ops (memory-bound at any batch)",
                           in_gemms, whole - in_gemms, kinds);
  }

  if (result.network_compute_bound_batch && *result.network_compute_bound_batch > net.batch) {
    warning += fmt::format("; at batch {} (powers of two searched) most of the weight GEMMs' time "
                           "is compute-bound",
                           *result.network_compute_bound_batch);
    std::optional<std::int64_t> lowest, highest;
    std::size_t never = 0;
    for (const batch_advice &b : result.batch) {
      if (!b.compute_bound_batch) {
        ++never;
        continue;
      }
      lowest = std::min(lowest.value_or(*b.compute_bound_batch), *b.compute_bound_batch);
      highest = std::max(highest.value_or(*b.compute_bound_batch), *b.compute_bound_batch);
    }
    if (lowest)
      warning += *lowest == *highest
                     ? fmt::format("; per layer, from batch {}", *lowest)
                     : fmt::format("; per layer, from batch {} to {}", *lowest, *highest);
    if (never > 0)
      warning += fmt::format("{} never for {} of {}", lowest ? "," : "; per layer,", never,
                             result.batch.size());
    warning += " (below)";
  }

  const std::vector<bool> batched = batch_count_scaled(net, ops);
  bool batched_memory_bound = false;
  for (std::size_t i = 0; i < batched.size(); ++i)
    batched_memory_bound |= batched[i] && analysed.ops[i].prediction.bound == bound::memory;
  if (batched_memory_bound) {
    std::set<std::int64_t> kv_lengths;
    kv_cache_lengths(net.layers, kv_lengths);
    std::string cache;
    if (!kv_lengths.empty()) {
      cache = fmt::format(", over a KV cache of {}", *kv_lengths.begin());
      if (kv_lengths.size() > 1)
        cache += fmt::format(" to {}", *kv_lengths.rbegin());
      cache += " tokens";
    }
    warning += "; GEMMs whose batch_count grows with the batch instead of M (attention score and "
               "context GEMMs" +
               cache + ") keep their intensity at any batch: the memory-bound ones stay so";
  }
  return warning;
}

} // namespace

advice advise(const network &net, const analysis &analysed, const perf_model &model,
              double min_speedup) {
  advice result;
  std::vector<op> ops;
  for (const analysed_op &entry : analysed.ops)
    ops.push_back(entry.op);
  const double memory_bound_share = analysed.totals.memory_bound_share;
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
    analysis r;
    try {
      r = analyze(at, model, "batch search");
    } catch (const input_error &) {
      break; // sizes overflow at this batch
    }
    double total = 0, memory = 0;
    for (const auto &[index, rows] : scaled) {
      const analysed_op &entry = r.ops[index];
      total += entry.total_time_s;
      memory += entry.prediction.bound == bound::memory ? entry.total_time_s : 0;
    }
    if (total > 0 && memory < 0.5 * total) {
      result.network_compute_bound_batch = batch;
      break;
    }
  }
  if (memory_bound_share > 0.5)
    result.warnings.push_back(memory_bound_warning(net, analysed, ops, result));
  if (analysed.totals.launch_bound_ops > 0) {
    launch_bound_advice launch;
    launch.ops = analysed.totals.launch_bound_ops;
    launch.time_s = analysed.totals.launch_bound_time_s;
    for (const analysed_op &entry : analysed.ops)
      if (entry.prediction.launch_bound) {
        launch.runs += entry.op.count;
        launch.device_time_s +=
            entry.prediction.device_time_s * static_cast<double>(entry.op.count);
      }
    launch.share = analysed.totals.launch_bound_share;
    launch.step_time_s = analysed.totals.time_s;
    launch.graph_step_time_s = analysed.totals.device_time_s;
    launch.measured_floor = analysed.host.measured;
    if (launch.share >= 0.05) // below, the advice says it without a warning
      result.warnings.push_back(fmt::format(
          "{} of {} ops ({} runs per step, {:.0f}% of the step) are launch-bound: the {} host "
          "issues each more slowly than the GPU runs it ({} of host time, {} on the GPU). A faster "
          "GPU will not shorten them; CUDA graphs (the whole step replayed: {} -> {} predicted) or "
          "fusing ops will",
          launch.ops, analysed.ops.size(), launch.runs, 100 * launch.share,
          launch.measured_floor ? "measured" : "typical", detail::duration(launch.time_s),
          detail::duration(launch.device_time_s), detail::duration(launch.step_time_s),
          detail::duration(launch.graph_step_time_s)));
    result.launch_bound = launch;
  }
  return result;
}

} // namespace roofline
