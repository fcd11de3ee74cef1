// SPDX-License-Identifier: Apache-2.0
#include "roofline/cuda/measurer.hpp"

#include "counter_session.hpp"
#include "cuda_graph.hpp"
#include "cudnn_attention.hpp"
#include "cudnn_conv.hpp"
#include "event_timer.hpp"
#include "fault_injection.hpp"
#include "gemm_call.hpp"
#include "gpu_threads.hpp"
#include "held_run.hpp"
#include "kernel_trace.hpp"
#include "kernels.hpp"
#include "memory_op_call.hpp"
#include "roofline/cuda/cuda_error.hpp"
#include "roofline/cuda/detail/cuda_check.hpp"
#include "roofline/cuda/detail/cuda_owners.hpp"
#include "roofline/cuda/detail/device_buffer.hpp"
#include "roofline/cuda/detail/lt_gemm.hpp"
#include "roofline/cuda/detail/nccl_all_reduce.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstring>
#include <exception>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>

namespace roofline::cuda {

namespace {

using detail::device_buffer;
using detail::injected_fault;
using kernels::element_type;

std::string gib(double bytes) {
  return std::to_string(static_cast<long long>(bytes / (1 << 20))) + " MiB";
}

/// Whether `e` says the GPU ran out of memory (an allocation of ours, or cuBLAS's own).
bool out_of_memory(const std::exception &e) {
  const auto *error = dynamic_cast<const cuda_error *>(&e);
  return error && ((error->library() == "CUDA" && error->status() == cudaErrorMemoryAllocation) ||
                   (error->library() == "cuBLAS" && error->status() == CUBLAS_STATUS_ALLOC_FAILED));
}

class runner {
public:
  explicit runner(const measure_options &options)
      : m_options(options), m_device(detail::make_current(options.device)) {
    int l2 = 0;
    ROOFLINE_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, options.device));
    ROOFLINE_CUDA_CHECK(
        cudaDeviceGetAttribute(&m_sm_count, cudaDevAttrMultiProcessorCount, options.device));
    m_l2_bytes = static_cast<std::size_t>(l2);
    m_workspace = device_buffer(detail::lt_workspace_bytes);
    if (options.cold_l2) {
      m_scrub = device_buffer(4 * m_l2_bytes);
      m_scrub_sink = device_buffer(sizeof(unsigned));
      ROOFLINE_CUDA_CHECK(kernels::fill_random(m_scrub.get(), m_scrub.bytes() / 4,
                                               element_type::f32, 99, 1.0f, m_stream.get()));
    }
    if (options.held_s > 0) {
      try {
        m_nvml.emplace(options.device);
      } catch (const std::exception &e) {
        m_notes.push_back(std::string("ops not held at the power limit (no energy per call, no "
                                      "sustained time): ") +
                          e.what());
      }
    }
  }
  ~runner() {
    m_counters.reset(); // the counter session before cuDNN's handle, both before the stream
    m_cudnn.reset();
  }
  runner(const runner &) = delete;
  runner &operator=(const runner &) = delete;

  /// Sets up counters for `p`'s tensor ops (one family keeps the replay passes at 2-3 instead of
  /// 7); on failure returns the warning to show, and the run goes on with event timing only.
  std::optional<std::string> enable_counters(precision p) {
    m_counters_wanted = true;
    try {
      m_counters.reset(); // one session per context: the old one must go first
      m_counters =
          std::make_unique<detail::counter_session>(m_options.device, std::vector<precision>{p});
      m_counted = p;
      return std::nullopt;
    } catch (const std::exception &e) {
      m_counters_wanted = false;
      return std::string("hardware counters unavailable, event timing only: ") + e.what();
    }
  }

  /// Replay passes per op (of the last session).
  int counter_passes() const { return m_counters ? m_counters->passes() : 0; }

  /// Switches the counter session to `p` when it counts another precision.
  std::optional<std::string> count_precision(precision p) {
    if (!m_counters_wanted || m_counted == p)
      return std::nullopt;
    return enable_counters(p);
  }

