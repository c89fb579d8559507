// ctfx_opt — a PyTorch FX graph file through ctfx's passes, in the spirit of mlir-opt.
//
//   ctfx_opt FILE                         the optimized graph (after the whole pipeline)
//   ctfx_opt FILE --print-after-all       the graph after each pass, in pipeline order
//   ctfx_opt FILE --report                what reinplacing did: each candidate, why not, the bytes
//   ctfx_opt FILE --plan                  the memory plan listing, with provenance (reuse lines,
//                                         Inductor's default wrapper)
//   ctfx_opt FILE --plan-arena            the pooled-arena form of the plan (Inductor's
//                                         memory_planning=True): pools, offsets, provenance
//   ctfx_opt FILE --run --inputs a.npy,b.npy --outputs DIR [--backend host|cuda] [--strides K=S,...]
//                                         runs the graph; writes DIR/output<j>.npy for each output
//                                         and DIR/mutated<i>.npy for each input i the program writes
//                                         (DIR is created), and prints what it wrote.
//                                         Each input is laid out in the strides its placeholder
//                                         has (as PyTorch printed them: a transposed or column-major
//                                         input), whatever the file's order (C or Fortran);
//                                         --strides K=S,... lays input K out with strides S instead
//   --table executor|inductor             the inplaceable-op table. Default executor: the table
//                                         ctfx's executors plan with (exec/inplace_table.hpp):
//                                         every legal scatter reinplaced (they fuse elementwise ops
//                                         and reductions, never a scatter: a functional one would
//                                         copy its whole input).
//                                         inductor: Inductor's table and decisions, its scatter
//                                         profitability check included (it assumes Inductor's
//                                         fusion), for parity with Inductor
//
// FILE is the text that print_readable() / TORCH_LOGS="post_grad_graphs" prints (see
// graph/fx_parse.hpp); the text of print(gm.graph), which has no dtypes or shapes, is refused with
// a message that names the form to print instead. Its tensor constants (`self._tensor_constant0`) are inputs that --run reads
// from beside FILE, `<stem>.<attribute>.npy` (tools/fx_capture saves them), not from --inputs. The user ops of tools/fx_capture (ctfx_test::sin_, sin_cos_, add_one_, double_acc_, double_t) are
// known, with host kernels, so that the graphs captured with them parse and run.
//
// Any error (usage, parse, a broken rule after a pass, a bad input file, a failed run) prints one
// message on stderr and exits with status 1. --run writes its files only after the run succeeded,
// through temporaries renamed at the end: a failure leaves no file behind.
#include <ctfx.hpp>
#include <ctfx/exec/runtime.hpp>
#include <ctfx/graph/fx_parse.hpp>
#include <ctfx/io/npy.hpp>
#include <ctfx/plan/listing.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#if defined(__CUDACC__)
#include <cuda_runtime.h>
#endif

