// ctfx_plan FILE.csv [--budget-ms N] [--first-fit] [--no-search]: plans a memory trace (columns id,lower,upper,size;
// half-open lifetimes, bytes) with ctfx's arena planner — the same constexpr code that plans graphs
// in the compiler — checks the plan (no two blocks overlap in time and space) and prints
//   plan=<bytes> lower_bound=<bytes> ratio=<plan/lower_bound> seconds=<planning time>
// --first-fit plans with the Inductor-like baseline instead (start order, first fit).
// --no-search leaves out the exact search (plan/arena_search.hpp): greedy portfolio + squeaky wheel.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <ctfx/plan/arena.hpp>
#include <ctfx/plan/trace.hpp>

int main(int argc, char** argv) {
  const char* usage = "usage: ctfx_plan FILE.csv [--budget-ms N] [--first-fit] [--no-search]\n";
  std::string file;
  ctfx::arena_options opt;
  bool first_fit = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--budget-ms" && i + 1 < argc) {
      char* end = nullptr;
      long long ms = std::strtoll(argv[++i], &end, 10);
      if (!end || *end || ms < 0) { std::fprintf(stderr, "ctfx_plan: --budget-ms needs a non-negative integer, got '%s'\n", argv[i]); return 2; }
      opt.budget_ns = ms * 1'000'000;
    } else if (a == "--first-fit") {
      first_fit = true;
    } else if (a == "--no-search") {
      opt.search_max_pairs = 0;
    } else if (file.empty() && !a.empty() && a[0] != '-') {
      file = a;
    } else {
      std::fputs(usage, stderr);
      return 2;
    }
  }
  if (file.empty()) { std::fputs(usage, stderr); return 2; }
  std::ifstream in(file, std::ios::binary);
  if (!in) { std::fprintf(stderr, "ctfx_plan: cannot open '%s'\n", file.c_str()); return 2; }
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  const ctfx::trace t = ctfx::parse_trace(text);
  if (!t.ok()) { std::fprintf(stderr, "ctfx_plan: %s: %s\n", file.c_str(), t.error.c_str()); return 1; }

  const auto t0 = std::chrono::steady_clock::now();
  const ctfx::arena_result r = first_fit ? ctfx::arena_first_fit(t.blocks) : ctfx::plan_arena_blocks(t.blocks, opt);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  const ctfx::arena_conflict c = ctfx::arena_check(t.blocks, r.offset);
  if (!c.ok()) {
    std::fprintf(stderr, "ctfx_plan: %s: INVALID PLAN: blocks id=%lld and id=%lld overlap in time and space\n", file.c_str(),
                 static_cast<long long>(t.ids[static_cast<std::size_t>(c.a)]), static_cast<long long>(t.ids[static_cast<std::size_t>(c.b)]));
    return 3;
  }
  std::printf("blocks=%zu runs=%d best_run=%d\n", t.blocks.size(), r.runs, r.best_run);
  const double ratio = r.lower_bound > 0 ? static_cast<double>(r.pool_bytes) / static_cast<double>(r.lower_bound) : 1.0;
  std::printf("plan=%lld lower_bound=%lld ratio=%.4f seconds=%.3f\n", static_cast<long long>(r.pool_bytes),
              static_cast<long long>(r.lower_bound), ratio, seconds);
  return 0;
}
