// Captured PyTorch programs run with their captured inputs (test/data/fx/<name>.input<i>.npy, made by
// tools/fx_capture/capture.py from torch eager on CPU): the run-time plan (sequential and OpenMP) and
// the reference executor must give PyTorch's outputs and mutated inputs bit for bit.
#include <doctest/doctest.h>
#include <cmath>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <utility>
#include <string>
#include <vector>
#include <ctfx.hpp>
#include <ctfx/exec/runtime.hpp>
#include <ctfx/graph/fx_parse.hpp>
#include <ctfx/io/npy.hpp>

namespace {

std::string data_dir() {
  std::string f = __FILE__;
  return f.substr(0, f.rfind('/')) + "/../data/fx/";
}

// The files <name>.<kind><i>.npy for i = 0, 1, ... (stops at the first missing one; mutated files
// are sparse, so those are looked up by index).
std::vector<ctfx::host_array> read_all(const std::string& name, const char* kind, int count = -1) {
  std::vector<ctfx::host_array> r;
  for (int i = 0; count < 0 || i < count; ++i) {
    const std::string p = data_dir() + name + "." + kind + std::to_string(i) + ".npy";
    if (!std::filesystem::exists(p)) {
      if (count < 0) break;
      r.emplace_back();
      continue;
    }
    ctfx::npy_read f = ctfx::read_npy(p);
    REQUIRE_MESSAGE(f.ok, f.message);
    r.push_back(std::move(f.array));
  }
  return r;
}

bool same_bytes(const ctfx::host_array& a, const ctfx::host_array& b) {
  return a.desc.dt == b.desc.dt && a.bytes.size() == b.bytes.size() &&
         std::memcmp(a.bytes.data(), b.bytes.data(), a.bytes.size()) == 0;
}

// The traced layout of each tensor input (the placeholders' strides: a permuted, Fortran-order or
// channels-last input was traced as such, and a run checks that its inputs have those strides).
// Symbolic strides are evaluated with the symbols the inputs' extents bind (as a run binds them);
// a stride that uses a symbol no extent binds stays -1.
std::vector<ctfx::tensor_desc> traced_layouts(const ctfx::ir& g, const std::vector<ctfx::host_array>& inputs) {
  std::vector<const ctfx::tensor_meta*> metas;
  for (std::int32_t i = 0; i < g.size(); ++i)
    if (g[i].op == ctfx::op_kind::placeholder && g.meta(i).is_tensor()) metas.push_back(&g.meta(i));
  std::vector<ctfx::index_t> symbols(g.syms.size(), -1);
  for (std::size_t k = 0; k < metas.size() && k < inputs.size(); ++k)
    for (int d = 0; d < metas[k]->rank && d < inputs[k].desc.rank; ++d)
      if (const int s = metas[k]->size[d].as_symbol(); s >= 0 && symbols[static_cast<std::size_t>(s)] < 0)
        symbols[static_cast<std::size_t>(s)] = inputs[k].desc.size[d];
  std::vector<ctfx::tensor_desc> r;
  for (const ctfx::tensor_meta* mp : metas) {
    const ctfx::tensor_meta& m = *mp;
    ctfx::tensor_desc d;
    d.dt = m.dt;
    d.rank = m.rank;
    for (int k = 0; k < m.rank; ++k) {
      bool bound = true;
      for (std::size_t s = 0; s < symbols.size(); ++s)
        bound = bound && (!m.stride[k].uses(static_cast<int>(s)) || symbols[s] >= 0);
      d.size[k] = m.size[k].is_static() ? m.size[k].value() : -1;
      d.stride[k] = bound ? m.stride[k].eval(symbols) : -1;
    }
    r.push_back(d);
  }
  return r;
}

// Element `linear` (row-major over the extents) at its strided position, or back.
std::size_t strided_at(const ctfx::tensor_desc& d, std::size_t linear) {
  std::size_t at = 0;
  for (int k = d.rank - 1; k >= 0; --k) {
    const auto n = static_cast<std::size_t>(d.size[k]);
    at += (linear % n) * static_cast<std::size_t>(d.stride[k]);
    linear /= n;
  }
  return at;
}
bool traced_differs(const ctfx::tensor_desc& want, const ctfx::host_array& a) {
  if (want.rank != a.desc.rank) return false;
  bool same = true;
  for (int k = 0; k < want.rank; ++k) {
    if ((want.size[k] >= 0 && want.size[k] != a.desc.size[k]) || want.stride[k] < 0) return false;
    same = same && (a.desc.size[k] == 1 || want.stride[k] == a.desc.stride[k]);
  }
  return !same && a.desc.numel() > 0;
}
// A strided array read back in row-major order.
ctfx::host_array densify(const ctfx::host_array& a) {
  ctfx::host_array r;
  r.desc = a.desc;
  r.desc.set_contiguous();
  const auto es = static_cast<std::size_t>(ctfx::size_of(a.desc.dt));
  r.bytes.resize(static_cast<std::size_t>(a.desc.numel()) * es);
  for (std::size_t i = 0; i < static_cast<std::size_t>(a.desc.numel()); ++i)
    std::memcpy(r.bytes.data() + i * es, a.bytes.data() + strided_at(a.desc, i) * es, es);
  return r;
}

// The programs whose floats PyTorch itself does not compute portably, and by how many ulp ctfx's
// may differ (the same list as CTFX_OPT_ULP in tools/ctfx_opt/CMakeLists.txt): tanh_op (SLEEF in
// vector lanes, libm in a loop's tail: the bits depend on an element's position and the CPU's
// vector width), sigmoid_op (its exp, the same way; ctfx's is its own, kernels/math.hpp), unary_chain
// (MKL VML's sqrt, not correctly rounded; ctfx's is), int_to_float_unary (exp, sin, cos of integers
// converted to f32: SLEEF's or libm's, by position), erf_op (libm's erf, within 1 ulp of PyTorch's),
// log1p_expm1_op (libm's log1p and expm1, each within 1 ulp of SLEEF's; softplus composes exp and log1p).
int ulp_allowed(const std::string& graph) {
  if (graph == "log1p_expm1_op") return 2;
  return graph == "tanh_op" || graph == "sigmoid_op" || graph == "unary_chain" || graph == "int_to_float_unary" || graph == "erf_op" ||
                 graph == "log2_log10_atan2"
             ? 1
             : 0;
}

// Floats equal within `ulp` units in the last place (0: the same bytes); other dtypes the same bytes.
bool within_ulp(const ctfx::host_array& a, const ctfx::host_array& b, int ulp) {
  if (ulp == 0 || a.desc.dt != ctfx::dtype::f32 || a.bytes.size() != b.bytes.size()) return same_bytes(a, b);
  for (std::size_t i = 0; i + 4 <= a.bytes.size(); i += 4) {
    std::int32_t x = 0, y = 0;
    std::memcpy(&x, a.bytes.data() + i, 4);
    std::memcpy(&y, b.bytes.data() + i, 4);
    if (std::abs(static_cast<std::int64_t>(x) - static_cast<std::int64_t>(y)) > ulp) return false;
  }
  return true;
}

// Programs with an f32 or f64 matrix product: BLAS adds in its own order (OpenBLAS here, MKL or
// oneDNN in PyTorch), so their floats compare within a tolerance relative to the output's largest
// magnitude (docs/guide.md): |ctfx - eager| <= tol * max|eager|, tol 1e-5 for f32, 1e-13 for f64;
// their other outputs (integers, bools) the same bytes.
bool has_float_products(const ctfx::ir& g) {
  for (std::int32_t i = 0; i < g.size(); ++i)
    if (ctfx::is_product(g[i].op) && (g.meta(i).dt == ctfx::dtype::f32 || g.meta(i).dt == ctfx::dtype::f64)) return true;
  return false;
}
template <class T>
bool within_normwise_of(const ctfx::host_array& a, const ctfx::host_array& b, double tol) {
  const std::size_t n = a.bytes.size() / sizeof(T);
  double largest = 0, worst = 0;
  for (std::size_t i = 0; i < n; ++i) {
    T x, y;
    std::memcpy(&x, a.bytes.data() + i * sizeof(T), sizeof(T));
    std::memcpy(&y, b.bytes.data() + i * sizeof(T), sizeof(T));
    if (std::isnan(x) != std::isnan(y)) return false;
    if (std::isnan(x)) continue;
    largest = std::max(largest, std::abs(static_cast<double>(y)));
    worst = std::max(worst, std::abs(static_cast<double>(x) - static_cast<double>(y)));
  }
  return worst <= tol * largest;
}
bool within_normwise(const ctfx::host_array& a, const ctfx::host_array& b) {
  if (a.desc.dt != b.desc.dt || a.bytes.size() != b.bytes.size()) return false;
  if (a.desc.dt == ctfx::dtype::f32) return within_normwise_of<float>(a, b, 1e-5);
  if (a.desc.dt == ctfx::dtype::f64) return within_normwise_of<double>(a, b, 1e-13);
  return same_bytes(a, b);
}

// Runs `name` through `run` (the plan or the reference) and compares with PyTorch's results.
// The tensor constants (<name>.<attribute>.npy) are the last inputs, after the parameters.
// name: the files' prefix (<graph> or <graph>.size<k>); graph: the graph's name, which its constants'
// files (<graph>.<attribute>.npy) take.
template <class Run>
void check_program(const std::string& name, const ctfx::ir& g, Run&& run, const std::vector<ctfx::fx_constant>& constants = {},
                   const std::string& graph = {}) {
  CAPTURE(name);
  auto inputs = read_all(name, "input");
  for (const auto& c : constants) {
    const std::string p = data_dir() + (graph.empty() ? name : graph) + "." + std::string(c.attribute.view()) + ".npy";
    ctfx::npy_read f = ctfx::read_npy(p);
    REQUIRE_MESSAGE(f.ok, f.message);
    inputs.push_back(std::move(f.array));
  }
  const auto before = inputs;
  const auto traced = traced_layouts(g, inputs);
  for (std::size_t i = 0; i < inputs.size() && i < traced.size(); ++i)
    if (traced_differs(traced[i], inputs[i])) {  // fed in the layout it was traced with
      std::string why;
      inputs[i] = ctfx::host_array::laid_out(inputs[i], traced[i].stride, why);
      REQUIRE_MESSAGE(why.empty(), why);
    }
  const auto expected = read_all(name, "output");
  const auto mutated = read_all(name, "mutated", static_cast<int>(inputs.size()));
  std::vector<ctfx::host_array> outputs;
  for (const auto& e : expected) outputs.push_back(ctfx::host_array::zeros(e.desc));
  std::vector<ctfx::tensor_ref> in, out;
  for (auto& a : inputs) in.push_back(a.ref());
  for (auto& a : outputs) out.push_back(a.ref());
  const ctfx::run_status st = run(in, out);
  REQUIRE_MESSAGE(st.ok, st.message);
  for (std::size_t j = 0; j < expected.size(); ++j) {
    CAPTURE(j);
    if (has_float_products(g)) CHECK(within_normwise(outputs[j], expected[j]));
    else CHECK(within_ulp(outputs[j], expected[j], ulp_allowed(graph.empty() ? name : graph)));
  }
  // Every input as PyTorch left it: mutated, or unchanged.
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const bool unmutated = mutated[i].bytes.empty() && mutated[i].desc.rank == 0 && mutated[i].desc.dt == ctfx::tensor_desc{}.dt;
    CAPTURE(i);
    CHECK(same_bytes(densify(inputs[i]), unmutated ? before[i] : mutated[i]));
  }
}

}  // namespace

