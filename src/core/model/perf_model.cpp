// SPDX-License-Identifier: Apache-2.0
#include "roofline/model/perf_model.hpp"

#include "hashing.hpp"
#include "roofline/model/attention_model.hpp"
#include "roofline/model/conv_model.hpp"
#include "roofline/model/memory_op_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

namespace roofline {

std::string_view to_string(bound b) {
  switch (b) {
  case bound::memory: return "memory";
  case bound::compute: return "compute";
  case bound::communication: return "communication";
  }
  return "?";
}

namespace {

/// What a prediction depends on: the GEMM's shape (none for memory ops), a fused attention's
/// shape, a memory op's kind (each has parameters of its own), the precision, the FLOPs, the
/// bytes and where the operands are. Names, counts and places do not change it.
struct op_key {
  std::int64_t m = 0, n = 0, k = 0, batch_count = 0, flops = 0, bytes = 0;
  std::int64_t weight_bits = 0, weight_group = 0; ///< quantized weights; 0: none
  std::int64_t collective_gpus = 0, collective_stride = 0; ///< a collective's; 0: not one
  int collective_kind = -1;                                ///< its collective; -1: not one
  precision p = precision::fp16;
  bool gemm = false, attention = false;
  attention_shape attended;       ///< a fused attention's shape (default for other ops)
  std::optional<conv_shape> conv; ///< a convolution's (its GEMM: the pass's implicit one)
  int memory_kind = -1;           ///< a memory op's memory_op_kind; -1: not one
  int launches = 1;               ///< an unfused memory op's kernels
  cache_state operands = cache_state::warm;
  reasons why = reasons::with;

