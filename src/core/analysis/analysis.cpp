// SPDX-License-Identifier: Apache-2.0
#include "roofline/analysis/analysis.hpp"

#include "checked_math.hpp"
#include "roofline/analysis/lowering.hpp"
#include "roofline/common/error.hpp"
#include "text_format.hpp"

#include <fmt/format.h>

namespace roofline {

namespace {

/// Whether the SM clock sets `p`'s time: a compute-bound op the host does not hold back (an
/// all-reduce's links, a memory-bound op's DRAM and a launch-bound op's host do not follow it).
bool clock_bound(const op &o, const prediction &p) {
  return p.bound == bound::compute && stretchable(o, p);
}

/// The step under its GPU's power limit (power_model.hpp): its energy, and in the sustained
/// regime its ops slowed to the clock the limit lets the GPU hold. `dynamic_j`: each op's
/// dynamic energy per run.
void hold_to_power_limit(analysis &r, const std::vector<op> &ops,
                         std::vector<prediction> &predicted, const std::vector<double> &dynamic_j) {
  const perf_model &model = r.model;
  step_work work;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const double runs = static_cast<double>(ops[i].count);
    work.step_s += predicted[i].time_s * runs;
    work.dynamic_j += dynamic_j[i] * runs;
    if (clock_bound(ops[i], predicted[i]))
      work.clock_bound_s += predicted[i].device_time_s * runs;
    if (stretchable(ops[i], predicted[i]))
      work.stretchable_s += predicted[i].device_time_s * runs;
    if (ops[i].is_collective())
      work.collective_s += predicted[i].time_s * runs;
  }
  r.budget = power_budget_of(model.spec(), model.parameters());
  // The plain roofline is the boost clock's bound: it stays one.
  const clock_regime regime =
      model.options().roofline_only ? clock_regime::burst : model.options().clock;
  r.power = draw_of(work, r.budget, regime);
  for (std::size_t i = 0; i < ops.size(); ++i)
    predicted[i] = held_to(std::move(predicted[i]), ops[i], r.power);
}

} // namespace

double pipeline_passes(const analysis &stage) {
  const auto stages = static_cast<double>(stage.network.pipeline_stages);
  if (stages < 2 || stage.network.mode == run_mode::training || !(stage.totals.time_s > 0))
    return 1;
  double edge = 0; // outside the repeat blocks: a layer path of one name
  for (const analysed_op &o : stage.ops)
    if (o.op.layer.find('/') == std::string::npos)
      edge += o.total_time_s;
  return stages - (stages - 1) * edge / stage.totals.time_s;
}

bool stretchable(const op &o, const prediction &p) {
  return !p.launch_bound && !o.is_collective();
}

prediction held_to(prediction p, const op &o, const power_draw &power) {
  if (!(power.slowdown > 1) || !(power.whole_step ? stretchable(o, p) : clock_bound(o, p)))
    return p;
  const double s = power.slowdown;
  p.device_time_s *= s;
  p.device_range = p.device_range * s;
  p.time_s = std::max(p.device_time_s, p.host_floor_s);
  p.range = {std::max(p.device_range.low_s, p.host_floor_s),
             std::max(p.device_range.high_s, p.host_floor_s)};
  p.flop_per_s = p.time_s > 0 ? static_cast<double>(o.flops) / p.time_s : 0;
  return p;
}

namespace {

/// The step's time shares: memory-bound, launch-bound, on the links, and each op's.
void share_out(analysis &r) {
  step_totals &t = r.totals;
  if (!(t.time_s > 0))
    return;
  t.memory_bound_share = t.memory_bound_time_s / t.time_s;
  t.launch_bound_share = t.launch_bound_time_s / t.time_s;
  t.communication_share = t.communication_time_s / t.time_s;
  for (analysed_op &entry : r.ops)
    entry.time_share = entry.total_time_s / t.time_s;
}

} // namespace