TEST_CASE("fx values: captured programs give PyTorch eager's outputs bit for bit (run-time plan on host and OMP, reference)") {
  // Every captured program but those calling the test's user ops (their kernels are Python).
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(data_dir()))
    if (e.path().extension() == ".txt") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  int checked = 0, dynamic_sizes = 0, with_constants = 0;
  for (const auto& name : names) {
    CAPTURE(name);
    const auto r = ctfx::parse_fx_file(data_dir() + name + ".txt");
    if (!r.ok() && ctfx::to_string(r.error).find("torch.ops.ctfx_test.") != std::string::npos) continue;
    REQUIRE_MESSAGE(r.ok(), ctfx::to_string(r.error));
    CHECK(ctfx::verify(r.graph).ok());
    const ctfx::runtime_plan plan(r.graph);
    if (!ctfx::kernels::host_blas && has_float_products(r.graph)) {  // a build without a BLAS refuses them
      std::vector<ctfx::host_array> ins = read_all(name, "input"), outs;
      for (const auto& e : read_all(name, "output")) outs.push_back(ctfx::host_array::zeros(e.desc));
      std::vector<ctfx::tensor_ref> in, out;
      for (auto& a : ins) in.push_back(a.ref());
      for (auto& a : outs) out.push_back(a.ref());
      CHECK(plan.run(in, out).message.find("rule blas-available") != std::string::npos);
      continue;
    }
    // A dynamic-shape graph at its traced size and at each extra captured size (<name>.size<k>).
    std::vector<std::string> runs{name};
    for (int k = 1; std::filesystem::exists(data_dir() + name + ".size" + std::to_string(k) + ".input0.npy"); ++k)
      runs.push_back(name + ".size" + std::to_string(k));
    for (const auto& files : runs) {
      check_program(files, r.graph, [&](auto in, auto out) { return plan.run(in, out); }, r.constants, name);
      check_program(files, r.graph, [&](auto in, auto out) { return plan.run(in, out, ctfx::device_ctx{ctfx::backend::omp}); }, r.constants, name);
      check_program(files, r.graph, [&](auto in, auto out) { return ctfx::reference_run(r.graph, in, out); }, r.constants, name);
    }
    dynamic_sizes += static_cast<int>(runs.size()) - 1;
    ++checked;
    with_constants += r.constants.empty() ? 0 : 1;
  }
  CHECK(checked >= 30);
  CHECK(dynamic_sizes >= 30);  // the dyn_* programs, each at a second size
  CHECK(with_constants >= 2);  // tensor constants bound from their .npy files
  // The programs of the comparison, logical, where, clamp, mean, index and bool-mask index_put ops
  // are among them.
  for (const char* n : {"compare_ops", "logical_ops", "where_ops", "clamp_ops", "maximum_minimum_full", "mean_dims", "masked_fill_put",
                        "compare_promotion", "index_gather", "masked_put_value", "masked_put_rows", "masked_put_accumulate", "masked_index_put",
                        "exact_float_constants", "exact_int_constants", "hf_attention_mask_f64", "scalar_promotion_half",
                        "scalar_promotion_int", "zero_dim_compare", "scalar_first_ops", "float_to_int_casts", "int_to_float_unary", "embedding_lookup", "squeeze_any_all",
                        "label_smoothing_gather", "scatter_add_histogram", "segment_sum_scatter_reduce", "scatter_duplicates",
                        "scatter_inplace_input", "gather_empty_index", "unbind_tuple", "erf_op", "log1p_expm1_op", "fmod_roll", "embedding_bag_max", "segment_mean",
                        "scatter_prod_amin", "scatter_reduce_half", "sum_mean_dtype",
                        "linear_bias", "mlp_relu", "attention_scores", "addmm_scaled", "baddbmm_scaled", "mm_transposed", "int_matmul",
                        "sdpa_plain", "sdpa_causal", "sdpa_bool_mask", "sdpa_float_mask", "sdpa_scale", "sdpa_gqa", "sdpa_lse", "sdpa_block", "sdpa_f64", "sdpa_math", "one_hot_assert", "logcumsumexp_op",
                        "iota_tril_triu", "arange_forms", "one_hot_compare", "position_ids", "pad_forms", "flip_forms", "cumulative_products",
                        "bitwise_ops", "prod_forms", "pow_scalar_exp2_hypot", "unfold_windows", "channels_last_clone", "log2_log10_atan2"})
    CHECK(std::find(names.begin(), names.end(), n) != names.end());
}

