// SPDX-License-Identifier: Apache-2.0
#include "driver_api.hpp"

#include "roofline/cuda/cuda_error.hpp"
#include "roofline/cuda/detail/cuda_check.hpp"

#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include <string>

namespace roofline::cuda::detail {

namespace {

/// The driver functions we call, looked up once through the runtime (driver_api.hpp says why).
struct driver_api {
  PFN_cuGetErrorName_v6000 get_error_name = nullptr;
  PFN_cuDeviceGet_v2000 device_get = nullptr;
  PFN_cuCtxGetCurrent_v4000 ctx_get_current = nullptr;
};

/// `symbol` as of CUDA 12.0: the PFN_*_vNNNN types below are the versions current then.
template <class Function> Function driver_function(const char *symbol) {
  void *function = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  ROOFLINE_CUDA_CHECK(
      cudaGetDriverEntryPointByVersion(symbol, &function, 12000, cudaEnableDefault, &found));
  if (found != cudaDriverEntryPointSuccess || function == nullptr)
    throw cuda_error("CUDA", cudaErrorSymbolNotFound,
                     std::string("the CUDA driver has no ") + symbol);
  return reinterpret_cast<Function>(function);
}

const driver_api &driver() {
  static const driver_api api = [] {
    driver_api a;
    a.get_error_name = driver_function<PFN_cuGetErrorName_v6000>("cuGetErrorName");
    a.device_get = driver_function<PFN_cuDeviceGet_v2000>("cuDeviceGet");
    a.ctx_get_current = driver_function<PFN_cuCtxGetCurrent_v4000>("cuCtxGetCurrent");
    return a;
  }();
  return api;
}

void check_driver(CUresult status, const char *expression, const char *file, int line) {
  if (status == CUDA_SUCCESS)
    return;
  const char *name = nullptr;
  if (driver().get_error_name(status, &name) != CUDA_SUCCESS || name == nullptr)
    name = "(unknown CUDA driver error)";
  throw cuda_error("CUDA", static_cast<int>(status),
                   std::string("CUDA driver error ") + name + " in " + expression + " at " + file +
                       ":" + std::to_string(line));
}

#define ROOFLINE_CU_CHECK(expr) check_driver((expr), #expr, __FILE__, __LINE__)

} // namespace

CUcontext current_context() {
  CUcontext context = nullptr;
  ROOFLINE_CU_CHECK(driver().ctx_get_current(&context));
  return context;
}

CUdevice device_handle(int device) {
  CUdevice handle = 0;
  ROOFLINE_CU_CHECK(driver().device_get(&handle, device));
  return handle;
}

#undef ROOFLINE_CU_CHECK

} // namespace roofline::cuda::detail
