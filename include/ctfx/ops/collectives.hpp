// ctfx/ops/collectives.hpp — collectives (PyTorch's _c10d_functional ops) and the halo exchange of a
// 2-D domain decomposition, with their in-place twins. They run over the communicator of the run's
// context (ctfx/comm/communicator.hpp), a world of one rank without one.
//
//   all_reduce(x)        aux: reduce op (0 sum, 1 max, 2 min)           every rank gets op over ranks of x
//   broadcast(x)         aux: the source rank                           every rank gets the source's x
//   all_gather(x)        params: group size G; result [G * x0, ...]     block r = rank r's x
//   reduce_scatter(x)    aux: reduce op; params: G; x [G * n, ...]      result [n, ...] = block rank of op over ranks
//   all_gather_blocks(x) params: G; x [G * n, ...]                       block r = rank r's block r of x
//   reduce_scatter_blocks(x)  aux: reduce op; params: G; x [G * n, ...]  x, with block rank = op over ranks of their block rank
//        The gather and the scatter inside one buffer: their in-place twins are the forms MPI and NCCL
//        run in place (a rank's block at its offset: MPI_IN_PLACE, NCCL's sendbuff == recvbuff + offset).
//   halo_exchange(x)     params: h, px, py; aux: periodic x (bit 0), periodic y (bit 1)
//        x is this rank's [ny + 2h, nx + 2h] block of a grid split over px * py ranks (ctfx::halo_grid);
//        the result is x with its ghost rows and columns (corners included) holding the neighbours'
//        edge cells; ghosts past a non-periodic edge keep their values.
#pragma once
#include "../core/diagnostics_push.hpp"
#include "../comm/types.hpp"
#include "basic.hpp"

namespace ctfx {
namespace ops {
struct all_reduce_t : op_tag<op_kind::all_reduce, "_c10d_functional.all_reduce(Tensor input, str reduce_op, str group_name) -> Tensor"> {};
struct all_reduce__t : op_tag<op_kind::all_reduce_, "_c10d_functional.all_reduce_(Tensor(a!) input, str reduce_op, str group_name) -> Tensor(a!)"> {};
struct broadcast_t : op_tag<op_kind::broadcast, "_c10d_functional.broadcast(Tensor input, int src, str group_name) -> Tensor"> {};
struct broadcast__t : op_tag<op_kind::broadcast_, "_c10d_functional.broadcast_(Tensor(a!) input, int src, str group_name) -> Tensor(a!)"> {};
struct all_gather_t : op_tag<op_kind::all_gather, "_c10d_functional.all_gather_into_tensor(Tensor input, int group_size, str group_name) -> Tensor"> {};
struct reduce_scatter_t : op_tag<op_kind::reduce_scatter, "_c10d_functional.reduce_scatter_tensor(Tensor input, str reduce_op, int group_size, str group_name) -> Tensor"> {};
struct all_gather_blocks_t : op_tag<op_kind::all_gather_blocks, "ctfx.all_gather_blocks(Tensor buffer, int group_size) -> Tensor"> {};
struct all_gather_blocks__t : op_tag<op_kind::all_gather_blocks_, "ctfx.all_gather_blocks_(Tensor(a!) buffer, int group_size) -> Tensor(a!)"> {};
struct reduce_scatter_blocks_t : op_tag<op_kind::reduce_scatter_blocks, "ctfx.reduce_scatter_blocks(Tensor buffer, str reduce_op, int group_size) -> Tensor"> {};
struct reduce_scatter_blocks__t : op_tag<op_kind::reduce_scatter_blocks_, "ctfx.reduce_scatter_blocks_(Tensor(a!) buffer, str reduce_op, int group_size) -> Tensor(a!)"> {};
struct halo_exchange_t : op_tag<op_kind::halo_exchange, "ctfx.halo_exchange(Tensor grid, int halo, int px, int py, bool periodic_x, bool periodic_y) -> Tensor"> {};
struct halo_exchange__t : op_tag<op_kind::halo_exchange_, "ctfx.halo_exchange_(Tensor(a!) grid, int halo, int px, int py, bool periodic_x, bool periodic_y) -> Tensor(a!)"> {};
}  // namespace ops

namespace detail {
// The arguments a collective's shape depends on: a group size that divides what it must, a halo
// that fits its grid. (Ranks and world sizes are run-time facts, checked by the executor.)
constexpr bool collective_ok(ir& g, std::int32_t id, const tensor_meta& x, std::span<const sym_expr> p) {
  const node& n = g[id];
  auto bad = [&](auto&& say) {
    auto m = about(g, id);
    say(m);
    fail(g, id, rule::bad_argument, m);
    return false;
  };
  switch (n.op) {
    case op_kind::all_reduce: case op_kind::all_reduce_: case op_kind::reduce_scatter:
    case op_kind::reduce_scatter_blocks: case op_kind::reduce_scatter_blocks_:
      if (n.aux < 0 || n.aux > 2) return bad([&](auto& m) { m << "reduce op " << n.aux << " is not sum (0), max (1) or min (2)"; });
      break;
    case op_kind::broadcast: case op_kind::broadcast_:
      if (n.aux < 0) return bad([&](auto& m) { m << "source rank " << n.aux << " is negative"; });
      break;
    default: break;
  }
  if (meets_in_blocks(n.op)) {
    if (p.size() != 1 || !p[0].is_static() || p[0].value() < 1)
      return bad([&](auto& m) { m << "takes one static group size >= 1"; });
    if (x.rank < 1) return bad([&](auto& m) { m << "needs a tensor of rank >= 1 (ranks meet along dimension 0)"; });
    const index_t G = p[0].value();
    if (n.op != op_kind::all_gather && !(x.size[0].is_static() && x.size[0].value() % G == 0))
      return bad([&](auto& m) {
        m << "dimension 0 (" << (x.size[0].is_static() ? x.size[0].value() : -1) << ") must be static and a multiple of the group size " << G;
      });
  }
  if (n.op == op_kind::halo_exchange || n.op == op_kind::halo_exchange_) {
    if (p.size() != 3 || !p[0].is_static() || !p[1].is_static() || !p[2].is_static() || p[0].value() < 1 ||
        p[1].value() < 1 || p[2].value() < 1)
      return bad([&](auto& m) { m << "takes a static halo width >= 1 and a static rank grid px, py >= 1"; });
    if (x.rank != 2) return bad([&](auto& m) { m << "exchanges the ghost cells of a 2-D grid; this tensor has rank " << x.rank; });
    for (int d = 0; d < 2; ++d)
      if (x.size[d].is_static() && x.size[d].value() < 3 * p[0].value())
        return bad([&](auto& m) {
          m << "dimension " << d << " (" << x.size[d].value() << ") must hold two ghost layers and at least one interior layer of width " << p[0].value();
        });
  }
  return true;
}

// A functional collective's result is fresh and contiguous, as c10d_functional makes it.
constexpr tensor_meta collective_meta(op_kind k, const tensor_meta& x, std::span<const sym_expr> p) {
  tensor_meta r = contiguous_like(x, x.dt);
  if (k == op_kind::all_gather) { r.size[0] = r.size[0] * p[0]; r.set_contiguous(); }
  if (k == op_kind::reduce_scatter) { r.size[0] = sym_expr(x.size[0].value() / p[0].value()); r.set_contiguous(); }
  return r;
}
}  // namespace detail
}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
