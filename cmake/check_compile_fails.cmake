# cmake -DCOMPILER=<c++> -DSOURCE=<file.cpp> "-DFLAGS=<list>" -P check_compile_fails.cmake
#
# Passes when SOURCE does NOT compile and the compiler's diagnostics match the extended regular
# expression on SOURCE's first line:
#   // expect-error: <regex>
# Fails when it compiles, or when it fails for another reason (the first error lines are printed).
foreach(v COMPILER SOURCE)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "check_compile_fails: -D${v}=... is required")
  endif()
endforeach()
file(STRINGS "${SOURCE}" first LIMIT_COUNT 1)
string(REGEX REPLACE "\r$" "" first "${first}")
if(NOT first MATCHES "^// expect-error: *(.+)$")
  message(FATAL_ERROR "${SOURCE}: the first line must be '// expect-error: <regex>' (is '${first}')")
endif()
string(STRIP "${CMAKE_MATCH_1}" expect)
# clang 14 prints a computed message only as character codes (docs/guide.md): there the error must
# name the expected rule, in the plain-text line every compiler prints.
get_filename_component(compiler_name "${COMPILER}" NAME)
if(compiler_name MATCHES "clang" AND expect MATCHES "\\\\\\[rule ([a-z-]+)\\\\\\]")
  set(expect "rule '${CMAKE_MATCH_1}' is broken")
endif()
execute_process(COMMAND ${COMPILER} -std=c++20 ${FLAGS} -fsyntax-only -x c++ ${SOURCE}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(diag "${out}${err}")
if(rc EQUAL 0)
  message(FATAL_ERROR "${SOURCE} compiled, but must not (expected an error matching /${expect}/)")
endif()
string(REGEX MATCH "${expect}" hit "${diag}")
if(hit STREQUAL "")
  # The first error lines, with a little context, then the head of the whole output.
  string(REPLACE ";" "\\;" diag_escaped "${diag}")
  string(REPLACE "\n" ";" lines "${diag_escaped}")
  set(errors "")
  set(n 0)
  foreach(line IN LISTS lines)
    if(line MATCHES "error" AND n LESS 10)
      string(APPEND errors "  ${line}\n")
      math(EXPR n "${n} + 1")
    endif()
  endforeach()
  string(SUBSTRING "${diag}" 0 4000 head)
  message(NOTICE "First error lines:\n${errors}\nCompiler output (head):\n${head}")
  message(FATAL_ERROR "${SOURCE} failed to compile (exit ${rc}), but with no message matching /${expect}/")
endif()
message(STATUS "failed to compile, as expected: ${hit}")
