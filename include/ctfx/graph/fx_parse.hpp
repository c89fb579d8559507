// ctfx/graph/fx_parse.hpp — graphs from PyTorch: reads the readable GraphModule code that
// `print_readable()`, TORCH_LOGS="post_grad_graphs" or "aot_graphs" print, at compile time or at
// run time, with one constexpr parser.
//
//   constexpr auto g = ctfx::fx_graph<R"(
//   class GraphModule(torch.nn.Module):
//       def forward(self, arg0_1: "f32[16, 8][8, 1]cpu", arg1_1: "f32[4, 8][8, 1]cpu"):
//           slice_scatter: "f32[16, 8][8, 1]cpu" = torch.ops.aten.slice_scatter.default(arg0_1, arg1_1, 0, 0, 4);  arg1_1 = None
//           copy_: "f32[16, 8][8, 1]cpu" = torch.ops.aten.copy_.default(arg0_1, slice_scatter);  arg0_1 = slice_scatter = copy_ = None
//           return ()
//   )">();                                    // used exactly like ctfx::graph(...): g.get() gives the ir
//
//   ctfx::fx_parse_result r = ctfx::parse_fx(text);        // at run time (or parse_fx_file(path))
//   if (!r.ok()) std::puts(r.error.message().data());     // "fx line 3, column 9: ..."
//
// Every node is made through ctfx::builder, so ctfx's rules compute its metadata; the dtype, sizes
// and strides PyTorch printed are then checked against them (a mismatch is an error naming the
// line and the node; strides of size-1 dimensions are not compared, as in Inductor's same_meta).
// Symbolic sizes s0, s77 become backed symbols, u0 unbacked ones; `Sym(...)` placeholders declare
// symbols and make no node (ctfx binds symbols from the input shapes), so tensor inputs keep their
// order but not their position. User ops called through higher_order.auto_functionalized are
// resolved by name in a list the caller gives (ctfx::fx_custom, or the op types for fx_graph).
// Module attributes (`_tensor_constant0 = self._tensor_constant0`), whose values the text does not
// hold, become inputs after the forward's parameters, listed in fx_parse_result::constants so that
// the caller binds each by name (ctfx_opt reads <graph>.<attribute>.npy).
// Cost: linear in the text; names are found through a hash table, ops by bisection.
#pragma once
#include "../core/diagnostics_push.hpp"
#include <array>
#include <limits>
#include <fstream>
#include <sstream>
#include <string>
#include <span>
#include <string_view>
#include <vector>
#include "../detail/fnv.hpp"
#include "data_dependent.hpp"
#include "fx_lexer.hpp"
#include "fx_modules.hpp"
#include "fx_opmap.hpp"
#include "graph.hpp"

namespace ctfx {

/// A user op the text may call: its schema (ops/custom.hpp) and its signature, whose argument names
/// are the keywords of auto_functionalized.
struct fx_custom {
  custom_schema schema{};  ///< its schema (from the signature)
  std::string_view signature{};  ///< the PyTorch signature
};
template <class Op>
constexpr fx_custom fx_custom_of() {
  return {detail::schema_of<Op>(), Op::signature};
}

/// A module attribute the graph reads (`_tensor_constant0 = self._tensor_constant0`): its values are
/// not in the text, so it becomes a graph input, after the forward's parameters, that the caller
/// binds by name (ctfx_opt loads `<graph>.<attribute>.npy`).
struct fx_constant {
  name_t attribute{};        ///< the attribute, without `self.` (e.g. `_tensor_constant0`)
  std::int32_t node = -1;    ///< its placeholder node
  std::int32_t input = -1;   ///< its input position (the placeholder's aux)
};

/// What parse_fx returns: the graph, or the first error with its line and column.
struct fx_parse_result {
  ir graph;  ///< the graph (meaningful when ok())
  std::vector<fx_constant> constants{};  ///< the tensor constants, in input order (inputs after the parameters)
  diagnostic error{};  ///< the first error
  std::int32_t line = 0;    ///< the error's line, 1-based; 0 when none or not known
  std::int32_t column = 0;  ///< the error's column, 1-based; 0 when none or not known
  /// Whether the text parsed into a valid graph.
  constexpr bool ok() const { return error.ok(); }
};

namespace fx {

// The name of the k-th Tensor argument in "op(Tensor x, Tensor(a!) out, int k) -> ()".
constexpr std::string_view tensor_arg_name(std::string_view sig, int k) {
  std::size_t open = sig.find('('), close = sig.find(") ->");
  if (open == std::string_view::npos || close == std::string_view::npos) return {};
  std::string_view params = sig.substr(open + 1, close - open - 1);
  std::size_t i = 0;
  int depth = 0, seen = 0;
  std::size_t b = 0;
  for (; i <= params.size(); ++i) {
    char ch = i < params.size() ? params[i] : ',';
    if (ch == '(' || ch == '[') ++depth;
    else if (ch == ')' || ch == ']') --depth;
    else if (ch == ',' && depth == 0) {
      std::string_view a = params.substr(b, i - b);
      b = i + 1;
      while (!a.empty() && a.front() == ' ') a.remove_prefix(1);
      if (a.substr(0, 6) != "Tensor") continue;
      if (seen++ != k) continue;
      std::size_t eq = a.find('=');
      if (eq != std::string_view::npos) a = a.substr(0, eq);
      while (!a.empty() && a.back() == ' ') a.remove_suffix(1);
      std::size_t sp = a.rfind(' ');
      return sp == std::string_view::npos ? std::string_view{} : a.substr(sp + 1);
    }
  }
  return {};
}

// Does a user op named `reg` ("mylib::sin_" or "sin_") match "mylib.sin_" from torch.ops.mylib.sin_?
constexpr bool custom_name_matches(std::string_view reg, std::string_view qualified) {
  std::size_t dot = qualified.find('.');
  std::string_view ns = qualified.substr(0, dot), op = dot == std::string_view::npos ? qualified : qualified.substr(dot + 1);
  if (reg == op) return true;
  std::size_t cc = reg.find("::");
  return cc != std::string_view::npos && reg.substr(0, cc) == ns && reg.substr(cc + 2) == op;
}

constexpr bool dtype_from_short(std::string_view s, dtype& d) {
  constexpr dtype all[] = {dtype::b8, dtype::i8, dtype::i32, dtype::i64, dtype::f16, dtype::bf16, dtype::f32, dtype::f64};
  for (dtype x : all) if (name_of(x) == s) { d = x; return true; }
  return false;
}
constexpr bool dtype_from_torch(std::string_view s, dtype& d) {
  struct row { std::string_view n; dtype d; };
  constexpr row rows[] = {{"torch.float32", dtype::f32}, {"torch.float", dtype::f32}, {"torch.float64", dtype::f64},
                          {"torch.double", dtype::f64}, {"torch.float16", dtype::f16}, {"torch.half", dtype::f16},
                          {"torch.bfloat16", dtype::bf16}, {"torch.int64", dtype::i64}, {"torch.long", dtype::i64},
                          {"torch.int32", dtype::i32}, {"torch.int", dtype::i32}, {"torch.int8", dtype::i8},
                          {"torch.bool", dtype::b8}};
  for (const auto& r : rows) if (r.n == s) { d = r.d; return true; }
  return false;
}

// How many leading elements of a tuple node PyTorch has and ctfx does not: the None result of an
// auto_functionalized user op that returns nothing.
constexpr std::int32_t getitem_offset(const ir& g, std::int32_t tup) {
  const node& n = g[tup];
  if (n.op != op_kind::auto_functionalized && n.op != op_kind::custom) return 0;
  return g.customs[static_cast<std::size_t>(n.aux)].n_returns == 0 ? 1 : 0;
}

/// A name of the graph: a node, a symbolic integer (Sym placeholder, sym_size node, arithmetic on
/// sizes), or a raw symbol (s77).
struct entry {
  std::string_view name{};
  std::int32_t node = -1;
  bool is_sym = false;
  sym_expr sym{};
  std::int32_t split = -1;  // a split's tuple of slices (parser::splits_), read with [k]
  std::int32_t items = -1;  // a decomposed list op's results (parser::lists_), read with [k]
  std::int32_t module = -1;  // a graph module (`true_graph_0 = self.true_graph_0`): parser::modules_
  std::int32_t rel = -1;    // a comparison of sizes (parser::relations_), what _assert_scalar takes
};

/// A list op lowered element by element (_foreach_sub, ...): no node of its own; `name[k]` is node
/// parser::list_nodes_[first + k].
struct list_items {
  std::int32_t first = 0, count = 0;
};

/// `split = aten.split.Tensor(x, 2)`: no node of its own; `split[k]` is slice k of x along dim,
/// between bounds k and k + 1 (parser::split_bounds_[first + k], count + 1 of them).
struct split_views {
  std::int32_t base = -1;
  std::int32_t dim = 0;
  std::int32_t first = 0, count = 0;
  bool selects = false;  ///< unbind: element k is select(dim, k) (no bounds stored)
};

/// What a type annotation says: "f32[4, 8][8, 1]cpu" or "Sym(s0)".
struct annotation {
  bool present = false, is_sym = false, has_strides = false;
  position at{};
  dtype dt = dtype::f32;
  int rank = 0;
  sym_expr size[max_rank]{}, stride[max_rank]{};
  sym_expr sym{};
  bool is_relation = false;  // "Sym(u1 >= 0)", "Sym(Eq(u1, 4))": a boolean of sizes
};

class parser {
 public:
  constexpr parser(std::string_view text, std::span<const fx_custom> customs) : customs_(customs), text_(text) {
    c_.reset(text);
    std::size_t lines = text.size() / 48 + 16;  // a guess for reserve(); the name table grows
    b_.g.nodes.reserve(lines + 1);
    entries_.reserve(lines + 8);
    std::size_t cap = 64;
    while (cap < 2 * lines + 16) cap *= 2;
    rehash(cap);
  }
  constexpr ~parser() = default;  // spelled out: nvcc 13 does not treat the implicit one as constexpr

  /// Parses the whole text; the graph is not yet verified.
  constexpr fx_parse_result run() && {
    bool returned = false;
    while (!c_.done() && !stopped()) {
      while (c_.peek() == ' ' || c_.peek() == '\t' || c_.peek() == '\r') ++c_.i;
      char ch = c_.peek();
      if (ch == '\n') { ++c_.i; c_.newline(); continue; }
      if (ch == '\0') break;
      if (ch == '#' || c_.starts_with("class ") || c_.starts_with("@")) { c_.skip_line(); continue; }
      if (returned) { c_.skip_line(); continue; }  // methods after forward (print_readable of submodules)
      if (c_.starts_with("def ")) { parse_def(); end_statement(); continue; }
      if (c_.starts_with("return") && !is_ident_char(c_.peek(6))) {
        c_.i += 6;
        parse_return();
        end_statement();
        returned = true;
        continue;
      }
      parse_assign();
      end_statement();
    }
    if (!stopped() && !returned) fail(c_.pos(), "the text has no `return` statement (no forward() found?)");
    if (c_.failed && b_.g.error.ok()) report(c_.err_at, c_.message(), {}, {});
    fx_parse_result r{};
    if (!b_.g.error.ok()) {
      r.error = b_.g.error;
      r.line = err_line_;
      r.column = err_col_;
    }
    r.graph = static_cast<builder&&>(b_).finish();
    r.constants = static_cast<std::vector<fx_constant>&&>(constants_);
    if (r.error.ok()) {
      // The output node: finish() made it with no arguments, at the end of the argument pool.
      node& o = r.graph.nodes.back();
      for (auto a : outputs_) r.graph.args.push_back(a);
      o.nargs = static_cast<std::int32_t>(outputs_.size());
    }
    return r;
  }

 private:
  cursor c_{};
  builder b_{};
  std::span<const fx_custom> customs_;
  std::string_view text_;  // the whole text: its nested graph modules are read from it
  std::vector<module_block> modules_;  // the graph modules the forward names (entry::module)
  std::vector<entry> entries_;
  std::vector<std::int32_t> slots_;
  std::vector<value> pool_, stack_;
  std::vector<std::int32_t> abuf_, outputs_;
  std::vector<sym_expr> pbuf_;
  std::int32_t err_line_ = 0, err_col_ = 0;
  std::int32_t placeholders_ = 0;
  std::vector<fx_constant> constants_;
  std::vector<split_views> splits_;
  std::vector<sym_expr> split_bounds_;
  std::vector<list_items> lists_;
  std::vector<std::int32_t> list_nodes_;
  std::vector<sym_relation> relations_;

  constexpr bool stopped() const { return c_.failed || !b_.g.error.ok(); }

  // ----- errors -----
  // "fx line 3, column 9: <what> [rule fx-text]" (the first error wins).
  constexpr void report(position at, std::string_view a, std::string_view b, std::string_view c) {
    if (!b_.g.error.ok()) return;
    text_buf<200> m;
    m << "fx line " << static_cast<int>(at.line) << ", column " << static_cast<int>(at.col) << ": " << a << b << c
      << " [rule fx-text]";
    b_.g.fail(rule::fx_text, -1, m.view());
    err_line_ = at.line;
    err_col_ = at.col;
  }
  constexpr void fail(position at, std::string_view a, std::string_view b = {}, std::string_view c = {}) {
    c_.fail(at, a, b, c);
    report(at, a, b, c);
  }
  // A rule broken while making the node of line `at`: prefix the builder's message with the line.
  // The builder named the node by its automatic name ("node 'add' (add): ..."): use the text's name.
  constexpr void locate_builder_error(position at, std::string_view name = {}) {
    if (b_.g.error.ok() || err_line_ != 0) return;
    text_buf<200> m;
    std::string_view msg = b_.g.error.message();
    m << "fx line " << static_cast<int>(at.line) << ": ";
    std::size_t end = msg.find("' (");
    if (!name.empty() && msg.substr(0, 6) == "node '" && end != std::string_view::npos) {
      m << "node '" << name;
      msg.remove_prefix(end);
    }
    m << msg;
    b_.g.error.set_message(m.view());
    err_line_ = at.line;
    err_col_ = at.col;
  }

  // ----- the name table (open addressing, grows at half load) -----
  constexpr void rehash(std::size_t cap) {
    slots_.clear();
    slots_.reserve(cap);
    for (std::size_t k = 0; k < cap; ++k) slots_.push_back(-1);
    for (std::size_t e = 0; e < entries_.size(); ++e) place(static_cast<std::int32_t>(e));
  }
  constexpr void place(std::int32_t e) {
    std::size_t mask = slots_.size() - 1;
    std::size_t h = static_cast<std::size_t>(ctfx::detail::hash_text(entries_[static_cast<std::size_t>(e)].name)) & mask;
    while (slots_[h] >= 0) h = (h + 1) & mask;
    slots_[h] = e;
  }
  constexpr const entry* lookup(std::string_view name) const {
    std::size_t mask = slots_.size() - 1;
    std::size_t h = static_cast<std::size_t>(ctfx::detail::hash_text(name)) & mask;
    while (slots_[h] >= 0) {
      const entry& e = entries_[static_cast<std::size_t>(slots_[h])];
      if (e.name == name) return &e;
      h = (h + 1) & mask;
    }
    return nullptr;
  }
  constexpr bool define(entry e, position at) {
    if (lookup(e.name)) { fail(at, "'", e.name, "' is defined twice"); return false; }
    entries_.push_back(e);
    if (2 * entries_.size() >= slots_.size()) rehash(2 * slots_.size());
    else place(static_cast<std::int32_t>(entries_.size()) - 1);
    return true;
  }

  // A name inside size arithmetic: a symbolic entry, or a new symbol s<digits> / u<digits>.
  constexpr bool resolve(std::string_view name, sym_expr& out) {
    if (const entry* e = lookup(name)) {
      if (!e->is_sym) return false;
      out = e->sym;
      return true;
    }
    std::size_t k = 0;
    while (k < name.size() && name[k] >= 'a' && name[k] <= 'z') ++k;
    if (k == 0 || k == name.size()) return false;
    for (std::size_t j = k; j < name.size(); ++j) if (!is_digit(name[j])) return false;
    out = name[0] == 'u' ? b_.unbacked(name) : b_.sym(name);
    entry e{};
    e.name = name;
    e.is_sym = true;
    e.sym = out;
    define(e, c_.pos());
    return true;
  }
  struct resolver {
    parser* p;
    constexpr bool operator()(std::string_view n, sym_expr& out) const { return p->resolve(n, out); }
    constexpr sym_expr combine(char op, const sym_expr& a, const sym_expr& b) const {
      ir& g = p->b_.g;
      return op == '/' ? sym_floordiv(g, a, b) : op == '%' ? sym_mod(g, a, b) : op == 'M' ? sym_max(g, a, b) : sym_min(g, a, b);
    }
  };
  constexpr value_parser<resolver> values(cursor& c) { return {c, pool_, stack_, resolver{this}}; }
  constexpr value_parser<resolver> values() { return values(c_); }

  // ----- statements -----
  constexpr void end_statement() {
    if (stopped()) return;
    c_.skip_space();
    if (c_.peek() == ';') c_.skip_line();  // release markers: `;  x = y = None`
    else if (c_.peek() == '\n') { ++c_.i; c_.newline(); }
    else if (!c_.done()) fail(c_.pos(), "unexpected text after the statement");
    pool_.clear();
  }