analysis analyze_ops(std::string name, std::vector<op> ops, const perf_model &given,
                     std::string device_selection) {
  // The step decides where its operands are, unless the caller did.
  const perf_model model = given.with_operand_cache(operand_cache_for(given, ops));
  analysis r;
  r.network.name = std::move(name);
  r.model = model;
  r.device_selection = std::move(device_selection);
  r.notes = model_notes(model, ops);
  r.ops.reserve(ops.size());
  std::vector<prediction> predicted;
  std::vector<double> dynamic_j;
  predicted.reserve(ops.size());
  dynamic_j.reserve(ops.size());
  for (const op &o : ops) {
    predicted.push_back(model.predict(o));
    const prediction &p = predicted.back();
    dynamic_j.push_back(
        dynamic_energy_j(o, p.device_time_s - p.roofline_time_s, model.spec(), model.parameters()));
  }
  hold_to_power_limit(r, ops, predicted, dynamic_j);
  for (std::size_t i = 0; i < ops.size(); ++i) {
    op &o = ops[i];
    analysed_op entry;
    entry.prediction = std::move(predicted[i]);
    entry.energy_j = dynamic_j[i] + r.budget.idle_w * entry.prediction.time_s;
    entry.total_time_s = entry.prediction.time_s * static_cast<double>(o.count);
    entry.total_range = entry.prediction.range * static_cast<double>(o.count);
    entry.op = std::move(o);
    step_totals &t = r.totals;
    const double runs = static_cast<double>(entry.op.count);
    t.time_s += entry.total_time_s;
    t.range += entry.total_range;
    t.device_range += entry.prediction.device_range * runs;
    t.flops += static_cast<double>(entry.op.flops) * runs;
    t.bytes += static_cast<double>(entry.op.bytes) * runs;
    t.device_time_s += entry.prediction.device_time_s * runs;
    if (entry.prediction.bound == bound::memory)
      t.memory_bound_time_s += entry.total_time_s;
    if (entry.prediction.launch_bound) {
      t.launch_bound_time_s += entry.total_time_s;
      ++t.launch_bound_ops;
    }
    if (entry.op.is_collective())
      t.communication_time_s += entry.total_time_s;
    if (entry.op.is_gemm()) {
      t.gemm_time_s += entry.total_time_s;
      t.gemm_count = detail::require_no_overflow(
          detail::checked_sum({t.gemm_count, entry.op.count}), entry.op.where,
          "layer `" + entry.op.layer + "`",
          "the count of the step's GEMM runs (the repeat counts of every GEMM up to it)");
    }
    ++t.op_count;
    r.ops.push_back(std::move(entry));
  }
  share_out(r);
  return r;
}

namespace {

/// A captured program issued eagerly: the host dispatches every aten op it ran (views too), and
/// where that takes longer than the ops' own time, the step waits on the host: its time, the
/// shares of it and the idle energy over the wait follow.
void hold_to_dispatch(analysis &r, const traced_program &trace, std::vector<std::string> &notes) {
  step_totals &t = r.totals;
  if (r.model.options().roofline_only)
    return;
  t.dispatch_s = static_cast<double>(trace.aten_ops) * r.model.host().framework_op_s;
  if (t.dispatch_s <= t.time_s)
    return;
  notes.push_back(fmt::format(
      "host-bound in eager PyTorch: its {} aten ops take about {} of host time to dispatch "
      "({:.1f} µs each, a typical host's), the GPU {} to run them: the step is the host's "
      "time; CUDA graphs or torch.compile take it away",
      trace.aten_ops, detail::duration(t.dispatch_s), r.model.host().framework_op_s * 1e6,
      detail::duration(t.time_s)));
  const double waited_s = t.dispatch_s - t.time_s;
  r.power.step_s += waited_s;
  r.power.energy_j += r.budget.idle_w * waited_s;
  r.power.average_w = r.power.energy_j / r.power.step_s;
  t.time_s = t.dispatch_s;
  t.range = {std::max(t.range.low_s, t.dispatch_s), std::max(t.range.high_s, t.dispatch_s)};
  share_out(r);
}

} // namespace

