// SPDX-License-Identifier: Apache-2.0
// Every kernel of kernels/, launched at small sizes in every instance its launcher can pick (each
// element type, unroll and cache hint, aligned and unaligned K, partial tiles, batches): the run
// bench/sanitize.sh puts under compute-sanitizer's memcheck, racecheck, initcheck and synccheck.
// Each case prints "launched KERNEL (N launches traced)", the kernel named as its __global__
// function in kernels/; where CUPTI can trace (not under compute-sanitizer:
// ROOFLINE_KERNELS_UNTRACED=1 turns tracing off), the trace must show that kernel. Every input
// is written before it is read, so that initcheck reports the kernels' own reads only.
#include "gemm_kernels.hpp"
#include "gpu_test_support.hpp"
#include "kernel_trace.hpp"

#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>

using namespace roofline;
using namespace roofline::test;

namespace {

/// A few SMs' worth of blocks for the persistent (grid-stride) kernels: small, and still more
/// than one block per SM.
constexpr int sms = 4;

constexpr element_type all_types[] = {element_type::f64,  element_type::f32,  element_type::f16,
                                      element_type::bf16, element_type::e4m3, element_type::i8,
                                      element_type::i32};

bool traced() {
  const char *off = std::getenv("ROOFLINE_KERNELS_UNTRACED");
  return off == nullptr || std::string(off) != "1";
}

/// Runs `launch` (work on the default stream), checks that it ran, and says so.
void launched(const char *kernel, const std::function<void()> &launch) {
  int launches = 0;
  if (traced()) {
    const cuda::detail::traced_kernels t = cuda::detail::trace_kernels(launch, nullptr);
    launches = t.launches;
    if (!t.names.empty()) {
      bool found = false;
      for (const std::string &name : t.names)
        found = found || name.find(kernel) != std::string::npos;
      CAPTURE(kernel);
      CHECK(found);
    }
  } else {
    launch();
  }
  ROOFLINE_CUDA_CHECK(cudaDeviceSynchronize());
  std::printf("launched %s (%d launches traced)\n", kernel, launches);
  std::fflush(stdout);
}

} // namespace

TEST_CASE("fill_random_kernel and fill_constant_kernel: every element type") {
  const std::size_t count = 4099; // a partial block
  device_buffer data(count * 8);
  launched("fill_random_kernel", [&] {
    for (element_type type : all_types)
      ROOFLINE_CUDA_CHECK(kernels::fill_random(data.get(), count, type, 7, 1.0f, nullptr));
  });
  launched("fill_constant_kernel", [&] {
    for (element_type type : all_types)
      ROOFLINE_CUDA_CHECK(kernels::fill_constant(data.get(), count, type, 3.0, nullptr));
  });
}

TEST_CASE("read_kernel, write_kernel, copy_kernel and l2_read_kernel: every launch shape") {
  const std::size_t bytes = (std::size_t{1} << 20) + 16 * 37; // not a multiple of any tile
  device_buffer source(bytes), destination(bytes), sink(sizeof(unsigned));
  ROOFLINE_CUDA_CHECK(
      kernels::fill_random(source.get(), bytes / 4, element_type::f32, 1, 1.0f, nullptr));
  ROOFLINE_CUDA_CHECK(cudaMemset(sink.get(), 0, sink.bytes()));
  std::size_t count = 0;
  const kernels::stream_config *configs = kernels::stream_configs(&count);
  launched("write_kernel", [&] {
    for (std::size_t c = 0; c < count; ++c)
      ROOFLINE_CUDA_CHECK(
          kernels::stream_write(destination.get(), bytes, sms, configs[c], nullptr));
  });
  launched("read_kernel", [&] {
    for (std::size_t c = 0; c < count; ++c)
      ROOFLINE_CUDA_CHECK(
          kernels::stream_read(source.get(), bytes, sink.as<unsigned>(), sms, configs[c], nullptr));
  });
  launched("copy_kernel", [&] {
    for (std::size_t c = 0; c < count; ++c)
      ROOFLINE_CUDA_CHECK(
          kernels::stream_copy(destination.get(), source.get(), bytes, sms, configs[c], nullptr));
  });
  launched("l2_read_kernel", [&] {
    for (std::size_t c = 0; c < count; ++c)
      if (configs[c].blocks_per_sm > 0) // a persistent grid only: every block loops the passes
        ROOFLINE_CUDA_CHECK(kernels::l2_read(source.get(), bytes, 2, sink.as<unsigned>(), sms,
                                             configs[c], nullptr));
  });
  std::vector<unsigned char> expected(bytes), got(bytes);
  ROOFLINE_CUDA_CHECK(cudaMemcpy(expected.data(), source.get(), bytes, cudaMemcpyDeviceToHost));
  ROOFLINE_CUDA_CHECK(cudaMemcpy(got.data(), destination.get(), bytes, cudaMemcpyDeviceToHost));
  CHECK(got == expected);
}

