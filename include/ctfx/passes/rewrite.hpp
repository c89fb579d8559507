// ctfx/passes/rewrite.hpp — building a new ir from an old one, for passes that rewrite graphs.
//
// Two tools, both linear in nodes + edges:
//
//  - `rebuilder` streams: it appends nodes to a new ir in program order. `copy(old)` copies an old
//    node with its arguments mapped to the new ids; `emit(...)` appends a node the pass creates
//    (its metadata from infer_meta, a fresh unique name, the provenance of the node it stands for);
//    `drop_last()` takes back the node appended last (remove_noop_ops appends a node, asks its rule
//    on the new graph, and drops it when it is a no-op).
//
//  - `rewrite` collects edits on the old graph — insert_before, replace_all_uses, erase — and
//    applies them in one sweep. Ids below old.size() name old nodes, the ids that insert_before
//    returns name new ones; both can be arguments, anchors and replacement targets.
//
// Metadata: a copied node keeps its stored metadata unless one of its arguments now has different
// metadata (another storage, another layout); then it is recomputed with its op's rule, keeping its
// own storage id when it is a fresh result. `origin` (provenance) is kept on copies and inherited
// by the nodes a pass creates.
#pragma once
#include "../core/diagnostics_push.hpp"
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>
#include "../detail/cvec.hpp"
#include "../detail/fnv.hpp"
#include "../ops/meta.hpp"

namespace ctfx {

namespace detail {

// An open-addressing set of names (expected O(1) per operation; grows by doubling). Each name's
// hash is kept: names are compared only where hashes meet, and a rehash hashes nothing again.
class name_set {
 public:
  // Adds n unless it is there; true when it was added (one hash, one probe sequence).
  constexpr bool insert(const name_t& n) { return insert(n, hash_name(n)); }
  // The same, with h == hash_name(n) computed by the caller. The probe that looks for n ends at the
  // free slot n takes (raw pointers: this runs once per emitted node, where each call would cost).
  constexpr bool insert(const name_t& n, std::uint64_t h) {
    if (2 * (names_.size() + 1) > slots_.size()) rehash(4 * names_.size() + 16);
    const std::size_t mask = slots_.size() - 1;
    std::int32_t* sl = slots_.data();
    const std::uint64_t* hs = hashes_.data();
    std::size_t i = static_cast<std::size_t>(h) & mask;
    for (;; i = (i + 1) & mask) {
      const std::int32_t s = sl[i];
      if (s == 0) break;
      if (hs[s - 1] == h && names_.data()[s - 1] == n) return false;
    }
    names_.push_back(n);
    hashes_.push_back(h);
    sl[i] = static_cast<std::int32_t>(names_.size());
    return true;
  }

 private:
  detail::cvec<name_t> names_;
  detail::cvec<std::uint64_t> hashes_;
  detail::cvec<std::int32_t> slots_;  // 1 + index into names_, 0 = empty

  constexpr void place(std::int32_t k) {
    const std::size_t mask = slots_.size() - 1;
    std::int32_t* sl = slots_.data();
    std::size_t i = static_cast<std::size_t>(hashes_.data()[k - 1]) & mask;
    while (sl[i] != 0) i = (i + 1) & mask;
    sl[i] = k;
  }
  constexpr void rehash(std::size_t want) {
    std::size_t cap = 16;
    while (cap < want) cap *= 2;
    slots_.assign(cap, 0);
    for (std::size_t k = 0; k < names_.size(); ++k) place(static_cast<std::int32_t>(k + 1));
  }
};

constexpr bool same_meta_and_storage(const tensor_meta& a, const tensor_meta& b) {
  if (a.storage != b.storage || a.dt != b.dt || a.rank != b.rank || !(a.offset == b.offset)) return false;
  for (int i = 0; i < a.rank; ++i)
    if (!(a.size[i] == b.size[i]) || !(a.stride[i] == b.stride[i])) return false;
  return true;
}

}  // namespace detail

// A node prototype for a node a pass creates in place of (or for) node `like` of the old graph:
// op `k`, the provenance and partition of `like`.
constexpr node node_like(const ir& old, std::int32_t like, op_kind k, std::int32_t aux = 0, scalar_value scalar = {}) {
  node n{};
  n.op = k;
  n.aux = aux;
  n.scalar = scalar;
  if (like >= 0 && like < old.size()) {
    n.origin = old[like].origin;
    n.partition = old[like].partition;
  }
  return n;
}

// Appends nodes to a new ir in program order.
class rebuilder {
 public:
  ir out;