  constexpr void parse_def() {
    c_.i += 4;
    position at = c_.pos();
    if (c_.ident() != "forward") { fail(at, "expected `def forward(self, ...)`"); return; }
    if (!c_.expect('(')) return;
    ++c_.depth;
    if (c_.ident() != "self") { fail(c_.pos(), "expected `self` as the first parameter of forward"); return; }
    while (!stopped()) {
      if (c_.eat(')')) break;
      if (!c_.expect(',')) return;
      if (c_.eat(')')) break;
      c_.skip_space();
      position nat = c_.pos();
      std::string_view name = c_.ident();
      if (name.empty()) { fail(nat, "expected a parameter name"); return; }
      annotation t{};
      if (c_.eat(':') && !parse_annotation(t)) return;
      if (c_.eat('=')) { fail(c_.pos(), "default values of forward parameters are not supported"); return; }
      add_placeholder(name, t, nat);
    }
    --c_.depth;
    c_.skip_space();
    if (c_.starts_with("->")) { c_.i += 2; (void)values().parse(); }
    c_.expect(':');
  }

  constexpr void add_placeholder(std::string_view name, const annotation& t, position at) {
    if (!t.present) { fail(at, "parameter '", name, "' has no type annotation (print with print_readable())"); return; }
    entry e{};
    e.name = name;
    if (t.is_sym) {  // Sym(s0): a symbolic size passed as an argument; no node
      e.is_sym = true;
      e.sym = t.sym;
      define(e, at);
      return;
    }
    const sym_expr* s = t.size;
    tensor x{};
    switch (t.rank) {
      case 0: x = b_.input(name, t.dt, {}, {}); break;
      case 1: x = b_.input(name, t.dt, {s[0]}, {}); break;
      case 2: x = b_.input(name, t.dt, {s[0], s[1]}, {}); break;
      case 3: x = b_.input(name, t.dt, {s[0], s[1], s[2]}, {}); break;
      case 4: x = b_.input(name, t.dt, {s[0], s[1], s[2], s[3]}, {}); break;
      case 5: x = b_.input(name, t.dt, {s[0], s[1], s[2], s[3], s[4]}, {}); break;
      default: x = b_.input(name, t.dt, {s[0], s[1], s[2], s[3], s[4], s[5]}, {}); break;
    }
    // An input's layout is what the caller passes: keep PyTorch's strides when they differ.
    if (t.has_strides)
      for (int d = 0; d < t.rank; ++d) b_.g[x.id].meta.stride[d] = t.stride[d];
    ++placeholders_;
    e.node = x.id;
    define(e, at);
  }

  // "f32[4, 8][8, 1]cpu" or "Sym(s0)", with the cursor at the opening quote.
  constexpr bool parse_annotation(annotation& t) {
    c_.skip_space();
    position at = c_.pos();
    value v = values().parse_primary();
    if (stopped()) return false;
    if (v.k != vkind::string) { fail(at, "expected a type annotation string such as \"f32[4, 8][8, 1]cpu\""); return false; }
    t.present = true;
    t.at = at;
    cursor sub{};
    sub.reset(v.text);
    sub.line = at.line;
    sub.col_offset = at.col;  // the text starts one column after the quote
    sub.depth = 1;
    auto vp = values(sub);
    auto bad = [&](std::string_view why) {
      fail(sub.failed ? sub.err_at : sub.pos(), why, sub.failed ? std::string_view(": ") : std::string_view{},
           sub.failed ? sub.message() : std::string_view{});
      return false;
    };
    if (sub.starts_with("Sym(")) {
      sub.i += 4;
      value e = vp.parse();
      sym_expr x;
      sym_relation r{};
      t.is_sym = true;
      // A comparison (`u1 >= 0`, `Eq(u1, 4)`, `True`): what a guard line holds.
      if (!sub.failed && (relation_after(vp, sub, e, r) || relation_call(vp, e, r) || (e.k == vkind::integer && e.is_bool))) {
        if (sub.failed || !sub.eat(')')) return bad("malformed Sym(...) annotation");
        t.is_relation = true;
        return true;
      }
      if (sub.failed || !vp.as_sym(e, x) || !sub.eat(')')) return bad("malformed Sym(...) annotation");
      t.sym = x;
      return true;
    }
    std::string_view dn = sub.ident();
    if (!dtype_from_short(dn, t.dt)) { fail(at, "unsupported dtype '", dn, "' (ctfx has b8, i8, i32, i64, f16, bf16, f32, f64)"); return false; }
    auto dims = [&](sym_expr* out, int& n) {
      n = 0;
      if (!sub.eat('[')) return false;
      if (sub.eat(']')) return true;
      while (!sub.failed) {
        value e = vp.parse();
        sym_expr x;
        if (sub.failed || !vp.as_sym(e, x)) return false;
        if (n >= max_rank) return false;
        out[n++] = x;
        if (sub.eat(']')) return true;
        if (!sub.eat(',')) return false;
      }
      return false;
    };
    if (!dims(t.size, t.rank)) return bad(t.rank >= max_rank ? "a shape of rank above ctfx::max_rank" : "malformed shape in the type annotation");
    sub.skip_space();
    if (sub.peek() == '[') {
      int ns = 0;
      if (!dims(t.stride, ns) || ns != t.rank) return bad("malformed strides in the type annotation");
      t.has_strides = true;
    }
    return true;  // the device (cpu, cuda:0) is not checked
  }

  constexpr void parse_return() {
    value v = values().parse();
    if (stopped()) return;
    auto one = [&](const value& x) {
      if (x.k == vkind::none) { outputs_.push_back(-1); return; }
      std::int32_t id = node_of(x, "an output");
      if (id >= 0) outputs_.push_back(id);
    };
    if (v.k == vkind::list)
      for (std::int32_t k = 0; k < v.count; ++k) one(pool_[static_cast<std::size_t>(v.first + k)]);
    else one(v);
  }

  constexpr void parse_assign() {
    position at = c_.pos();
    std::string_view name = c_.ident();
    if (name.empty()) { fail(at, "expected a statement `name = op(...)`"); return; }
    annotation t{};
    if (c_.eat(':') && !parse_annotation(t)) return;
    if (!c_.expect('=')) return;
    c_.skip_space();
    position op_at = c_.pos();
    std::size_t rhs = c_.i;
    std::string_view callee = c_.dotted();
    c_.skip_space();
    if (!callee.empty() && c_.peek() == '(' && value_parser<resolver>::function_op(callee) == 0) {
      ++c_.i;
      ++c_.depth;
      value args = values().elements(')', op_at, true);
      --c_.depth;
      if (stopped()) return;
      lower_call(name, t, callee, args, op_at);
      return;
    }
    if (!callee.empty() && c_.peek() == '[' && callee.find('.') == std::string_view::npos) {  // t[0]
      ++c_.i;
      ++c_.depth;
      value idx = values().parse();
      if (!c_.expect(']')) return;
      --c_.depth;
      if (stopped()) return;
      if (idx.k != vkind::integer || idx.is_bool) { fail(idx.at, "a tuple index must be an integer"); return; }
      if (const entry* e = lookup(callee); e && e->split >= 0) {
        split_element(name, t, *e, idx.i, idx.at, op_at);
        return;
      }
      if (const entry* e = lookup(callee); e && e->items >= 0) {
        list_element(name, t, *e, idx.i, idx.at, op_at);
        return;
      }
      value tv{};
      tv.k = vkind::name;
      tv.text = callee;
      tv.at = op_at;
      std::int32_t tup = node_of(tv, "the tuple");
      if (tup < 0) return;
      std::int32_t k = element_index(tup, idx.i, idx.at);
      if (k < 0) return;
      // A user op's fresh result is laid out by its fake implementation: the printed strides are
      // its layout (the getitem's params; ops/custom.hpp checks them).
      const node& tn = b_.g[tup];
      const bool user_result = (tn.op == op_kind::custom || tn.op == op_kind::auto_functionalized) &&
                               k < b_.g.customs[static_cast<std::size_t>(tn.aux)].n_returns;
      const std::size_t declared = user_result && t.present && !t.is_sym && t.has_strides ? static_cast<std::size_t>(t.rank) : 0;
      emit(name, t, op_kind::getitem, std::span<const std::int32_t>(&tup, 1), std::span<const sym_expr>(t.stride, declared), k, 0.0, op_at);
      return;
    }
    // A module attribute: a tensor constant (`_tensor_constant0 = self._tensor_constant0`) or a
    // parameter. Its values are not in the text: it becomes an input the caller binds by name (an
    // input rather than a node holding values, so that graphs stay value-free and the passes treat it
    // as Inductor treats get_attr: a graph input, written only through a copy_ epilogue).
    if (callee.size() > 5 && callee.substr(0, 5) == "self.") {
      std::string_view attr = callee.substr(5);
      if (const module_block m = find_module(text_, attr); !t.present && m.line > 0) {
        entry e{};  // a graph module: cond and while_loop take it as a subgraph
        e.name = name;
        e.module = static_cast<std::int32_t>(modules_.size());
        modules_.push_back(m);
        define(e, at);
        return;
      }
      if (!t.present || t.is_sym) {
        fail(op_at, "'", callee, "' is a module attribute without a tensor type annotation (print with print_readable())");
        return;
      }
      if (attr.size() >= max_name) {
        fail(op_at, "'", callee, "': the attribute's name is too long to bind by name");
        return;
      }
      add_placeholder(name, t, op_at);
      if (stopped()) return;
      const entry* e = lookup(name);
      fx_constant k{};
      k.attribute = name_t(attr);
      k.node = e->node;
      k.input = static_cast<std::int32_t>(b_.g[e->node].aux);
      constants_.push_back(k);
      return;
    }
    // Arithmetic on symbolic sizes: `add_1: "Sym(s0 + 1)" = sym_size_int + 1`.
    c_.i = rhs;  // same line: no newline was crossed
    value v = values().parse();
    if (stopped()) return;
    sym_expr x;
    if (sym_relation r{}; relation_after(values(), c_, v, r)) {  // `ge: "Sym(u1 >= 1)" = u >= 1`
      if (stopped()) return;
      entry e{};
      e.name = name;
      e.is_sym = true;
      e.rel = static_cast<std::int32_t>(relations_.size());
      relations_.push_back(r);
      define(e, at);
      return;
    }
    if (stopped()) return;
    if ((v.k == vkind::sym || v.k == vkind::integer || v.k == vkind::call) && values().as_sym(v, x)) {
      if (t.present && t.is_sym && !(t.sym == x) &&
          !((uses_derived(b_.g, t.sym) || uses_derived(b_.g, x)) && sym_guard_equal(b_.g, x, t.sym))) {
        mismatch_sym(name, t, x);
        return;
      }
      entry e{};
      e.name = name;
      e.is_sym = true;
      e.sym = x;
      define(e, at);
      return;
    }
    fail(op_at, "unsupported right-hand side for '", name, "' (expected an op call, t[i] or size arithmetic)");
  }

  // ----- comparisons of sizes and values read from tensors (graph/data_dependent.hpp) -----
  // `a OP b` with the cursor after `a`: OP one of >= > <= < == !=; false (cursor unmoved) if none.
  template <class VP>
  constexpr bool relation_after(VP vp, cursor& c, const value& a, sym_relation& r) {
    c.skip_space();
    const char c0 = c.peek(), c1 = c.peek(1);
    std::string_view op;
    if ((c0 == '>' || c0 == '<' || c0 == '=' || c0 == '!') && c1 == '=') op = std::string_view(c.s.data() + c.i, 2);
    else if (c0 == '>' || c0 == '<') op = std::string_view(c.s.data() + c.i, 1);
    else return false;
    position at = c.pos();
    c.i += op.size();
    value b = vp.parse();
    if (c.failed) return true;
    if (!sym_relation_of(op, r.op) || !vp.as_sym(a, r.a) || !vp.as_sym(b, r.b)) c.fail(at, "a comparison of sizes needs integer operands");
    return true;
  }
  // `Eq(a, b)`, `Ne(a, b)`, ...: a comparison PyTorch prints as a sympy call.
  template <class VP>
  constexpr bool relation_call(VP vp, const value& v, sym_relation& r) {
    if (v.k != vkind::call || v.count != 2 || !sym_relation_of(v.text, r.op)) return false;
    return vp.as_sym(pool_[static_cast<std::size_t>(v.first)], r.a) && vp.as_sym(pool_[static_cast<std::size_t>(v.first + 1)], r.b);
  }
  // The calls on values read from tensors and on their assertions, which make no node:
  // _local_scalar_dense / item (an unbacked symbol bound from an input's value), _assert_scalar
  // and sym_constrain_range_for_size (guards). True when `callee` is one of them.
  constexpr bool lower_data_dependent(std::string_view name, const annotation& t, std::string_view callee, const value& call,
                                      position at) {
    if (callee == "torch.ops.aten._local_scalar_dense.default" || callee == "torch.ops.aten.item.default") {
      if (!tensor_arg(call, 0, "self", at)) return true;
      sym_expr u = t.present && t.is_sym && !t.is_relation ? t.sym : b_.unbacked(name);
      if (u.as_symbol() < 0) { fail(at, "'", name, "': PyTorch printed a value read by item() that is not a single symbol"); return true; }
      if (!read_by_item(b_.g, tensor{&b_, abuf_[0]}, u.as_symbol())) { locate_builder_error(at); return true; }
      entry e{};
      e.name = name;
      e.is_sym = true;
      e.sym = u;
      define(e, at);
      return true;
    }
    // A size computed from sizes: the storage offset of a view, a sum of sizes.
    auto define_size = [&](const sym_expr& x) {
      if (t.present && t.is_sym && !t.is_relation && !(t.sym == x) && !alias_fresh(t.sym, x)) { mismatch_sym(name, t, x); return true; }
      entry e{};
      e.name = name;
      e.is_sym = true;
      e.sym = x;
      define(e, at);
      return true;
    };
    if (callee == "torch.ops.aten.sym_storage_offset.default") {
      if (!tensor_arg(call, 0, "self", at)) return true;
      return define_size(b_.g.meta(abuf_[0]).offset);
    }
    if (callee == "torch.sym_sum") {
      const value* v = arg(call, 0, "args");
      if (!v || v->k != vkind::list) { fail(at, "torch.sym_sum expects a tuple of sizes"); return true; }
      sym_expr sum{};
      for (std::int32_t j = 0; j < v->count; ++j) {
        sym_expr x;
        if (!sym_of(&pool_[static_cast<std::size_t>(v->first + j)], x, "args")) return true;
        sum = sum + x;
      }
      return define_size(sum);
    }
    auto assert_at = [&](const sym_relation& r) {
      if (sym_assert(b_.g, r)) return true;
      fail(at, "'", name, "': the assertion never holds (PyTorch would fail every call)");
      return false;
    };
    // _assert_async(x, msg): PyTorch raises when x's one element is zero (False), as one_hot checks
    // its classes. x (made bool where it is not: x != 0) becomes a value read with item(), computed
    // ahead when a call binds (exec/computed_values.hpp), and the guard `value == 1`, which carries
    // this node's name: a call whose x is false fails naming it before anything is written.
    if (callee == "torch.ops.aten._assert_async.msg" || callee == "torch.ops.aten._assert_async.default") {
      if (!tensor_arg(call, 0, "self", at)) return true;
      std::int32_t x = abuf_[0];
      const sym_expr numel = b_.g.meta(x).numel();
      if (!numel.is_static() || numel.value() != 1) { fail(at, "node '", name, "': _assert_async asserts a tensor of one element"); return true; }
      if (b_.g.meta(x).dt != dtype::b8) x = part(name, "nonzero", op_kind::ne, {x}, 2, scalar_value::integer(0), at);
      if (x < 0) return true;
      const sym_expr u = b_.unbacked(name);
      if (!read_by_item(b_.g, tensor{&b_, x}, u.as_symbol())) { locate_builder_error(at); return true; }
      const std::size_t before = b_.g.syms.size();
      sym_guard_equal(b_.g, u, sym_expr(1));
      for (std::size_t s = before; s < b_.g.syms.size(); ++s)
        if (b_.g.syms[s].op == sym_op::guard) b_.g.syms[s].name = name_t(name);
      return true;
    }
    if (callee == "torch.ops.aten._assert_scalar.default") {
      const value* v = arg(call, 0, "self");
      if (v && v->k == vkind::integer && v->is_bool) {
        if (!v->i) fail(at, "'", name, "': asserts False");
        return true;
      }
      const entry* e = v && v->k == vkind::name ? lookup(v->text) : nullptr;
      if (!e || e->rel < 0) { fail(at, "_assert_scalar expects a comparison of sizes (a `Sym(a >= b)` name)"); return true; }
      assert_at(relations_[static_cast<std::size_t>(e->rel)]);
      return true;
    }
    if (callee == "torch.ops.aten.sym_constrain_range_for_size.default" || callee == "torch.ops.aten.sym_constrain_range.default") {
      sym_expr u, lo, hi;
      if (!int_arg(call, 0, "size", sym_expr(INT64_MIN), u, at)) return true;
      const bool for_size = callee.find("for_size") != std::string_view::npos;
      if (!int_arg(call, 1, "min", sym_expr(for_size ? 0 : INT64_MIN + 1), lo, at)) return true;
      if (!int_arg(call, 2, "max", sym_expr(INT64_MAX), hi, at)) return true;
      if (!(lo == sym_expr(INT64_MIN + 1)) && !assert_at({sym_relation_op::ge, u, lo})) return true;
      if (!(hi == sym_expr(INT64_MAX))) assert_at({sym_relation_op::le, u, hi});
      return true;
    }
    return false;
  }
  // PyTorch names a size it cannot relate to the others by a fresh unbacked symbol (a slice at a
  // position read by item(): `f32[2, u6, 3]`); ctfx's expression for it is equal wherever ctfx's
  // guards hold (they refuse the bounds PyTorch would clamp), so from here on the symbol's name
  // stands for ctfx's expression. False when `printed` is not such a symbol.
  constexpr bool alias_fresh(const sym_expr& printed, const sym_expr& computed) {
    const int s = printed.as_symbol();
    if (s < 0) return false;
    const symbol& y = b_.g.syms[static_cast<std::size_t>(s)];
    if (y.kind != symbol_kind::unbacked || is_read_value(y)) return false;  // a value read with item() is no fresh name
    for (const node& n : b_.g.nodes)
      for (int d = 0; d < n.meta.rank; ++d)
        if (n.meta.size[d].uses(s) || n.meta.stride[d].uses(s)) return false;
    for (entry& e : entries_)
      if (e.is_sym && e.node < 0 && e.name == y.name.view() && e.sym == printed) {
        e.sym = computed;
        return true;
      }
    return false;
  }

