// SPDX-License-Identifier: Apache-2.0
#include "shared_library.hpp"

#include <dlfcn.h>
#include <glob.h>
#include <link.h>

#include <algorithm>
#include <cstdlib>

namespace roofline::cuda::detail {

namespace {

std::string joined(const std::vector<std::string> &parts, const char *separator) {
  std::string text;
  for (const std::string &part : parts)
    text += (text.empty() ? "" : separator) + part;
  return text;
}

/// The files matching a glob(3) pattern, sorted; none when nothing matches.
std::vector<std::string> matches(const std::string &pattern) {
  glob_t found{};
  std::vector<std::string> files;
  if (glob(pattern.c_str(), 0, nullptr, &found) == 0)
    for (std::size_t i = 0; i < found.gl_pathc; ++i)
      files.emplace_back(found.gl_pathv[i]);
  globfree(&found);
  return files;
}

/// Python's package directories where pip puts wheels (PyTorch's nvidia-* wheels among them).
std::vector<std::string> python_package_patterns() {
  std::vector<std::string> prefixes{"/usr/local/lib", "/usr/lib", "/opt/conda/lib"};
  for (const char *variable : {"VIRTUAL_ENV", "CONDA_PREFIX"})
    if (const char *prefix = std::getenv(variable); prefix && *prefix)
      prefixes.insert(prefixes.begin(), std::string(prefix) + "/lib");
  if (const char *home = std::getenv("HOME"); home && *home)
    prefixes.push_back(std::string(home) + "/.local/lib");
  std::vector<std::string> patterns;
  for (const std::string &prefix : prefixes)
    for (const char *packages : {"site-packages", "dist-packages"})
      patterns.push_back(prefix + "/python3*/" + packages);
  patterns.emplace_back("/usr/lib/python3/dist-packages"); // Debian's and Ubuntu's own
  return patterns;
}

} // namespace

void *loaded_library::symbol(const char *name, const std::string &why) const {
  void *address = dlsym(handle, name);
  if (!address)
    throw error(path + " has no " + name + ": " + why);
  return address;
}

std::vector<std::string> library_candidates(const library_search &search) {
  std::vector<std::string> files;
  // The toolkit's library directories this was built with (ROOFLINE_CUDA_LIBRARY_DIRS,
  // ':'-separated, from CMake): a toolkit assembled from pip wheels keeps its libraries there.
  const std::string directories = ROOFLINE_CUDA_LIBRARY_DIRS;
  std::size_t begin = 0;
  while (begin <= directories.size()) {
    const std::size_t end = std::min(directories.find(':', begin), directories.size());
    if (end > begin)
      files.push_back(directories.substr(begin, end - begin) + "/" + search.file_name);
    begin = end + 1;
  }
  if (!search.wheel_directory.empty())
    for (const std::string &pattern : python_package_patterns())
      for (const std::string &packages : matches(pattern)) {
        const std::string file = packages + "/" + search.wheel_directory + "/" + search.file_name;
        if (std::find(files.begin(), files.end(), file) == files.end())
          files.push_back(file);
      }
  return files;
}

loaded_library load_library(const library_search &search) {
  std::vector<std::string> tried;
  const auto open = [&tried](const std::string &file) -> void * {
    dlerror();
    void *handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      // dlerror names the file it failed on: ours, or a library ours needs.
      const char *reason = dlerror();
      const std::string text = reason ? reason : "unknown dlopen error";
      tried.push_back(text.rfind(file, 0) == 0 ? text : file + ": " + text);
    }
    return handle;
  };
  loaded_library library;
  if (const char *chosen = std::getenv(search.environment.c_str()); chosen && *chosen) {
    library.path = chosen;
    library.handle = open(library.path);
    if (!library.handle)
      throw error("cannot load " + search.library + " from " + search.environment + ": " +
                  tried.front());
  } else {
    std::vector<std::string> candidates{search.file_name}; // the loader's path, LD_LIBRARY_PATH
    for (std::string &candidate : library_candidates(search))
      candidates.push_back(std::move(candidate));
    for (const std::string &candidate : candidates)
      if ((library.handle = open(candidate))) {
        library.path = candidate;
        break;
      }
    if (!library.handle) {
      // A wheel directory that does not exist says little: only the files that exist are named
      // beyond the loader's own search.
      std::vector<std::string> reasons{tried.front()};
      for (std::size_t i = 1; i < tried.size(); ++i)
        if (tried[i].find("No such file") == std::string::npos)
          reasons.push_back(tried[i]);
      const std::size_t absent = tried.size() - reasons.size();
      throw error(
          "cannot load " + search.library + ", which " + search.needed_for + " needs; tried " +
          joined(reasons, "; ") +
          (absent > 0 ? "; " + std::to_string(absent) + " more places hold none" : "") + ". Set " +
          search.environment + " to a " + search.file_name +
          (search.wheel_directory.empty()
               ? std::string()
               : " (e.g. a pip wheel's " + search.wheel_directory + "/" + search.file_name + ")"));
    }
  }
  link_map *map = nullptr;
  if (dlinfo(library.handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && *map->l_name)
    library.path = map->l_name; // where the loader found it
  return library;
}

} // namespace roofline::cuda::detail
