// test/fuzz/generator.hpp — random functional graphs over ctfx's op set, valid by construction.
//
// A case is a graph plus input data. The graph is built with the ordinary DSL at run time from a
// seeded PRNG: inputs (f32, sometimes f64/i32, sometimes a symbolic first extent), then a mix of
// unary/binary ops with broadcasting and scalars (sign, floor and truncating division, fma, comparisons
// and logical ops feeding where, clamps,
// means among them), views of views, view scatters (also the nested view->scatter chains
// canonicalize_view_scatter_ops fuses), index_put with input or computed indices (with and without
// accumulate, with duplicates) or a computed bool mask, gathers (index, gather), scatters along dim 0
// (scatter, scatter_add, scatter_reduce), clones, reductions (also
// softmax and centered rows: row chains in compiled<G>), cat (also of channels-last views, whose
// result is channels-last), foreach lists, a mutating user op (auto_functionalized), copy_
// epilogues into inputs (also of values that alias the input through views) and outputs that may
// be inputs or their views, repeated uses everywhere; and (control_flow) cond and while_loop nodes
// whose subgraphs are drawn the same way (nested up to two deep; both branches, zero to three
// trips, loops that stop on a carried value), and counts read with item() that slice or select.
#pragma once
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>
#include <ctfx.hpp>
#include <ctfx/graph/data_dependent.hpp>
#include <ctfx/exec/kernel_table.hpp>
#include <ctfx/kernels/element.hpp>
#include <ctfx/kernels/launch.hpp>
#include <ctfx/kernels/strided.hpp>

namespace ctfx_fuzz {

using ctfx::index_t;
using ctfx::tensor;

// The user op of the fuzzed graphs: out <- x * 3 + out (reads and writes its mutated argument).
// One functor for every backend, launched like ctfx's own kernels.
struct axpy3_fn {
  ctfx::strided x, out;
  CTFX_HD void operator()(index_t i) const {
    auto* po = reinterpret_cast<float*>(out.at(i));
    *po = *reinterpret_cast<const float*>(x.at(i)) * 3.0f + *po;
  }
};
inline ctfx::strided as_strided_view(const ctfx::tensor_ref& t) {
  ctfx::strided s;
  s.p = static_cast<std::byte*>(t.data);
  s.dt = t.dt;
  s.rank = t.rank;
  for (int d = 0; d < t.rank; ++d) { s.size[d] = t.size[d]; s.stride[d] = t.stride[d]; }
  return s;
}
struct axpy3 : ctfx::custom_op<"fuzz::axpy3_", "axpy3_(Tensor x, Tensor(a!) out) -> ()"> {
  static void run(const ctfx::custom_call& c) {
    const ctfx::strided o = as_strided_view(c.args[1]);
    ctfx::parallel_for(c.ctx, o.numel(), axpy3_fn{as_strided_view(c.args[0]).broadcast_to(o.rank, o.size), o});
  }
};

inline ctfx::kernel_table fuzz_kernels() {
  ctfx::kernel_table k;
  k.add<axpy3>();
  return k;
}

struct input_data {
  ctfx::tensor_desc desc;
  std::vector<std::byte> bytes;
};

struct fuzz_case {
  ctfx::ir graph;
  std::vector<input_data> inputs;
  std::string what;  // a one-line summary of the generator's choices
};

class generator {
 public:
  // libm_ops: also generate ops that call the backend's math library (sin), whose last bits differ
  // between glibc and CUDA; ctfx's own f32 exp (kernels/math.hpp) is generated on every backend.
  // kernel_steps_only: static extents, and only ops that a static plan runs (exec/static_plan.hpp):
  // no user ops; the seed's other choices stay those of the full generator. symbolic: the first
  // input always has a symbolic first extent (with kernel_steps_only too: static plans with symbols).
  // control_flow: also generate cond and while_loop nodes (their subgraphs drawn like the graph)
  // and values read with item() (off, the seed draws what it drew before they existed).
  explicit generator(std::uint64_t seed, bool libm_ops = true, bool kernel_steps_only = false, bool symbolic = false,
                     bool control_flow = false)
      : rng_(seed), libm_ops_(libm_ops), kernel_steps_only_(kernel_steps_only), symbolic_(symbolic), control_flow_(control_flow) {}

  fuzz_case make() {
    fuzz_case c;
    sym_ = (pick(5) == 0 && !kernel_steps_only_) || symbolic_;
    sym_value_ = 3 + static_cast<index_t>(pick(3));
    c.graph = ctfx::build_checked([&](ctfx::builder& b) { build(b); });
    for (std::int32_t i : inputs_order(c.graph)) c.inputs.push_back(make_input(c.graph, i));
    c.what = summary_;
    return c;
  }

