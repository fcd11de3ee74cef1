// SPDX-License-Identifier: Apache-2.0
#include "roofline/cuda/ceiling_probe.hpp"

#include "cuda_graph.hpp"
#include "event_timer.hpp"
#include "kernel_trace.hpp"
#include "kernels.hpp"
#include "power_probe.hpp"
#include "roofline/cuda/cuda_error.hpp"
#include "roofline/cuda/detail/cuda_check.hpp"
#include "roofline/cuda/detail/cuda_owners.hpp"
#include "roofline/cuda/detail/device_buffer.hpp"
#include "roofline/cuda/detail/lt_gemm.hpp"
#include "roofline/cuda/device.hpp"
#include "utc_time.hpp"

#include <algorithm>
#include <cstdio>
#include <memory>

namespace roofline::cuda {

namespace {

using detail::device_buffer;
using detail::run_timing;
using detail::time_runs;
using detail::utc_now;
using kernels::element_type;

constexpr int warmup_runs = 3;
constexpr int timed_runs = 20;

std::string gib(std::size_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f GiB", static_cast<double>(bytes) / (1u << 30));
  return text;
}

class prober {
public:
  prober(int ordinal, const probe_options &options)
      : m_ordinal(detail::make_current(ordinal)), m_options(options) {
    m_device = describe_device(m_ordinal);
    m_theory = theoretical_spec(m_device);
    m_result.uuid = m_device.uuid;
    m_result.device_name = m_device.name;
  }

  measured_ceilings run() {
    memory();
    arithmetic();
    tensor_kernels();
    cublas();
    host_floors();
    launch_overhead();
    for (ceiling_result &r : detail::measure_power(m_ordinal, m_stream.get(), m_options.progress))
      m_result.results.push_back(std::move(r));
    m_result.measured_at = utc_now();
    return m_result;
  }

private:
  /// Runs one measurement; a failure is recorded in its result and the probe goes on.
  template <class Measure>
  void attempt(const std::string &name, ceiling_kind kind, std::optional<precision> p,
               Measure &&measure) {
    if (m_options.progress)
      m_options.progress(name);
    ceiling_result r;
    r.name = name;
    r.kind = kind;
    r.precision = p;
    try {
      measure(r);
    } catch (const std::exception &e) {
      r.failure = e.what();
      cudaGetLastError(); // clear a non-sticky error so that the next measurement starts clean
    }
    m_result.results.push_back(r);
  }

  static void record(ceiling_result &r, const run_timing &t, double work,
                     const std::string &method) {
    r.value = work / t.median_s;
    r.spread = t.spread();
    r.method = method + "; median of " + std::to_string(t.runs) + " runs";
  }

  static std::string describe(const kernels::stream_config &c) {
    return "unroll " + std::to_string(c.unroll) + ", " + std::to_string(c.threads) + " threads, " +
           (c.blocks_per_sm ? std::to_string(c.blocks_per_sm) + " blocks/SM grid-stride"
                            : std::string("one pass")) +
           (c.streaming ? ", evict-first hints" : "");
  }

  /// Times `launch` under every candidate launch shape and records the fastest.
  template <class Launch>
  void best_shape(ceiling_result &r, double work, const std::string &what, bool persistent_only,
                  Launch &&launch) {
    std::size_t count = 0;
    const kernels::stream_config *configs = kernels::stream_configs(&count);
    std::optional<run_timing> best;
    kernels::stream_config best_config;
    for (std::size_t i = 0; i < count; ++i) {
      const kernels::stream_config &c = configs[i];
      if (persistent_only && c.blocks_per_sm == 0)
        continue;
      const run_timing t = time_runs(m_stream.get(), 2, 10, [&] { launch(c); });
      if (!best || t.median_s < best->median_s) {
        best = t;
        best_config = c;
      }
    }
    // Re-time the winner with the full number of runs, so that its median is not the luckiest of
    // many.
    const run_timing t =
        time_runs(m_stream.get(), warmup_runs, timed_runs, [&] { launch(best_config); });
    record(r, t, work,
           what + " (" + describe(best_config) + "; fastest of the launch shapes tried)");
  }

