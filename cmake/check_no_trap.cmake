# cmake -DKEEP_DIR=<dir> -DNAME=<source name> -DPTX=<file.ptx> -P check_no_trap.cmake
#
# Reads the PTX that nvcc kept (--keep) in KEEP_DIR while it built the test NAME (NAME.ptx, or
# NAME.compute_XX.ptx for each of several architectures), copies it to PTX (what
# check_ptx_vectors.cmake reads), and passes when no device function holds `trap;`. nvcc compiles a
# read of host memory from device code (a namespace-scope constexpr table indexed at run time, say)
# to a trap: the kernel then dies with "unspecified launch failure" on the GPU, which a machine
# without one never runs. The message names the source line of the first trap (the test targets
# build with -lineinfo). The PTX is the build's own: the test compiles nothing.
foreach(v KEEP_DIR NAME PTX)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "check_no_trap: -D${v}=... is required")
  endif()
endforeach()
file(GLOB kept ${KEEP_DIR}/${NAME}.ptx ${KEEP_DIR}/${NAME}.compute_*.ptx)
if(NOT kept)
  message(FATAL_ERROR "check_no_trap: no PTX of ${NAME} in ${KEEP_DIR}: build the test first (nvcc keeps it there)")
endif()
set(ptx "")
foreach(f IN LISTS kept)
  file(READ ${f} one)
  string(APPEND ptx "${one}")
endforeach()
file(WRITE ${PTX} "${ptx}")
set(SOURCE "the CUDA test ${NAME}")
string(FIND "${ptx}" "trap;" at)
if(at EQUAL -1)
  message(STATUS "no trap in the device code of ${SOURCE}")
  return()
endif()
# The line it came from: the last `.loc <file> <line>` before it, and that file's `.file` entry.
string(SUBSTRING "${ptx}" 0 ${at} before)
string(FIND "${before}" ".loc\t" loc REVERSE)
set(where "an unknown line")
if(NOT loc EQUAL -1)
  string(SUBSTRING "${before}" ${loc} 80 locline)
  if(locline MATCHES "^\\.loc\t([0-9]+) ([0-9]+)")
    set(file_no ${CMAKE_MATCH_1})
    set(line_no ${CMAKE_MATCH_2})
    if(ptx MATCHES "\\.file\t${file_no} \"([^\"]+)\"")
      get_filename_component(path "${CMAKE_MATCH_1}" ABSOLUTE)
      set(where "${path}:${line_no}")
    endif()
  endif()
endif()
string(REPLACE "trap;" "" rest "${ptx}")
string(LENGTH "${ptx}" all_chars)
string(LENGTH "${rest}" rest_chars)
math(EXPR n "(${all_chars} - ${rest_chars}) / 5")
message(FATAL_ERROR "${n} trap(s) in the device code of ${SOURCE}; the first comes from ${where}.\n"
        "Device code there reads what the GPU cannot reach (host memory: a constexpr table or global "
        "without __device__), so the kernel dies with 'unspecified launch failure'. Compute the value "
        "without the host object (a switch, an enum range) or pass it to the kernel as an argument.")
