// ctfx/comm/nccl.hpp — the communicator of an NCCL communicator, on a CUDA stream:
//
//   ctfx::nccl_communicator world(comm, stream);   // one rank per GPU
//   plan.run(inputs, outputs, ctfx::device_ctx{ctfx::backend::cuda, stream, &world});
//
// Device buffers. Every call is enqueued on the stream, after the run's kernels and before the
// next ones (stream-ordered: no synchronization). In-place forms pass sendbuff == recvbuff (for
// all_gather, sendbuff is the rank's block of recvbuff; for reduce_scatter, recvbuff is the rank's
// block of sendbuff, as NCCL documents). The agreement on validation and on the collectives
// (comm/agreement.hpp) reduces a few words on the device and synchronizes the stream: it runs once
// per run, before the first write. The object holds a small device buffer for it (allocated here, not during runs).
// Link with the toolkit's NCCL (CMake: ctfx::nccl).
// ctfx: host-only
#pragma once
#include "../core/diagnostics_push.hpp"
#include <cuda_runtime.h>
#include <nccl.h>
#include <algorithm>
#include <cstring>
#include <span>
#include <string>
#include "communicator.hpp"

namespace ctfx {

/// A communicator over an `ncclComm_t` and the stream runs use (neither owned).
class nccl_communicator final : public communicator {
 public:
  /// Wraps `c`; collectives are enqueued on `stream`.
  nccl_communicator(ncclComm_t c, cudaStream_t stream) : comm_(c), stream_(stream) {
    ncclCommUserRank(c, &rank_);
    ncclCommCount(c, &size_);
    cudaMalloc(&scratch_, scratch_bytes);
  }
  ~nccl_communicator() override { cudaFree(scratch_); }
  nccl_communicator(const nccl_communicator&) = delete;
  nccl_communicator& operator=(const nccl_communicator&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  const char* engine() const override { return "nccl"; }
  bool stream_ordered() const override { return true; }
  bool device_buffers() const override { return true; }
  bool supports(dtype dt, reduce_op) const override { return dt != dtype::b8; }

  std::string all_reduce(const void* send, void* recv, std::size_t count, dtype dt, reduce_op op) override {
    return said(ncclAllReduce(send, recv, count, type_of(dt), op_of(op), comm_, stream_));
  }
  std::string broadcast(void* buf, std::size_t count, dtype dt, int root) override {
    return said(ncclBroadcast(buf, buf, count, type_of(dt), root, comm_, stream_));
  }
  std::string all_gather(const void* send, void* recv, std::size_t count, dtype dt) override {
    return said(ncclAllGather(send, recv, count, type_of(dt), comm_, stream_));
  }
  std::string reduce_scatter(const void* send, void* recv, std::size_t count, dtype dt, reduce_op op) override {
    return said(ncclReduceScatter(send, recv, count, type_of(dt), op_of(op), comm_, stream_));
  }
  std::string sendrecv(const void* send, std::size_t send_bytes, int to, void* recv, std::size_t recv_bytes,
                       int from) override {
    ncclGroupStart();
    if (to >= 0) ncclSend(send, send_bytes, ncclUint8, to, comm_, stream_);
    if (from >= 0) ncclRecv(recv, recv_bytes, ncclUint8, from, comm_, stream_);
    return said(ncclGroupEnd());
  }
  int agree(bool ok, std::span<std::uint64_t> words) override {
    // One reduction (max) of the failing rank, as size - rank, and the words, on the device.
    std::uint64_t buf[scratch_bytes / sizeof(std::uint64_t)] = {};
    const std::size_t n = std::min(words.size(), scratch_bytes / sizeof(std::uint64_t) - 1);
    buf[0] = static_cast<std::uint64_t>(ok ? 0 : size_ - rank_);
    std::copy(words.begin(), words.begin() + static_cast<std::ptrdiff_t>(n), buf + 1);
    cudaMemcpyAsync(scratch_, buf, (1 + n) * sizeof(std::uint64_t), cudaMemcpyHostToDevice, stream_);
    if (ncclAllReduce(scratch_, scratch_, 1 + n, ncclUint64, ncclMax, comm_, stream_) != ncclSuccess) return ok ? 0 : rank_;
    cudaMemcpyAsync(buf, scratch_, (1 + n) * sizeof(std::uint64_t), cudaMemcpyDeviceToHost, stream_);
    cudaStreamSynchronize(stream_);
    std::copy(buf + 1, buf + 1 + n, words.begin());
    return buf[0] == 0 ? -1 : size_ - static_cast<int>(buf[0]);
  }
  void share(std::string& text, std::int32_t& node, int root) override {
    char buf[scratch_bytes] = {};
    std::int32_t head[2] = {static_cast<std::int32_t>(std::min(text.size(), scratch_bytes - 9)), node};
    std::memcpy(buf, head, sizeof head);
    std::memcpy(buf + sizeof head, text.data(), static_cast<std::size_t>(head[0]));
    cudaMemcpyAsync(scratch_, buf, scratch_bytes, cudaMemcpyHostToDevice, stream_);
    ncclBroadcast(scratch_, scratch_, scratch_bytes, ncclUint8, root, comm_, stream_);
    cudaMemcpyAsync(buf, scratch_, scratch_bytes, cudaMemcpyDeviceToHost, stream_);
    cudaStreamSynchronize(stream_);
    std::memcpy(head, buf, sizeof head);
    text.assign(buf + sizeof head, static_cast<std::size_t>(head[0]));
    node = head[1];
  }

  /// The NCCL datatype of `dt`.
  static ncclDataType_t type_of(dtype dt) {
    switch (dt) {
      case dtype::b8: return ncclUint8;
      case dtype::i8: return ncclInt8;
      case dtype::i32: return ncclInt32;
      case dtype::i64: return ncclInt64;
      case dtype::f16: return ncclFloat16;
      case dtype::bf16: return ncclBfloat16;
      case dtype::f32: return ncclFloat32;
      case dtype::f64: return ncclFloat64;
    }
    return ncclUint8;
  }

 private:
  static constexpr std::size_t scratch_bytes = 1024;  // the agreement's words, or a shared message
  static ncclRedOp_t op_of(reduce_op op) { return op == reduce_op::sum ? ncclSum : op == reduce_op::max ? ncclMax : ncclMin; }
  static std::string said(ncclResult_t rc) { return rc == ncclSuccess ? std::string() : std::string(ncclGetErrorString(rc)); }

  ncclComm_t comm_;
  cudaStream_t stream_;
  int rank_ = 0, size_ = 1;
  void* scratch_ = nullptr;
};

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
