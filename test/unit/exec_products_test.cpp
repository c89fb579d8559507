// Matrix products (mm, addmm, bmm, baddbmm: ops/products.hpp, kernels/matmul.hpp): their shape
// rules and messages; on compiled<G> and runtime_plan, on the host and OMP backends, results
// bit-identical to the reference (the same BLAS) and, with operands whose products and sums are
// exact in f32, equal to the exact product, whatever order BLAS adds in — which checks every
// layout the kernel hands BLAS (transposed operands, broadcast and strided ones, strided outputs);
// integer products exact modulo 2^bits; addmm accumulating in c's buffer where c dies; a backend
// without its BLAS refused before anything is written.
#include <doctest/doctest.h>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>
#include <ctfx.hpp>
#include <ctfx/exec/compiled.hpp>
#include <ctfx/exec/runtime.hpp>
#include <ctfx/graph/fx_parse.hpp>
#include <ctfx/graph/fx_print.hpp>
#include <ctfx/plan/listing.hpp>

namespace {

using ctfx::builder;

template <class F>
std::string error_of(F f) {
  ctfx::diagnostic d{};
  (void)ctfx::build_checked(f, &d);
  return d.ok() ? std::string("ok") : std::string(d.message());
}

struct buffer {
  ctfx::tensor_desc d;
  std::vector<std::byte> bytes;
  explicit buffer(ctfx::tensor_desc desc) : d(desc), bytes(static_cast<std::size_t>(desc.numel() * ctfx::size_of(desc.dt))) {}
  ctfx::tensor_ref ref() { return ctfx::tensor_ref(bytes.data(), d); }
  template <class T>
  T at(std::size_t i) const {
    T v;
    std::memcpy(&v, bytes.data() + i * sizeof(T), sizeof(T));
    return v;
  }
};

// Values k/4 for small integers k: every product and every sum of a few dozen is exact in f32.
template <class T>
buffer exact_values(ctfx::tensor_desc d, int salt) {
  buffer b(d);
  for (std::size_t i = 0; i < static_cast<std::size_t>(d.numel()); ++i) {
    const T v = static_cast<T>(static_cast<double>(static_cast<int>((i * 37 + static_cast<std::size_t>(salt) * 11) % 13) - 6) * 0.25);
    std::memcpy(b.bytes.data() + i * sizeof(T), &v, sizeof(T));
  }
  return b;
}

std::vector<ctfx::tensor_ref> refs(std::vector<buffer>& v) {
  std::vector<ctfx::tensor_ref> r;
  for (auto& x : v) r.push_back(x.ref());
  return r;
}

// Runs compiled<G> and runtime_plan on the host and OMP backends; each output must equal the
// reference's bytes; returns the reference's outputs.
template <class Plan, class G>
std::vector<buffer> run_all(const G& graph, const std::vector<buffer>& ins, const std::vector<ctfx::tensor_desc>& outs) {
  const ctfx::ir g = Plan::graph();
  std::vector<buffer> in_ref = ins, out_ref;
  for (const auto& d : outs) out_ref.emplace_back(d);
  const ctfx::run_status rs = ctfx::reference_run(graph.get(), refs(in_ref), refs(out_ref));
  REQUIRE_MESSAGE(rs.ok, rs.message);
  ctfx::runtime_plan rp(g);
  REQUIRE(rp.error().ok());
  for (ctfx::backend where : {ctfx::backend::host, ctfx::backend::omp}) {
    const ctfx::device_ctx ctx{where};
    for (int which = 0; which < 2; ++which) {
      std::vector<buffer> in = ins, out;
      for (const auto& d : outs) out.emplace_back(d);
      const ctfx::run_status st = which == 0 ? Plan::run(refs(in), refs(out), ctx) : rp.run(refs(in), refs(out), ctx);
      REQUIRE_MESSAGE(st.ok, st.message);
      for (std::size_t k = 0; k < out.size(); ++k) CHECK_MESSAGE(out[k].bytes == out_ref[k].bytes, (which ? "runtime_plan" : "compiled<G>") << ": output " << k);
      for (std::size_t k = 0; k < in.size(); ++k) CHECK_MESSAGE(in[k].bytes == ins[k].bytes, "input " << k << " changed");
    }
  }
  return out_ref;
}

// The exact product in double: out[b, i, j] = beta * c + alpha * sum_q a[b, i, q] b[b, q, j], with
// element access through functions (views of any layout).
template <class A, class B, class C>
double exact(A a, B b, C c, ctfx::index_t k, double beta, double alpha) {
  double s = 0;
  for (ctfx::index_t q = 0; q < k; ++q) s += a(q) * b(q);
  return (beta == 0 ? 0.0 : beta * c()) + alpha * s;
}

#if defined(CTFX_HAVE_CBLAS)  // (a build without a BLAS refuses f32/f64 products at compile time)
// A linear layer with bias, a two-layer MLP with relu, attention scores with a transposed operand
// and a scale, a batched product and baddbmm.
constexpr long M = 24, K = 40, N = 16, H = 32;
constexpr auto mlp_graph = ctfx::graph([](builder& b) {
  auto x = b.input("x", ctfx::f32, {M, K});
  auto w1 = b.input("w1", ctfx::f32, {H, K});  // nn.Linear's weight [out, in]
  auto b1 = b.input("b1", ctfx::f32, {H});
  auto w2 = b.input("w2", ctfx::f32, {N, H});
  auto b2 = b.input("b2", ctfx::f32, {N});
  auto h = ctfx::relu(ctfx::addmm(b1, x, w1.transpose(0, 1)));
  auto y = ctfx::addmm(b2, h, w2.transpose(0, 1), 0.5, 2.0);
  b.output(y, ctfx::mm(x, w1.transpose(0, 1)));
});
using mlp_plan = ctfx::compiled<decltype(mlp_graph)>;
// The products are typed extern steps of the static plan: no run-time program, nothing dispatched.
static_assert(mlp_plan::run_plan.usable);
static_assert(mlp_plan::dispatched_families == 0);

constexpr long BQ = 3, S = 12, D = 8;
constexpr auto attention_graph = ctfx::graph([](builder& b) {
  auto q = b.input("q", ctfx::f64, {BQ, S, D});
  auto k = b.input("k", ctfx::f64, {BQ, S, D});
  auto v = b.input("v", ctfx::f64, {BQ, S, D});
  auto c = b.input("c", ctfx::f64, {S, S});  // a mask-like bias, broadcast over the batch
  auto scores = ctfx::bmm(q, k.transpose(1, 2)) * 0.125;
  auto biased = ctfx::baddbmm(c, q, k.transpose(1, 2), 1.0, 0.5);
  b.output(scores, ctfx::bmm(scores, v), biased);
});
using attention_plan = ctfx::compiled<decltype(attention_graph)>;

// scaled_dot_product_attention: grouped-query heads (6 q heads on 2 k/v heads), causal with a bool
// mask that leaves row 1 nothing (0 there, not NaN), and a broadcast float mask with an explicit scale.
constexpr long AB = 2, AHQ = 6, AHK = 2, AL = 5, AS = 7, AE = 4, AEV = 3;
constexpr auto sdpa_graph = ctfx::graph([](builder& b) {
  auto q = b.input("q", ctfx::f64, {AB, AHQ, AL, AE});
  auto k = b.input("k", ctfx::f64, {AB, AHK, AS, AE});
  auto v = b.input("v", ctfx::f64, {AB, AHK, AS, AEV});
  auto keep = b.input("keep", ctfx::b8, {AL, AS});
  auto bias = b.input("bias", ctfx::f64, {AB, 1, AL, AS});
  auto [o1, lse1] = ctfx::scaled_dot_product_attention(q, k, v, keep, true);
  auto [o2, lse2] = ctfx::scaled_dot_product_attention(q, k, v, bias, false, 0.3);
  b.output(o1, lse1, o2, lse2);
});
using sdpa_plan = ctfx::compiled<decltype(sdpa_graph)>;

#endif

// Integer products wrap modulo 2^bits, as PyTorch's (i8: 100 * 100 * 40 far past 127).
constexpr auto int_graph = ctfx::graph([](builder& b) {
  auto a = b.input("a", ctfx::i8, {5, 40});
  auto w = b.input("w", ctfx::i8, {40, 7});
  auto c = b.input("c", ctfx::i8, {7});
  auto a32 = b.input("a32", ctfx::i64, {4, 6});
  b.output(ctfx::mm(a, w), ctfx::addmm(c, a, w, 3.0, -2.0), ctfx::matmul(a32, a32.transpose(0, 1)));
});
using int_plan = ctfx::compiled<decltype(int_graph)>;

#if defined(CTFX_HAVE_CBLAS)
// addmm's c an intermediate that dies at the product: the result takes its buffer (accumulates in
// place); mm's square operand dying there is never overwritten.
constexpr long Q = 16;
constexpr auto inplace_graph = ctfx::graph([](builder& b) {
  auto x = b.input("x", ctfx::f32, {Q, Q});
  auto w = b.input("w", ctfx::f32, {Q, Q});
  auto c = x * 2.0;
  auto y = ctfx::addmm(c, x, w, 0.5, 1.0);
  auto t = x + 1.0;
  auto z = ctfx::mm(t, w);
  b.output(y + 0.0, z + 0.0);
});
using inplace_plan = ctfx::compiled<decltype(inplace_graph)>;
#endif

}  // namespace

