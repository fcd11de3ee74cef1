// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/common/error.hpp"

#include <string>

namespace roofline::cuda {

/// A CUDA runtime, cuBLAS or CUPTI call failed. Keeps the library, the raw status and where.
class cuda_error : public roofline::error {
public:
  cuda_error(std::string library, int status, const std::string &message)
      : roofline::error(message), m_library(std::move(library)), m_status(status) {}

  const std::string &library() const noexcept { return m_library; } ///< "CUDA", "cuBLAS", "CUPTI"
  int status() const noexcept { return m_status; }

private:
  std::string m_library;
  int m_status;
};

} // namespace roofline::cuda
