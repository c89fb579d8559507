// ctfx/comm/communicator.hpp — what a run needs from a communication library, as one small
// interface: the collectives, a neighbour exchange, and the agreement that keeps validation global.
//
// A run is given a communicator in its context (`device_ctx::comm`); without one the world is one
// rank. The implementations wrap the engines HPC codes already use and live in their own headers,
// included only by the code that has them:
//   ctfx/comm/mpi.hpp   ctfx::mpi_communicator{MPI_Comm}            host buffers (or device buffers
//                                                                   with a CUDA-aware MPI)
//   ctfx/comm/nccl.hpp  ctfx::nccl_communicator{ncclComm_t, stream} device buffers, on the stream
// Every call is collective over the world and blocking as far as the run is concerned: when it
// returns, the buffers it was given may be reused (MPI), or every later kernel on the run's stream
// sees its result (NCCL). So the memory planner needs no extra rule for them: a buffer is live
// through the step that communicates it, and no later step touches it before the exchange is done.
// ctfx: nvcc-tested-by test/cuda/exec_cuda.cu
#pragma once
#include "../core/diagnostics_push.hpp"
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <span>
#include "../core/dtype.hpp"
#include "agreement.hpp"
#include "types.hpp"

namespace ctfx {

/// A world of ranks that a run communicates over. Counts are in elements of `dt`; buffers are dense.
/// Each call returns an empty string on success and the library's error text otherwise.
class communicator {
 public:
  virtual ~communicator() = default;
  /// This process's rank, in [0, size()).
  virtual int rank() const = 0;
  /// The number of ranks.
  virtual int size() const = 0;
  /// The engine's name ("mpi", "nccl"), for messages.
  virtual const char* engine() const = 0;
  /// Whether calls are ordered on the run's CUDA stream (NCCL); otherwise the executor synchronizes
  /// the stream before handing device buffers to the engine (a CUDA-aware MPI).
  virtual bool stream_ordered() const { return false; }
  /// Whether the engine may be given device pointers (a run on backend::cuda): NCCL always, an MPI
  /// only when it is CUDA-aware. A run on the CUDA backend with an engine that may not is refused
  /// before any write (rule comm-backend).
  virtual bool device_buffers() const { return false; }
  /// Whether the engine reduces (or moves) elements of `dt` with `op`.
  virtual bool supports(dtype dt, reduce_op op) const = 0;
  /// recv = op over ranks of send; `send == recv` is the in-place form (MPI_IN_PLACE).
  virtual std::string all_reduce(const void* send, void* recv, std::size_t count, dtype dt, reduce_op op) = 0;
  /// buf = root's buf, on every rank.
  virtual std::string broadcast(void* buf, std::size_t count, dtype dt, int root) = 0;
  /// recv[r * count, (r + 1) * count) = rank r's send; `send == recv + rank() * count` is the
  /// in-place form (the rank's block already in place, as MPI_IN_PLACE and NCCL expect it).
  virtual std::string all_gather(const void* send, void* recv, std::size_t count, dtype dt) = 0;
  /// recv = block rank() (of `count` elements) of the op over ranks of send (size() * count elements);
  /// `recv == send + rank() * count` is the in-place form (NCCL's; the other blocks of send are left
  /// as they are).
  virtual std::string reduce_scatter(const void* send, void* recv, std::size_t count, dtype dt, reduce_op op) = 0;
  /// Sends `send_bytes` to rank `to` and receives `recv_bytes` from rank `from`, both at once;
  /// a negative rank means no neighbour on that side (nothing sent or received).
  virtual std::string sendrecv(const void* send, std::size_t send_bytes, int to, void* recv, std::size_t recv_bytes,
                               int from) = 0;
  /// One reduction over the ranks: returns the lowest rank whose `ok` is false (-1 when every rank
  /// passes `ok == true`), and replaces each of `words` with its maximum (unsigned) over the ranks.
  virtual int agree(bool ok, std::span<std::uint64_t> words) = 0;
  /// `text` and `node` of rank `root`, on every rank.
  virtual void share(std::string& text, std::int32_t& node, int root) = 0;
};

namespace detail {
// Before the first write into a caller buffer (or the first exchange), every rank learns whether
// any rank failed, and whether every rank is about to post the same collectives (`mine`, see
// comm/agreement.hpp), in one reduction. Then all return the failure of the lowest failing rank,
// or the first rank whose collectives differ from rank 0's, and none writes.
inline std::pair<bool, std::string> agree_world(communicator& c, bool ok, std::string text, std::int32_t& node,
                                                const run_digest& mine) {
  std::uint64_t words[2 * digest_fields];
  for (std::size_t f = 0; f < digest_fields; ++f) {
    words[f] = mine.word[f];
    words[digest_fields + f] = ~mine.word[f];
  }
  const int bad = c.agree(ok, words);
  if (bad >= 0) {
    c.share(text, node, bad);
    return {false, "rank " + std::to_string(bad) + " of " + std::to_string(c.size()) + ": " + text};
  }
  bool same = true;
  for (std::size_t f = 0; f < digest_fields; ++f) same = same && words[f] == ~words[digest_fields + f];
  if (same) return {true, {}};
  // Rank 0's digest to all; the lowest rank whose digest differs from it; its digest to all.
  const std::string own = digest_text(mine);
  std::string first = own, theirs;
  std::int32_t unused = -1;
  c.share(first, unused, 0);
  const int differs = c.agree(own.substr(0, 16 * digest_fields) == first.substr(0, 16 * digest_fields), {});
  theirs = own;
  c.share(theirs, unused, differs < 0 ? 0 : differs);
  return {false, disagreement(differs < 0 ? 0 : differs, c.size(), first, theirs, node)};
}
}  // namespace detail

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
