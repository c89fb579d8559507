// Table lookups from the FX side: aten.embedding (weight[indices]) and aten.index_select (the index at
// one dimension) become index gathers; what PyTorch would reject, or index differently, is refused
// with the node's name. (The captured program embedding_lookup checks embedding against eager.)
#include <doctest/doctest.h>
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>
#include <ctfx.hpp>
#include <ctfx/exec/runtime.hpp>
#include <ctfx/graph/fx_parse.hpp>

namespace {
constexpr auto select_text = R"(def forward(self, x: "f32[3, 4][4, 1]cpu", j: "i64[2][1]cpu", w: "f32[5, 2][2, 1]cpu", ids: "i32[2, 2][2, 1]cpu"):
    index_select: "f32[3, 2][2, 1]cpu" = torch.ops.aten.index_select.default(x, 1, j)
    index_select_1: "f32[2, 4][4, 1]cpu" = torch.ops.aten.index_select.default(x, -2, j)
    embedding: "f32[2, 2, 2][4, 2, 1]cpu" = torch.ops.aten.embedding.default(w, ids, 0)
    return (index_select, index_select_1, embedding)
)";
static_assert(ctfx::parse_fx(select_text).error.ok());

std::string parse_error(const char* text) {
  const auto r = ctfx::parse_fx(text);
  return r.error.ok() ? std::string() : ctfx::to_string(r.error);
}
}  // namespace

TEST_CASE("fx lookups: index_select on a dimension (negative too) and embedding with int32 ids gather PyTorch's elements") {
  const ctfx::ir g = ctfx::parse_fx(select_text).graph;
  REQUIRE(g.error.ok());
  ctfx::runtime_plan p(g);
  REQUIRE(p.error().ok());
  std::vector<float> x(12), w(10), a(6), b(8), e(8);
  for (std::size_t k = 0; k < x.size(); ++k) x[k] = static_cast<float>(k);
  for (std::size_t k = 0; k < w.size(); ++k) w[k] = 100.0f + static_cast<float>(k);
  std::vector<std::int64_t> j = {2, 0};
  std::vector<std::int32_t> ids = {4, 0, 1, 4};
  const std::vector<ctfx::tensor_ref> in = {ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {3, 4}), ctfx::tensor_ref::contiguous(j.data(), ctfx::i64, {2}),
                                            ctfx::tensor_ref::contiguous(w.data(), ctfx::f32, {5, 2}), ctfx::tensor_ref::contiguous(ids.data(), ctfx::i32, {2, 2})};
  const std::vector<ctfx::tensor_ref> out = {ctfx::tensor_ref::contiguous(a.data(), ctfx::f32, {3, 2}), ctfx::tensor_ref::contiguous(b.data(), ctfx::f32, {2, 4}),
                                             ctfx::tensor_ref::contiguous(e.data(), ctfx::f32, {2, 2, 2})};
  const auto st = p.run(in, out);
  REQUIRE_MESSAGE(st.ok, st.message);
  CHECK(a == std::vector<float>{2, 0, 6, 4, 10, 8});
  CHECK(b == std::vector<float>{8, 9, 10, 11, 0, 1, 2, 3});
  CHECK(e == std::vector<float>{108, 109, 100, 101, 102, 103, 108, 109});

  // An id out of the table's range: refused before any output is written.
  ids[1] = 5;
  std::fill(e.begin(), e.end(), -1.0f);
  CHECK_FALSE(p.run(in, out).ok);
  CHECK(e == std::vector<float>(8, -1.0f));
}

TEST_CASE("fx lookups: a 1-d embedding table, a 2-d or 0-d index_select index and a dim out of range are refused by name") {
  CHECK(parse_error(R"(def forward(self, w: "f32[5][1]cpu", ids: "i64[2][1]cpu"):
    embedding: "f32[2][1]cpu" = torch.ops.aten.embedding.default(w, ids)
    return (embedding,)
)").find("node 'embedding': embedding's weight is a 2-d table") != std::string::npos);
  CHECK(parse_error(R"(def forward(self, x: "f32[3, 4][4, 1]cpu", j: "i64[2, 1][1, 1]cpu"):
    index_select: "f32[3, 2][2, 1]cpu" = torch.ops.aten.index_select.default(x, 1, j)
    return (index_select,)
)").find("index_select's index must be 1-d") != std::string::npos);
  CHECK(parse_error(R"(def forward(self, x: "f32[3, 4][4, 1]cpu", j: "i64[][]cpu"):
    index_select: "f32[3, 1][1, 1]cpu" = torch.ops.aten.index_select.default(x, 1, j)
    return (index_select,)
)").find("a 0-d index keeps the dimension") != std::string::npos);
  CHECK(parse_error(R"(def forward(self, x: "f32[3, 4][4, 1]cpu", j: "i64[2][1]cpu"):
    index_select: "f32[3, 2][2, 1]cpu" = torch.ops.aten.index_select.default(x, 2, j)
    return (index_select,)
)").find("node 'index_select': index_select's dim is out of range") != std::string::npos);
}
