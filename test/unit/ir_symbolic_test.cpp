// Symbolic extents (core/symbolic.hpp): polynomial arithmetic on sym_expr, its bound (constant + four
// terms of at most four symbols) and the overflow that marks anything larger, evaluation, the
// three-valued comparisons, printing, and the builder's report of an overflow naming the node.
#include <doctest/doctest.h>
#include <ctfx.hpp>
#include <array>
#include <string>

namespace {

using ctfx::sym_expr;
constexpr sym_expr s0 = sym_expr::symbol(0);
constexpr sym_expr s1 = sym_expr::symbol(1);
constexpr sym_expr s2 = sym_expr::symbol(2);
constexpr sym_expr s3 = sym_expr::symbol(3);
constexpr sym_expr s4 = sym_expr::symbol(4);

// ----- arithmetic, at compile time -----
static_assert(sym_expr(6).is_static() && sym_expr(6).value() == 6);
static_assert(!s0.is_static());
static_assert(sym_expr(2) + sym_expr(3) == sym_expr(5));
static_assert(sym_expr(2) * sym_expr(-3) == sym_expr(-6));
static_assert(s0 + s0 == s0 * 2);                      // like terms merge
static_assert(s0 - s0 == sym_expr(0));                 // ... and vanish
static_assert((s0 - s0).is_static());
static_assert(s0 + s1 == s1 + s0);                     // terms are kept sorted
static_assert(s0 * s1 == s1 * s0);                     // monomials are sorted
static_assert((s0 + 1) * 2 == s0 * 2 + 2);
static_assert((s0 - 1) * s1 == s0 * s1 - s1);          // s0*s1 - s1: two terms, fits
static_assert((s1 + s2 - 1) * s3 == s1 * s3 + s2 * s3 - s3);  // three terms (a cat's extent times a stride)
static_assert((s1 + s2 - 1) * s3 == s3 * (s2 - 1 + s1));      // canonical: the order of operations does not matter
static_assert(s0 * s1 * s2 == s2 * (s1 * s0));         // degree 3, monomial symbols sorted
static_assert((s0 + s1) - s1 == s0);
static_assert(-(s0 - 3) == sym_expr(3) - s0);
static_assert(!(s0 == s1));
static_assert(!(s0 + 1 == s0));
static_assert((s0 * s0).t[0].degree() == 2);           // s0² is one monomial of degree 2
static_assert((s0 * 0).is_static() && (s0 * 0).value() == 0);

// ----- the bound, and overflow -----
static_assert(!(s0 + s1 + s2 + s3).overflow);
static_assert((s0 + s1 + s2 + s3 + s4).overflow);      // five terms
static_assert(!(s0 * s1 * s2 * s3).overflow);
static_assert((s0 * s1 * s2 * s3 * s4).overflow);      // a monomial of degree 5
static_assert(!((s0 + 1) * (s1 + 1)).overflow);        // s0*s1 + s0 + s1 + 1: three terms
static_assert(((s0 + 1) * (s1 + 1) * (s2 + 1)).overflow);  // seven terms
static_assert(!((s0 + 1) * (s0 - 1)).overflow);        // s0*s0 - 1: the s0 terms cancel
static_assert(((s0 + s1 + s2 + s3 + s4) - s4).overflow);   // overflow is sticky
static_assert(((s0 * s1 * s2 * s3 * s4) * 0 + 1).overflow);
static_assert(!((s0 + s1 + s2 + s3 + s4) == (s0 + s1 + s2 + s3)));
static_assert(!(s0 + s1 + s2 + s3 + s4).is_static());
static_assert(!ctfx::known_le(sym_expr(0), s0 + s1 + s2 + s3 + s4));  // an overflowed expression is never known

// ----- evaluation and comparisons -----
constexpr std::array<ctfx::index_t, 3> vals{4, 5, 7};
static_assert((s0 * s1 * 2 - s1 + 3).eval(vals) == 38);  // 2*20 - 5 + 3
static_assert((s0 * s0 - 1).eval(vals) == 15);
static_assert(sym_expr(9).eval(vals) == 9);
static_assert(ctfx::known_le(s0 - 1, s0));
static_assert(ctfx::known_le(s0, s0));
static_assert(!ctfx::known_le(s0 + 1, s0));
static_assert(!ctfx::known_le(s0, s1));                // unknown: false
static_assert(!ctfx::known_le(sym_expr(1), s0));       // symbols are sizes, but nothing is assumed
static_assert(ctfx::known_le(sym_expr(3), sym_expr(5)) && !ctfx::known_le(sym_expr(5), sym_expr(3)));
static_assert(ctfx::known_equal(s0 * s1, s1 * s0));
static_assert((s0 * s1 - 1).uses(1) && !(s0 * s1 - 1).uses(2) && !sym_expr(3).uses(0));
static_assert(((s1 + s2 - 1) * s3).eval(std::array<ctfx::index_t, 4>{9, 3, 5, 4}) == 28);  // (3 + 5 - 1) * 4
static_assert(s2.as_symbol() == 2 && (s2 * 2).as_symbol() == -1 && (s2 + 1).as_symbol() == -1 && (s1 * s2).as_symbol() == -1);

// ----- exact division (reshape(-1) of a symbolic shape) -----
constexpr bool divides(const sym_expr& a, const sym_expr& d, const sym_expr& want) {
  sym_expr q;
  return a.divide_exact(d, q) && q == want;
}
static_assert(divides(s0 * s1 * 4, sym_expr(4), s0 * s1));
static_assert(divides(s0 * s1 * 4 + 8, sym_expr(4), s0 * s1 + 2));
static_assert(divides(s0 * s1 * 6, s1 * 3, s0 * 2));
static_assert(divides(s0 * s1 + s1 * s2, s1, s0 + s2));
constexpr bool not_exact(const sym_expr& a, const sym_expr& d) {
  sym_expr q;
  return !a.divide_exact(d, q);
}
static_assert(not_exact(s0, sym_expr(2)) && not_exact(s0 * 4 + 2, sym_expr(4)) && not_exact(s0 * s1, s2) &&
              not_exact(s0 * s1 + 1, s1) && not_exact(s0, sym_expr(0)));

// ----- Python's division -----
static_assert(ctfx::floor_div(7, 2) == 3 && ctfx::floor_div(-7, 2) == -4 && ctfx::floor_div(7, -2) == -4 && ctfx::floor_div(-7, -2) == 3);
static_assert(ctfx::floor_mod(7, 3) == 1 && ctfx::floor_mod(-7, 3) == 2 && ctfx::floor_mod(7, -3) == -2 && ctfx::floor_mod(-6, 3) == 0);

std::string text(const sym_expr& e) {
  ctfx::ir g;
  for (const char* n : {"n", "m", "k"}) {
    ctfx::symbol s{};
    s.name = ctfx::name_t(n);
    g.syms.push_back(s);
  }
  return ctfx::to_string(g, e);
}

}  // namespace