  constexpr explicit rebuilder(const ir& old) : old_(&old) {
    out.nodes.reserve(old.nodes.size() + 16);
    out.args.reserve(old.args.size() + 16);
    out.params.reserve(old.params.size());
    out.syms = old.syms;
    out.customs = old.customs;
    out.subgraphs = old.subgraphs;
    out.next_storage = old.next_storage;
    out.phase = old.phase;
    out.error = old.error;
    from_.reserve(old.nodes.size() + 16);
    moved_.reserve(old.nodes.size() + 16);
    for (std::size_t k = 0; k < static_cast<std::size_t>(op_kind::count_); ++k) {
      counter_[k] = 0;
      op_slot_[k] = 0;
    }
  }

  constexpr const ir& old() const { return *old_; }

  // Appends old node `id`; `map(a)` gives the new id of each old argument a (-1 stays None).
  template <class Map>
  constexpr std::int32_t copy(std::int32_t id, Map map) {
    // Raw pointers into the pools: in constant evaluation a call (operator[], args_of) costs as
    // much as the work it wraps, and this runs for every node of every rewrite.
    const node& o = old_->nodes.data()[id];
    const std::int32_t nid = static_cast<std::int32_t>(out.nodes.size());
    const auto arg0 = static_cast<std::int32_t>(out.args.size());
    bool changed = false;
    for (const std::int32_t *a = old_->args.data() + o.arg0, *e = a + o.nargs; a != e; ++a) {
      std::int32_t x = *a < 0 ? -1 : map(*a);
      if (*a >= 0 && x < 0) {
        bad_use(id, *a);
        x = -1;
      }
      out.args.push_back(x);
      // Unchanged: x is the copy of *a and kept its metadata; otherwise compare.
      if (x >= 0 && !(from_.data()[x] == *a && !moved_.data()[x]) &&
          !detail::same_meta_and_storage(out.nodes.data()[x].meta, old_->nodes.data()[*a].meta))
        changed = true;
    }
    const auto par0 = static_cast<std::int32_t>(out.params.size());
    out.params.append(old_->params.data() + o.par0, old_->params.data() + o.par0 + o.npar);
    out.nodes.push_back(o);
    node& n = out.nodes.back();
    n.arg0 = arg0;
    n.par0 = par0;
    bool moved = false;
    if (changed && o.op != op_kind::placeholder) {
      tensor_meta m{};
      if (compute_meta(out, nid, m)) {
        if (m.storage == detail::fresh) m.storage = o.meta.storage;
        moved = !detail::same_meta_and_storage(m, o.meta);
        out.nodes.data()[nid].meta = m;
      }
    }
    from_.push_back(id);
    moved_.push_back(moved ? 1 : 0);
    return nid;
  }

