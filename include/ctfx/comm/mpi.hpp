// ctfx/comm/mpi.hpp — the communicator of an MPI communicator (Open MPI, MPICH, ...):
//
//   ctfx::mpi_communicator world(MPI_COMM_WORLD);
//   plan.run(inputs, outputs, ctfx::device_ctx{ctfx::backend::host, nullptr, &world});
//
// Host buffers; device buffers too with a CUDA-aware MPI (the executor synchronizes the run's
// stream before each call, since MPI is not stream-ordered). In-place collectives pass
// MPI_IN_PLACE. Errors come back as text: the communicator's error handler is set to
// MPI_ERRORS_RETURN for as long as this object lives (and restored after).
// Link with MPI (CMake: ctfx::mpi, or MPI::MPI_CXX).
#pragma once
#include "../core/diagnostics_push.hpp"
#include <mpi.h>
#include <cstddef>
#include <string>
#include <vector>
#include "communicator.hpp"

namespace ctfx {

/// A communicator over an `MPI_Comm` (not owned: the caller frees it after this object is gone).
class mpi_communicator final : public communicator {
 public:
  /// Wraps `c`; calls on it return errors instead of aborting while this object lives.
  explicit mpi_communicator(MPI_Comm c) : comm_(c) {
    MPI_Comm_rank(c, &rank_);
    MPI_Comm_size(c, &size_);
    MPI_Comm_get_errhandler(c, &saved_);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
  }
  ~mpi_communicator() override {
    MPI_Comm_set_errhandler(comm_, saved_);
    MPI_Errhandler_free(&saved_);
  }
  mpi_communicator(const mpi_communicator&) = delete;
  mpi_communicator& operator=(const mpi_communicator&) = delete;

  /// The wrapped communicator.
  MPI_Comm handle() const { return comm_; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  const char* engine() const override { return "mpi"; }
  bool supports(dtype dt, reduce_op) const override { return dt != dtype::b8 && type_of(dt) != MPI_DATATYPE_NULL; }

  std::string all_reduce(const void* send, void* recv, std::size_t count, dtype dt, reduce_op op) override {
    return said(MPI_Allreduce(send == recv ? MPI_IN_PLACE : send, recv, int_count(count), type_of(dt), op_of(op), comm_));
  }
  std::string broadcast(void* buf, std::size_t count, dtype dt, int root) override {
    return said(MPI_Bcast(buf, int_count(count), type_of(dt), root, comm_));
  }
  std::string all_gather(const void* send, void* recv, std::size_t count, dtype dt) override {
    const bool inplace = send == static_cast<const std::byte*>(recv) + static_cast<std::size_t>(rank_) * count * size_of(dt);
    return said(MPI_Allgather(inplace ? MPI_IN_PLACE : send, int_count(count), type_of(dt), recv, int_count(count), type_of(dt), comm_));
  }
  std::string reduce_scatter(const void* send, void* recv, std::size_t count, dtype dt, reduce_op op) override {
    const std::size_t block = count * static_cast<std::size_t>(size_of(dt));
    auto* base = static_cast<std::byte*>(const_cast<void*>(send));
    if (recv != base + static_cast<std::size_t>(rank_) * block)
      return said(MPI_Reduce_scatter_block(send, recv, int_count(count), type_of(dt), op_of(op), comm_));
    // In place: MPI_IN_PLACE would put the result in block 0 (MPI's convention) and overwrite it, so
    // each block is reduced into its owner instead (MPI_IN_PLACE at the root), all in flight at once.
    std::vector<MPI_Request> req(static_cast<std::size_t>(size_), MPI_REQUEST_NULL);
    for (int r = 0; r < size_; ++r) {
      void* b = base + static_cast<std::size_t>(r) * block;
      if (int rc = MPI_Ireduce(r == rank_ ? MPI_IN_PLACE : b, b, int_count(count), type_of(dt), op_of(op), r, comm_,
                               &req[static_cast<std::size_t>(r)]);
          rc != MPI_SUCCESS) {
        MPI_Waitall(r, req.data(), MPI_STATUSES_IGNORE);
        return said(rc);
      }
    }
    return said(MPI_Waitall(size_, req.data(), MPI_STATUSES_IGNORE));
  }
  std::string sendrecv(const void* send, std::size_t send_bytes, int to, void* recv, std::size_t recv_bytes,
                       int from) override {
    return said(MPI_Sendrecv(send, int_count(send_bytes), MPI_BYTE, to < 0 ? MPI_PROC_NULL : to, 0, recv, int_count(recv_bytes),
                             MPI_BYTE, from < 0 ? MPI_PROC_NULL : from, 0, comm_, MPI_STATUS_IGNORE));
  }
  int agree(bool ok) override {
    int mine = ok ? size_ : rank_, lowest = size_;
    if (MPI_Allreduce(&mine, &lowest, 1, MPI_INT, MPI_MIN, comm_) != MPI_SUCCESS) return ok ? 0 : rank_;
    return lowest == size_ ? -1 : lowest;
  }
  void share(std::string& text, std::int32_t& node, int root) override {
    long long head[2] = {static_cast<long long>(text.size()), node};
    MPI_Bcast(head, 2, MPI_LONG_LONG, root, comm_);
    text.resize(static_cast<std::size_t>(head[0]));
    node = static_cast<std::int32_t>(head[1]);
    MPI_Bcast(text.data(), static_cast<int>(head[0]), MPI_CHAR, root, comm_);
  }

  /// The MPI datatype of `dt` (MPI_DATATYPE_NULL for f16 and bf16, which MPI does not reduce).
  static MPI_Datatype type_of(dtype dt) {
    switch (dt) {
      case dtype::b8: return MPI_C_BOOL;
      case dtype::i8: return MPI_INT8_T;
      case dtype::i32: return MPI_INT32_T;
      case dtype::i64: return MPI_INT64_T;
      case dtype::f32: return MPI_FLOAT;
      case dtype::f64: return MPI_DOUBLE;
      default: return MPI_DATATYPE_NULL;
    }
  }

 private:
  static MPI_Op op_of(reduce_op op) { return op == reduce_op::sum ? MPI_SUM : op == reduce_op::max ? MPI_MAX : MPI_MIN; }
  // MPI counts are int: larger messages would need derived datatypes (not done; a clear error).
  static int int_count(std::size_t n) { return n > 2147483647u ? -1 : static_cast<int>(n); }
  static std::string said(int rc) {
    if (rc == MPI_SUCCESS) return {};
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, text, &len);
    return std::string(text, static_cast<std::size_t>(len));
  }

  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
  MPI_Errhandler saved_ = MPI_ERRHANDLER_NULL;
};

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