  /// How much of the work one measurement does.
  enum class scope {
    full,        ///< check against the reference, time, read counters (or trace kernels)
    no_counters, ///< check, time, trace kernels if the options ask
    timing_only, ///< a later round: the op was checked and traced already
  };

  /// Measures `o` as far as `reach` says; a failure is recorded in the result, not thrown: out of
  /// GPU memory, the op is skipped; any other error fails it. `fault`: a test's injected fault.
  measurement measure(const op &o, scope reach = scope::full,
                      injected_fault fault = injected_fault::none) {
    measurement m;
    m.engine = std::string(to_string(m_options.engine));
    m.cold_l2 = m_options.cold_l2;
    if (o.is_collective()) { // an all-reduce over every local GPU is measure_all_reduces'
      m.status = measurement_status::skipped;
      m.note = o.kind + " between GPUs: only all-reduces over every local GPU are measured "
                         "(NCCL, --devices all)";
      return m;
    }
    if (o.gemm && o.gemm->weights) {
      // cuBLAS has no weight-only kernel: timing its dense GEMM would answer another question.
      m.status = measurement_status::skipped;
      m.note = "weight-only quantized weights (int" + std::to_string(o.gemm->weights->bits) +
               "): no kernel here runs them";
      return m;
    }
    try {
      if (o.precision == precision::fp4)
        throw detail::op_skipped("fp4 GEMMs (nvfp4, mxfp4) need block scales and Blackwell's "
                                 "tensor cores; no engine of ours runs them yet");
      if (o.is_fused_attention()) {
        // No engine of ours runs fused attention: cuDNN's flash kernel, whichever GEMM engine.
        m.engine = "cudnn";
        if (!cudnn_loaded())
          throw detail::op_skipped("fused attention runs through cuDNN: " + m_cudnn_missing);
        run_call(m, reach, fault, [&] {
          return detail::make_attention_call(
              *m_cudnn, *o.attention, o.precision, detail::attention_layout::bshd,
              [&](std::size_t bytes) { return operand_sets(bytes); }, m_stream.get());
        });
      } else if (o.conv && o.pass == pass::forward && m_options.engine == gemm_engine::cublas &&
                 cudnn_loaded()) {
        const measurement before = m;
        try {
          m.engine = "cudnn";
          run_call(m, reach, fault, [&] {
            return detail::make_conv_call(
                *m_cudnn, *o.conv, o.precision,
                [&](std::size_t bytes) { return operand_sets(bytes); }, m_stream.get());
          });
        } catch (const detail::op_skipped &e) {
          // What cuDNN does not convolve here (int8, fp8, fp64; sizes past its int limits) is
          // still timed, as its implicit GEMM.
          m = before;
          run_call(m, reach, fault, [&] { return gemm_call(o); });
          add_note(m.note, std::string("measured as its implicit GEMM: ") + e.what());
        }
      } else if (o.is_gemm()) {
        run_call(m, reach, fault, [&] { return gemm_call(o); });
        if (o.conv && o.pass == pass::forward && !m_cudnn_missing.empty())
          add_note(m.note, "measured as its implicit GEMM: " + m_cudnn_missing);
      } else {
        m.engine = detail::memory_op_engine;
        run_call(m, reach, fault, [&] {
          return detail::make_memory_op_call(
              o, [&](std::size_t bytes) { return operand_sets(bytes); }, m_stream.get());
        });
      }
    } catch (const detail::op_skipped &e) {
      m.status = measurement_status::skipped;
      m.note = e.what();
    } catch (const std::exception &e) {
      cudaGetLastError(); // a non-sticky error must not fail the next op too
      const bool memory = out_of_memory(e);
      m.status = memory ? measurement_status::skipped : measurement_status::failed;
      m.note = memory ? std::string("out of GPU memory: ") + e.what() : std::string(e.what());
    }
    return m;
  }

