// SPDX-License-Identifier: Apache-2.0
#include "power_probe.hpp"

#include "event_timer.hpp"
#include "held_run.hpp"
#include "kernels.hpp"
#include "nvml_library.hpp"
#include "roofline/common/error.hpp"
#include "roofline/cuda/detail/cuda_check.hpp"
#include "roofline/cuda/detail/cuda_owners.hpp"
#include "roofline/cuda/detail/device_buffer.hpp"
#include "roofline/cuda/detail/lt_gemm.hpp"

#include <fmt/format.h>

#include <chrono>
#include <memory>
#include <optional>
#include <thread>

namespace roofline::cuda::detail {

namespace {

using clock_type = std::chrono::steady_clock;

} // namespace

std::vector<ceiling_result>
measure_power(int device, cudaStream_t stream,
              const std::function<void(const std::string &)> &progress) {
  std::vector<ceiling_result> results;
  std::optional<nvml_device> nvml;
  std::string missing;
  try {
    nvml.emplace(device);
  } catch (const std::exception &e) {
    missing = e.what();
  }
  // Each measurement in turn; one that fails records why, and the next goes on.
  const auto attempt = [&](const std::string &name, ceiling_kind kind, std::optional<precision> p,
                           auto &&measure) {
    if (progress)
      progress(name);
    ceiling_result r{name, kind, p, 0, 0, "", ""};
    try {
      if (!nvml)
        throw error("NVML cannot be read: " + missing);
      measure(r);
    } catch (const std::exception &e) {
      r.failure = e.what();
      cudaGetLastError();
    }
    results.push_back(r);
    return r.failure.empty();
  };

  double idle_w = 0;
  attempt("idle power", ceiling_kind::idle_power, std::nullopt, [&](ceiling_result &r) {
    ROOFLINE_CUDA_CHECK(cudaStreamSynchronize(stream));
    std::this_thread::sleep_for(std::chrono::milliseconds(1000));
    const double e0 = nvml->energy_j();
    const clock_type::time_point t0 = clock_type::now();
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    idle_w = r.value = (nvml->energy_j() - e0) / seconds_since(t0);
    r.method = "NVML's energy counter over 1.5 s with nothing running, after 1 s idle";
  });

  double dram_j = 0;
  attempt("dram energy", ceiling_kind::energy_per_byte, std::nullopt, [&](ceiling_result &r) {
    if (!(idle_w > 0))
      throw error("no idle power to subtract");
    const std::size_t bytes = std::size_t{1} << 30;
    const device_buffer source(bytes), destination(bytes);
    int sms = 0;
    ROOFLINE_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    // Our copy kernel, on the SMs as a step's kernels are (cudaMemcpy may take a copy engine,
    // which draws less), in the launch shape that reaches the most bandwidth on Hopper (one pass
    // of 256-thread blocks, one 16-byte access in flight each: the dram copy ceiling's).
    const kernels::stream_config shape{1, 256, 0, true};
    const auto copy = [&] {
      ROOFLINE_CUDA_CHECK(
          kernels::stream_copy(destination.get(), source.get(), bytes, sms, shape, stream));
    };
    const held_run run = hold(*nvml, stream, time_runs(stream, 1, 1, copy).median_s, copy);
    const double moved = 2.0 * static_cast<double>(bytes); // read and written
    dram_j = r.value = (run.energy_per_call_j - idle_w * run.call_s) / moved;
    r.method = fmt::format("our copy kernel over 1 GiB back to back, {:.3g} TB/s, {}; beyond "
                           "the idle draw, per byte read or written",
                           moved / run.call_s / 1e12, held_text(run));
  });

  const lt_handle lt;
  const device_buffer workspace(lt_workspace_bytes);
  constexpr std::int64_t n = 8192;
  const gemm_shape shape{n, n, n, 1};
  const gemm_types types = types_for(precision::bf16);
  std::unique_ptr<lt_gemm> gemm;
  std::unique_ptr<device_buffer> a, b, c;
  held_run gemm_run;
  const double flops = 2.0 * static_cast<double>(n * n * n);
  attempt("bf16 cuBLASLt 8192³ held at the power limit", ceiling_kind::sustained_flop_rate,
          precision::bf16, [&](ceiling_result &r) {
            const auto elements = static_cast<std::size_t>(n * n);
            a = std::make_unique<device_buffer>(elements * kernels::element_size(types.input));
            b = std::make_unique<device_buffer>(elements * kernels::element_size(types.input));
            c = std::make_unique<device_buffer>(elements * kernels::element_size(types.output));
            ROOFLINE_CUDA_CHECK(
                kernels::fill_random(a->get(), elements, types.input, 11, 1.0f, stream));
            ROOFLINE_CUDA_CHECK(
                kernels::fill_random(b->get(), elements, types.input, 12, 1.0f, stream));
            gemm = std::make_unique<lt_gemm>(lt.get(), shape, precision::bf16, workspace.get(),
                                             workspace.bytes());
            const auto call = [&] { gemm->run(a->get(), b->get(), c->get(), stream); };
            gemm_run = hold(*nvml, stream, time_runs(stream, 1, 1, call).median_s, call);
            r.value = flops / gemm_run.call_s;
            r.method =
                fmt::format("back to back for 2 s, then a 2 s window: {}", held_text(gemm_run));
          });
  attempt("bf16 energy", ceiling_kind::energy_per_flop, precision::bf16, [&](ceiling_result &r) {
    if (!(gemm_run.call_s > 0) || !(idle_w > 0))
      throw error("the bf16 GEMM or the idle power was not measured");
    const double gemm_bytes = 3.0 * static_cast<double>(n * n) * 2; // A, B and C, bf16
    r.value = (gemm_run.energy_per_call_j - idle_w * gemm_run.call_s - gemm_bytes * dram_j) / flops;
    r.method = fmt::format("the held GEMM's energy beyond the idle draw and its own DRAM bytes "
                           "(at the dram energy), per FLOP; {}",
                           held_text(gemm_run));
  });
  return results;
}

} // namespace roofline::cuda::detail
