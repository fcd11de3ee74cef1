// SPDX-License-Identifier: Apache-2.0
#include "roofline/analysis/padding_advice.hpp"

#include "checked_math.hpp"
#include "hashing.hpp"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <numeric>
#include <optional>
#include <string>
#include <unordered_set>
#include <variant>
#include <vector>

namespace roofline {

namespace {

/// Whether the FLOPs and bytes of `shape` fit 64-bit integers: a padded size past them is no
/// advice (and no op to predict).
bool representable(const gemm_shape &shape, precision p) {
  return gemm_flops(shape) && gemm_min_bytes(shape, p);
}

/// A padded shape worth predicting.
struct candidate {
  gemm_shape shape;
  std::string reason;
  bool alignment_fix = false; ///< the 16-byte fix itself, not a wider size
};

/// A size of the user's that sets a GEMM dimension: the dimension is `per` GEMM elements for each
/// `groups` of the size (a convolution's K = (C / groups)·R·S: `in_channels`, per R·S, groups).
struct named_size {
  std::string name;
  std::int64_t per = 1, groups = 1;

  std::int64_t of(std::int64_t dimension) const { return dimension / per * groups; }
};

/// The user's names of a GEMM's N and K: a convolution's channels, a model config's fields, a
/// linear layer's `in` and `out`, or the GEMM's own letters.
struct size_names {
  named_size n{"N"}, k{"K"};
  /// K is the forward pass's M (a weight gradient sums over the batch): no size to pad.
  bool k_is_batch = false;
};

/// The sizes the user set of each layer, by path: a model config's fields (network::config_sizes);
/// else, a network file's, its linear layers' own `in` and `out`.
using layer_sizes = std::map<std::string, layer_config_sizes>;

void add_linear_sizes(const std::vector<layer> &layers, const std::string &prefix,
                      layer_sizes &sizes) {
  for (const layer &l : layers) {
    const std::string path = layer_path(prefix, l.name);
    if (const auto *block = std::get_if<repeat_block>(&l.body))
      add_linear_sizes(block->layers, path, sizes);
    else if (const auto *linear = std::get_if<linear_layer>(&l.body))
      sizes[path] = {{"in", linear->in}, {"out", linear->out}};
  }
}

layer_sizes sizes_of(const network &net) {
  if (!net.config_sizes.empty())
    return net.config_sizes;
  layer_sizes sizes;
  add_linear_sizes(net.layers, "", sizes);
  return sizes;
}

size_names user_sizes_of(const op &o, const layer_sizes &layers) {
  size_names names;
  names.k_is_batch = o.pass == pass::weight_grad;
  const gemm_shape &s = *o.gemm;
  if (o.conv) { // the implicit GEMM of a convolution's pass
    const conv_shape &c = *o.conv;
    const named_size in{"in_channels", c.kernel_h * c.kernel_w, c.groups},
        out{"out_channels", 1, c.groups};
    if (o.pass == pass::forward)
      names = {out, in};
    else if (o.pass == pass::data_grad)
      names = {in, out};
    else
      names.n = out;
    return names;
  }
  const auto sizes = layers.find(o.layer);
  if (sizes == layers.end())
    return names;
  // A field names a dimension only where it is the field's whole value (not a GPU's share).
  const auto name = [](const config_size &field, std::int64_t dimension, named_size &out) {
    if (!field.field.empty() && field.value == dimension)
      out = {field.field};
  };
  const layer_config_sizes &layer = sizes->second;
  if (o.pass == pass::forward) {
    name(layer.out, s.n, names.n);
    name(layer.in, s.k, names.k);
  } else if (o.pass == pass::data_grad) {
    name(layer.in, s.n, names.n);
    name(layer.out, s.k, names.k);
  } else {
    name(layer.out, s.n, names.n);
  }
  return names;
}

/// "in_channels=3 (K=147)", "vocab_size=32001", "N=50257": `size` of GEMM dimension `letter`.
std::string named_value(const named_size &size, std::int64_t dimension, const char *letter) {
  if (size.name == letter)
    return fmt::format("{}={}", letter, dimension);
  if (size.per == 1 && size.groups == 1)
    return fmt::format("{}={}", size.name, size.of(dimension));
  return fmt::format("{}={} ({}={})", size.name, size.of(dimension), letter, dimension);
}

/// The smallest dimension of at least `dimension` that meets the 16-byte rule (`unit` elements)
/// through a size the user sets: K = C·R·S is aligned by C a multiple of unit / gcd(R·S, unit).
std::optional<std::int64_t> aligned(std::int64_t dimension, const named_size &size,
                                    std::int64_t unit) {
  const std::int64_t steps = dimension / size.per, step_unit = unit / std::gcd(size.per, unit);
  const std::optional<std::int64_t> aligned_steps = detail::checked_round_up(steps, step_unit);
  if (!aligned_steps)
    return std::nullopt;
  return detail::checked_product({*aligned_steps, size.per});
}

/// The shapes a GEMM may be padded to: the alignment fix of N and K, then sizes of N up to 6%
/// larger that fill tiles and waves better. N is the layer's output features and K its input
/// features, both the network designer's to choose (as the sizes `names` has: a convolution's
/// K = C·R·S pads by its input channels); M is the batch (see batch advice).
struct candidates {
  std::vector<candidate> shapes;
  bool misaligned = false;
  std::string alignment_reason; ///< set when misaligned
};

std::optional<candidates> candidates_of(const gemm_shape &s, precision p, const size_names &names) {
  const std::int64_t unit = alignment_elements(p);
  // Padded shapes keep everything else of the GEMM (its quantized weights).
  const auto padded = [&](std::int64_t n, std::int64_t k) {
    gemm_shape shape = s;
    shape.n = n;
    shape.k = k;
    return shape;
  };
  const std::optional<std::int64_t> aligned_n = aligned(s.n, names.n, unit),
                                    aligned_k =
                                        names.k_is_batch ? s.k : aligned(s.k, names.k, unit);
  if (!aligned_n || !aligned_k)
    return std::nullopt; // sizes within a tile of 2^63: every padded size overflows
  candidates result;
  const gemm_shape aligned = padded(*aligned_n, *aligned_k);
  result.misaligned = aligned.n != s.n || aligned.k != s.k;
  if (result.misaligned) {
    std::string broken = aligned.n != s.n ? named_value(names.n, s.n, "N") : std::string{};
    if (aligned.k != s.k)
      broken += (broken.empty() ? "" : " and ") + named_value(names.k, s.k, "K");
    result.alignment_reason =
        fmt::format("{} break{} the 16-byte rule of {} (multiples of {})", broken,
                    aligned.n != s.n && aligned.k != s.k ? "" : "s", to_string(p), unit);
    if (representable(aligned, p))
      result.shapes.push_back({aligned, result.alignment_reason, true});
  }
  for (std::int64_t multiple : {64, 128, 256}) {
    // In whole steps of the user's size (a data gradient's N = C·R·S grows by R·S a channel).
    const std::optional<std::int64_t> wider_n =
        detail::checked_round_up(s.n, std::lcm(names.n.per, std::int64_t{multiple}));
    if (!wider_n)
      continue;
    const gemm_shape wider = padded(*wider_n, aligned.k);
    if (wider.n != aligned.n && static_cast<double>(wider.n) <= 1.06 * static_cast<double>(s.n) &&
        representable(wider, p))
      result.shapes.push_back({wider, fmt::format("{} to a multiple of {}: fuller tiles and waves",
                                                  named_value(names.n, s.n, "N"), multiple)});
  }
  return result;
}

/// The sizes padding changes, named as the user sets them.
std::vector<size_change> changes_of(const gemm_shape &from, const gemm_shape &to,
                                    const size_names &names) {
  std::vector<size_change> changes;
  if (to.n != from.n)
    changes.push_back({names.n.name, names.n.of(from.n), names.n.of(to.n)});
  if (to.k != from.k)
    changes.push_back({names.k.name, names.k.of(from.k), names.k.of(to.k)});
  return changes;
}

/// What `o` takes per call padded to `shape` (`o`'s own shape: as it is), as the model prices
/// it: a convolution as a convolution (its channels grown with its implicit GEMM, its tensors'
/// bytes anew), the table's time where unpadded; any other GEMM as a plain GEMM of the shape.
/// Both at the clock the step's power limit holds (`power`: the analysis's).
double predicted_time(const op &o, const gemm_shape &shape, const size_names &names,
                      const perf_model &model, const power_draw &power) {
  if (!o.conv) {
    const op gemm = make_gemm_op("padding", shape, o.precision);
    return held_to(model.predict(gemm, reasons::without), gemm, power).time_s;
  }
  op padded = o;
  for (const size_change &change : changes_of(*o.gemm, shape, names))
    (change.size == "in_channels" ? padded.conv->in_channels : padded.conv->out_channels) =
        change.to;
  padded.gemm = shape;
  padded.flops = gemm_flops(shape).value(); // a candidate: representable
  const std::optional<std::int64_t> bytes = conv_bytes(*padded.conv, o.precision);
  if (!bytes)
    return INFINITY; // its tensors past 64 bits: no advice
  padded.bytes = *bytes;
  return held_to(model.predict(padded, reasons::without), padded, power).time_s;
}

/// The best padding of one GEMM, when it gains at least `min_speedup`.
std::optional<padding_advice> pad(const op &o, const layer_sizes &sizes, const analysis &analysed,
                                  double min_speedup) {
  const perf_model &model = analysed.model;
  const gemm_shape &s = *o.gemm;
  const size_names names = user_sizes_of(o, sizes);
  const double time = predicted_time(o, s, names, model, analysed.power);
  const std::optional<candidates> padded = candidates_of(s, o.precision, names);
  if (!padded)
    return std::nullopt;
  padding_advice best;
  best.padded_time_s = time;
  for (const candidate &c : padded->shapes) {
    const double padded_time = predicted_time(o, c.shape, names, model, analysed.power);
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
  best.changes = changes_of(s, best.padded, names);
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
  const layer_sizes sizes = sizes_of(analysed.network);
  // A GEMM once per shape and precision; a convolution once per geometry and pass too (two
  // convolutions of one implicit GEMM are priced apart).
  std::unordered_set<detail::integers_key<10>, detail::integers_key<10>::hash> seen;
  for (const analysed_op &entry : analysed.ops) {
    const op &o = entry.op;
    const conv_shape c = o.conv.value_or(conv_shape{});
    if (!o.is_gemm() ||
        !seen.insert(detail::integers_key<10>{{o.gemm->m, o.gemm->n, o.gemm->k, o.gemm->batch_count,
                                               static_cast<int>(o.precision), o.conv.has_value(),
                                               c.in_channels, c.kernel_h * c.kernel_w, c.stride_h,
                                               static_cast<int>(c.pass)}})
             .second)
      continue;
    if (auto padding = pad(o, sizes, analysed, min_speedup))
      result.push_back(*padding);
  }
  return result;
}

} // namespace roofline