  /// Notes for the whole run that measuring an op raised (a counter session that could not be
  /// set up again); taken once.
  std::vector<std::string> take_notes() { return std::exchange(m_notes, {}); }

private:
  /// Whether cuDNN runs this runner's convolutions and fused attention: loaded and given a handle
  /// on the first call; when it cannot be, m_cudnn_missing says why, convolutions run as their
  /// implicit GEMMs and fused attention is skipped.
  bool cudnn_loaded() {
    if (m_cudnn)
      return true;
    if (!m_cudnn_missing.empty())
      return false;
    try {
      m_cudnn = std::make_unique<detail::cudnn_handle>(m_stream.get());
      return true;
    } catch (const std::exception &e) {
      cudaGetLastError();
      m_cudnn_missing = e.what();
      return false;
    }
  }

  /// `o`'s GEMM (a convolution's implicit one too) as this run's engine runs it.
  std::unique_ptr<detail::op_call> gemm_call(const op &o) {
    return detail::make_gemm_call(
        *o.gemm, o.precision, {m_options.engine, m_lt.get(), m_workspace.get()},
        [&](std::size_t bytes) { return operand_sets(bytes); }, m_stream.get());
  }

  /// The op `make` makes ready: checked against its reference (set 0's output poisoned first),
  /// then timed and counted. Later rounds (timing_only) time an op that passed already. Faults
  /// injected: `oom` as its operands are allocated, `cublas` in its first call.
  void run_call(measurement &m, scope reach, injected_fault fault,
                const std::function<std::unique_ptr<detail::op_call>()> &make) {
    if (fault == injected_fault::oom)
      detail::raise_injected(fault);
    const std::unique_ptr<detail::op_call> call = make();
    if (reach != scope::timing_only) {
      if (fault == injected_fault::cublas)
        detail::raise_injected(fault);
      m.relative_error = call->check(m_stream.get());
      if (!(m.relative_error <= call->tolerance())) {
        m.status = measurement_status::failed;
        m.note = "wrong result: relative error " + std::to_string(m.relative_error) + " > " +
                 std::to_string(call->tolerance());
        return;
      }
    }
    std::size_t turn = 0;
    const std::size_t sets = call->sets();
    time_and_count(m, sets, reach, fault, [&] { call->run(turn++ % sets, m_stream.get()); });
  }

  /// How many copies of an op's operands to allocate (detail::operand_sets): cold L2, enough that
  /// each call's are evicted by the calls between its turns. Throws op_skipped when they do not
  /// fit in free memory.
  std::size_t operand_sets(std::size_t set_bytes) const {
    const std::size_t sets =
        m_options.cold_l2
            ? std::max<std::size_t>(2, 2 * m_l2_bytes / std::max<std::size_t>(set_bytes, 1) + 2)
            : 1;
    std::size_t free_bytes = 0, total_bytes = 0;
    ROOFLINE_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    const double needed = static_cast<double>(set_bytes) * static_cast<double>(sets);
    if (needed > 0.9 * static_cast<double>(free_bytes))
      throw detail::op_skipped("needs " + gib(needed) + " of GPU memory, " +
                               gib(static_cast<double>(free_bytes)) + " free");
    return sets;
  }

