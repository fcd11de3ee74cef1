// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the cache files (tests/fuzz/README.md). The input is read as each kind of cache
// document, the ceilings (parse_ceilings), NCCL's all-reduce table (parse_all_reduce_table) and a
// calibration (parse_calibration); what one accepts is used as an analysis would use it, and
// every time it leads to must be a number. Then the input is put in a scratch cache directory
// as a ceilings file and cached_host_floor() reads it: it never throws, and its floor is a number.
#include "fuzz_support.hpp"

#include "roofline/model/ceilings.hpp"
#include "roofline/model/host_floor.hpp"
#include "roofline/model/interconnect.hpp"
#include "roofline/model/model_fit.hpp"
#include "roofline/model/spec_catalog.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

namespace {

using namespace roofline;

// A GEMM of each kind of floor (a call, a misaligned call's, split-K's launches), a memory-bound
// op (a kernel launch) and an all-reduce (the table).
constexpr const char *probe_network = R"(name: probe
batch: 8
seq_len: 128
layers:
  - {name: proj, type: linear, in: 4096, out: 4096}
  - {name: tiny, type: matmul, m: 64, n: 64, k: 64}
  - {name: odd, type: matmul, m: 64, n: 63, k: 4096}
  - {name: deep, type: matmul, m: 64, n: 64, k: 65536}
  - {name: norm, type: layernorm}
  - {name: reduce, type: all_reduce, gpus: 8, features: 4096}
)";

void expect_number(double value, const char *what) {
  if (std::isfinite(value) && value > 0)
    return;
  std::fprintf(stderr, "accepted cache, yet %s is %g\n", what, value);
  std::abort();
}

void expect_numbers(const host_floor &floor) {
  for (precision p : all_precisions) {
    expect_number(floor.gemm(p, 2), "a GEMM call's host floor");
    expect_number(floor.gemm(p, 1, true), "a fallback call's host floor");
  }
  expect_number(floor.kernel_launch_s, "the kernel launch");
}

/// A scratch cache directory of this process, as ROOFLINE_CACHE_DIR, removed as it ends.
struct scratch_dir {
  std::filesystem::path path = std::filesystem::temp_directory_path() /
                               ("roofline-cache-fuzz-" + std::to_string(::getpid()));
  scratch_dir() {
    std::filesystem::create_directories(path);
    std::filesystem::permissions(path, std::filesystem::perms::owner_all,
                                 std::filesystem::perm_options::replace);
    ::setenv("ROOFLINE_CACHE_DIR", path.c_str(), 1);
  }
  ~scratch_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  scratch_dir(const scratch_dir &) = delete;
  scratch_dir &operator=(const scratch_dir &) = delete;
};

const std::filesystem::path &scratch_cache() {
  static const scratch_dir dir;
  return dir.path;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  static const network probe = parse_network(probe_network, "probe.yaml");
  static const gpu_spec h100 = spec_catalog::builtin().resolve("h100");
  const std::string text(fuzz::text_of(data, size));

  fuzz::answer([&] {
    const measured_ceilings ceilings = parse_ceilings(text, "ceilings-fuzz.json");
    model_options options;
    options.host = measured_host_floor(ceilings);
    expect_numbers(*options.host);
    fuzz::analyse(probe, perf_model(apply_ceilings(h100, ceilings), options));
  });
  fuzz::answer([&] {
    model_options options;
    options.all_reduce = parse_all_reduce_table(text, "all-reduce-fuzz.json");
    for (const std::int64_t bytes : {std::int64_t{1}, std::int64_t{1} << 20, std::int64_t{1} << 40})
      if (const auto time =
              measured_all_reduce_s(bytes, options.all_reduce->gpus, *options.all_reduce))
        expect_number(*time, "an all-reduce's time");
    fuzz::analyse(probe, perf_model(h100, options));
  });
  fuzz::answer([&] {
    const parameter_overrides calibration = parse_calibration(text, "model-fuzz.json");
    model_options options;
    options.parameters = apply(h100.parameters, calibration);
    fuzz::analyse(probe, perf_model(h100, options));
  });

  // Through the directory, as every analysis reads it: a damaged file is a note, never an error.
  const std::filesystem::path file = scratch_cache() / "ceilings-fuzz.json";
  std::ofstream(file, std::ios::binary | std::ios::trunc) << text;
  expect_numbers(cached_host_floor());
  return 0;
}
