// SPDX-License-Identifier: Apache-2.0
#include "roofline/cuda/detail/nccl_all_reduce.hpp"

#include "cuda_graph.hpp"
#include "gpu_threads.hpp"
#include "kernels.hpp"
#include "nccl_library.hpp"
#include "roofline/common/error.hpp"
#include "roofline/common/median.hpp"
#include "roofline/cuda/cuda_error.hpp"
#include "roofline/cuda/detail/cuda_check.hpp"
#include "roofline/cuda/detail/cuda_owners.hpp"
#include "roofline/cuda/detail/device_buffer.hpp"
#include "roofline/cuda/device.hpp"
#include "utc_time.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>

namespace roofline::cuda {

namespace {

using detail::communicators;
using detail::device_buffer;
using detail::gpu_threads;
using detail::nccl;
using detail::nccl_group;
using detail::utc_now;
using kernels::element_type;

constexpr int warmup_iterations = 5;
constexpr int timed_runs = 15;
// A run of a millisecond or more keeps the events' resolution (~0.5 µs) and the launch jitter
// small against what is measured. Runs aim at 2 ms: the estimates (eager calls) run high for small
// sizes, where a run's first call waits for the host, and a replayed graph runs faster than the
// eager calls it was sized on. The cap bounds a run when an estimate is off.
constexpr double target_run_s = 2e-3;
constexpr int max_iterations = 1000;
// Where the result is checked: runs of elements spread over the whole buffer, since each GPU
// reduces its own slice of it.
constexpr std::size_t check_run = 512;
constexpr std::size_t check_runs = 8;

std::string joined(const std::vector<std::string> &parts, const char *separator) {
  std::string text;
  for (const std::string &part : parts)
    text += (text.empty() ? "" : separator) + part;
  return text;
}

// ---------------------------------------------------------------- checking the sum

float bf16_value(std::uint16_t bits) {
  const std::uint32_t widened = static_cast<std::uint32_t>(bits) << 16; // bf16 is fp32's top half
  float value;
  std::memcpy(&value, &widened, sizeof value);
  return value;
}

/// "4 KiB", "16 MiB", "1 GiB": the sizes of a sweep, in messages.
std::string size_text(std::int64_t bytes) {
  if (bytes % (1 << 30) == 0)
    return std::to_string(bytes >> 30) + " GiB";
  if (bytes % (1 << 20) == 0)
    return std::to_string(bytes >> 20) + " MiB";
  if (bytes % (1 << 10) == 0)
    return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " bytes";
}

/// The first element of each run the check reads (runs of min(count, check_run) elements).
std::vector<std::size_t> check_starts(std::size_t count) {
  if (count <= check_run * check_runs) {
    std::vector<std::size_t> starts;
    for (std::size_t first = 0; first < count; first += check_run)
      starts.push_back(first);
    return starts;
  }
  std::vector<std::size_t> starts;
  for (std::size_t i = 0; i < check_runs; ++i)
    starts.push_back(i * (count - check_run) / (check_runs - 1)); // the first and last included
  return starts;
}

/// The checked elements of a bf16 buffer of `count`, as floats.
std::vector<float> checked_elements(const device_buffer &buffer, std::size_t count) {
  std::vector<float> values;
  std::vector<std::uint16_t> bits(check_run);
  for (std::size_t first : check_starts(count)) {
    const std::size_t length = std::min(check_run, count - first);
    ROOFLINE_CUDA_CHECK(cudaMemcpy(bits.data(), buffer.as<std::uint16_t>() + first,
                                   length * sizeof(std::uint16_t), cudaMemcpyDeviceToHost));
    for (std::size_t i = 0; i < length; ++i)
      values.push_back(bf16_value(bits[i]));
  }
  return values;
}

/// "2 × NVIDIA H200", or the names one by one when they differ.
std::string gpu_description(int gpus) {
  std::vector<std::string> names;
  for (int gpu = 0; gpu < gpus; ++gpu) {
    cudaDeviceProp properties{};
    ROOFLINE_CUDA_CHECK(cudaGetDeviceProperties(&properties, gpu));
    names.emplace_back(properties.name);
  }
  if (std::all_of(names.begin(), names.end(), [&](const std::string &n) { return n == names[0]; }))
    return std::to_string(gpus) + " × " + names[0];
  return joined(names, " + ");
}

// ---------------------------------------------------------------- the measurement

/// Thrown by all_reduce_clique::capture when the all-reduces cannot be captured into CUDA graphs
/// (an NCCL or a CUDA that cannot capture them), so that the sweep can time eager calls instead.
class capture_failed : public error {
public:
  using error::error;
};

/// One size's back-to-back all-reduces captured into one CUDA graph per GPU and instantiated, GPU
/// g's at g (the instantiations are destroyed first, then the graphs).
struct all_reduce_graphs {
  std::vector<detail::graph> graphs;
  std::vector<detail::graph_exec> execs;
  int iterations = 0; ///< all-reduces in each graph
};

/// Every GPU of the host in one NCCL clique, with a stream, a chain of events and an input and an
/// output buffer each, driven from this thread (eagerly, or by capturing CUDA graphs and replaying
/// them) or from one thread per GPU.
class all_reduce_clique {
public:
  /// Buffers of `max_bytes` for every size: none is freed while graphs that NCCL may have
  /// registered them for are still to be cleaned up.
  all_reduce_clique(int gpus, std::int64_t max_bytes, all_reduce_timing timing)
      : m_gpus(static_cast<std::size_t>(gpus)), m_comms(gpus) {
    m_events.resize(m_gpus);
    for (std::size_t g = 0; g < m_gpus; ++g) {
      ROOFLINE_CUDA_CHECK(cudaSetDevice(static_cast<int>(g)));
      m_inputs.emplace_back(static_cast<std::size_t>(max_bytes));
      m_outputs.emplace_back(static_cast<std::size_t>(max_bytes));
      m_streams.emplace_back();
      m_events[g].resize(timed_runs + 1);
    }
    if (timing == all_reduce_timing::eager_thread_per_gpu)
      m_threads = std::make_unique<gpu_threads>(m_gpus);
  }

