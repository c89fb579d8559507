// test/unit/unit_suite.hpp — the last header of ctfx_unit's precompiled header (test/CMakeLists.txt): puts its
// cases in doctest's suite "unit", which doctest_discover_tests turns into the CTest label `unit`
// (`ctest -L unit`). A label given as a test property instead would be overwritten by the suite
// list doctest's discovery appends.
#pragma once
#include <doctest/doctest.h>
TEST_SUITE_BEGIN("unit");
