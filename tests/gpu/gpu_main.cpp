// SPDX-License-Identifier: Apache-2.0
// doctest's skip() decorators are evaluated before main, so they cannot probe for a GPU: this main
// does, and returns 77 (ctest's SKIP_RETURN_CODE) when there is none.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <cstdio>

int main(int argc, char **argv) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::puts("no GPU found: GPU tests skipped");
    return 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
