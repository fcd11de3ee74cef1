// SPDX-License-Identifier: Apache-2.0
#include "counter_session.hpp"
#include "event_timer.hpp"
#include "gpu_test_support.hpp"
#include "kernel_trace.hpp"
#include "roofline/cuda/cuda_error.hpp"
#include "roofline/cuda/detail/lt_gemm.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <sstream>
#include <string>

using namespace roofline;
using namespace roofline::test;
using cuda::detail::counter_session;
using cuda::detail::counter_values;

namespace {

/// A session on GPU 0, or null (with a message, not a failure) where this machine does not let us
/// read counters: no permission, another profiler holding them, or a GPU older than the range
/// profiler.
std::unique_ptr<counter_session>
open_session(const std::vector<precision> &tensor_precisions = {}) {
  int major = 0, minor = 0;
  ROOFLINE_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
  ROOFLINE_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0));
  if (major * 10 + minor < 75) {
    MESSAGE("counters skipped: the CUPTI range profiler needs compute capability 7.5");
    return nullptr;
  }
  try {
    return std::make_unique<counter_session>(0, tensor_precisions);
  } catch (const cuda::cuda_error &e) {
    if (e.library() == "CUPTI" && (e.status() == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES ||
                                   e.status() == CUPTI_ERROR_HARDWARE_BUSY)) {
      MESSAGE("counters skipped: " << e.what());
      return nullptr;
    }
    throw;
  }
}

std::string describe(const counter_session &session, const counter_values &v) {
  std::ostringstream out;
  out << "chip " << session.chip() << ", " << session.passes() << " pass(es), metrics:";
  for (const std::string &name : session.metrics())
    out << ' ' << name;
  out << "\nduration " << v.duration_s * 1e3 << " ms, DRAM read " << v.dram_read_bytes / 1048576.0
      << " MiB, write " << v.dram_write_bytes / 1048576.0 << " MiB, L2 " << v.l2_bytes / 1048576.0
      << " MiB, tensor " << v.tensor_flops << " FLOP, fp32 " << v.fp32_flops << ", fp64 "
      << v.fp64_flops << ", SM clock " << v.sm_clock_hz * 1e-9 << " GHz, passes " << v.passes
      << "\nkernels:";
  for (const std::string &name : v.kernels.names)
    out << "\n  " << name;
  return out.str();
}

/// One cuBLASLt GEMM with random operands, its own stream and a warm-up call done.
struct gemm_fixture {
  cuda::detail::lt_handle handle;
  cuda::detail::stream stream_owner;
  cudaStream_t stream = stream_owner.get();
  device_buffer workspace{cuda::detail::lt_workspace_bytes};
  std::unique_ptr<cuda::detail::lt_gemm> gemm;
  device_buffer a, b, c;

  gemm_fixture(const gemm_shape &shape, precision p) {
    gemm = std::make_unique<cuda::detail::lt_gemm>(handle.get(), shape, p, workspace.get(),
                                                   workspace.bytes());
    const auto types = cuda::detail::types_for(p);
    a = device_buffer(gemm->a_elements() * kernels::element_size(types.input));
    b = device_buffer(gemm->b_elements() * kernels::element_size(types.input));
    c = device_buffer(gemm->c_elements() * kernels::element_size(types.output));
    ROOFLINE_CUDA_CHECK(
        kernels::fill_random(a.get(), gemm->a_elements(), types.input, 11, 1.0f, stream));
    ROOFLINE_CUDA_CHECK(
        kernels::fill_random(b.get(), gemm->b_elements(), types.input, 12, 1.0f, stream));
    launch(); // warm-up: lazy module loading must not land inside the range
    ROOFLINE_CUDA_CHECK(cudaStreamSynchronize(stream));
  }

  void launch() const { gemm->run(a.get(), b.get(), c.get(), stream); }
};

} // namespace

TEST_CASE("counters of a 4096³ fp16 cuBLASLt GEMM: tensor FLOPs, operand bytes, time, kernels") {
  const auto session = open_session();
  if (!session)
    return;
  const gemm_shape shape{4096, 4096, 4096, 1};
  gemm_fixture f(shape, precision::fp16);
  const counter_values v = session->measure([&] { f.launch(); }, f.stream);
  MESSAGE(describe(*session, v));

  const double flops = 2.0 * 4096 * 4096 * 4096;
  CHECK(v.tensor_flops >= 0.99 * flops); // the op counters are exact; tile quantization only adds
  CHECK(v.tensor_flops <= 1.10 * flops);
  const double operand_bytes =
      2.0 * 4096 * 4096 * 2; // A and B, fp16: each must come from DRAM once
  CHECK(v.dram_read_bytes >= 0.5 * operand_bytes);
  CHECK(v.duration_s > 0);
  CHECK(v.passes >= 1);
  CHECK(v.passes == session->passes());
  CHECK(!v.kernels.names.empty());
  CHECK(v.sm_clock_hz > 0.2e9);
  CHECK(v.sm_clock_hz < 4e9);

  // Event timing of the same call: the range also holds CUPTI's own markers, so it may be a little
  // longer, never far off (a warning only: clocks are free and the GPU may be shared).
  const auto timing = cuda::detail::time_runs(f.stream, 2, 10, [&] { f.launch(); });
  CAPTURE(timing.median_s);
  WARN(v.duration_s > 0.7 * timing.median_s);
  WARN(v.duration_s < 2.0 * timing.median_s);

  // The same session measures again: the counter data image is prepared afresh for every call.
  const counter_values again = session->measure([&] { f.launch(); }, f.stream);
  CHECK(again.tensor_flops == doctest::Approx(v.tensor_flops).epsilon(1e-6));
  CHECK(again.kernels.names == v.kernels.names);
}