  // Appends a node the pass creates; `args` are new ids. The name is `base` (default: the op's
  // name), made unique with a suffix as FX does (clone, clone_1, ...).
  //
  // `known`: the metadata the pass computed for it on the old graph (storage included; a fresh
  // result may say detail::fresh, and gets a new storage here). It is
  // taken as it is when every argument kept the metadata the pass saw (a copy that did not move, or
  // a node emitted with known metadata), and inferred otherwise. Either way the verifier after the
  // pass re-derives it.
  constexpr std::int32_t emit(const node& proto, std::span<const std::int32_t> args, std::span<const sym_expr> params,
                              std::string_view base = {}, const tensor_meta* known = nullptr) {
    if (known) {
      const std::uint8_t* mv = moved_.data();
      for (const std::int32_t *a = args.data(), *e = a + args.size(); a != e; ++a) known = *a >= 0 && mv[*a] ? nullptr : known;
    }
    // The node is copied once, into the graph, and patched there.
    const std::int32_t id = out.append(proto, args, params);
    node& n = out.nodes.data()[id];
    n.name = fresh_name(proto.op, base);
    n.origin = proto.origin;  // -1: no old node behind it (append would name the node itself)
    if (!known) {
      n.meta = tensor_meta{};
      infer_meta(out, id);
    } else {
      if (known != &proto.meta) n.meta = *known;
      if (known->storage == detail::fresh) n.meta.storage = out.fresh_storage();
    }
    from_.push_back(-1);
    moved_.push_back(known ? 0 : 1);
    return id;
  }
  constexpr std::int32_t emit(const node& proto, std::initializer_list<std::int32_t> args,
                              std::span<const sym_expr> params = {}, std::string_view base = {}) {
    return emit(proto, std::span<const std::int32_t>(args.begin(), args.size()), params, base);
  }

  // Takes back the node appended last (its name stays reserved).
  constexpr void drop_last() {
    const node& n = out.nodes.back();
    out.args.resize(static_cast<std::size_t>(n.arg0));
    out.params.resize(static_cast<std::size_t>(n.par0));
    out.nodes.pop_back();
    from_.pop_back();
    moved_.pop_back();
  }

  constexpr ir finish() && { return static_cast<ir&&>(out); }

 private:
  const ir* old_;
  detail::cvec<std::int32_t> from_;    // per new node: the old node it copies, or -1
  detail::cvec<std::uint8_t> moved_;   // per new node: its metadata differs from that old node's
  // Names. A name made from base B is B or B_<c> (with_suffix). Each base used in this rebuild keeps
  // a bitmap of the suffixes taken — by an old node's name (found by a prefix scan when the base is
  // first used) or by a name made here — so a fresh name is a bitmap probe and a with_suffix: no
  // hashing, no set of names (with the raw-pointer prefix scan, 1.5% of g++'s instructions for the
  // halo pipeline at 250 nodes, counted by callgrind). Bitmaps are exact when no two
  // bases can make the same name, which needs one base to be the other plus "_<digits>", and when
  // no base is cut to fit its suffix (with_suffix); a rebuild that meets either (or an old suffix too large for a
  // bitmap) switches to the set of all taken names (`names_`) for the rest of it.
  struct base_entry {
    name_t text{};
    std::size_t len = 0;
    detail::cvec<std::uint8_t> taken;  // taken[c]: the name with suffix c exists (c = 0: B itself)
  };
  detail::cvec<base_entry> bases_;
  std::int16_t op_slot_[static_cast<std::size_t>(op_kind::count_)]{};  // 1 + index into bases_
  std::int32_t counter_[static_cast<std::size_t>(op_kind::count_)]{};
  bool by_set_ = false;
  detail::name_set names_;  // only when by_set_

  static constexpr std::size_t max_bitmap_suffix = std::size_t{1} << 20;

  constexpr name_t fresh_name(op_kind k, std::string_view base) {
    const auto ki = static_cast<std::size_t>(k);
    std::size_t bi = 0;
    if (base.empty() && op_slot_[ki] > 0) {
      bi = static_cast<std::size_t>(op_slot_[ki] - 1);
    } else {
      const bool own = base.empty();
      if (own) {
        base = name_of(k);
        if (!base.empty() && base[0] == '_') base.remove_prefix(1);
      }
      bi = base_index(base);
      if (own) op_slot_[ki] = static_cast<std::int16_t>(bi + 1);
    }
    base_entry& b = bases_.data()[bi];
    auto& c = counter_[ki];
    if (by_set_) {
      for (;; ++c) {
        const name_t t = with_suffix(b.text, b.len, c);
        if (names_.insert(t)) {
          ++c;
          return t;
        }
      }
    }
    const std::uint8_t* tk = b.taken.data();
    const auto n_taken = static_cast<std::int32_t>(b.taken.size());
    while (c < n_taken && tk[c]) ++c;
    if (c >= n_taken) b.taken.resize(2 * static_cast<std::size_t>(c) + 16);
    b.taken.data()[c] = 1;
    return with_suffix(b.text, b.len, c++);
  }

