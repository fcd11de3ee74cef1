// SPDX-License-Identifier: Apache-2.0
#include "roofline/advisor.hpp"

#include "roofline/error.hpp"

#include "checked_math.hpp"
#include "hashing.hpp"
#include "parallel.hpp"
#include "roofline/gemm_model.hpp"
#include "roofline/lowering.hpp"
#include "text_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

namespace roofline {

namespace {

/// `value` (non-negative) rounded up to a multiple of `multiple`; nullopt where that overflows.
std::optional<std::int64_t> round_up(std::int64_t value, std::int64_t multiple) {
  const std::optional<std::int64_t> sum = detail::checked_sum({value, multiple - 1});
  if (!sum)
    return std::nullopt;
  return *sum / multiple * multiple;
}

/// Whether the FLOPs and bytes of `shape` fit 64-bit integers: a padded size past them is no
/// advice (and no op to predict).
bool representable(const gemm_shape &shape, precision p) {
  return gemm_flops(shape) && gemm_min_bytes(shape, p);
}

double predicted_time(const perf_model &model, const gemm_shape &shape, precision p) {
  return model.predict(make_gemm_op("padding", shape, p), reasons::without).time_s;
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
  // Padded shapes keep everything else of the GEMM (its quantized weights).
  const auto padded = [&](std::int64_t n, std::int64_t k) {
    gemm_shape shape = s;
    shape.n = n;
    shape.k = k;
    return shape;
  };
  const std::optional<std::int64_t> aligned_n = round_up(s.n, unit),
                                    aligned_k = round_up(s.k, unit);
  if (!aligned_n || !aligned_k)
    return std::nullopt; // sizes within a tile of 2^63: every padded size overflows
  const gemm_shape aligned = padded(*aligned_n, *aligned_k);
  const bool misaligned = aligned.n != s.n || aligned.k != s.k;
  std::string alignment_reason;
  if (misaligned) {
    std::string broken = aligned.n != s.n ? fmt::format("N={}", s.n) : std::string{};
    if (aligned.k != s.k)
      broken += (broken.empty() ? "" : " and ") + fmt::format("K={}", s.k);
    alignment_reason =
        fmt::format("{} break{} the 16-byte rule of {} (multiples of {})", broken,
                    aligned.n != s.n && aligned.k != s.k ? "" : "s", to_string(o.precision), unit);
    if (representable(aligned, o.precision))
      candidates.push_back({aligned, alignment_reason, true});
  }
  for (std::int64_t multiple : {64, 128, 256}) {
    const std::optional<std::int64_t> wider_n = round_up(s.n, multiple);
    if (!wider_n)
      continue;
    const gemm_shape wider = padded(*wider_n, aligned.k);
    if (wider.n != aligned.n && static_cast<double>(wider.n) <= 1.06 * static_cast<double>(s.n) &&
        representable(wider, o.precision))
      candidates.push_back(
          {wider, fmt::format("N={} to a multiple of {}: fuller tiles and waves", s.n, multiple)});
  }
  for (const candidate &c : candidates) {
    const double padded_time = predicted_time(model, c.shape, o.precision);
    if (padded_time < best.padded_time_s) {
      best.padded = c.shape;
      best.padded_time_s = padded_time;
      // A wider size of a misaligned GEMM fixes the alignment too: say both.
      best.reason = misaligned && !c.alignment_fix ? alignment_reason + "; " + c.reason : c.reason;
    }
  }
  if (best.padded_time_s * min_speedup > time)
    return std::nullopt;
  best.layer = o.layer;
  best.pass = o.pass;
  best.prec = o.precision;
  best.original = s;
  best.time_s = time;
  // Against the shape as it is, not the op's own counts: a conv's bytes are its real tensors' and
  // a mixture's expert GEMM counts its routed rows, neither of which the shape's padding scales.
  // Both shapes are representable: the op's was lowered, the padded one a candidate.
  const auto ratio = [](std::optional<std::int64_t> padded_value,
                        std::optional<std::int64_t> value) {
    return static_cast<double>(padded_value.value()) / static_cast<double>(value.value()) - 1;
  };
  best.extra_flops = ratio(gemm_flops(best.padded), gemm_flops(s));
  best.extra_bytes =
      ratio(gemm_min_bytes(best.padded, o.precision), gemm_min_bytes(s, o.precision));
  return best;
}

/// How a GEMM whose M grows with the batch grows: its rows per sample, and its bytes at twice the
/// network's batch.
struct row_growth {
  double rows_per_sample = 0;
  std::int64_t bytes_at_twice = 0;
};

/// `layers` without their names and places: they lower to the same shapes, FLOPs and bytes, with
/// none of the strings (the advice lowers the network at other batches, many times).
std::vector<layer> unnamed(const std::vector<layer> &layers) {
  std::vector<layer> result;
  result.reserve(layers.size());
  for (const layer &l : layers) {
    layer &copy = result.emplace_back();
    copy.precision = l.precision;
    copy.weights = l.weights;
    if (const auto *block = std::get_if<repeat_block>(&l.body))
      copy.body = repeat_block{block->times, unnamed(block->layers)};
    else
      copy.body = l.body;
  }
  return result;
}

/// The network's ops at another batch, their names and places left out (unnamed); nullopt when
/// its sizes overflow at that batch.
class other_batches {
public:
  explicit other_batches(const network &net) {
    m_net.precision = net.precision;
    m_net.batch = net.batch;
    m_net.seq_len = net.seq_len;
    m_net.mode = net.mode;
    m_net.layers = unnamed(net.layers);
  }

