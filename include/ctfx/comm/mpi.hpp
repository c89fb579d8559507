// ctfx/comm/mpi.hpp — the communicator of an MPI communicator (Open MPI, MPICH, ...):
//
//   ctfx::mpi_communicator world(MPI_COMM_WORLD);
//   plan.run(inputs, outputs, ctfx::device_ctx{ctfx::backend::host, nullptr, &world});
//
// The object communicates over its own duplicate of the caller's communicator (MPI_Comm_dup, freed
// when it goes: destroy it before MPI_Finalize), so that no message of the library can match the
// application's receives, whatever their tags; errors come back as text (MPI_ERRORS_RETURN on the
// duplicate; the caller's communicator and its error handler are left as they are).
// Host buffers; device buffers too with a CUDA-aware MPI (the executor synchronizes the run's
// stream before each call, since MPI is not stream-ordered). Whether the MPI is CUDA-aware is asked
// of the MPI when the object is made (Open MPI's MPIX_Query_cuda_support, MPICH's
// MPIX_GPU_query_support); an MPI that cannot say counts as not CUDA-aware unless the caller says
// otherwise (mpi_device_buffers::yes), and a run on backend::cuda is then refused before any write. In-place collectives pass
// MPI_IN_PLACE. Every dtype: f16 and bf16 move as 2-byte elements and reduce with MPI ops of the
// library's (in float, rounded back after each step, as NCCL does); a count above what one call
// takes (an int, or `max_count`) is split into several calls, or into derived datatypes where the
// blocks of an all_gather must stay whole.
// Link with MPI (CMake: ctfx::mpi, or MPI::MPI_CXX).
#pragma once
#include "../core/diagnostics_push.hpp"
#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // Open MPI's and MPICH's extensions: the CUDA-awareness queries
#endif
#include <algorithm>
#include <climits>
#include <cstddef>
#include <span>
#include <string>
#include <vector>
#include "../kernels/element.hpp"
#include "communicator.hpp"

namespace ctfx {

/// Whether an mpi_communicator may be given device buffers: as the MPI says (`detect`), or as the
/// caller knows (`yes`: a CUDA-aware MPI that cannot be asked; `no`: host buffers only).
enum class mpi_device_buffers { detect, yes, no };

/// Whether this process's MPI says it is CUDA-aware at run time (false when it cannot say).
inline bool mpi_cuda_aware() {
#if defined(MPIX_CUDA_AWARE_SUPPORT)
  return MPIX_Query_cuda_support() == 1;  // Open MPI: the library loaded may differ from the headers
#elif defined(MPIX_GPU_SUPPORT_CUDA)
  int yes = 0;  // MPICH 4
  return MPIX_GPU_query_support(MPIX_GPU_SUPPORT_CUDA, &yes) == MPI_SUCCESS && yes != 0;
#else
  return false;
#endif
}

/// A communicator over a duplicate of an `MPI_Comm` (the caller's is only read when constructing).
class mpi_communicator final : public communicator {
 public:
  /// Duplicates `c` (collective over `c`). `max_count`: the most elements one MPI call is given
  /// (INT_MAX; smaller only to exercise the split of large messages). `device`: whether runs on
  /// backend::cuda may hand it device pointers (by default, as the MPI says).
  explicit mpi_communicator(MPI_Comm c, std::size_t max_count = INT_MAX, mpi_device_buffers device = mpi_device_buffers::detect)
      : max_count_(std::max<std::size_t>(1, std::min<std::size_t>(max_count, INT_MAX))),
        device_(device == mpi_device_buffers::yes || (device == mpi_device_buffers::detect && mpi_cuda_aware())) {
    MPI_Comm_dup(c, &comm_);
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
    for (int k = 0; k < 2; ++k) {
      MPI_Type_contiguous(2, MPI_BYTE, &half_[k]);
      MPI_Type_commit(&half_[k]);
    }
    MPI_Op_create(&reduce_half<half_t, 0>, 1, &half_ops_[0][0]);
    MPI_Op_create(&reduce_half<half_t, 1>, 1, &half_ops_[0][1]);
    MPI_Op_create(&reduce_half<half_t, 2>, 1, &half_ops_[0][2]);
    MPI_Op_create(&reduce_half<bfloat16_t, 0>, 1, &half_ops_[1][0]);
    MPI_Op_create(&reduce_half<bfloat16_t, 1>, 1, &half_ops_[1][1]);
    MPI_Op_create(&reduce_half<bfloat16_t, 2>, 1, &half_ops_[1][2]);
  }
  ~mpi_communicator() override {
    for (auto& ops : half_ops_)
      for (MPI_Op& o : ops) MPI_Op_free(&o);
    for (MPI_Datatype& t : half_) MPI_Type_free(&t);
    MPI_Comm_free(&comm_);
  }
  mpi_communicator(const mpi_communicator&) = delete;
  mpi_communicator& operator=(const mpi_communicator&) = delete;

