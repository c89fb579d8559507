// The NCCL communicator (ctfx/comm/nccl.hpp) on the GPUs present, one rank per GPU in this process
// (ncclCommInitAll): collectives and the halo exchange of a graph run on the CUDA backend, checked
// against the host. Exit code 77 (skipped) when no GPU is present.
#include <cuda_runtime.h>
#include <nccl.h>
#include <ctfx.hpp>
#include <ctfx/comm/nccl.hpp>
#include <ctfx/exec/runtime.hpp>
#include <cstdio>
#include <vector>

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

}  // namespace

int main() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    std::puts("no CUDA device: skipped");
    return 77;
  }
  one_rank();
  std::printf("%d failures\n", failures);
  return failures == 0 ? 0 : 1;
}