  /// Gives every GPU `bytes` of random bf16 input (its own values) and an output poisoned with
  /// NaN, so that an output the all-reduce never writes fails the check.
  void prepare(std::int64_t bytes) {
    const auto count = static_cast<std::size_t>(bytes / 2);
    for (std::size_t g = 0; g < m_gpus; ++g) {
      ROOFLINE_CUDA_CHECK(cudaSetDevice(static_cast<int>(g)));
      const std::uint64_t seed =
          0x9e3779b97f4a7c15ull * (g + 1) + static_cast<std::uint64_t>(bytes);
      ROOFLINE_CUDA_CHECK(kernels::fill_random(m_inputs[g].get(), count, element_type::bf16, seed,
                                               1.0f, m_streams[g].get()));
    }
    poison_outputs(count);
  }

  /// Enqueues GPU `g`'s part of one all-reduce of the prepared buffers.
  void all_reduce(std::size_t g, std::size_t count) {
    ROOFLINE_CUDA_CHECK(nccl().all_reduce(m_inputs[g].get(), m_outputs[g].get(), count,
                                          ncclBfloat16, ncclSum, m_comms[g], m_streams[g].get()));
  }

  /// Enqueues `iterations` all-reduces of the prepared buffers from this thread, one group call
  /// each.
  void enqueue(std::size_t count, int iterations) {
    for (int i = 0; i < iterations; ++i) {
      nccl_group group;
      for (std::size_t g = 0; g < m_gpus; ++g)
        all_reduce(g, count);
      group.end();
    }
  }

  void synchronize() {
    for (const detail::stream &stream : m_streams)
      ROOFLINE_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    m_comms.check_async_errors();
  }