TEST_CASE("products: the FX importer reads mm, addmm, bmm and baddbmm with beta and alpha, and the printers write them back") {
  const ctfx::fx_parse_result r = ctfx::parse_fx(R"fx(
class GraphModule(torch.nn.Module):
    def forward(self, arg0_1: "f32[5][1]cpu", arg1_1: "f32[2, 4, 6][24, 6, 1]cpu", arg2_1: "f32[2, 6, 5][30, 5, 1]cpu", arg3_1: "f32[4, 6][6, 1]cpu"):
        baddbmm: "f32[2, 4, 5][20, 5, 1]cpu" = torch.ops.aten.baddbmm.default(arg0_1, arg1_1, arg2_1, beta = -1.0, alpha = 0.75)
        bmm: "f32[2, 4, 5][20, 5, 1]cpu" = torch.ops.aten.bmm.default(arg1_1, arg2_1)
        permute: "f32[6, 4][1, 6]cpu" = torch.ops.aten.permute.default(arg3_1, [1, 0])
        mm: "f32[4, 4][4, 1]cpu" = torch.ops.aten.mm.default(arg3_1, permute)
        addmm: "f32[4, 4][4, 1]cpu" = torch.ops.aten.addmm.default(mm, arg3_1, permute, beta = 2)
        return (baddbmm, bmm, addmm)
)fx");
  REQUIRE_MESSAGE(r.ok(), ctfx::to_string(r.error));
  const ctfx::ir& g = r.graph;
  CHECK(ctfx::product_scalars_of(g, g.find("baddbmm")).beta == -1.0);
  CHECK(ctfx::product_scalars_of(g, g.find("baddbmm")).alpha == 0.75);
  CHECK(ctfx::product_scalars_of(g, g.find("addmm")).beta == 2.0);
  CHECK(ctfx::product_scalars_of(g, g.find("addmm")).alpha == 1.0);
  const std::string fx = ctfx::to_fx(g);
  CHECK_MESSAGE(fx.find("torch.ops.aten.baddbmm.default(arg0_1, arg1_1, arg2_1, beta = -1.0, alpha = 0.75)") != std::string::npos, fx);
  CHECK_MESSAGE(fx.find("torch.ops.aten.addmm.default(mm, arg3_1, permute, beta = 2.0)") != std::string::npos, fx);
  CHECK_MESSAGE(fx.find("torch.ops.aten.bmm.default(arg1_1, arg2_1)") != std::string::npos, fx);
  const ctfx::fx_parse_result again = ctfx::parse_fx(fx);  // what it prints, it reads back the same
  REQUIRE_MESSAGE(again.ok(), ctfx::to_string(again.error));
  CHECK(ctfx::to_fx(again.graph) == fx);
  const std::string text = ctfx::to_text(g);
  CHECK_MESSAGE(text.find("addmm(%mm, %arg3_1, %permute, beta=2)") != std::string::npos, text);
  // A wrong inner extent in FX text is the shape rule's message, at its line.
  const ctfx::fx_parse_result bad = ctfx::parse_fx(R"fx(
class GraphModule(torch.nn.Module):
    def forward(self, arg0_1: "f32[4, 6][6, 1]cpu", arg1_1: "f32[5, 3][3, 1]cpu"):
        mm: "f32[4, 3][3, 1]cpu" = torch.ops.aten.mm.default(arg0_1, arg1_1)
        return (mm,)
)fx");
  CHECK_FALSE(bad.ok());
  CHECK_MESSAGE(ctfx::to_string(bad.error).find("the inner extents differ") != std::string::npos, ctfx::to_string(bad.error));
  // attention (what F.scaled_dot_product_attention captures as on CPU): its composition prints and
  // reads back; the logsumexp has the kernel's transposed [B, L, H] layout; dropout is refused.
  const char* sdpa = R"fx(
class GraphModule(torch.nn.Module):
    def forward(self, arg0_1: "f32[2, 3, 5, 8][120, 40, 8, 1]cpu", arg1_1: "f32[2, 3, 7, 8][168, 56, 8, 1]cpu", arg2_1: "f32[2, 3, 7, 8][168, 56, 8, 1]cpu"):
        _scaled_dot_product_flash_attention_for_cpu = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default(arg0_1, arg1_1, arg2_1, DROPOUT, True)
        getitem: "f32[2, 3, 5, 8][120, 40, 8, 1]cpu" = _scaled_dot_product_flash_attention_for_cpu[0]
        getitem_1: "f32[2, 3, 5][15, 1, 3]cpu" = _scaled_dot_product_flash_attention_for_cpu[1];  _scaled_dot_product_flash_attention_for_cpu = None
        return (getitem, getitem_1)
)fx";
  std::string text0 = sdpa;
  text0.replace(text0.find("DROPOUT"), 7, "0.0");
  const ctfx::fx_parse_result a = ctfx::parse_fx(text0);
  REQUIRE_MESSAGE(a.ok(), ctfx::to_string(a.error));
  int bmms = 0;
  for (std::int32_t i = 0; i < a.graph.size(); ++i) bmms += a.graph[i].op == ctfx::op_kind::bmm;
  CHECK(bmms == 2);
  const ctfx::fx_parse_result a2 = ctfx::parse_fx(ctfx::to_fx(a.graph));
  REQUIRE_MESSAGE(a2.ok(), ctfx::to_string(a2.error));
  CHECK(ctfx::to_fx(a2.graph) == ctfx::to_fx(a.graph));
  std::string text1 = sdpa;
  text1.replace(text1.find("DROPOUT"), 7, "0.1");
  const ctfx::fx_parse_result d = ctfx::parse_fx(text1);
  CHECK_FALSE(d.ok());
  CHECK_MESSAGE(ctfx::to_string(d.error).find("node '_scaled_dot_product_flash_attention_for_cpu': dropout_p other than 0 is random") !=
                    std::string::npos, ctfx::to_string(d.error));
  CHECK_MESSAGE(ctfx::to_string(d.error).find("[rule valid-argument]") != std::string::npos, ctfx::to_string(d.error));
}

