// SPDX-License-Identifier: Apache-2.0
#include "roofline/padding_advice.hpp"

#include "checked_math.hpp"
#include "hashing.hpp"

#include <fmt/format.h>

#include <optional>
#include <unordered_set>

namespace roofline {

namespace {

/// Whether the FLOPs and bytes of `shape` fit 64-bit integers: a padded size past them is no
/// advice (and no op to predict).
bool representable(const gemm_shape &shape, precision p) {
  return gemm_flops(shape) && gemm_min_bytes(shape, p);
}

double predicted_time(const perf_model &model, const gemm_shape &shape, precision p) {
  return model.predict(make_gemm_op("padding", shape, p), reasons::without).time_s;
}

/// A padded shape worth predicting.
struct candidate {
  gemm_shape shape;
  std::string reason;
  bool alignment_fix = false; ///< the 16-byte fix itself, not a wider size
};

/// The shapes a GEMM may be padded to: the alignment fix of N and K, then sizes of N up to 6%
/// larger that fill tiles and waves better. N is the layer's output features and K its input
/// features, both the network designer's to choose; M is the batch (see batch advice).
struct candidates {
  std::vector<candidate> shapes;
  bool misaligned = false;
  std::string alignment_reason; ///< set when misaligned
};

std::optional<candidates> candidates_of(const gemm_shape &s, precision p) {
  const std::int64_t unit = alignment_elements(p);
  // Padded shapes keep everything else of the GEMM (its quantized weights).
  const auto padded = [&](std::int64_t n, std::int64_t k) {
    gemm_shape shape = s;
    shape.n = n;
    shape.k = k;
    return shape;
  };
  const std::optional<std::int64_t> aligned_n = detail::checked_round_up(s.n, unit),
                                    aligned_k = detail::checked_round_up(s.k, unit);
  if (!aligned_n || !aligned_k)
    return std::nullopt; // sizes within a tile of 2^63: every padded size overflows
  candidates result;
  const gemm_shape aligned = padded(*aligned_n, *aligned_k);
  result.misaligned = aligned.n != s.n || aligned.k != s.k;
  if (result.misaligned) {
    std::string broken = aligned.n != s.n ? fmt::format("N={}", s.n) : std::string{};
    if (aligned.k != s.k)
      broken += (broken.empty() ? "" : " and ") + fmt::format("K={}", s.k);
    result.alignment_reason =
        fmt::format("{} break{} the 16-byte rule of {} (multiples of {})", broken,
                    aligned.n != s.n && aligned.k != s.k ? "" : "s", to_string(p), unit);
    if (representable(aligned, p))
      result.shapes.push_back({aligned, result.alignment_reason, true});
  }
  for (std::int64_t multiple : {64, 128, 256}) {
    const std::optional<std::int64_t> wider_n = detail::checked_round_up(s.n, multiple);
    if (!wider_n)
      continue;
    const gemm_shape wider = padded(*wider_n, aligned.k);
    if (wider.n != aligned.n && static_cast<double>(wider.n) <= 1.06 * static_cast<double>(s.n) &&
        representable(wider, p))
      result.shapes.push_back(
          {wider, fmt::format("N={} to a multiple of {}: fuller tiles and waves", s.n, multiple)});
  }
  return result;
}

/// The best padding of one GEMM, when it gains at least `min_speedup`.
std::optional<padding_advice> pad(const op &o, const perf_model &model, double min_speedup) {
  const gemm_shape &s = *o.gemm;
  const double time = predicted_time(model, s, o.precision);
  const std::optional<candidates> padded = candidates_of(s, o.precision);
  if (!padded)
    return std::nullopt;
  padding_advice best;
  best.padded_time_s = time;
  for (const candidate &c : padded->shapes) {
    const double padded_time = predicted_time(model, c.shape, o.precision);
    if (padded_time < best.padded_time_s) {
      best.padded = c.shape;
      best.padded_time_s = padded_time;
      // A wider size of a misaligned GEMM fixes the alignment too: say both.
      best.reason = padded->misaligned && !c.alignment_fix
                        ? padded->alignment_reason + "; " + c.reason
                        : c.reason;
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

} // namespace

std::vector<padding_advice> advise_padding(const analysis &analysed, double min_speedup) {
  std::vector<padding_advice> result;
  std::unordered_set<detail::integers_key<5>, detail::integers_key<5>::hash> seen;
  for (const analysed_op &entry : analysed.ops) {
    const op &o = entry.op;
    if (!o.is_gemm() ||
        !seen.insert(detail::integers_key<5>{{o.gemm->m, o.gemm->n, o.gemm->k, o.gemm->batch_count,
                                              static_cast<int>(o.precision)}})
             .second)
      continue;
    if (auto padding = pad(o, analysed.model, min_speedup))
      result.push_back(*padding);
  }
  return result;
}

} // namespace roofline
