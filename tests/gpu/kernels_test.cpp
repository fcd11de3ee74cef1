// SPDX-License-Identifier: Apache-2.0
#include "gpu_test_support.hpp"

#include <doctest/doctest.h>

#include <algorithm>

using namespace roofline;
using namespace roofline::test;

TEST_CASE("fill_random draws distinct non-zero values in range, reproducibly") {
  const std::size_t count = 1 << 16;
  device_buffer a(count * 4), b(count * 4);
  ROOFLINE_CUDA_CHECK(kernels::fill_random(a.get(), count, element_type::f32, 42, 2.0f, nullptr));
  ROOFLINE_CUDA_CHECK(kernels::fill_random(b.get(), count, element_type::f32, 42, 2.0f, nullptr));
  const auto x = to_host(a, count, element_type::f32);
  const auto y = to_host(b, count, element_type::f32);
  CHECK(x == y);
  CHECK(std::all_of(x.begin(), x.end(), [](double v) { return v >= -2 && v <= 2; }));
  const auto zeros = std::count(x.begin(), x.end(), 0.0);
  CHECK(zeros < 10);
  std::vector<double> sorted = x;
  std::sort(sorted.begin(), sorted.end());
  CHECK(std::unique(sorted.begin(), sorted.end()) - sorted.begin() >
        static_cast<long>(count * 9 / 10));
}

TEST_CASE("every launch shape of the copy and write kernels touches every element exactly") {
  int sms = 0;
  ROOFLINE_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const std::size_t bytes = (std::size_t{64} << 20) + 16 * 37; // not a multiple of any tile
  device_buffer source(bytes), destination(bytes);
  ROOFLINE_CUDA_CHECK(
      kernels::fill_random(source.get(), bytes / 4, element_type::f32, 7, 1.0f, nullptr));
  std::vector<unsigned char> expected(bytes), got(bytes);
  ROOFLINE_CUDA_CHECK(cudaMemcpy(expected.data(), source.get(), bytes, cudaMemcpyDeviceToHost));
  std::size_t count = 0;
  const kernels::stream_config *configs = kernels::stream_configs(&count);
  for (std::size_t c = 0; c < count; ++c) {
    CAPTURE(c);
    ROOFLINE_CUDA_CHECK(
        kernels::fill_constant(destination.get(), bytes / 4, element_type::f32, NAN, nullptr));
    ROOFLINE_CUDA_CHECK(
        kernels::stream_copy(destination.get(), source.get(), bytes, sms, configs[c], nullptr));
    ROOFLINE_CUDA_CHECK(cudaMemcpy(got.data(), destination.get(), bytes, cudaMemcpyDeviceToHost));
    CHECK(got == expected);

    ROOFLINE_CUDA_CHECK(
        kernels::fill_constant(destination.get(), bytes / 4, element_type::f32, NAN, nullptr));
    ROOFLINE_CUDA_CHECK(kernels::stream_write(destination.get(), bytes, sms, configs[c], nullptr));
    const auto written = to_host(destination, bytes / 4, element_type::i32);
    bool all = true;
    for (std::size_t i = 0; i < written.size(); ++i) // int4 j holds (j, j^1, j^2, j^3)
      all = all && static_cast<std::int64_t>(written[i]) ==
                       (static_cast<std::int32_t>(i / 4) ^ static_cast<std::int32_t>(i % 4));
    CHECK(all);
  }
}

TEST_CASE("the read, L2 and peak kernels run on random data and report their work") {
  int sms = 0;
  ROOFLINE_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  device_buffer data(1 << 24), sink(kernels::peak_sink_elements(sms) * sizeof(double)), seeds(8192);
  ROOFLINE_CUDA_CHECK(
      kernels::fill_random(data.get(), (1 << 24) / 4, element_type::f32, 1, 1.0f, nullptr));
  ROOFLINE_CUDA_CHECK(kernels::fill_random(seeds.get(), 1024, element_type::f64, 2, 1.0f, nullptr));
  const kernels::stream_config config;
  CHECK(kernels::stream_read(data.get(), 1 << 24, sink.as<unsigned>(), sms, config, nullptr) ==
        cudaSuccess);
  CHECK(kernels::l2_read(data.get(), 1 << 22, 3, sink.as<unsigned>(), sms, config, nullptr) ==
        cudaSuccess);
  CHECK(kernels::stream_read(data.get(), 15, sink.as<unsigned>(), sms, config, nullptr) ==
        cudaErrorInvalidValue);
  double flops = 0;
  CHECK(kernels::fma_peak_f64(seeds.as<double>(), sink.as<double>(), sms, 10, &flops, nullptr) ==
        cudaSuccess);
  CHECK(flops ==
        doctest::Approx(2.0 * 8 * 10 * static_cast<double>(kernels::peak_sink_elements(sms))));
  ROOFLINE_CUDA_CHECK(cudaDeviceSynchronize());
  const auto sums = to_host(sink, kernels::peak_sink_elements(sms), element_type::f64);
  CHECK(std::all_of(sums.begin(), sums.end(), [](double v) { return std::isfinite(v) && v != 0; }));
  for (element_type type :
       {element_type::f16, element_type::bf16, element_type::f32, element_type::i8}) {
    CAPTURE(static_cast<int>(type));
    CHECK(kernels::mma_peak(type, seeds.get(), sink.as<float>(), sms, 4, &flops, nullptr) ==
          cudaSuccess);
    CHECK(flops > 0);
  }
  ROOFLINE_CUDA_CHECK(cudaDeviceSynchronize());
}