  void memory() {
    std::size_t free_bytes = 0, total_bytes = 0;
    ROOFLINE_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    // Far larger than L2 so that every pass comes from DRAM, within a quarter of free memory each.
    std::size_t bytes = std::max<std::size_t>(std::size_t{1} << 30,
                                              32 * static_cast<std::size_t>(m_device.l2_bytes));
    bytes = std::min(bytes, free_bytes / 4) & ~std::size_t{0xFFFF};
    device_buffer source(bytes), destination(bytes), sink(sizeof(unsigned));
    const cudaStream_t s = m_stream.get();
    ROOFLINE_CUDA_CHECK(
        kernels::fill_random(source.get(), bytes / 4, element_type::f32, 1, 1.0f, s));
    ROOFLINE_CUDA_CHECK(
        kernels::fill_random(destination.get(), bytes / 4, element_type::f32, 2, 1.0f, s));
    const int sms = m_device.sm_count;
    const std::string size = gib(bytes);
    const double moved = static_cast<double>(bytes);

    attempt("dram read", ceiling_kind::dram_bandwidth, std::nullopt, [&](ceiling_result &r) {
      best_shape(r, moved, "16-byte loads over " + size, false,
                 [&](const kernels::stream_config &c) {
                   ROOFLINE_CUDA_CHECK(
                       kernels::stream_read(source.get(), bytes, sink.as<unsigned>(), sms, c, s));
                 });
    });
    attempt("dram write", ceiling_kind::dram_bandwidth, std::nullopt, [&](ceiling_result &r) {
      best_shape(r, moved, "16-byte stores over " + size, false,
                 [&](const kernels::stream_config &c) {
                   ROOFLINE_CUDA_CHECK(kernels::stream_write(destination.get(), bytes, sms, c, s));
                 });
    });
    attempt("dram copy", ceiling_kind::dram_bandwidth, std::nullopt, [&](ceiling_result &r) {
      best_shape(r, 2 * moved, "copy kernel, " + size + ", read + write bytes", false,
                 [&](const kernels::stream_config &c) {
                   ROOFLINE_CUDA_CHECK(
                       kernels::stream_copy(destination.get(), source.get(), bytes, sms, c, s));
                 });
    });
    attempt("cudaMemcpy device-to-device", ceiling_kind::dram_bandwidth, std::nullopt,
            [&](ceiling_result &r) {
              const run_timing t = time_runs(s, warmup_runs, timed_runs, [&] {
                ROOFLINE_CUDA_CHECK(cudaMemcpyAsync(destination.get(), source.get(), bytes,
                                                    cudaMemcpyDeviceToDevice, s));
              });
              record(r, t, 2 * moved,
                     "reference for the copy kernel, " + size + ", read + write bytes");
            });
    attempt("l2 read", ceiling_kind::l2_bandwidth, std::nullopt, [&](ceiling_result &r) {
      // A quarter of L2: resident even where L2 is split into partitions.
      const std::size_t resident =
          (static_cast<std::size_t>(m_device.l2_bytes) / 4) & ~std::size_t{0xFFFF};
      const int passes =
          static_cast<int>(std::max<std::size_t>(1, (std::size_t{4} << 30) / resident));
      best_shape(r, static_cast<double>(resident) * passes,
                 std::to_string(passes) + " passes over " + std::to_string(resident >> 20) +
                     " MiB, L2-only loads",
                 true, [&](const kernels::stream_config &c) {
                   ROOFLINE_CUDA_CHECK(kernels::l2_read(source.get(), resident, passes,
                                                        sink.as<unsigned>(), sms, c, s));
                 });
    });
  }

  void arithmetic() {
    const int sms = m_device.sm_count;
    const std::size_t threads = kernels::peak_sink_elements(sms);
    const cudaStream_t s = m_stream.get();
    attempt("fp32 FMA", ceiling_kind::flop_rate, precision::fp32, [&](ceiling_result &r) {
      device_buffer seeds(1024 * sizeof(float)), sink(threads * sizeof(float));
      ROOFLINE_CUDA_CHECK(kernels::fill_random(seeds.get(), 1024, element_type::f32, 3, 1.0f, s));
      double flops = 0;
      const run_timing t = time_runs(s, warmup_runs, timed_runs, [&] {
        ROOFLINE_CUDA_CHECK(
            kernels::fma_peak_f32(seeds.as<float>(), sink.as<float>(), sms, 16384, &flops, s));
      });
      record(r, t, flops, "8 independent FFMA chains per thread, 2048 threads per SM");
    });
    attempt("fp64 FMA", ceiling_kind::flop_rate, precision::fp64, [&](ceiling_result &r) {
      device_buffer seeds(1024 * sizeof(double)), sink(threads * sizeof(double));
      ROOFLINE_CUDA_CHECK(kernels::fill_random(seeds.get(), 1024, element_type::f64, 4, 1.0f, s));
      double flops = 0;
      const run_timing t = time_runs(s, warmup_runs, timed_runs, [&] {
        ROOFLINE_CUDA_CHECK(
            kernels::fma_peak_f64(seeds.as<double>(), sink.as<double>(), sms, 4096, &flops, s));
      });
      record(r, t, flops, "8 independent DFMA chains per thread, 2048 threads per SM");
    });
  }