namespace {

// ----- the user ops of tools/fx_capture/capture.py, with host kernels -----
struct sin_op : ctfx::custom_op<"ctfx_test::sin_", "sin_(Tensor x, Tensor(a!) out) -> ()"> {};
struct sin_cos_op
    : ctfx::custom_op<"ctfx_test::sin_cos_", "sin_cos_(Tensor x, Tensor(a!) out_sin, Tensor(a!) out_cos) -> ()"> {};
struct add_one_op : ctfx::custom_op<"ctfx_test::add_one_", "add_one_(Tensor(a!) x) -> ()"> {};
// Returns 2x in a fresh result (laid out as the graph declares: column-major in the captures) and adds x to acc.
struct double_acc_op : ctfx::custom_op<"ctfx_test::double_acc_", "double_acc_(Tensor x, Tensor(a!) acc) -> Tensor"> {};
// Returns 2x in a fresh result and mutates nothing: called directly, not through auto_functionalized.
struct double_t_op : ctfx::custom_op<"ctfx_test::double_t", "double_t(Tensor x) -> Tensor"> {};
const ctfx::fx_custom user_ops[] = {ctfx::fx_custom_of<sin_op>(), ctfx::fx_custom_of<sin_cos_op>(),
                                    ctfx::fx_custom_of<add_one_op>(), ctfx::fx_custom_of<double_acc_op>(),
                                    ctfx::fx_custom_of<double_t_op>()};

// dst[i] = f(src[i]) over two tensors of one shape, any strides; f32 and f64.
template <class F>
void map_into(const ctfx::tensor_ref& src, const ctfx::tensor_ref& dst, F f) {
  const ctfx::index_t n = src.numel();
  ctfx::index_t idx[ctfx::max_rank]{};
  for (ctfx::index_t k = 0; k < n; ++k) {
    ctfx::index_t so = 0, d_off = 0;
    for (int d = 0; d < src.rank; ++d) { so += idx[d] * src.stride[d]; d_off += idx[d] * dst.stride[d]; }
    if (src.dt == ctfx::f64) static_cast<double*>(dst.data)[d_off] = f(static_cast<const double*>(src.data)[so]);
    else static_cast<float*>(dst.data)[d_off] = f(static_cast<const float*>(src.data)[so]);
    for (int d = src.rank - 1; d >= 0 && ++idx[d] == src.size[d]; --d) idx[d] = 0;
  }
}

// dst[i] = f(a[i], b[i]) over three tensors of one shape, any strides; f32 and f64.
template <class F>
void zip_into(const ctfx::tensor_ref& a, const ctfx::tensor_ref& b, const ctfx::tensor_ref& dst, F f) {
  const ctfx::index_t n = a.numel();
  ctfx::index_t idx[ctfx::max_rank]{};
  for (ctfx::index_t k = 0; k < n; ++k) {
    ctfx::index_t ao = 0, bo = 0, d_off = 0;
    for (int d = 0; d < a.rank; ++d) { ao += idx[d] * a.stride[d]; bo += idx[d] * b.stride[d]; d_off += idx[d] * dst.stride[d]; }
    if (a.dt == ctfx::f64)
      static_cast<double*>(dst.data)[d_off] = f(static_cast<const double*>(a.data)[ao], static_cast<const double*>(b.data)[bo]);
    else
      static_cast<float*>(dst.data)[d_off] = f(static_cast<const float*>(a.data)[ao], static_cast<const float*>(b.data)[bo]);
    for (int d = a.rank - 1; d >= 0 && ++idx[d] == a.size[d]; --d) idx[d] = 0;
  }
}

ctfx::kernel_table host_user_kernels() {
  ctfx::kernel_table k;
  k.add(sin_op::name, [](const ctfx::custom_call& c) { map_into(c.args[0], c.args[1], [](auto v) { return std::sin(v); }); });
  k.add(sin_cos_op::name, [](const ctfx::custom_call& c) {
    map_into(c.args[0], c.args[1], [](auto v) { return std::sin(v); });
    map_into(c.args[0], c.args[2], [](auto v) { return std::cos(v); });
  });
  k.add(double_acc_op::name, [](const ctfx::custom_call& c) {
    map_into(c.args[0], c.results[0], [](auto v) { return v * static_cast<decltype(v)>(2); });
    zip_into(c.args[1], c.args[0], c.args[1], [](auto acc, auto x) { return acc + x; });
  });
  k.add(double_t_op::name, [](const ctfx::custom_call& c) {
    map_into(c.args[0], c.results[0], [](auto v) { return v * static_cast<decltype(v)>(2); });
  });
  k.add(add_one_op::name, [](const ctfx::custom_call& c) {
    map_into(c.args[0], c.args[0], [](auto v) { return v + static_cast<decltype(v)>(1); });
  });
  return k;
}

// ----- options -----
struct options {
  std::string file;
  bool print_after_all = false, report = false, plan = false, plan_arena = false, run = false;
  bool inductor_table = false;  // the executors' table (exec/inplace_table.hpp)
  std::vector<std::string> inputs;
  std::string outputs;
  ctfx::backend where = ctfx::backend::host;
  std::vector<std::pair<std::size_t, std::vector<ctfx::index_t>>> strides;  // --strides K=S,...
};

constexpr const char* usage =
    "usage: ctfx_opt FILE [--print-after-all] [--report] [--plan] [--plan-arena] [--table executor|inductor]\n"
    "                [--run --inputs A.npy,B.npy,... --outputs DIR [--backend host|cuda] [--strides K=S,...]]\n";

constexpr const char* help =
    "ctfx_opt: a PyTorch FX graph file through ctfx's passes: remove_noop_ops,\n"
    "canonicalize_view_scatter_ops, masked_puts_as_where, reinplace, decompose, dce,\n"
    "hoist_computed_indices. FILE is the text of gm.print_readable() or of TORCH_LOGS=post_grad_graphs\n"
    "(`def forward(self, x: \"f32[4][1]cpu\"):` lines, with dtypes and shapes); the text of\n"
    "print(gm.graph) has neither and is refused (docs/guide.md §5, \"A graph from PyTorch\").\n"
    "\n"
    "  (no option)            print the optimized graph\n"
    "  --print-after-all      the graph after each pass\n"
    "  --report               what reinplacing did: each candidate, why not, the bytes; and the\n"
    "                         warnings (a functional result nothing uses, an input read after its update)\n"
    "  --plan                 the memory plan as a program (reuse lines, each step's source node)\n"
    "  --plan-arena           the pooled-arena form of the plan: pools and offsets\n"
    "  --table executor       (default) the table ctfx's executors plan with (exec/inplace_table.hpp):\n"
    "                         every legal scatter is reinplaced (the executors fuse elementwise ops\n"
    "                         and reductions, never a scatter: a functional one would copy its input)\n"
    "  --table inductor       Inductor's table, with its scatter profitability check (which assumes\n"
    "                         Inductor's fusion): Inductor's own decisions, for parity\n"
    "  --run --inputs A.npy,B.npy --outputs DIR [--backend host|cuda]\n"
    "                         run the graph; write DIR/output<j>.npy and DIR/mutated<i>.npy (DIR is\n"
    "                         created) and print what was written.\n"
    "                         Inputs of any layout: a file in C or Fortran order is laid out in the\n"
    "                         strides of its placeholder (as PyTorch printed them, e.g. f32[3, 4][1, 3])\n"
    "  --strides K=S0,S1,...  lay input K (from 0) out with these strides, in elements, instead (the\n"
    "                         run then checks them against the graph: rule input-strides); may repeat\n"
    "\n"
    "Errors print one message on stderr and exit with status 1.\n";

struct failure {
  std::string message;
};

std::vector<std::string> split_commas(std::string_view s) {
  std::vector<std::string> v;
  for (std::size_t b = 0; b <= s.size();) {
    std::size_t e = s.find(',', b);
    if (e == std::string_view::npos) e = s.size();
    if (e > b) v.emplace_back(s.substr(b, e - b));
    b = e + 1;
  }
  return v;
}

options parse_args(int argc, char** argv) {
  options o;
  bool have_inputs = false;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    auto value = [&]() -> std::string_view {
      if (i + 1 >= argc) throw failure{"option " + std::string(a) + " needs a value\n" + usage};
      return argv[++i];
    };
    if (a == "--print-after-all") o.print_after_all = true;
    else if (a == "--report") o.report = true;
    else if (a == "--plan") o.plan = true;
    else if (a == "--plan-arena") o.plan_arena = true;
    else if (a == "--run") o.run = true;
    else if (a == "--inputs") { o.inputs = split_commas(value()); have_inputs = true; }
    else if (a == "--outputs") o.outputs = value();
    else if (a == "--strides") {
      const std::string_view v = value();
      const std::size_t eq = v.find('=');
      auto number = [&](std::string_view t) {
        ctfx::index_t n = 0;
        if (t.empty() || t.size() > 18) throw failure{"--strides " + std::string(v) + ": '" + std::string(t) + "' is not a number"};
        for (char c : t) {
          if (c < '0' || c > '9') throw failure{"--strides " + std::string(v) + ": '" + std::string(t) + "' is not a number"};
          n = n * 10 + (c - '0');
        }
        return n;
      };
      if (eq == std::string_view::npos) throw failure{"--strides takes K=S0,S1,... (input K's strides), not '" + std::string(v) + "'"};
      std::vector<ctfx::index_t> s;
      for (const auto& t : split_commas(v.substr(eq + 1))) s.push_back(number(t));
      o.strides.emplace_back(static_cast<std::size_t>(number(v.substr(0, eq))), static_cast<std::vector<ctfx::index_t>&&>(s));
    }
    else if (a == "--backend") {
      std::string_view b = value();
      if (b == "host") o.where = ctfx::backend::host;
      else if (b == "cuda") o.where = ctfx::backend::cuda;
      else throw failure{"--backend must be host or cuda, not '" + std::string(b) + "'"};
    } else if (a == "--table") {
      std::string_view t = value();
      if (t == "inductor") o.inductor_table = true;
      else if (t == "executor") o.inductor_table = false;
      else throw failure{"--table must be inductor or executor, not '" + std::string(t) + "'"};
    } else if (a == "-h" || a == "--help") {
      std::fputs(usage, stdout);
      std::fputs("\n", stdout);
      std::fputs(help, stdout);
      std::exit(0);
    } else if (a.size() > 1 && a[0] == '-') {
      throw failure{"unknown option '" + std::string(a) + "'\n" + usage};
    } else if (o.file.empty()) {
      o.file = a;
    } else {
      throw failure{"more than one graph file ('" + o.file + "', '" + std::string(a) + "')\n" + usage};
    }
  }
  if (o.file.empty()) throw failure{std::string("no graph file\n") + usage};
  if (o.run && (!have_inputs || o.outputs.empty())) throw failure{std::string("--run needs --inputs and --outputs\n") + usage};
  if (!o.run && (have_inputs || !o.outputs.empty() || !o.strides.empty()))
    throw failure{std::string("--inputs, --outputs and --strides go with --run\n") + usage};
  return o;
}

