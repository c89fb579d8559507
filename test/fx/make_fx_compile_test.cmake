# Writes a C++ test that parses every test/data/fx/*.txt in the compiler (ctfx::fx_graph, the text
# embedded verbatim) and checks each against the run-time parse of the same file.
#   cmake -DDATA_DIR=... -DOUT=... -P make_fx_compile_test.cmake
file(GLOB texts ${DATA_DIR}/*.txt)
list(SORT texts)
set(body "// Generated from test/data/fx/*.txt by test/fx/make_fx_compile_test.cmake: do not edit.\n#include \"fx_compile_common.hpp\"\n\n")
set(calls "")
set(n 0)
foreach(t IN LISTS texts)
  get_filename_component(name ${t} NAME_WE)
  file(READ ${t} text)
  # Graphs with subgraphs (torch.cond, while_loop) are run-time graphs only: a compile-time graph
  # refuses them (graph/verify.hpp: refuse_subgraphs); ctfx_opt's run tests still run them.
  string(FIND "${text}" "torch.ops.higher_order.cond(" has_cond)
  string(FIND "${text}" "torch.ops.higher_order.while_loop(" has_loop)
  if(NOT has_cond EQUAL -1 OR NOT has_loop EQUAL -1)
    continue()
  endif()
  string(APPEND body "constexpr auto g_${name} = ctfx::fx_graph<R\"ctfx_fx(${text})ctfx_fx\", fx_test::sin_op, fx_test::sin_cos_op, fx_test::add_one_op, fx_test::double_acc_op, fx_test::double_t_op>();\n")
  string(APPEND calls "  failed += fx_test::same(\"${name}\", g_${name}.get());\n")
  math(EXPR n "${n} + 1")
endforeach()
string(APPEND body "\nint main() {\n  int failed = 0;\n${calls}  std::printf(\"%d graphs parsed at compile time, %d differ from the run-time parse\\n\", ${n}, failed);\n  return failed == 0 && ${n} >= 20 ? 0 : 1;\n}\n")
file(WRITE ${OUT}.tmp "${body}")
file(RENAME ${OUT}.tmp ${OUT})