  /// Times `one_call` (a call on the next operand set of `sets`) eagerly and graph-replayed into
  /// `m`, then, as `reach` says, reads its counters or traces its kernels.
  void time_and_count(measurement &m, std::size_t sets, scope reach, injected_fault fault,
                      const std::function<void()> &one_call) {
    // Steady state: batches of back-to-back calls between two events; the median batch per call.
    const detail::run_timing probe = detail::time_runs(m_stream.get(), 2, 3, one_call);
    const int per_sample =
        static_cast<int>(std::clamp(1e-3 / std::max(probe.median_s, 1e-7), 1.0, 200.0));
    const int samples = static_cast<int>(
        std::clamp(m_options.time_budget_s / (probe.median_s * per_sample), 5.0, 30.0));
    const detail::run_timing timing = detail::time_runs(m_stream.get(), 1, samples, [&] {
      for (int i = 0; i < per_sample; ++i)
        one_call();
    });
    m.time_s = timing.median_s / per_sample;
    m.min_time_s = timing.min_s / per_sample;
    m.max_time_s = timing.max_s / per_sample;
    m.samples = timing.runs;

    // Device time: the same back-to-back calls replayed from a CUDA graph. Eager calls cost the
    // host several µs each (cuBLAS's host code, the driver's launch), which hides the GPU's time
    // for short calls; a replay issues the captured kernels with no host work between them. With
    // rotated buffers (cold L2) the graph holds whole rotations, so that each call still finds
    // its operands evicted.
    const int replayed_calls =
        sets > 1 ? static_cast<int>((static_cast<std::size_t>(per_sample) + sets - 1) / sets * sets)
                 : per_sample;
    const int replays = std::clamp(samples * per_sample / replayed_calls, 5, samples);
    time_device(m, replayed_calls, replays, one_call, reach != scope::timing_only);

    if (reach == scope::timing_only)
      return;
    // CUPTI failing on one op costs that op its counters or kernel names, not its times: the note
    // says what is missing, and the next op gets a fresh counter session. An injected fault
    // strikes on the second call, inside the first replay pass (or in the traced call).
    int cupti_calls = 0;
    const auto watched_call = [&] {
      if (fault == injected_fault::cupti && ++cupti_calls == (m_counters ? 2 : 1))
        detail::raise_injected(fault);
      one_call();
    };
    if (m_counters && reach == scope::full) {
      try {
        // Cold L2: every counted run starts from an L2 that holds neither operands nor dirty lines
        // of earlier calls (ncu's default cache control); warm: the steady state of back-to-back
        // calls.
        const auto evict_l2 = [&] {
          ROOFLINE_CUDA_CHECK(kernels::stream_read(m_scrub.get(), m_scrub.bytes(),
                                                   m_scrub_sink.as<unsigned>(), m_sm_count,
                                                   kernels::stream_config{}, m_stream.get()));
        };
        const detail::counter_values v =
            m_options.cold_l2 ? m_counters->measure(watched_call, m_stream.get(), evict_l2)
                              : m_counters->measure(watched_call, m_stream.get());
        m.counters = counter_readings{v.kernels.time_s > 0 ? v.kernels.time_s : v.duration_s,
                                      v.dram_read_bytes,
                                      v.dram_write_bytes,
                                      v.l2_bytes,
                                      v.tensor_flops,
                                      v.fp32_flops,
                                      v.fp64_flops,
                                      v.sm_clock_hz,
                                      v.passes};
        m.kernels = v.kernels.names;
        m.launches = v.kernels.launches;
        m.kernel_time_s = v.kernels.time_s;
      } catch (const std::exception &e) {
        cudaGetLastError();
        add_note(m.note, std::string("hardware counters not read: ") + e.what());
        restart_counters();
      }
    } else if (m_options.trace_kernels) {
      try {
        detail::traced_kernels traced = detail::trace_kernels(watched_call, m_stream.get());
        m.kernels = std::move(traced.names);
        m.launches = traced.launches;
        m.kernel_time_s = traced.time_s;
      } catch (const std::exception &e) {
        cudaGetLastError();
        add_note(m.note, std::string("kernels not traced: ") + e.what());
      }
    }
  }

  /// A fresh counter session for the precision counted, after one failed: a session CUPTI failed
  /// in may be left mid-pass. When none can be set up, the run goes on without counters.
  void restart_counters() {
    if (!m_counted)
      return;
    const precision p = *m_counted;
    m_counted.reset();
    if (auto warning = enable_counters(p))
      m_notes.push_back(*warning);
  }

  /// Times `calls` back-to-back calls of `one_call`, captured into a CUDA graph, replayed `replays`
  /// times (after one warm-up replay), into m.device_time_s and its extremes. When the calls
  /// cannot be captured (an engine that allocates or synchronizes), device_time_s stays 0, m.note
  /// says why, and the op counts as measured all the same: its eager time stands. With `held`,
  /// then holds the calls at the power limit (hold_at_limit).
  void time_device(measurement &m, int calls, int replays, const std::function<void()> &one_call,
                   bool held) {
    std::optional<detail::captured_work> work;
    try {
      work.emplace(m_stream.get(), [&] {
        for (int i = 0; i < calls; ++i)
          one_call();
      });
      const detail::run_timing timing =
          detail::time_runs(m_stream.get(), 1, replays, [&] { work->launch(m_stream.get()); });
      m.device_time_s = timing.median_s / calls;
      m.device_min_time_s = timing.min_s / calls;
      m.device_max_time_s = timing.max_s / calls;
    } catch (const std::exception &e) {
      cudaGetLastError(); // the capture's error must not fail the op's next CUDA call
      work.reset();
      m.device_time_s = m.device_min_time_s = m.device_max_time_s = 0;
      add_note(m.note, std::string(device_time_missing) + e.what());
    }
    if (held && m_nvml) {
      if (work)
        hold_at_limit(
            m, [&] { work->launch(m_stream.get()); }, calls);
      else
        hold_at_limit(m, one_call, 1);
    }
  }

