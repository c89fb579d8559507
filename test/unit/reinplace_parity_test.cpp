// Reinplacing decisions where ctfx used to do less than Inductor (tools/parity): each pass's graph
// and the bytes the candidates still copy.
//   - a clone of a written input read as the values of a put into that input survives
//     remove_noop_ops, as Inductor keeps it, so the put runs in place (160 bytes cloned, not 4000);
//   - an as_strided read of a scatter result realizes it (Inductor's needs_realized_inputs), so
//     Inductor's profitability check reinplaces the slice write before an as_strided write;
//   - views of a written-back value made after the copy_ epilogue are the program's own aliases of
//     the input (`x[0] = 7; return x.t()`), so the write runs in place; made before it (a clone's
//     views, the clone removed as a no-op), they would be new aliases and the write stays functional.
#include <doctest/doctest.h>
#include <ctfx.hpp>
#include <ctfx/graph/fx_parse.hpp>
#include <ctfx/passes/pipeline.hpp>
#include <string>

namespace {

std::string text(const ctfx::ir& g) { return ctfx::to_text(g); }

// The passes one by one, with their printed results; `log` gets reinplacing's decisions.
template <class Table = ctfx::builtin_inplace_table>
std::vector<std::string> passes(const ctfx::ir& g, ctfx::reinplace_log& log) {
  std::vector<std::string> out;
  ctfx::ir a = ctfx::remove_noop_ops(g);
  out.push_back(text(a));
  ctfx::ir b = ctfx::canonicalize_view_scatter_ops(a);
  out.push_back(text(b));
  ctfx::ir c = ctfx::reinplace_with_log<Table>(b, log);
  CHECK(ctfx::to_string(ctfx::verify(c)) == "ok");
  out.push_back(text(c));
  ctfx::ir d = ctfx::dce(ctfx::decompose_generalized_scatter(c));
  CHECK(ctfx::to_string(ctfx::verify(d)) == "ok");
  out.push_back(text(d));
  return out;
}

long long bytes_copied(const ctfx::reinplace_log& log) {
  long long n = 0;
  for (const auto& c : log.items)
    if (!c.reinplaced) n += static_cast<long long>(c.static_bytes);
  return n;
}
int reinplaced(const ctfx::reinplace_log& log) {
  int n = 0;
  for (const auto& c : log.items) n += c.reinplaced;
  return n;
}

// x.index_put_((i,), x[0:2].clone()), x: f32[50, 20] (4000 bytes), functionalized.
ctfx::ir put_own_rows() {
  return ctfx::build_checked([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {50, 20});
    auto i = b.input("i", ctfx::i64, {2});
    auto rows = x.slice(0, 0, 2).clone().named("clone");
    b.update(x, ctfx::index_put(x, {i}, rows).named("index_put"));
  });
}

TEST_CASE("parity: a clone of a written input read by a put into that input survives no-op removal") {
  ctfx::reinplace_log log;
  auto p = passes(put_own_rows(), log);
  // remove_noop_ops keeps the clone (Inductor: a copy of a mutated storage is kept).
  CHECK(p[0] == R"(graph(%x : f32[50, 20], %i : i64[2]):
  %slice : f32[2, 20] = slice(%x, dim=0, start=0, end=2)
  %clone : f32[2, 20] = clone(%slice)
  %index_put : f32[50, 20] = index_put(%x, [%i], %clone)
  %copy_ : f32[50, 20] = copy_(%x, %index_put)
  return ()
)");
  // The put reads the 2-row copy, not x: it runs in place and the write-back goes.
  CHECK(p[3] == R"(graph(%x : f32[50, 20], %i : i64[2]):
  %slice : f32[2, 20] = slice(%x, dim=0, start=0, end=2)
  %clone : f32[2, 20] = clone(%slice)
  %index_put : f32[50, 20] = index_put_(%x, [%i], %clone)
  return ()
)");
  CHECK(log.items.size() == 1);
  CHECK(reinplaced(log) == 1);
  CHECK(bytes_copied(log) == 0);  // only the 160-byte clone copies; before, all of x (4000 bytes)
}

