# Runs TOOL and compares its output with EXPECTED (docs/ops.md); a difference fails with the fix.
execute_process(COMMAND ${TOOL} OUTPUT_VARIABLE generated RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "op_table failed (${rc})")
endif()
file(READ ${EXPECTED} committed)
if(NOT generated STREQUAL committed)
  message(FATAL_ERROR "docs/ops.md is out of date with the op registry: regenerate it with "
                      "`build/tools/op_table/op_table > docs/ops.md` and add a C++ spelling for any new op in tools/op_table/op_table.cpp")
endif()
