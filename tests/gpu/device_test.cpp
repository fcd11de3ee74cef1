// SPDX-License-Identifier: Apache-2.0
#include "cuda_graph.hpp"
#include "event_timer.hpp"
#include "gpu_test_support.hpp"
#include "roofline/cuda/ceiling_probe.hpp"
#include "roofline/cuda/detail/lt_gemm.hpp"
#include "roofline/cuda/device.hpp"
#include "roofline/cuda/local_gpu.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>

using namespace roofline;

namespace {

/// Seconds per call of `calls` back-to-back 64³ cuBLASLt GEMMs of `p` replayed from a CUDA graph
/// (the median of 20 replays): the GPU's own time for the probe's host-floor GEMM.
double graph_replayed_tiny_gemm_s(precision p) {
  constexpr int calls = 200;
  const cuda::detail::stream stream_owner;
  const cudaStream_t stream = stream_owner.get();
  const cuda::detail::lt_handle handle;
  double seconds = 0;
  {
    test::device_buffer workspace(cuda::detail::lt_workspace_bytes);
    const cuda::detail::lt_gemm gemm(handle.get(), {64, 64, 64, 1}, p, workspace.get(),
                                     workspace.bytes());
    const cuda::detail::gemm_types types = cuda::detail::types_for(p);
    test::device_buffer a(gemm.a_elements() * kernels::element_size(types.input));
    test::device_buffer b(gemm.b_elements() * kernels::element_size(types.input));
    test::device_buffer c(gemm.c_elements() * kernels::element_size(types.output));
    ROOFLINE_CUDA_CHECK(
        kernels::fill_random(a.get(), gemm.a_elements(), types.input, 1, 1.0f, stream));
    ROOFLINE_CUDA_CHECK(
        kernels::fill_random(b.get(), gemm.b_elements(), types.input, 2, 1.0f, stream));
    // One eager call first: the kernel loads (lazy module loading) before the capture, as in use.
    gemm.run(a.get(), b.get(), c.get(), stream);
    ROOFLINE_CUDA_CHECK(cudaStreamSynchronize(stream));
    const cuda::detail::captured_work work(stream, [&] {
      for (int i = 0; i < calls; ++i)
        gemm.run(a.get(), b.get(), c.get(), stream);
    });
    seconds = cuda::detail::time_runs(stream, 1, 20, [&] { work.launch(stream); }).median_s / calls;
  }
  return seconds;
}

} // namespace

TEST_CASE("the device query describes a real GPU") {
  REQUIRE(cuda::device_count() > 0);
  const device_description d = cuda::describe_device(0);
  CHECK_FALSE(d.name.empty());
  CHECK(d.uuid.rfind("GPU-", 0) == 0);
  CHECK(d.uuid.size() == 40);
  CHECK(d.sm_count > 0);
  CHECK(d.sm_clock_hz > 1e8);
  CHECK(d.memory_clock_hz > 1e8);
  CHECK(d.memory_bus_width_bits >= 64);
  CHECK(d.memory_bytes > 1e9);
  const gpu_spec theory = theoretical_spec(d);
  CHECK(theory.dram_bytes_per_s ==
        doctest::Approx(2.0 * d.memory_clock_hz * d.memory_bus_width_bits / 8));
  MESSAGE(d.name << ": " << d.sm_count << " SMs, " << d.sm_clock_hz / 1e6 << " MHz, memory "
                 << d.memory_clock_hz / 1e6 << " MHz x " << d.memory_bus_width_bits << " bit");
}

TEST_CASE("measured ceilings are physically possible, complete, and survive the cache") {
  const std::filesystem::path cache =
      std::filesystem::temp_directory_path() / "roofline-gpu-test-cache";
  std::filesystem::remove_all(cache);
  setenv("ROOFLINE_CACHE_DIR", cache.c_str(), 1);
  const device_report measured = cuda::measured_device_report(0, true);
  REQUIRE(measured.ceilings);
  for (const ceiling_result &r : measured.ceilings->results) {
    CAPTURE(r.name);
    CHECK(r.failure.empty());
    CHECK(r.value > 0);
  }
  // Above the theoretical peak means a kernel did less work than counted (a measurement bug).
  const auto dram = measured.ceilings->dram_bytes_per_s();
  REQUIRE(dram);
  CHECK(*dram <= 1.02 * measured.theoretical.dram_bytes_per_s);
  for (const auto &[p, rate] : measured.theoretical.peaks)
    if (auto flops = measured.ceilings->flop_per_s(p)) {
      CAPTURE(to_string(p));
      CHECK(*flops <= 1.02 * rate.dense_flop_per_s);
    }
  // Host floors: an eager cuBLAS call costs the host more than the GPU's time for a tiny GEMM.
  for (precision p : {precision::fp32, precision::tf32, precision::fp16, precision::bf16}) {
    CAPTURE(to_string(p));
    CHECK(measured.ceilings->host_floor_s(p).has_value());
  }
  const auto fp16_floor = measured.ceilings->host_floor_s(precision::fp16);
  REQUIRE(fp16_floor);
  const double replayed = graph_replayed_tiny_gemm_s(precision::fp16);
  CHECK(*fp16_floor > replayed);
  CHECK(*fp16_floor < 1e-3); // a per-call time, not a per-run one
  MESSAGE("fp16 64³ cuBLASLt: host floor " << *fp16_floor * 1e6 << " µs per call, graph-replayed "
                                           << replayed * 1e6 << " µs");
  for (const ceiling_result &r : measured.ceilings->results)
    if (r.kind == ceiling_kind::host_floor) {
      CAPTURE(r.name);
      CHECK(r.method.find("graph-replayed") != std::string::npos); // its replay did not fail
    }
  const auto launch = measured.ceilings->launch_latency_s();
  REQUIRE(launch);
  CHECK(*launch > 0);
  const device_report cached = cuda::local_device_report(0);
  REQUIRE(cached.ceilings);
  CHECK(cached.ceilings->results.size() == measured.ceilings->results.size());
  CHECK(*cached.ceilings->dram_bytes_per_s() == doctest::Approx(*dram));
  REQUIRE(cached.ceilings->host_floor_s(precision::fp16));
  CHECK(*cached.ceilings->host_floor_s(precision::fp16) == *fp16_floor);
  const auto local = cuda::find_local_gpu();
  REQUIRE(local);
  CHECK(local->spec.dram_bytes_per_s == doctest::Approx(*dram));
  std::filesystem::remove_all(cache);
}