  std::optional<std::vector<op>> lower_at(std::int64_t batch) {
    m_net.batch = batch;
    try {
      return lower(m_net);
    } catch (const input_error &) {
      return std::nullopt;
    }
  }

private:
  network m_net;
};

/// Whether `twice` is 2 × `value` (non-negative), asked without computing 2 × `value`, which may
/// overflow.
bool doubles(std::int64_t value, std::int64_t twice) {
  return twice >= value && twice - value == value;
}

/// Ops whose M grows with the batch, and how, from the ops at twice the batch.
std::vector<std::pair<std::size_t, row_growth>>
batch_scaled(const network &net, const std::vector<op> &ops,
             const std::optional<std::vector<op>> &at_twice) {
  if (!at_twice)
    return {}; // a batch this large cannot double: no batch advice
  const std::vector<op> &twice = *at_twice;
  std::vector<std::pair<std::size_t, row_growth>> scaled;
  for (std::size_t i = 0; i < ops.size() && i < twice.size(); ++i)
    if (ops[i].is_gemm() && twice[i].is_gemm() && doubles(ops[i].gemm->m, twice[i].gemm->m) &&
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
    gemm_shape shape = s;
    shape.m = std::max<std::int64_t>(
        1, std::llround(growth.rows_per_sample * static_cast<double>(batch)));
    return shape;
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
  // Batches people pick (multiples of 8), up to twice the batch, in at most ~2048 steps. (The
  // network lowered at twice its batch, the batch is below 2^62: none of these overflow.)
  const std::int64_t step = *round_up(std::max<std::int64_t>(1, net.batch / 1024), 8);
  const std::int64_t last = 2 * net.batch + 64;
  // A batch worth suggesting fills its last wave and also costs less time per sample (≥ 3% less
  // than now); the current batch qualifies by filling its waves.
  const auto per_sample_s = [&](std::int64_t batch, gemm_estimate *estimate) {
    *estimate = model.estimate_once(shape_at(batch), o.precision, reasons::without);
    return estimate->device_time_s / static_cast<double>(batch);
  };
  gemm_estimate e;
  const double now_s = per_sample_s(net.batch, &e);
  for (std::int64_t batch = net.batch; batch <= last;
       batch = batch == net.batch ? *round_up(net.batch + 1, 8) : batch + step) {
    const double candidate_s = per_sample_s(batch, &e);
    const bool full = e.wave_efficiency >= 0.95 && e.waves >= 1;
    if (full && (batch == net.batch || candidate_s <= 0.97 * now_s)) {
      advice.full_wave_batch = batch;
      break;
    }
  }
  return advice;
}

/// The GEMMs that grow with the batch at one batch: each distinct one once (`distinct`), and which
/// of them each is (`which`, in the order of batch_scaled's list).
struct scaled_at_batch {
  std::vector<op> distinct;
  std::vector<std::size_t> which;
};

/// Whether less than half of those GEMMs' time (`counts`: their runs per step) is memory-bound.
/// Throws input_error as predict() does.
bool mostly_compute_bound(const scaled_at_batch &at, const std::vector<std::int64_t> &counts,
                          const perf_model &model) {
  // Where every one of them is memory-bound, so is their time: no need for the times.
  if (std::all_of(at.distinct.begin(), at.distinct.end(), [&](const op &o) {
        return o.arithmetic_intensity() <
               model.spec().ridge_intensity(o.precision, model.options().sparse);
      }))
    return false;
  std::vector<prediction> predicted;
  predicted.reserve(at.distinct.size());
  for (const op &o : at.distinct)
    predicted.push_back(model.predict(o, reasons::without));
  double total = 0, memory = 0;
  for (std::size_t i = 0; i < at.which.size(); ++i) {
    const prediction &p = predicted[at.which[i]];
    const double time_s = p.time_s * static_cast<double>(counts[i]);
    total += time_s;
    memory += p.bound == bound::memory ? time_s : 0;
  }
  return total > 0 && memory < 0.5 * total;
}

/// What a GEMM's lowering says of it that the model reads: its shape, precision, FLOPs and bytes.
using op_numbers = std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t, int,
                              std::int64_t, std::int64_t>;

op_numbers numbers_of(const op &o) {
  return {o.gemm->m, o.gemm->n, o.gemm->k, o.gemm->batch_count, static_cast<int>(o.precision),
          o.flops,   o.bytes};
}

/// Integers as the key of a hashed table (networks have up to 100,000 layers).
template <std::size_t size> struct integers_key {
  std::array<std::int64_t, size> values;

  bool operator==(const integers_key &o) const { return values == o.values; }
  struct hash {
    std::size_t operator()(const integers_key &key) const noexcept {
      return detail::hash_integers(key.values);
    }
  };
};

/// The GEMMs that grow with the batch, grouped by all the batch searches read of them (their
/// numbers at the batch, their bytes at twice it): `first[g]` is group g's first GEMM (an index
/// into batch_scaled's list), `of[i]` the group of GEMM i.
struct growth_groups {
  std::vector<std::size_t> first, of;
};

growth_groups group_by_growth(const std::vector<op> &ops, const std::vector<op> &twice,
                              const std::vector<std::pair<std::size_t, row_growth>> &scaled) {
  growth_groups groups;
  groups.of.reserve(scaled.size());
  std::unordered_map<integers_key<8>, std::size_t, integers_key<8>::hash> index;
  for (std::size_t i = 0; i < scaled.size(); ++i) {
    const op &o = ops[scaled[i].first];
    const integers_key<8> key{{o.gemm->m, o.gemm->n, o.gemm->k, o.gemm->batch_count,
                               static_cast<int>(o.precision), o.flops, o.bytes,
                               twice[scaled[i].first].bytes}};
    const auto [found, added] = index.try_emplace(key, groups.first.size());
    if (added)
      groups.first.push_back(i);
    groups.of.push_back(found->second);
  }
  return groups;
}

/// The smallest power-of-two batch ≤ 65536 at which less than half the time of the GEMMs that grow
/// with the batch (`scaled`) is memory-bound; nullopt when there is none, or when the network's
/// sizes overflow first. `ops` and `twice` are the network's ops at its batch and twice it.
///
/// Those GEMMs' M and FLOPs grow in proportion to the batch and their bytes affinely (the weights
/// once, the activations per sample), so their numbers at any batch follow from `ops` and `twice`:
/// the search predicts each distinct GEMM once per batch, without lowering the network there. The
/// batch found is checked against the network lowered at it (its sizes may overflow there, as they
/// do at every larger batch); where a GEMM does not follow so, the network is lowered at every
/// batch searched instead.
std::optional<std::int64_t>
compute_bound_batch(const network &net, const std::vector<op> &ops, const std::vector<op> &twice,
                    const std::vector<std::pair<std::size_t, row_growth>> &scaled,
                    const growth_groups &groups, other_batches &batches, const perf_model &model) {
  constexpr std::int64_t largest = 65536;
  if (scaled.empty())
    return std::nullopt;
  const std::int64_t now = net.batch;
  std::vector<std::int64_t> counts;
  counts.reserve(scaled.size());
  for (const auto &entry : scaled)
    counts.push_back(ops[entry.first].count);

  // Per group: M and FLOPs per sample, bytes per sample and fixed.
  struct growth_line {
    op at_now;
    std::int64_t rows, flops, bytes, fixed_bytes;
  };
  bool affine = true;
  for (const auto &[index, growth] : scaled) {
    const op &o = ops[index];
    const op &t = twice[index];
    const std::int64_t slope = t.bytes - o.bytes;
    affine = affine && o.gemm->m % now == 0 && o.flops % now == 0 && doubles(o.flops, t.flops) &&
             slope >= 0 && slope % now == 0 && o.bytes >= slope && t.count == o.count &&
             t.precision == o.precision && t.gemm->n == o.gemm->n && t.gemm->k == o.gemm->k;
  }
  std::vector<growth_line> lines;
  if (affine) {
    lines.reserve(groups.first.size());
    for (std::size_t first : groups.first) {
      const op &o = ops[scaled[first].first];
      const std::int64_t slope = twice[scaled[first].first].bytes - o.bytes;
      op at_now;
      at_now.gemm = *o.gemm;
      at_now.precision = o.precision;
      lines.push_back({at_now, o.gemm->m / now, o.flops / now, slope / now, o.bytes - slope});
    }
  }

  if (affine) {
    scaled_at_batch at;
    at.which = groups.of;
    for (std::int64_t batch = 1; batch <= largest; batch *= 2) {
      at.distinct.clear();
      for (const growth_line &line : lines) {
        const std::optional<std::int64_t> rows = detail::checked_product({line.rows, batch}),
                                          flops = detail::checked_product({line.flops, batch}),
                                          bytes = detail::checked_sum(
                                              {line.fixed_bytes,
                                               detail::checked_product({line.bytes, batch})});
        if (!rows || !flops || !bytes)
          return std::nullopt; // sizes overflow at this batch: the network's lowering does too
        op o = line.at_now;
        o.gemm->m = *rows;
        o.flops = *flops;
        o.bytes = *bytes;
        at.distinct.push_back(std::move(o));
      }
      try {
        if (!mostly_compute_bound(at, counts, model))
          continue;
      } catch (const input_error &) {
        return std::nullopt;
      }
      const std::optional<std::vector<op>> lowered = batches.lower_at(batch);
      if (!lowered)
        return std::nullopt; // sizes overflow at this batch (or before)
      bool followed = true;
      for (std::size_t i = 0; i < scaled.size() && followed; ++i) {
        const op &real = (*lowered)[scaled[i].first];
        followed = real.is_gemm() && numbers_of(real) == numbers_of(at.distinct[at.which[i]]) &&
                   real.count == counts[i];
      }
      if (followed)
        return batch;
      affine = false; // not as it grows: lowered at every batch below
      break;
    }
    if (affine)
      return std::nullopt;
  }

  // Lowered at every batch: the GEMMs' numbers as the network has them there.
  for (std::int64_t batch = 1; batch <= largest; batch *= 2) {
    const std::optional<std::vector<op>> lowered = batches.lower_at(batch);
    if (!lowered)
      return std::nullopt; // sizes overflow at this batch
    scaled_at_batch at;
    std::map<op_numbers, std::size_t> index;
    for (std::size_t i = 0; i < scaled.size(); ++i) {
      const op &o = (*lowered)[scaled[i].first];
      counts[i] = o.count;
      const auto [found, added] = index.try_emplace(numbers_of(o), at.distinct.size());
      if (added)
        at.distinct.push_back(o);
      at.which.push_back(found->second);
    }
    try {
      if (mostly_compute_bound(at, counts, model))
        return batch;
    } catch (const input_error &) {
      return std::nullopt;
    }
  }
  return std::nullopt;
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
/// and context GEMMs and their gradients; not a mixture's experts, whose batch_count follows the
/// routing), from the ops at twice the batch.
std::vector<bool> batch_count_scaled(const std::vector<op> &ops,
                                     const std::optional<std::vector<op>> &at_twice) {
  std::vector<bool> scaled(ops.size(), false);
  if (!at_twice)
    return scaled; // a batch this large cannot double: nothing to say of what grows with it
  const std::vector<op> &twice = *at_twice;
  for (std::size_t i = 0; i < ops.size() && i < twice.size(); ++i)
    scaled[i] = ops[i].is_gemm() && !ops[i].routed && twice[i].is_gemm() &&
                twice[i].gemm->m == ops[i].gemm->m &&
                doubles(ops[i].gemm->batch_count, twice[i].gemm->batch_count);
  return scaled;
}

/// Most of the step is memory-bound: how much, in what (GEMMs or memory-bound ops), what a larger
/// batch does to the weight GEMMs (the searched batch said as such, beside the per-layer range of
/// the batch advice, so the two never seem to disagree), and which GEMMs no batch helps. Names only
/// what the network has: attention GEMMs when it has some, a KV cache when one is described.
std::string memory_bound_warning(const network &net, const analysis &analysed,
                                 const std::vector<op> &ops,
                                 const std::optional<std::vector<op>> &at_twice,
                                 const advice &result) {
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

  const std::vector<bool> batched = batch_count_scaled(ops, at_twice);
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

advice advise(const analysis &analysed, double min_speedup) {
  const network &net = analysed.network;
  // The analysis's own model: its memo already holds the network's GEMMs.
  const perf_model &model = analysed.model;
  advice result;
  std::vector<op> ops;
  for (const analysed_op &entry : analysed.ops)
    ops.push_back(entry.op);
  const double memory_bound_share = analysed.totals.memory_bound_share;
  std::unordered_set<integers_key<5>, integers_key<5>::hash> seen;
  for (const op &o : ops) {
    if (!o.is_gemm() ||
        !seen.insert(integers_key<5>{{o.gemm->m, o.gemm->n, o.gemm->k, o.gemm->batch_count,
                                      static_cast<int>(o.precision)}})
             .second)
      continue;
    if (auto padding = pad(o, model, min_speedup))
      result.padding.push_back(*padding);
  }
  other_batches batches(net);
  // A batch past 2^62 cannot double: no batch advice, as where the network's sizes overflow there.
  const std::optional<std::int64_t> twice_batch = detail::checked_product({net.batch, 2});
  const std::optional<std::vector<op>> at_twice =
      twice_batch ? batches.lower_at(*twice_batch) : std::nullopt;
  const auto scaled = batch_scaled(net, ops, at_twice);
  // GEMMs that grow alike get the same batch advice: searched once per group.
  const growth_groups groups = at_twice ? group_by_growth(ops, *at_twice, scaled) : growth_groups{};
  // Each group's search is its own (its shapes are the group's): on every core.
  std::vector<batch_advice> sized(groups.first.size());
  detail::parallel_for(sized.size(), [&](std::size_t g) {
    const std::size_t first = groups.first[g];
    sized[g] = batch_sizes(ops[scaled[first].first], scaled[first].second, net, model);
  });
  for (std::size_t i = 0; i < scaled.size(); ++i) {
    const op &o = ops[scaled[i].first];
    batch_advice advice = sized[groups.of[i]];
    advice.layer = o.layer;
    advice.pass = o.pass;
    result.batch.push_back(std::move(advice));
  }

  if (at_twice)
    result.network_compute_bound_batch =
        compute_bound_batch(net, ops, *at_twice, scaled, groups, batches, model);
  if (memory_bound_share > 0.5)
    result.warnings.push_back(memory_bound_warning(net, analysed, ops, at_twice, result));
  if (analysed.totals.launch_bound_ops > 0) {
    launch_bound_advice launch;
    launch.ops = analysed.totals.launch_bound_ops;
    launch.time_s = analysed.totals.launch_bound_time_s;
    for (const analysed_op &entry : analysed.ops)
      if (entry.prediction.launch_bound) {
        launch.runs =
            detail::require_no_overflow(detail::checked_sum({launch.runs, entry.op.count}),
                                        entry.op.where, "layer `" + entry.op.layer + "`",
                                        "the count of the step's runs of launch-bound ops (the "
                                        "repeat counts of every one up to it)");
        launch.device_time_s +=
            entry.prediction.device_time_s * static_cast<double>(entry.op.count);
      }
    launch.share = analysed.totals.launch_bound_share;
    launch.step_time_s = analysed.totals.time_s;
    launch.graph_step_time_s = analysed.totals.device_time_s;
    launch.measured_floor = analysed.model.host().measured;
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
