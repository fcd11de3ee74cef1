// SPDX-License-Identifier: Apache-2.0
#include "roofline/analysis/batch_advice.hpp"

#include "checked_math.hpp"
#include "hashing.hpp"
#include "parallel.hpp"
#include "roofline/analysis/lowering.hpp"
#include "roofline/common/error.hpp"
#include "roofline/model/gemm_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

namespace roofline {

namespace {

/// Whether `twice` is 2 × `value` (non-negative), asked without computing 2 × `value`, which may
/// overflow.
bool doubles(std::int64_t value, std::int64_t twice) {
  return twice >= value && twice - value == value;
}

/// A GEMM whose M grows with the batch: its place among the analysis's ops, and its FLOPs and
/// bytes at twice the batch.
struct growing_gemm {
  std::size_t index = 0;
  std::int64_t flops_at_twice = 0, bytes_at_twice = 0;
};

/// The GEMMs that grow with the batch, seen at twice it.
struct growth {
  std::vector<growing_gemm> rows; ///< M doubles with the batch, batch_count does not
  std::vector<bool> instances;    ///< per op: batch_count doubles with the batch, M does not
};

/// What grows with the batch, from lowering's tags; nullopt when the batch cannot double (twice
/// it, or a GEMM's sizes there, overflow 64 bits).
std::optional<growth> growth_of(const analysis &a) {
  const std::int64_t batch = a.network.batch;
  const std::optional<std::int64_t> twice = detail::checked_product({batch, 2});
  if (!twice)
    return std::nullopt;
  growth result;
  result.instances.assign(a.ops.size(), false);
  for (std::size_t i = 0; i < a.ops.size(); ++i) {
    const op &o = a.ops[i].op;
    if (!o.is_gemm() || o.scaling.growth == batch_growth::none)
      continue;
    const std::optional<op> t = at_batch(o, batch, *twice);
    if (!t)
      return std::nullopt;
    if (o.scaling.growth == batch_growth::instances)
      result.instances[i] = true;
    // A routed GEMM's M doubles where its tokens reach as many experts at both batches.
    else if (doubles(o.gemm->m, t->gemm->m) && t->gemm->batch_count == o.gemm->batch_count)
      result.rows.push_back({i, t->flops, t->bytes});
  }
  return result;
}

/// The smallest batch at which `o` (M growing with `batch`, its bytes `bytes_at_twice` at twice
/// it) reaches the ridge; nullopt: none up to 2^20.
std::optional<std::int64_t> compute_bound_at(const op &o, std::int64_t bytes_at_twice,
                                             std::int64_t batch, const perf_model &model) {
  const double ridge = model.spec().ridge_intensity(o.precision, model.options().sparse);
  // The op's own bytes, as the table shows them, not gemm_min_bytes of its shape: a conv reads its
  // real input (lowering), not the im2col matrix. FLOPs grow in proportion to the batch, bytes
  // affinely (the weights once, activations per sample): both from the op at batch and twice it.
  const double now = static_cast<double>(batch);
  const double flops_per_sample = static_cast<double>(o.flops) / now;
  const double bytes_per_sample = static_cast<double>(bytes_at_twice - o.bytes) / now;
  const double fixed_bytes = static_cast<double>(o.bytes) - bytes_per_sample * now;
  const auto intensity = [&](std::int64_t b) {
    const double samples = static_cast<double>(b);
    return flops_per_sample * samples / (fixed_bytes + bytes_per_sample * samples);
  };
  // Intensity grows with the batch towards flops_per_sample / bytes_per_sample (a linear layer's:
  // 2·N·K / (element size · (N + K))): search the doubling, then bisect.
  std::int64_t high = 1;
  while (high <= (std::int64_t{1} << 20) && intensity(high) < ridge)
    high *= 2;
  if (high > (std::int64_t{1} << 20))
    return std::nullopt;
  std::int64_t low = high / 2;
  while (high - low > 1) {
    const std::int64_t middle = (low + high) / 2;
    (intensity(middle) < ridge ? low : high) = middle;
  }
  return high;
}

/// The batch worth suggesting to `o` (M growing with `batch`): one that fills its last wave and
/// costs less time per sample (≥ 3% less than now); the current batch qualifies by filling its
/// waves. Batches people pick (multiples of 8), up to twice the batch, in at most ~2048 steps.
/// (The batch doubles, and is below 2^62: none of these overflow.)
std::optional<std::int64_t> full_wave_at(const op &o, std::int64_t batch, const perf_model &model) {
  const double rows_per_sample = static_cast<double>(o.gemm->m) / static_cast<double>(batch);
  const auto per_sample_s = [&](std::int64_t b, gemm_estimate *estimate) {
    gemm_shape shape = *o.gemm;
    shape.m = std::max<std::int64_t>(1, std::llround(rows_per_sample * static_cast<double>(b)));
    *estimate = model.estimate_once(shape, o.precision, reasons::without);
    return estimate->device_time_s / static_cast<double>(b);
  };
  const std::int64_t step = *detail::checked_round_up(std::max<std::int64_t>(1, batch / 1024), 8);
  const std::int64_t last = 2 * batch + 64;
  gemm_estimate e;
  const double now_s = per_sample_s(batch, &e);
  for (std::int64_t b = batch; b <= last;
       b = b == batch ? *detail::checked_round_up(batch + 1, 8) : b + step) {
    const double candidate_s = per_sample_s(b, &e);
    const bool full = e.wave_efficiency >= full_last_wave_efficiency && e.waves >= 1;
    if (full && (b == batch || candidate_s <= 0.97 * now_s))
      return b;
  }
  return std::nullopt;
}

/// The growing GEMMs grouped by all the batch searches read of them (their numbers at the batch,
/// their bytes at twice it): `first[g]` is group g's first GEMM (an index into the growing
/// list), `of[i]` the group of GEMM i.
struct growth_groups {
  std::vector<std::size_t> first, of;
};

growth_groups group_by_growth(const analysis &a, const std::vector<growing_gemm> &growing) {
  growth_groups groups;
  groups.of.reserve(growing.size());
  std::unordered_map<detail::integers_key<8>, std::size_t, detail::integers_key<8>::hash> index;
  for (std::size_t i = 0; i < growing.size(); ++i) {
    const op &o = a.ops[growing[i].index].op;
    const detail::integers_key<8> key{{o.gemm->m, o.gemm->n, o.gemm->k, o.gemm->batch_count,
                                       static_cast<int>(o.precision), o.flops, o.bytes,
                                       growing[i].bytes_at_twice}};
    const auto [found, added] = index.try_emplace(key, groups.first.size());
    if (added)
      groups.first.push_back(i);
    groups.of.push_back(found->second);
  }
  return groups;
}

/// Batch sizes per growing GEMM, each group searched once, the groups on every core (each
/// search is its own: its shapes are the group's).
std::vector<batch_advice> batch_sizes(const analysis &a, const std::vector<growing_gemm> &growing,
                                      const growth_groups &groups) {
  const std::int64_t batch = a.network.batch;
  std::vector<batch_advice> sized(groups.first.size());
  detail::parallel_for(sized.size(), [&](std::size_t g) {
    const growing_gemm &gemm = growing[groups.first[g]];
    const op &o = a.ops[gemm.index].op;
    sized[g].batch = batch;
    sized[g].compute_bound_batch = compute_bound_at(o, gemm.bytes_at_twice, batch, a.model);
    sized[g].full_wave_batch = full_wave_at(o, batch, a.model);
  });
  std::vector<batch_advice> result;
  result.reserve(growing.size());
  for (std::size_t i = 0; i < growing.size(); ++i) {
    const op &o = a.ops[growing[i].index].op;
    batch_advice advice = sized[groups.of[i]];
    advice.layer = o.layer;
    advice.pass = o.pass;
    result.push_back(std::move(advice));
  }
  return result;
}

// ------------------------------------------------------------------ the network's compute-bound
// batch

/// The growing GEMMs at one batch: each distinct one once (`distinct`), and which of them each is
/// (`which`, in the order of the growing list).
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

/// The growing GEMMs as lowering makes them at `batch` (at_batch), in the growing list's order;
/// nullopt where their sizes overflow there.
std::optional<std::vector<op>>
remade_at(const analysis &a, const std::vector<growing_gemm> &growing, std::int64_t batch) {
  std::vector<op> result;
  result.reserve(growing.size());
  for (const growing_gemm &gemm : growing) {
    std::optional<op> o = at_batch(a.ops[gemm.index].op, a.network.batch, batch);
    if (!o)
      return std::nullopt;
    result.push_back(std::move(*o));
  }
  return result;
}

/// A group's GEMM as lines through the batch: M and FLOPs per sample, bytes per sample and fixed.
struct growth_line {
  op at_now; ///< its shape and precision
  std::int64_t rows, flops, bytes, fixed_bytes;
};

/// The groups' lines, from their sizes at the batch and twice it; nullopt where some GEMM does not
/// follow one (a routed GEMM whose experts reached change with the batch).
std::optional<std::vector<growth_line>> growth_lines(const analysis &a,
                                                     const std::vector<growing_gemm> &growing,
                                                     const growth_groups &groups) {
  const std::int64_t now = a.network.batch;
  for (const growing_gemm &gemm : growing) {
    const op &o = a.ops[gemm.index].op;
    // at_batch keeps a GEMM's count, precision, N and K: the line is in M, FLOPs and bytes.
    const std::int64_t slope = gemm.bytes_at_twice - o.bytes;
    if (o.gemm->m % now != 0 || o.flops % now != 0 || !doubles(o.flops, gemm.flops_at_twice) ||
        slope < 0 || slope % now != 0 || o.bytes < slope)
      return std::nullopt;
  }
  std::vector<growth_line> lines;
  lines.reserve(groups.first.size());
  for (std::size_t first : groups.first) {
    const op &o = a.ops[growing[first].index].op;
    const std::int64_t slope = growing[first].bytes_at_twice - o.bytes;
    op at_now;
    at_now.gemm = *o.gemm;
    at_now.precision = o.precision;
    lines.push_back({at_now, o.gemm->m / now, o.flops / now, slope / now, o.bytes - slope});
  }
  return lines;
}

/// The groups' GEMMs at `batch` along their lines; nullopt where their sizes overflow there.
std::optional<scaled_at_batch> along_lines(const std::vector<growth_line> &lines,
                                           const growth_groups &groups, std::int64_t batch) {
  scaled_at_batch at;
  at.which = groups.of;
  for (const growth_line &line : lines) {
    const std::optional<std::int64_t> rows = detail::checked_product({line.rows, batch}),
                                      flops = detail::checked_product({line.flops, batch}),
                                      bytes = detail::checked_sum(
                                          {line.fixed_bytes,
                                           detail::checked_product({line.bytes, batch})});
    if (!rows || !flops || !bytes)
      return std::nullopt;
    op o = line.at_now;
    o.gemm->m = *rows;
    o.flops = *flops;
    o.bytes = *bytes;
    at.distinct.push_back(std::move(o));
  }
  return at;
}

constexpr std::int64_t largest_searched_batch = 65536;

/// The search along the lines: predicts each group once per batch. The batch found is checked
/// against the GEMMs remade there; `unsure` is set where they do not follow the lines.
std::optional<std::int64_t>
search_along_lines(const analysis &a, const std::vector<growing_gemm> &growing,
                   const growth_groups &groups, const std::vector<growth_line> &lines,
                   const std::vector<std::int64_t> &counts, bool &unsure) {
  for (std::int64_t batch = 1; batch <= largest_searched_batch; batch *= 2) {
    const std::optional<scaled_at_batch> at = along_lines(lines, groups, batch);
    if (!at)
      return std::nullopt; // sizes overflow at this batch, and at every larger one
    try {
      if (!mostly_compute_bound(*at, counts, a.model))
        continue;
    } catch (const input_error &) {
      return std::nullopt;
    }
    const std::optional<std::vector<op>> remade = remade_at(a, growing, batch);
    if (!remade)
      return std::nullopt;
    for (std::size_t i = 0; i < growing.size(); ++i) {
      const op &real = (*remade)[i];
      if (numbers_of(real) != numbers_of(at->distinct[at->which[i]]) || real.count != counts[i]) {
        unsure = true;
        return std::nullopt;
      }
    }
    return batch;
  }
  return std::nullopt;
}

/// The search with every GEMM remade at each batch searched.
std::optional<std::int64_t> search_remade(const analysis &a,
                                          const std::vector<growing_gemm> &growing,
                                          std::vector<std::int64_t> &counts) {
  for (std::int64_t batch = 1; batch <= largest_searched_batch; batch *= 2) {
    const std::optional<std::vector<op>> remade = remade_at(a, growing, batch);
    if (!remade)
      return std::nullopt; // sizes overflow at this batch
    scaled_at_batch at;
    std::map<op_numbers, std::size_t> index;
    for (std::size_t i = 0; i < growing.size(); ++i) {
      const op &o = (*remade)[i];
      counts[i] = o.count;
      const auto [found, added] = index.try_emplace(numbers_of(o), at.distinct.size());
      if (added)
        at.distinct.push_back(o);
      at.which.push_back(found->second);
    }
    try {
      if (mostly_compute_bound(at, counts, a.model))
        return batch;
    } catch (const input_error &) {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

/// The smallest power-of-two batch ≤ 65536 at which less than half the time of the growing GEMMs
/// is memory-bound; nullopt when there is none, or when their sizes overflow first.
///
/// Those GEMMs' M and FLOPs grow in proportion to the batch and their bytes affinely (the weights
/// once, the activations per sample), so their numbers at any batch follow from the batch and
/// twice it: the search predicts each group once per batch. The batch found is checked against
/// the GEMMs remade there (at_batch); where a GEMM does not follow so (a mixture's experts), they
/// are remade at every batch searched instead.
std::optional<std::int64_t> compute_bound_batch(const analysis &a,
                                                const std::vector<growing_gemm> &growing,
                                                const growth_groups &groups) {
  if (growing.empty())
    return std::nullopt;
  std::vector<std::int64_t> counts;
  counts.reserve(growing.size());
  for (const growing_gemm &gemm : growing)
    counts.push_back(a.ops[gemm.index].op.count);
  if (const std::optional<std::vector<growth_line>> lines = growth_lines(a, growing, groups)) {
    bool unsure = false;
    const std::optional<std::int64_t> found =
        search_along_lines(a, growing, groups, *lines, counts, unsure);
    if (!unsure)
      return found;
  }
  return search_remade(a, growing, counts);
}

// ------------------------------------------------------------------ the memory-bound warning

/// How much of the step is memory-bound and in what: GEMMs, or memory-bound ops (by kind).
std::string memory_bound_share(const analysis &a) {
  double gemm_memory_s = 0, other_memory_s = 0;
  std::vector<std::string> other_kinds; // the memory-bound ops' kinds, in order of first use
  for (const analysed_op &entry : a.ops) {
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
  const double whole = std::round(100 * a.totals.memory_bound_share);
  std::string warning = fmt::format(
      "{:.0f}% of the step's predicted time is memory-bound at batch {}", whole, a.network.batch);
  if (other_memory_s <= 0)
    return warning + ": the GEMMs read more bytes than they have FLOPs to hide them";
  if (gemm_memory_s <= 0)
    return warning + fmt::format(", all of it in {} ops (memory-bound at any batch)", kinds);
  const double in_gemms = std::min(whole, std::round(100 * gemm_memory_s / a.totals.time_s));
  return warning + fmt::format(": {:.0f}% in GEMMs that read more bytes than they have FLOPs to "
                               "hide them, {:.0f}% in {} ops (memory-bound at any batch)",
                               in_gemms, whole - in_gemms, kinds);
}

/// Where the weight GEMMs turn compute-bound only past what fits in memory: what that means and
/// which levers are left; "" otherwise.
std::string beyond_memory(const batch_outlook &outlook) {
  if (!outlook.compute_bound_beyond_memory)
    return {};
  return fmt::format("; most of the weight GEMMs' time turns compute-bound only from batch {} "
                     "(powers of two searched), past the largest batch that fits in memory ({}): "
                     "memory-bound at every batch that fits, so more bandwidth, quantized weights "
                     "or more GPUs are the levers, not a larger batch",
                     *outlook.compute_bound_beyond_memory, *outlook.largest_fitting_batch);
}

/// What a larger batch does to the weight GEMMs: the searched batch said as such, beside the
/// per-layer range of the batch advice, so the two never seem to disagree; "" when no larger
/// batch that fits is compute-bound.
std::string larger_batch(const batch_outlook &outlook, std::int64_t batch) {
  if (!outlook.network_compute_bound_batch || *outlook.network_compute_bound_batch <= batch)
    return beyond_memory(outlook);
  std::string phrase = fmt::format("; at batch {} (powers of two searched) most of the weight "
                                   "GEMMs' time is compute-bound",
                                   *outlook.network_compute_bound_batch);
  std::optional<std::int64_t> lowest, highest;
  std::size_t never = 0;
  for (const batch_advice &b : outlook.gemms) {
    if (!b.compute_bound_batch) {
      ++never;
      continue;
    }
    lowest = std::min(lowest.value_or(*b.compute_bound_batch), *b.compute_bound_batch);
    highest = std::max(highest.value_or(*b.compute_bound_batch), *b.compute_bound_batch);
  }
  if (lowest)
    phrase += *lowest == *highest
                  ? fmt::format("; per layer, from batch {}", *lowest)
                  : fmt::format("; per layer, from batch {} to {}", *lowest, *highest);
  const std::size_t beyond = static_cast<std::size_t>(
      std::count_if(outlook.gemms.begin(), outlook.gemms.end(),
                    [](const batch_advice &b) { return b.compute_bound_beyond_memory; }));
  if (beyond > 0)
    phrase += fmt::format("{} beyond what fits in memory for {} of {}",
                          lowest ? "," : "; per layer,", beyond, outlook.gemms.size());
  if (never > beyond)
    phrase += fmt::format("{} never for {} of {}", lowest || beyond ? "," : "; per layer,",
                          never - beyond, outlook.gemms.size());
  return phrase + " (below)";
}

/// `outlook` with no advice of a batch larger than `largest` (the largest that fits in memory):
/// what lay beyond it is said as such.
void within_memory(batch_outlook &outlook, std::int64_t largest) {
  outlook.largest_fitting_batch = largest;
  for (batch_advice &b : outlook.gemms) {
    if (b.compute_bound_batch && *b.compute_bound_batch > largest) {
      b.compute_bound_batch.reset();
      b.compute_bound_beyond_memory = true;
    }
    if (b.full_wave_batch && *b.full_wave_batch > largest)
      b.full_wave_batch.reset();
  }
  if (outlook.network_compute_bound_batch && *outlook.network_compute_bound_batch > largest) {
    outlook.compute_bound_beyond_memory = outlook.network_compute_bound_batch;
    outlook.network_compute_bound_batch.reset();
  }
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

/// Which GEMMs no batch helps: those whose batch_count, not M, grows with it (`instances`), when
/// some are memory-bound; names a KV cache when the network describes one. "" when none is.
std::string batch_count_gemms(const analysis &a, const std::vector<bool> &instances) {
  bool memory_bound = false;
  for (std::size_t i = 0; i < instances.size(); ++i)
    memory_bound |= instances[i] && a.ops[i].prediction.bound == bound::memory;
  if (!memory_bound)
    return {};
  // Only here is the network's layer tree read again: the cache lengths are no op's.
  std::set<std::int64_t> kv_lengths;
  kv_cache_lengths(a.network.layers, kv_lengths);
  std::string cache;
  if (!kv_lengths.empty()) {
    cache = fmt::format(", over a KV cache of {}", *kv_lengths.begin());
    if (kv_lengths.size() > 1)
      cache += fmt::format(" to {}", *kv_lengths.rbegin());
    cache += " tokens";
  }
  return "; GEMMs whose batch_count grows with the batch instead of M (attention score and "
         "context GEMMs" +
         cache + ") keep their intensity at any batch: the memory-bound ones stay so";
}

} // namespace

batch_outlook advise_batch(const analysis &analysed) {
  batch_outlook outlook;
  const std::optional<growth> grows = growth_of(analysed);
  if (grows) {
    // GEMMs that grow alike get the same batch advice: searched once per group.
    const growth_groups groups = group_by_growth(analysed, grows->rows);
    outlook.gemms = batch_sizes(analysed, grows->rows, groups);
    outlook.network_compute_bound_batch = compute_bound_batch(analysed, grows->rows, groups);
  }
  if (analysed.memory) // no advice names a batch that does not fit
    within_memory(outlook, analysed.memory->max_batch.value_or(0));
  if (analysed.totals.memory_bound_share > 0.5)
    outlook.memory_bound_warning =
        memory_bound_share(analysed) + larger_batch(outlook, analysed.network.batch) +
        (grows ? batch_count_gemms(analysed, grows->instances) : std::string{});
  return outlook;
}

} // namespace roofline
