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

// The reuse-line form (Inductor's default wrapper): `buf2 = buf0; del buf0  # reuse`.
inline std::string listing(const ir& g, const liveness& L, const reuse_plan& R, listing_options opt = {}) {
  std::string s = "def call(";
  bool first = true;
  for (std::int32_t i = 0; i < g.size(); ++i)
    if (g[i].op == op_kind::placeholder) { s += (first ? "" : ", ") + std::string(g[i].name.view()); first = false; }
  s += "):\n";
  std::size_t li = 0;
  auto memory_lines_until = [&](std::int64_t t) {
    for (; li < R.lines.size() && R.lines[li].time <= t; ++li) {
      const plan_line& l = R.lines[li];
      const buffer_life& b = L.buffers[static_cast<std::size_t>(l.buffer)];
      const tensor_meta& m = g[b.node].meta;
      switch (l.kind) {
        case line_kind::allocate:
          s += "    " + detail::buf_name(l.buffer) + " = empty_strided(" + detail::tuple_text(g, m, false) + ", " +
               detail::tuple_text(g, m, true) + ", " + std::string(name_of(m.dt)) + ")  # %" + std::string(g[b.node].name.view()) + "\n";
          break;
        case line_kind::reuse:
          s += "    " + detail::buf_name(l.buffer) + " = " + detail::buf_name(l.from) + "; del " + detail::buf_name(l.from) +
               "  # reuse, %" + std::string(g[b.node].name.view()) + "\n";
          break;
        case line_kind::free: s += "    del " + detail::buf_name(l.buffer) + "\n"; break;
        case line_kind::none: break;
      }
    }
  };
  for (std::int32_t st = 0; st < L.n_steps(); ++st) {
    memory_lines_until(2 * static_cast<std::int64_t>(st) + 1);
    const std::int32_t nid = L.steps[static_cast<std::size_t>(st)];
    std::string prov;
    if (opt.original && g[nid].origin >= 0 && g[nid].origin < opt.original->size())
      prov = ", from %" + std::string((*opt.original)[g[nid].origin].name.view());
    s += "    " + node_text(g, nid) + "  # step " + std::to_string(st) + prov + "\n";
  }
  memory_lines_until(INT64_MAX);
  s += "    " + node_text(g, g.size() - 1) + "\n";
  s += "# peak " + std::to_string(R.peak_static_bytes) + " B of static-size buffers; " + std::to_string(R.reuses) +
       " reuses, " + std::to_string(R.vetoed) + " vetoed\n";
  return s;
}

}  // namespace ctfx
