# Helpers for ctfx's own tests, examples, tools and benchmarks.

# Strict warnings for ctfx's own targets (the INTERFACE library imposes none on users). Boost and
# CCCL come in as SYSTEM include directories, so their warnings don't count. They are errors only
# under CTFX_WERROR (scripts/test.sh, hence CI, turns it on): a compiler version's new warning or
# false positive must not stop a user's build of the tests and examples.
# The headers turn -Wshadow off for their own text (core/diagnostics_push.hpp); ctfx's targets keep
# it on there with CTFX_LIBRARY_WARNINGS, except those given USER (the examples), built as a
# user's file is.
function(ctfx_strict target)
  cmake_parse_arguments(arg "USER" "" "" ${ARGN})
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow>)
  if(NOT arg_USER)
    target_compile_definitions(${target} PRIVATE CTFX_LIBRARY_WARNINGS=1)
  endif()
  if(CTFX_WERROR)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
  endif()
  if(CTFX_SANITIZE)
    target_compile_options(${target} PRIVATE
      $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all>)
    target_link_options(${target} PRIVATE -fsanitize=address,undefined)
  endif()
endfunction()

# nvcc flags for ctfx's .cu targets. Without a GPU (CTFX_CUDA_NO_GPU: cmake/CtfxDependencies.cmake)
# their programs cannot run, and what the build checks is that they compile: device code then skips
# NVVM's optimizer (-Xcicc -O0; test/cuda/matmul_cuda.cu: 61 s of nvcc CPU against 101), except in a
# target given DEVICE_OPT: one whose PTX a test reads (traps, vector loads), a benchmark, a tool.
function(ctfx_cuda_flags target)
  cmake_parse_arguments(arg "DEVICE_OPT" "" "" ${ARGN})
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr --extended-lambda>)
  if(CTFX_CUDA_NO_GPU AND NOT arg_DEVICE_OPT)
    target_compile_options(${target} PRIVATE "$<$<COMPILE_LANGUAGE:CUDA>:SHELL:-Xcicc -O0>")
  endif()
endfunction()

# What a bare compiler command needs to see ctfx as ctfx::ctfx gives it (for the must-not-compile
# cases and the cross-compiler checks, which call a compiler themselves): ctfx's include directory,
# Boost's and CCCL's as system directories (but never a directory the compiler searches anyway:
# `-isystem /usr/include` breaks libstdc++'s #include_next <math.h>), and the host system define.
function(_ctfx_dir_flags out)
  set(flags -I${PROJECT_SOURCE_DIR}/include)
  get_target_property(_boost_dirs Boost::headers INTERFACE_INCLUDE_DIRECTORIES)
  foreach(d IN LISTS CTFX_CCCL_INCLUDE_DIR _boost_dirs)
    if(d AND NOT d IN_LIST CMAKE_CXX_IMPLICIT_INCLUDE_DIRECTORIES)
      list(APPEND flags -isystem ${d})
    endif()
  endforeach()
  list(APPEND flags -DTHRUST_DEVICE_SYSTEM=THRUST_DEVICE_SYSTEM_${CTFX_HOST_SYSTEM})
  set(${out} ${flags} PARENT_SCOPE)
endfunction()
_ctfx_dir_flags(CTFX_TEST_INCLUDE_FLAGS)
# The constant-evaluation limits ctfx::ctfx sets, per compiler family.
set(CTFX_GNU_LIMIT_FLAGS -fconstexpr-ops-limit=4294967295 -fconstexpr-cache-depth=64 -DCTFX_MEMO_META=1)
set(CTFX_CLANG_LIMIT_FLAGS -fconstexpr-steps=1000000000)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  set(CTFX_CXX_TEST_FLAGS ${CTFX_TEST_INCLUDE_FLAGS} ${CTFX_GNU_LIMIT_FLAGS})
elseif(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  set(CTFX_CXX_TEST_FLAGS ${CTFX_TEST_INCLUDE_FLAGS} ${CTFX_CLANG_LIMIT_FLAGS})
else()
  set(CTFX_CXX_TEST_FLAGS ${CTFX_TEST_INCLUDE_FLAGS})
endif()

# A benchmark is built on request (bench/run_host.sh, bench/run_mpi.sh), not by the tests: its -O3
# build cost minutes. The test bench.<target> checks that SOURCE compiles with ctfx's strict warnings
# (g++ -fsyntax-only: every template the file uses is instantiated and every constant evaluated, no
# code is generated); ARGN: the target's own flags. Labelled `build`.
function(ctfx_bench_compiles target source)
  set(warnings -Wall -Wextra -Wpedantic -Wshadow -DCTFX_LIBRARY_WARNINGS=1)
  if(CTFX_WERROR)
    list(APPEND warnings -Werror)
  endif()
  add_test(NAME bench.${target}
           COMMAND ${CMAKE_CXX_COMPILER} -std=c++20 ${CTFX_CXX_TEST_FLAGS} ${warnings} ${ARGN}
                   -fsyntax-only ${source})
  set_tests_properties(bench.${target} PROPERTIES LABELS build)
endfunction()

# CTest labels from a test's name, so a developer runs a part: `ctest -L unit`, `-L fx`, `-L build`
# (what compilers do with ctfx: errors, diagnostics, warnings, compile time, generated code),
# `-L fuzz`, `-L cuda`, `-L mpi`, `-L docs`, `-L tools`, `-L example`, `-L package`, `-L sanitizer`.
# (`-L` is a regular expression, so no label contains another: a `compile` label would match `-L mpi`.)
# The name's first component picks the family; a CUDA compiler or device in the name adds `cuda`, a
# sanitizer adds `sanitizer`. Every directory that adds tests defers a call to this to its end
# (`cmake_language(DEFER CALL ctfx_label_tests)`): set_property(TEST) reaches only the current
# directory's tests.
function(ctfx_label_tests)
  get_property(tests DIRECTORY PROPERTY TESTS)
  foreach(t IN LISTS tests)
    string(REGEX REPLACE "\\..*" "" family "${t}")
    set(labels)
    if(family STREQUAL "unit")
      list(APPEND labels unit)
    elseif(family MATCHES "^(ctfx_opt|fx)$")
      list(APPEND labels fx)
    elseif(family MATCHES "^(fail|diag|compile|warnings|codegen|headers)$")
      list(APPEND labels build)
    elseif(family MATCHES "^(fuzz|threads|row_chain)$")
      list(APPEND labels fuzz)
    elseif(family MATCHES "^(mpi|nccl|docs|tools|cuda)$")
      list(APPEND labels ${family})
    elseif(family STREQUAL "example")
      list(APPEND labels example)
    elseif(family STREQUAL "consumer")
      list(APPEND labels package)
    else()
      message(FATAL_ERROR "ctfx_label_tests: test '${t}' has no label family; name it <family>.<what> "
                          "with a family listed in cmake/CtfxTesting.cmake, or add its family there")
    endif()
    if(t MATCHES "(^|[._])(nvcc|cuda|nccl)([._]|$)")
      list(APPEND labels cuda)
    endif()
    if(t MATCHES "(^|[._])mpi([._]|$)")
      list(APPEND labels mpi)
    endif()
    if(t MATCHES "(^|[._])(asan|tsan)([._]|$)")
      list(APPEND labels sanitizer)
    endif()
    list(REMOVE_DUPLICATES labels)
    set_property(TEST "${t}" APPEND PROPERTY LABELS ${labels})
  endforeach()
endfunction()
