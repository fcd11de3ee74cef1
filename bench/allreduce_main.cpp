// SPDX-License-Identifier: Apache-2.0
// Measures NCCL's all-reduce (bf16 sum, out-of-place) over every GPU of this host, one process,
// for the default sizes (4 KiB to 1 GiB per GPU), each result checked first; prints one line per
// size and writes the table as JSON to OUT.json when given. By default one thread issues
// back-to-back grouped calls eagerly (what `device --measure` caches); --graph captures them into
// a CUDA graph per GPU and replays them (NCCL's device-time floor), --threads issues eager calls
// from one thread per GPU. bench/allreduce_check.py measures the same with PyTorch, one process
// per GPU, for comparison (bench/allreduce_compare.sh runs every mode).
//   allreduce_probe [--graph | --threads] [OUT.json]   (NCCL from $ROOFLINE_NCCL_LIBRARY, else
//                                                      the loader's path)
#include "roofline/cuda/detail/nccl_all_reduce.hpp"

#include "roofline/model/interconnect.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <exception>
#include <fstream>
#include <iostream>
#include <string>

int main(int argc, char **argv) {
  auto timing = roofline::cuda::all_reduce_timing::eager_one_thread;
  bool timing_given = false;
  const char *out_path = nullptr;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if ((arg == "--graph" || arg == "--threads") && !timing_given) {
      timing = arg == "--graph" ? roofline::cuda::all_reduce_timing::graph_replay
                                : roofline::cuda::all_reduce_timing::eager_thread_per_gpu;
      timing_given = true;
    } else if (arg.empty() || arg[0] == '-' || out_path) {
      std::fprintf(stderr, "usage: allreduce_probe [--graph | --threads] [OUT.json]\n");
      return 2;
    } else {
      out_path = argv[i];
    }
  }
  try {
    const roofline::all_reduce_table table = roofline::cuda::measure_all_reduce(
        roofline::cuda::default_all_reduce_sizes(),
        [](const std::string &line) { std::cerr << line << '\n'; }, timing);
    std::printf("# %s, %d GPUs, %s\n# %s\n", table.library.c_str(), table.gpus,
                table.precision.c_str(), table.origin.c_str());
    std::printf("%12s %12s %14s %14s\n", "bytes", "time_us", "algbw_GB/s", "busbw_GB/s");
    for (const roofline::all_reduce_sample &s : table.samples)
      std::printf("%12lld %12.2f %14.2f %14.2f\n", static_cast<long long>(s.bytes), s.time_s * 1e6,
                  roofline::algorithm_bandwidth(s.bytes, s.time_s) * 1e-9,
                  roofline::bus_bandwidth(s.bytes, s.time_s, table.gpus) * 1e-9);
    if (out_path) {
      nlohmann::json samples = nlohmann::json::array();
      for (const roofline::all_reduce_sample &s : table.samples)
        samples.push_back({{"bytes", s.bytes}, {"time_s", s.time_s}});
      const nlohmann::json document = {{"gpus", table.gpus},
                                       {"precision", table.precision},
                                       {"library", table.library},
                                       {"origin", table.origin},
                                       {"samples", samples}};
      std::ofstream file(out_path);
      file << document.dump(2) << '\n';
      if (!file.flush()) {
        std::fprintf(stderr, "allreduce_probe: error: cannot write %s\n", out_path);
        return 1;
      }
    }
  } catch (const std::exception &e) {
    std::fprintf(stderr, "allreduce_probe: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
