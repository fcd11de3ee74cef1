// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "roofline/common/error.hpp"

#include <string>
#include <vector>

namespace roofline::cuda::detail {

/// Where to look for a library that is loaded at run time (dlopen) rather than linked, so that
/// only the commands that use it need it (NCCL, cuDNN).
struct library_search {
  std::string library;         ///< how messages name it: "NCCL", "cuDNN"
  std::string needed_for;      ///< "measuring an all-reduce"
  std::string environment;     ///< the variable that names the file to load instead of searching
  std::string file_name;       ///< "libnccl.so.2": searched by the loader, then in the directories
  std::string wheel_directory; ///< its pip wheel's directory in site-packages: "nvidia/nccl/lib"
};

/// A library loaded for good: never closed (NCCL and cuDNN keep threads and thread-local state
/// that unloading would pull from under them).
struct loaded_library {
  void *handle = nullptr;
  std::string path; ///< where the loader found it

  /// The address of `name`; throws roofline::error naming the library and `why` when it lacks it.
  void *symbol(const char *name, const std::string &why) const;

  /// `function` set to `name`'s address, as symbol() finds it.
  template <class Function>
  void resolve(const char *name, Function &function, const std::string &why) const {
    function = reinterpret_cast<Function>(symbol(name, why));
  }
};

/// Loads `search`'s library: the file $environment names when set (that one or none: falling
/// back would measure another library), else the first that loads of file_name on the loader's
/// path (LD_LIBRARY_PATH, the cache), in the CUDA toolkit's library directories this was built
/// with, and in the wheel directory under each Python site-packages or dist-packages directory
/// found (system, /usr/local, the user's, $VIRTUAL_ENV's, $CONDA_PREFIX's). Throws roofline::error
/// that names every file tried and why each failed.
loaded_library load_library(const library_search &search);

/// The candidate files load_library tries after the loader's own search, in order.
std::vector<std::string> library_candidates(const library_search &search);

} // namespace roofline::cuda::detail
