// ctfx_plan: plans a memory trace (columns id,lower,upper,size; half-open lifetimes, bytes) with
// ctfx's arena planner — the same constexpr code that plans graphs in the compiler — checks the
// plan (no two blocks overlap in time and space; every offset aligned) and prints what it found.
// `ctfx_plan --help` explains the options and every printed field.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <ctfx/plan/arena.hpp>
#include <ctfx/plan/arena_gen.hpp>
#include <ctfx/plan/trace.hpp>

namespace {

constexpr const char* usage =
    "usage: ctfx_plan FILE.csv [--work N] [--greedy | --first-fit] [--no-search]\n"
    "       ctfx_plan --generate SEED [--blocks N]\n"
    "       ctfx_plan --help\n";

constexpr const char* help =
    "ctfx_plan FILE.csv [options]: plans a memory trace with ctfx's pooled-arena planner.\n"
    "\n"
    "FILE.csv has the header id,lower,upper,size: a buffer of `size` bytes live over the half-open\n"
    "interval [lower, upper). The planner gives each buffer a byte offset in one pool so that no\n"
    "two buffers live at the same time share a byte. The plan is checked before it is printed: an\n"
    "invalid plan exits with status 3, a plan larger than greedy by size with status 4.\n"
    "\n"
    "Options:\n"
    "  --work N      the planner's budget in units of work (default: the work that fits ~1 s of\n"
    "                one core of the reference machine). The budget is counted in work, not in\n"
    "                seconds, so the same file and options give the same plan on any machine.\n"
    "  --greedy      plan with the floor only: greedy by size, best fit (TFLite's ArenaPlanner).\n"
    "  --first-fit   plan with the Inductor-like baseline: blocks in start order, lowest gap.\n"
    "  --no-search   leave out the exact search (greedy portfolio and squeaky wheel only).\n"
    "  --help        this text.\n"
    "\n"
    "ctfx_plan --generate SEED [--blocks N] writes a trace with a known optimum to stdout instead:\n"
    "a 2,000-step x 1 MiB rectangle cut at random (guillotine cuts, memory at 1 KiB multiples) into\n"
    "N blocks (default 400); the optimum is 1 MiB, the lower bound (plan/arena_gen.hpp).\n"
    "\n"
    "Output (two lines of key=value fields):\n"
    "  blocks         buffers in the trace.\n"
    "  runs           greedy runs and exact searches the planner made within its budget.\n"
    "  best_run       which of them gave the plan (0: the greedy-by-size floor).\n"
    "  work           units of work spent (the budget, plus the floor run, which always completes).\n"
    "  greedy         pool bytes of the greedy-by-size best-fit plan (TFLite); plan <= greedy.\n"
    "  plan           pool bytes of the plan printed: max over buffers of offset + size.\n"
    "  lower_bound    max over time of the summed sizes of the live buffers: no plan is smaller.\n"
    "  ratio          plan / lower_bound (1.0000: optimal).\n"
    "  greedy_ratio   greedy / lower_bound.\n"
    "  proven_bound   no plan is smaller: lower_bound, raised by what the exact search proved.\n"
    "  optimal        yes: plan == proven_bound, the plan is proven optimal (no: it may not be).\n"
    "  seconds        wall-clock time of the planning (not of reading the file or checking).\n"
    "  cpu_seconds    processor time of the planning (std::clock): what a loaded machine inflates\n"
    "                less than wall-clock time. The plan itself never depends on either.\n";

}  // namespace