TEST_CASE("products: shapes, dtypes and the refusals name the node and the rule") {
  CHECK(error_of([](builder& b) {
          b.output(ctfx::mm(b.input("a", ctfx::f32, {3, 4}), b.input("b", ctfx::f32, {5, 6})));
        }).find("the inner extents differ") != std::string::npos);
  CHECK(error_of([](builder& b) {
          b.output(ctfx::mm(b.input("a", ctfx::f32, {3, 4}), b.input("b", ctfx::f64, {4, 6})));
        }).find("[rule dtype-mismatch]") != std::string::npos);
  CHECK(error_of([](builder& b) {
          b.output(ctfx::mm(b.input("a", ctfx::f16, {3, 4}), b.input("b", ctfx::f16, {4, 6})));
        }).find("f16 and bf16 are refused") != std::string::npos);
  CHECK(error_of([](builder& b) {
          b.output(ctfx::bmm(b.input("a", ctfx::f32, {2, 3, 4}), b.input("b", ctfx::f32, {3, 4, 6})));
        }).find("differ in their batch extent") != std::string::npos);
  CHECK(error_of([](builder& b) {
          b.output(ctfx::mm(b.input("a", ctfx::f32, {2, 3, 4}), b.input("b", ctfx::f32, {4, 6})));
        }).find("mm multiplies matrices [m, k] and [k, n]") != std::string::npos);
  CHECK(error_of([](builder& b) {
          b.output(ctfx::addmm(b.input("c", ctfx::f32, {5}), b.input("a", ctfx::f32, {3, 4}), b.input("b", ctfx::f32, {4, 6})));
        }).find("does not broadcast to the product's shape") != std::string::npos);
  CHECK(error_of([](builder& b) {
          b.output(ctfx::addmm(b.input("c", ctfx::i32, {6}), b.input("a", ctfx::i32, {3, 4}), b.input("b", ctfx::i32, {4, 6}), 0.5));
        }).find("beta and alpha must be integers") != std::string::npos);
  const ctfx::ir g = ctfx::build_checked([](builder& b) {
    auto a = b.input("a", ctfx::f32, {3, 4});
    auto w = b.input("w", ctfx::f32, {6, 4});
    b.output(ctfx::addmm(b.input("c", ctfx::f32, {6}), a, w.transpose(0, 1), 0.25, 3.0), ctfx::matmul(a, w.transpose(0, 1)));
  });
  REQUIRE(g.error.ok());
  const std::int32_t am = g.find("addmm");
  REQUIRE(am >= 0);
  CHECK(g.meta(am).rank == 2);
  CHECK(g.meta(am).size[0] == ctfx::sym_expr(3));
  CHECK(g.meta(am).size[1] == ctfx::sym_expr(6));
  CHECK(g.meta(am).is_contiguous());
  CHECK(ctfx::product_scalars_of(g, am).beta == 0.25);
  CHECK(ctfx::product_scalars_of(g, am).alpha == 3.0);
}

