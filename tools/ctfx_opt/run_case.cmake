# Drives one ctfx_opt test (cmake -P; CI has no NumPy, so the comparison is npy_compare).
#
# MODE=run:   runs `ctfx_opt DATA/NAME.txt --run --inputs DATA/NAME.input<i>.npy,... --outputs OUT`
#             and compares every file it wrote with what PyTorch eager saved when the graph was
#             captured: OUT/output<j>.npy with DATA/NAME.output<j>.npy, OUT/mutated<i>.npy with
#             DATA/NAME.mutated<i>.npy (or with DATA/NAME.input<i>.npy where PyTorch left that input
#             unchanged); ctfx_opt runs with --table TABLE. Every saved output and mutated input
#             must have been written. ULP is the
#             tolerance for floats (0: bit for bit; `normwise`: a matrix product's, npy_compare --normwise). FILES (default NAME) names the .npy files:
#             NAME.size<k> runs a dynamic-shape graph at its k-th extra captured size.
# MODE=error: runs `ctfx_opt ARGS` (ARGS separated by '|'), expects exit status 1, stderr matching
#             EXPECT, and OUT left empty.
cmake_minimum_required(VERSION 3.25)
file(REMOVE_RECURSE ${OUT})
file(MAKE_DIRECTORY ${OUT})

if(MODE STREQUAL "error")
  string(REPLACE "|" ";" args "${ARGS}")
  execute_process(COMMAND ${OPT} ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 1)
    message(FATAL_ERROR "expected exit status 1, got ${rc}\nstdout: ${out}\nstderr: ${err}")
  endif()
  if(NOT err MATCHES "${EXPECT}")
    message(FATAL_ERROR "stderr does not match '${EXPECT}':\n${err}")
  endif()
  file(GLOB left ${OUT}/*)
  if(left)
    message(FATAL_ERROR "a failed run left files behind: ${left}")
  endif()
  message(STATUS "ok: ${err}")
  return()
endif()

if(NOT DEFINED FILES)
  set(FILES ${NAME})
endif()
set(inputs)
set(i 0)
while(EXISTS ${DATA}/${FILES}.input${i}.npy)
  list(APPEND inputs ${DATA}/${FILES}.input${i}.npy)
  math(EXPR i "${i} + 1")
endwhile()
string(REPLACE ";" "," inputs "${inputs}")
execute_process(COMMAND ${OPT} ${DATA}/${NAME}.txt --run --inputs "${inputs}" --outputs ${OUT} --table ${TABLE}
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "ctfx_opt failed (${rc}): ${err}")
endif()

file(GLOB written RELATIVE ${OUT} ${OUT}/*)
file(GLOB expected RELATIVE ${DATA} ${DATA}/${FILES}.output*.npy ${DATA}/${FILES}.mutated*.npy)
foreach(e IN LISTS expected)
  string(REPLACE "${FILES}." "" f "${e}")
  if(NOT f IN_LIST written)
    message(FATAL_ERROR "PyTorch saved ${e}, ctfx_opt wrote no ${f} (it wrote: ${written})")
  endif()
endforeach()
set(failed "")
foreach(f IN LISTS written)
  if(f MATCHES "^(output|mutated)([0-9]+)\\.npy$")
    set(ref ${DATA}/${FILES}.${f})
    if(CMAKE_MATCH_1 STREQUAL "mutated" AND NOT EXISTS ${ref})
      set(ref ${DATA}/${FILES}.input${CMAKE_MATCH_2}.npy)  # written by the program, but to the same values
    endif()
    if(NOT EXISTS ${ref})
      message(FATAL_ERROR "ctfx_opt wrote ${f}, PyTorch saved no ${FILES}.${f}")
    endif()
    if(ULP STREQUAL "normwise")
      execute_process(COMMAND ${COMPARE} ${ref} ${OUT}/${f} --normwise RESULT_VARIABLE crc ERROR_VARIABLE cerr)
    else()
      execute_process(COMMAND ${COMPARE} ${ref} ${OUT}/${f} --ulp ${ULP} RESULT_VARIABLE crc ERROR_VARIABLE cerr)
    endif()
    if(NOT crc EQUAL 0)
      string(APPEND failed "${cerr}")
    endif()
  else()
    message(FATAL_ERROR "ctfx_opt wrote an unexpected file ${f}")
  endif()
endforeach()
if(failed)
  message(FATAL_ERROR "${failed}")
endif()
list(LENGTH written n)
message(STATUS "${FILES}: ${n} files equal to PyTorch eager's (ulp tolerance ${ULP})")