 private:
  std::mt19937_64 rng_;
  bool libm_ops_ = true;
  bool kernel_steps_only_ = false;
  bool symbolic_ = false;
  bool control_flow_ = false;
  int depth_ = 0;  // how deep in subgraphs the steps are drawn (cond and while_loop nest up to 2)
  bool sym_ = false;
  index_t sym_value_ = 4;
  std::vector<tensor> pool_;      // f32 values
  std::vector<tensor> inputs_;    // f32 inputs (epilogue targets)
  std::vector<tensor> index_;     // i64 index inputs
  std::vector<index_t> index_bound_;
  std::string summary_;

  unsigned pick(unsigned n) { return static_cast<unsigned>(rng_() % n); }
  bool coin() { return pick(2) == 0; }

  static std::vector<std::int32_t> inputs_order(const ctfx::ir& g) {
    std::vector<std::int32_t> v;
    for (std::int32_t i = 0; i < g.size(); ++i)
      if (g[i].op == ctfx::op_kind::placeholder && g[i].meta.is_tensor()) v.push_back(i);
    std::sort(v.begin(), v.end(), [&](auto a, auto b) { return g[a].aux < g[b].aux; });
    return v;
  }

  input_data make_input(const ctfx::ir& g, std::int32_t i) {
    input_data d;
    const auto& m = g.meta(i);
    std::vector<index_t> sym(g.syms.size(), sym_value_);
    d.desc.dt = m.dt;
    d.desc.rank = m.rank;
    for (int k = 0; k < m.rank; ++k) d.desc.size[k] = m.size[k].eval(sym);
    d.desc.set_contiguous();
    const index_t n = d.desc.numel();
    d.bytes.resize(static_cast<std::size_t>(n) * static_cast<std::size_t>(ctfx::size_of(m.dt)));
    const std::string_view name = g[i].name.view();
    for (index_t k = 0; k < n; ++k) {
      std::byte* p = d.bytes.data() + k * ctfx::size_of(m.dt);
      if (name.substr(0, 3) == "idx") {
        // index values: in [-bound, bound), with duplicates
        index_t bound = 1;
        for (std::size_t j = 0; j < index_.size(); ++j)
          if (g[index_[j].id].name.view() == name) bound = index_bound_[j];
        const index_t v = static_cast<index_t>(pick(static_cast<unsigned>(2 * bound))) - bound;
        std::memcpy(p, &v, 8);
      } else if (m.dt == ctfx::f32) {
        const float v = static_cast<float>(static_cast<int>(pick(2001)) - 1000) / 64.0f;  // exact, with signs and zeros
        std::memcpy(p, &v, 4);
      } else if (m.dt == ctfx::f64) {
        const double v = static_cast<double>(static_cast<int>(pick(2001)) - 1000) / 7.0;
        std::memcpy(p, &v, 8);
      } else if (m.dt == ctfx::i32) {
        const std::int32_t v = static_cast<std::int32_t>(pick(200)) - 100;
        std::memcpy(p, &v, 4);
      }
    }
    return d;
  }

  tensor any() { return pool_[pick(static_cast<unsigned>(pool_.size()))]; }
  bool static_dim(tensor t, int d) { return t.size(d).is_static(); }
  index_t dim_size(tensor t, int d) { return t.size(d).value(); }
  bool nonempty(tensor t, index_t d) { return static_dim(t, static_cast<int>(d)) && dim_size(t, static_cast<int>(d)) > 0; }

  void note(const char* s) {
    if (!summary_.empty()) summary_ += ' ';
    summary_ += s;
  }

  // A random view of t (static dims only), or t itself when none applies.
  tensor view_of(tensor t) {
    const int r = t.rank();
    switch (pick(6)) {
      case 0:
        for (int d = r - 1; d >= 0; --d)
          if (static_dim(t, d) && dim_size(t, d) >= 2) {
            const index_t n = dim_size(t, d), s = pick(static_cast<unsigned>(n - 1));
            const index_t e = s + 1 + pick(static_cast<unsigned>(n - s));
            return t.slice(d, s, e, 1 + pick(2));
          }
        break;
      case 1:
        for (int d = 0; d < r; ++d)
          if (r >= 2 && static_dim(t, d) && dim_size(t, d) >= 1) return t.select(d, pick(static_cast<unsigned>(dim_size(t, d))));
        break;
      case 2:
        if (r >= 2) return t.transpose(0, r - 1);
        break;
      case 3:
        if (r < 4) return t.unsqueeze(pick(static_cast<unsigned>(r + 1)));
        break;
      case 4:
        if (r == 2 && static_dim(t, 0) && static_dim(t, 1)) return t.diagonal(0, 0, 1);
        break;
      case 5:
        if (r >= 1 && static_dim(t, r - 1) && dim_size(t, r - 1) % 2 == 0 && t.meta().is_contiguous()) {
          if (r == 1) return t.view({2, dim_size(t, 0) / 2});
          if (r == 2 && static_dim(t, 0)) return t.view({dim_size(t, 0) * dim_size(t, 1)});
        }
        break;
    }
    return t;
  }