  /// Seconds of each of `runs` (at most timed_runs) runs of `enqueue_run`, which issues work on
  /// every GPU's stream from this thread. The runs are enqueued back to back with nothing waited
  /// for between them, each between two events on every stream; a run's time is the slowest
  /// GPU's.
  std::vector<double> time_runs(int runs, const std::function<void()> &enqueue_run) {
    const auto last = static_cast<std::size_t>(runs);
    for (std::size_t g = 0; g < m_gpus; ++g)
      ROOFLINE_CUDA_CHECK(cudaEventRecord(m_events[g][0].get(), m_streams[g].get()));
    for (std::size_t run = 0; run < last; ++run) {
      enqueue_run();
      for (std::size_t g = 0; g < m_gpus; ++g)
        ROOFLINE_CUDA_CHECK(cudaEventRecord(m_events[g][run + 1].get(), m_streams[g].get()));
    }
    std::vector<double> runs_s(last, 0.0);
    for (std::size_t g = 0; g < m_gpus; ++g) {
      ROOFLINE_CUDA_CHECK(cudaEventSynchronize(m_events[g][last].get()));
      for (std::size_t run = 0; run < last; ++run)
        runs_s[run] = std::max(runs_s[run], elapsed_ms(g, run) * 1e-3);
    }
    return runs_s;
  }

  /// Seconds per all-reduce of `iterations` issued eagerly back to back: the slowest GPU's time
  /// between its events, divided by `iterations`. With a thread per GPU, each thread records its
  /// GPU's events around its own calls and waits for its GPU; the threads start together.
  double time(std::size_t count, int iterations) {
    if (!m_threads)
      return time_runs(1, [&] { enqueue(count, iterations); }).front() / iterations;
    std::vector<float> ms(m_gpus);
    m_threads->run([&](std::size_t g) {
      ROOFLINE_CUDA_CHECK(cudaEventRecord(m_events[g][0].get(), m_streams[g].get()));
      for (int i = 0; i < iterations; ++i)
        all_reduce(g, count);
      ROOFLINE_CUDA_CHECK(cudaEventRecord(m_events[g][1].get(), m_streams[g].get()));
      m_threads->wait_for(m_events[g][1].get());
      ms[g] = elapsed_ms(g, 0);
    });
    return *std::max_element(ms.begin(), ms.end()) * 1e-3 / iterations;
  }

  /// Captures `iterations` all-reduces of the prepared buffers, issued from this thread as
  /// enqueue() issues them, into one CUDA graph per GPU and instantiates them (nccl-tests' `-G`
  /// with several GPUs a thread). Throws capture_failed when a step fails, with every stream out
  /// of capture mode and the capture's error cleared.
  all_reduce_graphs capture(std::size_t count, int iterations) {
    all_reduce_graphs captured;
    captured.iterations = iterations;
    captured.graphs.reserve(m_gpus); // so that emplace_back cannot throw and leak a handle
    captured.execs.reserve(m_gpus);
    try {
      // Thread-local mode: NCCL's own threads may allocate while this one captures.
      for (std::size_t g = 0; g < m_gpus; ++g) {
        ROOFLINE_CUDA_CHECK(cudaSetDevice(static_cast<int>(g)));
        ROOFLINE_CUDA_CHECK(
            cudaStreamBeginCapture(m_streams[g].get(), cudaStreamCaptureModeThreadLocal));
      }
      enqueue(count, iterations);
      for (std::size_t g = 0; g < m_gpus; ++g) {
        ROOFLINE_CUDA_CHECK(cudaSetDevice(static_cast<int>(g)));
        cudaGraph_t graph = nullptr;
        const cudaError_t ended = cudaStreamEndCapture(m_streams[g].get(), &graph);
        captured.graphs.emplace_back(graph); // owned before the check, so freed when it throws
        ROOFLINE_CUDA_CHECK(ended);
      }
      // Each graph is instantiated, as it is launched, with its own GPU current, whatever the
      // group call left current: nccl-tests' HIP port reports crashes and wrong results where a
      // graph is instantiated on one GPU and launched into another's stream.
      for (std::size_t g = 0; g < m_gpus; ++g) {
        ROOFLINE_CUDA_CHECK(cudaSetDevice(static_cast<int>(g)));
        cudaGraphExec_t exec = nullptr;
        const cudaError_t made = cudaGraphInstantiateWithFlags(&exec, captured.graphs[g].get(), 0);
        captured.execs.emplace_back(exec);
        ROOFLINE_CUDA_CHECK(made);
      }
    } catch (const cuda_error &failure) {
      end_captures();
      throw capture_failed(failure.what());
    }
    return captured;
  }