  // PyTorch's auto_functionalized returns (None, new values...) for an op that returns nothing;
  // ctfx's tuple has only the new values.
  constexpr std::int32_t element_index(std::int32_t tup, index_t i, position at) {
    std::int32_t off = fx::getitem_offset(b_.g, tup);
    if (i < off) { fail(at, "element 0 of a user op that returns nothing is None, not a tensor"); return -1; }
    return static_cast<std::int32_t>(i) - off;
  }

  // ----- arguments -----
  constexpr const value* arg(const value& call, int pos, std::string_view key) const {
    int k = 0;
    for (std::int32_t j = 0; j < call.count; ++j) {
      const value& v = pool_[static_cast<std::size_t>(call.first + j)];
      if (v.key.empty()) { if (k++ == pos) return &v; }
      else if (v.key == key) return &v;
    }
    return nullptr;
  }
  constexpr std::int32_t node_of(const value& v, std::string_view what) {
    if (v.k != vkind::name) { fail(v.at, "expected a tensor node for ", what); return -1; }
    const entry* e = lookup(v.text);
    if (!e) { fail(v.at, "'", v.text, "' is not defined before its use"); return -1; }
    if (e->split >= 0) { fail(v.at, "'", v.text, "' is a split's tuple of views: use one of its elements ([k])"); return -1; }
    if (e->items >= 0) { fail(v.at, "'", v.text, "' is a list op's tuple of results: use one of its elements ([k])"); return -1; }
    if (e->module >= 0) { fail(v.at, "'", v.text, "' is a graph module: only cond and while_loop take one"); return -1; }
    if (e->node < 0 || e->is_sym) { fail(v.at, "'", v.text, "' is a symbolic size, not a tensor"); return -1; }
    return e->node;
  }
  constexpr bool sym_of(const value* v, sym_expr& out, std::string_view what) {
    if (!v) return false;
    if (v->k == vkind::integer && !v->is_bool) { out = sym_expr(v->i); return true; }
    if (v->k == vkind::sym) { out = v->e; return true; }
    if (v->k == vkind::name && resolve(v->text, out)) return true;
    if (v->k == vkind::call && values().as_sym(*v, out)) return true;  // Max(1, s0) in a size list
    if (stopped()) return false;
    fail(v->at, "expected an integer for ", what);
    return false;
  }
  // An integer argument with a default (when absent or None).
  constexpr bool int_arg(const value& call, int pos, std::string_view key, sym_expr dflt, sym_expr& out, position at) {
    const value* v = arg(call, pos, key);
    if (!v || v->k == vkind::none) {
      if (dflt == sym_expr(INT64_MIN)) { fail(at, "missing argument '", key, "'"); return false; }
      out = dflt;
      return true;
    }
    return sym_of(v, out, key);
  }
  constexpr bool list_arg(const value& call, int pos, std::string_view key, position at) {
    const value* v = arg(call, pos, key);
    if (!v) { fail(at, "missing list argument '", key, "'"); return false; }
    if (v->k != vkind::list) {  // a single int where a list is expected (sum(x, 0))
      sym_expr x;
      if (!sym_of(v, x, key)) return false;
      pbuf_.push_back(x);
      return true;
    }
    for (std::int32_t j = 0; j < v->count; ++j) {
      sym_expr x;
      if (!sym_of(&pool_[static_cast<std::size_t>(v->first + j)], x, key)) return false;
      pbuf_.push_back(x);
    }
    return true;
  }
  constexpr bool tensor_arg(const value& call, int pos, std::string_view key, position at) {
    const value* v = arg(call, pos, key);
    if (!v) { fail(at, "missing tensor argument '", key, "'"); return false; }
    std::int32_t id = node_of(*v, key);
    if (id < 0) return false;
    abuf_.push_back(id);
    return true;
  }
  constexpr bool tensor_list(const value& call, int pos, std::string_view key, position at, bool none_ok) {
    const value* v = arg(call, pos, key);
    if (!v || v->k != vkind::list) { fail(v ? v->at : at, "expected a list of tensors for '", key, "'"); return false; }
    for (std::int32_t j = 0; j < v->count; ++j) {
      const value& x = pool_[static_cast<std::size_t>(v->first + j)];
      if (none_ok && x.k == vkind::none) { abuf_.push_back(-1); continue; }
      std::int32_t id = node_of(x, key);
      if (id < 0) return false;
      abuf_.push_back(id);
    }
    return true;
  }
  constexpr bool scalar_of(const value* v, scalar_value& s, bool& integral, std::string_view what) {
    if (v && v->k == vkind::integer && !v->is_bool) { s = scalar_value::integer(v->i); integral = true; return true; }
    if (v && v->k == vkind::real) { s = v->d; integral = false; return true; }
    fail(v ? v->at : c_.pos(), "expected a number for ", what);
    return false;
  }
  constexpr bool dtype_arg(const value* v, dtype& d) {
    if (v && v->k == vkind::dotted && dtype_from_torch(v->text, d)) return true;
    fail(v ? v->at : c_.pos(), "unsupported dtype '", v ? v->text : std::string_view("?"), "'");
    return false;
  }
  constexpr bool alpha_is_one(const value& call) {
    const value* a = arg(call, 99, "alpha");
    if (!a || (a->k == vkind::integer && a->i == 1) || (a->k == vkind::real && a->d == 1.0)) return true;
    fail(a->at, "alpha other than 1 is not supported");
    return false;
  }

  // ----- nodes -----
  constexpr void emit(std::string_view name, const annotation& t, op_kind k, std::span<const std::int32_t> a,
                      std::span<const sym_expr> p, std::int32_t aux, scalar_value scalar, position at) {
    if (stopped()) return;
    // The strides PyTorch printed decide a result's order where ctfx's rules leave it to sizes the
    // graph leaves open (ops/result_layout.hpp: printed_order).
    printed_layout& printed = b_.g.printed;
    printed = {};
    if (t.present && !t.is_sym && t.has_strides) {
      printed.present = true;
      printed.rank = t.rank;
      for (int d = 0; d < t.rank; ++d) printed.stride[d] = t.stride[d];
      printed.node = name_t(name);
    }
    std::int32_t id = b_.add(k, a, p, aux, scalar);
    b_.g.printed = {};
    b_.g[id].name = name_t(name);
    if (!b_.g.error.ok()) {
      locate_builder_error(at, name);
      return;
    }
    entry e{};
    e.name = name;
    e.node = id;
    if (!define(e, at)) return;
    check_meta(id, t, at);
  }
  constexpr void emit_bufs(std::string_view name, const annotation& t, op_kind k, std::int32_t aux, scalar_value scalar, position at) {
    emit(name, t, k, std::span<const std::int32_t>(abuf_.data(), abuf_.size()),
         std::span<const sym_expr>(pbuf_.data(), pbuf_.size()), aux, scalar, at);
  }

  constexpr void put_layout(text_buf<200>& m, dtype dt, int rank, const sym_expr* size, const sym_expr* stride) {
    m << name_of(dt) << '[';
    for (int d = 0; d < rank; ++d) { if (d) m << ", "; detail::put_expr(m, b_.g, size[d]); }
    m << "][";
    for (int d = 0; d < rank; ++d) { if (d) m << ", "; detail::put_expr(m, b_.g, stride[d]); }
    m << ']';
  }
  // PyTorch's printed metadata must be what ctfx's rules computed.
  constexpr void check_meta(std::int32_t id, const annotation& t, position at) {
    if (!t.present) return;
    const tensor_meta& m = b_.g.meta(id);
    if (t.is_sym || !m.is_tensor()) {
      if (t.is_sym != (b_.g[id].op == op_kind::sym_size)) mismatch(id, t, at, "its kind (tensor or size)");
      return;
    }
    bool same = m.dt == t.dt && m.rank == t.rank;
    // A size PyTorch wrote with floor division or modulo that ctfx computed otherwise (PyTorch's
    // (s0//(s0//2)) where ctfx has 2) is equal under PyTorch's guards: ctfx keeps its own and
    // checks the equality at run time.
    for (int d = 0; same && d < t.rank; ++d)
      same = m.size[d] == t.size[d] || alias_fresh(t.size[d], m.size[d]) ||
             ((uses_derived(b_.g, t.size[d]) || uses_derived(b_.g, m.size[d])) && sym_guard_equal(b_.g, m.size[d], t.size[d]));
    sym_expr numel = m.numel();
    bool empty = numel.is_static() && numel.value() == 0;
    // aten.copy keeps the strides of `self` even where they are not dense (a slice of a cache);
    // ctfx gives the copy a dense buffer of the same shape. Only its dtype and sizes are compared.
    bool strides = t.has_strides && !empty && b_.g[id].op != op_kind::copy;
    // PyTorch's strides with Max/FloorDiv (Max(1, s0 - 2) for a dimension that may be empty) are
    // the guarded forms of ctfx's; ctfx's own are what it lays results out in. The stride of an
    // extent that may be 1 ((s0 + 2)//3) addresses nothing at sizes where it is, and PyTorch placed
    // such a dimension by the sizes it traced with: ctfx's placement is taken.
    const detail::sym_compare sizes{&b_.g};
    for (int d = 0; same && strides && d < t.rank; ++d)
      same = m.size[d] == sym_expr(1) || m.stride[d] == t.stride[d] || uses_derived(b_.g, t.stride[d]) ||
             (uses_derived(b_.g, m.size[d]) && sizes.ge(m.size[d], sym_expr(2)) != detail::tri::yes) ||
             // ctfx's stride with floor division (4*(s0//4) for a view(-1, 4)) against PyTorch's
             // input stride (s0): equal under the guard that made the view legal, checked per run
             (uses_derived(b_.g, m.stride[d]) && sym_guard_equal(b_.g, m.stride[d], t.stride[d]));
    if (!same) mismatch(id, t, at, {});
  }
  constexpr void mismatch(std::int32_t id, const annotation& t, position at, std::string_view what) {
    text_buf<200> m;
    m << "fx line " << static_cast<int>(at.line) << ": node '" << b_.g[id].name.view() << "': PyTorch printed ";
    if (t.is_sym) m << "a symbolic size";
    else put_layout(m, t.dt, t.rank, t.size, t.stride);
    m << ", ctfx computed ";
    const tensor_meta& x = b_.g.meta(id);
    if (!x.is_tensor()) m << "a tuple";
    else put_layout(m, x.dt, x.rank, x.size, x.stride);
    if (!what.empty()) m << " (" << what << ')';
    m << " [rule metadata-consistent]";
    b_.g.fail(rule::metadata_inconsistent, id, m.view());
    err_line_ = at.line;
    err_col_ = at.col;
  }
  constexpr void mismatch_sym(std::string_view name, const annotation& t, const sym_expr& x) {
    text_buf<200> m;
    m << "fx line " << static_cast<int>(t.at.line) << ": '" << name << "': PyTorch printed Sym(";
    detail::put_expr(m, b_.g, t.sym);
    m << "), ctfx computed ";
    detail::put_expr(m, b_.g, x);
    m << " [rule metadata-consistent]";
    b_.g.fail(rule::metadata_inconsistent, -1, m.view());
    err_line_ = t.at.line;
    err_col_ = t.at.col;
  }

  // Element k of a split: slice k of its base.
  constexpr void split_element(std::string_view name, const annotation& t, const entry& e, std::int64_t k, position kat,
                               position at) {
    const split_views& s = splits_[static_cast<std::size_t>(e.split)];
    if (k < 0) k += s.count;
    if (k < 0 || k >= s.count) { fail(kat, "index out of range of the split '", e.name, "'"); return; }
    abuf_.clear();
    pbuf_.clear();
    abuf_.push_back(s.base);
    if (s.selects) {  // unbind
      pbuf_.push_back(sym_expr(s.dim));
      pbuf_.push_back(sym_expr(k));
      emit_bufs(name, t, op_kind::select, 0, 0.0, at);
      return;
    }
    const auto b = static_cast<std::size_t>(s.first + k);
    for (const sym_expr& x : {sym_expr(s.dim), split_bounds_[b], split_bounds_[b + 1], sym_expr(1)}) pbuf_.push_back(x);
    emit_bufs(name, t, op_kind::slice, 0, 0.0, at);
  }

  // Element k of a list op lowered element by element: that element's node, under this name too.
  constexpr void list_element(std::string_view name, const annotation& t, const entry& e, std::int64_t k, position kat,
                              position at) {
    const list_items& l = lists_[static_cast<std::size_t>(e.items)];
    if (k < 0) k += l.count;
    if (k < 0 || k >= l.count) { fail(kat, "index out of range of the list '", e.name, "'"); return; }
    entry d{};
    d.name = name;
    d.node = list_nodes_[static_cast<std::size_t>(l.first + k)];
    if (!define(d, at)) return;
    check_meta(d.node, t, at);
  }

