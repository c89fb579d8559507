// ctfx/plan/listing.hpp — a plan printed as a program, the way Inductor prints its output code:
// the memory lines (allocate / reuse / free: `listing`; pools and alloc_from_pool: `arena_listing`),
// each kernel call with a comment naming the step and the node of the user's graph it came from
// (provenance), and the peak next to the lower bound; a cond or while_loop step is followed by the
// plans of its subgraphs, one level deeper.
#pragma once
#include "../core/diagnostics_push.hpp"
#include <string>
#include "../graph/print.hpp"
#include "arena.hpp"
#include "fusion.hpp"
#include "make_plan.hpp"
#include "outputs.hpp"
#include "reuse.hpp"

namespace ctfx {

namespace detail {
inline std::string tuple_text(const ir& g, const tensor_meta& m, bool strides) {
  std::string s = "(";
  for (int i = 0; i < m.rank; ++i) s += (i ? ", " : "") + to_string(g, strides ? m.stride[i] : m.size[i]);
  return s + (m.rank == 1 ? ",)" : ")");
}
inline std::string buf_name(std::int32_t b) { return "buf" + std::to_string(b); }
inline std::string bytes_text(const ir& g, const sym_expr& e) { return to_string(g, e) + " B"; }
// The values the graph reads with item(), as Inductor's wrapper code defines its unbacked symbols
// (`u5 = arg0_1.item()`): known when the call binds, before the first step (a computed one is
// computed ahead by its cone, whose nodes the plan's graph may no longer hold: it is not named).
inline std::string symbol_definitions(const ir& g) {
  std::string s;
  for (const symbol& y : g.syms) {
    if (y.kind != symbol_kind::unbacked) continue;
    if (y.input < 0 && y.dim >= 0)  // a value the graph computes (exec/computed_values.hpp)
      s += "    " + std::string(y.name.view()) + " = ...item()  # a value the graph computes, computed ahead from the inputs when the call binds\n";
    if (y.input < 0) continue;
    for (std::int32_t i = 0; i < g.size(); ++i)
      if (g[i].op == op_kind::placeholder && g[i].aux == y.input)
        s += "    " + std::string(y.name.view()) + " = " + std::string(g[i].name.view()) + ".item()\n";
  }
  return s;
}
}  // namespace detail

// Where a buffer's memory comes from, for the listing: an allocation of its own (or a reuse), or
// an offset in a pool.
struct listing_options {
  const ir* original = nullptr;  // the user's graph, for provenance comments (optional)
  const fusion* fused = nullptr; // the kernel grouping (plan/fusion.hpp): a fused kernel lists its nodes
  // Steps compiled<G> runs row by row (per node: the node of the next step run with it, else -1):
  // its row chains (compiled<G>::chains.next) and its cat slices written together (row_sibling).
  const std::int32_t* row_chain = nullptr;
  const std::int32_t* row_siblings = nullptr;
  // Strided copies compiled<G> runs element by element together (compiled<G>::copy_group.next).
  const std::int32_t* copy_siblings = nullptr;
};

/// The reuse-line form of a plan (defined below).
inline std::string listing(const ir& g, const liveness& L, const reuse_plan& R, listing_options opt = {});

namespace detail {
inline std::string control_text(const ir& g, std::int32_t nid, const listing_options& opt);

// A step's kernel line: for a fused kernel, the nodes it computes without memory between them
// (Inductor's output code names a fused kernel's nodes the same way), then the kernel's own node.
// Steps run row by row: the line before the first step of a run (`# row chain: steps 3-5 ...`),
// and, for a later step, the step whose run computes it.
struct row_run_text {
  std::string head, prov;
};
inline row_run_text row_run(const liveness& L, std::int32_t st, const listing_options& opt) {
  row_run_text t;
  const auto step = [&](std::int32_t k) { return static_cast<std::size_t>(L.steps[static_cast<std::size_t>(k)]); };
  for (const std::int32_t* next : {opt.row_chain, opt.row_siblings, opt.copy_siblings}) {
    if (!next) continue;
    const bool chain = next == opt.row_chain, copies = next == opt.copy_siblings;
    std::int32_t first = st;  // the run's first step
    while (first > 0 && next[step(first - 1)] == L.steps[static_cast<std::size_t>(first)]) --first;
    if (first < st) {
      t.prov = chain    ? ", in the row chain of step " + std::to_string(first)
               : copies ? ", copied with step " + std::to_string(first)
                        : ", with step " + std::to_string(first) + "'s rows";
      return t;
    }
    std::int32_t last = st;
    while (last + 1 < L.n_steps() && next[step(last)] == L.steps[static_cast<std::size_t>(last + 1)]) ++last;
    if (last == st) continue;
    const std::string steps = "steps " + std::to_string(st) + "-" + std::to_string(last);
    t.head = chain    ? "    # row chain: " + steps + " run row by row, each row through every step while it is in cache\n"
             : copies ? "    # copy siblings: " + steps + " copy element by element together (disjoint strided views, one walk)\n"
                      : "    # row siblings: " + steps + " write their slices of each row together\n";
    return t;
  }
  return t;
}

inline std::string kernel_text(const ir& g, const liveness& L, std::int32_t nid, std::int32_t st, const listing_options& opt) {
  const row_run_text rows = row_run(L, st, opt);
  std::string prov;
  if (opt.original && g[nid].origin >= 0 && g[nid].origin < opt.original->size())
    prov = ", from %" + std::string((*opt.original)[g[nid].origin].name.view());
  std::string s;
  int members = 0;
  if (opt.fused && !opt.fused->root.empty())
    for (std::int32_t i = 0; i < nid; ++i)
      if (opt.fused->root[static_cast<std::size_t>(i)] == nid) {
        s += "    #   " + node_text(g, i) + "\n";
        ++members;
      }
  if (members > 0) {
    s = "    # fused kernel: " + std::to_string(members + 1) + " nodes, one pass, no buffer between them\n" + s;
    prov += ", fused";
  }
  // Results computed in a cat's slice (fusion::into), and the copies the cat is left with.
  if (const std::int32_t c = opt.fused ? opt.fused->into_of(nid) : -1; c >= 0) {
    if (g[c].op == op_kind::cat) prov += ", into %" + std::string(g[c].name.view()) + " slice";
    else prov += ", into %" + std::string(g[g.arg(c, 0)].name.view()) + " row";  // a put's row, at its checked position
  }
  if (opt.fused && is_index_op(g[nid].op) && g[nid].nargs > 1 && opt.fused->into_of(g.arg(nid, 1)) == nid)
    prov += ", copies nothing: %" + std::string(g[g.arg(nid, 1)].name.view()) + " computed in the row, index checked before the first write";
  if (is_product(g[nid].op))  // Inductor's extern_kernels.mm / addmm / bmm / baddbmm
    prov += ", extern kernel (a BLAS gemm" + std::string(g[nid].op == op_kind::addmm || g[nid].op == op_kind::baddbmm ? ", accumulating into its c" : "") + ")";
  if (opt.fused && g[nid].op == op_kind::cat) {
    std::int32_t placed = 0;
    for (auto a : g.args_of(nid)) placed += a >= 0 && opt.fused->into_of(a) == nid;
    if (placed == g[nid].nargs) prov += ", no copy: every operand computed in its slice";
    else if (placed > 0) prov += ", copies " + std::to_string(g[nid].nargs - placed) + " of " + std::to_string(g[nid].nargs) + " operands";
  }
  return rows.head + s + "    " + node_text(g, nid) + "  # step " + std::to_string(st) + prov + rows.prov + "\n" +
         (is_control_op(g[nid].op) ? control_text(g, nid, opt) : std::string());
}
}  // namespace detail

// The reuse-line form (Inductor's default wrapper): `buf2 = buf0; del buf0  # reuse`. A graph with
// several partitions prints one function per partition, each returning what later partitions read.
inline std::string listing(const ir& g, const liveness& L, const reuse_plan& R, listing_options opt) {
  std::string s;
  auto inputs_text = [&] {
    std::string t;
    bool first = true;
    for (std::int32_t i = 0; i < g.size(); ++i)
      if (g[i].op == op_kind::placeholder) { t += (first ? "" : ", ") + std::string(g[i].name.view()); first = false; }
    return t;
  };
  const std::int32_t n_parts = L.step_partition.empty() ? 1 : L.step_partition.back() + 1;
  // Lines run at half-step times: allocations (and reuses) at 2s or 2s+1 print before step s's
  // kernel, frees at 2s+1 print after it (the step has read the buffer by then).
  // With the executors' view (opt.fused set): outputs computed in the caller's buffer say so.
  // A buffer the output takes the memory of (along the reuse lines) lives there before it.
  const detail::cvec<std::int32_t> direct = opt.fused ? direct_outputs(g, L) : detail::cvec<std::int32_t>{};
  const detail::cvec<std::int32_t> held = caller_held_buffers(L, &R, std::span<const std::int32_t>(direct.data(), direct.size()));
  auto line_text = [&](const plan_line& l) {
    const buffer_life& b = L.buffers[static_cast<std::size_t>(l.buffer)];
    const tensor_meta& m = g[b.node].meta;
    switch (l.kind) {
      case line_kind::allocate:
        if (const std::int32_t j = held[static_cast<std::size_t>(l.buffer)]; j >= 0)
          return "    " + detail::buf_name(l.buffer) + " = output" + std::to_string(j) + "  # %" + std::string(g[b.node].name.view()) +
                 (direct[static_cast<std::size_t>(j)] == b.storage ? ", computed in the caller's buffer\n"
                                                                   : ", in the caller's buffer of output " + std::to_string(j) + " until it is computed\n");
        return "    " + detail::buf_name(l.buffer) + " = empty_strided(" + detail::tuple_text(g, m, false) + ", " +
               detail::tuple_text(g, m, true) + ", " + std::string(name_of(m.dt)) + ")  # %" + std::string(g[b.node].name.view()) + "\n";
      case line_kind::reuse:
        return "    " + detail::buf_name(l.buffer) + " = " + detail::buf_name(l.from) + "; del " + detail::buf_name(l.from) +
               "  # reuse, %" + std::string(g[b.node].name.view()) + "\n";
      case line_kind::free: return "    del " + detail::buf_name(l.buffer) + "\n";
      case line_kind::dropped: break;
    }
    return std::string();
  };
  std::size_t li = 0;
  auto lines_before_step = [&](std::int64_t t_after) {  // everything before t_after, and allocations at it
    for (; (li < R.lines.size()) && (R.lines[li].time < t_after); ++li) s += line_text(R.lines[li]);
    for (std::size_t k = li; (k < R.lines.size()) && (R.lines[k].time == t_after); ++k)
      if (R.lines[k].kind != line_kind::free) s += line_text(R.lines[k]);
  };
  auto lines_after_step = [&](std::int64_t t_after) {  // the frees at t_after
    for (; (li < R.lines.size()) && (R.lines[li].time == t_after); ++li)
      if (R.lines[li].kind == line_kind::free) s += line_text(R.lines[li]);
  };
  auto memory_lines_until = [&](std::int64_t t) {
    for (; (li < R.lines.size()) && (R.lines[li].time <= t); ++li) s += line_text(R.lines[li]);
  };
  std::int32_t st = 0;
  for (std::int32_t p = 0; p < n_parts; ++p) {
    if (n_parts > 1) {
      s += "def partition_" + std::to_string(p) + "(" + inputs_text();
      for (std::size_t b = 0; b < L.buffers.size(); ++b)
        if (L.buffers[b].crosses_partition && L.buffers[b].partition < p && L.buffers[b].last_step >= st)
          s += ", " + detail::buf_name(static_cast<std::int32_t>(b));
      s += "):\n";
    } else {
      s += "def call(" + inputs_text() + "):\n";
    }
    if (p == 0) s += detail::symbol_definitions(g);
    for (; st < L.n_steps() && L.step_partition[static_cast<std::size_t>(st)] == p; ++st) {
      lines_before_step(2 * static_cast<std::int64_t>(st) + 1);
      const std::int32_t nid = L.steps[static_cast<std::size_t>(st)];
      s += detail::kernel_text(g, L, nid, st, opt);
      lines_after_step(2 * static_cast<std::int64_t>(st) + 1);
    }
    if (p + 1 < n_parts) {
      // Frees due before the next partition starts, then what the later partitions read.
      memory_lines_until(2 * static_cast<std::int64_t>(st) - 1);
      std::string ret;
      for (std::size_t b = 0; b < L.buffers.size(); ++b)
        if (L.buffers[b].crosses_partition && L.buffers[b].partition <= p && L.buffers[b].last_step >= st)
          ret += (ret.empty() ? "" : ", ") + detail::buf_name(static_cast<std::int32_t>(b));
      s += "    return (" + ret + (ret.find(',') == std::string::npos && !ret.empty() ? ",)" : ")") + "\n";
    }
  }
  memory_lines_until(INT64_MAX);
  s += "    " + node_text(g, g.size() - 1) + "\n";
  s += "# peak " + std::to_string(R.peak_static_bytes) + " B of static-size buffers; " + std::to_string(R.reuses) +
       " reuses, " + std::to_string(R.vetoed) + " vetoed\n";
  return s;
}

namespace detail {
// Text t with every line indented by `by` more spaces.
inline std::string indented(const std::string& t, std::size_t by) {
  std::string r;
  const std::string pad(by, ' ');
  for (std::size_t b = 0; b < t.size();) {
    std::size_t e = t.find('\n', b);
    if (e == std::string::npos) e = t.size();
    r += pad + t.substr(b, e - b) + "\n";
    b = e + 1;
  }
  return r;
}
// The subgraphs of control node nid (a step of g's plan), each listed as the plan of its own that
// the control step runs (exec/control_step.hpp), one level deeper, as Inductor's wrapper code
// writes a conditional and a loop: `if pred.item():` / `else:`, or `while True:` with the
// condition's flag read after its plan, then the body's plan (its in-place form where it runs).
inline std::string control_text(const ir& g, std::int32_t nid, const listing_options& opt) {
  const node& n = g[nid];
  auto sub = [&](std::int32_t k, const std::string& role) {
    const ir& s = g.subgraphs[static_cast<std::size_t>(k)];
    planner_options po;
    po.fuse = opt.fused != nullptr;
    po.arena = false;
    const graph_plan P = make_plan(s, po);
    listing_options so;
    so.fused = opt.fused ? &P.fused : nullptr;
    std::string t = listing(s, P.life, P.reuse, so);
    const std::string name = "subgraph_" + std::to_string(k);
    if (t.starts_with("def call(")) t.replace(4, 4, name);
    return indented("# " + name + ": the " + role + ", a plan of its own\n" + t, 8);
  };
  if (n.op == op_kind::cond)
    return "    if " + std::string(g[g.arg(nid, 0)].name.view()) + ".item():  # the predicate, read on the host\n" +
           sub(n.aux, "then-graph") + "    else:\n" + sub(n.aux + 1, "else-graph");
  const std::int32_t body = body_to_run(g, nid);
  return "    while True:\n" + sub(n.aux, "condition graph") +
         "        if not flag.item(): break  # the condition's one b8, read on the host\n" +
         sub(body, body != n.aux + 1 ? "body graph in its in-place form (it updates the carried values in the node's result buffers)"
                                     : "body graph (it writes the next carried values into the other of two buffer sets)");
}
}  // namespace detail

/// compiled<G>'s plan as it runs (`ctfx::listing<ctfx::compiled<decltype(g)>>()`): the reuse lines
/// with its kernel grouping, its row chains, the cat slices it writes together and the strided
/// copies it runs together.
template <class Plan>
std::string listing() {
  const fusion f = Plan::fused();
  const liveness L = Plan::life();
  listing_options o;
  o.fused = &f;
  o.row_chain = Plan::chains.next.data();
  o.row_siblings = Plan::row_sibling.data();
  o.copy_siblings = Plan::copy_group.next.data();
  return listing(Plan::graph(), L, plan_reuse(L), o);
}

namespace detail {
// `static + align(e0) + 2*align(e1)`: an offset or pool size with its symbolic lanes.
inline std::string lanes_text(const ir& g, std::int64_t base, const std::vector<sym_expr>& lanes, std::size_t n) {
  std::string s = std::to_string(base);
  for (std::size_t j = 0; j < n;) {
    std::size_t k = j;
    while (k < n && lanes[k] == lanes[j]) ++k;
    s += " + " + (k - j > 1 ? std::to_string(k - j) + "*" : std::string()) + "align(" + to_string(g, lanes[j]) + ")";
    j = k;
  }
  return s;
}
}  // namespace detail

// The pooled-arena form (Inductor's memory_planning.py output): each pool created once with
// `empty_strided((bytes,), (1,), dtype=uint8)` before its first buffer, each buffer a view
// `alloc_from_pool(pool, offset, dtype, shape, stride)` before the step that writes it first, each
// kernel call with its step and the user's node it came from, `del pool` after the last use of a
// pool that holds no output, and the peak next to the lower bound (and the bytes with no reuse).
inline std::string arena_listing(const ir& g, const liveness& L, const arena_plan& A, listing_options opt = {}) {
  std::string s;
  auto inputs_text = [&] {
    std::string t;
    bool first = true;
    for (std::int32_t i = 0; i < g.size(); ++i)
      if (g[i].op == op_kind::placeholder) { t += (first ? "" : ", ") + std::string(g[i].name.view()); first = false; }
    return t;
  };
  const std::int32_t n_parts = L.step_partition.empty() ? 1 : L.step_partition.back() + 1;
  std::vector<unsigned char> created = detail::filled<unsigned char>(A.pools.size(), 0);
  // Buffers by defining step (they are ordered by def_step already).
  std::size_t bi = 0;
  std::int32_t st = 0;
  for (std::int32_t p = 0; p < n_parts; ++p) {
    if (n_parts > 1) {
      s += "def partition_" + std::to_string(p) + "(" + inputs_text();
      for (std::size_t b = 0; b < L.buffers.size(); ++b)
        if (L.buffers[b].crosses_partition && L.buffers[b].partition < p && L.buffers[b].last_step >= st)
          s += ", " + detail::buf_name(static_cast<std::int32_t>(b));
      s += "):\n";
    } else {
      s += "def call(" + inputs_text() + "):\n";
    }
    if (p == 0) s += detail::symbol_definitions(g);
    for (; st < L.n_steps() && L.step_partition[static_cast<std::size_t>(st)] == p; ++st) {
      for (; bi < L.buffers.size() && L.buffers[bi].def_step == st; ++bi) {
        const arena_slot& sl = A.slots[bi];
        const arena_pool& q = A.pools[static_cast<std::size_t>(sl.pool)];
        const std::string pool = "pool" + std::to_string(sl.pool);
        if (!created[static_cast<std::size_t>(sl.pool)]) {
          created[static_cast<std::size_t>(sl.pool)] = 1;
          s += "    " + pool + " = empty_strided((" + detail::lanes_text(g, q.static_bytes, q.lanes, q.lanes.size()) +
               ",), (1,), dtype=uint8)" + (q.kind == pool_kind::unbacked ? "  # after its data-dependent size is known" : "") + "\n";
        }
        const tensor_meta& m = g[L.buffers[bi].node].meta;
        const std::size_t below = sl.lane < 0 ? 0 : static_cast<std::size_t>(sl.lane);
        s += "    " + detail::buf_name(static_cast<std::int32_t>(bi)) + " = alloc_from_pool(" + pool + ", " +
             detail::lanes_text(g, sl.offset, q.lanes, below) + ", " + std::string(name_of(m.dt)) + ", " +
             detail::tuple_text(g, m, false) + ", " + detail::tuple_text(g, m, true) + ")\n";
      }
      const std::int32_t nid = L.steps[static_cast<std::size_t>(st)];
      s += detail::kernel_text(g, L, nid, st, opt);
      for (std::size_t k = 0; k < A.pools.size(); ++k)
        if (created[k] == 1 && !A.pools[k].returned && A.pools[k].end <= 2 * static_cast<std::int64_t>(st) + 1) {
          created[k] = 2;
          s += "    del pool" + std::to_string(k) + "\n";
        }
    }
    if (p + 1 < n_parts) {
      std::string ret;
      for (std::size_t b = 0; b < L.buffers.size(); ++b)
        if (L.buffers[b].crosses_partition && L.buffers[b].partition <= p && L.buffers[b].last_step >= st)
          ret += (ret.empty() ? "" : ", ") + detail::buf_name(static_cast<std::int32_t>(b));
      s += "    return (" + ret + (ret.find(',') == std::string::npos && !ret.empty() ? ",)" : ")") + "\n";
    }
  }
  s += "    " + node_text(g, g.size() - 1) + "\n";
  s += "# peak: " + std::to_string(A.peak_bytes) + " bytes (lower bound " + std::to_string(A.lower_bound) + ", " +
       std::to_string(A.unplanned_peak) + " without reuse)\n";
  return s;
}

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