// ----- the passes, one by one (the order and verification of passes/pipeline.hpp) -----
struct pass_step {
  const char* name;
  std::function<ctfx::ir(const ctfx::ir&, ctfx::reinplace_log&)> apply;
};

template <class Table>
std::vector<pass_step> pipeline_steps() {
  return {
      {"remove_noop_ops", [](const ctfx::ir& g, ctfx::reinplace_log&) { return ctfx::remove_noop_ops(g); }},
      {"canonicalize_view_scatter_ops", [](const ctfx::ir& g, ctfx::reinplace_log&) { return ctfx::canonicalize_view_scatter_ops(g); }},
      {"masked_puts_as_where", [](const ctfx::ir& g, ctfx::reinplace_log&) { return ctfx::masked_puts_as_where(g); }},
      {"reinplace_inplaceable_ops_core",
       [](const ctfx::ir& g, ctfx::reinplace_log& log) { return ctfx::reinplace_with_log<Table>(g, log); }},
      {"decompose_generalized_scatter", [](const ctfx::ir& g, ctfx::reinplace_log&) { return ctfx::decompose_generalized_scatter(g); }},
      {"dce", [](const ctfx::ir& g, ctfx::reinplace_log&) { return ctfx::dce(g); }},
      {"hoist_computed_indices", [](const ctfx::ir& g, ctfx::reinplace_log&) { return ctfx::hoist_computed_indices(g); }},
  };
}