TEST_CASE("fx values: one_hot's _assert_async refuses a class out of range, naming the node, before any write") {
  const auto r = ctfx::parse_fx_file(data_dir() + "one_hot_assert.txt");
  REQUIRE_MESSAGE(r.ok(), ctfx::to_string(r.error));
  const ctfx::runtime_plan plan(r.graph);
  // a negative class breaks the first assertion, a class of 7 the second (classes < num_classes)
  for (const auto& [bad, node] : {std::pair<std::int64_t, std::string>{-1, "'_assert_async'"}, {7, "'_assert_async_1'"}}) {
    CAPTURE(bad);
    auto inputs = read_all("one_hot_assert", "input");
    const std::int64_t v = bad;
    std::memcpy(inputs[0].bytes.data() + 5 * sizeof(std::int64_t), &v, sizeof v);
    for (int run = 0; run < 3; ++run) {
      CAPTURE(run);
      std::vector<ctfx::host_array> outputs;
      for (const auto& e : read_all("one_hot_assert", "output")) {
        outputs.push_back(ctfx::host_array::zeros(e.desc));
        std::fill(outputs.back().bytes.begin(), outputs.back().bytes.end(), std::byte{0x5a});
      }
      const auto before = outputs;
      std::vector<ctfx::tensor_ref> in, out;
      for (auto& a : inputs) in.push_back(a.ref());
      for (auto& a : outputs) out.push_back(a.ref());
      const ctfx::run_status st = run == 0 ? plan.run(in, out)
                                  : run == 1 ? plan.run(in, out, ctfx::device_ctx{ctfx::backend::omp})
                                             : ctfx::reference_run(r.graph, in, out);
      CHECK_FALSE(st.ok);
      CHECK_MESSAGE(st.message.find("rule tensor-assertion: node " + node + " (aten._assert_async)") != std::string::npos, st.message);
      for (std::size_t j = 0; j < outputs.size(); ++j) CHECK(same_bytes(outputs[j], before[j]));  // nothing written
    }
  }
}