  // A value with the shape of t (an existing one of that shape, or one computed from t).
  tensor like(tensor t) {
    std::vector<tensor> same;
    for (auto p : pool_)
      if (p.meta().same_shape(t.meta()) && p.id != t.id) same.push_back(p);
    if (!same.empty() && coin()) return same[pick(static_cast<unsigned>(same.size()))];
    switch (pick(4)) {
      case 0: return t * 2.0;
      case 1: return -t;
      case 2: return t + 1.5;
      default: return ctfx::abs(t);
    }
  }

  // A user op: a step compiled<G> leaves to the run-time dispatch.
  static constexpr bool dispatched_step(unsigned k) { return k == 13; }

  void step(ctfx::builder& b) {
    tensor t = any();
    const unsigned kinds = control_flow_ && !kernel_steps_only_ ? 19 : 16;
    unsigned what = pick(kinds);
    while (kernel_steps_only_ && dispatched_step(what)) what = pick(kinds);
    switch (what) {
      case 0: {  // unary
        switch (pick(8)) {
          case 0: push(-t); break;
          case 6: push(ctfx::sign(t)); break;
          case 1: push(ctfx::abs(t)); break;
          case 2: push(ctfx::relu(t)); break;
          case 3: push(ctfx::floor(t)); break;
          case 4:
            if (!libm_ops_) push(ctfx::exp(t));
            else if (unsigned f = pick(3); f == 0) push(ctfx::sin(t));
            else push(f == 1 ? ctfx::log1p(ctfx::abs(t)) : ctfx::expm1(t));
            break;
          case 5: push(ctfx::exp(t)); break;
          default: push(ctfx::sqrt(ctfx::abs(t))); break;
        }
        note("unary");
        break;
      }
      case 1: case 2: {  // binary, with broadcasting or a scalar
        tensor u = any();
        bool ok = u.rank() <= t.rank();
        for (int d = 0; ok && d < u.rank(); ++d) {
          const auto& a = t.size(t.rank() - u.rank() + d);
          const auto& c = u.size(d);
          ok = a == c || c == ctfx::sym_expr(1);
        }
        if (!ok) { push(t * 0.5); break; }
        switch (pick(11)) {
          case 0: push(t + u); break;
          case 1: push(t * u); break;
          case 2: push(t - u); break;
          case 3: push(ctfx::maximum(t, u)); break;
          // bool intermediates (comparisons, logical ops) that fuse into a where; clamps
          case 4: push(ctfx::where(ctfx::gt(t, u), t, u * 0.5)); note("where"); break;
          case 5: push(ctfx::where(ctfx::logical_and(ctfx::lt(t, 0.5), ctfx::ne(u, 0)), t * 2.0, u)); note("where"); break;
          case 6: push(ctfx::where(ctfx::logical_not(ctfx::le(u, t)), ctfx::minimum(t, u), t)); note("where"); break;
          case 7: push(ctfx::clamp(t, -0.5, 0.75)); note("clamp"); break;
          case 8: push(coin() ? ctfx::floor_divide(t, u) : ctfx::trunc_divide(t, 0.75)); note("division"); break;
          // a * b + c rounded once: an optimizer's step (fma(g, -lr, p)), and of an op's result
          case 9: push(coin() ? ctfx::fma(u, -0.375, t) : ctfx::fma(t * 0.5, u, t)); note("fma"); break;
          default: push(ctfx::clamp_max(ctfx::clamp_min(t, u), 1.0)); note("clamp"); break;
        }
        note("binary");
        break;
      }
      case 3: case 4: push(view_of(t)); note("view"); break;
      case 5: case 6: {  // a view scatter into t
        const int r = t.rank();
        int d = -1;
        for (int k = r - 1; k >= 0; --k)
          if (static_dim(t, k) && dim_size(t, k) >= 2) { d = k; break; }
        if (d < 0) break;
        const index_t n = dim_size(t, d);
        const unsigned kind = pick(r == 2 && static_dim(t, 0) && static_dim(t, 1) ? 3 : 2);
        if (kind == 0) {
          const index_t s = pick(static_cast<unsigned>(n - 1)), e = s + 1 + pick(static_cast<unsigned>(n - s));
          tensor v = t.slice(d, s, e);
          push(ctfx::slice_scatter(t, like(v), d, s, e));
          note("slice_scatter");
        } else if (kind == 1 && r >= 2) {
          const index_t i = pick(static_cast<unsigned>(n));
          tensor v = t.select(d, i);
          push(ctfx::select_scatter(t, like(v), d, i));
          note("select_scatter");
        } else if (kind == 2) {
          tensor v = t.diagonal(0, 0, 1);
          push(ctfx::diagonal_scatter(t, like(v), 0, 0, 1));
          note("diagonal_scatter");
        }
        break;
      }
      case 7: {  // the nested chain: slice, then select inside it, scatter back twice
        if (t.rank() != 2 || !static_dim(t, 0) || !static_dim(t, 1) || dim_size(t, 0) < 2) break;
        const index_t n = dim_size(t, 0);
        const index_t s = pick(static_cast<unsigned>(n - 1));
        tensor v = t.slice(0, s, n);
        tensor w = v.select(1, pick(static_cast<unsigned>(dim_size(t, 1))));
        tensor w2 = w * 3.0;
        const index_t col = pick(static_cast<unsigned>(dim_size(t, 1)));
        tensor v2 = ctfx::select_scatter(v, w2, 1, col);
        push(ctfx::slice_scatter(t, v2, 0, s, n));
        note("nested_scatter");
        break;
      }
      case 8: {  // index_put with an input index vector along dim 0 (or a bool mask); a gather
        if (t.rank() >= 1 && pick(4) == 0) {  // x[x > 0] (+)= 0.75: a computed mask, a 0-d value
          const bool acc = coin();
          push(ctfx::index_put(t, {ctfx::gt(t, 0.0)}, b.full({}, 0.75, t.meta().dt), acc));
          note("masked_put");
          break;
        }
        if (index_.empty() || t.rank() < 1 || !static_dim(t, 0)) break;
        const std::size_t k = pick(static_cast<unsigned>(index_.size()));
        if (index_bound_[k] != dim_size(t, 0)) break;
        tensor idx = index_[k];
        if (pick(3) == 0) {  // indices computed in the graph (same values): checked once computed
          const int c = 1 + static_cast<int>(pick(3));  // an integral scalar: the indices stay i64
          idx = (idx + c) - c;
          note("computed_index");
        }
        if (pick(3) == 0) { push(ctfx::index(t, {idx})); note("index"); break; }
        const ctfx::dtype tdt = t.meta().dt;
        if (t.rank() <= 3 && (ctfx::is_floating(tdt) || tdt == ctfx::dtype::i32 || tdt == ctfx::dtype::i64) && coin()) {  // along dim 0, the indices made non-negative (Python's modulo), duplicates kept;
          // for rank 2 and 3 expanded over the other dimensions (stride 0), as a segment sum's index
          tensor nn = ctfx::remainder(idx, static_cast<double>(dim_size(t, 0)));
          const index_t len = idx.size(0).value();
          if (t.rank() == 2) nn = nn.unsqueeze(1).expand({len, t.size(1)});
          if (t.rank() == 3) nn = nn.unsqueeze(1).unsqueeze(2).expand({len, t.size(1), t.size(2)});
          const tensor got = ctfx::gather(t, 0, nn);
          const tensor src = ctfx::is_floating(tdt) ? got * 0.5 + 1.25 : got * 3 + 1;  // of nn's shape and t's dtype
          switch (pick(4)) {
            case 0: push(ctfx::gather(t, 0, nn)); note("gather"); break;
            case 1: push(ctfx::scatter(t, 0, nn, src)); note("scatter"); break;
            case 2: push(ctfx::scatter_add(t, 0, nn, src)); note("scatter_add"); break;
            default: {  // every reduction, with and without self
              constexpr const char* how[] = {"sum", "prod", "mean", "amax", "amin"};
              push(ctfx::scatter_reduce(t, 0, nn, src, how[pick(5)], coin()));
              note("scatter_reduce");
              break;
            }
          }
          break;
        }
        // values: [len, rest...] or broadcast [rest...]
        tensor vals;
        const index_t len = idx.size(0).value();
        if (t.rank() == 1) vals = b.full({len}, 0.25 * static_cast<double>(pick(9)));
        else {
          tensor row = t.select(0, 0);
          if (t.rank() == 2 && coin()) vals = (row * 2.0).unsqueeze(0).expand({len, t.size(1)});
          else if (len == 1) vals = like(row).unsqueeze(0) + 0.25;  // one whole row: may be computed in place (fusion::into)
          else vals = like(row);  // broadcast over the index positions
        }
        const bool acc = coin();
        push(ctfx::index_put(t, {idx}, vals, acc));
        note(acc ? "index_put_acc" : "index_put");
        break;
      }
      case 9: push(t.clone()); note("clone"); break;
      case 10: {
        if (t.rank() < 1) break;
        const index_t d = pick(static_cast<unsigned>(t.rank()));
        if (ctfx::is_floating(t.meta().dt) && pick(3) == 0) { push(t.mean({d}, coin())); note("mean"); break; }
        if (pick(3) == 0) {  // of values computed here, over the last dimensions: a fused reduction
          const index_t r = t.rank();
          tensor v = ctfx::is_floating(t.meta().dt) ? ctfx::relu(t * 1.5 - 0.25) : t * 3 + 1;
          // (amin only over extents known above 0: it refuses the others, as PyTorch raises on empty ones)
          const bool can_min = nonempty(t, r - 1) && (r < 2 || nonempty(t, r - 2));
          auto extremum = [&](std::initializer_list<index_t> dims, bool keep) {
            return pick(2) == 0 && can_min ? v.amin(dims, keep) : v.amax(dims, keep);
          };
          if (r >= 2 && coin()) push(coin() ? v.sum({r - 2, r - 1}, coin()) : extremum({r - 1, r - 2}, coin()));
          else if (ctfx::is_floating(t.meta().dt) && coin()) push(v.mean({r - 1}, coin()));
          else push(coin() ? v.sum({r - 1}, coin()) : extremum({r - 1}, coin()));
          note("reduce_fused");
          break;
        }
        switch (nonempty(t, d) ? pick(7) : pick(3) * 2) {  // amin, argmax, argmin only over extents known above 0
          case 0: case 1: push(t.sum({d}, coin())); break;
          case 2: case 3: push(t.amax({d}, coin())); break;
          case 4: push(t.cumsum(d)); break;
          case 5: push(t.amin({d}, coin())); break;
          default: push((coin() ? t.argmax(d, coin()) : t.argmin(d, coin())).to(ctfx::f32)); break;  // (the pool holds f32)
        }
        note("reduce");
        break;
      }
      case 11: {
        if (t.rank() < 1) break;
        if (t.rank() == 3 && coin()) {  // channels-last [1, C, H, W] views of an [H, W, C] value, cat along any dim
          tensor cl = t.unsqueeze(0).permute({0, 3, 1, 2});
          tensor u = like(cl);
          push(ctfx::cat({cl * 0.5, u}, pick(4)));
          note("cat_channels_last");
          break;
        }
        tensor u = like(t);
        push(ctfx::cat({t, u}, t.rank() - 1));
        note("cat");
        break;
      }
      case 12: {
        tensor u = like(t);
        auto r = coin() ? ctfx::foreach_add({t, u}, {u, t}) : ctfx::foreach_mul({t, u}, 0.5);
        push(r[0]);
        if (coin()) push(r[1]);
        note("foreach");
        break;
      }
      case 13: {  // the mutating user op, functionalized: out <- 3x + out
        tensor out = like(t);
        auto r = b.call<axpy3>(t, out);
        push(r[0]);
        note("custom");
        break;
      }
      case 15: {  // reductions over the last dimension and what reads them: a row chain in compiled<G>
        if (t.rank() < 1) break;
        const index_t r = t.rank() - 1;
        if (coin()) {  // softmax
          tensor e = ctfx::exp(t - t.amax({r}, true));
          push(e / e.sum({r}, true));
          note("softmax");
        } else {  // centered rows plus their sum
          tensor c = t - t.mean({r}, true);
          push(c * 0.5 + c.sum({r}, true));
          note("center");
        }
        break;
      }
      case 16: control_cond(b); break;
      case 17: control_loop(b); break;
      case 18: item_step(b); break;
      default: {  // a view of an input, then a functional op on it (aliasing through views)
        tensor in = inputs_[pick(static_cast<unsigned>(inputs_.size()))];
        push(view_of(in) + 1.0);
        note("input_view");
        break;
      }
    }
  }

