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

# The CUDA backend: AUTO enables it when nvcc is found. The library itself is header-only and needs
# no language enabled: CUDA is only compiled here for ctfx's own tests, so AUTO stays off when ctfx
# is a subproject that does not build its tests (a consumer's add_subdirectory or FetchContent).
set(CTFX_HAVE_CUDA OFF)
set(CTFX_CUDA_NO_GPU OFF)  # set below where nvcc is found and no GPU is visible
if(CTFX_CUDA STREQUAL "ON" OR (CTFX_CUDA STREQUAL "AUTO" AND CTFX_BUILD_TESTS))
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      # H100/H200: machine code for sm_90 and PTX. On a machine without a GPU, where the CUDA tests
      # can be compiled but not run, PTX only (90-virtual): every phase but ptxas, the assembler,
      # which costs ~90 s per test file (a GPU's driver would compile the PTX when it loads it).
      execute_process(COMMAND nvidia-smi -L RESULT_VARIABLE _ctfx_smi OUTPUT_QUIET ERROR_QUIET)
      if(_ctfx_smi EQUAL 0)
        set(CMAKE_CUDA_ARCHITECTURES 90)
      else()
        set(CMAKE_CUDA_ARCHITECTURES 90-virtual)
        set(CTFX_CUDA_NO_GPU ON)
        message(STATUS "ctfx: no GPU visible (nvidia-smi): CUDA code compiled to PTX only (CMAKE_CUDA_ARCHITECTURES=90-virtual), its host code at -O0")
      endif()
    endif()
    enable_language(CUDA)
    # Without a GPU the CUDA tests' host code only finds no device and exits 77 (skipped): it is
    # compiled at -O0 (nvcc's -O is the host compiler's; device code keeps its optimization, whose
    # PTX the tests read). test/cuda/matmul_cuda.cu: 101 s of nvcc CPU against 188.
    if(CTFX_CUDA_NO_GPU)
      foreach(cfg RELEASE RELWITHDEBINFO MINSIZEREL)
        string(REGEX REPLACE "(^| )-O[0-9s]( |$)" " " CMAKE_CUDA_FLAGS_${cfg} "${CMAKE_CUDA_FLAGS_${cfg}}")
      endforeach()
    endif()
    # CMake 3.25 does not know nvcc's C++20 dialect flag (nvcc >= 12 has -std=c++20): teach it, so
    # that CMAKE_CUDA_STANDARD 20 works.
    if(NOT DEFINED CMAKE_CUDA20_STANDARD_COMPILE_OPTION AND CMAKE_CUDA_COMPILER_ID STREQUAL "NVIDIA"
       AND CMAKE_CUDA_COMPILER_VERSION VERSION_GREATER_EQUAL 12.0)
      set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
      set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
      list(APPEND CMAKE_CUDA_COMPILE_FEATURES cuda_std_20)
    endif()
    if(NOT DEFINED CMAKE_CUDA_STANDARD)
      set(CMAKE_CUDA_STANDARD 20)
    endif()
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    set(CMAKE_CUDA_EXTENSIONS OFF)
    set(CTFX_HAVE_CUDA ON)
  elseif(CTFX_CUDA STREQUAL "ON")
    message(FATAL_ERROR "ctfx: CTFX_CUDA=ON but no CUDA compiler (nvcc) was found")
  endif()
elseif(NOT CTFX_CUDA MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "ctfx: CTFX_CUDA must be AUTO, ON or OFF (is '${CTFX_CUDA}')")
endif()
message(STATUS "ctfx: CUDA tests ${CTFX_HAVE_CUDA} (CTFX_CUDA=${CTFX_CUDA})")

# The host backend's Thrust system.
if(NOT CTFX_HOST_SYSTEM MATCHES "^(CPP|OMP)$")
  message(FATAL_ERROR "ctfx: CTFX_HOST_SYSTEM must be CPP or OMP (is '${CTFX_HOST_SYSTEM}')")
endif()
if(CTFX_HOST_SYSTEM STREQUAL "OMP")
  find_package(OpenMP REQUIRED COMPONENTS CXX)
endif()
message(STATUS "ctfx: host backend on THRUST_DEVICE_SYSTEM_${CTFX_HOST_SYSTEM}")

