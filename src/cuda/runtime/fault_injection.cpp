// SPDX-License-Identifier: Apache-2.0
// TEST-ONLY: ROOFLINE_INJECT_FAULT (fault_injection.hpp).
#include "fault_injection.hpp"

#include "roofline/common/error.hpp"
#include "roofline/cuda/detail/cuda_check.hpp"

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <string>
#include <string_view>

namespace roofline::cuda::detail {

namespace {

constexpr const char *variable = "ROOFLINE_INJECT_FAULT";

struct named_fault {
  std::string_view name;
  injected_fault fault;
};
/// What the variable may name: parsed from here and listed from here in the error.
constexpr named_fault faults[] = {{"cublas", injected_fault::cublas},
                                  {"oom", injected_fault::oom},
                                  {"cupti", injected_fault::cupti},
                                  {"sigint", injected_fault::sigint}};

[[noreturn]] void refuse(const std::string &text, const std::string &why) {
  std::string kinds;
  for (std::size_t i = 0; i < std::size(faults); ++i)
    kinds += (i == 0                       ? ""
              : i + 1 == std::size(faults) ? " or "
                                           : ", ") +
             std::string(faults[i].name);
  throw roofline::error(std::string(variable) + "=`" + text + "` (a test-only hook): " + why +
                        "; expected INDEX:KIND[,INDEX:KIND...], KIND " + kinds);
}

} // namespace

fault_plan fault_plan::from_environment() {
  return parse(std::getenv(variable));
}

fault_plan fault_plan::parse(const char *text) {
  fault_plan plan;
  if (text == nullptr || *text == '\0')
    return plan;
  const std::string all = text;
  for (std::size_t start = 0; start <= all.size();) {
    const std::size_t comma = std::min(all.find(',', start), all.size());
    const std::string entry = all.substr(start, comma - start);
    start = comma + 1;
    const std::size_t colon = entry.find(':');
    const std::string index = entry.substr(0, colon);
    if (colon == std::string::npos || index.empty() || index.size() > 9 ||
        index.find_first_not_of("0123456789") != std::string::npos)
      refuse(all, "`" + entry + "` does not start with an op index and a colon");
    const std::string kind = entry.substr(colon + 1);
    const auto named = std::find_if(std::begin(faults), std::end(faults),
                                    [&](const named_fault &f) { return f.name == kind; });
    if (named == std::end(faults))
      refuse(all, "unknown fault `" + kind + "`");
    plan.m_faults[std::stoul(index)] = named->fault;
  }
  return plan;
}

injected_fault fault_plan::at(std::size_t index) const {
  const auto it = m_faults.find(index);
  return it == m_faults.end() ? injected_fault::none : it->second;
}

void raise_injected(injected_fault fault) {
  switch (fault) {
  case injected_fault::none:
  case injected_fault::sigint: return;
  case injected_fault::cublas:
    check(CUBLAS_STATUS_EXECUTION_FAILED, "the GEMM call (injected by ROOFLINE_INJECT_FAULT)",
          __FILE__, __LINE__);
    return;
  case injected_fault::oom: {
    // A real allocation the GPU cannot hold, so that the runtime's own status comes back.
    std::size_t free_bytes = 0, total_bytes = 0;
    check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo", __FILE__, __LINE__);
    void *data = nullptr;
    const cudaError_t status =
        cudaMalloc(&data, total_bytes > std::numeric_limits<std::size_t>::max() / 4
                              ? std::numeric_limits<std::size_t>::max() / 2
                              : 4 * total_bytes);
    if (status == cudaSuccess) { // cannot happen on a real GPU; say so rather than pass
      cudaFree(data);
      check(cudaErrorMemoryAllocation, "cudaMalloc (injected by ROOFLINE_INJECT_FAULT)", __FILE__,
            __LINE__);
    }
    check(status, "cudaMalloc (injected by ROOFLINE_INJECT_FAULT)", __FILE__, __LINE__);
    return;
  }
  case injected_fault::cupti:
    check(CUPTI_ERROR_UNKNOWN, "a CUPTI call (injected by ROOFLINE_INJECT_FAULT)", __FILE__,
          __LINE__);
    return;
  }
}

} // namespace roofline::cuda::detail