  // ----- control flow: subgraphs drawn like the graph, from their own placeholders -----

  // Values of the pool with static extents (a subgraph's placeholders take static extents only).
  std::vector<tensor> static_values() {
    std::vector<tensor> v;
    for (auto p : pool_)
      if (!static_values_only(p).empty()) v.push_back(p);
    return v;
  }
  // {t} when t's extents are static, else none.
  std::vector<tensor> static_values_only(tensor t) {
    for (int d = 0; d < t.rank(); ++d)
      if (!static_dim(t, d)) return {};
    return {t};
  }
  // A placeholder of t's dtype and (static) extents.
  // A placeholder's name: the prefix, then k. (Appending, not `"a" + std::to_string(k)`: g++ 12 at
  // -O3 reports a false -Wrestrict overlap inside that operator+'s insert.)
  static std::string numbered(const char* prefix, long k) {
    std::string s(prefix);
    s += std::to_string(k);
    return s;
  }
  static tensor input_like(ctfx::builder& sb, const std::string& name, const ctfx::tensor_meta& m) {
    switch (m.rank) {
      case 0: return sb.input(name, m.dt, {});
      case 1: return sb.input(name, m.dt, {m.size[0]});
      case 2: return sb.input(name, m.dt, {m.size[0], m.size[1]});
      case 3: return sb.input(name, m.dt, {m.size[0], m.size[1], m.size[2]});
      default: return sb.input(name, m.dt, {m.size[0], m.size[1], m.size[2], m.size[3]});
    }
  }
  // Draws a subgraph's steps on builder sb: `f(ph)` declares its placeholders (returning the f32
  // ones the steps may use) and, after `n` steps, its outputs. The parent's pools are set aside.
  template <class Declare, class Finish>
  void nested(ctfx::builder& sb, int n, Declare declare, Finish finish) {
    auto pool = pool_, inputs = inputs_, index = index_;
    auto bounds = index_bound_;
    pool_.clear(); inputs_.clear(); index_.clear(); index_bound_.clear();
    ++depth_;
    for (tensor p : declare(sb)) { pool_.push_back(p); inputs_.push_back(p); }
    for (int k = 0; k < n; ++k) step(sb);
    finish(sb);
    --depth_;
    pool_ = pool; inputs_ = inputs; index_ = index; index_bound_ = bounds;
  }
  // A value of the pool with m's extents (often one computed in the subgraph, sometimes a placeholder).
  tensor of_shape(const ctfx::tensor_meta& m) {
    std::vector<tensor> same, computed;
    for (auto p : pool_)
      if (p.meta().same_shape(m)) {
        same.push_back(p);
        if (p.b->g[p.id].op != ctfx::op_kind::placeholder) computed.push_back(p);
      }
    if (!computed.empty() && pick(4) != 0) return computed[pick(static_cast<unsigned>(computed.size()))];
    return same[pick(static_cast<unsigned>(same.size()))];
  }
  // A one-element b8 predicate of t's values.
  tensor predicate_of(tensor t) {
    const double c = static_cast<double>(static_cast<int>(pick(5)) - 2);
    switch (pick(3)) {
      case 0: return ctfx::gt(t.sum(), c);
      case 1: return ctfx::lt(t.amax({}, true), c);  // every extent 1
      default: return ctfx::ge(t.select(0, 0).sum(), 0.0);
    }
  }

