// test/fx: the captured PyTorch graphs, parsed by the compiler and at run time, must agree; and
// printing the parsed graph as FX text and re-parsing it gives the same graph.
#pragma once
#include <cstdio>
#include <string>
#include <ctfx.hpp>
#include <ctfx/graph/fx_parse.hpp>
#include <ctfx/graph/fx_print.hpp>

#ifndef CTFX_FX_DATA_DIR
#error "CTFX_FX_DATA_DIR must name test/data/fx"
#endif

namespace fx_test {

struct sin_op : ctfx::custom_op<"ctfx_test::sin_", "sin_(Tensor x, Tensor(a!) out) -> ()"> {};
struct sin_cos_op
    : ctfx::custom_op<"ctfx_test::sin_cos_", "sin_cos_(Tensor x, Tensor(a!) out_sin, Tensor(a!) out_cos) -> ()"> {};
struct add_one_op : ctfx::custom_op<"ctfx_test::add_one_", "add_one_(Tensor(a!) x) -> ()"> {};
struct double_acc_op : ctfx::custom_op<"ctfx_test::double_acc_", "double_acc_(Tensor x, Tensor(a!) acc) -> Tensor"> {};
struct double_t_op : ctfx::custom_op<"ctfx_test::double_t", "double_t(Tensor x) -> Tensor"> {};
inline const ctfx::fx_custom user_ops[] = {ctfx::fx_custom_of<sin_op>(), ctfx::fx_custom_of<sin_cos_op>(),
                                           ctfx::fx_custom_of<add_one_op>(), ctfx::fx_custom_of<double_acc_op>(),
                                           ctfx::fx_custom_of<double_t_op>()};

inline int same(const char* name, const ctfx::ir& compiled) {
  auto r = ctfx::parse_fx_file(std::string(CTFX_FX_DATA_DIR) + "/" + name + ".txt", user_ops);
  if (!r.ok()) {
    std::printf("FAIL %s: the run-time parse fails: %s\n", name, std::string(r.error.message()).c_str());
    return 1;
  }
  if (ctfx::to_text(r.graph) != ctfx::to_text(compiled)) {
    std::printf("FAIL %s: compile-time and run-time parses differ\n%s\n---\n%s\n", name, ctfx::to_text(compiled).c_str(),
                ctfx::to_text(r.graph).c_str());
    return 1;
  }
  auto again = ctfx::parse_fx(ctfx::to_fx(compiled, user_ops), user_ops);
  if (!again.ok() || ctfx::to_text(again.graph) != ctfx::to_text(compiled)) {
    std::printf("FAIL %s: printing and re-parsing does not give the same graph\n", name);
    return 1;
  }
  return 0;
}

}  // namespace fx_test
