# SPDX-License-Identifier: Apache-2.0
# Finds libyaml, the C YAML parser (Debian: libyaml-dev), which ships no CMake package, and defines
# the imported target libyaml::libyaml. Our build uses it, and so does the installed package's
# roofline-config.cmake (installed beside it): the static roofline::core links libyaml.
find_path(libyaml_INCLUDE_DIR yaml.h)
find_library(libyaml_LIBRARY NAMES yaml)
mark_as_advanced(libyaml_INCLUDE_DIR libyaml_LIBRARY)

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(libyaml REQUIRED_VARS libyaml_LIBRARY libyaml_INCLUDE_DIR)

if(libyaml_FOUND AND NOT TARGET libyaml::libyaml)
  add_library(libyaml::libyaml UNKNOWN IMPORTED)
  set_target_properties(libyaml::libyaml PROPERTIES IMPORTED_LOCATION "${libyaml_LIBRARY}"
                        INTERFACE_INCLUDE_DIRECTORIES "${libyaml_INCLUDE_DIR}")
endif()