// Runs the pipeline, printing after each pass when asked; throws on a broken rule.
ctfx::ir run_passes(const ctfx::ir& input, bool inductor_table, bool print, ctfx::reinplace_log& log) {
  auto steps = inductor_table ? pipeline_steps<ctfx::builtin_inplace_table>() : pipeline_steps<ctfx::executor_inplace_table>();
  ctfx::ir g = input;
  for (const auto& s : steps) {
    g = ctfx::detail::verified(s.apply(g, log), s.name);
    if (!g.error.ok()) throw failure{std::string("pass ") + s.name + ": " + ctfx::to_string(g.error)};
    if (print) std::printf("// -----// IR Dump After %s //----- //\n%s\n", s.name, ctfx::to_text(g).c_str());
  }
  ctfx::find_unused_values(input, log.unused);  // on the graph as written (the passes leave dead nodes for dce)
  return g;
}

std::string report_text(const ctfx::reinplace_log& log, bool inductor_table) {
  int reinplaced = 0, clones = 0;
  long long copied = 0, missed = 0;
  for (const auto& c : log.items) {
    reinplaced += c.reinplaced;
    clones += c.clones;
    if (!c.reinplaced) copied += static_cast<long long>(c.static_bytes);
    if (c.missed) missed += static_cast<long long>(c.static_bytes);
  }
  std::string s = "reinplace report (table " + std::string(inductor_table ? "inductor" : "executor") + "): " +
                  std::to_string(reinplaced) + " of " + std::to_string(log.items.size()) + " candidates reinplaced, " +
                  std::to_string(clones) + " clones, " + std::to_string(copied) + " bytes still copied, " +
                  std::to_string(missed) + " bytes missed\n";
  for (const auto& c : log.items) {
    s += "  " + ctfx::to_text(c);
    if (!c.reinplaced) s += "  -- " + std::string(ctfx::explain(c.why));
    s += "\n";
  }
  return s + ctfx::warnings_text(log);
}