#if defined(CTFX_HAVE_CBLAS)
TEST_CASE("products: a linear layer and a two-layer MLP, exact values on every executor") {
  std::vector<buffer> ins = {exact_values<float>(ctfx::tensor_desc::contiguous(ctfx::f32, {M, K}), 1),
                             exact_values<float>(ctfx::tensor_desc::contiguous(ctfx::f32, {H, K}), 2),
                             exact_values<float>(ctfx::tensor_desc::contiguous(ctfx::f32, {H}), 3),
                             exact_values<float>(ctfx::tensor_desc::contiguous(ctfx::f32, {N, H}), 4),
                             exact_values<float>(ctfx::tensor_desc::contiguous(ctfx::f32, {N}), 5)};
  const auto out = run_all<mlp_plan>(mlp_graph, ins, {ctfx::tensor_desc::contiguous(ctfx::f32, {M, N}), ctfx::tensor_desc::contiguous(ctfx::f32, {M, H})});
  auto x = [&](ctfx::index_t i, ctfx::index_t q) { return static_cast<double>(ins[0].at<float>(static_cast<std::size_t>(i * K + q))); };
  auto w1 = [&](ctfx::index_t j, ctfx::index_t q) { return static_cast<double>(ins[1].at<float>(static_cast<std::size_t>(j * K + q))); };
  auto w2 = [&](ctfx::index_t j, ctfx::index_t q) { return static_cast<double>(ins[3].at<float>(static_cast<std::size_t>(j * H + q))); };
  std::vector<double> h(static_cast<std::size_t>(M * H));
  int wrong = 0;
  for (ctfx::index_t i = 0; i < M; ++i)
    for (ctfx::index_t j = 0; j < H; ++j) {
      const double xw = exact([&](ctfx::index_t q) { return x(i, q); }, [&](ctfx::index_t q) { return w1(j, q); }, [] { return 0.0; }, K, 0, 1);
      wrong += out[1].at<float>(static_cast<std::size_t>(i * H + j)) != static_cast<float>(xw);
      const double hv = xw + static_cast<double>(ins[2].at<float>(static_cast<std::size_t>(j)));
      h[static_cast<std::size_t>(i * H + j)] = hv > 0 ? hv : 0;
    }
  for (ctfx::index_t i = 0; i < M; ++i)
    for (ctfx::index_t j = 0; j < N; ++j) {
      const double y = exact([&](ctfx::index_t q) { return h[static_cast<std::size_t>(i * H + q)]; }, [&](ctfx::index_t q) { return w2(j, q); },
                             [&] { return static_cast<double>(ins[4].at<float>(static_cast<std::size_t>(j))); }, H, 0.5, 2.0);
      wrong += out[0].at<float>(static_cast<std::size_t>(i * N + j)) != static_cast<float>(y);
    }
  CHECK(wrong == 0);
}

