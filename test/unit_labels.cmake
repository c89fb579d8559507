# Read by CTest after doctest_discover_tests's file (test/CMakeLists.txt): the label `unit` on every
# discovered doctest case, so that `ctest -L unit` runs them.
foreach(t IN LISTS ctfx_unit_TESTS)
  set_tests_properties("${t}" PROPERTIES LABELS unit)
endforeach()