  constexpr void lower_call(std::string_view name, const annotation& t, std::string_view callee, const value& call,
                            position at) {
    abuf_.clear();
    pbuf_.clear();
    if (callee == "operator.getitem") {
      const value* tv = arg(call, 0, "");
      const value* iv = arg(call, 1, "");
      if (!tv || !iv || iv->k != vkind::integer) { fail(at, "operator.getitem expects (tuple, index)"); return; }
      if (const entry* e = tv->k == vkind::name ? lookup(tv->text) : nullptr; e && e->split >= 0) {
        split_element(name, t, *e, iv->i, iv->at, at);
        return;
      }
      if (const entry* e = tv->k == vkind::name ? lookup(tv->text) : nullptr; e && e->items >= 0) {
        list_element(name, t, *e, iv->i, iv->at, at);
        return;
      }
      std::int32_t tup = node_of(*tv, "the tuple");
      if (tup < 0) return;
      std::int32_t k = element_index(tup, iv->i, iv->at);
      if (k < 0) return;
      abuf_.push_back(tup);
      emit_bufs(name, t, op_kind::getitem, k, 0.0, at);
      return;
    }
    if (lower_data_dependent(name, t, callee, call, at)) return;
    constexpr std::string_view prefix = "torch.ops.";
    const op_row* row = callee.substr(0, prefix.size()) == prefix ? find_op(callee.substr(prefix.size())) : nullptr;
    if (!row && callee.substr(0, prefix.size()) == prefix) {
      if (const fx_custom* cu = find_custom(callee.substr(prefix.size())); cu && cu->schema.mutates == 0) {
        lower_direct_user_op(name, t, *cu, call, at);
        return;
      }
    }
    if (!row) { fail(at, "node '", name, "': unsupported op '" ); append_op_name(callee); return; }
    const op_kind k = row->kind;
    const sym_expr required(INT64_MIN);
    sym_expr x0, x1, x2, x3;
    switch (row->how) {
      case lower::unary: {
        int want = k == op_kind::copy || k == op_kind::copy_ ? 2 : 1;
        for (int j = 0; j < want; ++j) if (!tensor_arg(call, j, j ? "src" : "self", at)) return;
        if (arg(call, want, "")) { fail(arg(call, want, "")->at, "unexpected extra argument"); return; }
        const value* mf = arg(call, 99, "memory_format");
        if (k == op_kind::clone && mf && (mf->text == "torch.channels_last" || mf->text == "torch.channels_last_3d")) {
          lower_clone_channels_last(name, t, mf->text == "torch.channels_last_3d" ? 5 : 4, at);
          return;
        }
        // clone(memory_format=torch.contiguous_format): aux 1, a row-major copy whatever the strides.
        const bool contiguous = k == op_kind::clone && mf && mf->text == "torch.contiguous_format" &&
                                !detail::clone_meta(b_.g.meta(abuf_[0])).is_contiguous();
        emit_bufs(name, t, k, contiguous ? 1 : 0, 0.0, at);
        return;
      }
      case lower::div_mode: {  // div with rounding_mode: None (true division), 'floor' or 'trunc'
        const value* mode = arg(call, 99, "rounding_mode");
        op_kind kd = op_kind::div;
        if (mode && mode->k == vkind::string) {
          if (mode->text == "floor") kd = op_kind::floor_divide;
          else if (mode->text == "trunc") kd = op_kind::trunc_divide;
          else { fail(mode->at, "node '", name, "': rounding_mode is 'floor', 'trunc' or None"); return; }
        } else if (mode && mode->k != vkind::none) {
          fail(mode->at, "node '", name, "': rounding_mode is 'floor', 'trunc' or None");
          return;
        }
        lower_binary(name, t, call, kd, at);
        return;
      }
      case lower::isnan: case lower::isinf: {  // x != x; abs(x) == inf, named <name>_abs
        if (!tensor_arg(call, 0, "self", at)) return;
        if (row->how == lower::isnan) {
          abuf_.push_back(abuf_[0]);
          emit_bufs(name, t, op_kind::ne, 0, 0.0, at);
          return;
        }
        text_buf<max_name + 8> mag;
        mag << name << "_abs";
        emit_bufs(mag.view(), annotation{}, op_kind::abs, 0, 0.0, at);
        if (stopped()) return;
        abuf_.clear();
        abuf_.push_back(b_.g.size() - 1);
        emit_bufs(name, t, op_kind::eq, 1, std::numeric_limits<double>::infinity(), at);
        return;
      }
      case lower::reciprocal: {  // pow(x, -1), computed as 1 / x; an integer or bool x as f32 first
        if (!tensor_arg(call, 0, "self", at)) return;
        if (!is_floating(b_.g.meta(abuf_[0]).dt)) {
          text_buf<max_name + 8> f;
          f << name << "_float";
          emit_bufs(f.view(), annotation{}, op_kind::convert, static_cast<std::int32_t>(dtype::f32), 0.0, at);
          if (stopped()) return;
          abuf_.clear();
          abuf_.push_back(b_.g.size() - 1);
        }
        emit_bufs(name, t, op_kind::pow, 2, scalar_value::integer(-1), at);
        return;
      }
      case lower::logical_xor: {  // (a != 0) != (b != 0), the operands' tests named <name>_self, <name>_other
        std::int32_t tested[2]{};
        for (int j = 0; j < 2; ++j) {
          abuf_.clear();
          if (!tensor_arg(call, j, j ? "other" : "self", at)) return;
          text_buf<max_name + 8> nz;
          nz << name << (j ? "_other" : "_self");
          emit_bufs(nz.view(), annotation{}, op_kind::ne, 2, scalar_value::integer(0), at);
          if (stopped()) return;
          tested[j] = b_.g.size() - 1;
        }
        abuf_.clear();
        abuf_.push_back(tested[0]);
        abuf_.push_back(tested[1]);
        emit_bufs(name, t, op_kind::ne, 0, 0.0, at);
        return;
      }
      case lower::binary: lower_binary(name, t, call, k, at); return;
      case lower::fma: lower_fma(name, t, call, at); return;
      case lower::addcmul: case lower::addcdiv:
        lower_addc(name, t, call, row->how == lower::addcdiv, row->name.find("_.") != std::string_view::npos, at);
        return;
      case lower::lerp: lower_lerp(name, t, call, row->name.find("_.") != std::string_view::npos, at); return;
      case lower::foreach_elems: lower_foreach_elems(name, call, k, row->name, at); return;
      case lower::bitwise: {
        // bitwise_and, bitwise_or, bitwise_not: the op on integers; on bool tensors the logical op
        // (bitwise_not's ~ of a 0/1 would not be a bool; xor and the shifts are plain binary rows).
        if (k == op_kind::bitwise_not) {
          if (!tensor_arg(call, 0, "self", at)) return;
          emit_bufs(name, t, b_.g.meta(abuf_[0]).dt == dtype::b8 ? op_kind::logical_not : k, 0, 0.0, at);
          return;
        }
        op_kind kb = k;
        if (k == op_kind::bitwise_and || k == op_kind::bitwise_or) {
          const value* x = arg(call, 0, "self");
          const value* o = arg(call, 1, "other");
          if (x && o && x->k == vkind::name && o->k == vkind::name) {
            const std::int32_t xi = node_of(*x, "self"), oi = node_of(*o, "other");
            if (xi < 0 || oi < 0) return;
            if (b_.g.meta(xi).dt == dtype::b8 && b_.g.meta(oi).dt == dtype::b8)
              kb = k == op_kind::bitwise_and ? op_kind::logical_and : op_kind::logical_or;
          }
        }
        lower_binary(name, t, call, kb, at);
        return;
      }
      case lower::split: {
        // A tuple of views, as PyTorch's split: pieces of split_size along dim (the last one
        // shorter), or of the given sizes; its elements are read with [k] (split_element).
        if (!tensor_arg(call, 0, "self", at) || !int_arg(call, 2, "dim", 0, x0, at)) return;
        const std::int32_t base = abuf_[0];
        const tensor_meta& xm = b_.g.meta(base);
        if (!x0.is_static() || x0.value() < -xm.rank || x0.value() >= xm.rank) {
          fail(at, "node '", name, "': split's dim is out of range");
          return;
        }
        const auto d = static_cast<std::int32_t>(x0.value() < 0 ? x0.value() + xm.rank : x0.value());
        split_views s{base, d, static_cast<std::int32_t>(split_bounds_.size()), 0, false};
        split_bounds_.push_back(sym_expr(0));
        if (callee.find("split_with_sizes") != std::string_view::npos) {
          if (!list_arg(call, 1, "split_sizes", at)) return;
          for (const sym_expr& n : pbuf_) split_bounds_.push_back(split_bounds_.back() + n);
        } else {
          if (!int_arg(call, 1, "split_size", required, x1, at)) return;
          const sym_expr& n = xm.size[d];
          if (!x1.is_static() || x1.value() < 1 || !n.is_static()) {
            fail(at, "node '", name, "': split into pieces of a static size along a static extent (the number of pieces is the tuple's length)");
            return;
          }
          for (index_t b = 0; b < n.value(); b += x1.value())
            split_bounds_.push_back(sym_expr(b + x1.value() < n.value() ? b + x1.value() : n.value()));
          if (n.value() == 0) split_bounds_.push_back(sym_expr(0));
        }
        s.count = static_cast<std::int32_t>(split_bounds_.size()) - s.first - 1;
        splits_.push_back(s);
        entry e{};
        e.name = name;
        e.split = static_cast<std::int32_t>(splits_.size()) - 1;
        define(e, at);
        return;
      }
      case lower::unbind: {
        // x.unbind(dim): a tuple of select(dim, k), one per position of a static extent, read with [k].
        if (!tensor_arg(call, 0, "self", at) || !int_arg(call, 1, "dim", 0, x0, at)) return;
        const tensor_meta& xm = b_.g.meta(abuf_[0]);
        if (!x0.is_static() || x0.value() < -xm.rank || x0.value() >= xm.rank) {
          fail(at, "node '", name, "': unbind's dim is out of range (or the input is 0-d)");
          return;
        }
        const auto d = static_cast<std::int32_t>(x0.value() < 0 ? x0.value() + xm.rank : x0.value());
        if (!xm.size[d].is_static()) {
          fail(at, "node '", name, "': unbind along a symbolic extent (the tuple's length is known only at run time)");
          return;
        }
        splits_.push_back(split_views{abuf_[0], d, 0, static_cast<std::int32_t>(xm.size[d].value()), true});
        entry e{};
        e.name = name;
        e.split = static_cast<std::int32_t>(splits_.size()) - 1;
        define(e, at);
        return;
      }
      case lower::repeat: {
        // x.repeat(r0, ..., rk) as PyTorch decomposes it: x with leading 1s to k+1 dimensions, a 1
        // before each dimension (<name>_u<i>), expanded to [r0, s0, r1, s1, ...] (<name>_expand),
        // copied contiguous (<name>_clone), viewed as [r0*s0, r1*s1, ...] (the line's node).
        if (!tensor_arg(call, 0, "self", at) || !list_arg(call, 1, "repeats", at)) return;
        const std::vector<sym_expr> reps(pbuf_.begin(), pbuf_.end());
        std::int32_t cur = abuf_[0];
        const int R = static_cast<int>(reps.size()), r0 = b_.g.meta(cur).rank;
        if (R < r0 || 2 * R > max_rank) {
          fail(at, "node '", name, "': repeat needs as many repeats as dimensions, and at most half of ctfx's maximum rank");
          return;
        }
        int made = 0;
        auto step = [&](op_kind op, std::span<const sym_expr> p, std::int32_t aux) {
          text_buf<max_name + 16> nm;
          nm << name << (op == op_kind::expand ? "_expand" : op == op_kind::clone ? "_clone" : "_u") << made++;
          abuf_.clear();
          abuf_.push_back(cur);
          pbuf_.assign(p.begin(), p.end());
          emit_bufs(nm.view(), annotation{}, op, aux, 0.0, at);
          cur = b_.g.size() - 1;
          return !stopped();
        };
        const sym_expr zero(0);
        for (int i = r0; i < R; ++i)
          if (!step(op_kind::unsqueeze, std::span<const sym_expr>(&zero, 1), 0)) return;
        std::vector<sym_expr> wide, flat;
        for (int i = R - 1; i >= 0; --i) {
          const sym_expr at_i(i);
          if (!step(op_kind::unsqueeze, std::span<const sym_expr>(&at_i, 1), 0)) return;
        }
        const tensor_meta& m = b_.g.meta(cur);  // [1, s0, 1, s1, ...]
        for (int i = 0; i < R; ++i) {
          wide.push_back(reps[static_cast<std::size_t>(i)]);
          wide.push_back(m.size[2 * i + 1]);
          flat.push_back(reps[static_cast<std::size_t>(i)] * m.size[2 * i + 1]);
        }
        if (!step(op_kind::expand, std::span<const sym_expr>(wide.data(), wide.size()), 0)) return;
        // (aux 1, memory_format=contiguous_format, only where a plain clone would keep other
        // strides: as the parser reads such a clone back.)
        if (!step(op_kind::clone, {}, detail::clone_meta(b_.g.meta(cur)).is_contiguous() ? 0 : 1)) return;
        abuf_.clear();
        abuf_.push_back(cur);
        pbuf_.assign(flat.begin(), flat.end());
        emit_bufs(name, t, op_kind::view, 0, 0.0, at);
        return;
      }
      case lower::clamp: {
        // clamp_min, clamp_max, or both: the first then named <name>_min (the line's name goes to
        // the node that gives its value, whose metadata PyTorch printed).
        // A bound is a number (aux 1 or 2, as a binary op's scalar) or a tensor (clamp.Tensor).
        if (!tensor_arg(call, 0, "self", at)) return;
        const value* lo = arg(call, 1, "min");
        const value* hi = arg(call, 2, "max");
        const bool has_lo = lo && lo->k != vkind::none, has_hi = hi && hi->k != vkind::none;
        if (!has_lo && !has_hi) { fail(at, "node '", name, "': clamp needs a min or a max"); return; }
        // Appends bound v to abuf_ (a tensor) or reads it into s/aux (a number); false on a bad one.
        auto bound = [&](const value* v, scalar_value& s, std::int32_t& aux, std::string_view what) {
          if (v->k == vkind::name) {
            const std::int32_t id = node_of(*v, what);
            if (id < 0) return false;
            abuf_.push_back(id);
            aux = 0;
            return true;
          }
          bool integral = false;
          if (!scalar_of(v, s, integral, what)) return false;
          aux = integral ? 2 : 1;
          return true;
        };
        scalar_value s{};
        std::int32_t aux = 0;
        if (has_lo) {
          if (!bound(lo, s, aux, "clamp's min")) return;
          if (!has_hi) { emit_bufs(name, t, op_kind::clamp_min, aux, s, at); return; }
          text_buf<max_name + 8> first;
          first << name << "_min";
          emit_bufs(first.view(), annotation{}, op_kind::clamp_min, aux, s, at);
          if (stopped()) return;
          abuf_.clear();
          abuf_.push_back(b_.g.size() - 1);
        }
        if (!bound(hi, s, aux, "clamp's max")) return;
        emit_bufs(name, t, op_kind::clamp_max, aux, s, at);
        return;
      }
      case lower::where: {
        // where.self takes tensors; where.ScalarSelf / ScalarOther / Scalar a number for a branch,
        // which becomes a 0-d full of the result's dtype (as Inductor's full_default), named
        // <name>_self or <name>_other.
        const value* c = arg(call, 0, "condition");
        const value* v[2] = {arg(call, 1, "self"), arg(call, 2, "other")};
        if (!c || !v[0] || !v[1]) { fail(at, "node '", name, "': where needs a condition, self and other"); return; }
        std::int32_t ids[3] = {node_of(*c, "condition"), -1, -1};
        if (ids[0] < 0) return;
        scalar_value s[2]{};
        bool integral[2] = {false, false}, number[2] = {false, false};
        for (int j = 0; j < 2; ++j) {
          number[j] = v[j]->k != vkind::name;
          if (number[j] ? !scalar_of(v[j], s[j], integral[j], j ? "where's other" : "where's self")
                        : (ids[j + 1] = node_of(*v[j], j ? "other" : "self")) < 0) return;
        }
        if (number[0] || number[1]) {
          dtype dt = integral[0] && integral[1] ? dtype::i64 : dtype::f32;  // two numbers
          if (!(number[0] && number[1])) {
            const int tensor = number[0] ? 1 : 0;
            dt = promote_scalar(b_.g.meta(ids[tensor + 1]).dt, integral[1 - tensor]);
          }
          for (int j = 0; j < 2; ++j) {
            if (!number[j]) continue;
            abuf_.clear();
            pbuf_.clear();
            text_buf<max_name + 8> branch;
            branch << name << (j ? "_other" : "_self");
            emit_bufs(branch.view(), annotation{}, op_kind::full, static_cast<std::int32_t>(dt), s[j], at);
            if (stopped()) return;
            ids[j + 1] = b_.g.size() - 1;
          }
        }
        abuf_.clear();
        pbuf_.clear();
        for (auto id : ids) abuf_.push_back(id);
        emit_bufs(name, t, k, 0, 0.0, at);
        return;
      }
      case lower::slice: case lower::slice_scatter: {
        int o = 1 + (row->how == lower::slice_scatter);  // position of the first view parameter
        for (int j = 0; j < o; ++j) if (!tensor_arg(call, j, j ? "src" : "self", at)) return;
        if (!int_arg(call, o, "dim", 0, x0, at) || !int_arg(call, o + 1, "start", 0, x1, at) ||
            !int_arg(call, o + 2, "end", end_of_dim, x2, at) || !int_arg(call, o + 3, "step", 1, x3, at)) return;
        for (auto& x : {x0, x1, x2, x3}) pbuf_.push_back(x);
        emit_bufs(name, t, k, 0, 0.0, at);
        return;
      }
      case lower::select: case lower::select_scatter: {
        int o = 1 + (row->how == lower::select_scatter);  // position of the first view parameter
        for (int j = 0; j < o; ++j) if (!tensor_arg(call, j, j ? "src" : "self", at)) return;
        if (!int_arg(call, o, "dim", required, x0, at) || !int_arg(call, o + 1, "index", required, x1, at)) return;
        pbuf_.push_back(x0);
        pbuf_.push_back(x1);
        emit_bufs(name, t, k, 0, 0.0, at);
        return;
      }
      case lower::diagonal: case lower::diagonal_scatter: {
        int o = 1 + (row->how == lower::diagonal_scatter);  // position of the first view parameter
        for (int j = 0; j < o; ++j) if (!tensor_arg(call, j, j ? "src" : "self", at)) return;
        if (!int_arg(call, o, "offset", 0, x0, at) || !int_arg(call, o + 1, "dim1", 0, x1, at) ||
            !int_arg(call, o + 2, "dim2", 1, x2, at)) return;
        for (auto& x : {x0, x1, x2}) pbuf_.push_back(x);
        emit_bufs(name, t, k, 0, 0.0, at);
        return;
      }
      case lower::as_strided: case lower::as_strided_scatter: {
        int o = row->how == lower::as_strided_scatter;
        for (int j = 0; j <= o; ++j) if (!tensor_arg(call, j, j ? "src" : "self", at)) return;
        pbuf_.push_back(0);
        if (!list_arg(call, o + 1, "size", at)) return;
        std::size_t r = pbuf_.size() - 1;
        if (!list_arg(call, o + 2, "stride", at)) return;
        if (pbuf_.size() - 1 != 2 * r) { fail(at, "as_strided sizes and strides differ in length"); return; }
        pbuf_[0] = sym_expr(static_cast<index_t>(r));
        // storage_offset=None keeps the input's offset
        if (!int_arg(call, o + 3, "storage_offset", b_.g.meta(abuf_[0]).offset, x0, at)) return;
        pbuf_.push_back(x0);
        emit_bufs(name, t, k, 0, 0.0, at);
        return;
      }
      case lower::view: case lower::permute: {
        if (!tensor_arg(call, 0, "self", at) || !list_arg(call, 1, row->how == lower::view ? "size" : "dims", at)) return;
        emit_bufs(name, t, k, 0, 0.0, at);
        return;
      }
      case lower::transpose: case lower::t: {
        if (!tensor_arg(call, 0, "self", at)) return;
        if (row->how == lower::t) { x0 = 0; x1 = 1; }
        else if (!int_arg(call, 1, "dim0", required, x0, at) || !int_arg(call, 2, "dim1", required, x1, at)) return;
        pbuf_.push_back(x0);
        pbuf_.push_back(x1);
        emit_bufs(name, t, k, 0, 0.0, at);
        return;
      }
      case lower::dim: {
        if (!tensor_arg(call, 0, "self", at) || !int_arg(call, 1, "dim", required, x0, at)) return;
        pbuf_.push_back(x0);
        emit_bufs(name, t, k, 0, 0.0, at);
        return;
      }
      case lower::any_all: {
        // any(x) = amax(x != 0) and all(x) = not amax(x == 0) over the dims, in bool (a bool x is its
        // own test: x, or not x): <name>_test, <name>_amax, then the result. The row's kind says
        // which: amax for any, logical_not for all.
        const bool all = k == op_kind::logical_not;
        if (!tensor_arg(call, 0, "self", at)) return;
        const std::int32_t x = abuf_[0];
        const tensor_meta xm = b_.g.meta(x);
        const value* dv = arg(call, 1, "dim");
        pbuf_.clear();
        if (dv && dv->k != vkind::none) {
          if (dv->k == vkind::list) { if (!list_arg(call, 1, "dim", at)) return; }
          else if (!int_arg(call, 1, "dim", required, x0, at)) return;
          else pbuf_.push_back(x0);
        }
        const value* keep = arg(call, 2, "keepdim");
        const bool keepdim = keep && keep->k == vkind::integer && keep->i;
        // an empty reduction is false for any and true for all; ctfx's amax has no such identity
        for (int d = 0; d < xm.rank; ++d) {
          bool reduced = pbuf_.empty();
          for (const sym_expr& e : pbuf_)
            reduced = reduced || (e.is_static() && (e.value() == d || e.value() + xm.rank == d));
          if (reduced && !(xm.size[d].is_static() && xm.size[d].value() > 0)) {
            text_buf<200> m;
            m << "': " << (all ? "all" : "any") << " over dimension " << d
              << ", whose size is 0 or symbolic: ctfx computes it as an amax, which has no value for an empty dimension";
            fail(at, "node '", name, m.view());
            return;
          }
        }
        sym_expr dims[max_rank]{};
        const std::size_t nd = pbuf_.size();
        for (std::size_t j = 0; j < nd && j < max_rank; ++j) dims[j] = pbuf_[j];
        std::int32_t test = x;
        text_buf<max_name + 8> step;
        if (xm.dt != dtype::b8 || all) {
          abuf_.clear();
          abuf_.push_back(x);
          pbuf_.clear();
          step << name << "_test";
          if (xm.dt == dtype::b8) emit_bufs(step.view(), annotation{}, op_kind::logical_not, 0, 0.0, at);
          else emit_bufs(step.view(), annotation{}, all ? op_kind::eq : op_kind::ne, 2, scalar_value::integer(0), at);
          if (stopped()) return;
          test = b_.g.size() - 1;
        }
        abuf_.clear();
        abuf_.push_back(test);
        pbuf_.clear();
        for (std::size_t j = 0; j < nd; ++j) pbuf_.push_back(dims[j]);
        if (!all) { emit_bufs(name, t, op_kind::amax, keepdim ? 1 : 0, 0.0, at); return; }
        text_buf<max_name + 8> red;
        red << name << "_amax";
        emit_bufs(red.view(), annotation{}, op_kind::amax, keepdim ? 1 : 0, 0.0, at);
        if (stopped()) return;
        abuf_.clear();
        abuf_.push_back(b_.g.size() - 1);
        pbuf_.clear();
        emit_bufs(name, t, op_kind::logical_not, 0, 0.0, at);
        return;
      }
      case lower::squeeze_all: {
        // squeeze.default drops every dimension of static size 1, squeeze.dims those of the list that
        // have size 1: a chain of squeeze.dim nodes, last dimension first (<name>_sq<d> but the last),
        // or an alias when none goes. A symbolic size could be 1 or not: refused.
        if (!tensor_arg(call, 0, "self", at)) return;
        std::int32_t cur = abuf_[0];
        const tensor_meta xm = b_.g.meta(cur);
        bool listed[max_rank]{};
        const value* dl = arg(call, 1, "dim");
        if (dl && dl->k != vkind::none) {
          if (!list_arg(call, 1, "dim", at)) return;
          for (const sym_expr& d : pbuf_) {
            const index_t r = xm.rank < 1 ? 1 : xm.rank;
            if (!d.is_static() || d.value() < -r || d.value() >= r) { fail(at, "node '", name, "': squeeze's dims are out of range"); return; }
            if (xm.rank > 0) listed[d.value() < 0 ? d.value() + xm.rank : d.value()] = true;
          }
        } else {
          for (int d = 0; d < xm.rank; ++d) listed[d] = true;
        }
        int last = -1, count = 0;
        for (int d = 0; d < xm.rank; ++d) {
          if (!listed[d]) continue;
          if (!xm.size[d].is_static()) {
            text_buf<200> m;
            m << "': squeeze of dimension " << d << ", whose size is symbolic (whether it is 1 is known only at run time): squeeze it by number (squeeze.dim) or reshape";
            fail(at, "node '", name, m.view());
            return;
          }
          if (xm.size[d].value() == 1) { last = last < 0 ? d : last; ++count; }
        }
        if (count == 0) {
          abuf_.clear();
          abuf_.push_back(cur);
          pbuf_.clear();
          emit_bufs(name, t, op_kind::alias, 0, 0.0, at);
          return;
        }
        for (int d = xm.rank - 1; d >= 0; --d) {
          if (!listed[d] || xm.size[d].value() != 1) continue;
          abuf_.clear();
          abuf_.push_back(cur);
          pbuf_.clear();
          pbuf_.push_back(sym_expr(d));
          if (d == last) { emit_bufs(name, t, op_kind::squeeze, 0, 0.0, at); return; }
          text_buf<max_name + 8> step;
          step << name << "_sq" << d;
          emit_bufs(step.view(), annotation{}, op_kind::squeeze, 0, 0.0, at);
          if (stopped()) return;
          cur = b_.g.size() - 1;
        }
        return;
      }
      case lower::index: {
        if (!tensor_arg(call, 0, "self", at) || !tensor_list(call, 1, "indices", at, true)) return;
        if (arg(call, 2, "")) { fail(arg(call, 2, "")->at, "unexpected extra argument"); return; }
        emit_bufs(name, t, k, 0, 0.0, at);
        return;
      }
      case lower::embedding: {  // an embedding lookup (forward): weight[indices]; padding_idx only matters to its gradient
        if (!tensor_arg(call, 0, "weight", at) || !tensor_arg(call, 1, "indices", at)) return;
        if (b_.g.meta(abuf_[0]).rank != 2) { fail(at, "node '", name, "': embedding's weight is a 2-d table"); return; }
        emit_bufs(name, t, k, 0, 0.0, at);
        return;
      }
      case lower::index_select: {  // x.index_select(dim, index): index with the 1-d index at dim
        if (!tensor_arg(call, 0, "self", at) || !int_arg(call, 1, "dim", INT64_MIN, x0, at)) return;
        const std::int32_t rank = b_.g.meta(abuf_[0]).rank;
        if (rank < 1 || !x0.is_static() || x0.value() < -rank || x0.value() >= rank) {
          fail(at, "node '", name, "': index_select's dim is out of range (or its input is 0-d)");
          return;
        }
        const value* ix = arg(call, 2, "index");
        if (!ix) { fail(at, "node '", name, "': index_select needs an index"); return; }
        const std::int32_t id = node_of(*ix, "index");
        if (id < 0) return;
        if (b_.g.meta(id).rank != 1) { fail(ix->at, "node '", name, "': index_select's index must be 1-d here (a 0-d index keeps the dimension in PyTorch)"); return; }
        const index_t d = x0.value() < 0 ? x0.value() + rank : x0.value();
        for (index_t j = 0; j < d; ++j) abuf_.push_back(-1);
        abuf_.push_back(id);
        emit_bufs(name, t, k, 0, 0.0, at);
        return;
      }
      case lower::gather: {
        if (!tensor_arg(call, 0, "self", at) || !int_arg(call, 1, "dim", INT64_MIN, x0, at) || !tensor_arg(call, 2, "index", at)) return;
        if (!along_dim(name, x0, at)) return;
        const value* sg = arg(call, 3, "sparse_grad");
        if (sg && sg->k == vkind::integer && sg->i) { fail(at, "node '", name, "': gather with sparse_grad=True (a sparse gradient) is not supported"); return; }
        emit_bufs(name, t, k, 0, 0.0, at);
        return;
      }
      case lower::scatter: {
        lower_scatter(name, t, k, row->name, call, at);
        return;
      }
      case lower::index_put: {
        if (!tensor_arg(call, 0, "self", at) || !tensor_arg(call, 2, "values", at) ||
            !tensor_list(call, 1, "indices", at, true)) return;
        const value* acc = arg(call, 3, "accumulate");
        emit_bufs(name, t, k, acc && acc->k == vkind::integer && acc->i ? 1 : 0, 0.0, at);
        return;
      }
      case lower::reduce: {
        if (!tensor_arg(call, 0, "self", at)) return;
        const value* dims = arg(call, 1, "dim");
        if (k == op_kind::prod) {  // prod.dim_int's one dim (prod.default: none, every dim)
          if (dims && dims->k != vkind::none) {
            if (!int_arg(call, 1, "dim", required, x0, at)) return;
            pbuf_.push_back(x0);
          }
        } else if (dims && dims->k != vkind::none && !list_arg(call, 1, "dim", at)) {
          return;
        }
        const value* keep = arg(call, 2, "keepdim");
        std::int32_t aux = keep && keep->k == vkind::integer && keep->i ? 1 : 0;
        // sum / mean with dtype=: PyTorch converts x to it and reduces in it (a sum in an integer
        // dtype stays in it): the conversion is a node <name>_convert before the reduction.
        if (const value* dt = arg(call, 99, "dtype"); dt && dt->k != vkind::none) {
          dtype od{};
          if (k != op_kind::sum && k != op_kind::mean && k != op_kind::prod) {
            fail(dt->at, "node '", name, "': only sum, prod and mean take a dtype argument");
            return;
          }
          if (!dtype_arg(dt, od)) return;
          if (od == dtype::b8) { fail(dt->at, "node '", name, "': a reduction in bool (dtype=torch.bool) is not supported"); return; }
          if (od != b_.g.meta(abuf_[0]).dt) {
            const std::int32_t x = part(name, "convert", op_kind::convert, {abuf_[0]}, static_cast<std::int32_t>(od), 0.0, at);
            if (x < 0) return;
            abuf_[0] = x;
          }
          if (k == op_kind::sum || k == op_kind::prod) aux |= sum_in_input_dtype;
        }
        if (row->name == "aten.max.default") {  // x.max(): PyTorch raises on an empty x, an amax would not
          const tensor_meta& xm = b_.g.meta(abuf_[0]);
          for (int d = 0; d < xm.rank; ++d)
            if (!xm.size[d].is_static() || xm.size[d].value() == 0) {
              fail(at, "node '", name, "': max() of a tensor whose extents are 0 or symbolic (PyTorch raises on an empty one)");
              return;
            }
        }
        emit_bufs(name, t, k, aux, 0.0, at);
        return;
      }
      case lower::var: {
        lower_var(name, t, call, k == op_kind::var_mean, at);
        return;
      }
      case lower::cumsum: {
        // PyTorch's cumsum converts x to the dtype= given (else an integer or bool x to int64) and
        // sums in that dtype: the conversion is a node <name>_convert before the cumsum.
        if (!tensor_arg(call, 0, "self", at) || !int_arg(call, 1, "dim", required, x0, at)) return;
        std::int32_t x = abuf_[0];
        const dtype xd = b_.g.meta(x).dt;
        dtype od = is_floating(xd) || k == op_kind::logcumsumexp ? xd : dtype::i64;  // (logcumsumexp: floats only, its meta says)
        if (const value* dt = arg(call, 99, "dtype"); dt && dt->k != vkind::none) {
          if (!dtype_arg(dt, od)) return;
          if (od == dtype::b8) { fail(dt->at, "node '", name, "': a cumsum in bool is not supported"); return; }
        }
        if (od != xd) x = part(name, "convert", op_kind::convert, {x}, static_cast<std::int32_t>(od), 0.0, at);
        if (x < 0) return;
        abuf_.clear();
        abuf_.push_back(x);
        pbuf_.clear();
        pbuf_.push_back(x0);
        emit_bufs(name, t, k, 0, 0.0, at);
        return;
      }
      case lower::constant_pad: {
        // F.pad: tensor::constant_pad's nodes, all but the last named <name>_pad<k>.
        if (!tensor_arg(call, 0, "self", at) || !list_arg(call, 1, "pad", at)) return;
        index_t pads[2 * max_rank]{};
        if (pbuf_.size() > 2 * static_cast<std::size_t>(max_rank)) { fail(at, "node '", name, "': more pads than dimensions"); return; }
        for (std::size_t j = 0; j < pbuf_.size(); ++j) {
          if (!pbuf_[j].is_static()) { fail(at, "node '", name, "': constant_pad_nd's pads must be numbers"); return; }
          pads[j] = pbuf_[j].value();
        }
        scalar_value v = 0.0;
        bool integral = false;
        if (const value* fv = arg(call, 2, "value"); fv && fv->k != vkind::none && !scalar_of(fv, v, integral, "the pad value")) return;
        const std::int32_t first = b_.g.size();
        const tensor r = tensor{&b_, abuf_[0]}.constant_pad(std::span<const index_t>(pads, pbuf_.size()), v);
        if (!b_.g.error.ok()) { locate_builder_error(at, name); return; }
        for (std::int32_t j = first, c = 0; j < r.id; ++j, ++c) {
          text_buf<max_name + 16> tn;
          tn << name << "_pad" << c;
          b_.g[j].name = name_t(tn.view());
        }
        last_value(name, t, false, -1, r.id, at);
        return;
      }
      case lower::unfold: {
        // x.unfold(dim, size, step): tensor::unfold's as_strided view.
        if (!tensor_arg(call, 0, "self", at) || !int_arg(call, 1, "dimension", required, x0, at) ||
            !int_arg(call, 2, "size", required, x1, at) || !int_arg(call, 3, "step", required, x2, at))
          return;
        if (!x0.is_static() || !x1.is_static() || !x2.is_static()) {
          fail(at, "node '", name, "': unfold's dimension, size and step must be numbers");
          return;
        }
        const std::int32_t first = b_.g.size();
        const tensor r = tensor{&b_, abuf_[0]}.unfold(x0.value(), x1.value(), x2.value());
        adopt(name, first, r.id, t, at);
        return;
      }
      case lower::rev: {
        // flip / rev: tensor::flip's nodes, all but the last named <name>_rev<k>.
        if (!tensor_arg(call, 0, "self", at) || !list_arg(call, 1, "dims", at)) return;
        index_t dims[max_rank]{};
        if (pbuf_.size() > static_cast<std::size_t>(max_rank)) { fail(at, "node '", name, "': more dims than the input has"); return; }
        for (std::size_t j = 0; j < pbuf_.size(); ++j) {
          if (!pbuf_[j].is_static()) { fail(at, "node '", name, "': flip's dims must be numbers"); return; }
          dims[j] = pbuf_[j].value();
        }
        const std::int32_t first = b_.g.size();
        const tensor r = tensor{&b_, abuf_[0]}.flip(std::span<const index_t>(dims, pbuf_.size()));
        if (!b_.g.error.ok()) { locate_builder_error(at, name); return; }
        for (std::int32_t j = first, c = 0; j < r.id; ++j, ++c) {
          text_buf<max_name + 16> tn;
          tn << name << "_rev" << c;
          b_.g[j].name = name_t(tn.view());
        }
        last_value(name, t, false, -1, r.id, at);
        return;
      }
      case lower::iota: {
        // prims.iota(length, *, start, step, dtype, ...) as builder::iota builds it: <name>_steps (a
        // full of step), <name>_sums (its cumsum) and the add of start - step (then a convert to an
        // integer dtype other than i64, the add named <name>_i64).
        if (!int_arg(call, 0, "length", required, x0, at)) return;
        scalar_value start = scalar_value::integer(0), step = scalar_value::integer(1);
        for (int j = 0; j < 2; ++j) {
          const value* v = arg(call, 99, j ? "step" : "start");
          if (!v || v->k == vkind::none) continue;
          bool integral = false;
          if (!scalar_of(v, j ? step : start, integral, j ? "iota's step" : "iota's start")) return;
          if (!integral) { fail(v->at, "node '", name, "': iota's start and step are integers (PyTorch's iota makes integers only)"); return; }
        }
        dtype d = dtype::i64;
        if (const value* dt = arg(call, 99, "dtype"); dt && dt->k != vkind::none) {
          if (!dtype_arg(dt, d)) return;
          if (!is_integral(d)) { fail(dt->at, "node '", name, "': iota of a non-integer dtype (PyTorch's iota makes integers only)"); return; }
        }
        const std::int32_t steps = part(name, "steps", op_kind::full, {}, {x0}, static_cast<std::int32_t>(dtype::i64), step, at);
        const std::int32_t sums = part(name, "sums", op_kind::cumsum, {steps}, {sym_expr(0)}, 0, 0.0, at);
        const scalar_value off = scalar_value::integer(builder::iota_offset(start.i, step.i));
        if (d == dtype::i64) { last(name, t, op_kind::add, {sums}, 2, off, at); return; }
        const std::int32_t r = part(name, "i64", op_kind::add, {sums}, 2, off, at);
        last(name, t, op_kind::convert, {r}, static_cast<std::int32_t>(d), 0.0, at);
        return;
      }
      case lower::arg_reduce: case lower::max_dim: {
        lower_arg_reduce(name, t, call, k, row->how == lower::max_dim, at);
        return;
      }
      case lower::attention: {
        lower_attention(name, call, at);
        return;
      }
      case lower::product: {  // beta and alpha as the params (ops/products.hpp)
        const bool acc = k == op_kind::addmm || k == op_kind::baddbmm, batched = k == op_kind::bmm || k == op_kind::baddbmm;
        if (!tensor_arg(call, 0, "self", at) || !tensor_arg(call, 1, acc ? (batched ? "batch1" : "mat1") : "mat2", at) ||
            (acc && !tensor_arg(call, 2, batched ? "batch2" : "mat2", at)))
          return;
        if (acc) {
          for (std::string_view key : {std::string_view("beta"), std::string_view("alpha")}) {
            const value* v = arg(call, 99, key);
            scalar_value s = 1.0;
            bool integral = false;
            if (v && !scalar_of(v, s, integral, key)) return;
            pbuf_.push_back(product_param(s.d));
          }
        }
        emit_bufs(name, t, k, 0, 0.0, at);
        return;
      }
      case lower::cat: {
        if (!tensor_list(call, 0, "tensors", at, false) || !int_arg(call, 1, "dim", 0, x0, at)) return;
        pbuf_.push_back(x0);
        emit_bufs(name, t, k, 0, 0.0, at);
        return;
      }
      case lower::foreach: {
        if (!is_one(arg(call, 99, "alpha"))) {  // _foreach_add(xs, ys, alpha=a): fma per element
          lower_foreach_elems(name, call, k == op_kind::foreach_add_ ? op_kind::add_ : op_kind::add, row->name, at);
          return;
        }
        if (!tensor_list(call, 0, "self", at, false) || !alpha_is_one(call)) return;
        auto n = static_cast<std::int32_t>(abuf_.size());
        const value* o = arg(call, 1, "other");
        if (!o) o = arg(call, 1, "scalar");
        if (o && o->k == vkind::list) {
          if (!tensor_list(call, 1, o->key.empty() ? "other" : o->key, at, false)) return;
          emit_bufs(name, t, k, n, 0.0, at);
          return;
        }
        scalar_value s{};
        bool integral = false;
        if (!scalar_of(o, s, integral, "the scalar operand")) return;
        emit_bufs(name, t, k, n, s, at);
        return;
      }
      case lower::all_reduce: case lower::reduce_scatter: {
        if (!tensor_arg(call, 0, "input", at)) return;
        const value* op = arg(call, 1, "reduce_op");
        std::int32_t r = -1;
        if (op && op->k == vkind::string)
          r = op->text == "sum" ? 0 : op->text == "max" ? 1 : op->text == "min" ? 2 : -1;
        if (r < 0) {
          fail(op ? op->at : at, "a collective reduces with 'sum', 'max' or 'min' only (PyTorch's avg and product are not supported)");
          return;
        }
        if (row->how == lower::reduce_scatter) {
          if (!int_arg(call, 2, "group_size", required, x0, at)) return;
          pbuf_.push_back(x0);
        }
        emit_bufs(name, t, k, r, 0.0, at);
        return;
      }
      case lower::broadcast: {
        if (!tensor_arg(call, 0, "input", at) || !int_arg(call, 1, "src", required, x0, at)) return;
        if (!x0.is_static()) { fail(at, "broadcast's source rank must be a number"); return; }
        emit_bufs(name, t, k, static_cast<std::int32_t>(x0.value()), 0.0, at);
        return;
      }
      case lower::all_gather: {
        if (!tensor_arg(call, 0, "input", at) || !int_arg(call, 1, "group_size", required, x0, at)) return;
        pbuf_.push_back(x0);
        emit_bufs(name, t, k, 0, 0.0, at);
        return;
      }
      case lower::factory: case lower::full: {
        if (!list_arg(call, 0, "size", at)) return;
        scalar_value s = k == op_kind::ones ? 1.0 : 0.0;
        bool integral = false;
        dtype d = dtype::f32;
        if (row->how == lower::full) {
          const value* fv = arg(call, 1, "fill_value");
          if (fv && fv->is_bool) { s = scalar_value::boolean(fv->i != 0); d = dtype::b8; }
          else if (!scalar_of(fv, s, integral, "the fill value")) return;
          else if (integral) d = dtype::i64;  // PyTorch infers the dtype of full from the value
        }
        const value* dt = arg(call, 99, "dtype");
        if (dt && dt->k != vkind::none && !dtype_arg(dt, d)) return;
        emit_bufs(name, t, k, static_cast<std::int32_t>(d), s, at);
        return;
      }
      case lower::scalar_tensor: {  // x[i] = 0.5 traces as index_put(x, [i], scalar_tensor(0.5))
        scalar_value s{};
        bool integral = false;
        dtype d = dtype::f32;  // PyTorch's default dtype, whatever the value
        if (!scalar_of(arg(call, 0, "s"), s, integral, "the value")) return;
        const value* dt = arg(call, 99, "dtype");
        if (dt && dt->k != vkind::none && !dtype_arg(dt, d)) return;
        emit_bufs(name, t, k, static_cast<std::int32_t>(d), s, at);
        return;
      }
      case lower::convert: {
        if (!tensor_arg(call, 0, "self", at)) return;
        const value* dt = arg(call, 1, "dtype");
        dtype d{};
        if (!dt || dt->k == vkind::none) { fail(at, "_to_copy without a dtype is not supported"); return; }
        if (!dtype_arg(dt, d)) return;
        emit_bufs(name, t, k, static_cast<std::int32_t>(d), 0.0, at);
        return;
      }
      case lower::sym_size: {
        if (!tensor_arg(call, 0, "self", at) || !int_arg(call, 1, "dim", required, x0, at)) return;
        if (!x0.is_static()) { fail(at, "sym_size needs a static dim"); return; }
        const tensor_meta& xm = b_.g.meta(abuf_[0]);
        index_t d = x0.value() < 0 ? x0.value() + xm.rank : x0.value();
        if (d < 0 || d >= xm.rank) { fail(at, "sym_size dim out of range"); return; }
        sym_expr size = xm.size[d];
        pbuf_.push_back(x0);
        std::int32_t id = b_.add(k, std::span<const std::int32_t>(abuf_.data(), 1), std::span<const sym_expr>(pbuf_.data(), 1));
        b_.g[id].name = name_t(name);
        if (!b_.g.error.ok()) { locate_builder_error(at); return; }
        entry e{};
        e.name = name;
        e.node = id;
        e.is_sym = true;
        e.sym = size;
        if (t.present && (!t.is_sym || !(t.sym == size))) { mismatch_sym(name, t, size); return; }
        define(e, at);
        return;
      }
      case lower::fill: {
        if (!tensor_arg(call, 0, "self", at)) return;
        scalar_value s{};
        bool integral = false;
        if (!scalar_of(arg(call, 1, "value"), s, integral, "the fill value")) return;
        emit_bufs(name, t, k, 0, s, at);
        return;
      }
      case lower::auto_functionalized: lower_user_op(name, t, call, at); return;
      case lower::control: lower_control(name, t, call, k, at); return;
    }
  }

