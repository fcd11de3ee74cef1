// SPDX-License-Identifier: Apache-2.0
#pragma once
// cuDNN's functions, resolved from the library loaded at run time: for the files that call cuDNN,
// compiled only where CMake found cudnn.h (ROOFLINE_HAVE_CUDNN_HEADER).

#include "cudnn_handle.hpp"
#include "roofline/cuda/detail/cuda_owners.hpp"

#include <cudnn.h> // the types and prototypes only: libcudnn is loaded at run time, never linked

#include <string>

namespace roofline::cuda::detail {

/// The cuDNN functions used here: the legacy convolution API and the backend (graph) API.
struct cudnn_api {
  std::string description;
  decltype(&cudnnGetVersion) get_version = nullptr;
  decltype(&cudnnGetErrorString) get_error_string = nullptr;
  decltype(&cudnnCreate) create = nullptr;
  decltype(&cudnnDestroy) destroy = nullptr;
  decltype(&cudnnSetStream) set_stream = nullptr;
  decltype(&cudnnCreateTensorDescriptor) create_tensor = nullptr;
  decltype(&cudnnDestroyTensorDescriptor) destroy_tensor = nullptr;
  decltype(&cudnnSetTensor4dDescriptor) set_tensor_4d = nullptr;
  decltype(&cudnnCreateFilterDescriptor) create_filter = nullptr;
  decltype(&cudnnDestroyFilterDescriptor) destroy_filter = nullptr;
  decltype(&cudnnSetFilter4dDescriptor) set_filter_4d = nullptr;
  decltype(&cudnnCreateConvolutionDescriptor) create_convolution = nullptr;
  decltype(&cudnnDestroyConvolutionDescriptor) destroy_convolution = nullptr;
  decltype(&cudnnSetConvolution2dDescriptor) set_convolution_2d = nullptr;
  decltype(&cudnnSetConvolutionMathType) set_math_type = nullptr;
  decltype(&cudnnSetConvolutionGroupCount) set_group_count = nullptr;
  decltype(&cudnnGetConvolution2dForwardOutputDim) output_dim = nullptr;
  decltype(&cudnnGetConvolutionForwardAlgorithm_v7) forward_algorithms = nullptr;
  decltype(&cudnnGetConvolutionForwardWorkspaceSize) forward_workspace = nullptr;
  decltype(&cudnnConvolutionForward) forward = nullptr;
  decltype(&cudnnBackendCreateDescriptor) backend_create = nullptr;
  decltype(&cudnnBackendDestroyDescriptor) backend_destroy = nullptr;
  decltype(&cudnnBackendSetAttribute) backend_set = nullptr;
  decltype(&cudnnBackendGetAttribute) backend_get = nullptr;
  decltype(&cudnnBackendFinalize) backend_finalize = nullptr;
  decltype(&cudnnBackendExecute) backend_execute = nullptr;
};

/// cuDNN, loaded on first use (once per process; a failed load is tried again on the next call).
/// Throws roofline::error when it cannot be loaded, is of another major version, or lacks one of
/// the functions.
const cudnn_api &cudnn();

/// cuDNN's statuses go through ROOFLINE_CUDA_CHECK like the rest of the CUDA family (only cuDNN's
/// functions return one, so cuDNN is loaded whenever it is called).
void check(cudnnStatus_t status, const char *expression, const char *file, int line);

struct cudnn_handle::impl {
  cudnnHandle_t handle = nullptr;
};

// The owners of cuDNN's descriptors, as cuda_owners.hpp's own CUDA's objects: each creates its
// descriptor (checked) and destroys it once, through the loaded library.
inline void destroy_tensor(cudnnTensorDescriptor_t d) {
  cudnn().destroy_tensor(d);
}
inline void destroy_filter(cudnnFilterDescriptor_t d) {
  cudnn().destroy_filter(d);
}
inline void destroy_convolution(cudnnConvolutionDescriptor_t d) {
  cudnn().destroy_convolution(d);
}
inline void destroy_backend(cudnnBackendDescriptor_t d) {
  cudnn().backend_destroy(d);
}

class tensor_descriptor : public cuda_owner<cudnnTensorDescriptor_t, destroy_tensor> {
public:
  tensor_descriptor() { ROOFLINE_CUDA_CHECK(cudnn().create_tensor(&m_handle)); }
};

class filter_descriptor : public cuda_owner<cudnnFilterDescriptor_t, destroy_filter> {
public:
  filter_descriptor() { ROOFLINE_CUDA_CHECK(cudnn().create_filter(&m_handle)); }
};

class convolution_descriptor
    : public cuda_owner<cudnnConvolutionDescriptor_t, destroy_convolution> {
public:
  convolution_descriptor() { ROOFLINE_CUDA_CHECK(cudnn().create_convolution(&m_handle)); }
};

/// One descriptor of the backend (graph) API, of `type`.
class backend_descriptor : public cuda_owner<cudnnBackendDescriptor_t, destroy_backend> {
public:
  explicit backend_descriptor(cudnnBackendDescriptorType_t type) {
    ROOFLINE_CUDA_CHECK(cudnn().backend_create(type, &m_handle));
  }
};

} // namespace roofline::cuda::detail