TEST_CASE("ir symbolic: printing uses the symbols' names, in term order") {
  CHECK(text(sym_expr(-12)) == "-12");
  CHECK(text(s0) == "n");
  CHECK(text(s0 * 8) == "8*n");
  CHECK(text(s0 - 1) == "n - 1");
  CHECK(text(sym_expr(4) - s0) == "-n + 4");
  CHECK(text(s0 * s1 * 2 - s1 + 3) == "2*n*m - m + 3");
  CHECK(text(s1 + s0) == "n + m");
  CHECK(text(s0 * s0) == "n*n");
  CHECK(text(s0 + s1 + s2) == "n + m + k");
  CHECK(text((s1 + s2 - 1) * s0) == "-n + n*m + n*k");
  CHECK(text(s0 * s1 * s2 * 2) == "2*n*m*k");
  CHECK(text(s0 + s1 + s2 + s0 * s1 + s1 * s2) == "<overflow>");
  // A symbol the graph does not name prints as s<id>.
  CHECK(ctfx::to_string(ctfx::ir{}, s1 - 2) == "s1 - 2");
}

TEST_CASE("ir symbolic: the builder reports an extent too large, naming the node") {
  constexpr auto cat5 = [](ctfx::builder& g) {
    auto a = g.input("a", ctfx::f32, {g.sym("s0"), 8});
    auto b = g.input("b", ctfx::f32, {g.sym("s1"), 8});
    auto c = g.input("c", ctfx::f32, {g.sym("s2"), 8});
    auto d = g.input("d", ctfx::f32, {g.sym("s3"), 8});
    auto e = g.input("e", ctfx::f32, {g.sym("s4"), 8});
    g.output(ctfx::cat({a, b, c, d, e}));
  };
  constexpr auto input6 = [](ctfx::builder& g) {
    g.output(g.input("x", ctfx::f32, {g.sym("s0"), g.sym("s1"), g.sym("s2"), g.sym("s3"), g.sym("s4"), g.sym("s5")}));
  };
  constexpr auto input4 = [](ctfx::builder& g) {
    g.output(g.input("x", ctfx::f32, {g.sym("s0"), g.sym("s1"), g.sym("s2"), g.sym("s3")}));
  };
  // The storage a view reaches counts too: (s0 + s1 + s2 + s3 - 1)*s4 + ... has five terms.
  constexpr auto reach = [](ctfx::builder& g) {
    auto w = g.sym("s4");
    auto a = g.input("a", ctfx::f32, {g.sym("s0"), w});
    auto b = g.input("b", ctfx::f32, {g.sym("s1"), w});
    auto c = g.input("c", ctfx::f32, {g.sym("s2"), w});
    auto d = g.input("d", ctfx::f32, {g.sym("s3"), w});
    g.output(ctfx::cat({a, b, c, d}));
  };
  constexpr auto message = [](auto f) {
    ctfx::diagnostic d{};
    (void)ctfx::build_checked(f, &d);
    return d;
  };
  constexpr ctfx::diagnostic d1 = message(cat5);
  constexpr ctfx::diagnostic d2 = message(input6);
  constexpr ctfx::diagnostic d3 = message(reach);
  static_assert(d1.r == ctfx::rule::symbolic_limit && d1.node == 5);
  static_assert(d2.r == ctfx::rule::symbolic_limit && d2.node == 0);
  static_assert(d3.r == ctfx::rule::symbolic_limit && d3.node == 4);
  static_assert(message([](ctfx::builder& g) {  // three cat operands fit: (s0 + s1 + s2 - 1)*s4 + s4 - 1
    auto w = g.sym("s4");
    g.output(ctfx::cat({g.input("a", ctfx::f32, {g.sym("s0"), w}), g.input("b", ctfx::f32, {g.sym("s1"), w}),
                        g.input("c", ctfx::f32, {g.sym("s2"), w})}));
  }).ok());
  static_assert(message(input4).ok());  // strides s1*s2*s3, ... and the numel s0*s1*s2*s3 fit
  CHECK(std::string(d1.message()) ==
        "node 'cat' (cat) at ir_symbolic_test.cpp:126: a symbolic extent needs more than 4 terms of 4 symbols [rule symbolic-expression-limit]");
  CHECK(std::string(d2.message()) ==
        "node 'x' (placeholder) at ir_symbolic_test.cpp:129: its contiguous strides or the storage they span need more than 4 terms of 4 symbols [rule symbolic-expression-limit]");
}