TEST_CASE("parity: the traced clone-then-scatter of a written input still loses its clone") {
  // y = x.clone(); y[0:2] = s; x.copy_(y): the clone is only ever the tensor the scatter updates.
  auto g = ctfx::build_checked([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {4, 8});
    auto s = b.input("s", ctfx::f32, {2, 8});
    b.update(x, ctfx::slice_scatter(x.clone(), s, 0, 0, 2));
  });
  ctfx::reinplace_log log;
  auto p = passes(g, log);
  CHECK(p[0] == R"(graph(%x : f32[4, 8], %s : f32[2, 8]):
  %slice_scatter : f32[4, 8] = slice_scatter(%x, %s, dim=0, start=0, end=2)
  %copy_ : f32[4, 8] = copy_(%x, %slice_scatter)
  return ()
)");
  CHECK(reinplaced(log) == 1);
  CHECK(bytes_copied(log) == 0);
}

TEST_CASE("parity: a clone of a written input that is also read as a value is kept") {
  // y = x.clone(); x.index_put_((i,), y[0:2]): the clone feeds the values through a view.
  auto g = ctfx::build_checked([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {6, 4});
    auto i = b.input("i", ctfx::i64, {2});
    auto y = x.clone().named("y");
    b.update(x, ctfx::index_put(x, {i}, y.slice(0, 0, 2)).named("index_put"));
  });
  ctfx::reinplace_log log;
  auto p = passes(g, log);
  CHECK(p[0].find("clone(%x)") != std::string::npos);
  CHECK(reinplaced(log) == 1);
  CHECK(bytes_copied(log) == 0);
}

// x[1:3] = s; x.as_strided((2,), (5,), 0).add_(1), x: f32[4, 4], functionalized.
ctfx::ir slice_then_as_strided() {
  return ctfx::build_checked([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {4, 4});
    auto s = b.input("s", ctfx::f32, {2, 4});
    auto w = ctfx::slice_scatter(x, s, 0, 1, 3).named("slice_scatter");
    auto d = w.as_strided({2}, {5}, 0).named("as_strided");
    auto w2 = ctfx::as_strided_scatter(w, (d + 1).named("add"), {2}, {5}, 0).named("as_strided_scatter");
    b.update(x, w2);
  });
}

TEST_CASE("parity: an as_strided read realizes a slice write, which Inductor's table then reinplaces") {
  ctfx::reinplace_log log;
  auto p = passes(slice_then_as_strided(), log);
  CHECK(p[1] == R"(graph(%x : f32[4, 4], %s : f32[2, 4]):
  %generalized_scatter : f32[4, 4] = _generalized_scatter(%x, %s, [slice(dim=0, start=1, end=3)])
  %as_strided : f32[2] = as_strided(%generalized_scatter, size=[2], stride=[5], storage_offset=0)
  %add : f32[2] = add(%as_strided, 1)
  %generalized_scatter_1 : f32[4, 4] = _generalized_scatter(%generalized_scatter, %add, [as_strided(size=[2], stride=[5], storage_offset=0)])
  %copy_ : f32[4, 4] = copy_(%x, %generalized_scatter_1)
  return ()
)");
  CHECK(p[2] == R"(graph(%x : f32[4, 4], %s : f32[2, 4]):
  %generalized_scatter : f32[4, 4] = _inplace_generalized_scatter(%x, %s, [slice(dim=0, start=1, end=3)])
  %as_strided : f32[2] = as_strided(%generalized_scatter, size=[2], stride=[5], storage_offset=0)
  %add : f32[2] = add(%as_strided, 1)
  %generalized_scatter_1 : f32[4, 4] = _inplace_generalized_scatter(%generalized_scatter, %add, [as_strided(size=[2], stride=[5], storage_offset=0)])
  return ()
)");
  CHECK(log.items.size() == 2);
  CHECK(reinplaced(log) == 2);
  CHECK(bytes_copied(log) == 0);  // before: the slice write stayed functional, 64 bytes
}