  // torch.cond(pred, then, else, operands): one or two operands, branches returning one or two
  // values of the operands' extents.
  void control_cond(ctfx::builder& b) {
    if (depth_ >= 2) return;
    const auto vals = static_values();
    if (vals.empty()) return;
    std::vector<tensor> ops{vals[pick(static_cast<unsigned>(vals.size()))]};
    if (coin()) ops.push_back(vals[pick(static_cast<unsigned>(vals.size()))]);  // (sometimes the same value twice)
    std::vector<ctfx::tensor_meta> outs;
    for (int k = 0, n = 1 + static_cast<int>(pick(2)); k < n; ++k) outs.push_back(ops[pick(static_cast<unsigned>(ops.size()))].meta());
    auto branch = [&](ctfx::builder& sb) {
      nested(sb, static_cast<int>(pick(4)),
             [&](ctfx::builder& s) {
               std::vector<tensor> ph;
               for (std::size_t k = 0; k < ops.size(); ++k) ph.push_back(input_like(s, numbered("a", static_cast<long>(k)), ops[k].meta()));
               return ph;
             },
             [&](ctfx::builder& s) {
               if (outs.size() == 1) s.output(of_shape(outs[0]));
               else s.output(of_shape(outs[0]), of_shape(outs[1]));
             });
    };
    const tensor pred = predicate_of(ops[0]);
    auto r = ops.size() == 1 ? b.cond(pred, branch, branch, {ops[0]}) : b.cond(pred, branch, branch, {ops[0], ops[1]});
    for (std::size_t k = 0; k < outs.size(); ++k) push(r[static_cast<std::int32_t>(k)]);
    note("cond");
  }