  // The index of `base` in bases_, adding it (and the suffixes its old names take) on first use.
  constexpr std::size_t base_index(std::string_view base) {
    const name_t key(base);
    for (std::size_t k = 0; k < bases_.size(); ++k)
      if (bases_.data()[k].text == key) return k;
    base_entry e{key, key.view().size(), {}};
    // A base of more than 20 characters can be cut to fit a suffix (10 digits and '_' at most), and
    // its names then meet other names; B and B_<k> make overlapping names.
    bool exact = e.len > 0 && e.len <= 20;
    for (std::size_t k = 0; exact && k < bases_.size(); ++k)
      exact = suffix_of(bases_.data()[k].text.view(), e.text.view()) < 1 && suffix_of(e.text.view(), bases_.data()[k].text.view()) < 1;
    const std::string_view p = key.view();
    for (const node *nd = old_->nodes.data(), *end = nd + old_->nodes.size(); nd != end; ++nd) {
      if (!has_prefix(nd->name, key.s, e.len)) continue;
      const std::int64_t c = suffix_of(nd->name.view(), p);
      if (c < 0) continue;
      if (static_cast<std::size_t>(c) >= max_bitmap_suffix) {
        exact = false;
        continue;
      }
      if (static_cast<std::size_t>(c) >= e.taken.size()) e.taken.resize(2 * static_cast<std::size_t>(c) + 16);
      e.taken.data()[c] = 1;
    }
    bases_.push_back(static_cast<base_entry&&>(e));
    if (by_set_) reserve_old_names(bases_.size() - 1);
    else if (!exact) to_set();
    return bases_.size() - 1;
  }

  // The name's first len characters are p's (characters through raw pointers: string_view's
  // operator[] is a call, and this test runs for every old node and every base of a rebuild).
  static constexpr bool has_prefix(const name_t& name, const char* p, std::size_t len) {
    const char* s = name.s;
    for (std::size_t i = 0; i < len; ++i)
      if (s[i] != p[i]) return false;
    return true;
  }
  // c when `name` is `base` (c = 0) or `base`_<c> as with_suffix makes it (digits, no leading zero,
  // c >= 1); -1 otherwise.
  static constexpr std::int64_t suffix_of(std::string_view name, std::string_view base) {
    if (name.size() < base.size() || name.substr(0, base.size()) != base) return -1;
    if (name.size() == base.size()) return 0;
    if (name.size() < base.size() + 2 || name[base.size()] != '_' || name[base.size() + 1] == '0') return -1;
    std::int64_t c = 0;
    for (std::size_t i = base.size() + 1; i < name.size(); ++i) {
      if (name[i] < '0' || name[i] > '9' || c > (std::int64_t{1} << 40)) return -1;
      c = 10 * c + (name[i] - '0');
    }
    return c;
  }