  /// Enqueues one replay of every GPU's graph on its stream. Throws cuda_error.
  void replay(const all_reduce_graphs &graphs) {
    for (std::size_t g = 0; g < m_gpus; ++g) {
      ROOFLINE_CUDA_CHECK(cudaSetDevice(static_cast<int>(g)));
      ROOFLINE_CUDA_CHECK(cudaGraphLaunch(graphs.execs[g].get(), m_streams[g].get()));
    }
  }

  /// Runs one all-reduce, driven as the eager ones are, and compares every GPU's output with the
  /// sum of the inputs, on samples spread over the buffer. Throws roofline::error naming the size
  /// on a wrong element.
  void check_sum(std::int64_t bytes) {
    time(static_cast<std::size_t>(bytes / 2), 1); // its time is not needed
    synchronize();
    check_outputs(bytes, "");
  }

  /// Replays `graphs` once into outputs poisoned again and checks them as check_sum does: a graph
  /// that captured nothing, or replays wrongly, fails here rather than timing nothing.
  void check_replay(std::int64_t bytes, const all_reduce_graphs &graphs) {
    poison_outputs(static_cast<std::size_t>(bytes / 2));
    replay(graphs);
    synchronize();
    check_outputs(bytes, ", graph-replayed");
  }

private:
  void poison_outputs(std::size_t count) {
    for (std::size_t g = 0; g < m_gpus; ++g) {
      ROOFLINE_CUDA_CHECK(cudaSetDevice(static_cast<int>(g)));
      ROOFLINE_CUDA_CHECK(kernels::fill_constant(m_outputs[g].get(), count, element_type::bf16,
                                                 std::numeric_limits<double>::quiet_NaN(),
                                                 m_streams[g].get()));
    }
  }

  /// Compares every GPU's output (complete) with the sum of the inputs. `how` follows "bf16 sum"
  /// in the message.
  void check_outputs(std::int64_t bytes, const char *how) const {
    const auto count = static_cast<std::size_t>(bytes / 2);
    std::vector<double> sum, magnitude;
    for (const device_buffer &input : m_inputs) {
      const std::vector<float> values = checked_elements(input, count);
      sum.resize(values.size());
      magnitude.resize(values.size());
      for (std::size_t i = 0; i < values.size(); ++i) {
        sum[i] += values[i];
        magnitude[i] += std::fabs(values[i]);
      }
    }
    const std::vector<std::size_t> starts = check_starts(count);
    for (std::size_t g = 0; g < m_gpus; ++g) {
      const std::vector<float> got = checked_elements(m_outputs[g], count);
      for (std::size_t i = 0; i < got.size(); ++i) {
        // Each step of the reduction rounds a partial sum (at most Σ|x|) to bf16's 8 significant
        // bits, a relative 2^-9, once per GPU at most; 2^-6 of the result covers the last one.
        const double tolerance =
            0x1p-6 * std::fabs(sum[i]) + static_cast<double>(m_gpus) * 0x1p-9 * magnitude[i];
        if (!(std::fabs(got[i] - sum[i]) <= tolerance)) // NaN fails too
          throw error("NCCL all-reduce of " + size_text(bytes) + " per GPU (bf16 sum" + how +
                      ") is wrong on GPU " + std::to_string(g) + " at element " +
                      std::to_string(starts[i / check_run] + i % check_run) + ": " +
                      std::to_string(got[i]) + " where the inputs sum to " +
                      std::to_string(sum[i]));
      }
    }
  }

  /// Ends the captures still open on every GPU's stream (detail::abandon_capture).
  void end_captures() noexcept {
    for (std::size_t g = 0; g < m_gpus; ++g) {
      cudaSetDevice(static_cast<int>(g));
      detail::abandon_capture(m_streams[g].get());
    }
  }

