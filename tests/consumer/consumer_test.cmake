# SPDX-License-Identifier: Apache-2.0
# Builds and runs tests/consumer, an outside project, against roofline in one of two ways:
#   cmake -DMODE=find_package -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK_DIR=... [-DEXPECT_MEASURE=ON]
#         -P consumer_test.cmake      installs BUILD_DIR into a scratch prefix and uses the package
#   cmake -DMODE=add_subdirectory -DSOURCE_DIR=... -DWORK_DIR=... -P consumer_test.cmake
#                                     adds SOURCE_DIR to the consumer's build (roofline::core only)
# -DPROJECT=examples/embed -DTARGETS=embed builds and runs another outside project of the source
# tree (find_package only) instead.
if(NOT PROJECT)
  set(PROJECT tests/consumer)
endif()
file(REMOVE_RECURSE ${WORK_DIR})
if(MODE STREQUAL "find_package")
  execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix
                  RESULT_VARIABLE failed OUTPUT_QUIET)
  if(failed)
    message(FATAL_ERROR "install failed")
  endif()
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