  // torch.ops.higher_order.cond(pred, true_graph_0, false_graph_0, (operands...)) and
  // while_loop(cond_graph, body_graph, (carried...), (additional...)): each graph module is parsed
  // as a graph of its own (its own placeholders and output) and held by the node (ops/control.hpp).
  constexpr void lower_control(std::string_view name, const annotation& t, const value& call, op_kind k, position at) {
    const bool is_cond = k == op_kind::cond;
    const int first_graph = is_cond ? 1 : 0;
    abuf_.clear();
    pbuf_.clear();
    if (is_cond) {
      const value* p = arg(call, 0, "pred");
      if (!p) { fail(at, "node '", name, "': cond expects (pred, true_fn, false_fn, operands)"); return; }
      const std::int32_t pred = node_of(*p, "the predicate");
      if (pred < 0) return;
      abuf_.push_back(pred);
    }
    // The operand tuples: cond's operands; while_loop's carried then additional values.
    std::int32_t carried = 0;
    for (int which = 0; which < (is_cond ? 1 : 2); ++which) {
      const value* l = arg(call, first_graph + 2 + which, {});
      if (!l) {
        if (which == 1) break;  // while_loop without additional inputs
        fail(at, "node '", name, "': expected a tuple of operands after the graph modules");
        return;
      }
      if (l->k != vkind::list) { fail(l->at, "node '", name, "': expected a tuple of operands"); return; }
      for (std::int32_t j = 0; j < l->count; ++j) {
        const value& x = pool_[static_cast<std::size_t>(l->first + j)];
        if (x.k != vkind::name) {
          fail(x.at, "node '", name, "': an operand that is not a tensor (a literal or a symbolic value); ctfx's subgraphs take tensors");
          return;
        }
        const std::int32_t id = node_of(x, "an operand");
        if (id < 0) return;
        abuf_.push_back(id);
      }
      if (which == 0) carried = l->count;
    }
    ir graphs[2];
    for (int w = 0; w < 2; ++w) {
      const value* v = arg(call, first_graph + w, {});
      const entry* e = v && v->k == vkind::name ? lookup(v->text) : nullptr;
      if (!e || e->module < 0) {
        fail(v ? v->at : at, "node '", name, "': expected a graph module (`name = self.name`, a nested class of the text)");
        return;
      }
      const module_block& m = modules_[static_cast<std::size_t>(e->module)];
      fx_parse_result r = parser(m.text, customs_).run();
      if (!r.ok()) {  // the module's error, placed in the whole text
        std::string_view msg = r.error.message();
        if (msg.starts_with("fx line ")) {
          const std::size_t colon = msg.find(": ");
          if (colon != std::string_view::npos) msg.remove_prefix(colon + 2);
        }
        const std::int32_t line = m.line + (r.line > 0 ? r.line - 1 : 0);
        text_buf<200> text;
        text << "fx line " << static_cast<int>(line) << ", column " << static_cast<int>(r.column) << ": in graph module '" << m.name
             << "': " << msg;
        b_.g.fail(r.error.r, -1, text.view());
        err_line_ = line;
        err_col_ = r.column;
        return;
      }
      graphs[w] = static_cast<ir&&>(r.graph);
    }
    const auto aux = static_cast<std::int32_t>(b_.g.subgraphs.size());
    b_.g.subgraphs.push_back(static_cast<ir&&>(graphs[0]));
    b_.g.subgraphs.push_back(static_cast<ir&&>(graphs[1]));
    if (!is_cond) pbuf_.push_back(sym_expr(static_cast<index_t>(carried)));
    emit_bufs(name, t, k, aux, 0.0, at);
  }