  // From bitmaps to the set of names: every old name that a base of this rebuild prefixes, and every
  // name made so far (the new nodes, and the names dropped with drop_last that stay reserved: their
  // bitmaps say which).
  constexpr void to_set() {
    by_set_ = true;
    for (std::size_t k = 0; k < bases_.size(); ++k) {
      reserve_old_names(k);
      const base_entry& b = bases_.data()[k];
      for (std::size_t c = 0; c < b.taken.size(); ++c)
        if (b.taken.data()[c]) names_.insert(with_suffix(b.text, b.len, static_cast<int>(c)));
    }
  }
  // Every name made from a base starts with it, so only old names with that prefix can collide
  // (a prefix test fails on the first character or two for most names).
  constexpr void reserve_old_names(std::size_t k) {
    const base_entry& b = bases_.data()[k];
    for (const node *nd = old_->nodes.data(), *end = nd + old_->nodes.size(); nd != end; ++nd)
      if (has_prefix(nd->name, b.text.s, b.len)) names_.insert(nd->name);
  }
  constexpr void bad_use(std::int32_t user, std::int32_t arg) {
    if (!out.error.ok()) return;
    detail::msg m;
    m << "node '" << (*old_)[user].name.view() << "' (" << name_of((*old_)[user].op) << "): its argument '"
      << detail::arg_name(*old_, arg) << "' was erased by a rewrite, or its replacement is defined later";
    detail::fail(out, out.size() > 0 ? out.size() - 1 : 0, rule::use_before_definition, m);
  }
};

// Edits on an old graph, applied in one sweep by apply().
class rewrite {
 public:
  constexpr explicit rewrite(const ir& g) : old_(&g) {
    const auto n = static_cast<std::size_t>(g.size());
    // Sized once and filled through pointers (an appended element, or a call per element, costs
    // 2-4x more in constant evaluation); the headroom is for insert_before.
    for (auto* v : {&next_, &prev_, &replaced_}) {
      v->reserve(n + 16);
      v->resize(n);
    }
    erased_.reserve(n + 16);
    erased_.resize(n);
    std::int32_t *nx = next_.data(), *pv = prev_.data(), *rp = replaced_.data();
    const auto last = static_cast<std::int32_t>(n) - 1;
    for (std::int32_t k = 0; k <= last; ++k) {
      nx[k] = k < last ? k + 1 : -1;
      pv[k] = k - 1;
      rp[k] = k;
    }
    head_ = n ? 0 : -1;
  }

  // Room for `nodes` insertions with `args` arguments and `params` parameters in all: a pass that
  // knows roughly what it adds saves the reallocations (each copies every element so far, a call
  // per element in constant evaluation).
  constexpr void reserve_inserts(std::size_t nodes, std::size_t args, std::size_t params) {
    const std::size_t n = old_->nodes.size() + nodes;
    for (auto* v : {&next_, &prev_, &replaced_}) v->reserve(n);
    erased_.reserve(n);
    added_.reserve(nodes);
    known_.reserve(nodes);
    added_args_.reserve(args);
    added_params_.reserve(params);
  }

  constexpr const ir& old() const { return *old_; }
  constexpr std::int32_t size() const { return static_cast<std::int32_t>(next_.size()); }
  constexpr bool is_new(std::int32_t id) const { return id >= old_->size(); }

  // Read access to any node, old or new.
  constexpr const node& at(std::int32_t id) const {
    return is_new(id) ? added_[static_cast<std::size_t>(id - old_->size())] : (*old_)[id];
  }
  constexpr op_kind op(std::int32_t id) const { return at(id).op; }
  constexpr std::span<const std::int32_t> args_of(std::int32_t id) const {
    if (!is_new(id)) return old_->args_of(id);
    const node& n = at(id);
    return {added_args_.data() + n.arg0, static_cast<std::size_t>(n.nargs)};
  }
  constexpr std::int32_t arg(std::int32_t id, std::int32_t k) const { return args_of(id)[static_cast<std::size_t>(k)]; }
  constexpr std::span<const sym_expr> params_of(std::int32_t id) const {
    if (!is_new(id)) return old_->params_of((*old_)[id]);
    const node& n = at(id);
    return {added_params_.data() + n.par0, static_cast<std::size_t>(n.npar)};
  }

  // A new node placed just before node `at` (old or new); returns its id. `proto.name`, when set,
  // is the base of its name.
  // `known_meta`: proto.meta is the node's metadata on the old graph (see rebuilder::emit).
  constexpr std::int32_t insert_before(std::int32_t at, node proto, std::span<const std::int32_t> args,
                                       std::span<const sym_expr> params, bool known_meta = false) {
    known_.push_back(known_meta ? 1 : 0);
    proto.arg0 = static_cast<std::int32_t>(added_args_.size());
    proto.nargs = static_cast<std::int32_t>(args.size());
    added_args_.append(args.data(), args.data() + args.size());
    proto.par0 = static_cast<std::int32_t>(added_params_.size());
    proto.npar = static_cast<std::int32_t>(params.size());
    added_params_.append(params.data(), params.data() + params.size());
    added_.push_back(proto);
    std::int32_t id = size();
    std::int32_t p = prev_[static_cast<std::size_t>(at)];
    next_.push_back(at);
    prev_.push_back(p);
    replaced_.push_back(id);
    erased_.push_back(0);
    prev_[static_cast<std::size_t>(at)] = id;
    if (p >= 0) next_[static_cast<std::size_t>(p)] = id;
    else head_ = id;
    return id;
  }
  constexpr std::int32_t insert_before(std::int32_t at, node proto, std::initializer_list<std::int32_t> args,
                                       std::span<const sym_expr> params = {}, bool known_meta = false) {
    return insert_before(at, proto, std::span<const std::int32_t>(args.begin(), args.size()), params, known_meta);
  }