int main(int argc, char** argv) {
  std::string file;
  ctfx::arena_options opt;
  bool first_fit = false, greedy = false, generate = false;
  std::uint64_t seed = 0;
  ctfx::exact_packing_options gen;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::fputs(help, stdout);
      return 0;
    } else if (a == "--work" && i + 1 < argc) {
      char* end = nullptr;
      long long w = std::strtoll(argv[++i], &end, 10);
      if (!end || *end || w < 0) { std::fprintf(stderr, "ctfx_plan: --work needs a non-negative integer, got '%s'\n", argv[i]); return 2; }
      opt.work = w;
    } else if ((a == "--generate" || a == "--blocks") && i + 1 < argc) {
      char* end = nullptr;
      long long v = std::strtoll(argv[++i], &end, 10);
      if (!end || *end || v < 0 || (a == "--blocks" && (v < 1 || v > 1'000'000))) {
        std::fprintf(stderr, "ctfx_plan: %s needs a non-negative integer (--blocks: 1 to 1000000), got '%s'\n", a.c_str(), argv[i]);
        return 2;
      }
      if (a == "--generate") { generate = true; seed = static_cast<std::uint64_t>(v); }
      else gen.blocks = static_cast<std::int32_t>(v);
    } else if (a == "--first-fit") {
      first_fit = true;
    } else if (a == "--greedy") {
      greedy = true;
    } else if (a == "--no-search") {
      opt.search_max_pairs = 0;
    } else if (file.empty() && !a.empty() && a[0] != '-') {
      file = a;
    } else {
      std::fputs(usage, stderr);
      return 2;
    }
  }
  if (generate && file.empty()) {
    const auto b = ctfx::exact_packing(seed, gen);
    std::printf("id,lower,upper,size\n");
    for (std::size_t i = 0; i < b.size(); ++i)
      std::printf("%zu,%lld,%lld,%lld\n", i, static_cast<long long>(b[i].lower), static_cast<long long>(b[i].upper), static_cast<long long>(b[i].size));
    return 0;
  }
  if (file.empty() || generate || (first_fit && greedy)) { std::fputs(usage, stderr); return 2; }
  std::ifstream in(file, std::ios::binary);
  if (!in) { std::fprintf(stderr, "ctfx_plan: cannot open '%s'\n", file.c_str()); return 2; }
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  const ctfx::trace t = ctfx::parse_trace(text);
  if (!t.ok()) { std::fprintf(stderr, "ctfx_plan: %s: %s\n", file.c_str(), t.error.c_str()); return 1; }

  const std::clock_t c0 = std::clock();
  const auto t0 = std::chrono::steady_clock::now();
  const ctfx::arena_result r = first_fit ? ctfx::arena_first_fit(t.blocks)
                               : greedy  ? ctfx::arena_greedy_by_size(t.blocks)
                                         : ctfx::plan_arena_blocks(t.blocks, opt);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double cpu_seconds = static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;

  const ctfx::arena_conflict c = ctfx::arena_check(t.blocks, r.offset);
  if (!c.ok()) {
    std::fprintf(stderr, "ctfx_plan: %s: INVALID PLAN: blocks id=%lld and id=%lld overlap in time and space\n", file.c_str(),
                 static_cast<long long>(t.ids[static_cast<std::size_t>(c.a)]), static_cast<long long>(t.ids[static_cast<std::size_t>(c.b)]));
    return 3;
  }
  // The floor, planned again on its own: the planner must not have done worse (first fit may).
  const std::int64_t floor = ctfx::arena_greedy_by_size(t.blocks).pool_bytes;
  if (!first_fit && r.pool_bytes > floor) {
    std::fprintf(stderr, "ctfx_plan: %s: plan %lld is larger than greedy by size (%lld)\n", file.c_str(),
                 static_cast<long long>(r.pool_bytes), static_cast<long long>(floor));
    return 4;
  }
  auto ratio = [&](std::int64_t x) { return r.lower_bound > 0 ? static_cast<double>(x) / static_cast<double>(r.lower_bound) : 1.0; };
  std::printf("blocks=%zu runs=%d best_run=%d work=%lld greedy=%lld\n", t.blocks.size(), r.runs, r.best_run,
              static_cast<long long>(r.work), static_cast<long long>(floor));
  std::printf("plan=%lld lower_bound=%lld ratio=%.4f greedy_ratio=%.4f proven_bound=%lld optimal=%s seconds=%.3f cpu_seconds=%.3f\n",
              static_cast<long long>(r.pool_bytes), static_cast<long long>(r.lower_bound), ratio(r.pool_bytes), ratio(floor),
              static_cast<long long>(r.proven_bound), r.optimal() ? "yes" : "no", seconds, cpu_seconds);
  return 0;
}