  /// Milliseconds of GPU `g`'s run `run`: between its events run and run + 1, once the later has
  /// completed.
  float elapsed_ms(std::size_t g, std::size_t run) const {
    float ms = 0;
    ROOFLINE_CUDA_CHECK(
        cudaEventElapsedTime(&ms, m_events[g][run].get(), m_events[g][run + 1].get()));
    return ms;
  }

  std::size_t m_gpus;
  // Declared before the communicators, so destroyed after them: no buffer is freed under an
  // all-reduce that an abort has not stopped yet.
  std::vector<device_buffer> m_inputs, m_outputs;
  std::vector<detail::stream> m_streams;
  std::vector<std::vector<detail::event>> m_events; ///< GPU g's at g: timed_runs + 1, a chain
  communicators m_comms;
  // Declared last, so joined first: the threads are idle between jobs (a job's failure stops its
  // peers waiting), so the join returns, and no thread calls NCCL once the communicators go.
  std::unique_ptr<gpu_threads> m_threads; ///< null when this thread drives every GPU
};

/// All-reduces per timed run: enough for `target_run_s` at `estimate_s` each, at most
/// `max_iterations`.
int iterations_for(double estimate_s) {
  if (!(estimate_s > 0))
    return max_iterations;
  return static_cast<int>(
      std::clamp(std::ceil(target_run_s / estimate_s), 1.0, static_cast<double>(max_iterations)));
}

/// One size's result: seconds per all-reduce (the median run's) and the all-reduces a run.
struct size_timing {
  double time_s = 0;
  int iterations = 0;
};

/// Checks the all-reduce of `bytes` per GPU, then times it as `timing` says. Throws
/// capture_failed when graph_replay cannot capture it.
size_timing time_size(all_reduce_clique &clique, std::int64_t bytes, all_reduce_timing timing) {
  const auto count = static_cast<std::size_t>(bytes / 2);
  clique.prepare(bytes);
  clique.check_sum(bytes);
  // The warm-up, timed, then one run sized on it: the first calls of a size are slower (NCCL
  // sets up its protocols lazily) and one run can be disturbed, so the smaller estimate counts.
  // Both are eager, so that NCCL has set up what this size uses before a capture.
  const double first_estimate_s = clique.time(count, warmup_iterations);
  const double second_estimate_s = clique.time(count, iterations_for(first_estimate_s));
  const int iterations = iterations_for(std::min(first_estimate_s, second_estimate_s));
  std::vector<double> runs_s;
  if (timing == all_reduce_timing::graph_replay) {
    // Sized on the eager estimates, which the host's calls inflate for small sizes: there a
    // replay runs shorter than target_run_s, by the host's share of an eager call, still long
    // against the events' resolution. The first replay is checked and warms up; the timed
    // replays follow each other with nothing waited for between them, so that each but the
    // first is enqueued on every GPU before the one before it ends, and no GPU counts the host
    // launching its peers' graphs (the first run does; the median drops it).
    const all_reduce_graphs graphs = clique.capture(count, iterations);
    clique.check_replay(bytes, graphs);
    for (double run_s : clique.time_runs(timed_runs, [&] { clique.replay(graphs); }))
      runs_s.push_back(run_s / graphs.iterations);
  } else {
    for (int run = 0; run < timed_runs; ++run)
      runs_s.push_back(clique.time(count, iterations));
  }
  clique.synchronize(); // and the communicators' background errors
  return {median(std::move(runs_s)), iterations};
}

/// Every size of `sizes` (sorted, distinct), timed as `timing` says over one clique of `gpus`.
/// Throws capture_failed when graph_replay cannot capture; the clique's communicators are then
/// aborted, as on every error.
std::vector<all_reduce_sample>
time_sizes(int gpus, const std::vector<std::int64_t> &sizes, all_reduce_timing timing,
           const std::function<void(const std::string &)> &progress) {
  if (sizes.empty())
    return {};
  all_reduce_clique clique(gpus, sizes.back(), timing);
  std::vector<all_reduce_sample> samples;
  for (std::int64_t bytes : sizes) {
    const size_timing timed = time_size(clique, bytes, timing);
    samples.push_back({bytes, timed.time_s});
    if (progress) {
      char line[128];
      std::snprintf(line, sizeof line, "%s: %.1f us (%d all-reduces a run), sum checked",
                    size_text(bytes).c_str(), timed.time_s * 1e6, timed.iterations);
      progress(line);
    }
  }
  return samples;
}

struct timing_entry {
  all_reduce_timing timing;
  const char *text; ///< how the runs were issued and timed, for the table's origin
};

constexpr std::array<timing_entry, 3> timings{{
    {all_reduce_timing::graph_replay,
     "graph-replayed (back-to-back grouped calls captured from one thread into a CUDA graph per "
     "GPU)"},
    {all_reduce_timing::eager_one_thread, "eager (back-to-back grouped calls from one thread)"},
    {all_reduce_timing::eager_thread_per_gpu, "eager (back-to-back calls from a thread per GPU)"},
}};

std::string timing_text(all_reduce_timing timing) {
  for (const timing_entry &entry : timings)
    if (entry.timing == timing)
      return entry.text;
  return "?";
}

} // namespace

std::vector<std::int64_t> default_all_reduce_sizes() {
  std::vector<std::int64_t> sizes;
  for (std::int64_t bytes = 4 << 10; bytes <= (std::int64_t{1} << 30); bytes *= 4)
    sizes.push_back(bytes);
  return sizes;
}

all_reduce_table measure_all_reduce(const std::vector<std::int64_t> &sizes_bytes,
                                    const std::function<void(const std::string &)> &progress,
                                    all_reduce_timing timing) {
  std::vector<std::int64_t> sizes = sizes_bytes;
  for (std::int64_t bytes : sizes)
    if (bytes <= 0 || bytes % 2 != 0)
      throw error("all-reduce size " + std::to_string(bytes) +
                  " bytes: a size must be a positive number of bf16 elements (even bytes)");
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());