  /// Holds `launch` (`calls` calls of the op each) back to back at the power limit into m.held;
  /// a failure costs the op its held reading, which its note says, not its times.
  void hold_at_limit(measurement &m, const std::function<void()> &launch, int calls) {
    try {
      const double guess_s = m.device_time_s > 0 ? m.device_time_s : m.time_s;
      const detail::held_run run = detail::hold(*m_nvml, m_stream.get(), guess_s, launch,
                                                {m_options.held_s, m_options.held_s}, calls);
      m.held = held_reading{run.call_s, run.energy_per_call_j, run.power_w, run.sm_clock_mhz * 1e6,
                            run.throttle};
    } catch (const std::exception &e) {
      cudaGetLastError();
      add_note(m.note, std::string("not held at the power limit: ") + e.what());
    }
  }

  measure_options m_options;
  int m_device; ///< made current first: the stream and the handle are made on it
  detail::stream m_stream;
  detail::lt_handle m_lt;
  std::size_t m_l2_bytes = 0;
  int m_sm_count = 0;
  device_buffer m_workspace;
  device_buffer m_scrub, m_scrub_sink; ///< read to evict L2 before cold counted runs
  bool m_counters_wanted = false;
  std::optional<precision> m_counted; ///< the tensor precision m_counters reads
  std::unique_ptr<detail::counter_session> m_counters;
  std::unique_ptr<detail::cudnn_handle> m_cudnn; ///< made for the first convolution or attention
  std::string m_cudnn_missing;      ///< why cuDNN cannot run here; empty: not known yet
  std::vector<std::string> m_notes; ///< for the whole run, raised while measuring an op
  std::optional<detail::nvml_device> m_nvml; ///< where ops are held and NVML can be read
};

/// Whether measure() runs `o` on one GPU: every op but the all-reduces, which need all of them.
bool measured_here(const op &o) {
  return !o.is_all_reduce();
}

} // namespace

namespace {

/// The all-reduces of `ops` over every one of the host's `devices` GPUs, measured for real at each
/// size the network sends, into `result` and every GPU's own measurements (`each`).
void measure_all_reduces(const std::vector<op> &ops, int devices, measurements &result,
                         std::vector<measurements> &each) {
  std::vector<std::int64_t> sizes;
  // NCCL reduces bf16 pairs of bytes here: an odd size (an fp8 tensor of odd length) is left out.
  for (const op &o : ops)
    if (o.is_all_reduce() && o.gpus == devices && o.bytes % 2 == 0)
      sizes.push_back(o.bytes);
  if (std::any_of(ops.begin(), ops.end(),
                  [&](const op &o) { return o.is_all_reduce() && o.bytes % 2 != 0; }))
    result.notes.push_back("all-reduces of an odd number of bytes not measured");
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  if (std::any_of(ops.begin(), ops.end(),
                  [&](const op &o) { return o.is_all_reduce() && o.gpus != devices; }))
    result.notes.push_back(fmt::format("all-reduces over another number of GPUs than this "
                                       "host's {} not measured",
                                       devices));
  if (!sizes.empty()) {
    const all_reduce_table table = measure_all_reduce(sizes, nullptr);
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (!ops[i].is_all_reduce() || ops[i].gpus != devices)
        continue;
      const auto sample =
          std::find_if(table.samples.begin(), table.samples.end(),
                       [&](const all_reduce_sample &s) { return s.bytes == ops[i].bytes; });
      if (sample == table.samples.end())
        continue;
      measurement m;
      m.engine = "nccl";
      m.time_s = m.min_time_s = m.max_time_s = sample->time_s;
      m.device_time_s = m.device_min_time_s = m.device_max_time_s = sample->time_s;
      m.note = table.library + " all-reduce over every GPU, checked, the slowest GPU's median";
      for (measurements &gpu : each)
        gpu.ops[i] = m;
      result.ops[i] = m;
    }
  }
}

