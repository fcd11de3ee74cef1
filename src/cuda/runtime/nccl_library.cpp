// SPDX-License-Identifier: Apache-2.0
#include "nccl_library.hpp"

#include "roofline/common/error.hpp"
#include "roofline/cuda/cuda_error.hpp"
#include "shared_library.hpp"

namespace roofline::cuda::detail {

namespace {

/// What a missing function means.
const char *const needs = "measuring an all-reduce needs NCCL 2.13 or newer";

/// Loads NCCL and resolves what is used.
nccl_api open_nccl() {
  const loaded_library library =
      load_library({"NCCL", "measuring an all-reduce", "ROOFLINE_NCCL_LIBRARY", "libnccl.so.2",
                    "nvidia/nccl/lib"});
  nccl_api api;
  api.path = library.path;
  library.resolve("ncclGetVersion", api.get_version, needs);
  if (api.get_version(&api.version) != ncclSuccess)
    throw error("ncclGetVersion failed in " + api.path);
  library.resolve("ncclGetErrorString", api.get_error_string, needs);
  library.resolve("ncclGetLastError", api.get_last_error, needs);
  library.resolve("ncclCommInitAll", api.comm_init_all, needs);
  library.resolve("ncclCommDestroy", api.comm_destroy, needs);
  library.resolve("ncclCommAbort", api.comm_abort, needs);
  library.resolve("ncclCommGetAsyncError", api.comm_get_async_error, needs);
  library.resolve("ncclGroupStart", api.group_start, needs);
  library.resolve("ncclGroupEnd", api.group_end, needs);
  library.resolve("ncclAllReduce", api.all_reduce, needs);
  return api;
}

} // namespace

const nccl_api &nccl() {
  static const nccl_api api = open_nccl();
  return api;
}

std::string nccl_version_text(int code) {
  const bool wide = code >= 10000;
  const int major = wide ? code / 10000 : code / 1000;
  const int minor = wide ? code / 100 % 100 : code / 100 % 10;
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(code % 100);
}

void check(ncclResult_t status, const char *expression, const char *file, int line) {
  if (status == ncclSuccess)
    return;
  std::string message = std::string("NCCL error ") + nccl().get_error_string(status) + " in " +
                        expression + " at " + file + ":" + std::to_string(line);
  if (const char *last = nccl().get_last_error(nullptr); last && *last)
    message += std::string(": ") + last;
  throw cuda_error("NCCL", status, message);
}

communicators::communicators(int gpus) : m_comms(static_cast<std::size_t>(gpus), nullptr) {
  ROOFLINE_CUDA_CHECK(nccl().comm_init_all(m_comms.data(), gpus, nullptr));
}

communicators::~communicators() {
  const bool failing = std::uncaught_exceptions() > m_uncaught;
  for (ncclComm_t comm : m_comms)
    if (comm)
      (failing ? nccl().comm_abort : nccl().comm_destroy)(comm); // nothing to report to
}

void communicators::check_async_errors() const {
  for (ncclComm_t comm : m_comms) {
    ncclResult_t status = ncclSuccess;
    ROOFLINE_CUDA_CHECK(nccl().comm_get_async_error(comm, &status));
    check(status, "ncclCommGetAsyncError's status", __FILE__, __LINE__);
  }
}

nccl_group::nccl_group() {
  ROOFLINE_CUDA_CHECK(nccl().group_start());
}

nccl_group::~nccl_group() {
  if (m_open)
    nccl().group_end(); // unwinding: the first error is already on its way
}

void nccl_group::end() {
  m_open = false;
  ROOFLINE_CUDA_CHECK(nccl().group_end());
}

} // namespace roofline::cuda::detail
