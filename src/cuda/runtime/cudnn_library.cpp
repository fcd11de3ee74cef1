// SPDX-License-Identifier: Apache-2.0
#include "cudnn_handle.hpp"

#include "roofline/common/error.hpp"

#if ROOFLINE_HAVE_CUDNN_HEADER
#include "cudnn_library.hpp"
#include "roofline/cuda/cuda_error.hpp"
#include "roofline/cuda/detail/cuda_check.hpp"
#include "shared_library.hpp"
#endif

namespace roofline::cuda::detail {

#if !ROOFLINE_HAVE_CUDNN_HEADER

// Built where CMake found no cudnn.h: convolutions run as their implicit GEMMs, fused attention is
// skipped, and both say why.
struct cudnn_handle::impl {};

cudnn_handle::cudnn_handle(cudaStream_t) {
  throw error("this roofline-advise was built without cuDNN's header (cudnn.h)");
}
cudnn_handle::~cudnn_handle() = default;
const std::string &cudnn_handle::description() const {
  static const std::string none = "cuDNN (not built)";
  return none;
}

#else

namespace {

/// What a missing function means.
const char *const needs =
    "running a convolution or attention needs cuDNN 9 (its legacy and graph APIs)";

cudnn_api open_cudnn() {
  const loaded_library library = load_library(
      {"cuDNN", "running a convolution or fused attention through cuDNN", "ROOFLINE_CUDNN_LIBRARY",
       "libcudnn.so." + std::to_string(CUDNN_MAJOR), "nvidia/cudnn/lib"});
  cudnn_api api;
  library.resolve("cudnnGetVersion", api.get_version, needs);
  const std::size_t version = api.get_version();
  // A cuDNN of another major version has other structures behind the same names.
  if (version / 10000 != CUDNN_MAJOR)
    throw error(library.path + " is cuDNN " + std::to_string(version) + ", built against " +
                std::to_string(CUDNN_MAJOR) + ".x");
  api.description = "cuDNN " + std::to_string(version / 10000) + "." +
                    std::to_string(version / 100 % 100) + "." + std::to_string(version % 100) +
                    " (" + library.path + ")";
  library.resolve("cudnnGetErrorString", api.get_error_string, needs);
  library.resolve("cudnnCreate", api.create, needs);
  library.resolve("cudnnDestroy", api.destroy, needs);
  library.resolve("cudnnSetStream", api.set_stream, needs);
  library.resolve("cudnnCreateTensorDescriptor", api.create_tensor, needs);
  library.resolve("cudnnDestroyTensorDescriptor", api.destroy_tensor, needs);
  library.resolve("cudnnSetTensor4dDescriptor", api.set_tensor_4d, needs);
  library.resolve("cudnnCreateFilterDescriptor", api.create_filter, needs);
  library.resolve("cudnnDestroyFilterDescriptor", api.destroy_filter, needs);
  library.resolve("cudnnSetFilter4dDescriptor", api.set_filter_4d, needs);
  library.resolve("cudnnCreateConvolutionDescriptor", api.create_convolution, needs);
  library.resolve("cudnnDestroyConvolutionDescriptor", api.destroy_convolution, needs);
  library.resolve("cudnnSetConvolution2dDescriptor", api.set_convolution_2d, needs);
  library.resolve("cudnnSetConvolutionMathType", api.set_math_type, needs);
  library.resolve("cudnnSetConvolutionGroupCount", api.set_group_count, needs);
  library.resolve("cudnnGetConvolution2dForwardOutputDim", api.output_dim, needs);
  library.resolve("cudnnGetConvolutionForwardAlgorithm_v7", api.forward_algorithms, needs);
  library.resolve("cudnnGetConvolutionForwardWorkspaceSize", api.forward_workspace, needs);
  library.resolve("cudnnConvolutionForward", api.forward, needs);
  library.resolve("cudnnBackendCreateDescriptor", api.backend_create, needs);
  library.resolve("cudnnBackendDestroyDescriptor", api.backend_destroy, needs);
  library.resolve("cudnnBackendSetAttribute", api.backend_set, needs);
  library.resolve("cudnnBackendGetAttribute", api.backend_get, needs);
  library.resolve("cudnnBackendFinalize", api.backend_finalize, needs);
  library.resolve("cudnnBackendExecute", api.backend_execute, needs);
  return api;
}

} // namespace

const cudnn_api &cudnn() {
  static const cudnn_api api = open_cudnn();
  return api;
}

void check(cudnnStatus_t status, const char *expression, const char *file, int line) {
  if (status != CUDNN_STATUS_SUCCESS)
    throw cuda_error("cuDNN", status,
                     std::string("cuDNN error ") + cudnn().get_error_string(status) + " in " +
                         expression + " at " + file + ":" + std::to_string(line));
}

cudnn_handle::cudnn_handle(cudaStream_t stream) : m_impl(std::make_unique<impl>()) {
  const cudnn_api &api = cudnn();
  ROOFLINE_CUDA_CHECK(api.create(&m_impl->handle));
  try {
    ROOFLINE_CUDA_CHECK(api.set_stream(m_impl->handle, stream));
  } catch (...) {
    api.destroy(m_impl->handle);
    throw;
  }
}

cudnn_handle::~cudnn_handle() {
  if (m_impl && m_impl->handle)
    cudnn().destroy(m_impl->handle); // in a destructor: nothing to report to
}

const std::string &cudnn_handle::description() const {
  return cudnn().description;
}

#endif

} // namespace roofline::cuda::detail