  // while_loop(cond_fn, body_fn, (i, carried...), additional): i counts the trips from 0; the
  // condition is i < N (N in 0..3: zero trips too), sometimes also a test of a carried value; the
  // body returns i + 1 and the next carried values.
  void control_loop(ctfx::builder& b) {
    if (depth_ >= 2) return;
    const auto vals = static_values();
    if (vals.empty()) return;
    std::vector<tensor> carried{vals[pick(static_cast<unsigned>(vals.size()))]};
    if (coin()) carried.push_back(vals[pick(static_cast<unsigned>(vals.size()))]);
    std::vector<tensor> extra;
    if (coin()) extra.push_back(vals[pick(static_cast<unsigned>(vals.size()))]);
    const std::int64_t trips = static_cast<std::int64_t>(pick(4));
    const bool data_test = pick(3) == 0;
    auto declare = [&](ctfx::builder& s) {
      std::vector<tensor> ph;
      (void)s.input("i", ctfx::i64, {});
      int k = 0;
      for (auto t : carried) ph.push_back(input_like(s, numbered("c", k++), t.meta()));
      for (auto t : extra) ph.push_back(input_like(s, numbered("e", k++), t.meta()));
      return ph;
    };
    auto counter = [](ctfx::builder& s) {  // placeholder 0
      for (std::int32_t j = 0; j < s.g.size(); ++j)
        if (s.g[j].op == ctfx::op_kind::placeholder && s.g[j].aux == 0) return tensor{&s, j};
      return tensor{};
    };
    auto cond_fn = [&](ctfx::builder& sb) {
      nested(sb, data_test ? static_cast<int>(pick(2)) : 0, declare, [&](ctfx::builder& s) {
        tensor go = ctfx::lt(counter(s), trips);
        if (data_test) go = ctfx::logical_and(go, predicate_of(any()));
        s.output(go);
      });
    };
    auto body_fn = [&](ctfx::builder& sb) {
      nested(sb, 1 + static_cast<int>(pick(4)), declare, [&](ctfx::builder& s) {
        tensor i1 = counter(s) + 1;
        if (carried.size() == 1) s.output(i1, of_shape(carried[0].meta()));
        else s.output(i1, of_shape(carried[0].meta()), of_shape(carried[1].meta()));
      });
    };
    const tensor i0 = b.zeros({}, ctfx::i64);
    ctfx::tuple_ref r{};
    if (carried.size() == 1) r = extra.empty() ? b.while_loop(cond_fn, body_fn, {i0, carried[0]}) : b.while_loop(cond_fn, body_fn, {i0, carried[0]}, {extra[0]});
    else r = extra.empty() ? b.while_loop(cond_fn, body_fn, {i0, carried[0], carried[1]})
                           : b.while_loop(cond_fn, body_fn, {i0, carried[0], carried[1]}, {extra[0]});
    for (std::size_t k = 0; k < carried.size(); ++k) push(r[static_cast<std::int32_t>(k + 1)]);
    note(data_test ? "while_loop_data" : "while_loop");
  }

