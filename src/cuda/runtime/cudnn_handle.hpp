// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <string>

namespace roofline::cuda::detail {

/// cuDNN, loaded at run time (dlopen, never linked: only commands that run a convolution or fused
/// attention need it), and a handle of it bound to one stream. cuDNN is loaded from
/// $ROOFLINE_CUDNN_LIBRARY when set (that file only), else libcudnn.so.9 on the loader's path, in
/// the CUDA toolkit's library directories, or in a pip wheel's nvidia/cudnn/lib (PyTorch's
/// nvidia-cudnn-cu13), as load_library searches.
class cudnn_handle {
public:
  /// Loads cuDNN (once per process) and makes a handle on the current GPU that issues its work on
  /// `stream`. Throws roofline::error when cuDNN cannot be loaded or was built without its header
  /// (the message says why), cuda_error (library "cuDNN") when cudnnCreate fails.
  explicit cudnn_handle(cudaStream_t stream);
  ~cudnn_handle();
  cudnn_handle(const cudnn_handle &) = delete;
  cudnn_handle &operator=(const cudnn_handle &) = delete;

  /// "cuDNN 9.19.0 (/path/libcudnn.so.9)".
  const std::string &description() const;

  struct impl; ///< cudnn_library.hpp: the cudnnHandle_t
  impl &get() const { return *m_impl; }

private:
  std::unique_ptr<impl> m_impl;
};

} // namespace roofline::cuda::detail