std::string desc_text(const ctfx::tensor_desc& d) {
  std::string s = std::string(ctfx::name_of(d.dt)) + "[";
  for (int k = 0; k < d.rank; ++k) s += (k ? ", " : "") + std::to_string(d.size[k]);
  return s + "]";
}

// ----- --run -----
struct device_buffers {
#if defined(__CUDACC__)
  std::vector<void*> owned;
  ~device_buffers() {
    for (void* p : owned) cudaFree(p);
  }
  void* alloc(std::size_t n) {
    void* p = nullptr;
    if (cudaError_t e = cudaMalloc(&p, n ? n : 1); e != cudaSuccess)
      throw failure{"cudaMalloc of " + std::to_string(n) + " bytes failed: " + cudaGetErrorString(e)};
    owned.push_back(p);
    return p;
  }
#endif
};

// The files holding the graph's tensor constants: `<dir>/<stem>.<attribute>.npy` beside FILE
// (tools/fx_capture saves them there), in input order. A missing one is refused by name.
std::vector<std::string> constant_files(const std::string& file, const std::vector<ctfx::fx_constant>& constants) {
  namespace fs = std::filesystem;
  const fs::path f(file);
  std::vector<std::string> out;
  for (const auto& c : constants) {
    const std::string attr(c.attribute.view());
    const fs::path npy = f.parent_path() / (f.stem().string() + "." + attr + ".npy");
    if (!fs::is_regular_file(npy))
      throw failure{"tensor constant 'self." + attr + "': its values are not in the graph text, and " + npy.string() +
                    " (where they are looked for) cannot be read"};
    out.push_back(npy.string());
  }
  return out;
}