TEST_CASE("counters of a 1 GiB copy kernel: DRAM read and write bytes are the buffer size") {
  const auto session = open_session();
  if (!session)
    return;
  int sms = 0;
  ROOFLINE_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const std::size_t bytes = std::size_t{1} << 30;
  device_buffer source(bytes), destination(bytes);
  ROOFLINE_CUDA_CHECK(
      kernels::fill_random(source.get(), bytes / 4, element_type::f32, 5, 1.0f, nullptr));
  const kernels::stream_config config;
  const auto launch = [&] {
    ROOFLINE_CUDA_CHECK(
        kernels::stream_copy(destination.get(), source.get(), bytes, sms, config, nullptr));
  };
  launch();
  ROOFLINE_CUDA_CHECK(cudaDeviceSynchronize());
  const counter_values v = session->measure(launch, nullptr);
  MESSAGE(describe(*session, v));

  CHECK(v.dram_read_bytes == doctest::Approx(static_cast<double>(bytes)).epsilon(0.05));
  CHECK(v.dram_write_bytes == doctest::Approx(static_cast<double>(bytes)).epsilon(0.05));
  CHECK(v.l2_bytes >= 1.9 * static_cast<double>(bytes)); // every byte read and written passes L2
  CHECK(v.tensor_flops == 0);
  CHECK(v.fp32_flops == 0);
  CHECK(v.duration_s > 0);
  CHECK(std::any_of(v.kernels.names.begin(), v.kernels.names.end(), [](const std::string &name) {
    return name.find("copy_kernel") != std::string::npos;
  }));
}

TEST_CASE("SIMT FLOPs of an fp32 GEMM and the fp64 GEMM's FLOPs (tensor or SIMT) are 2·M·N·K") {
  const auto session = open_session();
  if (!session)
    return;
  const gemm_shape shape{2048, 2048, 2048, 1};
  const double flops = 2.0 * 2048 * 2048 * 2048;
  {
    gemm_fixture f(shape, precision::fp32); // plain fp32: cuBLASLt uses FFMA, no TF32
    const counter_values v = session->measure([&] { f.launch(); }, f.stream);
    MESSAGE(describe(*session, v));
    CHECK(v.fp32_flops >= 0.99 * flops);
    CHECK(v.fp32_flops <= 1.10 * flops);
    CHECK(v.tensor_flops == 0);
  }
  {
    gemm_fixture f(
        shape, precision::fp64); // sm_80+: DMMA on the tensor cores (sm__ops_path_tensor_src_fp64)
    const counter_values v = session->measure([&] { f.launch(); }, f.stream);
    MESSAGE(describe(*session, v));
    CHECK(v.tensor_flops + v.fp64_flops >= 0.99 * flops);
    CHECK(v.tensor_flops + v.fp64_flops <= 1.10 * flops);
  }
}

TEST_CASE(
    "a session limited to fp16 tensor metrics needs no more passes and counts the same FLOPs") {
  int all_passes = 0;
  double all_flops = 0;
  const gemm_shape shape{4096, 4096, 4096, 1};
  {
    const auto session = open_session();
    if (!session)
      return;
    gemm_fixture f(shape, precision::fp16);
    all_passes = session->passes();
    all_flops = session->measure([&] { f.launch(); }, f.stream).tensor_flops;
  } // one session per context at a time: this one ends before the next begins
  const auto session = open_session({precision::fp16});
  REQUIRE(session);
  gemm_fixture f(shape, precision::fp16);
  const counter_values v = session->measure([&] { f.launch(); }, f.stream);
  MESSAGE(describe(*session, v));
  CHECK(session->passes() <= all_passes);
  CHECK(v.tensor_flops == doctest::Approx(all_flops).epsilon(1e-6));
  const auto tensor_metrics = std::count_if(
      session->metrics().begin(), session->metrics().end(),
      [](const std::string &name) { return name.rfind("sm__ops_path_tensor_", 0) == 0; });
  CHECK(tensor_metrics >= 1);
  CHECK(tensor_metrics <= 2);
}

TEST_CASE("kernel tracing without counters counts every launch, repeats included") {
  gemm_fixture f({4096, 4096, 4096, 1}, precision::fp16);
  const cuda::detail::traced_kernels once =
      cuda::detail::trace_kernels([&] { f.launch(); }, f.stream);
  if (once.launches == 0) {
    MESSAGE("kernel tracing skipped: CUPTI refused the Activity API here");
    return;
  }
  CHECK(!once.names.empty());
  CHECK(once.time_s > 0);
  // Three calls: three times the kernels, the same names, each listed once.
  const cuda::detail::traced_kernels thrice = cuda::detail::trace_kernels(
      [&] {
        for (int i = 0; i < 3; ++i)
          f.launch();
      },
      f.stream);
  CHECK(thrice.launches == 3 * once.launches);
  CHECK(thrice.names == once.names);
}
