// A user op's fresh results in the layout its type declares (ctfx::fresh_layout: permuted, like an
// argument, or explicit strides): the metadata the graph gives them, the checks of a declaration
// (rule user-result-layout), and both executors allocating each result in that layout and handing
// it to the kernel with its strides.
#include <doctest/doctest.h>
#include "layout_text.hpp"
#include <string>
#include <vector>
#include <ctfx.hpp>
#include <ctfx/exec/compiled.hpp>
#include <ctfx/exec/runtime.hpp>

namespace {

using ctfx_test::layout;
using ctfx_test::str;

// 2 * x, written through the strides the plan gives the result (which the test records).
ctfx::index_t seen_stride[2] = {-1, -1};
void twice_kernel(const ctfx::custom_call& c) {
  const ctfx::tensor_ref& x = c.args[0];
  const ctfx::tensor_ref& r = c.results[0];
  seen_stride[0] = r.stride[0];
  seen_stride[1] = r.stride[1];
  for (ctfx::index_t i = 0; i < x.size[0]; ++i)
    for (ctfx::index_t j = 0; j < x.size[1]; ++j)
      static_cast<float*>(r.data)[i * r.stride[0] + j * r.stride[1]] = 2.0f * static_cast<const float*>(x.data)[i * x.stride[0] + j * x.stride[1]];
}

struct twice_col : ctfx::custom_op<"t::twice_col", "twice_col(Tensor x) -> Tensor"> {
  static constexpr ctfx::fresh_layout layout = ctfx::fresh_layout::permuted({1, 0});  // column-major
  static void run(const ctfx::custom_call& c) { twice_kernel(c); }
};
// Its results take the layout of its second argument (torch.empty_like(y)).
struct twice_like : ctfx::custom_op<"t::twice_like", "twice_like(Tensor x, Tensor y) -> Tensor"> {
  static constexpr ctfx::fresh_layout layout = ctfx::fresh_layout::like(1);
  static void run(const ctfx::custom_call& c) { twice_kernel(c); }
};
// Rows padded to 8 elements.
struct twice_padded : ctfx::custom_op<"t::twice_padded", "twice_padded(Tensor x) -> Tensor"> {
  static constexpr ctfx::fresh_layout layout = ctfx::fresh_layout::strides({8, 1});
  static void run(const ctfx::custom_call& c) { twice_kernel(c); }
};
struct twice_row : ctfx::custom_op<"t::twice_row", "twice_row(Tensor x) -> Tensor"> {
  static void run(const ctfx::custom_call& c) { twice_kernel(c); }
};
struct cl_op : ctfx::custom_op<"t::cl", "cl(Tensor x) -> Tensor"> {
  static constexpr ctfx::fresh_layout layout = ctfx::fresh_layout::permuted({0, 2, 3, 1});
};

// The result of op Op on a [3, 4] input ("fresh"), that result plus 1 ("after"), and, for like(1),
// a transposed [4, 3] input as the argument whose layout it takes.
template <class Op>
constexpr auto user_graph = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {3, 4});
  auto y = b.input("y", ctfx::f32, {4, 3});
  ctfx::tuple_ref r = [&] {
    if constexpr (Op::schema().n_args == 2) return b.call<Op>(x, y.transpose(0, 1));
    else return b.call<Op>(x);
  }();
  auto fresh = r[0].named("fresh");
  b.output(fresh, (fresh + 1.0f).named("after"));
});

template <class Op>
constexpr auto fresh_layout_text = layout([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {3, 4});
  auto y = b.input("y", ctfx::f32, {4, 3});
  ctfx::tuple_ref r = [&] {
    if constexpr (Op::schema().n_args == 2) return b.call<Op>(x, y.transpose(0, 1));
    else return b.call<Op>(x);
  }();
  b.output(r[0].named("fresh"));
}, "fresh");

// Runs user_graph<Op> (how: 0 compiled<G>, 1 runtime_plan): "fresh" and "after" into row-major buffers.
template <class Op>
ctfx::run_status run_user(int how, std::vector<float>& fresh, std::vector<float>& after) {
  std::vector<float> x(12), y(12, 0.0f);
  for (std::size_t i = 0; i < 12; ++i) x[i] = static_cast<float>(i);
  fresh.assign(12, -1.0f);
  after.assign(12, -1.0f);
  const std::vector<ctfx::tensor_ref> in{ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {3, 4}),
                                         ctfx::tensor_ref::contiguous(y.data(), ctfx::f32, {4, 3})};
  const std::vector<ctfx::tensor_ref> out{ctfx::tensor_ref::contiguous(fresh.data(), ctfx::f32, {3, 4}),
                                          ctfx::tensor_ref::contiguous(after.data(), ctfx::f32, {3, 4})};
  ctfx::kernel_table k;
  k.add<Op>();
  seen_stride[0] = seen_stride[1] = -1;
  return how == 0 ? ctfx::compiled<decltype(user_graph<Op>)>::run(in, out, {}, {}, &k)
                  : ctfx::runtime_plan(user_graph<Op>.get()).run(in, out, ctfx::backend::host, {}, &k);
}