void run_graph(const ctfx::ir& functional, const options& user, const std::vector<std::string>& constants) {
  ctfx::plan_options po;
  po.inductor_table = user.inductor_table;
  ctfx::runtime_plan p(functional, po);
  if (!p.error().ok()) throw failure{"cannot plan the graph: " + ctfx::to_string(p.error())};
  const ctfx::ir& g = p.graph();
  const auto& nodes = p.input_nodes();
  // The constants are the last inputs (the parser places them after the forward's parameters).
  const std::size_t given = nodes.size() - std::min(constants.size(), nodes.size());
  if (user.inputs.size() != given) {
    std::string names;
    for (std::size_t k = 0; k < given; ++k) names += (names.empty() ? "" : ", ") + std::string(g[nodes[k]].name.view());
    throw failure{"the graph has " + std::to_string(given) + " tensor input" + (given == 1 ? "" : "s") + " (" + names + ")" +
                  (constants.empty() ? "" : " besides its " + std::to_string(constants.size()) + " tensor constant(s)") +
                  ", --inputs gives " + std::to_string(user.inputs.size())};
  }
  options o = user;
  for (const auto& c : constants) o.inputs.push_back(c);
  for (const auto& [k, s] : o.strides)
    if (k >= o.inputs.size())
      throw failure{"--strides " + std::to_string(k) + "=...: the graph has " + std::to_string(o.inputs.size()) + " inputs (0 to " +
                    std::to_string(o.inputs.size() - 1) + ")"};
  std::vector<ctfx::host_array> in;
  for (std::size_t k = 0; k < o.inputs.size(); ++k) {
    ctfx::npy_read r = ctfx::read_npy(o.inputs[k]);
    if (!r) throw failure{r.message};
    const ctfx::tensor_meta& m = g.meta(nodes[k]);
    const std::string who = "input " + std::to_string(k) + " ('" + std::string(g[nodes[k]].name.view()) + "')";
    if (r.array.desc.dt != m.dt || r.array.desc.rank != m.rank)
      throw failure{who + ": " + o.inputs[k] + " holds " + desc_text(r.array.desc) + ", the graph's placeholder is " + ctfx::to_string(g, m)};
    in.push_back(static_cast<ctfx::host_array&&>(r.array));
  }
  // Each input in the strides its placeholder has (symbols bound from the files' extents, as a run
  // binds them), or in those --strides gives; a contiguous placeholder takes the file's C order.
  std::vector<ctfx::index_t> symbols(g.syms.size(), -1);
  for (std::size_t k = 0; k < in.size(); ++k) {
    const ctfx::tensor_meta& m = g.meta(nodes[k]);
    for (int d = 0; d < m.rank; ++d)
      if (const int s = m.size[d].as_symbol(); s >= 0 && symbols[static_cast<std::size_t>(s)] < 0)
        symbols[static_cast<std::size_t>(s)] = in[k].desc.size[d];
  }
  for (std::size_t k = 0; k < in.size(); ++k) {
    const ctfx::tensor_meta& m = g.meta(nodes[k]);
    ctfx::index_t want[ctfx::max_rank]{};
    bool evaluable = true, differs = false;
    for (int d = 0; d < m.rank; ++d) {
      for (std::size_t s = 0; s < symbols.size(); ++s) evaluable = evaluable && (!m.stride[d].uses(static_cast<int>(s)) || symbols[s] >= 0);
      if (evaluable) want[d] = m.stride[d].eval(symbols);
    }
    for (const auto& [j, s] : o.strides)
      if (j == k) {
        if (static_cast<int>(s.size()) != m.rank)
          throw failure{"--strides " + std::to_string(k) + "=...: input " + std::to_string(k) + " has rank " + std::to_string(m.rank) +
                        ", the option gives " + std::to_string(s.size()) + " strides"};
        for (int d = 0; d < m.rank; ++d) want[d] = s[static_cast<std::size_t>(d)];
        evaluable = true;
      }
    if (!evaluable) continue;
    for (int d = 0; d < m.rank; ++d) differs = differs || (in[k].desc.size[d] > 1 && want[d] != in[k].desc.stride[d]);
    if (!differs) continue;
    std::string why;
    ctfx::host_array a = ctfx::host_array::laid_out(in[k], want, why);
    if (!why.empty()) throw failure{"input " + std::to_string(k) + " ('" + std::string(g[nodes[k]].name.view()) + "'): " + why};
    in[k] = static_cast<ctfx::host_array&&>(a);
  }
  std::vector<ctfx::tensor_desc> descs;
  for (auto& a : in) descs.push_back(a.desc);
  std::vector<ctfx::tensor_ref> in_refs, out_refs;
  for (auto& a : in) in_refs.push_back(a.ref());
  // On the host the bind reads the values the graph takes from its inputs (item()): its output
  // sizes may depend on them.
  ctfx::binding b = o.where == ctfx::backend::host ? p.bind_values(in_refs) : p.bind(descs);
  if (!b.status) throw failure{"cannot bind the inputs: " + b.status.message};
  std::vector<ctfx::host_array> out;
  for (const auto& d : b.outputs) out.push_back(ctfx::host_array::zeros(d));
  for (auto& a : out) out_refs.push_back(a.ref());

  ctfx::run_status st;
  if (o.where == ctfx::backend::host) {
    const ctfx::kernel_table kernels = host_user_kernels();
    st = p.run(in_refs, out_refs, ctfx::backend::host, {}, &kernels);
  } else {
#if defined(__CUDACC__)
    // Copies in, runs on the device with a device workspace, copies the results back.
    device_buffers dev;
    std::vector<ctfx::tensor_ref> din, dout;
    for (auto& a : in) {
      void* q = dev.alloc(a.bytes.size());
      cudaMemcpy(q, a.bytes.data(), a.bytes.size(), cudaMemcpyHostToDevice);
      din.emplace_back(q, a.desc);
    }
    for (auto& a : out) dout.emplace_back(dev.alloc(a.bytes.size()), a.desc);
    auto* ws = static_cast<std::byte*>(dev.alloc(b.workspace_bytes));
    st = p.run(din, dout, ctfx::device_ctx{ctfx::backend::cuda, nullptr}, std::span<std::byte>(ws, b.workspace_bytes));
    if (cudaDeviceSynchronize() != cudaSuccess && st) st = ctfx::run_status::failure(-1, "CUDA error after the run");
    if (st) {
      for (std::size_t k = 0; k < in.size(); ++k) cudaMemcpy(in[k].bytes.data(), din[k].data, in[k].bytes.size(), cudaMemcpyDeviceToHost);
      for (std::size_t k = 0; k < out.size(); ++k) cudaMemcpy(out[k].bytes.data(), dout[k].data, out[k].bytes.size(), cudaMemcpyDeviceToHost);
    }
#else
    throw failure{"--backend cuda: this ctfx_opt was compiled without nvcc; use ctfx_opt_cuda (built when CUDA is found)"};
#endif
  }
  if (!st) throw failure{"the run failed: " + st.message};

  // Every file to a temporary first; all renamed into place at the end.
  // The folder is made only now, after the run succeeded: a failure leaves nothing behind.
  const std::filesystem::path dir = o.outputs;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (!std::filesystem::is_directory(dir, ec))
    throw failure{"--outputs: cannot create the folder '" + o.outputs + "'" + (ec ? ": " + ec.message() : std::string(" (a file has that name)"))};
  ctfx::npy_batch batch;
  std::string wrote;
  auto add = [&](const std::string& name, const ctfx::tensor_ref& t) {
    if (auto s = batch.add(dir / name, t); !s) throw failure{s.message};
    wrote += "  " + (dir / name).string() + "  " + desc_text(t) + "\n";
  };
  for (std::size_t j = 0; j < out.size(); ++j) add("output" + std::to_string(j) + ".npy", out_refs[j]);
  for (auto i : p.mutated_inputs()) add("mutated" + std::to_string(i) + ".npy", in_refs[static_cast<std::size_t>(i)]);
  if (auto s = batch.commit(); !s) throw failure{s.message};
  const std::size_t files = out.size() + p.mutated_inputs().size();
  std::printf("ctfx_opt: ran %s on the %s backend (%zu input%s); wrote %zu file%s:\n%s", o.file.c_str(),
              o.where == ctfx::backend::host ? "host" : "cuda", o.inputs.size(), o.inputs.size() == 1 ? "" : "s", files,
              files == 1 ? "" : "s", wrote.c_str());
}

