// ctfx/kernels/collectives.hpp — the collectives and the halo exchange of a graph, run over the
// communicator of the run's context (a world of one rank without one).
//
// Buffers go to the engine as they are: a functional collective sends its input and receives into
// its fresh result; an in-place one passes one buffer (MPI_IN_PLACE, NCCL's sendbuff == recvbuff).
// The collectives in blocks (all_gather_blocks_, reduce_scatter_blocks_) run in place with the
// rank's block at its offset. No communicated buffer is copied, except where the op itself says
// copy (a functional broadcast or reduce_scatter_blocks, or an input laid out with gaps: a functional all_reduce or all_gather of a strided view copies
// it into its result and communicates there). The halo exchange sends rows straight from the grid
// when they are contiguous and packs columns (and strided rows) into the run's scratch: packing
// measured faster than MPI derived datatypes here (bench/mpi/RESULTS.part.md).
//
// `check_collective` runs with the other validations, before the first write; `run_collective`
// returns the engine's error text, or an empty string.
// ctfx: nvcc-tested-by test/cuda/exec_cuda.cu
#pragma once
#include "../core/diagnostics_push.hpp"
#include <string>
#include "../comm/communicator.hpp"
#include "../ops/op_kind.hpp"
#include "pointwise.hpp"

namespace ctfx::kernels {

// Row-major contiguous (the layout the engines take).
inline bool dense(const strided& v) {
  index_t s = 1;
  for (int d = v.rank - 1; d >= 0; --d) {
    if (v.size[d] != 1 && v.stride[d] != s) return false;
    s *= v.size[d];
  }
  return true;
}

/// What one collective node is: its op, aux (reduce op or source rank) and params.
struct collective_node {
  op_kind op{};
  std::int32_t aux = 0;
  index_t param[3]{};  // group size; or halo, px, py
};

inline halo_grid halo_of(const collective_node& c) {
  return {static_cast<int>(c.param[1]), static_cast<int>(c.param[2]), (c.aux & 1) != 0, (c.aux & 2) != 0};
}

/// Bytes of scratch the halo exchange of a [H, W] grid of `dt` needs: four packed edges.
constexpr std::size_t halo_scratch_bytes(const collective_node& c, index_t H, index_t W, dtype dt) {
  const index_t longest = H > W ? H : W;
  return 4 * static_cast<std::size_t>(c.param[0] * longest) * static_cast<std::size_t>(size_of(dt));
}

/// The rule a collective breaks on this run, or "" (x: its argument, as bound).
inline std::string check_collective(const device_ctx& ctx, const collective_node& c, const strided& x) {
  const int world = ctx.comm ? ctx.comm->size() : 1;
  const std::string engine = ctx.comm ? ctx.comm->engine() : "no communicator";
  const std::string where = " (" + engine + ", " + std::to_string(world) + (world == 1 ? " rank)" : " ranks)");
  if (ctx.comm && ctx.comm->stream_ordered() && ctx.where != backend::cuda)
    return std::string("rule comm-backend: the ") + ctx.comm->engine() +
           " communicator moves device buffers on a CUDA stream; run on backend::cuda (with device pointers), or "
           "communicate host buffers with an mpi_communicator";
  if (ctx.comm && ctx.where == backend::cuda && !ctx.comm->device_buffers())
    return std::string("rule comm-backend: the ") + ctx.comm->engine() +
           " communicator may not be given device buffers (its MPI is not CUDA-aware, or ctfx cannot tell: see "
           "docs/cluster.md); run on the host, use an nccl_communicator, or construct the mpi_communicator with "
           "mpi_device_buffers::yes if the MPI is CUDA-aware";
  switch (c.op) {
    case op_kind::all_reduce: case op_kind::all_reduce_: case op_kind::reduce_scatter:
    case op_kind::reduce_scatter_blocks: case op_kind::reduce_scatter_blocks_:
      if (ctx.comm && !ctx.comm->supports(x.dt, static_cast<reduce_op>(c.aux)))
        return std::string("rule collective-dtype: ") + ctx.comm->engine() + " cannot " + name_of(static_cast<reduce_op>(c.aux)) +
               "-reduce " + std::string(name_of(x.dt)) + " elements; convert the tensor to a dtype it reduces (f32, f64, i32, i64)";
      break;
    case op_kind::broadcast: case op_kind::broadcast_:
      if (c.aux >= world)
        return "rule comm-world: the source rank " + std::to_string(c.aux) + " is not in the run's world" + where;
      break;
    default: break;
  }
  if (meets_in_blocks(c.op))
    if (c.param[0] != world)
      return "rule comm-world: the graph's group size is " + std::to_string(c.param[0]) + ", the run's world has " +
             std::to_string(world) + " ranks" + where + "; build the graph for the world it runs in";
  if (c.op == op_kind::halo_exchange || c.op == op_kind::halo_exchange_) {
    const halo_grid hg = halo_of(c);
    if (hg.px * hg.py != world)
      return "rule comm-world: the halo exchange splits the grid over " + std::to_string(hg.px) + " x " +
             std::to_string(hg.py) + " ranks, the run's world has " + std::to_string(world) + where;
    for (int d = 0; d < 2; ++d)
      if (x.size[d] < 3 * c.param[0])
        return "rule halo-size: dimension " + std::to_string(d) + " of the grid (" + std::to_string(x.size[d]) +
               ") must hold two ghost layers and an interior layer of width " + std::to_string(c.param[0]);
  }
  const bool needs_dense = c.op == op_kind::all_reduce_ || c.op == op_kind::broadcast_ || c.op == op_kind::reduce_scatter ||
                           c.op == op_kind::all_gather_blocks_ || c.op == op_kind::reduce_scatter_blocks_;
  if (needs_dense && world > 1 && !dense(x))
    return "rule collective-dense: the buffer this collective communicates is not contiguous (row-major); "
           "pass a contiguous tensor, or clone it first";
  return {};
}

/// Collective `c` (node `node`, named `name`) as ranks compare it before a run: x its argument, as bound.
inline collective_record record_of(std::int32_t node, const name_t& name, const collective_node& c, const strided& x) {
  collective_record r;
  r.node = node;
  r.name = name;
  r.kind = name_of(c.op);
  r.count = x.numel();
  r.dt = x.dt;
  switch (c.op) {
    case op_kind::broadcast: case op_kind::broadcast_: r.root = c.aux; break;
    case op_kind::halo_exchange: case op_kind::halo_exchange_:
      r.group[0] = c.param[0];
      r.group[1] = c.param[1];
      r.group[2] = c.param[2];
      r.group[3] = c.aux & 3;
      r.grid[0] = x.size[0];
      r.grid[1] = x.size[1];
      break;
    case op_kind::all_reduce: case op_kind::all_reduce_: case op_kind::reduce_scatter:
    case op_kind::reduce_scatter_blocks: case op_kind::reduce_scatter_blocks_: r.op = c.aux; break;
    default: break;
  }
  if (meets_in_blocks(c.op)) r.group[0] = c.param[0];
  return r;
}

namespace detail {
// A [rows, cols] block of a 2-D view.
inline strided block(const strided& g, index_t r0, index_t nr, index_t c0, index_t nc) {
  strided b = g;
  b.p = g.p + (r0 * g.stride[0] + c0 * g.stride[1]) * size_of(g.dt);
  b.size[0] = nr;
  b.size[1] = nc;
  return b;
}
inline strided dense_at(std::byte* p, dtype dt, index_t nr, index_t nc) {
  strided d;
  d.p = p;
  d.dt = dt;
  d.rank = 2;
  d.size[0] = nr; d.size[1] = nc;
  d.stride[0] = nc; d.stride[1] = 1;
  return d;
}
// The engine reads device buffers only after the kernels before it on the stream are done (MPI is
// not stream-ordered; NCCL is).
inline void before_engine(const device_ctx& ctx) {
#if defined(__CUDACC__)
  if (ctx.where == backend::cuda && ctx.comm && !ctx.comm->stream_ordered())
    cudaStreamSynchronize(static_cast<cudaStream_t>(ctx.stream));
#else
  (void)ctx;
#endif
}

// One direction of one phase: `send` goes to `to`, `recv` comes from `from` (-1: none); both are
// blocks of the grid; the own rank is a local copy.
inline std::string exchange(const device_ctx& ctx, int self, const strided& send, int to, const strided& recv, int from,
                            std::byte* scratch) {
  if (to == self && from == self) {
    kernels::copy(ctx, recv, send);
    return {};
  }
  if (to < 0 && from < 0) return {};
  const auto bytes = static_cast<std::size_t>(send.numel()) * static_cast<std::size_t>(size_of(send.dt));
  const bool send_direct = dense(send), recv_direct = dense(recv);
  std::byte* sbuf = send_direct ? send.p : scratch;
  std::byte* rbuf = recv_direct ? recv.p : scratch + bytes;
  if (to >= 0 && !send_direct) kernels::copy(ctx, dense_at(sbuf, send.dt, send.size[0], send.size[1]), send);
  before_engine(ctx);
  std::string e = ctx.comm->sendrecv(sbuf, to >= 0 ? bytes : 0, to, rbuf, from >= 0 ? bytes : 0, from);
  if (!e.empty()) return e;
  if (from >= 0 && !recv_direct) kernels::copy(ctx, recv, dense_at(rbuf, recv.dt, recv.size[0], recv.size[1]));
  return {};
}

inline std::string halo(const device_ctx& ctx, const collective_node& c, const strided& g, std::byte* scratch) {
  const index_t h = c.param[0], H = g.size[0], W = g.size[1];
  const halo_grid hg = halo_of(c);
  const int self = ctx.comm ? ctx.comm->rank() : 0;
  // Along x first, over the interior rows; then along y over whole rows, ghost columns included,
  // which carries the corners.
  const int east = hg.neighbour(self, 1, 0), west = hg.neighbour(self, -1, 0);
  if (auto e = exchange(ctx, self, block(g, h, H - 2 * h, W - 2 * h, h), east, block(g, h, H - 2 * h, 0, h), west, scratch);
      !e.empty())
    return e;
  if (auto e = exchange(ctx, self, block(g, h, H - 2 * h, h, h), west, block(g, h, H - 2 * h, W - h, h), east, scratch);
      !e.empty())
    return e;
  const int south = hg.neighbour(self, 0, 1), north = hg.neighbour(self, 0, -1);
  if (auto e = exchange(ctx, self, block(g, h, h, 0, W), north, block(g, H - h, h, 0, W), south, scratch); !e.empty())
    return e;
  return exchange(ctx, self, block(g, H - 2 * h, h, 0, W), south, block(g, 0, h, 0, W), north, scratch);
}
}  // namespace detail

/// Runs collective node `c`: x its argument, out its result (for in-place ops, x itself).
inline std::string run_collective(const device_ctx& ctx, const collective_node& c, const strided& x, const strided& out,
                                  std::byte* scratch) {
  communicator* w = ctx.comm;
  const bool one = !w || w->size() == 1;
  // The result starts as the input where the op itself copies: a functional broadcast, halo
  // exchange or reduce-scatter in blocks (they then run in place in their result), a world of one
  // rank (the result is the input), or a strided input of all_reduce or all_gather_blocks (then
  // reduced or gathered in place in the result).
  if (!is_mutating(c.op) && (c.op == op_kind::broadcast || c.op == op_kind::halo_exchange ||
                             c.op == op_kind::reduce_scatter_blocks || one ||
                             ((c.op == op_kind::all_reduce || c.op == op_kind::all_gather_blocks) && !dense(x))))
    kernels::copy(ctx, out, x);
  if (c.op == op_kind::halo_exchange || c.op == op_kind::halo_exchange_) return detail::halo(ctx, c, out, scratch);
  if (one) return {};
  const auto n = static_cast<std::size_t>(x.numel());
  const auto op = static_cast<reduce_op>(c.aux);
  detail::before_engine(ctx);
  switch (c.op) {
    case op_kind::all_reduce: return dense(x) ? w->all_reduce(x.p, out.p, n, x.dt, op) : w->all_reduce(out.p, out.p, n, x.dt, op);
    case op_kind::all_reduce_: return w->all_reduce(x.p, x.p, n, x.dt, op);
    case op_kind::broadcast: case op_kind::broadcast_: return w->broadcast(out.p, n, x.dt, c.aux);
    case op_kind::all_gather: {
      if (dense(x)) return w->all_gather(x.p, out.p, n, x.dt);
      strided mine = out;  // this rank's block of the result, then in place
      mine.size[0] = x.size[0];
      mine.p = out.p + static_cast<index_t>(w->rank()) * static_cast<index_t>(n) * size_of(x.dt);
      kernels::copy(ctx, mine, x);
      detail::before_engine(ctx);
      return w->all_gather(mine.p, out.p, n, x.dt);
    }
    case op_kind::reduce_scatter: return w->reduce_scatter(x.p, out.p, n / static_cast<std::size_t>(w->size()), x.dt, op);
    case op_kind::all_gather_blocks: case op_kind::all_gather_blocks_: {
      // The rank's block is sent from where it is: from x into the fresh result (functional), or
      // from its place in the result itself (in place: MPI_IN_PLACE, NCCL's offset send buffer).
      const std::size_t block = n / static_cast<std::size_t>(w->size());
      const strided& from = c.op == op_kind::all_gather_blocks && dense(x) ? x : out;
      return w->all_gather(from.p + static_cast<index_t>(w->rank()) * static_cast<index_t>(block) * size_of(x.dt), out.p, block,
                           x.dt);
    }
    case op_kind::reduce_scatter_blocks: case op_kind::reduce_scatter_blocks_: {
      // In place in the result (a copy of x when functional): each rank's block reduced into it.
      const std::size_t block = n / static_cast<std::size_t>(w->size());
      return w->reduce_scatter(out.p, out.p + static_cast<index_t>(w->rank()) * static_cast<index_t>(block) * size_of(x.dt),
                               block, x.dt, op);
    }
    default: return "not a collective";
  }
}

}  // namespace ctfx::kernels
#include "../core/diagnostics_pop.hpp"
