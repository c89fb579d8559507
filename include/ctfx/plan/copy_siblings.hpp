// ctfx/plan/copy_siblings.hpp — which consecutive strided copies run element by element together:
// `copy_` steps of one element type over the same extents, none of which writes what another of
// them reads or writes. A halo exchange's two column copies (x[1:-1, 0] = w; x[1:-1, -1] = e) then
// visit each row of the grid once, as the loop a user writes does, instead of walking the grid's
// rows twice, a page each (a 4096^2 f32 grid: 2 column copies in 77 us one after the other, 45 us
// together). Inductor's horizontal fusion of independent kernels over one iteration space is the
// same idea. Copies whose rows are unit-stride runs stay memmoves, one after the other.
// Legal because the members touch disjoint elements: their order does not matter.
#pragma once
#include "../core/diagnostics_push.hpp"
#include <cstddef>
#include <cstdint>
#include "../analysis/overlap.hpp"
#include "../graph/ir.hpp"

namespace ctfx {

/// The most copies run together (one loop with a load and a store per member per element).
inline constexpr int max_copy_siblings = 4;

namespace detail {
// A copy_ node's destination and source.
constexpr std::int32_t copy_dst(const ir& g, std::int32_t c) { return g.arg(c, 0); }
constexpr std::int32_t copy_src(const ir& g, std::int32_t c) { return g.arg(c, 1); }

// Whether copy c walks its innermost non-unit dimension with a stride other than 1 on either side
// (a copy of unit-stride rows is memmoves, as fast alone).
constexpr bool strided_copy(const ir& g, std::int32_t c) {
  const tensor_meta& d = g[copy_dst(g, c)].meta;
  const tensor_meta& s = g[copy_src(g, c)].meta;
  for (int k = d.rank - 1; k >= 0; --k) {
    if (d.size[k].value() == 1) continue;
    const int ks = k - (d.rank - s.rank);  // src right-aligned (broadcast)
    const bool src_unit = ks >= 0 && s.size[ks].value() == d.size[k].value() && s.stride[ks].value() == 1;
    return d.stride[k].value() != 1 || !src_unit;
  }
  return false;  // one element
}
}  // namespace detail

/// Whether copy `b` may run element by element together with the copies `group[0..n)` (consecutive
/// steps before it): every one a `copy_` of one element type over b's static extents, strided, and
/// `disjoint(i, j)` (views i and j provably share no element) for each destination against every
/// other member's destination and source.
template <class Disjoint>
constexpr bool copy_siblings(const ir& g, const std::int32_t* group, int n, std::int32_t b, Disjoint&& disjoint) {
  if (n <= 0 || n >= max_copy_siblings || g[b].op != op_kind::copy_ || g[b].nargs != 2) return false;
  const tensor_meta& mb = g[detail::copy_dst(g, b)].meta;
  if (!mb.is_static() || mb.dt != g[detail::copy_src(g, b)].meta.dt || !detail::strided_copy(g, b)) return false;
  const std::int32_t db = detail::copy_dst(g, b), sb = detail::copy_src(g, b);
  for (int k = 0; k < n; ++k) {
    const std::int32_t a = group[k];
    if (g[a].op != op_kind::copy_ || g[a].nargs != 2 || !detail::strided_copy(g, a)) return false;
    const std::int32_t da = detail::copy_dst(g, a), sa = detail::copy_src(g, a);
    const tensor_meta& ma = g[da].meta;
    if (ma.dt != mb.dt || g[sa].meta.dt != mb.dt || ma.rank != mb.rank) return false;
    for (int d = 0; d < mb.rank; ++d)
      if (!ma.size[d].is_static() || ma.size[d].value() != mb.size[d].value()) return false;
    if (!disjoint(da, db) || !disjoint(da, sb) || !disjoint(db, sa)) return false;
  }
  return true;
}

/// Where a storage's bytes lie, for views_disjoint: in the plan's workspace at [offset,
/// offset + bytes), or elsewhere (a caller's buffer: `output` names the output position whose
/// buffer it is, which also holds the storages computed there before that output, plan/outputs.hpp).
struct storage_extent {
  bool in_workspace = false;
  std::size_t offset = 0, bytes = 0;
  std::int32_t output = -1;
};

/// Whether views i and j (metas mi and mj, in storages si and sj) provably share no element: views
/// of one storage that cannot overlap; a caller's buffer against any other storage (the run refuses
/// a caller buffer the graph writes that overlaps another: check_caller_aliasing), unless both lie
/// in one output's buffer; workspace storages only where the arena gave them disjoint bytes.
/// `place(s)` says where storage s lies.
template <class Place>
constexpr bool views_disjoint(const tensor_meta& mi, const tensor_meta& mj, std::int32_t si, std::int32_t sj, Place&& place) {
  if (si < 0 || sj < 0) return false;
  if (si == sj) return !may_overlap(mi, mj);
  const storage_extent p = place(si), q = place(sj);
  if (!p.in_workspace || !q.in_workspace) return p.output < 0 || p.output != q.output;
  return p.offset + p.bytes <= q.offset || q.offset + q.bytes <= p.offset;
}

/// Walks the plan's steps (nodes, in run order) and puts consecutive copy siblings into runs of at
/// most max_copy_siblings: a run grows while the next step is a `member`, of the run's partition,
/// not a step where checks run first (`barrier(k)`: computed indices, the ranks' agreement, which
/// must come before the later copy's writes), and copy_siblings with the run. For each step that
/// joins a run: `join(first, last, b, n)`, with `first` the run's first step index, `last` the
/// node before b in it and n the run's length with b.
template <class Member, class Barrier, class Disjoint, class Join>
constexpr void group_copy_siblings(const ir& g, const std::int32_t* steps, std::size_t n_steps, Member&& member, Barrier&& barrier,
                                   Disjoint&& disjoint, Join&& join) {
  std::int32_t run[max_copy_siblings]{};
  int n = 0;
  std::size_t first = 0;
  for (std::size_t k = 0; k < n_steps; ++k) {
    const std::int32_t b = steps[k];
    if (n > 0 && member(b) && !barrier(k) && g[b].partition == g[run[0]].partition && copy_siblings(g, run, n, b, disjoint)) {
      join(first, run[n - 1], b, n + 1);
      run[n++] = b;
      continue;
    }
    n = 0;
    if (member(b)) {
      run[n++] = b;
      first = k;
    }
  }
}

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