TEST_CASE("products: attention scores, bmm and baddbmm with a transposed operand and a broadcast c, exact in f64") {
  std::vector<buffer> ins;
  for (int s = 0; s < 3; ++s) ins.push_back(exact_values<double>(ctfx::tensor_desc::contiguous(ctfx::f64, {BQ, S, D}), s));
  ins.push_back(exact_values<double>(ctfx::tensor_desc::contiguous(ctfx::f64, {S, S}), 7));
  const auto out = run_all<attention_plan>(attention_graph, ins, {ctfx::tensor_desc::contiguous(ctfx::f64, {BQ, S, S}), ctfx::tensor_desc::contiguous(ctfx::f64, {BQ, S, D}),
                                                 ctfx::tensor_desc::contiguous(ctfx::f64, {BQ, S, S})});
  auto at = [&](int t, ctfx::index_t bi, ctfx::index_t i, ctfx::index_t q) { return ins[static_cast<std::size_t>(t)].at<double>(static_cast<std::size_t>((bi * S + i) * D + q)); };
  int wrong = 0;
  for (ctfx::index_t bi = 0; bi < BQ; ++bi)
    for (ctfx::index_t i = 0; i < S; ++i)
      for (ctfx::index_t j = 0; j < S; ++j) {
        const double qk = exact([&](ctfx::index_t q) { return at(0, bi, i, q); }, [&](ctfx::index_t q) { return at(1, bi, j, q); }, [] { return 0.0; }, D, 0, 1);
        wrong += out[0].at<double>(static_cast<std::size_t>((bi * S + i) * S + j)) != qk * 0.125;
        const double c = ins[3].at<double>(static_cast<std::size_t>(i * S + j));
        wrong += out[2].at<double>(static_cast<std::size_t>((bi * S + i) * S + j)) != c + 0.5 * qk;
      }
  CHECK(wrong == 0);
}