TEST_CASE("fma_kernel, mma_kernel and empty: every type") {
  device_buffer seeds(1024 * 8), sink(kernels::peak_sink_elements(sms) * 8);
  ROOFLINE_CUDA_CHECK(kernels::fill_random(seeds.get(), 1024, element_type::f64, 2, 1.0f, nullptr));
  double flops = 0;
  launched("fma_kernel", [&] {
    ROOFLINE_CUDA_CHECK(
        kernels::fma_peak_f32(seeds.as<float>(), sink.as<float>(), sms, 4, &flops, nullptr));
    ROOFLINE_CUDA_CHECK(
        kernels::fma_peak_f64(seeds.as<double>(), sink.as<double>(), sms, 4, &flops, nullptr));
  });
  launched("mma_kernel", [&] {
    for (element_type type : {element_type::f16, element_type::bf16, element_type::f32,
                              element_type::e4m3, element_type::i8})
      ROOFLINE_CUDA_CHECK(
          kernels::mma_peak(type, seeds.get(), sink.as<float>(), sms, 2, &flops, nullptr));
  });
  launched("empty", [&] { ROOFLINE_CUDA_CHECK(kernels::empty_kernel(nullptr)); });
}

TEST_CASE("gemm_naive_kernel, gemm_tiled_kernel and gemm_tensorcore_kernel: every type, aligned "
          "and unaligned K, partial tiles, batches") {
  struct shape {
    std::int64_t m, n, k, batch_count;
  };
  // K = 1 and 65: the unaligned paths; 144: the vector paths (a multiple of 8); 1100 rows: more
  // tile rows than one L2 group of the tensor-core kernel.
  const shape shapes[] = {{1, 1, 1, 1}, {17, 33, 65, 1}, {96, 80, 144, 3}, {1100, 72, 64, 1}};
  const std::pair<kernels::gemm_engine, const char *> engines[] = {
      {kernels::gemm_engine::naive, "gemm_naive_kernel"},
      {kernels::gemm_engine::tiled, "gemm_tiled_kernel"},
      {kernels::gemm_engine::tensorcore, "gemm_tensorcore_kernel"}};
  for (const auto &[engine, kernel] : engines)
    launched(kernel, [&, engine = engine] {
      for (const shape &s : shapes)
        for (element_type type :
             {element_type::f64, element_type::f32, element_type::f16, element_type::bf16}) {
          if (!kernels::gemm_engine_supports(engine, type))
            continue;
          const std::size_t size = kernels::element_size(type);
          const auto count = [&](std::int64_t x, std::int64_t y) {
            return static_cast<std::size_t>(x * y * s.batch_count);
          };
          device_buffer a(count(s.m, s.k) * size), b(count(s.n, s.k) * size),
              c(count(s.m, s.n) * size);
          ROOFLINE_CUDA_CHECK(
              kernels::fill_random(a.get(), count(s.m, s.k), type, 3, 1.0f, nullptr));
          ROOFLINE_CUDA_CHECK(
              kernels::fill_random(b.get(), count(s.n, s.k), type, 4, 1.0f, nullptr));
          ROOFLINE_CUDA_CHECK(kernels::gemm(engine, type, a.get(), b.get(), c.get(), s.m, s.n, s.k,
                                            s.batch_count, nullptr));
          ROOFLINE_CUDA_CHECK(cudaDeviceSynchronize()); // before the buffers are freed
        }
    });
}
