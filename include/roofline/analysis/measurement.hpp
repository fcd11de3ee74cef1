// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/common/enum_table.hpp"
#include "roofline/model/op.hpp"
#include "roofline/model/perf_model.hpp"

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace roofline {

enum class measurement_status { measured, skipped, failed };

std::string_view to_string(measurement_status s);

/// Hardware counters over one call of an op (every kernel the call launched).
struct counter_readings {
  double kernel_time_s = 0; ///< the call's kernels' durations, summed (CUPTI activity records)
  double dram_read_bytes = 0;
  double dram_write_bytes = 0;
  double l2_bytes = 0;
  double tensor_flops = 0; ///< tensor-core operations (FMA = 2), including tile-quantization waste
  double fp32_flops = 0;   ///< CUDA-core fp32 FLOPs (FMA = 2)
  double fp64_flops = 0;
  double sm_clock_hz = 0;
  int passes = 0; ///< replay passes the counters needed
};

/// One op's calls held back to back at the board's power limit (measure_options::held_s),
/// read through NVML once the power controller had settled: what the op costs sustained, beside
/// its burst from idle (measurement::device_time_s).
struct held_reading {
  double time_s = 0;   ///< GPU time per call, sustained
  double energy_j = 0; ///< the board's energy per call (NVML's counter), idle draw included
  double power_w = 0;  ///< the board's average draw over the window
  double sm_clock_hz = 0;
  std::string throttle; ///< why the clock was below its maximum, in words; "" for no reason
};

/// What running one op on the GPU showed.
struct measurement {
  /// "cublas", "naive", "tiled", "tensorcore" (GEMMs), "cudnn" (convolutions, fused attention),
  /// "roofline-kernels" (memory-bound ops, our own kernels)
  std::string engine;
  measurement_status status = measurement_status::measured;
  /// Why skipped or failed, or, for a measured op, why device_time_s is missing; else empty.
  std::string note;
  /// Eager: the median time per call of back-to-back calls issued from the host one by one (the
  /// larger of the GPU's time and the host's cost of issuing a call), seconds.
  double time_s = 0;
  double min_time_s = 0, max_time_s = 0; ///< eager, the fastest and slowest timed sample per call
  int samples = 0;                       ///< eager timed samples behind the median
  /// Median per-call time of back-to-back calls replayed from a CUDA graph: the GPU's time per
  /// call, no host gap (all kernels of the call, split-K reduction included), seconds; 0 when not
  /// measured (the engine's calls could not be captured).
  double device_time_s = 0;
  double device_min_time_s = 0, device_max_time_s = 0; ///< graph-replayed extremes per call
  bool cold_l2 = false;      ///< operands rotated through buffers larger than L2
  double relative_error = 0; ///< sampled outputs against a double-precision reference
  std::optional<counter_readings> counters;
  std::vector<std::string> kernels; ///< kernel names the call launched, each once
  int launches = 0;                 ///< kernels one call launched, repeats counted; 0: not traced
  /// The durations of the kernels one call launched, summed (CUPTI activity records of one traced
  /// call, with counters or kernel tracing), seconds; 0: not traced. A cross-check on
  /// device_time_s, which it should approach for calls longer than a few launch gaps.
  double kernel_time_s = 0;
  /// Held at the power limit (NVML); nullopt where not asked, not readable (the run's notes say
  /// why) or the op was not measured.
  std::optional<held_reading> held;
};

/// What measuring a list of ops showed: one entry per op, in order (nullopt for ops the run did
/// not take up: all-reduces unless every GPU was measured), and what the reader must know of the
/// whole run (e.g. counters not permitted).
struct measurements {
  std::vector<std::optional<measurement>> ops;
  std::vector<std::string> notes;
  /// False when the run was stopped (measure_options::stop) before it had measured every op: the
  /// ops it did not reach are marked (not_reached()), what it measured stands.
  bool complete = true;
  /// With measure_options::every_gpu: each local GPU's entries, as `ops` (GPU 0's) holds them.
  std::vector<std::vector<std::optional<measurement>>> per_gpu;
};

/// The clause a measured op's note starts with when it has no device time (the calls could not be
/// captured into a CUDA graph): "device time not measured: <why>".
inline constexpr std::string_view device_time_missing = "device time not measured: ";

/// Appends `clause` to a measurement's `note`, clauses separated by "; ".
void add_note(std::string &note, const std::string &clause);

/// One op measured in several rounds (measure_options::rounds), merged into one measurement: the
/// first round's (which was checked and counted) with, over every round that was measured,
/// the median eager time (upper_median: a round's own time), the extremes and the samples summed,
/// and the median device time of the rounds that have one, whose extremes stand; a device-time
/// note of the first round is dropped when a later round has one. Rounds not measured leave the
/// result as it was; `rounds` holds the first round first, and its status is kept whatever it is
/// (a first round not measured is returned as it is). Throws nothing but std::bad_alloc.
measurement merge_rounds(const std::vector<measurement> &rounds);

/// Which implementation runs the GEMMs (convolutions run through cuDNN with `cublas`, the library
/// default, and as their implicit GEMMs with the others).
enum class gemm_engine { cublas, naive, tiled, tensorcore };

/// The engines' names: "cublas", "naive", "tiled", "tensorcore".
template <> const enum_table<gemm_engine> &names_of<gemm_engine>();

std::string_view to_string(gemm_engine e);
/// nullopt for a name that is not an engine's.
std::optional<gemm_engine> parse_gemm_engine(std::string_view name);

/// Progress of a long run: (done, total, the op's layer).
using progress_callback = std::function<void(std::size_t, std::size_t, const std::string &)>;

/// Asked before each op of a long run: true stops the run there (the op in flight has finished).
/// It may be asked from several threads at once (measure_options::every_gpu), so it must only
/// read something thread-safe, e.g. an atomic flag a SIGINT handler sets.
using stop_callback = std::function<bool()>;

/// The entry of an op that a stopped run did not reach: skipped, and the note says so. Inline:
/// a measurement layer that links none of the core's symbols marks its GEMMs so too.
inline measurement not_reached(std::string engine) {
  measurement m;
  m.engine = std::move(engine);
  m.status = measurement_status::skipped;
  m.note = "not measured: the run was interrupted before it";
  return m;
}

struct measure_options {
  gemm_engine engine = gemm_engine::cublas;
  bool cold_l2 = false; ///< rotate operand buffers whose total exceeds twice the L2
  bool counters = true; ///< read hardware counters through CUPTI (passes + 1 extra calls per op)
  /// Without counters, still name the kernels each call launches (CUPTI activity, 1 extra call).
  bool trace_kernels = false;
  /// Timed calls per op are sized to about this much GPU time, for the eager timing; the graph
  /// replays time as many calls as often, which takes the GPU no longer.
  double time_budget_s = 0.05;
  /// Times every op this many times, in rounds over all ops, and keeps the median round (checked
  /// and counted in the first): a spell of a slower host moves one round, not the result.
  int rounds = 1;
  /// Each op's calls, in its first round, held back to back this long past a warm-up of as long
  /// again and read through NVML (measurement::held); 0: not held. Where NVML cannot be read, no
  /// op is held and measurements::notes says why.
  double held_s = 0;
  progress_callback progress; ///< called before each op
  /// Asked before each op; once true, no op is started any more: the ops not reached are marked
  /// skipped (not_reached()) and measurements::complete is false. Empty: never stops.
  stop_callback stop;
  /// Every local GPU at once, one host thread each (a tensor-parallel step's GEMMs, each GPU
  /// running its share), counters off; and the all-reduces of the ops run for real over all of
  /// them through NCCL. `measurements::ops` is GPU 0's; `per_gpu` every GPU's.
  bool every_gpu = false;
  int device = 0; ///< the GPU to measure on (CUDA's ordinal)
};

/// op.flops / time (FLOP/s actually reached).
double achieved_flop_per_s(const op &o, const measurement &m);
/// DRAM bytes the counters saw, read + written; nullopt without counters.
std::optional<double> measured_dram_bytes(const measurement &m);
/// Measured DRAM bytes per second of eager time; nullopt without counters.
std::optional<double> measured_dram_bytes_per_s(const measurement &m);
/// (slowest − fastest) / median of the eager samples, 0..; 0 when nothing was timed.
double eager_spread(const measurement &m);
/// op.flops / measured DRAM bytes.
std::optional<double> measured_intensity(const op &o, const measurement &m);
/// The share of the roofline bound reached: roofline time / measured time (≤ 1 unless L2 served
/// operands the roofline counts from DRAM).
double roofline_fraction(const prediction &p, const measurement &m);

} // namespace roofline
