// SPDX-License-Identifier: Apache-2.0
// Measures NCCL's all-reduce (bf16 sum, out-of-place) over every GPU of this host, one process,
// for the default sizes (4 KiB to 1 GiB per GPU), each result checked first; prints one line per
// size and writes the table as JSON to OUT.json when given. bench/allreduce_check.py measures the
// same with PyTorch, one process per GPU, for comparison.
//   allreduce_probe [OUT.json]     (NCCL from $ROOFLINE_NCCL_LIBRARY, else the loader's path)
#include "nccl_all_reduce.hpp"

#include "roofline/interconnect.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <exception>
#include <fstream>
#include <iostream>
#include <string>

int main(int argc, char **argv) {
  if (argc > 2) {
    std::fprintf(stderr, "usage: allreduce_probe [OUT.json]\n");
    return 2;
  }
  try {
    const roofline::all_reduce_table table = roofline::cuda::measure_all_reduce(
        roofline::cuda::default_all_reduce_sizes(),
        [](const std::string &line) { std::cerr << line << '\n'; });
    std::printf("# %s, %d GPUs, %s\n# %s\n", table.library.c_str(), table.gpus,
                table.precision.c_str(), table.origin.c_str());
    std::printf("%12s %12s %14s %14s\n", "bytes", "time_us", "algbw_GB/s", "busbw_GB/s");
    for (const roofline::all_reduce_sample &s : table.samples)
      std::printf("%12lld %12.2f %14.2f %14.2f\n", static_cast<long long>(s.bytes), s.time_s * 1e6,
                  roofline::algorithm_bandwidth(s.bytes, s.time_s) * 1e-9,
                  roofline::bus_bandwidth(s.bytes, s.time_s, table.gpus) * 1e-9);
    if (argc == 2) {
      nlohmann::json samples = nlohmann::json::array();
      for (const roofline::all_reduce_sample &s : table.samples)
        samples.push_back({{"bytes", s.bytes}, {"time_s", s.time_s}});
      const nlohmann::json document = {{"gpus", table.gpus},
                                       {"precision", table.precision},
                                       {"library", table.library},
                                       {"origin", table.origin},
                                       {"samples", samples}};
      std::ofstream file(argv[1]);
      file << document.dump(2) << '\n';
      if (!file.flush()) {
        std::fprintf(stderr, "allreduce_probe: error: cannot write %s\n", argv[1]);
        return 1;
      }
    }
  } catch (const std::exception &e) {
    std::fprintf(stderr, "allreduce_probe: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
