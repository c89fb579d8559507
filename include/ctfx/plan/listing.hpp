// ctfx/plan/listing.hpp — a plan printed as a program, the way Inductor prints its output code:
// the memory lines (allocate / reuse / free, or alloc_from_pool), each kernel call with a comment
// naming the step and the node of the user's graph it came from (provenance), and the peak next to
// the lower bound.
#pragma once
#include <string>
#include "../graph/print.hpp"
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
}  // namespace detail

// Where a buffer's memory comes from, for the listing: an allocation of its own (or a reuse), or
// an offset in a pool.
struct listing_options {
  const ir* original = nullptr;  // the user's graph, for provenance comments (optional)
};

// The reuse-line form (Inductor's default wrapper): `buf2 = buf0; del buf0  # reuse`. A graph with
// several partitions prints one function per partition, each returning what later partitions read.
inline std::string listing(const ir& g, const liveness& L, const reuse_plan& R, listing_options opt = {}) {
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
  auto line_text = [&](const plan_line& l) {
    const buffer_life& b = L.buffers[static_cast<std::size_t>(l.buffer)];
    const tensor_meta& m = g[b.node].meta;
    switch (l.kind) {
      case line_kind::allocate:
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
    for (; st < L.n_steps() && L.step_partition[static_cast<std::size_t>(st)] == p; ++st) {
      lines_before_step(2 * static_cast<std::int64_t>(st) + 1);
      const std::int32_t nid = L.steps[static_cast<std::size_t>(st)];
      std::string prov;
      if (opt.original && g[nid].origin >= 0 && g[nid].origin < opt.original->size())
        prov = ", from %" + std::string((*opt.original)[g[nid].origin].name.view());
      s += "    " + node_text(g, nid) + "  # step " + std::to_string(st) + prov + "\n";
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

}  // namespace ctfx
