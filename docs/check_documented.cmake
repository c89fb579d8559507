# Runs Doxygen (cmake -P, with DOXYGEN, DOXYFILE, OUT) and fails when it reported anything: an
# undocumented public entity or a malformed documentation comment, each with its file and line.
file(MAKE_DIRECTORY ${OUT})
file(REMOVE ${OUT}/warnings.log)
execute_process(COMMAND ${DOXYGEN} ${DOXYFILE} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "doxygen failed (exit ${rc}):\n${out}\n${err}")
endif()
file(READ ${OUT}/warnings.log log)
string(STRIP "${log}" log)
if(NOT log STREQUAL "")
  message(FATAL_ERROR "the API reference has undocumented entities or broken comments: add a /// comment "
                      "before each (or ///< after a member):\n${log}")
endif()
message(STATUS "every public entity is documented")