  void tensor_kernels() {
    const int sms = m_device.sm_count;
    const cudaStream_t s = m_stream.get();
    const struct {
      precision p;
      element_type type;
      int min_cc; // major*10 + minor
    } variants[] = {{precision::fp16, element_type::f16, 80},
                    {precision::bf16, element_type::bf16, 80},
                    {precision::tf32, element_type::f32, 80},
                    {precision::fp8, element_type::e4m3, 89},
                    {precision::int8, element_type::i8, 80}};
    const int cc = m_device.cc_major * 10 + m_device.cc_minor;
    for (const auto &v : variants) {
      if (cc < v.min_cc || !m_theory.supports(v.p))
        continue;
      attempt(std::string(to_string(v.p)) + " mma.sync kernel", ceiling_kind::flop_rate, v.p,
              [&](ceiling_result &r) {
                device_buffer seeds(4096), sink(kernels::peak_sink_elements(sms) * sizeof(float));
                ROOFLINE_CUDA_CHECK(kernels::fill_random(
                    seeds.get(), 4096 / kernels::element_size(v.type), v.type, 5, 1.0f, s));
                double flops = 0;
                const run_timing t = time_runs(s, warmup_runs, timed_runs, [&] {
                  ROOFLINE_CUDA_CHECK(kernels::mma_peak(v.type, seeds.get(), sink.as<float>(), sms,
                                                        4096, &flops, s));
                });
                record(r, t, flops,
                       "8 independent mma.sync accumulators per warp, register operands");
              });
    }
  }

  /// The best rate cuBLASLt reaches: sizes × the heuristic's top algorithms (fp32 and fp64, slow on
  /// the CUDA cores, at one size and algorithm).
  void cublas() {
    const cudaStream_t s = m_stream.get();
    const detail::lt_handle lt;
    device_buffer workspace(detail::lt_workspace_bytes);
    for (precision p : {precision::fp16, precision::bf16, precision::tf32, precision::fp8,
                        precision::int8, precision::fp32, precision::fp64}) {
      if (!m_theory.supports(p))
        continue;
      const bool simt = !runs_on_tensor_cores(p);
      const std::vector<std::int64_t> sizes =
          simt ? std::vector<std::int64_t>{8192} : std::vector<std::int64_t>{4096, 8192, 16384};
      const int ranks = simt ? 1 : 3;
      attempt(
          std::string(to_string(p)) + " cuBLASLt", ceiling_kind::flop_rate, p,
          [&](ceiling_result &r) {
            const detail::gemm_types types = detail::types_for(p);
            const std::int64_t largest = sizes.back();
            const auto square = static_cast<std::size_t>(largest * largest);
            device_buffer a(square * kernels::element_size(types.input));
            device_buffer b(square * kernels::element_size(types.input));
            device_buffer c(square * kernels::element_size(types.output));
            ROOFLINE_CUDA_CHECK(kernels::fill_random(a.get(), square, types.input, 6, 1.0f, s));
            ROOFLINE_CUDA_CHECK(kernels::fill_random(b.get(), square, types.input, 7, 1.0f, s));
            double best_rate = 0;
            std::string best_method;
            run_timing best_timing;
            for (std::int64_t n : sizes)
              for (int rank = 0; rank < ranks; ++rank) {
                std::unique_ptr<detail::lt_gemm> gemm;
                try {
                  gemm =
                      std::make_unique<detail::lt_gemm>(lt.get(), gemm_shape{n, n, n, 1}, p,
                                                        workspace.get(), workspace.bytes(), rank);
                } catch (const cuda_error &) {
                  continue; // fewer algorithms than ranks asked for
                }
                const run_timing t = time_runs(s, simt ? 1 : warmup_runs, simt ? 5 : 10,
                                               [&] { gemm->run(a.get(), b.get(), c.get(), s); });
                const double rate = 2.0 * static_cast<double>(n * n * n) / t.median_s;
                if (rate > best_rate) {
                  best_rate = rate;
                  best_timing = t;
                  best_method = std::to_string(n) + "³, heuristic rank " + std::to_string(rank) +
                                " (tile id " + std::to_string(gemm->algorithm().tile_id) + ")";
                }
              }
            if (best_rate == 0)
              throw roofline::error("cuBLASLt ran no algorithm");
            r.value = best_rate;
            r.spread = best_timing.spread();
            r.method = "best of " + std::to_string(sizes.size() * static_cast<std::size_t>(ranks)) +
                       " size/algorithm pairs: " + best_method + ", random operands; median of " +
                       std::to_string(best_timing.runs) + " runs";
          });
    }
  }