# MPI (Debian's Open MPI: libopenmpi-dev openmpi-bin) and NCCL (the CUDA toolkit's), for
# ctfx/comm/mpi.hpp and ctfx/comm/nccl.hpp: AUTO uses what is found, ON requires it, OFF skips it.
set(CTFX_HAVE_MPI OFF)
if(NOT CTFX_MPI MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "ctfx: CTFX_MPI must be AUTO, ON or OFF (is '${CTFX_MPI}')")
endif()
if(NOT CTFX_MPI STREQUAL "OFF")
  find_package(MPI COMPONENTS CXX)
  if(MPI_CXX_FOUND)
    set(CTFX_HAVE_MPI ON)
    # How the tests start 4 ranks; Open MPI's --oversubscribe lets a 2-core machine run them.
    set(CTFX_MPIRUN_FLAGS ${MPIEXEC_NUMPROC_FLAG} 4 ${MPIEXEC_PREFLAGS})
    execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE _mpirun_version ERROR_QUIET)
    if(_mpirun_version MATCHES "Open MPI|OpenRTE")
      list(APPEND CTFX_MPIRUN_FLAGS --oversubscribe)
    endif()
  elseif(CTFX_MPI STREQUAL "ON")
    message(FATAL_ERROR "ctfx: CTFX_MPI=ON but MPI was not found (Debian: apt-get install libopenmpi-dev openmpi-bin)")
  endif()
endif()
message(STATUS "ctfx: MPI ${CTFX_HAVE_MPI} (CTFX_MPI=${CTFX_MPI})")
set(CTFX_HAVE_NCCL OFF)
if(NOT CTFX_NCCL MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "ctfx: CTFX_NCCL must be AUTO, ON or OFF (is '${CTFX_NCCL}')")
endif()
if(NOT CTFX_NCCL STREQUAL "OFF" AND CUDAToolkit_FOUND)
  find_path(CTFX_NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/local/cuda/include)
  find_library(CTFX_NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR} /usr/local/cuda/lib64)
  if(CTFX_NCCL_INCLUDE_DIR AND CTFX_NCCL_LIBRARY)
    set(CTFX_HAVE_NCCL ON)
  endif()
endif()
if(CTFX_NCCL STREQUAL "ON" AND NOT CTFX_HAVE_NCCL)
  message(FATAL_ERROR "ctfx: CTFX_NCCL=ON but NCCL (nccl.h, libnccl) was not found in the CUDA toolkit")
endif()
message(STATUS "ctfx: NCCL ${CTFX_HAVE_NCCL} (CTFX_NCCL=${CTFX_NCCL})")

# A CBLAS for the host's matrix products (kernels/matmul.hpp; Debian: libopenblas-dev, or the
# reference libblas-dev, whose libblas has the cblas_ functions too), and cuBLAS from the CUDA
# toolkit: AUTO uses what is found, ON requires it, OFF skips it. Without one, a graph with an f32 or
# f64 product is refused (rule blas-available); integer products need none.
set(CTFX_HAVE_BLAS OFF)
if(NOT CTFX_BLAS MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "ctfx: CTFX_BLAS must be AUTO, ON or OFF (is '${CTFX_BLAS}')")
endif()
if(NOT CTFX_BLAS STREQUAL "OFF")
  find_path(CTFX_CBLAS_INCLUDE_DIR cblas.h PATH_SUFFIXES openblas x86_64-linux-gnu/openblas-pthread)
  find_library(CTFX_CBLAS_LIBRARY NAMES openblas cblas blas)
  if(CTFX_CBLAS_INCLUDE_DIR AND CTFX_CBLAS_LIBRARY)
    set(CTFX_HAVE_BLAS ON)
  elseif(CTFX_BLAS STREQUAL "ON")
    message(FATAL_ERROR "ctfx: CTFX_BLAS=ON but no CBLAS (cblas.h and a library) was found (Debian: apt-get install libopenblas-dev)")
  endif()
endif()
message(STATUS "ctfx: BLAS ${CTFX_HAVE_BLAS} (CTFX_BLAS=${CTFX_BLAS}: ${CTFX_CBLAS_LIBRARY})")