  bool operator==(const op_key &o) const {
    return m == o.m && n == o.n && k == o.k && batch_count == o.batch_count && flops == o.flops &&
           bytes == o.bytes && weight_bits == o.weight_bits && weight_group == o.weight_group &&
           collective_gpus == o.collective_gpus && collective_stride == o.collective_stride &&
           collective_kind == o.collective_kind && p == o.p && gemm == o.gemm &&
           attention == o.attention && attended == o.attended && conv == o.conv &&
           memory_kind == o.memory_kind && launches == o.launches && operands == o.operands &&
           why == o.why;
  }
};

struct op_key_hash {
  std::size_t operator()(const op_key &key) const noexcept {
    const std::uint64_t kind = static_cast<std::uint64_t>(key.p) * 16 +
                               (key.operands == cache_state::cold) * 8 + key.attention * 4 +
                               key.gemm * 2 + (key.why == reasons::with);
    const attention_shape &a = key.attended;
    const std::uint64_t attention_kind = a.causal * 2 + a.backward;
    const std::uint64_t memory_kind = static_cast<std::uint64_t>(key.memory_kind + 1) +
                                      (static_cast<std::uint64_t>(key.launches) << 32);
    // The implicit GEMM's shape is in the key already: the conv's geometry that it leaves out.
    const conv_shape c = key.conv.value_or(conv_shape{});
    const std::uint64_t conv_geometry = detail::hash_integers(std::initializer_list<std::uint64_t>{
        static_cast<std::uint64_t>(key.conv.has_value()), static_cast<std::uint64_t>(c.in_channels),
        static_cast<std::uint64_t>(c.input_h), static_cast<std::uint64_t>(c.input_w),
        static_cast<std::uint64_t>(c.kernel_h), static_cast<std::uint64_t>(c.kernel_w),
        static_cast<std::uint64_t>(c.stride_h), static_cast<std::uint64_t>(c.stride_w),
        static_cast<std::uint64_t>(c.groups), static_cast<std::uint64_t>(c.pass)});
    return detail::hash_integers(
        std::initializer_list<std::uint64_t>{static_cast<std::uint64_t>(a.batch),
                                             static_cast<std::uint64_t>(a.heads),
                                             static_cast<std::uint64_t>(a.kv_heads),
                                             static_cast<std::uint64_t>(a.q_len),
                                             static_cast<std::uint64_t>(a.kv_len),
                                             static_cast<std::uint64_t>(a.head_dim),
                                             static_cast<std::uint64_t>(a.window),
                                             attention_kind,
                                             memory_kind,
                                             static_cast<std::uint64_t>(key.m),
                                             static_cast<std::uint64_t>(key.n),
                                             static_cast<std::uint64_t>(key.k),
                                             static_cast<std::uint64_t>(key.batch_count),
                                             static_cast<std::uint64_t>(key.flops),
                                             static_cast<std::uint64_t>(key.bytes),
                                             static_cast<std::uint64_t>(key.weight_bits),
                                             static_cast<std::uint64_t>(key.weight_group),
                                             static_cast<std::uint64_t>(key.collective_gpus),
                                             static_cast<std::uint64_t>(key.collective_stride),
                                             static_cast<std::uint64_t>(key.collective_kind + 1),
                                             conv_geometry,
                                             kind});
  }
};

op_key key_of(const gemm_shape &s, precision p, cache_state operands, reasons why) {
  op_key key;
  key.operands = operands;
  key.m = s.m;
  key.n = s.n;
  key.k = s.k;
  key.batch_count = s.batch_count;
  if (s.weights) {
    key.weight_bits = s.weights->bits;
    key.weight_group = s.weights->group_size;
  }
  key.p = p;
  key.gemm = true;
  key.why = why;
  return key;
}

op_key key_of(const op &o, cache_state operands, reasons why) {
  op_key key;
  if (o.gemm)
    key = key_of(*o.gemm, o.precision, operands, why);
  key.operands = operands;
  key.why = why;
  key.attention = o.is_fused_attention();
  if (o.attention)
    key.attended = *o.attention;
  key.conv = o.conv;
  if (const std::optional<memory_op_kind> kind = parse_memory_op_kind(o.kind))
    key.memory_kind = static_cast<int>(*kind);
  key.launches = o.launches;
  if (const std::optional<collective> c = parse_collective(o.kind)) {
    key.collective_kind = static_cast<int>(*c);
    key.collective_gpus = o.gpus;
    key.collective_stride = o.stride;
  }
  key.flops = o.flops;
  key.bytes = o.bytes;
  key.p = o.precision;
  return key;
}

/// Values computed per key: what repeats is computed once. A key is kept from its second request
/// on, or from its first once the table has served a request (a network repeats its shapes; a
/// sweep of shapes each asked for once copies none). Each table holds at most `capacity` keys (a
/// few MB; a network has far fewer shapes), then starts over. The caller's mutex guards it.
template <class Value> class memo_table {
public:
  static constexpr std::size_t capacity = std::size_t{1} << 14;

  /// Whether `key` is remembered; if so, its value in `value`.
  bool find(const op_key &key, Value &value) {
    const auto found = m_values.find(key);
    if (found == m_values.end())
      return false;
    ++m_hits;
    value = found->second;
    return true;
  }

  /// Whether a value computed for `key` (not found) is worth keeping.
  bool worth_keeping(const op_key &key) {
    if (m_seen.size() >= capacity)
      m_seen.clear();
    return !m_seen.insert(key).second || m_hits > 0;
  }

  void keep(const op_key &key, const Value &value) {
    if (m_values.size() >= capacity) {
      m_values.clear();
      m_hits = 0;
    }
    m_values.emplace(key, value);
  }

  /// The value of `key`: remembered, else compute().
  template <class Compute> Value get(std::mutex &mutex, const op_key &key, Compute &&compute) {
    Value value;
    bool kept = false;
    {
      const std::lock_guard<std::mutex> lock(mutex);
      if (find(key, value))
        return value;
      kept = worth_keeping(key);
    }
    value = compute();
    if (kept) {
      const std::lock_guard<std::mutex> lock(mutex);
      keep(key, value);
    }
    return value;
  }

private:
  std::unordered_map<op_key, Value, op_key_hash> m_values;
  std::unordered_set<op_key, op_key_hash> m_seen;
  std::size_t m_hits = 0; ///< since the values were last cleared
};

} // namespace

/// What a model has predicted, shared by its copies; one lock for both tables.
struct perf_model::memo {
  std::mutex mutex;
  memo_table<prediction> predictions;
  memo_table<gemm_estimate> estimates;
};

perf_model::perf_model(gpu_spec spec, model_options options)
    : m_spec(std::move(spec)), m_basis(model_basis(m_spec)), m_options(std::move(options)),
      m_parameters(m_options.parameters.value_or(m_spec.parameters)),
      m_host(m_options.host.value_or(typical_host_floor())), m_memo(std::make_shared<memo>()) {}

prediction perf_model::predict(const op &o, reasons why) const {
  // Elementwise and normalisation kernels run on the CUDA cores, whatever their storage format.
  const precision unit = o.unit();
  if (!m_spec.supports(unit))
    throw input_error(o.where, "layer `" + o.layer + "`: " + m_spec.unsupported_message(unit));
  return m_memo->predictions.get(m_memo->mutex, key_of(o, operand_cache(), why),
                                 [&] { return with_interval(compute(o, why), o); });
}

op_class class_of(const op &o) {
  if (o.is_collective())
    return op_class::all_reduce;
  if (o.is_fused_attention())
    return op_class::attention;
  if (o.conv)
    return op_class::conv;
  return o.is_gemm() ? op_class::gemm : op_class::memory;
}

prediction perf_model::with_interval(prediction p, const op &o) const {
  const bool measured = measured_collective_s(o).has_value();
  const bool modelled = !m_options.roofline_only && m_spec.sm_count > 0 && !measured;
  p.device_range = modelled ? time_range::around(p.device_time_s, m_spec.accuracy.of(class_of(o)))
                            : time_range::exactly(p.device_time_s);
  p.range = {std::max(p.device_range.low_s, p.host_floor_s),
             std::max(p.device_range.high_s, p.host_floor_s)};
  return p;
}

prediction perf_model::compute(const op &o, reasons why) const {
  if (o.is_collective())
    return collective(o, why);
  const precision unit = o.unit();
  prediction result;
  result.peak_flop_per_s = m_spec.peak_flop_per_s(unit, m_options.sparse);
  result.sparse_peak = m_options.sparse && m_spec.peaks.at(unit).sparse_flop_per_s.has_value();
  result.ridge_intensity = m_spec.ridge_intensity(unit, m_options.sparse);

  const double intensity = o.arithmetic_intensity();
  const double compute_s = static_cast<double>(o.flops) / result.peak_flop_per_s;
  const double memory_s = static_cast<double>(o.bytes) / m_spec.dram_bytes_per_s;
  result.bound = intensity < result.ridge_intensity ? bound::memory : bound::compute;
  result.roofline_time_s = std::max(compute_s, memory_s);
  // --sparse moves the roof only: the predicted times stay a dense kernel's (see model_notes).
  result.time_s = result.device_time_s =
      std::max(static_cast<double>(o.flops) / m_spec.peak_flop_per_s(unit), memory_s);
  result.attainable_flop_per_s =
      std::min(result.peak_flop_per_s, intensity * m_spec.dram_bytes_per_s);
  if (why == reasons::with)
    result.factors.push_back(
        result.bound == bound::memory
            ? fmt::format("intensity {:.3g} < ridge {:.3g} FLOP/B: DRAM-bound at {:.3g} TB/s",
                          intensity, result.ridge_intensity, m_spec.dram_bytes_per_s / 1e12)
            : fmt::format("intensity {:.3g} >= ridge {:.3g} FLOP/B: {} peak {:.4g} TFLOP/s{}",
                          intensity, result.ridge_intensity, to_string(unit),
                          result.peak_flop_per_s / 1e12,
                          result.sparse_peak ? " (2:4 sparse)" : ""));
  if (m_options.roofline_only ||
      m_spec.sm_count <= 0) { // no SMs to spread tiles over: the bound is all we have
    result.flop_per_s = static_cast<double>(o.flops) / result.time_s;
    return result;
  }
  if (o.conv) {
    conv_estimate estimate = estimate_conv(*o.conv, *o.gemm, o.precision, o.bytes, m_basis,
                                           m_parameters, operand_cache(), why);
    result.device_time_s = estimate.device_time_s;
    result.gemm = std::move(estimate.gemm);
    // cuDNN's call: one kernel (a grouped one on the CUDA cores), issued like cuBLAS's.
    result.host_floor_s = result.gemm ? m_host.gemm(o.precision, result.gemm->launches,
                                                    result.gemm->family == kernel_family::fallback)
                                      : m_host.kernel_launch_s;
    result.factors.insert(result.factors.end(), std::make_move_iterator(estimate.factors.begin()),
                          std::make_move_iterator(estimate.factors.end()));
  } else if (o.is_gemm()) {
    result.gemm = estimate_once(*o.gemm, o.precision, why);
    result.device_time_s = result.gemm->device_time_s;
    result.host_floor_s = m_host.gemm(o.precision, result.gemm->launches,
                                      result.gemm->family == kernel_family::fallback);
    result.factors.insert(result.factors.end(), result.gemm->factors.begin(),
                          result.gemm->factors.end());
  } else if (o.attention) {
    attention_estimate estimate = estimate_attention(*o.attention, o.precision, o.bytes, m_basis,
                                                     m_parameters, operand_cache(), why);
    result.device_time_s = estimate.device_time_s;
    result.host_floor_s = m_host.kernel_launch_s;
    result.factors.insert(result.factors.end(), std::make_move_iterator(estimate.factors.begin()),
                          std::make_move_iterator(estimate.factors.end()));
  } else {
    place_memory_op(o, why, result);
  }
  result.launch_bound = result.host_floor_s > result.device_time_s;
  result.time_s = std::max(result.device_time_s, result.host_floor_s);
  result.flop_per_s = static_cast<double>(o.flops) / result.time_s;
  if (result.launch_bound && why == reasons::with)
    result.factors.push_back(fmt::format(
        "launch-bound: the host needs {:.1f} µs to issue it{}, the GPU {:.1f} µs to run it",
        result.host_floor_s * 1e6, m_host.measured ? "" : " (typical host)",
        result.device_time_s * 1e6));
  return result;
}

void perf_model::place_memory_op(const op &o, reasons why, prediction &result) const {
  const double compute_s = static_cast<double>(o.flops) / result.peak_flop_per_s;
  const double memory_s = static_cast<double>(o.bytes) / m_spec.dram_bytes_per_s;
  const double intensity = o.arithmetic_intensity();
  // A memory-bound op as its kernel runs (memory_op_time_s); its few FLOPs never bind.
  // Run unfused (op::launches), its kernels one after the other (unfused_time_s).
  const std::optional<memory_op_kind> kind = parse_memory_op_kind(o.kind);
  const std::optional<unfused_form> unfused =
      kind && o.launches > 1 ? cost_of(*kind).unfused : std::nullopt;
  double streaming_s = 0;
  if (unfused)
    streaming_s =
        unfused_time_s(*unfused, o.elements, element_bytes(o.precision), m_basis, m_parameters);
  else if (kind)
    streaming_s =
        memory_op_time_s(*kind, o.bytes, m_basis, m_parameters, o.row > 0 ? o.elements / o.row : 0);
  else
    streaming_s = static_cast<double>(o.bytes) /
                      (m_parameters[parameter::dram_efficiency] * m_basis.dram_bytes_per_s) +
                  m_parameters[parameter::kernel_overhead_s];
  // Fitted where part of its tensors sat in L2 (behind their producer, or back to back on the
  // same buffers); in a step that moves more than L2 holds, they come from DRAM: no faster than
  // its roofline bound there.
  const bool from_dram = operand_cache() == cache_state::cold;
  if (from_dram && streaming_s < memory_s && why == reasons::with)
    result.factors.push_back("its tensors from DRAM (the step moves more than L2 holds): at "
                             "most the DRAM roofline's rate");
  result.device_time_s = std::max({compute_s, streaming_s, from_dram ? memory_s : 0.0});
  // A step that fits in L2 reads its tensors from there: such an op's bound is L2's roof, which
  // the fit (a kernel's floor, its bytes at a share of the L2-to-DRAM rate) never beats.
  if (!from_dram && streaming_s < memory_s) {
    const double l2_rate = l2_bytes_per_s(m_basis, m_parameters);
    result.l2_roof = true;
    result.roofline_time_s = std::max(compute_s, static_cast<double>(o.bytes) / l2_rate);
    result.attainable_flop_per_s = std::min(result.peak_flop_per_s, intensity * l2_rate);
    if (why == reasons::with)
      result.factors.push_back(fmt::format(
          "its tensors in L2 (the step moves less than L2 holds): held against the L2 roof, "
          "{:.3g} TB/s",
          l2_rate / 1e12));
  }
  result.host_floor_s = o.launches * m_host.kernel_launch_s;
  if (o.launches > 1 && why == reasons::with)
    result.factors.push_back(fmt::format(
        "unfused, as the framework writes it: {} kernels, its intermediates through DRAM",
        o.launches));
}

namespace {

/// The modelled all-reduce's terms in words: "nvlink4 at 80% of 450 GB/s a direction plus 15 µs".
std::string modelled_all_reduce_terms(std::int64_t bytes, int gpus, const interconnect_spec &links,
                                      const model_parameters &params) {
  const bool oneshot = all_reduce_traffic_bytes(bytes, gpus, params) >
                       static_cast<double>(bytes) * 2.0 * (gpus - 1) / gpus;
  return fmt::format("{}{} at {:.0f}% of {:.0f} GB/s a direction plus {:.1f} µs",
                     gpus > links.gpus ? "PCIe" : links.kind,
                     oneshot ? " (one-shot: every peer's whole message)" : "",
                     100 *
                         all_reduce_parameter(params, parameter::all_reduce_link_efficiency, gpus),
                     links.bytes_per_s_over(gpus) / 1e9,
                     1e6 * all_reduce_parameter(params, parameter::all_reduce_latency_s, gpus));
}

} // namespace

rank_group perf_model::group_of(const op &o) const {
  // A node: what the GPU's links and its host join.
  const int node = m_spec.interconnect ? m_spec.interconnect->max_gpus() : o.gpus;
  return {o.gpus, per_node(o.gpus, o.stride, node)};
}

std::optional<double> perf_model::measured_collective_s(const op &o) const {
  if (!o.is_all_reduce() || !m_options.all_reduce)
    return std::nullopt;
  const rank_group group = group_of(o);
  if (group.per_node < group.ranks) // across nodes: the host's table does not say
    return std::nullopt;
  return measured_all_reduce_s(o.bytes, o.gpus, *m_options.all_reduce);
}

namespace {

/// How a collective inside one node is modelled, in words: an all-reduce's terms, or one pass of
/// (n − 1)/n of the bytes (a send: all of them) at the all-reduce's efficiency (times the kind's
/// bandwidth ratio) and latency.
std::string node_terms(collective c, const op &o, const interconnect_spec &links,
                       const model_parameters &params) {
  const int gpus = std::max(2, o.gpus);
  if (c == collective::all_reduce)
    return modelled_all_reduce_terms(o.bytes, gpus, links, params);
  return fmt::format(
      "{} of the bytes over {} at {:.0f}% of {:.0f} GB/s a direction plus {:.1f} µs",
      c == collective::send ? std::string("all") : fmt::format("{}/{}", gpus - 1, gpus),
      gpus > links.gpus ? "PCIe" : links.kind, 100 * collective_link_efficiency(c, gpus, params),
      links.bytes_per_s_over(gpus) / 1e9,
      1e6 * all_reduce_parameter(params, parameter::all_reduce_latency_s, gpus));
}

} // namespace

prediction perf_model::collective(const op &o, reasons why) const {
  using roofline::collective; // not this member function
  const collective c = *parse_collective(o.kind);
  const rank_group group = group_of(o);
  const bool across = group.per_node < group.ranks;
  const std::optional<double> measured = measured_collective_s(o);
  prediction result;
  result.bound = bound::communication;
  // NCCL's launch: a kernel per GPU, issued by the host like any other.
  result.host_floor_s = m_options.roofline_only ? 0 : m_host.kernel_launch_s;
  const std::string what = fmt::format("{} over {} GPUs", to_string(c), o.gpus);
  const auto finish = [&] {
    result.launch_bound = result.host_floor_s > result.device_time_s;
    result.time_s = std::max(result.device_time_s, result.host_floor_s);
    if (why == reasons::with && measured)
      result.factors.push_back(
          fmt::format("{}: NCCL measured on this host ({})", what, m_options.all_reduce->library));
    return result;
  };
  if (measured && !m_spec.interconnect) { // no links to bound it: the measurement alone
    result.roofline_time_s = result.device_time_s = *measured;
    return finish();
  }
  if (!m_spec.interconnect)
    throw input_error(o.where, "layer `" + o.layer + "`: the " + m_spec.name +
                                   " spec gives no `interconnect`, which a collective needs "
                                   "where none was measured (`describe_local_gpu::measure` "
                                   "on the host)");
  if (across && !m_options.network)
    throw input_error(
        o.where, fmt::format("`{}`: {} over {} GPUs{}, and the {}'s links and host join "
                             "at most {} (its spec's `interconnect.gpus` and `host_gpus`): give "
                             "the cluster whose network joins its hosts (model_options::network)",
                             o.layer, c == collective::all_reduce ? "an all-reduce" : to_string(c),
                             o.gpus, o.stride > 1 ? fmt::format(" {} ranks apart", o.stride) : "",
                             m_spec.name, m_spec.interconnect->max_gpus()));
  const cluster_links links =
      links_of(*m_spec.interconnect, m_parameters, m_options.network.value_or(node_network{}));
  // The bound: the same traffic with no latency, at the links' full bandwidth.
  cluster_links ideal = links;
  ideal.parameters = at_full_link_speed(links.parameters);
  ideal.network_latency_s = 0;
  const auto bytes = static_cast<double>(o.bytes);
  result.roofline_time_s = collective_s(c, bytes, group, ideal);
  result.device_time_s = measured ? *measured : collective_s(c, bytes, group, links);
  if (m_options.roofline_only)
    result.device_time_s = result.roofline_time_s;
  if (why == reasons::with && !measured)
    result.factors.push_back(
        across ? fmt::format("{}, {} a node: inside each node over {}, across {} nodes at {:.0f} "
                             "GB/s a GPU plus {:.1f} µs a hop, not measured",
                             what, group.per_node, m_spec.interconnect->kind,
                             (group.ranks + group.per_node - 1) / group.per_node,
                             links.network_bytes_per_s / 1e9, links.network_latency_s * 1e6)
               : fmt::format("{}: {}, not measured on this host", what,
                             node_terms(c, o, *m_spec.interconnect, m_parameters)));
  return finish();
}

gemm_estimate perf_model::estimate(const gemm_shape &shape, precision p, reasons why) const {
  return m_memo->estimates.get(m_memo->mutex, key_of(shape, p, operand_cache(), why),
                               [&] { return estimate_once(shape, p, why); });
}

gemm_estimate perf_model::estimate_once(const gemm_shape &shape, precision p, reasons why) const {
  // Always the dense peak, whatever --sparse says. A 2:4-sparse GEMM is another kernel (cuSPARSELt:
  // a compressed operand with its metadata, its own tiles and pipeline) whose time the GEMM model
  // has never been fitted on: doubling the tile rate of a model fitted on dense cuBLAS timings
  // would print a time nobody measured. --sparse therefore moves only the roofline placement.
  return estimate_gemm(shape, p, m_basis.peak_flop_per_s(p), m_basis, m_parameters, operand_cache(),
                       why);
}

perf_model perf_model::with_operand_cache(cache_state operands) const {
  perf_model model = *this;
  model.m_options.operand_cache = operands;
  return model;
}

cache_state step_operand_cache(const std::vector<op> &ops, const gpu_spec &gpu) {
  double step_bytes = 0, largest = 0;
  for (const op &o : ops) {
    const double bytes = static_cast<double>(o.bytes);
    step_bytes += bytes * static_cast<double>(o.count);
    largest = std::max(largest, bytes);
  }
  return step_bytes - largest > static_cast<double>(gpu.l2_bytes) ? cache_state::cold
                                                                  : cache_state::warm;
}

cache_state operand_cache_for(const perf_model &model, const std::vector<op> &ops) {
  return model.options().operand_cache.value_or(step_operand_cache(ops, model.spec()));
}

std::vector<std::string> model_notes(const perf_model &model, const std::vector<op> &ops) {
  std::vector<std::string> notes;
  if (std::any_of(ops.begin(), ops.end(), [](const op &o) { return o.is_fused_attention(); }))
    notes.push_back(
        "fused attention (one FlashAttention-style kernel per layer, cuDNN's as PyTorch runs it): "
        "prefill as query tiles of 128 rows in waves over the SMs, the key blocks a causal or "
        "windowed mask hides skipped; decode as the KV cache split over the SMs and streamed; "
        "training's backward as one more kernel of 2.5x the products; parameters: " +
        model.parameters().origin);
  const auto first_all_reduce =
      std::find_if(ops.begin(), ops.end(), [](const op &o) { return o.is_all_reduce(); });
  if (first_all_reduce != ops.end()) {
    const std::optional<all_reduce_table> &table = model.options().all_reduce;
    const interconnect_spec *links =
        model.spec().interconnect ? &*model.spec().interconnect : nullptr;
    notes.push_back(
        table ? fmt::format("all-reduces: {} measured on this host over {} GPUs ({}), "
                            "interpolated between the sizes measured",
                            table->library, table->gpus, table->origin)
        : links
            ? fmt::format(
                  "all-reduces: their traffic over the {}'s links, over {} GPUs {}: "
                  "modelled, not measured on this host (`describe_local_gpu::measure` on a host of "
                  "several GPUs measures NCCL, and choose_gpu::request auto "
                  "uses it)",
                  model.spec().name, first_all_reduce->gpus,
                  modelled_all_reduce_terms(first_all_reduce->bytes, first_all_reduce->gpus, *links,
                                            model.parameters()))
            : std::string("all-reduces: no links in the spec and none measured"));
  }
  if (std::any_of(ops.begin(), ops.end(),
                  [](const op &o) { return o.is_collective() && !o.is_all_reduce(); }))
    notes.push_back(
        "all-to-alls, reduce-scatters, all-gathers and sends: inside a node one pass of (n − 1)/n "
        "of their bytes (a send: all of them) over the links at the all-reduce's fitted "
        "efficiency times the kind's bandwidth against an all-reduce's (NCCL's, fitted), and its "
        "latency; a group spanning nodes hierarchically, across them at the cluster's network "
        "(model_options::network): modelled, not measured");
  if (model.operand_cache() == cache_state::cold &&
      std::any_of(ops.begin(), ops.end(), [](const op &o) { return o.is_gemm(); }))
    notes.push_back(fmt::format(
        "GEMMs with their operands cold: read from DRAM at {:.0f}% of its bandwidth{}, as in "
        "a step that moves more than the {:.0f} MB L2 holds, where each layer's weights have "
        "left L2 since their last use (model_options::operand_cache: as back-to-back calls on the "
        "same buffers)",
        100 * model.parameters()[parameter::cold_dram_efficiency],
        model.parameters()[parameter::cold_dram_latency_s] > 0
            ? fmt::format(" after {:.1f} µs a call",
                          model.parameters()[parameter::cold_dram_latency_s] * 1e6)
            : std::string{},
        static_cast<double>(model.spec().l2_bytes) / 1e6));
  if (!model.options().sparse)
    return notes;
  const gpu_spec &gpu = model.spec();
  const std::string &gpu_name = gpu.display_name.empty() ? gpu.name : gpu.display_name;
  // The GEMMs' precisions, in order of first use, with and without a 2:4-sparse peak on this GPU.
  std::vector<precision> sparse, dense_only;
  for (const op &o : ops) {
    const auto rate = gpu.peaks.find(o.precision);
    if (!o.is_gemm() || rate == gpu.peaks.end()) // no rate at all: predict() says so
      continue;
    std::vector<precision> &list = rate->second.sparse_flop_per_s ? sparse : dense_only;
    if (std::find(list.begin(), list.end(), o.precision) == list.end())
      list.push_back(o.precision);
  }
  const auto names = [](const std::vector<precision> &list) {
    std::string text;
    for (precision p : list)
      text += (text.empty() ? "" : ", ") + std::string(to_string(p));
    return text;
  };
  if (!sparse.empty())
    notes.push_back(fmt::format(
        "model_options::sparse holds the {} GEMMs against the {}'s 2:4-sparse peak for the "
        "roofline placement "
        "only (ridge, bound, roofline time): bytes count dense operands, and device and predicted "
        "times are a dense kernel's (the GEMM model has no 2:4-sparse timings to be fitted on)",
        names(sparse), gpu_name));
  if (!dense_only.empty())
    notes.push_back(
        fmt::format("model_options::sparse has no effect on {}: the {} has no 2:4-sparse {} peak",
                    sparse.empty() ? "this GPU" : "the " + names(dense_only) + " GEMMs", gpu_name,
                    names(dense_only)));
  if (sparse.empty() && dense_only.empty())
    notes.push_back(
        "model_options::sparse has no effect: there are no GEMMs (memory-bound ops run on the CUDA "
        "cores, which have no 2:4-sparse peak)");
  return notes;
}

} // namespace roofline
