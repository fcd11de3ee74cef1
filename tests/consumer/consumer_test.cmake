# SPDX-License-Identifier: Apache-2.0
# Builds and runs tests/consumer, an outside project, against roofline in one of two ways:
#   cmake -DMODE=find_package -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK_DIR=... [-DEXPECT_MEASURE=ON]
#         -P consumer_test.cmake      installs BUILD_DIR into a scratch prefix and uses the package
#   cmake -DMODE=add_subdirectory -DSOURCE_DIR=... -DWORK_DIR=... -P consumer_test.cmake
#                                     adds SOURCE_DIR to the consumer's build (roofline::core only)
#   cmake -DMODE=pkg_config -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK_DIR=... -DPKG_CONFIG=...
#         -DCXX=... -P consumer_test.cmake
#                                     installs BUILD_DIR and builds tests/consumer/main.cpp with the
#                                     compiler alone, its flags from roofline.pc (no CMake)
# -DPROJECT=examples/embed -DTARGETS=embed builds and runs another outside project of the source
# tree (find_package only) instead.
if(NOT PROJECT)
  set(PROJECT tests/consumer)
endif()
file(REMOVE_RECURSE ${WORK_DIR})
if(MODE STREQUAL "find_package" OR MODE STREQUAL "pkg_config")
  execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix
                  RESULT_VARIABLE failed OUTPUT_QUIET)
  if(failed)
    message(FATAL_ERROR "install failed")
  endif()
endif()
if(MODE STREQUAL "pkg_config")
  file(GLOB_RECURSE pc_files ${WORK_DIR}/prefix/roofline.pc)
  if(NOT pc_files)
    message(FATAL_ERROR "the package installs no roofline.pc")
  endif()
  list(GET pc_files 0 pc_file)
  get_filename_component(pc_dir ${pc_file} DIRECTORY)
  set(ENV{PKG_CONFIG_PATH} "${pc_dir}:$ENV{PKG_CONFIG_PATH}")
  # Plainly, and with --static: the library is static either way, so both must link.
  foreach(static IN ITEMS "" --static)
    execute_process(COMMAND ${PKG_CONFIG} --cflags --libs ${static} roofline
                    OUTPUT_VARIABLE flags OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE failed)
    if(failed)
      message(FATAL_ERROR "pkg-config ${static} roofline failed")
    endif()
    separate_arguments(flags UNIX_COMMAND "${flags}")
    execute_process(COMMAND ${CXX} -std=c++17 ${SOURCE_DIR}/tests/consumer/main.cpp ${flags}
                            -o ${WORK_DIR}/consumer RESULT_VARIABLE failed)
    if(failed)
      message(FATAL_ERROR "compiling the consumer with `pkg-config --cflags --libs ${static} "
                          "roofline` (${flags}) failed")
    endif()
    execute_process(COMMAND ${WORK_DIR}/consumer RESULT_VARIABLE failed)
    if(failed)
      message(FATAL_ERROR "consumer (pkg-config ${static}) ran but did not get the expected result")
    endif()
  endforeach()
  return()
elseif(MODE STREQUAL "find_package")
  set(configure_args -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DCMAKE_BUILD_TYPE=Release
                     -DEXPECT_MEASURE=${EXPECT_MEASURE})
  set(targets consumer)
  if(EXPECT_MEASURE)
    list(APPEND targets measure_consumer)
  endif()
  if(TARGETS)
    set(targets ${TARGETS})
  endif()
elseif(MODE STREQUAL "add_subdirectory")
  # No build type (no optimisation) and no CUDA: the point is the CMake, and the build stays short.
  set(configure_args -DROOFLINE_SOURCE_DIR=${SOURCE_DIR} -DROOFLINE_ENABLE_CUDA=OFF)
  set(targets consumer)
else()
  message(FATAL_ERROR "MODE must be find_package or add_subdirectory, not '${MODE}'")
endif()
if(LAUNCHER) # this build's compiler cache (ccache), for the consumer's compiles too
  list(APPEND configure_args -DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER})
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR}/${PROJECT} -B ${WORK_DIR}/build
                        ${configure_args}
                RESULT_VARIABLE failed)
if(failed)
  message(FATAL_ERROR "configuring the consumer (${MODE}) failed")
endif()
cmake_host_system_information(RESULT cores QUERY NUMBER_OF_LOGICAL_CORES)
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/build --target ${targets} --parallel ${cores}
                RESULT_VARIABLE failed)
if(failed)
  message(FATAL_ERROR "building the consumer (${MODE}) failed")
endif()
foreach(program IN LISTS targets)
  execute_process(COMMAND ${WORK_DIR}/build/${program} RESULT_VARIABLE failed)
  if(failed)
    message(FATAL_ERROR "${program} (${MODE}) ran but did not get the expected result")
  endif()
endforeach()