  /// The host's cost of one cuBLAS call, per precision: a small GEMM of one kernel (no split-K
  /// reduction) whose GPU time is shorter than its host time, issued eagerly back to back, where
  /// each call costs what the host needs to issue it (cuBLASLt's host code, the driver's launch);
  /// with misaligned rows too, which run the CUTLASS fallback kernels' own path. The same calls
  /// replayed from a CUDA graph show how little of it is the GPU's. The value: eager s per call.
  void host_floors() {
    for (precision p : calibration_precisions) {
      if (!m_theory.supports(p))
        continue;
      host_floor(p, {512, 512, 64, 1}, ceiling_kind::host_floor, "");
      if (p != precision::fp32) // fp32 runs SIMT kernels whatever the alignment
        host_floor(p, {512, 511, 64, 1}, ceiling_kind::fallback_host_floor, ", misaligned rows");
    }
  }

  void host_floor(precision p, const gemm_shape &shape, ceiling_kind kind, const char *which) {
    constexpr int calls = 200;
    const cudaStream_t s = m_stream.get();
    attempt(
        "cuBLAS call host floor " + std::string(to_string(p)) + which, kind, p,
        [&](ceiling_result &r) {
          const detail::lt_handle lt;
          device_buffer workspace(detail::lt_workspace_bytes);
          const detail::gemm_types types = detail::types_for(p);
          const detail::lt_gemm gemm(lt.get(), shape, p, workspace.get(), workspace.bytes());
          device_buffer a(gemm.a_elements() * kernels::element_size(types.input));
          device_buffer b(gemm.b_elements() * kernels::element_size(types.input));
          device_buffer c(gemm.c_elements() * kernels::element_size(types.output));
          ROOFLINE_CUDA_CHECK(
              kernels::fill_random(a.get(), gemm.a_elements(), types.input, 8, 1.0f, s));
          ROOFLINE_CUDA_CHECK(
              kernels::fill_random(b.get(), gemm.b_elements(), types.input, 9, 1.0f, s));
          const auto issue = [&] {
            for (int i = 0; i < calls; ++i)
              gemm.run(a.get(), b.get(), c.get(), s);
          };
          // The floor of one call is that of one kernel: a call that adds split-K's reduction
          // (as 64³ fp32 did) would count a second launch.
          const int launches =
              detail::trace_kernels([&] { gemm.run(a.get(), b.get(), c.get(), s); }, s).launches;
          if (launches > 1)
            throw roofline::error("the probe GEMM launched " + std::to_string(launches) +
                                  " kernels per call, not one");
          const run_timing eager = time_runs(s, warmup_runs, timed_runs, issue);
          r.value = eager.median_s / calls;
          r.spread = eager.spread();
          const std::string how = std::to_string(shape.m) + "×" + std::to_string(shape.n) + "×" +
                                  std::to_string(shape.k) + " cuBLASLt, " + std::to_string(calls) +
                                  " calls per run, median of " + std::to_string(eager.runs) +
                                  " runs";
          char text[96];
          try {
            const detail::captured_work graph(s, issue);
            const run_timing replayed = time_runs(s, 1, timed_runs, [&] { graph.launch(s); });
            std::snprintf(text, sizeof text,
                          "eager %.1f µs per call vs %.1f µs graph-replayed: ", r.value * 1e6,
                          replayed.median_s / calls * 1e6);
            r.method = text + how;
          } catch (const std::exception &e) {
            // The eager floor stands without its comparison.
            cudaGetLastError();
            std::snprintf(text, sizeof text, "eager %.1f µs per call: ", r.value * 1e6);
            r.method = text + how + " (graph replay failed: " + e.what() + ")";
          }
        });
  }

  void launch_overhead() {
    const cudaStream_t s = m_stream.get();
    attempt("kernel launch (back-to-back)", ceiling_kind::latency, std::nullopt,
            [&](ceiling_result &r) {
              constexpr int launches = 200;
              const run_timing t = time_runs(s, warmup_runs, timed_runs, [&] {
                for (int i = 0; i < launches; ++i)
                  ROOFLINE_CUDA_CHECK(kernels::empty_kernel(s));
              });
              r.value = t.median_s / launches;
              r.spread = t.spread();
              r.method = "empty kernels, 200 per timed run, median of " + std::to_string(t.runs) +
                         " runs (the host floor of a plain kernel launch, as memory ops pay it)";
            });
  }

  int m_ordinal; ///< made current first: the stream is made on it
  probe_options m_options;
  device_description m_device;
  gpu_spec m_theory;
  measured_ceilings m_result;
  detail::stream m_stream;
};

} // namespace

measured_ceilings measure_ceilings(int ordinal, const probe_options &options) {
  return prober(ordinal, options).run();
}

} // namespace roofline::cuda
