# cmake -DROOT=<source dir> -P rule_texts.cmake
#
# The compile error of each rule (graph/graph.hpp: broken_rule, one string literal per rule) says
# what CTFX_RULE_LIST (graph/diagnostic.hpp: name_of, fix_of) says: the same name and fix, word for
# word, for every rule.
file(READ ${ROOT}/include/ctfx/graph/diagnostic.hpp list_text)
file(READ ${ROOT}/include/ctfx/graph/graph.hpp assert_text)
string(REGEX REPLACE "\\\\\n" " " list_text "${list_text}")  # join the macro's lines
# (a ';' in a text would split the lists below, an unbalanced '[' would join them)
foreach(v list_text assert_text)
  string(REPLACE ";" "<semicolon>" ${v} "${${v}}")
  string(REPLACE "[" "<open>" ${v} "${${v}}")
  string(REPLACE "]" "<close>" ${v} "${${v}}")
endforeach()
string(REGEX MATCHALL "X\\([a-z_]+, \"[^\"]+\", +\"[^\"]+\"\\)" rules "${list_text}")
list(LENGTH rules n)
if(n LESS 20)
  message(FATAL_ERROR "rule_texts: found ${n} rules in CTFX_RULE_LIST, expected all of them")
endif()
set(missing "")
foreach(r IN LISTS rules)
  string(REGEX MATCH "X\\(([a-z_]+), \"([^\"]+)\", +\"([^\"]+)\"\\)" _ "${r}")
  set(id ${CMAKE_MATCH_1})
  set(expect "struct broken_rule<rule::${id}, Where, D> {\n  static_assert(Where::ok, \"ctfx: rule '${CMAKE_MATCH_2}' is broken<semicolon> fix: ${CMAKE_MATCH_3}\")<semicolon>")
  string(FIND "${assert_text}" "${expect}" at)
  if(at EQUAL -1)
    string(APPEND missing "  ${expect}\n")
  endif()
endforeach()
if(missing)
  message(FATAL_ERROR "graph.hpp's broken_rule differs from CTFX_RULE_LIST; expected:\n${missing}")
endif()
message(STATUS "${n} rules: the compile errors name each rule and its fix as CTFX_RULE_LIST does")