namespace {
struct add_one_op : ctfx::custom_op<"ctfx_test::add_one_", "add_one_(Tensor(a!) x) -> ()"> {
  // x.add_(1) on f32, at any strides (a column view, a clone that keeps the view's strides).
  static void run(const ctfx::custom_call& c) {
    const ctfx::tensor_ref& x = c.args[0];
    for (std::size_t i = 0; i < static_cast<std::size_t>(x.numel()); ++i)
      static_cast<float*>(x.data)[strided_at(x, i)] += 1.0f;
  }
};
}  // namespace

TEST_CASE("fx values: programs calling a user op on strided views (add_one_ with a C++ kernel) give PyTorch eager's values") {
  const ctfx::fx_custom ops[] = {ctfx::fx_custom_of<add_one_op>()};
  ctfx::kernel_table k;
  k.add<add_one_op>();
  for (const char* name : {"inplace_custom_op_input", "multiple_intermediate", "layout_column_custom", "layout_column_custom_clone"}) {
    CAPTURE(name);
    const auto r = ctfx::parse_fx_file(data_dir() + name + ".txt", ops);
    REQUIRE_MESSAGE(r.ok(), ctfx::to_string(r.error));
    CHECK(ctfx::verify(r.graph).ok());
    const ctfx::runtime_plan plan(r.graph);
    check_program(name, r.graph, [&](auto in, auto out) { return plan.run(in, out, ctfx::backend::host, {}, &k); });
    check_program(name, r.graph, [&](auto in, auto out) { return plan.run(in, out, ctfx::device_ctx{ctfx::backend::omp}, {}, &k); });
    check_program(name, r.graph, [&](auto in, auto out) { return ctfx::reference_run(r.graph, in, out, &k); });
  }
}