// The line an error names, with a caret under its column (as compilers print it).
std::string source_excerpt(const std::string& file, std::int32_t line, std::int32_t column) {
  if (line <= 0) return {};
  std::FILE* f = std::fopen(file.c_str(), "rb");
  if (!f) return {};
  std::string text;
  std::int32_t at = 1;
  for (int ch; (ch = std::fgetc(f)) != EOF && at <= line;) {
    if (ch == '\n') ++at;
    else if (at == line) text += static_cast<char>(ch);
  }
  std::fclose(f);
  std::string s = "\n  " + text;
  if (column > 0) s += "\n  " + std::string(static_cast<std::size_t>(column - 1), ' ') + "^";
  return s;
}

// The text of print(gm.graph): `graph():`, then `%x : [num_users=1] = placeholder[target=x]`. It
// has no dtypes or shapes, which a plan needs, so it is refused, naming the form to print instead.
void refuse_graph_print(const std::string& file) {
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) {
    const std::size_t b = line.find_first_not_of(" \t\r");
    if (b == std::string::npos) continue;
    if (std::string_view(line).substr(b).starts_with("graph(") || line.find(" : [num_users=") != std::string::npos)
      throw failure{file + ": this is the text of print(gm.graph), which has no dtypes or shapes; ctfx_opt reads the text of "
                    "gm.print_readable() (or of TORCH_LOGS=post_grad_graphs): `def forward(self, x: \"f32[4][1]cpu\"):` "
                    "with one `name: \"dtype[sizes][strides]cpu\" = torch.ops.aten...` line per node. Print the graph module "
                    "with gm.print_readable(), or capture it with tools/fx_capture (docs/guide.md §5, \"A graph from PyTorch\")"};
    return;
  }
}

