// ctfx_fuzz — differential fuzzing of the optimized plan against the reference interpreter.
//
//   ctfx_fuzz --seed S --cases N [--backend host|omp|cuda] [--no-reuse] [--no-arena] [--quiet] [--print-graphs K]
//
// Each case: a random functional graph (generator.hpp) and random inputs. The reference runs the
// graph as written (a fresh buffer per functional op); the plan runs the reinplaced, memory-planned
// graph with lifetime checking on. They must agree bit for bit on every output and on every input
// after the run, and the plan's outputs may alias an input only where the functional graph's do.
// Each graph (one without values read with item()) printed as FX text parses back into itself.
// Each failure prints its seed, the reason and the graph; the last line is "N passed, M failed"
// with the number of fused kernels the plans ran (so a run shows that fusion was exercised), and
// of the control-flow nodes and values read with item() the graphs held.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <ctfx/exec/runtime.hpp>
#include <ctfx/graph/fx_print.hpp>
#include "buffers.hpp"
#include "generator.hpp"
#if defined(__CUDACC__)
#include "../common/cuda_context.hpp"
#endif

namespace {

// Output j's storage is input k's storage (or -1).
std::vector<int> output_aliases(const ctfx::ir& g) {
  std::vector<int> r;
  const auto in = ctfx::detail::input_nodes_of(g);
  if (auto o = g.output_node(); o >= 0)
    for (auto a : g.args_of(o)) {
      int k = -1;
      for (std::size_t i = 0; i < in.size(); ++i)
        if (g.meta(a).storage == g.meta(in[i]).storage) k = static_cast<int>(i);
      r.push_back(k);
    }
  return r;
}

#if defined(__CUDACC__)
// Set when a kernel fault (a trap, an illegal address) left the CUDA context unusable: every later
// CUDA call fails with it, so the fuzzer stops at the case that caused it.
bool device_lost = false;

// Runs the plan on the GPU: inputs and outputs copied to device buffers, a device workspace, and
// the results copied back into the host buffers that are compared.
ctfx::run_status run_on_device(const ctfx::runtime_plan& plan, std::size_t ws_bytes, buffers& b, const ctfx::kernel_table& k) {
  std::vector<void*> dev;
  cudaError_t err = cudaSuccess;
  auto note = [&](cudaError_t e) { if (err == cudaSuccess) err = e; };
  auto dmalloc = [&](std::size_t n) { void* p = nullptr; note(cudaMalloc(&p, n ? n : 1)); dev.push_back(p); return p; };
  std::vector<ctfx::tensor_ref> in = b.in_refs, out = b.out_refs;
  for (std::size_t i = 0; i < in.size(); ++i) {
    in[i].data = dmalloc(b.in[i].size());
    note(cudaMemcpy(in[i].data, b.in[i].data(), b.in[i].size(), cudaMemcpyHostToDevice));
  }
  for (std::size_t j = 0; j < out.size(); ++j) out[j].data = dmalloc(b.out[j].size());
  auto* ws = static_cast<std::byte*>(dmalloc(ws_bytes));
  auto st = err == cudaSuccess ? plan.run(in, out, ctfx::device_ctx{ctfx::backend::cuda, nullptr}, std::span<std::byte>(ws, ws_bytes), &k)
                               : ctfx::run_status{};
  note(cudaGetLastError());
  note(cudaDeviceSynchronize());
  for (std::size_t i = 0; i < in.size(); ++i) note(cudaMemcpy(b.in[i].data(), in[i].data, b.in[i].size(), cudaMemcpyDeviceToHost));
  for (std::size_t j = 0; j < out.size(); ++j) note(cudaMemcpy(b.out[j].data(), out[j].data, b.out[j].size(), cudaMemcpyDeviceToHost));
  for (void* p : dev) cudaFree(p);
  if (err == cudaSuccess) return st;
  device_lost = ctfx_test::cuda_context_lost();
  return ctfx::run_status::failure(-1, std::string("CUDA error ") + cudaGetErrorName(err) + ": " + cudaGetErrorString(err));
}
#else
constexpr bool device_lost = false;
#endif

// Counts the cond and while_loop nodes of g and of its subgraphs, and the values read with item().
void count_control(const ctfx::ir& g, long& conds, long& loops, long& items) {
  for (std::int32_t i = 0; i < g.size(); ++i) {
    conds += g[i].op == ctfx::op_kind::cond;
    loops += g[i].op == ctfx::op_kind::while_loop;
  }
  for (const auto& y : g.syms) items += ctfx::is_read_value(y);
  for (const auto& s : g.subgraphs) count_control(s, conds, loops, items);
}

// `fused` counts the plan's kernels that fuse several nodes (plan/fusion.hpp), `into_cat` the
// results computed straight into a cat's slice, `into_row` those computed in a put's row,
// `cl_cat` the cats with a channels-last result, `folds` the reductions that fold a fused group's
// values, `held` the plans with a value computed in an output's buffer before it (plan/outputs.hpp).
std::string check_case(const ctfx_fuzz::fuzz_case& c, ctfx::backend where, bool reuse, bool arena, long* fused = nullptr,
                       long* into_cat = nullptr, long* into_row = nullptr, long* cl_cat = nullptr, long* folds = nullptr,
                       long* held = nullptr) {
  if (!c.graph.error.ok()) return "generator built an invalid graph: " + std::string(c.graph.error.message());
  if (auto d = ctfx::verify(c.graph); !d.ok()) return "generator graph fails verify: " + std::string(d.message());
  const ctfx::kernel_table kernels = ctfx_fuzz::fuzz_kernels();
  // Printed as FX text and parsed back, the same graph (values read with item() have no FX line).
  if (!ctfx::reads_input_values(c.graph)) {
    const ctfx::fx_custom customs[] = {ctfx::fx_custom_of<ctfx_fuzz::axpy3>()};
    const auto again = ctfx::parse_fx(ctfx::to_fx(c.graph, customs), customs);
    if (!again.ok()) return "its FX text does not parse: " + std::string(again.error.message()) + "\n" + ctfx::to_fx(c.graph, customs);
    if (ctfx::to_text(again.graph) != ctfx::to_text(c.graph))
      return "its FX text parses into another graph:\n" + ctfx::to_fx(c.graph, customs) + "\n" + ctfx::to_text(again.graph);
  }
  ctfx::plan_options opt;
  opt.reuse = reuse;
  opt.arena = arena;
  opt.check_lifetimes = true;
  ctfx::runtime_plan plan(c.graph, opt);
  if (!plan.error().ok()) return "pipeline/plan error: " + std::string(plan.error().message());
  if (fused) *fused += plan.fused().groups_with_members();
  for (std::int32_t i = 0; folds && i < plan.graph().size(); ++i) {
    const std::int32_t r = plan.fused().root[static_cast<std::size_t>(i)];
    if (r != i && ctfx::is_reduction(plan.graph()[r].op) && plan.graph().arg(r, 0) == i) ++*folds;
  }
  for (std::int32_t i = 0; i < plan.graph().size(); ++i)
    if (const std::int32_t h = plan.fused().into_of(i); h >= 0) {
      const bool row = ctfx::is_index_op(plan.graph()[h].op);
      if (into_cat && !row) ++*into_cat;
      if (into_row && row) ++*into_row;
    }
  for (std::int32_t i = 0; cl_cat && i < plan.graph().size(); ++i)
    if (plan.graph()[i].op == ctfx::op_kind::cat &&
        ctfx::detail::suggest_memory_format(plan.graph().meta(i)) != ctfx::detail::memory_format::contiguous)
      ++*cl_cat;
  if (held && reuse) {
    const auto direct = ctfx::direct_outputs(plan.graph(), plan.life());
    const auto h = ctfx::caller_held_buffers(plan.life(), &plan.memory_plan(), std::span<const std::int32_t>(direct.data(), direct.size()));
    std::size_t n = 0;
    for (std::size_t b = 0; b < h.size(); ++b) n += h[b] >= 0 && plan.life().buffers[b].storage != direct[static_cast<std::size_t>(h[b])];
    *held += n > 0;
  }
  // Bound with the inputs' values: a graph that reads values with item() is sized by them.
  std::vector<ctfx::tensor_ref> data;
  for (const auto& i : c.inputs) data.emplace_back(const_cast<std::byte*>(i.bytes.data()), i.desc);
  auto bnd = plan.bind_values(data, &kernels);
  if (!bnd.status) return "bind failed: " + bnd.status.message;
  buffers ref = make_buffers(c, bnd.outputs), opt_b = make_buffers(c, bnd.outputs);
  if (auto st = ctfx::reference_run(c.graph, ref.in_refs, ref.out_refs, &kernels); !st)
    return "reference failed: " + st.message;
  if (where == ctfx::backend::cuda) {
#if defined(__CUDACC__)
    if (auto st = run_on_device(plan, bnd.workspace_bytes, opt_b, kernels); !st) return "plan run failed: " + st.message;
#endif
  } else if (auto st = plan.run(opt_b.in_refs, opt_b.out_refs, where, {}, &kernels); !st) {
    return "plan run failed: " + st.message;
  }
  const std::string optimized = "\n  the plan's graph:\n" + ctfx::to_text(plan.graph());
  for (std::size_t j = 0; j < ref.out.size(); ++j)
    if (ref.out[j] != opt_b.out[j]) return "output " + std::to_string(j) + " differs from the reference" + optimized;
  for (std::size_t k = 0; k < ref.in.size(); ++k)
    if (ref.in[k] != opt_b.in[k])
      return "input " + std::to_string(k) + " is left in a different state than the reference leaves it" + optimized;
  const auto fa = output_aliases(c.graph), pa = output_aliases(plan.graph());
  for (std::size_t j = 0; j < fa.size() && j < pa.size(); ++j)
    if (pa[j] >= 0 && pa[j] != fa[j])
      return "output " + std::to_string(j) + " aliases input " + std::to_string(pa[j]) + " in the plan but not in the program" + optimized;
  return {};
}

// Writes `cases` generated graphs as a C++ program that parses each one's FX text in the compiler
// (ctfx::fx_graph), runs the compile-time pipeline and plan (ctfx::compiled) and checks them
// against the reference on the run-time graph the same seed generates (see compiled_sample.hpp).
// symbolic: every graph's first input with a symbolic first extent.
int emit_cpp(const char* path, std::uint64_t seed, long cases, bool symbolic) {
  const ctfx::fx_custom customs[] = {ctfx::fx_custom_of<ctfx_fuzz::axpy3>()};
  std::string body = "// Generated by `ctfx_fuzz --emit-cpp`: do not edit.\n#include \"compiled_sample.hpp\"\n\n";
  std::string calls;
  for (long k = 0; k < cases; ++k) {
    const std::uint64_t s = seed * 1000003u + static_cast<std::uint64_t>(k);
    const bool kernel_steps_only = k % 2 == 1;  // every other sample made to run as a static plan
    ctfx_fuzz::generator gen(s, true, kernel_steps_only, symbolic);
    auto c = gen.make();
    body += "// g" + std::to_string(k) + " (seed " + std::to_string(s) + (kernel_steps_only ? ", static-plan ops only" : "") + (symbolic ? ", symbolic" : "") +
            "): " + c.what + "\n";
    body += "constexpr auto g" + std::to_string(k) + " = ctfx::fx_graph<R\"ctfx(" + ctfx::to_fx(c.graph, customs) +
            ")ctfx\", ctfx_fuzz::axpy3>();\n";
    calls += "  failed += ctfx_fuzz::check_compiled<decltype(g" + std::to_string(k) + ")>(" + std::to_string(s) + "ull, " +
             (kernel_steps_only ? "true" : "false") + ", " + (symbolic ? "true" : "false") + ");\n";
  }
  body += "\nint main() {\n  int failed = 0;\n" + calls + "  std::printf(\"%d passed, %d failed (%d ran as static plans: %d with index ops, %d of them with indices computed in the graph, %d with bool masks, %d with scatters, %d with list ops, %d with symbolic extents; %d with row chains)\\n\", " +
          std::to_string(cases) + " - failed, failed, ctfx_fuzz::static_plans, ctfx_fuzz::static_index_plans, ctfx_fuzz::static_computed_plans, ctfx_fuzz::static_mask_plans, " +
          "ctfx_fuzz::static_scatter_plans, ctfx_fuzz::static_list_plans, ctfx_fuzz::static_symbolic_plans, ctfx_fuzz::row_chain_plans);\n  return failed == 0 ? 0 : 1;\n}\n";
  const std::string tmp = std::string(path) + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "w");
  if (!f || std::fwrite(body.data(), 1, body.size(), f) != body.size() || std::fclose(f) != 0) {
    std::fprintf(stderr, "ctfx_fuzz: cannot write %s\n", path);
    return 2;
  }
  return std::rename(tmp.c_str(), path) == 0 ? 0 : 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t seed = 1;
  long cases = 100;
  long print_graphs = 0;
  bool quiet = false, reuse = true, arena = true, symbolic = false;
  const char* emit = nullptr;
  ctfx::backend where = ctfx::backend::host;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) { std::fprintf(stderr, "ctfx_fuzz: %s needs a value\n", argv[i]); std::exit(2); }
      return argv[++i];
    };
    if (a == "--seed") seed = std::strtoull(next(), nullptr, 10);
    else if (a == "--cases") cases = std::strtol(next(), nullptr, 10);
    else if (a == "--print-graphs") print_graphs = std::strtol(next(), nullptr, 10);
    else if (a == "--quiet") quiet = true;
    else if (a == "--no-reuse") reuse = false;
    else if (a == "--no-arena") arena = false;
    else if (a == "--emit-cpp") emit = next();
    else if (a == "--symbolic") symbolic = true;
    else if (a == "--backend") {
      std::string_view b = next();
      where = b == "cuda" ? ctfx::backend::cuda : b == "omp" ? ctfx::backend::omp : ctfx::backend::host;
      if (b != "cuda" && b != "omp" && b != "host") { std::fprintf(stderr, "ctfx_fuzz: unknown backend '%s'\n", argv[i]); return 2; }
    } else {
      std::fprintf(stderr, "usage: ctfx_fuzz --seed S --cases N [--backend host|omp|cuda] [--no-reuse] [--no-arena] [--quiet] [--print-graphs K] [--emit-cpp FILE [--symbolic]]\n");
      return 2;
    }
  }
