# Dependencies come from Debian packages (Boost.Hana in libboost-dev, doctest-dev) and from the CUDA
# toolkit (CCCL: Thrust, CUB, libcu++). Nothing is downloaded.
find_package(Boost 1.74 REQUIRED CONFIG COMPONENTS headers)

# CCCL: the toolkit's, newer than Debian's libthrust-dev. Found without enabling CUDA, so that
# host-only builds work with plain g++ or clang.
find_package(CUDAToolkit QUIET)
find_path(CTFX_CCCL_INCLUDE_DIR thrust/version.h
  HINTS ${CUDAToolkit_INCLUDE_DIRS}/cccl ${CUDAToolkit_LIBRARY_ROOT}/include/cccl
        $ENV{CUDA_HOME}/include/cccl /usr/local/cuda/include/cccl
        /usr/local/cuda/targets/x86_64-linux/include/cccl
  NO_DEFAULT_PATH
  DOC "CCCL headers (thrust/, cub/, cuda/std/) from the CUDA toolkit")
if(NOT CTFX_CCCL_INCLUDE_DIR)
  message(FATAL_ERROR "ctfx: CCCL (thrust/version.h) not found. Install the CUDA toolkit, or pass "
                      "-DCTFX_CCCL_INCLUDE_DIR=<toolkit>/include/cccl.")
endif()
message(STATUS "ctfx: CCCL headers in ${CTFX_CCCL_INCLUDE_DIR}")

# The CUDA backend: AUTO enables it when nvcc is found.
set(CTFX_HAVE_CUDA OFF)
if(NOT CTFX_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 90)  # H100/H200
    endif()
    enable_language(CUDA)
    # CMake 3.25 does not know nvcc 13's C++20 dialect flag: pass it ourselves.
    string(APPEND CMAKE_CUDA_FLAGS " -std=c++20")
    set(CTFX_HAVE_CUDA ON)
  elseif(CTFX_CUDA STREQUAL "ON")
    message(FATAL_ERROR "ctfx: CTFX_CUDA=ON but no CUDA compiler was found")
  endif()
endif()
message(STATUS "ctfx: CUDA backend ${CTFX_HAVE_CUDA}")
