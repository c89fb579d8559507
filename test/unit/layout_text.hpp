// The layout of a node as text, computed in the compiler: "f32[4, 3][8, 2]+1" = dtype, sizes,
// strides, then the storage offset when it is not 0 (layout_string's format). Shared by the tests
// of the metadata rules and of the result-layout rules.
#pragma once
#include <string>
#include <string_view>
#include <ctfx.hpp>

namespace ctfx_test {

// The layout of the node called `name` in the graph that `f` builds, or the graph's error.
template <class F>
constexpr ctfx::detail::msg layout(F f, std::string_view name) {
  ctfx::diagnostic d{};
  ctfx::ir g = ctfx::build_checked(f, &d);
  ctfx::detail::msg m;
  const std::int32_t i = g.find(name);
  if (!d.ok()) { m << "error: " << d.message(); return m; }
  if (i < 0) { m << "no node named " << name; return m; }
  const ctfx::tensor_meta& t = g.meta(i);
  ctfx::detail::put_type(m, g, t);
  m << '[';
  for (int k = 0; k < t.rank; ++k) {
    if (k) m << ", ";
    ctfx::detail::put_expr(m, g, t.stride[k]);
  }
  m << ']';
  if (!(t.offset == ctfx::sym_expr(0))) { m << '+'; ctfx::detail::put_expr(m, g, t.offset); }
  return m;
}
inline std::string str(const ctfx::detail::msg& m) { return std::string(m.view()); }

}  // namespace ctfx_test
