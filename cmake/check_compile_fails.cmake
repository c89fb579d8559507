# Passes when SOURCE does not compile and the compiler's output matches the ERE on its first line:
#   // expect-error: <regex>
file(STRINGS ${SOURCE} first LIMIT_COUNT 1)
if(NOT first MATCHES "^// expect-error: (.+)$")
  message(FATAL_ERROR "${SOURCE}: the first line must be '// expect-error: <regex>'")
endif()
set(expect "${CMAKE_MATCH_1}")
execute_process(COMMAND ${COMPILER} -std=c++20 ${FLAGS} -fsyntax-only ${SOURCE}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0)
  message(FATAL_ERROR "${SOURCE} compiled, but must not (expected: ${expect})")
endif()
string(REGEX MATCH "${expect}" hit "${err}")
if(NOT hit)
  string(SUBSTRING "${err}" 0 3000 head)
  message(FATAL_ERROR "${SOURCE} failed to compile, but without the expected message /${expect}/:\n${head}")
endif()
message(STATUS "failed as expected: ${hit}")