TEST_CASE("products: scaled_dot_product_attention (grouped-query, causal, bool and float masks) against a direct f64 loop") {
  std::vector<buffer> ins;
  const ctfx::tensor_desc dq = ctfx::tensor_desc::contiguous(ctfx::f64, {AB, AHQ, AL, AE}), dk = ctfx::tensor_desc::contiguous(ctfx::f64, {AB, AHK, AS, AE}),
                          dv = ctfx::tensor_desc::contiguous(ctfx::f64, {AB, AHK, AS, AEV}), dm = ctfx::tensor_desc::contiguous(ctfx::b8, {AL, AS}),
                          db = ctfx::tensor_desc::contiguous(ctfx::f64, {AB, 1, AL, AS});
  ins.push_back(exact_values<double>(dq, 1));
  ins.push_back(exact_values<double>(dk, 2));
  ins.push_back(exact_values<double>(dv, 3));
  buffer keep(dm);
  for (ctfx::index_t i = 0; i < AL * AS; ++i) keep.bytes[static_cast<std::size_t>(i)] = std::byte{(i / AS == 1 || i % 3 == 2) ? std::uint8_t{0} : std::uint8_t{1}};
  ins.push_back(keep);
  ins.push_back(exact_values<double>(db, 4));
  for (ctfx::index_t j = 3; j < AS; ++j) {  // batch 0, row 2: columns 3.. at -inf
    const double ninf = -std::numeric_limits<double>::infinity();
    std::memcpy(ins[4].bytes.data() + static_cast<std::size_t>(2 * AS + j) * sizeof(double), &ninf, sizeof(double));
  }
  const ctfx::tensor_desc o = ctfx::tensor_desc::contiguous(ctfx::f64, {AB, AHQ, AL, AEV}), l = ctfx::tensor_desc::contiguous(ctfx::f64, {AB, AHQ, AL});
  const auto out = run_all<sdpa_plan>(sdpa_graph, ins, {o, l, o, l});
  auto at = [&](int t, ctfx::index_t bi, ctfx::index_t h, ctfx::index_t i, ctfx::index_t q, ctfx::index_t heads, ctfx::index_t rows, ctfx::index_t cols) {
    return ins[static_cast<std::size_t>(t)].at<double>(static_cast<std::size_t>(((bi * heads + h) * rows + i) * cols + q));
  };
  double worst = 0;
  int dead_rows = 0;
  for (int which = 0; which < 2; ++which)
    for (ctfx::index_t bi = 0; bi < AB; ++bi)
      for (ctfx::index_t h = 0; h < AHQ; ++h)
        for (ctfx::index_t i = 0; i < AL; ++i) {
          const ctfx::index_t hk = h / (AHQ / AHK);
          double s[AS], mx = -std::numeric_limits<double>::infinity();
          for (ctfx::index_t j = 0; j < AS; ++j) {
            double d = 0;
            for (ctfx::index_t q = 0; q < AE; ++q) d += at(0, bi, h, i, q, AHQ, AL, AE) * at(1, bi, hk, j, q, AHK, AS, AE);
            if (which == 0) {
              const bool kept = j <= i && keep.bytes[static_cast<std::size_t>(i * AS + j)] != std::byte{0};
              s[j] = kept ? d / 2 : -std::numeric_limits<double>::infinity();  // scale 1 / sqrt(4)
            } else {
              s[j] = d * 0.3 + ins[4].at<double>(static_cast<std::size_t>((bi * AL + i) * AS + j));
            }
            mx = std::max(mx, s[j]);
          }
          double z = 0;
          for (ctfx::index_t j = 0; j < AS; ++j) z += mx == -std::numeric_limits<double>::infinity() ? 0 : std::exp(s[j] - mx);
          const bool dead = mx == -std::numeric_limits<double>::infinity();
          dead_rows += dead;
          for (ctfx::index_t c = 0; c < AEV; ++c) {
            double y = 0;
            for (ctfx::index_t j = 0; j < AS && !dead; ++j) y += std::exp(s[j] - mx) / z * at(2, bi, hk, j, c, AHK, AS, AEV);
            const double got = out[static_cast<std::size_t>(2 * which)].at<double>(static_cast<std::size_t>(((bi * AHQ + h) * AL + i) * AEV + c));
            worst = std::max(worst, std::abs(got - y));
          }
          const double lse = dead ? 0.0 : mx + std::log(z);
          worst = std::max(worst, std::abs(out[static_cast<std::size_t>(2 * which + 1)].at<double>(static_cast<std::size_t>((bi * AHQ + h) * AL + i)) - lse));
        }
  CHECK(dead_rows == AB * AHQ);  // row 1 of the bool mask, in every head
  CHECK(worst < 1e-13);
  // what the builder refuses, naming the rule
  CHECK(error_of([](builder& b) {
          auto x = b.input("x", ctfx::f32, {2, 5, 4});
          b.output(ctfx::scaled_dot_product_attention(x, x, x).out);
        }).find("must be 4-d [batch, heads, length, dim]") != std::string::npos);
  CHECK(error_of([](builder& b) {
          auto q = b.input("q", ctfx::f32, {1, 3, 5, 4});
          auto k = b.input("k", ctfx::f32, {1, 2, 5, 4});
          b.output(ctfx::scaled_dot_product_attention(q, k, k).out);
        }).find("a multiple of k's and v's (grouped-query attention), both numbers [rule valid-argument]") != std::string::npos);
}

#endif