  // Every use of `from` reads `to` instead (uses in nodes already created or created later).
  constexpr void replace_all_uses(std::int32_t from, std::int32_t to) { replaced_[static_cast<std::size_t>(from)] = to; }
  constexpr void erase(std::int32_t id) { erased_[static_cast<std::size_t>(id)] = 1; }
  constexpr void replace(std::int32_t from, std::int32_t to) {
    replace_all_uses(from, to);
    erase(from);
  }
  constexpr bool erased(std::int32_t id) const { return erased_[static_cast<std::size_t>(id)] != 0; }

  // What a use of `id` reads after the replacements so far.
  constexpr std::int32_t resolve(std::int32_t id) const {
    if (id < 0) return id;
    for (int guard = 0; replaced_[static_cast<std::size_t>(id)] != id && guard < 1 << 20; ++guard)
      id = replaced_[static_cast<std::size_t>(id)];
    return id;
  }

  // The new graph: nodes in list order, erased ones left out, uses replaced.
  constexpr ir apply() && {
    rebuilder rb(*old_);
    detail::cvec<std::int32_t> pos(next_.size(), -1);
    std::int32_t* ps = pos.data();
    std::int32_t* rp = replaced_.data();
    const std::uint8_t* er = erased_.data();
    const std::int32_t* nx = next_.data();
    const std::int32_t n_old = old_->size();
    // Replacement chains are compressed as they are followed, keeping the sweep linear.
    auto map = [&](std::int32_t a) {
      std::int32_t r = a;
      while (rp[r] != r) r = rp[r];
      while (rp[a] != r) {
        const std::int32_t next = rp[a];
        rp[a] = r;
        a = next;
      }
      return er[r] ? -1 : ps[r];
    };
    detail::cvec<std::int32_t> mapped;  // a new node's arguments, mapped (one buffer for all)
    for (std::int32_t id = head_; id >= 0; id = nx[id]) {
      if (er[id]) continue;
      if (id < n_old) {
        ps[id] = rb.copy(id, map);
        continue;
      }
      const node& n = added_.data()[id - n_old];
      mapped.clear();
      for (const std::int32_t *a = added_args_.data() + n.arg0, *e = a + n.nargs; a != e; ++a) {
        const std::int32_t x = *a;
        std::int32_t m = x < 0 ? -1 : map(x);
        if (x >= 0 && m < 0 && rb.out.error.ok()) {
          detail::msg t;
          t << "a node created by a rewrite (" << name_of(n.op) << ") reads '" << detail::arg_name(*old_, x < n_old ? x : -1)
            << "', which is erased or defined after it";
          detail::fail(rb.out, rb.out.size() > 0 ? rb.out.size() - 1 : 0, rule::use_before_definition, t);
        }
        mapped.push_back(m);
      }
      ps[id] = rb.emit(n, mapped, params_of(id), n.name.view(), known_.data()[id - n_old] ? &n.meta : nullptr);
    }
    return static_cast<rebuilder&&>(rb).finish();
  }

 private:
  const ir* old_;
  detail::cvec<node> added_;
  detail::cvec<std::int32_t> added_args_;
  detail::cvec<sym_expr> added_params_;
  detail::cvec<std::uint8_t> known_;  // per added node: its proto's metadata is known
  detail::cvec<std::int32_t> next_, prev_, replaced_;
  detail::cvec<std::uint8_t> erased_;
  std::int32_t head_ = -1;
};

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