analysis analyze(const network &net, const perf_model &model, std::string device_selection,
                 std::optional<double> memory_reserve) {
  std::vector<op> ops = lower(net);
  const gpu_spec &spec = model.spec();
  int over_pcie = 0;
  for (const op &o : ops) {
    if (!o.is_collective() || !spec.interconnect)
      continue;
    const interconnect_spec &links = *spec.interconnect;
    if (o.gpus > links.gpus && o.gpus <= links.max_gpus())
      over_pcie = std::max(over_pcie, o.gpus);
  }
  std::optional<memory_use> memory;
  if (const double capacity = model.spec().memory_bytes; capacity > 0) {
    if (memory_reserve && *memory_reserve >= capacity)
      throw input_error(fmt::format(
          "pipeline_options::memory_reserve {:g} GB: at least all of the {}'s {:.1f} GB; "
          "keep back less than the GPU has",
          *memory_reserve / 1e9, model.spec().name, capacity / 1e9));
    memory = memory_of(net, ops, capacity, memory_reserve_bytes(capacity, memory_reserve));
  }
  // A network's training step ends in its optimizer's step (a captured program has its own).
  // Its gradients reduced over its data-parallel group first.
  if (net.mode == run_mode::training && !net.trace && memory && memory->weights_bytes > 0) {
    for (op &o : data_parallel_ops(net, *memory))
      ops.push_back(std::move(o));
    ops.push_back(optimizer_step_op(net, *memory));
  }
  analysis r = analyze_ops(net.name, std::move(ops), model, std::move(device_selection));
  r.memory = memory;
  std::vector<std::string> notes = net.notes;
  if (net.trace)
    hold_to_dispatch(r, *net.trace, notes);
  if (over_pcie > 0)
    notes.push_back(fmt::format(
        "collectives over {} GPUs run over PCIe ({:.0f} GB/s a direction): the {}'s {} links "
        "join {} GPUs at most",
        over_pcie, spec.interconnect->pcie_bytes_per_s / 1e9, spec.name, spec.interconnect->kind,
        spec.interconnect->gpus));
  for (std::string &note : routing_notes(net))
    notes.push_back(std::move(note));
  if (net.mode == run_mode::training && net.recompute == recomputation::full)
    notes.push_back("recompute full: memory keeps each repeat block's input only, and the "
                    "backward pass runs each block's forward again (the `/recompute` ops), "
                    "about a third more GEMM work");
  if (const data_parallelism &d = net.data_parallel;
      net.mode == run_mode::training && d.gpus > 1 && !net.trace)
    notes.push_back(fmt::format(
        "one GPU of {} data-parallel (ZeRO-{}{}): its gradient and weight traffic counted in "
        "full, where a framework overlaps it with the backward pass and hides a little of it "
        "(`roofline-advise train` prices what stays exposed); the optimizer state{} sharded over "
        "the group",
        d.gpus, d.zero_stage,
        d.expert_parallel > 1
            ? fmt::format(", the experts' over {} GPUs each", d.gpus / d.expert_parallel)
            : std::string(),
        d.zero_stage >= 3   ? ", gradients and weights"
        : d.zero_stage == 2 ? " and gradients"
        : d.zero_stage == 1 ? ""
                            : " not"));
  if (net.mode == run_mode::training && net.pipeline_stages > 1)
    notes.push_back(fmt::format(
        "one micro-batch on one stage of a pipeline of {}: memory holds {} micro-batches' "
        "activations (1F1B's first stage); a step of m micro-batches takes about (m + {}) times "
        "this stage's time, the bubble's {} (`roofline-advise train` prices the whole step)",
        net.pipeline_stages, net.pipeline_stages, net.pipeline_stages - 1,
        net.pipeline_stages - 1));
  r.notes.insert(r.notes.begin(), notes.begin(), notes.end());
  r.network = net;
  return r;
}

} // namespace roofline