#if !defined(__CUDACC__)
  if (where == ctfx::backend::cuda) {
    std::fprintf(stderr, "ctfx_fuzz: this build has no CUDA backend (build ctfx_fuzz_cuda with nvcc)\n");
    return 2;
  }
#else
  if (where == ctfx::backend::cuda) {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
      std::printf("no CUDA device: skipped\n");
      return 77;
    }
  }
#endif
  if (emit) return emit_cpp(emit, seed, cases, symbolic);
  long passed = 0, failed = 0, fused = 0, fused_plans = 0, into_cat = 0, into_row = 0, cl_cat = 0, folds = 0, held = 0;
  long conds = 0, loops = 0, items = 0;
  for (long k = 0; k < cases; ++k) {
    const std::uint64_t s = seed * 1000003u + static_cast<std::uint64_t>(k);
    // On CUDA, no op that calls the backend's libm (sin): CUDA's and glibc's differ in the last bit.
    // Control flow (cond, while_loop) and values read with item() on every backend.
    ctfx_fuzz::generator gen(s, where != ctfx::backend::cuda, false, false, true);
    auto c = gen.make();
    if (k < print_graphs) std::printf("case %ld (seed %llu): %s\n%s\n", k, static_cast<unsigned long long>(s), c.what.c_str(),
                                      ctfx::to_text(c.graph).c_str());
    count_control(c.graph, conds, loops, items);
    const long before = fused;
    std::string why = check_case(c, where, reuse, arena, &fused, &into_cat, &into_row, &cl_cat, &folds, &held);
    fused_plans += fused > before;
    if (why.empty()) { ++passed; continue; }
    ++failed;
    if (!quiet || failed <= 5)
      std::printf("FAIL case %ld (case seed %llu): %s\n  ops: %s\n%s\n", k, static_cast<unsigned long long>(s), why.c_str(),
                  c.what.c_str(), ctfx::to_text(c.graph).c_str());
    if (device_lost) {
      std::printf("the CUDA context is lost after case %ld: the %ld cases after it cannot run\n", k, cases - k - 1);
      break;
    }
  }
  std::printf("%ld passed, %ld failed (fused kernels: %ld, in %ld plans, %ld of them reductions; results computed in a cat slice: %ld, "
              "in a put's row: %ld; channels-last cats: %ld; plans with values computed in an output's buffer before it: %ld; "
              "cond nodes: %ld, while_loop nodes: %ld, values read with item(): %ld)\n",
              passed, failed, fused, fused_plans, folds, into_cat, into_row, cl_cat, held, conds, loops, items);
  return failed == 0 ? 0 : 1;
}
