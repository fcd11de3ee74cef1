// SPDX-License-Identifier: Apache-2.0
#pragma once
// NCCL, loaded at run time (dlopen, never linked: only measuring an all-reduce needs it), and the
// owners of what it makes: the communicators of a clique and a group call.

#include "roofline/cuda/detail/cuda_check.hpp"

#include <nccl.h> // the types and prototypes only: libnccl is loaded at run time, never linked

#include <exception>
#include <string>
#include <vector>

namespace roofline::cuda::detail {

/// The NCCL functions used here, resolved from the library loaded.
struct nccl_api {
  std::string path;
  int version = 0; ///< as NCCL_VERSION_CODE
  decltype(&ncclGetVersion) get_version = nullptr;
  decltype(&ncclGetErrorString) get_error_string = nullptr;
  decltype(&ncclGetLastError) get_last_error = nullptr;
  decltype(&ncclCommInitAll) comm_init_all = nullptr;
  decltype(&ncclCommDestroy) comm_destroy = nullptr;
  decltype(&ncclCommAbort) comm_abort = nullptr;
  decltype(&ncclCommGetAsyncError) comm_get_async_error = nullptr;
  decltype(&ncclGroupStart) group_start = nullptr;
  decltype(&ncclGroupEnd) group_end = nullptr;
  decltype(&ncclAllReduce) all_reduce = nullptr;
};

/// NCCL, loaded on first use (once per process; a failed load is tried again on the next call):
/// from $ROOFLINE_NCCL_LIBRARY when set, else libnccl.so.2 as load_library searches. Throws
/// roofline::error when it cannot be loaded or lacks a function (NCCL 2.13 or newer is needed).
const nccl_api &nccl();

/// "2.28.9" from a version code: major·10000 + minor·100 + patch from 2.9 on, major·1000 +
/// minor·100 + patch before (nccl.h's NCCL_VERSION).
std::string nccl_version_text(int code);

/// NCCL's statuses go through ROOFLINE_CUDA_CHECK like the rest of the CUDA family (only NCCL's
/// functions return one, so NCCL is loaded whenever it is called): cuda_error (library "NCCL")
/// with NCCL's last error message.
void check(ncclResult_t status, const char *expression, const char *file, int line);

/// One communicator per GPU (ncclCommInitAll). Destroyed when done; aborted when an exception
/// unwinds past them, since an operation that failed may never finish and a destroy would wait.
class communicators {
public:
  /// Throws cuda_error.
  explicit communicators(int gpus);
  ~communicators();
  communicators(const communicators &) = delete;
  communicators &operator=(const communicators &) = delete;

  ncclComm_t operator[](std::size_t gpu) const { return m_comms[gpu]; }

  /// Throws cuda_error when a communicator has met an error in the background.
  void check_async_errors() const;

private:
  std::vector<ncclComm_t> m_comms;
  int m_uncaught = std::uncaught_exceptions();
};

/// ncclGroupStart … ncclGroupEnd, closed on every path: a call that fails inside a group leaves
/// it open, and this thread's next NCCL calls would join it.
class nccl_group {
public:
  /// Throws cuda_error.
  nccl_group();
  ~nccl_group();
  nccl_group(const nccl_group &) = delete;
  nccl_group &operator=(const nccl_group &) = delete;

  /// Closes the group. Throws cuda_error.
  void end();

private:
  bool m_open = true;
};

} // namespace roofline::cuda::detail