  constexpr void append_op_name(std::string_view callee) {
    // fail() was called with "unsupported op '"; add the name and the closing quote.
    diagnostic d = b_.g.error;
    text_buf<200> m;
    std::string_view msg = d.message();
    std::size_t tag = msg.find(" [rule");
    m << msg.substr(0, tag) << callee << "'" << msg.substr(tag);
    b_.g.error.set_message(m.view());
  }

  // higher_order.auto_functionalized(torch.ops.ns.op.default, x = a, out = b): the keywords are the
  // op's Tensor arguments, by the names its signature gives them.
  // The user op of "ns.op.overload" (or "ns.op"), or null.
  constexpr const fx_custom* find_custom(std::string_view q) const {
    std::size_t last = q.rfind('.');
    std::string_view qualified = last == std::string_view::npos ? q : q.substr(0, last);
    const fx_custom* found = nullptr;
    for (const auto& cu : customs_)
      if (custom_name_matches(cu.schema.name.view(), qualified)) found = &cu;
    return found;
  }
  constexpr std::int32_t custom_index(const fx_custom& cu) {
    auto& cs = b_.g.customs;
    for (std::size_t j = 0; j < cs.size(); ++j) if (cs[j].name == cu.schema.name) return static_cast<std::int32_t>(j);
    cs.push_back(cu.schema);
    return static_cast<std::int32_t>(cs.size()) - 1;
  }

  // torch.ops.ns.op.default(x, ...): a user op that mutates nothing, called directly. Its tensor
  // arguments by position or by the names its signature gives them. One result: the node is that
  // result (the call's tuple, then element 0 with the printed layout); several: the node is the
  // tuple, read with operator.getitem.
  // ----- decompositions into fma and the elementwise ops (PyTorch's CPU kernels' own arithmetic) -----
  static constexpr bool is_one(const value* a) {
    return !a || a->k == vkind::none || (a->k == vkind::integer && !a->is_bool && a->i == 1) || (a->k == vkind::real && a->d == 1.0);
  }
  // A node of a decomposition, named <name>_<suffix>, with no entry of its own; -1 on an error.
  constexpr std::int32_t part(std::string_view name, std::string_view suffix, op_kind k, std::initializer_list<std::int32_t> ids,
                              std::int32_t aux, scalar_value s, position at) {
    if (stopped()) return -1;
    for (auto id : ids) if (id < 0) return -1;
    const std::int32_t id = b_.add(k, ids, {}, aux, s);
    if (!b_.g.error.ok()) { locate_builder_error(at, name); return -1; }
    text_buf<max_name + 16> tn;
    tn << name;
    if (!suffix.empty()) tn << '_' << suffix;
    b_.g[id].name = name_t(tn.view());
    return id;
  }
  // A part with parameters (sizes, dims).
  constexpr std::int32_t part(std::string_view name, std::string_view suffix, op_kind k, std::initializer_list<std::int32_t> ids,
                              std::initializer_list<sym_expr> params, std::int32_t aux, scalar_value s, position at) {
    if (stopped()) return -1;
    for (auto id : ids) if (id < 0) return -1;
    const std::int32_t id = b_.add(k, ids, params, aux, s);
    if (!b_.g.error.ok()) { locate_builder_error(at, name); return -1; }
    text_buf<max_name + 16> tn;
    tn << name << '_' << suffix;
    b_.g[id].name = name_t(tn.view());
    return id;
  }
  // clone(x, memory_format=torch.channels_last / channels_last_3d) (also x.contiguous(memory_format=...)):
  // the channels-last layout (C innermost, then W, H (D), N) as a permute that moves C last
  // (<name>_cl), its row-major copy (<name>_copy: clone with contiguous_format) and the permute back
  // (the line's node, a view of the copy with PyTorch's channels-last strides).
  constexpr void lower_clone_channels_last(std::string_view name, const annotation& t, int rank, position at) {
    const std::int32_t x = abuf_[0];
    if (b_.g.meta(x).rank != rank) {
      fail(at, "node '", name,
           rank == 4 ? "': channels_last needs a 4-d tensor (PyTorch raises otherwise)" : "': channels_last_3d needs a 5-d tensor (PyTorch raises otherwise)");
      return;
    }
    const std::int32_t p = rank == 4 ? part(name, "cl", op_kind::permute, {x}, {0, 2, 3, 1}, 0, scalar_value{}, at)
                                     : part(name, "cl", op_kind::permute, {x}, {0, 2, 3, 4, 1}, 0, scalar_value{}, at);
    const std::int32_t c = part(name, "copy", op_kind::clone, {p}, 1, scalar_value{}, at);
    if (c < 0) return;
    abuf_.clear();
    abuf_.push_back(c);
    pbuf_.clear();
    if (rank == 4) for (index_t d : {0, 3, 1, 2}) pbuf_.push_back(sym_expr(d));
    else for (index_t d : {0, 4, 1, 2, 3}) pbuf_.push_back(sym_expr(d));
    emit_bufs(name, t, op_kind::permute, 0, 0.0, at);
  }
  // A 0-d full of dtype dt holding s (PyTorch converts a Scalar alpha, value or weight to the dtype).
  constexpr std::int32_t number(std::string_view name, std::string_view suffix, dtype dt, scalar_value s, position at) {
    return part(name, suffix, op_kind::full, {}, static_cast<std::int32_t>(dt), s, at);
  }
  // The decomposition's last node: under the call's own name (an entry, its annotation checked).
  constexpr void last(std::string_view name, const annotation& t, op_kind k, std::initializer_list<std::int32_t> ids,
                      std::int32_t aux, scalar_value s, position at) {
    if (stopped()) return;
    for (auto id : ids) if (id < 0) return;
    abuf_.clear();
    pbuf_.clear();
    for (auto id : ids) abuf_.push_back(id);
    emit_bufs(name, t, k, aux, s, at);
  }
  // An in-place form (add_, addcmul_, lerp_, ...): the functional result r copied into self.
  constexpr void last_value(std::string_view name, const annotation& t, bool inplace, std::int32_t self,
                            std::int32_t r, position at) {
    if (stopped() || r < 0) return;
    if (!inplace) {  // r is already the result: give it the call's name
      b_.g[r].name = name_t(name);
      entry e{};
      e.name = name;
      e.node = r;
      if (!define(e, at)) return;
      check_meta(r, t, at);
      return;
    }
    last(name, t, op_kind::copy_, {self, r}, 0, 0.0, at);
  }
  constexpr dtype promoted(std::initializer_list<std::int32_t> ids) const {
    dtype r = dtype::b8;
    bool first = true, dims = false;
    for (auto id : ids) {
      const tensor_meta& m = b_.g.meta(id);
      r = first ? m.dt : result_type(r, dims, m.dt, m.rank > 0);
      dims = dims || m.rank > 0;
      first = false;
    }
    return r;
  }
  // Whether ctfx reproduces PyTorch's op on dtype dt bit for bit; else an error naming the node.
  // f16/bf16: PyTorch's CPU kernels compute these in float and round once in their vectorized loop,
  // but in c10::Half/BFloat16 arithmetic (a rounding after each step) in the scalar tail (the last
  // elements of a tensor, of a thread's chunk): the result depends on the element's position.
  constexpr bool exact_on(std::string_view name, std::string_view op, dtype dt, bool ints, position at) {
    text_buf<200> m;
    if (dt == dtype::f16 || dt == dtype::bf16)
      m << "': " << op << " on " << name_of(dt)
        << " is refused: PyTorch rounds it once in float in its vector loop, per step in its scalar tail (position-dependent); convert to f32";
    else if (dt == dtype::b8 || (!ints && !is_floating(dt)))
      m << "': " << op << " on " << name_of(dt) << " is not supported";
    else
      return true;
    fail(at, "node '", name, m.view());
    return false;
  }
  constexpr std::int32_t tensor_of(const value& call, int pos, std::string_view key) {
    const value* v = arg(call, pos, key);
    if (!v) { fail(c_.pos(), "missing tensor argument '", key, "'"); return -1; }
    return node_of(*v, key);
  }