/// Every GPU at once, one thread each, then the all-reduces over all of them: GPU 0's
/// measurements, with every GPU's in per_gpu.
measurements measure_every_gpu(const std::vector<op> &ops, const measure_options &options) {
  int devices = 0;
  ROOFLINE_CUDA_CHECK(cudaGetDeviceCount(&devices));
  std::vector<measurements> each(static_cast<std::size_t>(devices));
  // Blocked, not spinning, while the GPUs measure: a spinning thread would take a core from the
  // host threads whose eager calls are timed.
  detail::gpu_threads(each.size(), detail::gpu_threads::waiting::block).run([&](std::size_t d) {
    measure_options mine = options;
    mine.device = static_cast<int>(d); // this thread's GPU
    mine.every_gpu = false;
    mine.counters = false; // CUPTI's profiler is one per process
    mine.trace_kernels = false;
    if (d != 0)
      mine.progress = nullptr; // GPU 0 speaks for all
    each[d] = measure(ops, mine);
  });

  measurements result = each.front();
  result.notes.push_back(fmt::format("measured on {} GPUs at once, one host thread each, "
                                     "counters off",
                                     devices));
  result.complete =
      std::all_of(each.begin(), each.end(), [](const measurements &gpu) { return gpu.complete; });
  if (result.complete) {
    measure_all_reduces(ops, devices, result, each);
  } else { // stopped: no all-reduce is started any more
    for (std::size_t i = 0; i < ops.size(); ++i)
      if (ops[i].is_all_reduce() && ops[i].gpus == devices) {
        result.ops[i] = not_reached("nccl");
        for (measurements &gpu : each)
          gpu.ops[i] = result.ops[i];
      }
  }
  for (measurements &gpu : each)
    result.per_gpu.push_back(std::move(gpu.ops));
  return result;
}

} // namespace

namespace {

/// The precision whose tensor family the counters read first: the first GEMM's or fused
/// attention's among the ops measured here; fp32 (DRAM and L2 counters, no tensor family) when
/// only memory-bound ops are; nullopt when there is none.
std::optional<precision> first_counted(const std::vector<op> &ops) {
  bool any = false;
  for (const op &o : ops)
    if (measured_here(o)) {
      any = true;
      if (o.is_gemm() || o.is_fused_attention())
        return o.precision;
    }
  return any ? std::optional(precision::fp32) : std::nullopt;
}

/// One single-GPU run over `ops`, round by round: the first round checks, times and counts every
/// op; later rounds time them again and the rounds are merged (merge_rounds). Stopping is asked
/// before each op, never inside one; once stopped, nothing more is started.
class round_runner {
public:
  round_runner(const std::vector<op> &ops, const measure_options &options, runner &gemms,
               measurements &result)
      : m_ops(ops), m_options(options), m_gemms(gemms), m_result(result) {
    for (const op &o : ops)
      m_op_count += measured_here(o) ? 1 : 0;
    m_rounds = std::max(1, options.rounds);
    m_total = m_op_count * static_cast<std::size_t>(m_rounds);
  }

  /// Measures every op once (checked, timed, counted) into the result.
  void first_round(const detail::fault_plan &faults) {
    for (std::size_t i = 0; i < m_ops.size(); ++i) {
      const op &o = m_ops[i];
      if (!measured_here(o))
        continue;
      if (stop_now(1)) {
        m_result.ops[i] = not_reached(std::string(to_string(m_options.engine)));
        continue;
      }
      if (m_options.progress)
        m_options.progress(m_done++, m_total, o.layer);
      // Memory-bound ops keep whichever tensor family is counted: they use none.
      if (o.is_gemm() || o.is_fused_attention())
        if (auto warning = m_gemms.count_precision(o.precision))
          m_result.notes.push_back(*warning);
      const injected_fault fault = faults.at(i);
      if (fault == injected_fault::sigint && m_options.device == 0)
        std::raise(SIGINT); // a test's Ctrl-C while this op is in flight (once: GPU 0's thread)
      m_result.ops[i] = m_gemms.measure(o, runner::scope::full, fault);
      ++m_measured_count;
    }
  }