  // A failed call before this one (a cudaMalloc too large, say) leaves its error behind, where the
  // first launch's cudaGetLastError would read it as its own.
  cudaGetLastError();
  const int gpus = device_count(); // 0 without a driver
  if (gpus < 2)
    throw error("an all-reduce needs two or more GPUs; the CUDA runtime sees " +
                std::to_string(gpus));
  // Multicast objects (NVLS) can put a shared host's GPUs out of service: keep NCCL off them
  // unless NCCL_NVLS_ENABLE says otherwise. Set before NCCL is loaded, so before it reads it.
  if (setenv("NCCL_NVLS_ENABLE", "0", 0) != 0)
    throw error(std::string("cannot set NCCL_NVLS_ENABLE=0: ") + std::strerror(errno));
  const detail::nccl_api &api = nccl();

  all_reduce_table table;
  table.gpus = gpus;
  table.precision = "bf16";
  table.library = "NCCL " + detail::nccl_version_text(api.version);
  const std::string gpu_names = gpu_description(gpus);
  const std::string started = utc_now();
  std::string how = timing_text(timing);
  if (progress)
    progress(table.library + " (" + api.path + "), " + gpu_names + ", " + how);

  const detail::device_scope restore_device;
  try {
    table.samples = time_sizes(gpus, sizes, timing, progress);
  } catch (const capture_failed &failure) {
    // The unwinding aborted the communicators, which may keep state from the capture that failed:
    // new ones time every size again, so that the whole table is timed one way.
    how = timing_text(all_reduce_timing::eager_one_thread) + " as graph capture failed (" +
          failure.what() + ")";
    if (progress)
      progress(std::string("graph capture failed, timing eager calls instead: ") + failure.what());
    table.samples = time_sizes(gpus, sizes, all_reduce_timing::eager_one_thread, progress);
  }
  table.origin = "NCCL all-reduce, out-of-place, bf16 sum, " + gpu_names + ", one process, " + how +
                 ", the slowest GPU's time, median of " + std::to_string(timed_runs) + " runs, " +
                 started;
  return table;
}

} // namespace roofline::cuda