TEST_CASE("products: integer mm, addmm and matmul are exact modulo 2^bits") {
  std::vector<buffer> ins = {buffer(ctfx::tensor_desc::contiguous(ctfx::i8, {5, 40})), buffer(ctfx::tensor_desc::contiguous(ctfx::i8, {40, 7})),
                             buffer(ctfx::tensor_desc::contiguous(ctfx::i8, {7})), buffer(ctfx::tensor_desc::contiguous(ctfx::i64, {4, 6}))};
  for (int t = 0; t < 3; ++t)
    for (std::size_t i = 0; i < ins[static_cast<std::size_t>(t)].bytes.size(); ++i)
      ins[static_cast<std::size_t>(t)].bytes[i] = static_cast<std::byte>(static_cast<std::int8_t>(100 - static_cast<int>((i * 53 + static_cast<std::size_t>(t)) % 201)));
  for (std::size_t i = 0; i < 24; ++i) {
    const std::int64_t v = (static_cast<std::int64_t>(i) - 12) * 3037000493LL;  // products past 2^63
    std::memcpy(ins[3].bytes.data() + 8 * i, &v, 8);
  }
  const auto out = run_all<int_plan>(int_graph, ins, {ctfx::tensor_desc::contiguous(ctfx::i8, {5, 7}), ctfx::tensor_desc::contiguous(ctfx::i8, {5, 7}),
                                           ctfx::tensor_desc::contiguous(ctfx::i64, {4, 4})});
  int wrong = 0;
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 7; ++j) {
      std::int64_t s = 0;
      for (int q = 0; q < 40; ++q) s += std::int64_t{ins[0].at<std::int8_t>(static_cast<std::size_t>(i * 40 + q))} * ins[1].at<std::int8_t>(static_cast<std::size_t>(q * 7 + j));
      wrong += out[0].at<std::int8_t>(static_cast<std::size_t>(i * 7 + j)) != static_cast<std::int8_t>(static_cast<std::uint8_t>(s & 0xff));
      const std::int64_t acc = 3 * std::int64_t{ins[2].at<std::int8_t>(static_cast<std::size_t>(j))} - 2 * s;
      wrong += out[1].at<std::int8_t>(static_cast<std::size_t>(i * 7 + j)) != static_cast<std::int8_t>(static_cast<std::uint8_t>(acc & 0xff));
    }
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      std::uint64_t s = 0;
      for (int q = 0; q < 6; ++q)
        s += static_cast<std::uint64_t>(ins[3].at<std::int64_t>(static_cast<std::size_t>(i * 6 + q))) * static_cast<std::uint64_t>(ins[3].at<std::int64_t>(static_cast<std::size_t>(j * 6 + q)));
      wrong += out[2].at<std::int64_t>(static_cast<std::size_t>(i * 4 + j)) != static_cast<std::int64_t>(s);
    }
  CHECK(wrong == 0);
}

#if defined(CTFX_HAVE_CBLAS)
TEST_CASE("products: addmm accumulates in its c's buffer where c dies, mm never takes its operand's") {
  const ctfx::ir g = inplace_plan::graph();
  const ctfx::liveness L = inplace_plan::life();
  const ctfx::reuse_plan R = ctfx::plan_reuse(L);
  auto buffer_of = [&](std::string_view name) { return L.buffer_of[static_cast<std::size_t>(g.meta(g.find(name)).storage)]; };
  const std::int32_t c = buffer_of("mul"), y = buffer_of("addmm"), t = buffer_of("add"), z = buffer_of("mm");
  REQUIRE(c >= 0);
  REQUIRE(z >= 0);
  bool y_takes_c = false, z_takes_t = false;
  for (const ctfx::plan_line& l : R.lines) {
    y_takes_c = y_takes_c || (l.kind == ctfx::line_kind::reuse && l.buffer == y && l.from == c);
    z_takes_t = z_takes_t || (l.kind == ctfx::line_kind::reuse && l.buffer == z && l.from == t);
  }
  CHECK(y_takes_c);
  CHECK_FALSE(z_takes_t);
  const ctfx::fusion f = inplace_plan::fused();
  ctfx::listing_options lo;
  lo.fused = &f;
  const std::string listing = ctfx::listing(g, L, R, lo);
  CHECK_MESSAGE(listing.find("addmm(%mul, %x, %w, beta=0.5)  # step") != std::string::npos, listing);
  CHECK_MESSAGE(listing.find("extern kernel (a BLAS gemm, accumulating into its c)") != std::string::npos, listing);
  std::vector<buffer> ins = {exact_values<float>(ctfx::tensor_desc::contiguous(ctfx::f32, {Q, Q}), 1),
                             exact_values<float>(ctfx::tensor_desc::contiguous(ctfx::f32, {Q, Q}), 2)};
  const auto out = run_all<inplace_plan>(inplace_graph, ins, {ctfx::tensor_desc::contiguous(ctfx::f32, {Q, Q}), ctfx::tensor_desc::contiguous(ctfx::f32, {Q, Q})});
  int wrong = 0;
  for (ctfx::index_t i = 0; i < Q; ++i)
    for (ctfx::index_t j = 0; j < Q; ++j) {
      auto x = [&](ctfx::index_t r, ctfx::index_t q) { return static_cast<double>(ins[0].at<float>(static_cast<std::size_t>(r * Q + q))); };
      auto w = [&](ctfx::index_t q) { return static_cast<double>(ins[1].at<float>(static_cast<std::size_t>(q * Q + j))); };
      const double ey = exact([&](ctfx::index_t q) { return x(i, q); }, w, [&] { return 2 * x(i, j); }, Q, 0.5, 1.0);
      const double ez = exact([&](ctfx::index_t q) { return x(i, q) + 1; }, w, [] { return 0.0; }, Q, 0, 1);
      wrong += out[0].at<float>(static_cast<std::size_t>(i * Q + j)) != static_cast<float>(ey);
      wrong += out[1].at<float>(static_cast<std::size_t>(i * Q + j)) != static_cast<float>(ez);
    }
  CHECK(wrong == 0);
}

