# cmake -DMODE=<find_package|add_subdirectory|fetchcontent> -DSOURCE_DIR=<ctfx> -DWORK_DIR=<dir>
#       -DCXX=<c++> -DGENERATOR=<gen> [-DHOST_SYSTEM=CPP|OMP] -P run_consumer.cmake
#
# Configures, builds and runs test/consumer in MODE: find_package after an install of ctfx into a
# temporary prefix (and then also a program linked with the package's ctfx::runtime),
# add_subdirectory of the source tree, or FetchContent with SOURCE_DIR (nothing is downloaded). Passes when every step succeeds and the consumer returns 0.
foreach(v MODE SOURCE_DIR WORK_DIR CXX GENERATOR)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "run_consumer: -D${v}=... is required")
  endif()
endforeach()
if(NOT DEFINED HOST_SYSTEM)
  set(HOST_SYSTEM CPP)
endif()

function(step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "consumer (${MODE}): ${what} failed (${rc})")
  endif()
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
# Release without its -O3: the test checks that the package configures, builds, links and runs;
# g++ takes a third of the time at -O0 (ctfx::runtime's file: ~95 s of CPU at -O3).
set(common -G ${GENERATOR} -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS_RELEASE=-O0 -DNDEBUG")
set(args ${common} -DCTFX_CONSUMER_MODE=${MODE})
if(MODE STREQUAL "find_package")
  step("configuring ctfx for install"
       ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/ctfx-build ${common}
       -DCTFX_BUILD_TESTS=OFF -DCTFX_CUDA=OFF -DCTFX_HOST_SYSTEM=${HOST_SYSTEM}
       -DCMAKE_INSTALL_PREFIX=${WORK_DIR}/prefix)
  step("installing ctfx" ${CMAKE_COMMAND} --install ${WORK_DIR}/ctfx-build)
  list(APPEND args -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix)
else()
  list(APPEND args -DCTFX_SOURCE_DIR=${SOURCE_DIR} -DCTFX_CUDA=OFF -DCTFX_HOST_SYSTEM=${HOST_SYSTEM})
endif()
step("configuring the consumer" ${CMAKE_COMMAND} -S ${SOURCE_DIR}/test/consumer -B ${WORK_DIR}/build ${args})
step("building the consumer" ${CMAKE_COMMAND} --build ${WORK_DIR}/build)
step("running the consumer" ${WORK_DIR}/build/consumer)
if(MODE STREQUAL "find_package")
  step("running the consumer linked with ctfx::runtime" ${WORK_DIR}/build/consumer_runtime)
endif()
message(STATUS "consumer (${MODE}): ok")