int main_checked(int argc, char** argv) {
  const options o = parse_args(argc, argv);
  refuse_graph_print(o.file);
  ctfx::fx_parse_result parsed = ctfx::parse_fx_file(o.file, user_ops);
  if (!parsed.ok()) throw failure{o.file + ": " + std::string(parsed.error.message()) + source_excerpt(o.file, parsed.line, parsed.column)};
  const ctfx::ir& functional = parsed.graph;

  ctfx::reinplace_log log;
  const ctfx::ir optimized = run_passes(functional, o.inductor_table, o.print_after_all, log);
  const bool default_print = !o.print_after_all && !o.report && !o.plan && !o.plan_arena && !o.run;
  if (default_print) std::fputs(ctfx::to_text(optimized).c_str(), stdout);
  if (o.report) std::fputs(report_text(log, o.inductor_table).c_str(), stdout);
  if (o.plan || o.plan_arena) {
    ctfx::plan_options po;
    po.inductor_table = o.inductor_table;
    ctfx::runtime_plan p(functional, po);
    if (!p.error().ok()) throw failure{"cannot plan the graph: " + ctfx::to_string(p.error())};
    ctfx::listing_options lo;
    lo.original = &functional;
    lo.fused = &p.fused();
    if (!p.copy_siblings().empty()) lo.copy_siblings = p.copy_siblings().data();
    if (o.plan) std::fputs(ctfx::listing(p.graph(), p.life(), p.memory_plan(), lo).c_str(), stdout);
    if (o.plan_arena)
      std::fputs(ctfx::arena_listing(p.graph(), p.life(), ctfx::plan_arena(p.graph(), p.life()), lo).c_str(), stdout);
  }
  if (o.run) run_graph(functional, o, constant_files(o.file, parsed.constants));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return main_checked(argc, argv);
  } catch (const failure& f) {
    std::fprintf(stderr, "ctfx_opt: %s\n", f.message.c_str());
    return 1;
  }
}