  /// Later rounds time every op again, seconds after its first: the median round stands, so a
  /// spell of a slower host (its launch path, other tenants) moves one round, not the result.
  void later_rounds() {
    std::vector<std::vector<measurement>> rounds(m_ops.size());
    for (int round = 1; round < m_rounds && m_stopped_in_round == 0; ++round)
      for (std::size_t i = 0; i < m_ops.size(); ++i) {
        if (!measured_here(m_ops[i]))
          continue;
        if (stop_now(round + 1))
          break;
        if (m_options.progress)
          m_options.progress(m_done++, m_total, m_ops[i].layer);
        const std::optional<measurement> &first = m_result.ops[i];
        if (!first || first->status != measurement_status::measured)
          continue;
        if (rounds[i].empty())
          rounds[i].push_back(*first);
        rounds[i].push_back(m_gemms.measure(m_ops[i], runner::scope::timing_only));
      }
    for (std::size_t i = 0; i < m_ops.size(); ++i)
      if (!rounds[i].empty())
        m_result.ops[i] = merge_rounds(rounds[i]);
  }

  /// The run's closing notes and completeness, and the progress's end.
  void finish() {
    for (std::string &note : m_gemms.take_notes())
      m_result.notes.push_back(std::move(note));
    if (m_gemms.counter_passes() > 0)
      m_result.notes.push_back("counters: CUPTI range profiler, user range around one call, " +
                               std::to_string(m_gemms.counter_passes()) + " replay passes per op");
    if (m_stopped_in_round == 1)
      m_result.notes.push_back(fmt::format("interrupted: stopped after {} of {} ops, the others "
                                           "are marked not measured",
                                           m_measured_count, m_op_count));
    else if (m_stopped_in_round > 1)
      m_result.notes.push_back(fmt::format("interrupted in round {} of {}: every op was measured "
                                           "once, each time is the median of the rounds that ran",
                                           m_stopped_in_round, m_rounds));
    m_result.complete = m_stopped_in_round == 0;
    if (m_options.progress)
      m_options.progress(m_total, m_total, ""); // the end (a progress bar clears its line)
  }

private:
  bool stop_now(int round) {
    if (m_stopped_in_round == 0 && m_options.stop && m_options.stop())
      m_stopped_in_round = round;
    return m_stopped_in_round != 0;
  }

  const std::vector<op> &m_ops;
  const measure_options &m_options;
  runner &m_gemms;
  measurements &m_result;
  std::size_t m_op_count = 0; ///< ops measured here, in one round
  int m_rounds = 1;
  std::size_t m_total = 0;          ///< ops × rounds, for the progress
  std::size_t m_done = 0;           ///< progress steps taken
  std::size_t m_measured_count = 0; ///< ops started (and finished) in the first round
  int m_stopped_in_round = 0;       ///< 0: not stopped; else the round (from 1) it stopped in
};

} // namespace

measurements measure(const std::vector<op> &ops, const measure_options &options) {
  if (options.every_gpu)
    return measure_every_gpu(ops, options);
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    cudaGetLastError();
    throw cuda_error("CUDA", 0, "measuring needs a GPU, and the CUDA runtime sees none");
  }
  const detail::fault_plan faults = detail::fault_plan::from_environment(); // tests only
  measurements result;
  result.ops.resize(ops.size());
  runner gemms(options);
  if (const std::optional<precision> first = first_counted(ops); options.counters && first) {
    if (auto warning = gemms.enable_counters(*first))
      result.notes.push_back(*warning);
  }
  round_runner rounds(ops, options, gemms, result);
  rounds.first_round(faults);
  rounds.later_rounds();
  rounds.finish();
  return result;
}

} // namespace roofline::cuda