  // Whether t or a value it is computed from has a size, stride or offset that uses a value read
  // with item() (a value computed from such a tensor is not one ctfx computes ahead of the run).
  static bool reads_value(tensor t) {
    const ctfx::ir& g = t.b->g;
    std::vector<unsigned char> seen(static_cast<std::size_t>(g.size()), 0);
    std::vector<std::int32_t> todo{t.id};
    while (!todo.empty()) {
      const std::int32_t i = todo.back();
      todo.pop_back();
      if (i < 0 || seen[static_cast<std::size_t>(i)]) continue;
      seen[static_cast<std::size_t>(i)] = 1;
      const ctfx::tensor_meta& m = g[i].meta;
      for (std::size_t s = 0; s < g.syms.size(); ++s) {
        if (g.syms[s].kind != ctfx::symbol_kind::unbacked) continue;
        const int y = static_cast<int>(s);
        if (m.offset.uses(y)) return true;
        for (int d = 0; d < m.rank; ++d)
          if (m.size[d].uses(y) || m.stride[d].uses(y)) return true;
      }
      for (const std::int32_t a : g.args_of(i)) todo.push_back(a);
    }
    return false;
  }

  // x.item() of a count the graph computes ((row > 0).sum(), in [0, n]): an unbacked symbol, bound
  // ahead of the run (exec/computed_values.hpp); then a slice [0, u) or [u, n) along a dimension of
  // extent n (empty ones too), or a select at u % n.
  void item_step(ctfx::builder& b) {
    if (depth_ > 0) return;  // (subgraphs take static extents)
    tensor t = any();  // contiguous, of static extents: what is computed from the slice has a known stride order
    if (t.rank() < 1 || !t.meta().is_contiguous() || static_values_only(t).empty() || reads_value(t)) return;
    const index_t r = t.rank() - 1, n = dim_size(t, static_cast<int>(r));
    index_t want = 1;  // row-major strides in every dimension, also those of extent 1
    for (int d = t.rank() - 1; d >= 0; --d) {
      if (!t.meta().stride[d].is_static() || t.meta().stride[d].value() != want) return;
      want *= dim_size(t, d);
    }
    if (n < 2) return;
    tensor row = t;
    while (row.rank() > 1) {
      if (!static_dim(row, 0) || dim_size(row, 0) < 1) return;
      row = row.select(0, pick(static_cast<unsigned>(dim_size(row, 0))));
    }
    tensor cnt = ctfx::gt(row, static_cast<double>(static_cast<int>(pick(3)) - 1)).sum();  // i64, in [0, n]
    const std::string name = "u" + std::to_string(b.g.syms.size());
    switch (pick(3)) {
      // (what the pool gets is of static extents again: a sum over the sliced dimension)
      case 0: push((t.slice(r, 0, ctfx::item(b, cnt, name)) * 2.0).sum({r}, true)); note("item_slice"); break;
      case 1: push(ctfx::exp(t.slice(r, ctfx::item(b, cnt, name), n)).sum({r}, true) + 0.5); note("item_slice"); break;
      default:
        if (n < 1 || t.rank() < 2) break;
        push(t.select(r, ctfx::item(b, ctfx::remainder(cnt, static_cast<double>(n)), name)) + 0.5);
        note("item_select");
        break;
    }
  }

