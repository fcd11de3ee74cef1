// SPDX-License-Identifier: Apache-2.0
#include "roofline/model/model_parameters.hpp"

#include <fmt/format.h>

#include <cmath>
#include <iterator>
#include <stdexcept>

namespace roofline {

parameter parameter_at(parameter group, precision p) {
  return static_cast<parameter>(static_cast<int>(group) + static_cast<int>(p));
}

parameter misalignment_slowdown_at(int alignment_bytes) {
  for (std::size_t i = 0; i < misaligned_row_bytes.size(); ++i)
    if (misaligned_row_bytes[i] == alignment_bytes)
      return static_cast<parameter>(static_cast<int>(parameter::misalignment_slowdown) +
                                    static_cast<int>(i));
  throw std::out_of_range(
      fmt::format("no misalignment slowdown for {}-byte rows", alignment_bytes));
}

parameter attention_efficiency_at(int head_dim, parameter group) {
  for (std::size_t i = 0; i < attention_head_dims.size(); ++i)
    if (attention_head_dims[i] == head_dim)
      return static_cast<parameter>(static_cast<int>(group) + static_cast<int>(i));
  throw std::out_of_range(fmt::format("no attention efficiency for head dim {}", head_dim));
}

parameter all_reduce_parameter_at(parameter group, int gpus) {
  for (std::size_t i = 0; i < all_reduce_gpu_counts.size(); ++i)
    if (all_reduce_gpu_counts[i] == gpus)
      return static_cast<parameter>(static_cast<int>(group) + static_cast<int>(i));
  throw std::out_of_range(fmt::format("no all-reduce parameter for {} GPUs", gpus));
}

parameter memory_parameter_at(parameter group, memory_op_kind kind) {
  return static_cast<parameter>(static_cast<int>(group) + static_cast<int>(kind));
}

parameter conv_slowdown_at(conv_variant variant, parameter group) {
  if (static_cast<int>(variant) >= conv_gemm_variant_count)
    throw std::out_of_range(
        fmt::format("no conv slowdown for {} convolutions", to_string(variant)));
  return static_cast<parameter>(static_cast<int>(group) + static_cast<int>(variant));
}

namespace {

/// A row, or a group of rows (one per precision or per misaligned row width) sharing it.
struct row {
  parameter id;
  const char *name;
  double default_value, min, max;
  const char *unit;
  parameter_fit fit;
  const char *doc;
};

// Defaults are generic: what a GPU of no fitted architecture gets. Bounds keep values physical
// (fractions ≤ 1, slowdowns ≥ 1) and refuse nonsense in files.
constexpr row precision_groups[] = {
    {parameter::efficiency, "efficiency", 0.8, 0.05, 1, "fraction of peak", parameter_fit::time,
     "fraction of the dense peak that large, aligned GEMMs reach"},
    {parameter::wave_overhead_s, "wave_overhead_s", 1.5e-6, 0, 50e-6, "s", parameter_fit::time,
     "per wave of tiles: a tile's prologue, epilogue and pipeline fill"},
    {parameter::split_k_below_waves, "split_k_below_waves", 0.25, 0, 4, "waves",
     parameter_fit::launches,
     "cuBLAS adds a split-K reduction to kernels without TMA when the output, in 64x64 tiles, "
     "fills less than this many waves (0: never)"},
    {parameter::narrow_split_k_below_waves, "narrow_split_k_below_waves", 0.25, 0, 4, "waves",
     parameter_fit::launches,
     "the same where rows are aligned to one element only (cuBLAS splits sooner there)"},
};

constexpr row misalignment_group{
    parameter::misalignment_slowdown,
    "misalignment_slowdown",
    0,
    1,
    64,
    "x",
    parameter_fit::time,
    "rate of the CUTLASS fallback kernels cuBLAS runs for rows breaking the 16-byte rule, as a "
    "slowdown against the peak"};
constexpr double misalignment_defaults[] = {2.0, 3.0, 5.0, 8.0}; // 8-, 4-, 2-, 1-byte rows

constexpr row attention_head_dim_groups[] = {
    {parameter::attention_efficiency, "attention_efficiency", 0.6, 0.05, 1, "fraction of peak",
     parameter_fit::attention,
     "fraction of the dense tensor peak a fused attention kernel's tiles reach, by head dim"},
    {parameter::attention_backward_efficiency, "attention_backward_efficiency", 0.7, 0.05, 1,
     "fraction", parameter_fit::attention,
     "the backward kernel's rate (2.5x the forward's products) as a fraction of the forward's, "
     "by head dim"},
    {parameter::attention_decode_dram_efficiency, "attention_decode_dram_efficiency", 0.85, 0.05, 1,
     "fraction", parameter_fit::attention,
     "decode: fraction of the DRAM bandwidth the KV cache streams at once every SM has a chunk, "
     "by head dim"},
};

constexpr row scalars[] = {
    {parameter::dram_efficiency, "dram_efficiency", 0.9, 0.05, 1, "fraction", parameter_fit::time,
     "fraction of the DRAM bandwidth a GEMM's streaming reaches"},
    {parameter::l2_bytes_per_sm_cycle, "l2_bytes_per_sm_cycle", 48, 4, 1024, "bytes/SM/cycle",
     parameter_fit::time,
     "L2 bandwidth per SM per cycle of the boost clock: the die's, whatever its DRAM"},
    {parameter::l2_resident_fraction, "l2_resident_fraction", 0.5, 0, 1, "fraction of L2",
     parameter_fit::none, "operands up to this share of L2 stay there between back-to-back calls"},
    {parameter::k_step_latency_s, "k_step_latency_s", 0.5e-6, 0, 10e-6, "s", parameter_fit::time,
     "one memory latency: a tile waits this long per K step its pipeline cannot cover"},
    {parameter::kernel_overhead_s, "kernel_overhead_s", 1e-6, 0, 50e-6, "s", parameter_fit::time,
     "per kernel on the GPU: its fill and drain, paid once"},
    {parameter::wave_quantization, "wave_quantization", 1, 0, 1, "fraction", parameter_fit::time,
     "how much of a partial last wave costs a whole one (persistent kernels blunt it)"},
    {parameter::deep_split_k_below_waves, "deep_split_k_below_waves", 1, 0, 16, "waves",
     parameter_fit::launches,
     "cuBLAS's split-K rule for a deep K: a reduction below this many output waves ..."},
    {parameter::deep_split_k_min_k, "deep_split_k_min_k", 1024, 1, 1e6, "elements",
     parameter_fit::launches, "... where K is at least this"},
    {parameter::min_split_k_depth, "min_split_k_depth", 256, 1, 65536, "elements",
     parameter_fit::none, "cuBLAS splits K only into slices at least this deep"},
    {parameter::split_k_max_waves, "split_k_max_waves", 2, 0.1, 64, "waves", parameter_fit::none,
     "the tensor-core kernels split K only while the work items fill at most this many waves"},
    {parameter::misaligned_bandwidth_slowdown, "misaligned_bandwidth_slowdown", 1.5, 1, 8, "x",
     parameter_fit::time,
     "the fallback kernels' narrower loads: bandwidth lost per halving of the rows' alignment"},
    {parameter::gemv_bandwidth_slowdown, "gemv_bandwidth_slowdown", 1.5, 1, 16, "x",
     parameter_fit::time, "gemmSN (fp32, 2 <= M <= 8) streams this much slower than DRAM allows"},
    {parameter::misaligned_gemv_bandwidth_slowdown, "misaligned_gemv_bandwidth_slowdown", 1.5, 1,
     16, "x", parameter_fit::time, "the GEMV (M = 1) of misaligned 2-byte rows, likewise"},
    {parameter::cold_dram_efficiency, "cold_dram_efficiency", 0.8, 0.05, 1, "fraction",
     parameter_fit::time,
     "fraction of the DRAM bandwidth a GEMM reaches when no operand is in L2 (cache_state::cold)"},
    {parameter::cold_dram_latency_s, "cold_dram_latency_s", 0, 0, 50e-6, "s", parameter_fit::time,
     "per call with cold operands: the wait before DRAM streams at that rate"},
};

constexpr row attention_scalars[] = {
    {parameter::attention_tile_overhead_s, "attention_tile_overhead_s", 1e-6, 0, 50e-6, "s",
     parameter_fit::attention, "per wave of query tiles: loading Q, writing O and its statistics"},
    {parameter::attention_wave_quantization, "attention_wave_quantization", 1, 0, 1, "fraction",
     parameter_fit::attention,
     "how much of a partial last wave of query tiles costs a whole one (persistent kernels blunt "
     "it)"},
    {parameter::attention_kernel_overhead_s, "attention_kernel_overhead_s", 3e-6, 0, 50e-6, "s",
     parameter_fit::attention,
     "per prefill or backward call of fused attention: its kernels' fill and drain"},
    {parameter::attention_dram_efficiency, "attention_dram_efficiency", 0.85, 0.05, 1, "fraction",
     parameter_fit::attention,
     "prefill: fraction of the DRAM bandwidth fused attention streams Q, K, V and O at"},
    {parameter::attention_decode_chunk, "attention_decode_chunk", 256, 16, 65536, "keys",
     parameter_fit::attention,
     "decode: the fewest keys one CTA streams (FlashDecoding splits the KV cache to fill the SMs, "
     "not finer)"},
    {parameter::attention_decode_overhead_s, "attention_decode_overhead_s", 1e-6, 0, 50e-6, "s",
     parameter_fit::attention, "decode: the split's combine kernel, after the keys stream"},
    {parameter::attention_decode_floor_s, "attention_decode_floor_s", 5e-6, 0, 50e-6, "s",
     parameter_fit::attention, "decode: the least a call takes, however few keys it reads"},
    {parameter::attention_causal_imbalance, "attention_causal_imbalance", 1, 0, 8, "x",
     parameter_fit::attention,
     "causal prefill: how many times the longest query tile's excess over the mean is paid (its "
     "tiles are not scheduled longest first)"},
    {parameter::attention_backward_dram_efficiency, "attention_backward_dram_efficiency", 0.5, 0.05,
     1, "fraction", parameter_fit::attention,
     "backward: fraction of the DRAM bandwidth its reads and writes reach, on top of its "
     "products (dQ accumulated in fp32, the pre- and post-processing kernels)"},
    {parameter::attention_masked_block_cost, "attention_masked_block_cost", 1, 1, 4, "blocks",
     parameter_fit::attention,
     "causal prefill: what a key block the mask cuts through (one a query tile) costs, in whole "
     "blocks"},
    {parameter::attention_backward_tile_overhead_s, "attention_backward_tile_overhead_s", 5e-6, 0,
     100e-6, "s", parameter_fit::attention,
     "backward: per wave of tiles, loading and writing what the forward's tiles do not (dK, dV, "
     "the fp32 dQ)"},
    {parameter::attention_stream_overlap, "attention_stream_overlap", 1, 0, 1, "fraction",
     parameter_fit::attention,
     "prefill: the share of the shorter of streaming and the tiles' math hidden under the longer "
     "(1: one fused kernel; less where the framework streams Q, K and V in kernels of its own, "
     "as TensorRT-LLM's RoPE and KV-cache write)"},
    {parameter::attention_l2_speedup, "attention_l2_speedup", 1, 1, 16, "x",
     parameter_fit::attention,
     "with a warm cache (calls back to back on the same tensors: a benchmark's graph replay), a "
     "call whose bytes fit in L2 streams them this many times faster than from DRAM; 1: never "
     "from L2"},
    {parameter::attention_decode_wave_overhead_s, "attention_decode_wave_overhead_s", 0, 0, 50e-6,
     "s", parameter_fit::attention,
     "decode: per wave of key chunks over the SMs, a CTA's own work besides streaming (loading "
     "its queries, writing its partial output); 0: none"},
    {parameter::attention_decode_group_wave_overhead_s, "attention_decode_group_wave_overhead_s", 0,
     0, 50e-6, "s", parameter_fit::attention,
     "decode: attention_decode_wave_overhead_s for a CTA serving a GQA group of query heads "
     "(another kernel: tensor cores on the group's rows); 0: none"},
    {parameter::attention_decode_max_group, "attention_decode_max_group", 1024, 1, 1024,
     "query heads", parameter_fit::attention,
     "decode: the largest GQA group one CTA serves from one read of its keys; a larger one runs "
     "one query head a CTA"},
};

constexpr row memory_groups[] = {
    {parameter::memory_floor_s, "memory_floor_s", 2e-6, 0, 100e-6, "s", parameter_fit::memory,
     "a memory-bound kernel's least time, however few bytes it moves (launch, a wave's latency), "
     "by op kind"},
    {parameter::memory_efficiency, "memory_efficiency", 0.8, 0.02, 1, "fraction",
     parameter_fit::memory,
     "fraction of the bandwidth a memory-bound kernel streams at (DRAM's, nearer L2's the more "
     "of L2 its bytes leave free), by op kind"},
    {parameter::memory_row_s, "memory_row_s", 0, 0, 1e-6, "s", parameter_fit::memory,
     "a row-wise kernel's (a norm's, a softmax's) time per row beyond its bytes: one row a warp "
     "or a block, its reduction and its start, by op kind; 0: no row cost"},
    {parameter::memory_row_bytes_per_s, "memory_row_bytes_per_s", 0, 0, 1e13, "bytes/s",
     parameter_fit::memory,
     "the rate one row of a row-wise kernel streams at (a block on it alone): a kernel of few, "
     "long rows takes at least a row's bytes at this rate, by op kind; 0: no such bound"},
};

constexpr row conv_variant_groups[] = {
    {parameter::conv_slowdown, "conv_slowdown", 1, 0.2, 100, "x", parameter_fit::conv,
     "a forward convolution's time against the GEMM model's time for its implicit GEMM, by "
     "variant (cuDNN's kernels gather their operands from NHWC tensors; 1: as a GEMM)"},
    {parameter::conv_data_grad_slowdown, "conv_data_grad_slowdown", 1, 0.2, 100, "x",
     parameter_fit::conv,
     "a data-gradient convolution's time against its forward variant's rate for its own implicit "
     "GEMM, by variant (a strided one scatters into an input larger than its GEMM's M)"},
    {parameter::conv_weight_grad_slowdown, "conv_weight_grad_slowdown", 1, 0.2, 100, "x",
     parameter_fit::conv,
     "a weight-gradient convolution's time against its forward variant's rate for its own "
     "implicit GEMM, by variant"},
};

constexpr row conv_scalars[] = {
    {parameter::conv_overhead_s, "conv_overhead_s", 0, 0, 50e-6, "s", parameter_fit::conv,
     "per implicit-GEMM convolution, beyond the GEMM's fixed costs: cuDNN's kernel computes its "
     "filter offsets and output coordinates before its K loop"},
    {parameter::conv_small_channel_bf16_slowdown, "conv_small_channel_bf16_slowdown", 1, 0.2, 10,
     "x", parameter_fit::conv,
     "a bf16 small-channel forward convolution's time against an fp16 one's (cuDNN runs fp16 "
     "C = 3 stems 2-3x faster than bf16 ones)"},
    {parameter::conv_grouped_floor_s, "conv_grouped_floor_s", 3e-6, 0, 100e-6, "s",
     parameter_fit::conv,
     "a grouped (depthwise) convolution's least time, however small (launch, a wave's latency)"},
    {parameter::conv_grouped_efficiency, "conv_grouped_efficiency", 0.3, 0.01, 1,
     "fraction of peak", parameter_fit::conv,
     "fraction of the fp32 CUDA-core peak a grouped convolution's direct kernel computes at"},
    {parameter::conv_grouped_dram_efficiency, "conv_grouped_dram_efficiency", 0.8, 0.02, 1,
     "fraction", parameter_fit::conv,
     "fraction of the bandwidth (memory_bytes_per_s: DRAM's, nearer L2's for small tensors) a "
     "grouped convolution streams its tensors at"},
};

// Today's typical figures as defaults (docs/benchmarks.md compares them with NCCL on two H200s):
// what a GPU of an architecture with no all-reduce fit gets.
constexpr row all_reduce_gpu_count_groups[] = {
    {parameter::all_reduce_latency_s, "all_reduce_latency_s", 15e-6, 0, 1e-3, "s",
     parameter_fit::all_reduce,
     "an all-reduce's fixed cost over this many GPUs of one host: its kernels' launch and "
     "synchronisation, however small the message"},
    {parameter::all_reduce_link_efficiency, "all_reduce_link_efficiency", 0.8, 0.01, 2, "fraction",
     parameter_fit::all_reduce,
     "the share of the links' bandwidth (one direction) an all-reduce's traffic reaches over this "
     "many GPUs (above 1: NVLink SHARP reduces in the switch, beating the ring's bound)"},
};

constexpr row all_reduce_scalars[] = {
    {parameter::all_reduce_oneshot_below_bytes, "all_reduce_oneshot_below_bytes", 0, 0, 1e9,
     "bytes", parameter_fit::all_reduce,
     "messages below this many bytes a GPU take the one-shot path: each GPU reads every peer's "
     "whole message, (N - 1) x its bytes over its links instead of the ring's 2(N - 1)/N; 0: "
     "never"},
};

// NCCL's own, not a GPU's: bench/nccl_fit's medians over B300 nccl-tests (NVIDIA AIConfigurator
// 095f58a, ../shared/data/aic/nccl_b300_sxm_trtllm.csv), 64 MiB and up, by GPU count.
constexpr row collective_gpu_count_groups[] = {
    {parameter::reduce_scatter_bandwidth_ratio, "reduce_scatter_bandwidth_ratio", 0, 0.1, 2, "x",
     parameter_fit::collectives,
     "the bus bandwidth a reduce-scatter reaches against an all-reduce's over this many GPUs "
     "(all_reduce_link_efficiency's share of the links times this)"},
    {parameter::all_gather_bandwidth_ratio, "all_gather_bandwidth_ratio", 0, 0.1, 2, "x",
     parameter_fit::collectives,
     "the bus bandwidth an all-gather reaches against an all-reduce's over this many GPUs"},
    {parameter::all_to_all_bandwidth_ratio, "all_to_all_bandwidth_ratio", 0, 0.1, 2, "x",
     parameter_fit::collectives,
     "the bus bandwidth an all-to-all reaches against an all-reduce's over this many GPUs"},
};
constexpr double collective_ratio_defaults[][all_reduce_gpu_counts.size()] = {
    {0.749, 0.859, 0.937}, {0.809, 0.890, 0.932}, {0.619, 0.781, 0.853}};

// Measured on an H200 (bench/overlap_check.py, bench/data/training/h200-overlap-run2.json): a
// collective's stand-in, 25 MiB buckets of 8, 16 or 32 programs launched while cuBLAS GEMMs run,
// hid 0.13-0.32 of itself against the two run one after the other; the median of 9 rounds.
constexpr row overlap_scalars[] = {
    {parameter::data_parallel_overlap, "data_parallel_overlap", 0.237, 0, 1, "fraction",
     parameter_fit::collectives,
     "the share of data parallelism's traffic that hides behind the backward (or forward) pass "
     "it overlaps, of what that pass could hide: a collective's kernels launched while the "
     "GEMMs run wait for SMs, then hold them, the GEMMs' waves left ragged; 1: all it could"},
};

// Energy and the power cap (power_model.hpp). An architecture with no power fit keeps 0 for the
// energies: each is then taken from the datasheet (the limit's headroom over the unit's dense peak,
// over DRAM's bandwidth: at its peak a unit draws just the limit), and the analysis says so. The
// idle share's and the burst's defaults are an H200's rounded (123-134 W of 700, a 58 ms burst:
// bench/data/power/h200-micro-run{1,2}.json), not fitted on the GPU they are used for.
constexpr row power_precision_group{
    parameter::energy_per_flop_pj,
    "energy_per_flop_pj",
    0,
    0,
    1000,
    "pJ/FLOP",
    parameter_fit::power,
    "energy per FLOP of this precision's unit beyond the idle draw, at the clock the power cap "
    "holds (tensor cores where the precision has them, else the CUDA cores); 0: from the "
    "datasheet"};

constexpr row power_scalars[] = {
    {parameter::dram_energy_per_byte_pj, "dram_energy_per_byte_pj", 0, 0, 10000, "pJ/byte",
     parameter_fit::power,
     "energy per byte read or written in DRAM beyond the idle draw; 0: from the datasheet"},
    {parameter::idle_power_share, "idle_power_share", 0.18, 0, 1, "fraction of the power limit",
     parameter_fit::power, "what the board draws with nothing running, as a share of its limit"},
    // Default: 0.345, fitted on an H200's ops held at its limit (specs/arch/hopper.yaml), rounded.
    {parameter::stall_power_share, "stall_power_share", 0.35, 0, 1, "fraction of the power limit",
     parameter_fit::power,
     "what the board draws beyond idle and its work's energy while an op runs past its roofline "
     "time (SMs issuing, waiting on memory or on their reductions), as a share of its limit"},
    {parameter::power_burst_s, "power_burst_s", 0.06, 0, 10, "s", parameter_fit::power,
     "how long work at full power runs at the boost clock from idle before the power "
     "controller lowers it: a step shorter than this alone is a burst"},
    // Default: 0.4, an H200's rounded (specs/arch/hopper.yaml), as idle_power_share's.
    {parameter::collective_headroom_share, "collective_headroom_share", 0.4, 0, 1, "fraction",
     parameter_fit::power,
     "the share of the headroom under the limit that a step's collectives leave (the GPU near "
     "idle while its links work) which its clock-bound work spends on a higher clock: the "
     "controller raises the clock less than the energy allows (a higher clock needs a higher "
     "voltage); 1: all of it"},
};

std::vector<parameter_info> build_table() {
  std::vector<parameter_info> table;
  const auto add = [&](const row &r) {
    table.push_back({r.id, r.name, r.default_value, r.min, r.max, r.unit, r.fit, r.doc});
  };
  // A group's rows take consecutive slots from its id, one per key ("efficiency.fp16").
  const auto add_group = [&](const row &g, const std::vector<std::string> &keys,
                             const double *defaults = nullptr) {
    for (std::size_t i = 0; i < keys.size(); ++i)
      table.push_back({static_cast<parameter>(static_cast<int>(g.id) + static_cast<int>(i)),
                       std::string(g.name) + "." + keys[i],
                       defaults ? defaults[i] : g.default_value, g.min, g.max, g.unit, g.fit,
                       g.doc});
  };
  std::vector<std::string> precisions, row_widths, head_dims, memory_kinds, conv_variants,
      gpu_counts;
  for (const precision p : all_precisions)
    precisions.emplace_back(to_string(p));
  for (const int bytes : misaligned_row_bytes)
    row_widths.push_back(std::to_string(bytes));
  for (const int head_dim : attention_head_dims)
    head_dims.push_back(std::to_string(head_dim));
  for (const int gpus : all_reduce_gpu_counts)
    gpu_counts.push_back(std::to_string(gpus));
  for (const std::string_view kind : memory_op_names())
    memory_kinds.emplace_back(kind);
  for (const std::string_view variant : conv_gemm_variant_names())
    conv_variants.emplace_back(variant);
  for (const row &g : precision_groups)
    add_group(g, precisions);
  add_group(misalignment_group, row_widths, misalignment_defaults);
  for (const row &r : scalars)
    add(r);
  for (const row &g : attention_head_dim_groups)
    add_group(g, head_dims);
  for (const row &r : attention_scalars)
    add(r);
  for (const row &g : memory_groups)
    add_group(g, memory_kinds);
  for (const row &g : conv_variant_groups)
    add_group(g, conv_variants);
  for (const row &r : conv_scalars)
    add(r);
  for (const row &g : all_reduce_gpu_count_groups)
    add_group(g, gpu_counts);
  for (const row &r : all_reduce_scalars)
    add(r);
  for (std::size_t i = 0; i < std::size(collective_gpu_count_groups); ++i)
    add_group(collective_gpu_count_groups[i], gpu_counts, collective_ratio_defaults[i]);
  for (const row &r : overlap_scalars)
    add(r);
  add_group(power_precision_group, precisions);
  for (const row &r : power_scalars)
    add(r);
  for (std::size_t i = 0; i < table.size(); ++i)
    if (static_cast<std::size_t>(table[i].id) != i)
      throw std::logic_error("parameter table out of slot order at " + table[i].name);
  if (table.size() != parameter_count)
    throw std::logic_error("parameter table misses parameters");
  return table;
}

} // namespace

const std::vector<parameter_info> &parameter_table() {
  static const std::vector<parameter_info> table = build_table();
  return table;
}

const parameter_info &info(parameter id) {
  return parameter_table().at(static_cast<std::size_t>(id));
}

std::optional<parameter> find_parameter(std::string_view name) {
  for (const parameter_info &row : parameter_table())
    if (row.name == name)
      return row.id;
  return std::nullopt;
}

model_parameters::model_parameters() {
  for (const parameter_info &row : parameter_table())
    m_values[static_cast<std::size_t>(row.id)] = row.default_value;
}

std::optional<std::string> out_of_bounds(parameter id, double value) {
  const parameter_info &row = info(id);
  if (std::isfinite(value) && value >= row.min && value <= row.max)
    return std::nullopt;
  return fmt::format("`{}` = {:.6g} is outside [{:.6g}, {:.6g}] {}", row.name, value, row.min,
                     row.max, row.unit);
}

void model_parameters::set(parameter id, double value) {
  if (const auto why = out_of_bounds(id, value))
    throw std::out_of_range(*why);
  m_values[static_cast<std::size_t>(id)] = value;
}

double model_parameters::misalignment_slowdown(int alignment_bytes) const {
  return alignment_bytes >= 16 ? 1.0 : (*this)[misalignment_slowdown_at(alignment_bytes)];
}

model_parameters apply(model_parameters base, const parameter_overrides &overrides) {
  for (const auto &[id, value] : overrides.values)
    base.set(id, value);
  if (!overrides.origin.empty())
    base.origin = base.origin == model_parameters{}.origin ? overrides.origin
                                                           : base.origin + "; " + overrides.origin;
  return base;
}

parameter_overrides changed(const model_parameters &start, const model_parameters &fitted,
                            std::string origin) {
  parameter_overrides result{std::move(origin), {}};
  for (const parameter_info &row : parameter_table())
    if (fitted[row.id] != start[row.id])
      result.values.emplace_back(row.id, fitted[row.id]);
  return result;
}

} // namespace roofline
