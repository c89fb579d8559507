// ctfx::runtime_omp: the executor compiled once with OpenMP, so that a runtime_plan run on
// backend::omp splits its loops across threads (ctfx::runtime, compiled without OpenMP in a default
// build, runs them on one). Run by CTest with OMP_NUM_THREADS=2: the run must start OpenMP's second
// thread (Linux lists a process's threads in /proc/self/task), and its values must be the host
// backend's, bit for bit.
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>
#include <ctfx.hpp>
#include <ctfx/exec/runtime.hpp>

namespace {
long threads_of_this_process() {
  long n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/task")) ++n;
  return n;
}
}  // namespace

int main() {
  constexpr long N = 64, D = 4096;
  const ctfx::ir g = ctfx::build_checked([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {N, D});
    auto e = ctfx::exp(x - x.amax({1}, true));
    b.output(e / e.sum({1}, true));
  });
  const ctfx::runtime_plan plan(g);
  if (!plan.error().ok()) {
    std::printf("plan error: %s\n", std::string(plan.error().message()).c_str());
    return 1;
  }
  std::vector<float> x(N * D), host(N * D), omp(N * D);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 37) % 101) * 0.05f - 2.5f;
  const std::vector<ctfx::tensor_ref> in = {ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {N, D})};
  const std::vector<ctfx::tensor_desc> descs(in.begin(), in.end());
  std::vector<std::byte> ws(plan.bind(descs).workspace_bytes);
  const long before = threads_of_this_process();
  for (auto [where, out] : {std::pair{ctfx::backend::host, &host}, std::pair{ctfx::backend::omp, &omp}}) {
    const std::vector<ctfx::tensor_ref> outs = {ctfx::tensor_ref::contiguous(out->data(), ctfx::f32, {N, D})};
    if (auto st = plan.run(in, outs, where, ws); !st) {
      std::printf("run failed: %s\n", st.message.c_str());
      return 1;
    }
  }
  const long after = threads_of_this_process();
  std::printf("threads of this process: %ld before the runs, %ld after\n", before, after);
  if (after < 2) {
    std::printf("FAIL: backend::omp ran on one thread (is the executor ctfx::runtime_omp's, compiled with OpenMP?)\n");
    return 1;
  }
  if (std::memcmp(host.data(), omp.data(), host.size() * sizeof(float)) != 0) {
    std::printf("FAIL: backend::omp's values differ from backend::host's\n");
    return 1;
  }
  std::printf("backend::omp on %ld threads, bit-identical to backend::host\n", after);
  return 0;
}
