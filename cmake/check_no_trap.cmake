# cmake -DNVCC=<nvcc> -DSOURCE=<file.cu> -DPTX=<file.ptx> "-DFLAGS=<list>" -P check_no_trap.cmake
#
# Compiles SOURCE to PTX with line information and passes when no device function holds `trap;`.
# nvcc compiles a read of host memory from device code (a namespace-scope constexpr table indexed
# at run time, say) to a trap: the kernel then dies with "unspecified launch failure" on the GPU,
# which a machine without one never runs. The message names the source line of the first trap.
foreach(v NVCC SOURCE PTX)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "check_no_trap: -D${v}=... is required")
  endif()
endforeach()
execute_process(COMMAND ${NVCC} ${FLAGS} -lineinfo --ptx ${SOURCE} -o ${PTX} RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${SOURCE} did not compile to PTX:\n${err}")
endif()
file(READ ${PTX} ptx)
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