  // A number argument (v: the call's value; absent or None: `dflt`).
  constexpr bool number_arg(const value* v, scalar_value& s, bool& integral, std::string_view what, scalar_value dflt) {
    if (!v || v->k == vkind::none) { s = dflt; integral = dflt.exact_int(); return true; }
    return scalar_of(v, s, integral, what);
  }
  static constexpr scalar_value negated(scalar_value a) {
    return a.exact_int() ? scalar_value::integer(static_cast<std::int64_t>(0ull - static_cast<std::uint64_t>(a.i))) : scalar_value(-a.d);
  }

  // x + a * y = fma(y, a, x) rounded once, a in the dtype (integers modulo 2^bits), as PyTorch's
  // add_kernel; sub's alpha negated. The node named `base`.
  constexpr std::int32_t build_alpha(std::string_view base, std::int32_t x, std::int32_t y, scalar_value a, bool integral,
                                     dtype dt, position at) {
    if (!exact_on(base, "alpha", dt, true, at)) return -1;
    if (!is_floating(dt) && !integral) { fail(at, "node '", base, "': an integer add/sub takes an integer alpha"); return -1; }
    const std::int32_t w = number(base, "alpha", dt, a, at);
    return part(base, {}, op_kind::fma, {y, w, x}, 0, 0.0, at);
  }
  // addcmul: fma(v * t1, t2, s), v * t1 rounded in the dtype; addcdiv: s + (v * t1) / t2, each step
  // rounded (PyTorch's CPU kernels). No mul for v = 1. The node named `base`.
  constexpr std::int32_t build_addc(std::string_view base, std::int32_t s, std::int32_t t1, std::int32_t t2, scalar_value v,
                                    bool integral, bool div, dtype dt, position at) {
    if (!exact_on(base, div ? "addcdiv" : "addcmul", dt, !div, at)) return -1;
    if (!is_floating(dt) && !integral) { fail(at, "node '", base, "': an integer addcmul takes an integer value"); return -1; }
    std::int32_t m = t1;
    if (!v.equals(1.0)) m = part(base, "value", op_kind::mul, {t1}, integral ? 2 : 1, v, at);
    if (!div) return part(base, {}, op_kind::fma, {m, t2, s}, 0, 0.0, at);
    const std::int32_t q = part(base, "div", op_kind::div, {m, t2}, 0, 0.0, at);
    return part(base, {}, op_kind::add, {s, q}, 0, 0.0, at);
  }
  // lerp(s, e, w), d = e - s: |w| < 0.5 ? fma(w, d, s) : fma(-d, 1 - w, e), 1 - w rounded in the
  // dtype (PyTorch's lerp). A number w (w < 0: a tensor) picks its branch here; a tensor w per
  // element (both computed, then where). The node named `base`.
  constexpr std::int32_t build_lerp(std::string_view base, std::int32_t s, std::int32_t e, std::int32_t w, scalar_value ws,
                                    dtype dt, position at) {
    if (!exact_on(base, "lerp", dt, false, at)) return -1;
    const std::int32_t d = part(base, "diff", op_kind::sub, {e, s}, 0, 0.0, at);
    if (w < 0) {
      const double wd = dt == dtype::f32 ? static_cast<double>(ws.as<float>()) : ws.as<double>();
      if ((wd < 0 ? -wd : wd) < 0.5) return part(base, {}, op_kind::fma, {number(base, "weight", dt, scalar_value(wd), at), d, s}, 0, 0.0, at);
      const double om = dt == dtype::f32 ? static_cast<double>(1.0f - static_cast<float>(wd)) : 1.0 - wd;
      const std::int32_t nd = part(base, "neg", op_kind::neg, {d}, 0, 0.0, at);
      return part(base, {}, op_kind::fma, {nd, number(base, "one_minus_weight", dt, scalar_value(om), at), e}, 0, 0.0, at);
    }
    const std::int32_t aw = part(base, "abs", op_kind::abs, {w}, 0, 0.0, at);
    const std::int32_t low = part(base, "low", op_kind::lt, {aw}, 1, scalar_value(0.5), at);
    const std::int32_t lo = part(base, "fma_low", op_kind::fma, {w, d, s}, 0, 0.0, at);
    const std::int32_t nd = part(base, "neg", op_kind::neg, {d}, 0, 0.0, at);
    const std::int32_t nw = part(base, "neg_weight", op_kind::neg, {w}, 0, 0.0, at);
    const std::int32_t om = part(base, "one_minus_weight", op_kind::add, {nw}, 1, scalar_value(1.0), at);  // -w + 1 = 1 - w
    const std::int32_t hi = part(base, "fma_high", op_kind::fma, {nd, om, e}, 0, 0.0, at);
    return part(base, {}, op_kind::where, {low, lo, hi}, 0, 0.0, at);
  }

  // add/sub (and add_/sub_) with an alpha other than 1, other a tensor.
  constexpr void lower_alpha(std::string_view name, const annotation& t, const value& call, op_kind k, const value& al, position at) {
    const std::int32_t x = tensor_of(call, 0, "self"), y = tensor_of(call, 1, "other");
    if (x < 0 || y < 0) return;
    scalar_value a{};
    bool integral = false;
    if (!scalar_of(&al, a, integral, "alpha")) return;
    const bool inplace = is_mutating(k);
    if ((inplace ? facts(k).twin : k) == op_kind::sub) a = negated(a);
    const dtype dt = inplace ? b_.g.meta(x).dt : promoted({x, y});
    text_buf<max_name + 8> bn;  // in place: the value <name>_value, copied into self by <name>
    bn << name << (inplace ? "_value" : "");
    last_value(name, t, inplace, x, build_alpha(bn.view(), x, y, a, integral, dt, at), at);
  }
  constexpr void lower_addc(std::string_view name, const annotation& t, const value& call, bool div, bool inplace, position at) {
    const std::int32_t s = tensor_of(call, 0, "self"), t1 = tensor_of(call, 1, "tensor1"), t2 = tensor_of(call, 2, "tensor2");
    if (s < 0 || t1 < 0 || t2 < 0) return;
    scalar_value v{};
    bool integral = false;
    if (!number_arg(arg(call, 3, "value"), v, integral, "value", scalar_value::integer(1))) return;
    const dtype dt = inplace ? b_.g.meta(s).dt : promoted({s, t1, t2});
    text_buf<max_name + 8> bn;
    bn << name << (inplace ? "_value" : "");
    last_value(name, t, inplace, s, build_addc(bn.view(), s, t1, t2, v, integral, div, dt, at), at);
  }
  constexpr void lower_lerp(std::string_view name, const annotation& t, const value& call, bool inplace, position at) {
    const std::int32_t s = tensor_of(call, 0, "self"), e = tensor_of(call, 1, "end");
    if (s < 0 || e < 0) return;
    const value* wv = arg(call, 2, "weight");
    if (!wv) { fail(at, "node '", name, "': lerp needs a weight"); return; }
    std::int32_t w = -1;
    scalar_value ws{};
    bool integral = false;
    if (wv->k == vkind::name) { if ((w = node_of(*wv, "weight")) < 0) return; }
    else if (!scalar_of(wv, ws, integral, "weight")) return;
    const dtype dt = inplace ? b_.g.meta(s).dt : w >= 0 ? promoted({s, e, w}) : promoted({s, e});
    text_buf<max_name + 8> bn;
    bn << name << (inplace ? "_value" : "");
    last_value(name, t, inplace, s, build_lerp(bn.view(), s, e, w, ws, dt, at), at);
  }

  // prims.fma(a, b, c) = a * b + c rounded once (Inductor's lowering; the prim's eager reference
  // rounds twice); a number b is a 0-d full of a and c's dtype.
  constexpr void lower_fma(std::string_view name, const annotation& t, const value& call, position at) {
    const std::int32_t a = tensor_of(call, 0, "a"), c = tensor_of(call, 2, "c");
    if (a < 0 || c < 0) return;
    const value* bv = arg(call, 1, "b");
    if (!bv) { fail(at, "node '", name, "': fma needs b"); return; }
    std::int32_t b;
    if (bv->k == vkind::name) b = node_of(*bv, "b");
    else {
      scalar_value v{};
      bool integral = false;
      if (!scalar_of(bv, v, integral, "fma's b")) return;
      b = number(name, "b", promoted({a, c}), v, at);
    }
    last(name, t, op_kind::fma, {a, b, c}, 0, 0.0, at);
  }

  // A list argument of tensors, as ids.
  constexpr bool ids_of(const value& call, int pos, std::string_view key, std::vector<std::int32_t>& out, position at) {
    abuf_.clear();
    if (!tensor_list(call, pos, key, at, false)) return false;
    out.assign(abuf_.begin(), abuf_.end());
    return true;
  }
  // gather's and scatter's dim (abuf_[0] the input): checked against its rank and pushed, made non-negative.
  constexpr bool along_dim(std::string_view name, const sym_expr& dim, position at) {
    const std::int32_t rank = b_.g.meta(abuf_[0]).rank;
    if (rank < 1 || !dim.is_static() || dim.value() < -rank || dim.value() >= rank) {
      fail(at, "node '", name, "': the dim of gather or scatter is out of range (or the input is 0-d, or the dim symbolic)");
      return false;
    }
    pbuf_.push_back(sym_expr(dim.value() < 0 ? dim.value() + rank : dim.value()));
    return true;
  }
  // scatter.src / .value, scatter_add and scatter_reduce.two (callee: the overload's name) and their
  // in-place forms: the node scatter(self, src, index) along dim. scatter_add is scatter_reduce with
  // sum and include_self; both are built as the builder's scatter_reduce builds them (f16 / bf16
  // sums on f32 copies, mean divided by a count), the nodes before the last named <name>__<k>.
  // The in-place forms take only what is one node (assign; sum, prod, amax, amin without f16 /
  // bf16 widening). A number (.value) becomes <name>_value, a 0-d full of self's dtype, expanded
  // to the index's shape as <name>_src.
  constexpr void lower_scatter(std::string_view name, const annotation& t, op_kind k, std::string_view callee, const value& call, position at) {
    sym_expr dim;
    if (!tensor_arg(call, 0, "self", at) || !int_arg(call, 1, "dim", INT64_MIN, dim, at) || !tensor_arg(call, 2, "index", at)) return;
    if (!along_dim(name, dim, at)) return;
    const std::int32_t self = abuf_[0], idx = abuf_[1];
    const bool add = callee.starts_with("aten.scatter_add");
    const bool reduce = add || callee.starts_with("aten.scatter_reduce");
    std::string_view how = "sum";
    bool include_self = true;
    if (reduce && !add) {
      const value* r = arg(call, 4, "reduce");
      const value* incl = arg(call, 5, "include_self");
      if (!r || r->k != vkind::string || detail::scatter_combine_of(r->text) == scatter_reduce_mask) {
        fail(at, "node '", name, "': scatter_reduce's reduce must be one of sum, prod, mean, amax, amin");
        return;
      }
      how = r->text;
      if (incl && incl->k != vkind::integer) { fail(at, "node '", name, "': scatter_reduce's include_self must be True or False"); return; }
      include_self = !incl || incl->i != 0;
    }
    std::int32_t src = -1;
    if (callee.ends_with(".value")) {
      scalar_value v{};
      bool integral = false;
      if (!scalar_of(arg(call, 3, "value"), v, integral, "scatter's value")) return;
      const sym_expr dim_param = pbuf_[0];
      abuf_.clear();
      pbuf_.clear();
      text_buf<max_name + 8> fill;
      fill << name << "_value";
      emit_bufs(fill.view(), annotation{}, op_kind::full, static_cast<std::int32_t>(b_.g.meta(self).dt), v, at);
      if (stopped()) return;
      abuf_.push_back(b_.g.size() - 1);
      const tensor_meta im = b_.g.meta(idx);
      for (int d = 0; d < im.rank; ++d) pbuf_.push_back(im.size[d]);
      text_buf<max_name + 8> ex;
      ex << name << "_src";
      emit_bufs(ex.view(), annotation{}, op_kind::expand, 0, 0.0, at);
      if (stopped()) return;
      src = b_.g.size() - 1;
      pbuf_.clear();
      pbuf_.push_back(dim_param);
    } else {
      const value* v = arg(call, 3, "src");
      if (!v) { fail(at, "node '", name, "': scatter needs a src"); return; }
      if ((src = node_of(*v, "src")) < 0) return;
    }
    if (!reduce) {
      abuf_.clear();
      abuf_.push_back(self);
      abuf_.push_back(src);
      abuf_.push_back(idx);
      emit_bufs(name, t, k, 0, 0.0, at);
      return;
    }
    const dtype dt = b_.g.meta(self).dt;
    if (is_mutating(k) && (how == "mean" || ((dt == dtype::f16 || dt == dtype::bf16) && (how == "sum" || how == "prod")))) {
      fail(at, "node '", name,
           "': this in-place scatter reduction takes more than one node (f16 / bf16 accumulate in f32, mean divides by a count); "
           "ctfx takes its functional form (scatter_reduce / scatter_add), which PyTorch's functionalized graphs use");
      return;
    }
    const std::int32_t first = b_.g.size();
    const tensor r = detail::scatter_reduce_impl(k, tensor{&b_, self}, pbuf_[0].value(), tensor{&b_, idx}, tensor{&b_, src}, how, include_self);
    adopt(name, first, r.id, t, at);
  }
  // Names the nodes a builder composite added (ids first.. : the last, `id`, is the FX node `name`,
  // the others <name>__<k>) and defines `name` as emit does.
  constexpr void adopt(std::string_view name, std::int32_t first, std::int32_t id, const annotation& t, position at) {
    if (!b_.g.error.ok()) { locate_builder_error(at, name); return; }
    for (std::int32_t i = first, k = 0; i < b_.g.size(); ++i) {
      if (i == id) continue;
      text_buf<max_name + 16> n;
      n << name << "__" << k++;
      b_.g[i].name = name_t(n.view());
    }
    b_.g[id].name = name_t(name);
    entry e{};
    e.name = name;
    e.node = id;
    if (!define(e, at)) return;
    check_meta(id, t, at);
  }

  // The list ops lowered element by element (callee: the overload's name), and their in-place forms
  // (k mutating): _foreach_sub / _foreach_div (List, Scalar), _foreach_mul.Tensor, _foreach_add /
  // _foreach_sub with alpha (fma), _foreach_addcmul / _foreach_addcdiv (Scalar), _foreach_lerp
  // (Scalar, List), _foreach_sqrt. Element j is the node <name>_<j>; the tuple is read with [k]
  // (lists_); in place, each element is then copied into its self (the graph's epilogue).
  constexpr void lower_foreach_elems(std::string_view name, const value& call, op_kind k, std::string_view callee, position at) {
    std::vector<std::int32_t> xs, ys, zs;
    if (!ids_of(call, 0, "self", xs, at)) return;
    const bool inplace = is_mutating(k) || callee.find("_.") != std::string_view::npos;  // _foreach_addcmul_.Scalar
    const op_kind base = is_mutating(k) ? facts(k).twin : k;
    const bool addc = callee.find("_foreach_addc") != std::string_view::npos;
    const bool lerp = callee.find("_foreach_lerp") != std::string_view::npos;
    const bool unary = is_unary(base);
    std::int32_t other = -1;
    scalar_value sv{};
    bool integral = false;
    if (addc) {
      if (!ids_of(call, 1, "tensor1", ys, at) || !ids_of(call, 2, "tensor2", zs, at)) return;
      if (!number_arg(arg(call, 3, "value"), sv, integral, "value", scalar_value::integer(1))) return;
    } else if (lerp) {
      if (!ids_of(call, 1, "tensors1", ys, at)) return;
      const value* wv = arg(call, 2, "weight");
      if (!wv) wv = arg(call, 2, "weights");
      if (wv && wv->k == vkind::list) { if (!ids_of(call, 2, wv->key.empty() ? "weights" : wv->key, zs, at)) return; }
      else if (!scalar_of(wv, sv, integral, "weight")) return;
    } else if (!unary) {
      const value* o = arg(call, 1, "other");
      if (!o) o = arg(call, 1, "scalar");
      if (!o) { fail(at, "node '", name, "': a list op needs its second operand"); return; }
      if (o->k == vkind::list) { if (!ids_of(call, 1, o->key.empty() ? "other" : o->key, ys, at)) return; }
      else if (o->k == vkind::name) { if ((other = node_of(*o, "other")) < 0) return; }
      else if (!scalar_of(o, sv, integral, "the scalar operand")) return;
    }
    if ((!ys.empty() && ys.size() != xs.size()) || (!zs.empty() && zs.size() != xs.size())) {
      fail(at, "node '", name, "': the lists differ in length");
      return;
    }
    const value* al = arg(call, 99, "alpha");
    const bool alpha = !is_one(al);
    scalar_value a{};
    bool ai = false;
    if (alpha) {
      if (ys.empty() || addc || lerp) { fail(al->at, "node '", name, "': alpha with a list operand only"); return; }
      if (!scalar_of(al, a, ai, "alpha")) return;
      if (base == op_kind::sub) a = negated(a);
    }
    list_items l{static_cast<std::int32_t>(list_nodes_.size()), static_cast<std::int32_t>(xs.size())};
    for (std::size_t j = 0; j < xs.size() && !stopped(); ++j) {
      text_buf<max_name + 16> en;
      en << name << '_' << static_cast<int>(j);
      const std::string_view eb = en.view();
      dtype dt = b_.g.meta(xs[j]).dt;
      std::int32_t r = -1;
      if (addc) {
        if (!inplace) dt = promoted({xs[j], ys[j], zs[j]});
        r = build_addc(eb, xs[j], ys[j], zs[j], sv, integral, base == op_kind::div, dt, at);
      } else if (lerp) {
        if (!inplace) dt = zs.empty() ? promoted({xs[j], ys[j]}) : promoted({xs[j], ys[j], zs[j]});
        r = build_lerp(eb, xs[j], ys[j], zs.empty() ? -1 : zs[j], sv, dt, at);
      } else if (alpha) {
        if (!inplace) dt = promoted({xs[j], ys[j]});
        r = build_alpha(eb, xs[j], ys[j], a, ai, dt, at);
      } else {
        // the op itself, as the list op's CPU kernel calls it per tensor (one rounding: any dtype)
        if (unary) r = part(eb, {}, base, {xs[j]}, 0, 0.0, at);
        else if (!ys.empty()) r = part(eb, {}, base, {xs[j], ys[j]}, 0, 0.0, at);
        else if (other >= 0) r = part(eb, {}, base, {xs[j], other}, 0, 0.0, at);
        else r = part(eb, {}, base, {xs[j]}, integral ? 2 : 1, sv, at);
      }
      if (r < 0) return;
      list_nodes_.push_back(r);
    }
    // In place: the copies after every element's value (a functional graph's writes are its epilogue).
    for (std::size_t j = 0; inplace && j < xs.size() && !stopped(); ++j) {
      text_buf<32> cn;
      cn << "copy" << static_cast<int>(j);
      auto& r = list_nodes_[static_cast<std::size_t>(l.first) + j];
      r = part(name, cn.view(), op_kind::copy_, {xs[j], r}, 0, 0.0, at);
    }
    if (stopped()) return;
    lists_.push_back(l);
    entry e{};
    e.name = name;
    e.items = static_cast<std::int32_t>(lists_.size()) - 1;
    define(e, at);
  }

