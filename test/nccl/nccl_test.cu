// The NCCL communicator (ctfx/comm/nccl.hpp) on the GPUs present: one rank in this process
// (ncclCommInitAll), and, built with MPI (CTFX_TEST_WITH_MPI), ranks in processes whose NCCL
// communicator comes from an id rank 0 makes and MPI broadcasts (docs/cluster.md), one GPU per
// rank. Collectives and the halo exchange of a graph run on the CUDA backend, checked against the
// host (over MPI for the processes), bit for bit; ranks about to post different collectives refuse
// alike before any write. Exit code 77 (skipped) when there are fewer GPUs than ranks.
#include <cuda_runtime.h>
#include <nccl.h>
#include <ctfx.hpp>
#include <ctfx/comm/nccl.hpp>
#include <ctfx/exec/runtime.hpp>
#include <cstdio>
#include <cstring>
#include <vector>
#if defined(CTFX_TEST_WITH_MPI)
#include <mpi.h>
#include <ctfx/comm/mpi.hpp>
#endif

namespace {

int failures = 0;
void check(bool ok, const char* what) {
  if (!ok) { std::printf("FAILED: %s\n", what); ++failures; }
}

constexpr ctfx::index_t H = 10, W = 12;
constexpr auto step = ctfx::graph([](ctfx::builder& b) {
  auto u = b.input("u", ctfx::f32, {H, W});
  auto s = b.input("s", ctfx::f32, {4});
  b.update(u, ctfx::halo_exchange(u, 1, {1, 1, true, true}));
  b.update(s, ctfx::all_reduce(s, ctfx::reduce_op::sum));
  b.output(ctfx::all_reduce(u.sum({1}), ctfx::reduce_op::max));
});

// One rank (device 0): the NCCL path end to end, against the host run without a communicator.
void one_rank() {
  ncclComm_t comm;
  int dev = 0;
  if (ncclCommInitAll(&comm, 1, &dev) != ncclSuccess) { check(false, "ncclCommInitAll"); return; }
  cudaStream_t stream;
  cudaStreamCreate(&stream);
  {
    ctfx::nccl_communicator world(comm, stream);
    ctfx::runtime_plan plan(step.get());
    std::vector<float> u(H * W), s{1, 2, 3, 4}, o(H);
    for (std::size_t i = 0; i < u.size(); ++i) u[i] = static_cast<float>((i * 13) % 17) - 8.0f;
    std::vector<float> hu = u, hs = s, ho(H);
    check(plan.run({ctfx::tensor_ref::contiguous(hu.data(), ctfx::f32, {H, W}), ctfx::tensor_ref::contiguous(hs.data(), ctfx::f32, {4})},
                   {ctfx::tensor_ref::contiguous(ho.data(), ctfx::f32, {H})}).ok, "host run");
    float *du, *ds, *dout;
    cudaMalloc(&du, u.size() * 4);
    cudaMalloc(&ds, 16);
    cudaMalloc(&dout, H * 4);
    cudaMemcpy(du, u.data(), u.size() * 4, cudaMemcpyHostToDevice);
    cudaMemcpy(ds, s.data(), 16, cudaMemcpyHostToDevice);
    const auto b = plan.bind({ctfx::tensor_desc::contiguous(ctfx::f32, {H, W}), ctfx::tensor_desc::contiguous(ctfx::f32, {4})});
    std::byte* ws = nullptr;
    cudaMalloc(&ws, b.workspace_bytes + 256);
    auto st = plan.run({ctfx::tensor_ref::contiguous(du, ctfx::f32, {H, W}), ctfx::tensor_ref::contiguous(ds, ctfx::f32, {4})},
                       {ctfx::tensor_ref::contiguous(dout, ctfx::f32, {H})}, ctfx::device_ctx{ctfx::backend::cuda, stream, &world},
                       std::span<std::byte>(ws, b.workspace_bytes + 256));
    if (!st.ok) std::printf("%s\n", st.message.c_str());
    check(st.ok, "cuda run over nccl");
    cudaStreamSynchronize(stream);
    cudaMemcpy(u.data(), du, u.size() * 4, cudaMemcpyDeviceToHost);
    cudaMemcpy(s.data(), ds, 16, cudaMemcpyDeviceToHost);
    cudaMemcpy(o.data(), dout, H * 4, cudaMemcpyDeviceToHost);
    check(u == hu, "halo exchange on the device equals the host's");
    check(s == hs, "all_reduce in place");
    check(o == ho, "all_reduce of a reduction");
    cudaFree(du); cudaFree(ds); cudaFree(dout); cudaFree(ws);
  }
  cudaStreamDestroy(stream);
  ncclCommDestroy(comm);
}

#if defined(CTFX_TEST_WITH_MPI)
// ---- ranks in processes: x (an extent each rank binds) summed in place, gathered from P ranks,
// an f16 vector broadcast from the last rank.
template <int P>
constexpr auto world_step = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {b.sym("n"), 4});
  auto h = b.input("h", ctfx::f16, {6});
  b.update(x, ctfx::all_reduce(x));
  b.update(h, ctfx::broadcast(h, P - 1));
  b.output(ctfx::all_gather(x * 2.0f, P));
});