  void push(tensor t) {
    if (t.id >= 0 && t.dt() == ctfx::f32 && t.rank() >= 1) pool_.push_back(t);
  }

  void build(ctfx::builder& b) {
    const int n_in = 1 + static_cast<int>(pick(3));
    for (int k = 0; k < n_in; ++k) {
      const std::string name = "x" + std::to_string(k);
      tensor x;
      switch (symbolic_ && k == 0 ? 3 : pick(4)) {
        case 0: x = b.input(name, ctfx::f32, {6}); break;
        case 1: x = b.input(name, ctfx::f32, {3, 4, 6}); break;
        default:
          if (sym_ && k == 0) x = b.input(name, ctfx::f32, {b.sym("s0"), 6});
          else x = b.input(name, ctfx::f32, {4, 6});
      }
      inputs_.push_back(x);
      pool_.push_back(x);
    }
    // index vectors for dims of size 4 and 3
    for (index_t bound : {index_t{4}, index_t{3}}) {
      if (!coin()) continue;
      const index_t len = 1 + pick(6);
      index_.push_back(b.input("idx" + std::to_string(index_.size()), ctfx::i64, {len}));
      index_bound_.push_back(bound);
    }
    if (coin()) {  // another dtype goes through a conversion
      tensor d = b.input("d0", coin() ? ctfx::f64 : ctfx::i32, {4, 6});
      pool_.push_back(d.to(ctfx::f32));
    }
    const int n_ops = 3 + static_cast<int>(pick(14));
    for (int k = 0; k < n_ops; ++k) step(b);
    // Epilogue: some inputs take a value of their shape (often one derived from them).
    for (auto x : inputs_) {
      if (!coin()) continue;
      std::vector<tensor> same;
      for (auto p : pool_)
        if (p.id != x.id && p.meta().same_shape(x.meta())) same.push_back(p);
      if (same.empty()) continue;
      b.update(x, same[pick(static_cast<unsigned>(same.size()))]);
      note("epilogue");
    }
    std::vector<tensor> outs;
    const int n_out = 1 + static_cast<int>(pick(3));
    for (int k = 0; k < n_out; ++k) outs.push_back(any());
    if (outs.size() == 1) b.output(outs[0]);
    else if (outs.size() == 2) b.output(outs[0], outs[1]);
    else b.output(outs[0], outs[1], outs[2]);
  }
};

}  // namespace ctfx_fuzz