template <class Op>
void check_runs(ctfx::index_t s0, ctfx::index_t s1) {
  for (int how = 0; how < 2; ++how) {
    CAPTURE(how);
    std::vector<float> fresh, after;
    const ctfx::run_status st = run_user<Op>(how, fresh, after);
    REQUIRE_MESSAGE(st.ok, st.message);
    CHECK(seen_stride[0] == s0);  // the kernel wrote the result in the declared layout
    CHECK(seen_stride[1] == s1);
    for (std::size_t i = 0; i < 12; ++i) {
      CHECK(fresh[i] == 2.0f * static_cast<float>(i));
      CHECK(after[i] == 2.0f * static_cast<float>(i) + 1.0f);
    }
  }
}

}  // namespace

TEST_CASE("user result layout: a user op's fresh result takes the layout its type declares") {
  CHECK(str(fresh_layout_text<twice_row>) == "f32[3, 4][4, 1]");      // none declared: row-major
  CHECK(str(fresh_layout_text<twice_col>) == "f32[3, 4][1, 3]");      // permuted({1, 0})
  CHECK(str(fresh_layout_text<twice_like>) == "f32[3, 4][1, 3]");     // like y.t(), a column-major view
  CHECK(str(fresh_layout_text<twice_padded>) == "f32[3, 4][8, 1]");   // strides({8, 1})
  // The elementwise rule follows the result's order.
  static_assert(user_graph<twice_col>.get().meta(user_graph<twice_col>.get().find("after")).stride[1] == ctfx::sym_expr(3));
  // Channels-last, from a permutation.
  CHECK(str(layout([](ctfx::builder& b) {
          auto x = b.input("x", ctfx::f32, {2, 3, 4, 5});
          b.output(b.call<cl_op>(x)[0].named("r"));
        }, "r")) == "f32[2, 3, 4, 5][60, 1, 15, 3]");
  // Symbolic extents, permuted.
  CHECK(str(layout([](ctfx::builder& b) {
          auto x = b.input("x", ctfx::f32, {b.sym("s0"), b.sym("s1")});
          b.output(b.call<twice_col>(x)[0].named("r"));
        }, "r")) == "f32[s0, s1][1, s0]");
}

TEST_CASE("user result layout: both executors allocate the declared layout and the kernel writes through it") {
  check_runs<twice_row>(4, 1);
  check_runs<twice_col>(1, 3);
  check_runs<twice_like>(1, 3);
  check_runs<twice_padded>(8, 1);
}

namespace {
struct bad_perm : ctfx::custom_op<"t::bad_perm", "bad_perm(Tensor x) -> Tensor"> {
  static constexpr ctfx::fresh_layout layout = ctfx::fresh_layout::permuted({1, 1});
};
struct bad_rank : ctfx::custom_op<"t::bad_rank", "bad_rank(Tensor x) -> Tensor"> {
  static constexpr ctfx::fresh_layout layout = ctfx::fresh_layout::permuted({2, 0, 1});
};
struct overlapping : ctfx::custom_op<"t::overlapping", "overlapping(Tensor x) -> Tensor"> {
  static constexpr ctfx::fresh_layout layout = ctfx::fresh_layout::strides({2, 1});
};
struct like_missing : ctfx::custom_op<"t::like_missing", "like_missing(Tensor x) -> Tensor"> {
  static constexpr ctfx::fresh_layout layout = ctfx::fresh_layout::like(3);
};
struct like_other : ctfx::custom_op<"t::like_other", "like_other(Tensor x, Tensor y) -> Tensor"> {
  static constexpr ctfx::fresh_layout layout = ctfx::fresh_layout::like(1);
};

template <class Op>
ctfx::diagnostic declared(bool symbolic = false) {
  ctfx::diagnostic d{};
  if (symbolic) {
    ctfx::build_checked([](ctfx::builder& b) {
      auto x = b.input("x", ctfx::f32, {b.sym("s0"), 4});
      b.output(b.call<Op>(x)[0]);
    }, &d);
    return d;
  }
  ctfx::build_checked([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {3, 4});
    auto y = b.input("y", ctfx::f32, {4, 4});
    if constexpr (Op::schema().n_args == 2) b.output(b.call<Op>(x, y)[0]);
    else b.output(b.call<Op>(x)[0]);
  }, &d);
  return d;
}
}  // namespace

TEST_CASE("user result layout: a declaration that is not a layout of the results is an error naming the call, the rule and the fix") {
  struct want {
    ctfx::diagnostic d;
    const char* text;
  };
  const want cases[] = {
      {declared<bad_perm>(), "node 'custom' (custom): 't::bad_perm' declares its results permuted (1, 1), which is not a permutation of the 2 dimensions of f32[3, 4]"},
      {declared<bad_rank>(), "declares its results permuted (2, 0, 1), which is not a permutation of the 2 dimensions of f32[3, 4]"},
      {declared<overlapping>(), "'t::overlapping' declares strides that place two elements of its results at one address (or are negative): f32[3, 4] with strides (2, 1)"},
      {declared<overlapping>(true), "'t::overlapping' declares strides for results of symbolic extents f32[s0, 4]"},
      {declared<like_missing>(), "declares its results like argument 3, which it does not have (1 tensor arguments)"},
      {declared<like_other>(), "declares its results like argument 1 f32[4, 4], whose extents are not theirs f32[3, 4]"},
  };
  for (const want& w : cases) {
    CAPTURE(w.d.message());
    CHECK(w.d.r == ctfx::rule::result_layout);
    CHECK(w.d.message().find(w.text) != std::string_view::npos);
    CHECK(ctfx::name_of(w.d.r) == "user-result-layout");
  }
  CHECK(ctfx::fix_of(ctfx::rule::result_layout).find("fresh_layout::permuted") != std::string_view::npos);
}