  /// The library's own communicator (a duplicate of the one given).
  MPI_Comm handle() const { return comm_; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  const char* engine() const override { return "mpi"; }
  bool device_buffers() const override { return device_; }
  // Every dtype moves; every one but bool reduces (f16 and bf16 with the library's ops).
  bool supports(dtype dt, reduce_op) const override { return dt != dtype::b8; }

  std::string all_reduce(const void* send, void* recv, std::size_t count, dtype dt, reduce_op op) override {
    // Element by element: a large count is reduced in pieces.
    const std::size_t es = static_cast<std::size_t>(size_of(dt));
    for (std::size_t at = 0; at < count; at += max_count_) {
      const int n = static_cast<int>(std::min(max_count_, count - at));
      auto* r = static_cast<std::byte*>(recv) + at * es;
      const void* s = send == recv ? MPI_IN_PLACE : static_cast<const std::byte*>(send) + at * es;
      if (auto e = said(MPI_Allreduce(s, r, n, type_of(dt), op_of(dt, op), comm_)); !e.empty()) return e;
    }
    return {};
  }
  std::string broadcast(void* buf, std::size_t count, dtype dt, int root) override {
    const std::size_t es = static_cast<std::size_t>(size_of(dt));
    for (std::size_t at = 0; at < count; at += max_count_)
      if (auto e = said(MPI_Bcast(static_cast<std::byte*>(buf) + at * es, static_cast<int>(std::min(max_count_, count - at)),
                                  type_of(dt), root, comm_));
          !e.empty())
        return e;
    return {};
  }
  std::string all_gather(const void* send, void* recv, std::size_t count, dtype dt) override {
    const bool inplace = send == static_cast<const std::byte*>(recv) + static_cast<std::size_t>(rank_) * count * size_of(dt);
    if (count <= max_count_) {
      const int n = static_cast<int>(count);
      return said(MPI_Allgather(inplace ? MPI_IN_PLACE : send, n, type_of(dt), recv, n, type_of(dt), comm_));
    }
    // A block too large for one count: one element of a datatype that is the whole block.
    MPI_Datatype block = MPI_DATATYPE_NULL;
    if (auto e = block_type(count, dt, block); !e.empty()) return e;
    std::string e = said(MPI_Allgather(inplace ? MPI_IN_PLACE : send, 1, block, recv, 1, block, comm_));
    MPI_Type_free(&block);
    return e;
  }
  std::string reduce_scatter(const void* send, void* recv, std::size_t count, dtype dt, reduce_op op) override {
    const std::size_t block = count * static_cast<std::size_t>(size_of(dt));
    auto* base = static_cast<std::byte*>(const_cast<void*>(send));
    const bool inplace = recv == base + static_cast<std::size_t>(rank_) * block;
    if (!inplace && count <= max_count_)
      return said(MPI_Reduce_scatter_block(send, recv, static_cast<int>(count), type_of(dt), op_of(dt, op), comm_));
    // In place: MPI_IN_PLACE would put the result in block 0 (MPI's convention) and overwrite it, so
    // each block is reduced into its owner instead (MPI_IN_PLACE at the root), all in flight at once;
    // a large block in pieces, the same way.
    const std::size_t es = static_cast<std::size_t>(size_of(dt));
    std::vector<MPI_Request> req;
    req.reserve(static_cast<std::size_t>(size_) * (count / max_count_ + 1));
    std::string e;
    for (int r = 0; r < size_ && e.empty(); ++r)
      for (std::size_t at = 0; at < count && e.empty(); at += max_count_) {
        std::byte* b = base + static_cast<std::size_t>(r) * block + at * es;
        void* to = r == rank_ ? (inplace ? static_cast<void*>(b) : static_cast<std::byte*>(recv) + at * es) : b;
        const void* from = r == rank_ && inplace ? MPI_IN_PLACE : b;
        req.push_back(MPI_REQUEST_NULL);
        e = said(MPI_Ireduce(from, to, static_cast<int>(std::min(max_count_, count - at)), type_of(dt), op_of(dt, op), r, comm_,
                             &req.back()));
      }
    const std::string w = said(MPI_Waitall(static_cast<int>(req.size()), req.data(), MPI_STATUSES_IGNORE));
    return e.empty() ? w : e;
  }
  std::string sendrecv(const void* send, std::size_t send_bytes, int to, void* recv, std::size_t recv_bytes,
                       int from) override {
    // In pieces of at most max_count_ bytes; a peer's pieces match (its recv_bytes are our send_bytes).
    const std::size_t most = std::max(send_bytes, recv_bytes);
    for (std::size_t at = 0; at < most; at += max_count_) {
      const auto piece = [&](std::size_t bytes) { return static_cast<int>(at < bytes ? std::min(max_count_, bytes - at) : 0); };
      if (auto e = said(MPI_Sendrecv(static_cast<const std::byte*>(send) + (at < send_bytes ? at : 0), piece(send_bytes), MPI_BYTE,
                                     to < 0 ? MPI_PROC_NULL : to, 0, static_cast<std::byte*>(recv) + (at < recv_bytes ? at : 0),
                                     piece(recv_bytes), MPI_BYTE, from < 0 ? MPI_PROC_NULL : from, 0, comm_, MPI_STATUS_IGNORE));
          !e.empty())
        return e;
    }
    return {};
  }
  int agree(bool ok, std::span<std::uint64_t> words) override {
    // One MPI_Allreduce (max) of the failing rank, as size - rank, and the words.
    std::uint64_t local[1 + 2 * digest_fields];
    std::vector<std::uint64_t> big(words.size() > 2 * digest_fields ? 1 + words.size() : 0);
    std::uint64_t* buf = big.empty() ? local : big.data();
    buf[0] = static_cast<std::uint64_t>(ok ? 0 : size_ - rank_);
    std::copy(words.begin(), words.end(), buf + 1);
    if (MPI_Allreduce(MPI_IN_PLACE, buf, static_cast<int>(1 + words.size()), MPI_UINT64_T, MPI_MAX, comm_) != MPI_SUCCESS)
      return ok ? 0 : rank_;
    std::copy(buf + 1, buf + 1 + words.size(), words.begin());
    return buf[0] == 0 ? -1 : size_ - static_cast<int>(buf[0]);
  }
  void share(std::string& text, std::int32_t& node, int root) override {
    long long head[2] = {static_cast<long long>(text.size()), node};
    MPI_Bcast(head, 2, MPI_LONG_LONG, root, comm_);
    text.resize(static_cast<std::size_t>(head[0]));
    node = static_cast<std::int32_t>(head[1]);
    MPI_Bcast(text.data(), static_cast<int>(head[0]), MPI_CHAR, root, comm_);
  }

  /// The MPI datatype of `dt`: MPI's own, and the library's 2-byte types for f16 and bf16.
  MPI_Datatype type_of(dtype dt) const {
    switch (dt) {
      case dtype::b8: return MPI_C_BOOL;
      case dtype::i8: return MPI_INT8_T;
      case dtype::i32: return MPI_INT32_T;
      case dtype::i64: return MPI_INT64_T;
      case dtype::f16: return half_[0];
      case dtype::bf16: return half_[1];
      case dtype::f32: return MPI_FLOAT;
      case dtype::f64: return MPI_DOUBLE;
    }
    return MPI_BYTE;
  }

 private:
  // f16 or bf16 reduced in float, rounded back after each step. Op 0 sum, 1 max, 2 min.
  template <class H, int Op>
  static void reduce_half(void* in, void* inout, int* len, MPI_Datatype*) {
    const auto* a = static_cast<const H*>(in);
    auto* b = static_cast<H*>(inout);
    for (int i = 0; i < *len; ++i) {
      const float x = static_cast<float>(a[i]), y = static_cast<float>(b[i]);
      b[i] = H(Op == 0 ? x + y : Op == 1 ? (y < x ? x : y) : (x < y ? x : y));
    }
  }
  MPI_Op op_of(dtype dt, reduce_op op) const {
    if (dt == dtype::f16 || dt == dtype::bf16) return half_ops_[dt == dtype::bf16 ? 1 : 0][static_cast<std::size_t>(op)];
    return op == reduce_op::sum ? MPI_SUM : op == reduce_op::max ? MPI_MAX : MPI_MIN;
  }
  // `count` elements of `dt` as one datatype: max_count_-element pieces, then the rest.
  std::string block_type(std::size_t count, dtype dt, MPI_Datatype& out) const {
    const std::size_t pieces = count / max_count_, rest = count % max_count_;
    if (pieces > INT_MAX) return "mpi: a block of " + std::to_string(count) + " elements is too large";
    MPI_Datatype piece = MPI_DATATYPE_NULL, body = MPI_DATATYPE_NULL, tail = MPI_DATATYPE_NULL;
    MPI_Type_contiguous(static_cast<int>(max_count_), type_of(dt), &piece);
    MPI_Type_contiguous(static_cast<int>(pieces), piece, &body);
    MPI_Type_contiguous(static_cast<int>(rest), type_of(dt), &tail);
    int lengths[2] = {1, 1};
    MPI_Aint at[2] = {0, static_cast<MPI_Aint>(pieces * max_count_ * static_cast<std::size_t>(size_of(dt)))};
    MPI_Datatype types[2] = {body, tail};
    MPI_Datatype whole = MPI_DATATYPE_NULL;
    const int rc = MPI_Type_create_struct(2, lengths, at, types, &whole);
    MPI_Type_free(&piece);
    MPI_Type_free(&body);
    MPI_Type_free(&tail);
    if (rc != MPI_SUCCESS) return said(rc);
    // Exactly the block's bytes apart (a struct's extent may be padded for alignment).
    const int rc2 = MPI_Type_create_resized(whole, 0, static_cast<MPI_Aint>(count * static_cast<std::size_t>(size_of(dt))), &out);
    MPI_Type_free(&whole);
    if (rc2 != MPI_SUCCESS) return said(rc2);
    MPI_Type_commit(&out);
    return {};
  }
  static std::string said(int rc) {
    if (rc == MPI_SUCCESS) return {};
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, text, &len);
    return std::string(text, static_cast<std::size_t>(len));
  }

  std::size_t max_count_;
  bool device_;  // device pointers accepted (a CUDA-aware MPI)
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1;
  MPI_Datatype half_[2]{MPI_DATATYPE_NULL, MPI_DATATYPE_NULL};  // f16, bf16
  MPI_Op half_ops_[2][3]{};  // [f16, bf16][sum, max, min]
};

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