TEST_CASE("products: strided and transposed caller outputs, and a backend without its BLAS refused before any write") {
  // The MLP's outputs in column-major caller buffers (BLAS writes the transposed result).
  std::vector<buffer> ins = {exact_values<float>(ctfx::tensor_desc::contiguous(ctfx::f32, {M, K}), 1),
                             exact_values<float>(ctfx::tensor_desc::contiguous(ctfx::f32, {H, K}), 2),
                             exact_values<float>(ctfx::tensor_desc::contiguous(ctfx::f32, {H}), 3),
                             exact_values<float>(ctfx::tensor_desc::contiguous(ctfx::f32, {N, H}), 4),
                             exact_values<float>(ctfx::tensor_desc::contiguous(ctfx::f32, {N}), 5)};
  std::vector<buffer> dense = {buffer(ctfx::tensor_desc::contiguous(ctfx::f32, {M, N})), buffer(ctfx::tensor_desc::contiguous(ctfx::f32, {M, H}))};
  REQUIRE(mlp_plan::run(refs(ins), refs(dense)).ok);
  ctfx::tensor_desc t0 = ctfx::tensor_desc::contiguous(ctfx::f32, {M, N}), t1 = ctfx::tensor_desc::contiguous(ctfx::f32, {M, H});
  t0.stride[0] = 1; t0.stride[1] = M;
  t1.stride[0] = 1; t1.stride[1] = M;
  std::vector<buffer> cm = {buffer(t0), buffer(t1)};
  ctfx::runtime_plan rp(mlp_plan::graph());
  for (int which = 0; which < 2; ++which) {
    const ctfx::run_status st = which == 0 ? mlp_plan::run(refs(ins), refs(cm)) : rp.run(refs(ins), refs(cm));
    REQUIRE_MESSAGE(st.ok, st.message);
    int wrong = 0;
    for (ctfx::index_t i = 0; i < M; ++i)
      for (ctfx::index_t j = 0; j < N; ++j)
        wrong += cm[0].at<float>(static_cast<std::size_t>(j * M + i)) != dense[0].at<float>(static_cast<std::size_t>(i * N + j));
    for (ctfx::index_t i = 0; i < M; ++i)
      for (ctfx::index_t j = 0; j < H; ++j)
        wrong += cm[1].at<float>(static_cast<std::size_t>(j * M + i)) != dense[1].at<float>(static_cast<std::size_t>(i * H + j));
    CHECK(wrong == 0);
  }
  // This host file has no cuBLAS (nor CUDA): a run on the CUDA backend is refused, the outputs untouched.
  std::vector<buffer> untouched = {buffer(ctfx::tensor_desc::contiguous(ctfx::f32, {M, N})), buffer(ctfx::tensor_desc::contiguous(ctfx::f32, {M, H}))};
  const ctfx::device_ctx cuda{ctfx::backend::cuda};
  for (int which = 0; which < 2; ++which) {
    const ctfx::run_status st = which == 0 ? mlp_plan::run(refs(ins), refs(untouched), cuda) : rp.run(refs(ins), refs(untouched), cuda);
    CHECK_FALSE(st.ok);
    // (compiled<G> asks for its products' BLAS first; the program finds the backend missing first)
    if (which == 0) CHECK_MESSAGE(st.message.find("rule blas-available: node 'addmm' (addmm): this translation unit has no cuBLAS") != std::string::npos, st.message);
    else CHECK_MESSAGE(st.message.find("rule backend: the cuda backend is not compiled") != std::string::npos, st.message);
    for (const auto& b : untouched)
      for (std::byte x : b.bytes) CHECK(x == std::byte{0});
  }
}
#else
TEST_CASE("products: without a BLAS, runtime_plan refuses an f32 product before any write") {
  const ctfx::ir g = ctfx::build_checked([](builder& b) {
    auto a = b.input("a", ctfx::f32, {3, 4});
    b.output(ctfx::mm(a, b.input("w", ctfx::f32, {4, 5})));
  });
  ctfx::runtime_plan rp(g);
  std::vector<buffer> ins = {exact_values<float>(ctfx::tensor_desc::contiguous(ctfx::f32, {3, 4}), 1),
                             exact_values<float>(ctfx::tensor_desc::contiguous(ctfx::f32, {4, 5}), 2)};
  std::vector<buffer> out = {buffer(ctfx::tensor_desc::contiguous(ctfx::f32, {3, 5}))};
  const ctfx::run_status st = rp.run(refs(ins), refs(out));
  CHECK_FALSE(st.ok);
  CHECK_MESSAGE(st.message.find("rule blas-available: node 'mm' (mm): this build has no BLAS") != std::string::npos, st.message);
  CHECK_MESSAGE(st.message.find("link ctfx::blas") != std::string::npos, st.message);
  for (std::byte x : out[0].bytes) CHECK(x == std::byte{0});
}
#endif