template <class T>
T* to_device(const std::vector<T>& v) {
  T* d = nullptr;
  cudaMalloc(&d, v.size() * sizeof(T) + 1);
  cudaMemcpy(d, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice);
  return d;
}
template <class T>
std::vector<T> from_device(const T* d, std::size_t n) {
  std::vector<T> v(n);
  cudaMemcpy(v.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost);
  return v;
}
template <class T>
bool same_bytes(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

// Runs world_step<P> with `rows` rows of x on the device over NCCL (and, when `host` is given, on
// the host over MPI); returns the device run's status, the results in x, h and o.
template <int P>
ctfx::run_status run_step(ctfx::communicator& nccl, cudaStream_t stream, ctfx::index_t rows, std::vector<float>& x,
                          std::vector<ctfx::half_t>& h, std::vector<float>& o) {
  float* dx = to_device(x);
  ctfx::half_t* dh = to_device(h);
  float* dout = to_device(o);
  ctfx::runtime_plan plan(world_step<P>.get());
  const auto b = plan.bind({ctfx::tensor_desc::contiguous(ctfx::f32, {rows, 4}), ctfx::tensor_desc::contiguous(ctfx::f16, {6})});
  std::byte* ws = nullptr;
  cudaMalloc(&ws, b.workspace_bytes + 256);
  auto st = plan.run({ctfx::tensor_ref::contiguous(dx, ctfx::f32, {rows, 4}), ctfx::tensor_ref::contiguous(dh, ctfx::f16, {6})},
                     {ctfx::tensor_ref::contiguous(dout, ctfx::f32, {P * rows, 4})},
                     ctfx::device_ctx{ctfx::backend::cuda, stream, &nccl}, std::span<std::byte>(ws, b.workspace_bytes + 256));
  cudaStreamSynchronize(stream);
  x = from_device(dx, x.size());
  h = from_device(dh, h.size());
  o = from_device(dout, o.size());
  cudaFree(dx); cudaFree(dh); cudaFree(dout); cudaFree(ws);
  return st;
}

template <int P>
void across_processes(int rank, int devices) {
  cudaSetDevice(rank % devices);
  ncclUniqueId id;
  if (rank == 0) ncclGetUniqueId(&id);
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  ncclComm_t comm;
  if (ncclCommInitRank(&comm, P, id, rank) != ncclSuccess) { check(false, "ncclCommInitRank"); return; }
  cudaStream_t stream;
  cudaStreamCreate(&stream);
  {
    ctfx::nccl_communicator nccl(comm, stream);
    ctfx::mpi_communicator mpi(MPI_COMM_WORLD);
    constexpr ctfx::index_t rows = 5;
    std::vector<float> x(rows * 4), o(P * rows * 4, -1.0f);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(100 * rank + static_cast<int>(i));
    std::vector<ctfx::half_t> h(6);
    for (std::size_t i = 0; i < h.size(); ++i) h[i] = ctfx::half_t(static_cast<float>(rank) + 0.25f * static_cast<float>(i));
    // The host over MPI: the reference.
    std::vector<float> hx = x, ho = o;
    std::vector<ctfx::half_t> hh = h;
    auto hs = ctfx::runtime_plan(world_step<P>.get())
                  .run({ctfx::tensor_ref::contiguous(hx.data(), ctfx::f32, {rows, 4}), ctfx::tensor_ref::contiguous(hh.data(), ctfx::f16, {6})},
                       {ctfx::tensor_ref::contiguous(ho.data(), ctfx::f32, {P * rows, 4})}, ctfx::device_ctx{ctfx::backend::host, nullptr, &mpi});
    check(hs.ok, "host run over MPI");
    auto st = run_step<P>(nccl, stream, rows, x, h, o);
    if (!st.ok) std::printf("rank %d: %s\n", rank, st.message.c_str());
    check(st.ok, "cuda run over NCCL across processes");
    check(same_bytes(x, hx), "all_reduce over NCCL equals MPI's, bit for bit");
    check(same_bytes(h, hh), "f16 broadcast over NCCL equals MPI's");
    check(same_bytes(o, ho), "all_gather over NCCL equals MPI's");
    // The closed form: element i summed over the ranks (exact in f32).
    for (std::size_t i = 0; i < x.size(); ++i)
      check(x[i] == static_cast<float>(100 * P * (P - 1) / 2 + P * static_cast<int>(i)), "all_reduce value");
    if (P > 1) {
      // Rank 1 binds 3 rows, the others 5: every rank refuses alike, nothing written.
      const ctfx::index_t mine = rank == 1 ? 3 : rows;
      std::vector<float> dx(static_cast<std::size_t>(mine) * 4, 1.5f), dout(static_cast<std::size_t>(P * mine) * 4, -2.0f);
      std::vector<ctfx::half_t> dh(6, ctfx::half_t(3.0f));
      const auto x0 = dx, o0 = dout;
      const auto h0 = dh;
      auto bad = run_step<P>(nccl, stream, mine, dx, dh, dout);
      if (bad.ok) std::printf("rank %d: a disagreement ran\n", rank);
      check(!bad.ok && bad.message.rfind("rank 1 of " + std::to_string(P) + ": rule comm-agree", 0) == 0,
            "ranks binding different extents refuse alike, naming rank 1");
      check(same_bytes(dx, x0) && same_bytes(dh, h0) && same_bytes(dout, o0), "nothing written on a disagreement");
    }
  }
  cudaStreamDestroy(stream);
  ncclCommDestroy(comm);
}
#endif

}  // namespace

int main(int argc, char** argv) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) n = 0;
#if defined(CTFX_TEST_WITH_MPI)
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  // NCCL takes one GPU per rank: every rank skips alike when the node has fewer.
  int enough = n >= size ? 1 : 0, all = 0;
  MPI_Allreduce(&enough, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (all == 0) {
    if (rank == 0) std::printf("%d ranks, %d CUDA devices: skipped (NCCL takes one GPU per rank)\n", size, n);
    MPI_Finalize();
    return 77;
  }
  if (size == 1) one_rank();
  if (size == 1) across_processes<1>(rank, n);
  else if (size == 2) across_processes<2>(rank, n);
  else check(false, "run with 1 or 2 ranks");
  int bad = failures, any = 0;
  MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  std::printf("rank %d: %d failures\n", rank, failures);
  MPI_Finalize();
  return any == 0 ? 0 : 1;
#else
  (void)argc;
  (void)argv;
  if (n == 0) {
    std::puts("no CUDA device: skipped");
    return 77;
  }
  one_rank();
  std::printf("%d failures\n", failures);
  return failures == 0 ? 0 : 1;
#endif
}