  // argmax/argmin (x, dim=None, keepdim=False): one node (a 0-d x takes dim 0 or -1, as none);
  // max.dim/min.dim (x, dim, keepdim=False): the tuple (values, indices) as an amax (amin) node
  // <name>_values and an argmax (argmin) node <name>_indices over the same dim, read with [k] (the
  // value at the first index of the maximum is amax's answer: the same order, ties and NaNs).
  constexpr void lower_arg_reduce(std::string_view name, const annotation& t, const value& call, op_kind k, bool pair, position at) {
    if (!tensor_arg(call, 0, "self", at)) return;
    const std::int32_t x = abuf_[0];
    const tensor_meta& xm = b_.g.meta(x);
    const value* d = arg(call, 1, "dim");
    sym_expr dim{};
    if (pair || (d && d->k != vkind::none)) {
      if (!int_arg(call, 1, "dim", sym_expr(INT64_MIN), dim, at)) return;
      if (xm.rank > 0 || !dim.is_static() || (dim.value() != 0 && dim.value() != -1)) pbuf_.push_back(dim);  // else 0-d: none
    }
    if (!pair && xm.dt == dtype::b8) { fail(at, "node '", name, "': argmax/argmin of a bool tensor is not supported (PyTorch raises; convert it first)"); return; }
    const value* keep = arg(call, 2, "keepdim");
    const std::int32_t aux = keep && keep->k == vkind::integer && keep->i ? 1 : 0;
    if (!pair) { emit_bufs(name, t, k, aux, 0.0, at); return; }
    list_items l{static_cast<std::int32_t>(list_nodes_.size()), 2};
    for (const op_kind kind : {k == op_kind::argmax ? op_kind::amax : op_kind::amin, k}) {
      const std::int32_t id = b_.add(kind, std::span<const std::int32_t>(&x, 1), std::span<const sym_expr>(pbuf_.data(), pbuf_.size()), aux);
      if (!b_.g.error.ok()) { locate_builder_error(at, name); return; }
      text_buf<max_name + 16> tn;
      tn << name << (kind == k ? "_indices" : "_values");
      b_.g[id].name = name_t(tn.view());
      list_nodes_.push_back(id);
    }
    lists_.push_back(l);
    entry e{};
    e.name = name;
    e.items = static_cast<std::int32_t>(lists_.size()) - 1;
    define(e, at);
  }

  // _scaled_dot_product_flash_attention_for_cpu (q, k, v, dropout_p=0.0, is_causal=False, *,
  // attn_mask=None, scale=None): ctfx::scaled_dot_product_attention's nodes (sdpa<id>_<name>), the
  // tuple (output, logsumexp) as sdpa<id>_out_<name> and sdpa<id>_lse_<name>, read with [k]. The layouts are the CPU
  // kernel's: the output empty_like(q) (q's strides), the logsumexp [B, L, H] transposed to [B, H, L].
  constexpr void lower_attention(std::string_view name, const value& call, position at) {
    for (int j = 0; j < 3; ++j) if (!tensor_arg(call, j, j == 0 ? "query" : j == 1 ? "key" : "value", at)) return;
    const std::int32_t q = abuf_[0], k = abuf_[1], v = abuf_[2];
    if (const value* dp = arg(call, 3, "dropout_p"); dp && dp->k != vkind::none) {
      scalar_value p{};
      bool integral = false;
      if (!scalar_of(dp, p, integral, "dropout_p")) return;
      if (p.d != 0.0) {
        fail(dp->at, "node '", name, "': dropout_p other than 0 is random (capture in eval mode, or dropout_p=0.0) [rule valid-argument]");
        return;
      }
    }
    bool causal = false;
    if (const value* c = arg(call, 4, "is_causal"); c && c->k != vkind::none) {
      if (c->k != vkind::integer) { fail(c->at, "node '", name, "': is_causal must be True or False"); return; }
      causal = c->i != 0;
    }
    std::optional<tensor> mask;
    if (const value* m = arg(call, 99, "attn_mask"); m && m->k != vkind::none) {
      const std::int32_t id = node_of(*m, "attn_mask");
      if (id < 0) return;
      mask = tensor{&b_, id};
    }
    std::optional<double> scale;
    if (const value* sv = arg(call, 99, "scale"); sv && sv->k != vkind::none) {
      scalar_value sc{};
      bool integral = false;
      if (!scalar_of(sv, sc, integral, "scale")) return;
      scale = sc.d;
    }
    const std::int32_t first = b_.g.size();
    attention_result r = scaled_dot_product_attention(tensor{&b_, q}, tensor{&b_, k}, tensor{&b_, v}, mask, causal, scale);
    if (!b_.g.error.ok()) { locate_builder_error(at, name); return; }
    if (!b_.g.meta(q).is_contiguous()) r.out = copy(empty_like(tensor{&b_, q}), r.out);  // empty_like(q)'s strides
    r.lse = b_.make(op_kind::clone, {r.lse.permute({0, 2, 1})}, {}, 1).permute({0, 2, 1});  // a row-major [B, L, H], transposed
    if (!b_.g.error.ok()) { locate_builder_error(at, name); return; }
    for (std::int32_t j = first; j < b_.g.size(); ++j) {
      text_buf<max_name + 16> tn;
      // the node's id first: a long call name (PyTorch's is 43 characters) is cut at max_name
      tn << "sdpa" << j << (j == r.out.id ? "_out_" : j == r.lse.id ? "_lse_" : "_") << name;
      b_.g[j].name = name_t(tn.view());
    }
    list_items l{static_cast<std::int32_t>(list_nodes_.size()), 2};
    list_nodes_.push_back(r.out.id);
    list_nodes_.push_back(r.lse.id);
    lists_.push_back(l);
    entry e{};
    e.name = name;
    e.items = static_cast<std::int32_t>(lists_.size()) - 1;
    define(e, at);
  }

  // var.correction (x, dims=None, *, correction=1, keepdim=False): a var node (scalar: the
  // correction); var_mean.correction: the tuple (var, mean) as nodes <name>_var and <name>_mean
  // over the same dims, read with [k].
  constexpr void lower_var(std::string_view name, const annotation& t, const value& call, bool pair, position at) {
    if (!tensor_arg(call, 0, "self", at)) return;
    const value* dims = arg(call, 1, "dim");
    if (dims && dims->k != vkind::none && !list_arg(call, 1, "dim", at)) return;
    scalar_value c = 1.0;
    bool integral = false;
    if (const value* cv = arg(call, 99, "correction"); cv && cv->k != vkind::none && !scalar_of(cv, c, integral, "correction")) return;
    c = c.d;  // a float scalar either way: the kernels divide by max(n - correction, 0)
    const value* keep = arg(call, 99, "keepdim");
    const std::int32_t aux = keep && keep->k == vkind::integer && keep->i ? 1 : 0;
    if (!pair) { emit_bufs(name, t, op_kind::var, aux, c, at); return; }  // (var_mean's var: aux bit 1)
    const std::int32_t x = abuf_[0];
    list_items l{static_cast<std::int32_t>(list_nodes_.size()), 2};
    for (const op_kind kind : {op_kind::var, op_kind::var_mean}) {
      const std::int32_t id = b_.add(kind, std::span<const std::int32_t>(&x, 1), std::span<const sym_expr>(pbuf_.data(), pbuf_.size()),
                                     kind == op_kind::var ? aux | 2 : aux, c);
      if (!b_.g.error.ok()) { locate_builder_error(at, name); return; }
      text_buf<max_name + 16> tn;
      tn << name << (kind == op_kind::var ? "_var" : "_mean");
      b_.g[id].name = name_t(tn.view());
      list_nodes_.push_back(id);
    }
    lists_.push_back(l);
    entry e{};
    e.name = name;
    e.items = static_cast<std::int32_t>(lists_.size()) - 1;
    define(e, at);
  }

  // A binary op (a, b): b a tensor or a number (aux 2 for an int, 1 for a float).
  constexpr void lower_binary(std::string_view name, const annotation& t, const value& call, op_kind k, position at) {
    if (const value* al = arg(call, 99, "alpha"); al && !is_one(al) && arg(call, 1, "other") &&
        arg(call, 1, "other")->k == vkind::name && (k == op_kind::add || k == op_kind::sub || k == op_kind::add_ || k == op_kind::sub_)) {
      lower_alpha(name, t, call, k, *al, at);
      return;
    }
    if (const value* a = arg(call, 0, "self"); a && a->k != vkind::name && a->k != vkind::none) {
      lower_scalar_first(name, t, call, *a, k, at);
      return;
    }
    if (!tensor_arg(call, 0, "self", at) || !alpha_is_one(call)) return;
    const value* o = arg(call, 1, "other");
    if (!o) o = arg(call, 1, "exponent");
    if (!o) o = arg(call, 1, k == op_kind::clamp_max ? "max" : "min");
    if (o && o->k == vkind::name) {
      if (!tensor_arg(call, 1, o->key.empty() ? "other" : o->key, at)) return;
      emit_bufs(name, t, k, 0, 0.0, at);
      return;
    }
    scalar_value s{};
    bool integral = false;
    if (!scalar_of(o, s, integral, "the scalar operand")) return;
    emit_bufs(name, t, k, integral ? 2 : 1, s, at);
  }

  // A number as the first operand (`1 - x` is sub.Tensor(1, x), `2 / x` div.Tensor(2, x)): PyTorch
  // wraps it as a 0-d tensor and converts it to the common dtype before the tensor kernel runs, so it
  // becomes a 0-d full of that dtype (torch.result_type of the tensor and the number), named
  // <name>_self, and the op takes two tensors.
  constexpr void lower_scalar_first(std::string_view name, const annotation& t, const value& call, const value& a, op_kind k, position at) {
    scalar_value s{};
    bool integral = false;
    if (!scalar_of(&a, s, integral, "the number operand self")) return;
    if (!alpha_is_one(call)) return;
    const value* o = arg(call, 1, "other");
    if (!o) o = arg(call, 1, "exponent");
    if (!o || o->k != vkind::name) {
      fail(at, "node '", name, "': an op of two numbers; ctfx takes one tensor operand at least");
      return;
    }
    const std::int32_t other = node_of(*o, "other");
    if (other < 0) return;
    const dtype dt = promote_scalar(b_.g.meta(other).dt, integral);
    abuf_.clear();
    pbuf_.clear();
    text_buf<max_name + 8> self_name;
    self_name << name << "_self";
    emit_bufs(self_name.view(), annotation{}, op_kind::full, static_cast<std::int32_t>(dt), s, at);
    if (stopped()) return;
    const std::int32_t self = b_.g.size() - 1;
    abuf_.clear();
    abuf_.push_back(self);
    abuf_.push_back(other);
    emit_bufs(name, t, k, 0, 0.0, at);
  }

  constexpr void lower_direct_user_op(std::string_view name, const annotation& t, const fx_custom& cu, const value& call, position at) {
    for (int j = 0; j < cu.schema.n_args; ++j) {
      std::string_view an = tensor_arg_name(cu.signature, j);
      const value* v = arg(call, j, an);
      if (!v) { fail(at, "user op call without its tensor argument '", an, "'"); return; }
      std::int32_t id = node_of(*v, an);
      if (id < 0) return;
      abuf_.push_back(id);
    }
    const std::int32_t idx = custom_index(cu);
    if (cu.schema.n_returns != 1) { emit_bufs(name, t, op_kind::custom, idx, 0.0, at); return; }
    const std::int32_t tup = b_.add(op_kind::custom, std::span<const std::int32_t>(abuf_.data(), abuf_.size()), {}, idx, 0.0);
    if (!b_.g.error.ok()) { locate_builder_error(at, name); return; }
    text_buf<max_name + 8> tn;  // the call's own name (printed back as auto_functionalized's)
    tn << name << "_call";
    b_.g[tup].name = name_t(tn.view());
    const std::size_t declared = t.present && !t.is_sym && t.has_strides ? static_cast<std::size_t>(t.rank) : 0;
    emit(name, t, op_kind::getitem, std::span<const std::int32_t>(&tup, 1), std::span<const sym_expr>(t.stride, declared), 0, 0.0, at);
  }

  constexpr void lower_user_op(std::string_view name, const annotation& t, const value& call, position at) {
    const value* opv = arg(call, 0, "");
    constexpr std::string_view prefix = "torch.ops.";
    if (!opv || opv->k != vkind::dotted || opv->text.substr(0, prefix.size()) != prefix) {
      fail(opv ? opv->at : at, "auto_functionalized expects the op as its first argument");
      return;
    }
    const fx_custom* found = find_custom(opv->text.substr(prefix.size()));
    if (!found) { fail(opv->at, "user op '", opv->text, "' is not in the list of custom ops given to the parser"); return; }
    for (int j = 0; j < found->schema.n_args; ++j) {
      std::string_view an = tensor_arg_name(found->signature, j);
      const value* v = an.empty() ? nullptr : arg(call, 1000, an);
      if (!v) { fail(at, "auto_functionalized: no keyword for tensor argument '", an, "'"); return; }
      std::int32_t id = node_of(*v, an);
      if (id < 0) return;
      abuf_.push_back(id);
    }
    const std::int32_t idx = custom_index(*found);
    op_kind k = found->schema.mutates ? op_kind::auto_functionalized : op_kind::custom;
    emit_bufs(name, t, k, idx, 0.0, at);
  }
};

// Parses without verifying (the compile-time path verifies in its own evaluation).
constexpr fx_parse_result parse_unverified(std::string_view text, std::span<const fx_custom> customs) {
  return parser(text, customs).run();
}


}  // namespace fx

// Parses FX text at compile time or at run time; the graph is verified (graph/verify.hpp).
constexpr fx_parse_result parse_fx(std::string_view text, std::span<const fx_custom> customs = {}) {
  fx_parse_result r = fx::parse_unverified(text, customs);
  if (r.ok()) r.error = verify(r.graph, verify_level::structure);
  return r;
}

/// A graph from FX text in the compiler, used like ctfx::graph(...): `get()` gives the ir. A broken
/// rule or a bad line is a compile error whose text names the line, column and op (or node).
template <fixed_string Text, class... Customs>
struct fx_graph_def {
  static constexpr std::array<fx_custom, sizeof...(Customs)> customs{fx_custom_of<Customs>()...};  ///< the user ops the text may call
  /// Parses the text (in a constant evaluation).
  static constexpr ir build() {
    return fx::parse_unverified(Text.view(), std::span<const fx_custom>(customs.data(), customs.size())).graph;
  }
  /// The graph's sizes and the verifier's verdict, from one evaluation.
  struct checked {
    ir_sizes sizes;   ///< the graph's sizes
    diagnostic diag;  ///< the verifier's verdict
  };
  /// Parses and verifies the text.
  static constexpr checked check() {
    fx_parse_result r = parse_fx(Text.view(), std::span<const fx_custom>(customs.data(), customs.size()));
    return {sizes_of(r.graph), refuse_subgraphs(r.graph, r.error)};
  }
  static constexpr checked info = check();  ///< the parse's sizes and verdict
  static constexpr ir_sizes sizes = info.sizes;  ///< the graph's sizes
  static constexpr diagnostic diag = info.diag;  ///< the first broken rule (a compile error when not ok)
  static_assert(detail::report<diag>::value);
  static constexpr frozen_ir<sizes> frozen = freeze<sizes>(build());  ///< the graph, frozen
  /// The parsed graph.
  static constexpr ir get() { return frozen.thaw(); }
};

template <fixed_string Text, class... Customs>
constexpr fx_graph_def<Text, Customs...> fx_graph() { return {}; }

// Reads and parses a file at run time. The ir's names point into nothing: the text may go.
inline fx_parse_result parse_fx_file(const std::string& path, std::span<const fx_custom> customs = {}) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    fx_parse_result r{};
    text_buf<200> m;
    m << "cannot read '" << std::string_view(path) << "' [rule fx-text]";
    r.error.r = rule::fx_text;
    for (std::size_t k = 0; k < m.n; ++k) r.error.text[k] = m.s[k];
    return r;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  return parse_fx(text, customs);
}

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