TEST_CASE("parity: without the as_strided read, the slice write runs in place through the chain to the copy-back") {
  // x[1:3] = s; x.as_strided(...).copy_(v): the first scatter is only updated again, never read;
  // Inductor leaves it functional (not realized), ctfx follows the chain to copy_(x, ...) (#195285).
  auto g = ctfx::build_checked([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {4, 4});
    auto s = b.input("s", ctfx::f32, {2, 4});
    auto v = b.input("v", ctfx::f32, {2});
    auto w = ctfx::slice_scatter(x, s, 0, 1, 3);
    b.update(x, ctfx::as_strided_scatter(w, v, {2}, {5}, 0));
  });
  ctfx::reinplace_log log;
  passes(g, log);
  CHECK(log.items.size() == 2);
  CHECK(reinplaced(log) == 2);
  CHECK(bytes_copied(log) == 0);
}

// `x[0] = 7; return x[:, 1], x.t()` (eager returns views of x) and `x[0] = 7; y = x.clone();
// return y[:, 1], y.t()` (eager returns views of a copy), as Inductor's post-grad graphs print them:
// the same nodes, the output views after the copy_ in the first, before it in the second.
constexpr const char* views_after = R"(def forward(self, arg0_1: "f32[3, 4][4, 1]cpu"):
    full_default: "f32[4][1]cpu" = torch.ops.aten.full.default([4], 7, dtype = torch.float32, layout = torch.strided, device = device(type='cpu'), pin_memory = False)
    select_scatter: "f32[3, 4][4, 1]cpu" = torch.ops.aten.select_scatter.default(arg0_1, full_default, 0, 0)
    copy_: "f32[3, 4][4, 1]cpu" = torch.ops.aten.copy_.default(arg0_1, select_scatter)
    select_3: "f32[3][4]cpu" = torch.ops.aten.select.int(select_scatter, 1, 1)
    permute_1: "f32[4, 3][1, 4]cpu" = torch.ops.aten.permute.default(select_scatter, [1, 0])
    return (select_3, permute_1)
)";
constexpr const char* views_before = R"(def forward(self, arg0_1: "f32[3, 4][4, 1]cpu"):
    full_default: "f32[4][1]cpu" = torch.ops.aten.full.default([4], 7, dtype = torch.float32, layout = torch.strided, device = device(type='cpu'), pin_memory = False)
    select_scatter: "f32[3, 4][4, 1]cpu" = torch.ops.aten.select_scatter.default(arg0_1, full_default, 0, 0)
    select_2: "f32[3][4]cpu" = torch.ops.aten.select.int(select_scatter, 1, 1)
    permute: "f32[4, 3][1, 4]cpu" = torch.ops.aten.permute.default(select_scatter, [1, 0])
    copy_: "f32[3, 4][4, 1]cpu" = torch.ops.aten.copy_.default(arg0_1, select_scatter)
    return (select_2, permute)
)";

TEST_CASE("parity: output views made after the copy_ epilogue alias the input as in eager, made before it, they would not") {
  for (bool after : {true, false}) {
    CAPTURE(after);
    const auto r = ctfx::parse_fx(after ? views_after : views_before);
    REQUIRE(r.ok());
    ctfx::reinplace_log log;
    auto p = passes(r.graph, log);
    REQUIRE(log.items.size() == 1);
    CHECK(reinplaced(log) == (after ? 1 : 0));
    CHECK(bytes_copied(log) == (after ? 0 : 48));
    if (!after) CHECK(log.items[0].why == ctfx::reinplace_reason::result_escapes);
    CHECK((p[2].find("_inplace_generalized_scatter(%arg0_1") != std::string::npos) == after);
  }
}

}  // namespace
