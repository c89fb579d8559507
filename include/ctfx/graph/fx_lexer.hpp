// ctfx/graph/fx_lexer.hpp — scanning PyTorch's readable GraphModule code (the text that
// `print_readable()`, TORCH_LOGS="post_grad_graphs" and "aot_graphs" print) into values: names,
// numbers, strings, dotted paths (torch.float32), lists and tuples, calls, keyword arguments and
// symbolic integer expressions (`s77 - 1`, `8*s0`, `(s0//2)`, `Mod(s0, 3)`, `Max(1, s0)`,
// `torch.sym_min(a, 5)`). Constexpr, one pass, no allocation per character;
// graph/fx_parse.hpp turns the values into ir nodes.
#pragma once
#include "../core/diagnostics_push.hpp"
#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>
#include "../core/decimal.hpp"
#include "../core/symbolic.hpp"

namespace ctfx::fx {

/// Where a token starts, 1-based, for error messages.
struct position {
  std::int32_t line = 1, col = 1;
};

enum class vkind : std::uint8_t {
  none,     // None
  name,     // a bare identifier: a node, a symbol, or an unknown name
  integer,  // 3, -1 (also True/False, with is_bool)
  real,     // 3.0, 1e-05, inf, nan
  string,   // 'sum'
  dotted,   // torch.float32, torch.ops.mylib.foo.default
  list,     // [a, b] or (a, b): elements in the value pool
  call,     // device(type='cpu'): callee in text, arguments in the pool
  sym,      // an integer expression with symbols (s77 - 1)
};

struct value {
  vkind k = vkind::none;
  bool is_bool = false;
  position at{};
  std::string_view text{};  ///< name, string contents, dotted path, callee
  std::string_view key{};   ///< keyword of a keyword argument, empty for a positional one
  index_t i = 0;
  double d = 0.0;
  sym_expr e{};
  std::int32_t first = 0, count = 0;  ///< list / call elements in the pool
};

constexpr bool is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
constexpr bool is_digit(char c) { return c >= '0' && c <= '9'; }
constexpr bool is_ident_char(char c) { return is_ident_start(c) || is_digit(c); }

/// A cursor over the text. Newlines end a statement except inside brackets (`depth` > 0).
struct cursor {
  std::string_view s;
  std::size_t i = 0;
  std::int32_t line = 1;
  std::size_t line_start = 0;
  int depth = 0;
  std::int32_t col_offset = 0;  ///< for a cursor over a string inside a line (type annotations)
  /// Where errors go: the first one wins.
  position err_at{};
  char err[160]{};
  bool failed = false;

  /// Hot loops read through a raw pointer: g++ charges every string_view call against its
  /// constexpr operation budget (-fconstexpr-ops-limit), which a 1,000-node text must fit.
  const char* p = nullptr;
  std::size_t n = 0;
  constexpr void reset(std::string_view text) { s = text; p = text.data(); n = text.size(); i = 0; }
  constexpr bool done() const { return i >= n; }
  constexpr char peek(std::size_t k = 0) const { return i + k < n ? p[i + k] : '\0'; }
  constexpr position pos() const { return {line, static_cast<std::int32_t>(i - line_start) + 1 + col_offset}; }
  constexpr void newline() { ++line; line_start = i; }
  constexpr void skip_space() {
    while (i < n) {
      char c = p[i];
      if (c == ' ' || c == '\t' || c == '\r') { ++i; continue; }
      if (c == '\n' && depth > 0) { ++i; newline(); continue; }
      if (c == '#' && depth > 0) { while (i < n && p[i] != '\n') ++i; continue; }
      break;
    }
  }
  constexpr bool eat(char c) {
    skip_space();
    if (peek() == c) { ++i; return true; }
    return false;
  }
  constexpr bool starts_with(std::string_view w) const {
    if (n - i < w.size() || i > n) return false;
    for (std::size_t k = 0; k < w.size(); ++k) if (p[i + k] != w[k]) return false;
    return true;
  }
  constexpr void fail(position at, std::string_view a, std::string_view b = {}, std::string_view c = {}) {
    if (failed) return;
    failed = true;
    err_at = at;
    std::size_t len = 0;
    for (auto part : {a, b, c})
      for (char ch : part) if (len + 1 < sizeof(err)) err[len++] = ch;
  }
  constexpr std::string_view message() const {
    std::size_t len = 0;
    while (len < sizeof(err) && err[len]) ++len;
    return {err, len};
  }
  constexpr bool expect(char c) {
    if (eat(c)) return true;
    char want[2] = {c, 0};
    char got[2] = {peek() == '\n' || peek() == '\0' ? ' ' : peek(), 0};
    fail(pos(), "expected '", std::string_view(want, 1),
         peek() == '\n' || peek() == '\0' ? std::string_view("' before the end of the line") : std::string_view("'"));
    (void)got;
    return false;
  }
  constexpr std::string_view ident() {
    skip_space();
    std::size_t b = i;
    if (!is_ident_start(peek())) return {};
    while (i < n && is_ident_char(p[i])) ++i;
    return {p + b, i - b};
  }
  /// a.b.c (no spaces inside a dotted path)
  constexpr std::string_view dotted() {
    skip_space();
    std::size_t b = i;
    if (!is_ident_start(peek())) return {};
    while (i < n && (is_ident_char(p[i]) || (p[i] == '.' && is_ident_start(peek(1))))) ++i;
    return {p + b, i - b};
  }
  /// Skips to the end of the current line (past the newline).
  constexpr void skip_line() {
    while (i < n && p[i] != '\n') ++i;
    if (i < n) { ++i; newline(); }
  }
};

/// Parses values from a cursor into a pool. `Resolve` maps a name to its symbolic value when it
/// denotes an integer symbol (a Sym placeholder, a sym_size node, a raw symbol such as s77):
///   bool resolve(std::string_view name, sym_expr& out)
/// It is only asked about names used inside arithmetic; bare names stay names. It also makes the
/// operations that are not polynomials (they need the graph's symbol table):
///   sym_expr combine(char op, const sym_expr& a, const sym_expr& b)
/// with op '/' (floor division), '%' (Python's modulo), 'M' (Max) or 'm' (Min).
template <class Resolve>
struct value_parser {
  cursor& c;
  std::vector<value>& pool;
  std::vector<value>& stack;  ///< scratch: elements of the lists being parsed
  Resolve resolve;

  constexpr value parse() {
    value v = parse_sum();
    return v;
  }

  /// expr := term { ('+' | '-') term }
  constexpr value parse_sum() {
    value a = parse_term();
    while (!c.failed) {
      c.skip_space();
      char op = c.peek();
      if ((op != '+' && op != '-') || c.peek(1) == '=') break;
      position at = c.pos();
      ++c.i;
      value b = parse_term();
      a = arith(a, b, op, at);
    }
    return a;
  }
  /// term := power { ('*' | '//' | '%') power }
  constexpr value parse_term() {
    value a = parse_power();
    while (!c.failed) {
      c.skip_space();
      char op = c.peek();
      const bool floordiv = op == '/' && c.peek(1) == '/';
      if (op == '/' && !floordiv) { c.fail(c.pos(), "true division of symbolic sizes ('/') is not an integer size"); break; }
      if ((op != '*' && op != '%' && !floordiv) || (op == '*' && c.peek(1) == '*')) break;
      position at = c.pos();
      c.i += floordiv ? 2 : 1;
      value b = parse_power();
      a = arith(a, b, op, at);
    }
    return a;
  }
  /// power := unary [ '**' small integer ]
  constexpr value parse_power() {
    value a = parse_unary();
    c.skip_space();
    if (c.peek() == '*' && c.peek(1) == '*') {
      position at = c.pos();
      c.i += 2;
      value b = parse_unary();
      if (b.k != vkind::integer || b.i < 0 || b.i > 4) { c.fail(at, "only small integer powers of sizes are supported"); return a; }
      value r = num(1, at);
      for (index_t k = 0; k < b.i; ++k) r = arith(r, a, '*', at);
      return r;
    }
    return a;
  }
  constexpr value parse_unary() {
    c.skip_space();
    if (c.peek() == '-') {
      position at = c.pos();
      ++c.i;
      c.skip_space();
      if (is_digit(c.peek()) || (c.peek() == '.' && is_digit(c.peek(1)))) {
        value a = parse_number(true);
        a.at = at;
        return a;
      }
      value a = parse_unary();
      if (a.k == vkind::integer) {
        if (a.i == INT64_MIN) { c.fail(at, "an integer outside int64's range (PyTorch cannot hold it either)"); return a; }
        a.i = -a.i; a.at = at; return a;
      }
      if (a.k == vkind::real) { a.d = -a.d; a.at = at; return a; }
      return arith(num(0, at), a, '-', at);
    }
    return parse_primary();
  }

  constexpr value num(index_t x, position at) {
    value v;
    v.k = vkind::integer;
    v.i = x;
    v.at = at;
    return v;
  }
  /// Integer arithmetic on static or symbolic operands.
  constexpr value arith(const value& a, const value& b, char op, position at) {
    sym_expr x, y;
    if (!as_sym(a, x) || !as_sym(b, y)) {
      c.fail(at, "arithmetic is only supported on integer sizes and symbols");
      return a;
    }
    if ((op == '/' || op == '%') && y.is_static() && y.value() == 0) {
      c.fail(at, "division by zero in a symbolic size");
      return a;
    }
    sym_expr r = op == '+' ? x + y : op == '-' ? x - y : op == '*' ? x * y : resolve.combine(op, x, y);
    value v;
    v.at = a.at;
    if (r.is_static()) { v.k = vkind::integer; v.i = r.value(); }
    else { v.k = vkind::sym; v.e = r; }
    if (r.overflow) {
      char more[96]{};
      text_of(more, sizeof more, "a symbolic size needs more than ", sym_max_terms, " terms of ", sym_max_degree, " symbols");
      c.fail(at, more);
    }
    return v;
  }
  // "text n text n text" into a fixed buffer of `cap` bytes, zero-terminated, cut if it must be
  // (the limits in an error message; n1 and n2 are single digits).
  static constexpr void text_of(char* out, std::size_t cap, std::string_view a, int n1, std::string_view b, int n2,
                                std::string_view d) {
    std::size_t k = 0;
    auto put = [&](std::string_view s) {
      for (char ch : s)
        if (k + 1 < cap) out[k++] = ch;
    };
    const char d1[1] = {static_cast<char>('0' + n1)}, d2[1] = {static_cast<char>('0' + n2)};
    put(a); put(std::string_view(d1, 1)); put(b); put(std::string_view(d2, 1)); put(d);
    out[k] = '\0';
  }
  /// The symbolic functions PyTorch prints (sympy's and torch's) and the operation of each, or 0.
  static constexpr char function_op(std::string_view f) {
    if (f == "Max" || f == "torch.sym_max") return 'M';
    if (f == "Min" || f == "torch.sym_min") return 'm';
    if (f == "FloorDiv") return '/';
    if (f == "Mod" || f == "PythonMod") return '%';
    return 0;
  }
  constexpr bool as_sym(const value& v, sym_expr& out) {
    if (v.k == vkind::integer && !v.is_bool) { out = sym_expr(v.i); return true; }
    if (v.k == vkind::sym) { out = v.e; return true; }
    if (v.k == vkind::name) return resolve(v.text, out);
    if (v.k == vkind::call && v.count == 2 && function_op(v.text) != 0) {  // Max(1, s0)
      const value &a = pool[static_cast<std::size_t>(v.first)], &b = pool[static_cast<std::size_t>(v.first + 1)];
      if (!a.key.empty() || !b.key.empty()) return false;
      value r = arith(a, b, function_op(v.text), v.at);
      if (c.failed) return false;
      return as_sym(r, out);
    }
    return false;
  }

  /// A number: an int (int64, exactly; `negative` when a unary minus precedes it, so that
  /// -9223372036854775808 reads) or a float (correctly rounded, as Python reads it: core/decimal.hpp).
  constexpr value parse_number(bool negative = false) {
    value v;
    v.at = c.pos();
    const std::size_t b = c.i;
    bool real = false;
    while (is_digit(c.peek())) ++c.i;
    if (c.peek() == '.') {
      real = true;
      ++c.i;
      while (is_digit(c.peek())) ++c.i;
    }
    if ((c.peek() == 'e' || c.peek() == 'E') &&
        (is_digit(c.peek(1)) || ((c.peek(1) == '+' || c.peek(1) == '-') && is_digit(c.peek(2))))) {
      real = true;
      c.i += 2;
      while (is_digit(c.peek())) ++c.i;
    }
    const std::string_view text = c.s.substr(b, c.i - b);
    if (real) {
      v.k = vkind::real;
      if (!detail::decimal_to_double(text, v.d)) c.fail(v.at, "malformed number");
      if (negative) v.d = -v.d;
      return v;
    }
    // An int: its magnitude in uint64, at most 2^63 - 1 (2^63 when negated).
    std::uint64_t mag = 0;
    const std::uint64_t limit = negative ? std::uint64_t{1} << 63 : (std::uint64_t{1} << 63) - 1;
    bool fits = true;
    for (char ch : text) {
      const auto dgt = static_cast<std::uint64_t>(ch - '0');
      if (mag > (limit - dgt) / 10) { fits = false; break; }
      mag = mag * 10 + dgt;
    }
    v.k = vkind::integer;
    if (!fits) {
      c.fail(v.at, "an integer outside int64's range (PyTorch cannot hold it either)");
      return v;
    }
    // -2^63: negate in unsigned arithmetic (its magnitude is not an int64).
    v.i = negative ? static_cast<index_t>(~mag + 1) : static_cast<index_t>(mag);
    return v;
  }

  constexpr value parse_primary() {
    c.skip_space();
    position at = c.pos();
    char ch = c.peek();
    if (is_digit(ch) || (ch == '.' && is_digit(c.peek(1)))) return parse_number();
    if (ch == '\'' || ch == '"') {
      ++c.i;
      std::size_t b = c.i;
      while (!c.done() && c.peek() != ch && c.peek() != '\n') ++c.i;
      value v;
      v.k = vkind::string;
      v.at = at;
      v.text = c.s.substr(b, c.i - b);
      if (c.peek() != ch) { c.fail(at, "unterminated string"); return v; }
      ++c.i;
      return v;
    }
    if (ch == '[' || ch == '(') {
      char close = ch == '[' ? ']' : ')';
      ++c.i;
      ++c.depth;
      value v = elements(close, at);
      --c.depth;
      // `(x)` is a parenthesized expression, `(x,)` a tuple.
      return v;
    }
    std::string_view d = c.dotted();
    if (d.empty()) {
      c.fail(at, ch == '\n' || ch == '\0' ? std::string_view("expected a value before the end of the line")
                                          : std::string_view("unexpected character in a value"));
      return value{};
    }
    value v;
    v.at = at;
    if (d == "None") { v.k = vkind::none; return v; }
    if (d == "True" || d == "False") { v.k = vkind::integer; v.is_bool = true; v.i = d == "True"; return v; }
    if (d == "inf") { v.k = vkind::real; v.d = std::numeric_limits<double>::infinity(); return v; }
    if (d == "nan") { v.k = vkind::real; v.d = std::numeric_limits<double>::quiet_NaN(); return v; }
    c.skip_space();
    if (c.peek() == '(') {  // a call: device(type='cpu'), torch.device('cpu')
      ++c.i;
      ++c.depth;
      v = elements(')', at, true);
      --c.depth;
      v.k = vkind::call;
      v.text = d;
      return v;
    }
    v.k = d.find('.') == std::string_view::npos ? vkind::name : vkind::dotted;
    v.text = d;
    return v;
  }

  /// Elements up to `close`, each optionally `key = value`; copied to the pool when the list ends so
  /// that nested lists stay contiguous. Returns a list value.
  constexpr value elements(char close, position at, bool is_call = false) {
    std::size_t mark = stack.size();
    bool trailing_comma = false;
    while (!c.failed) {
      c.skip_space();
      if (c.peek() == close) { ++c.i; break; }
      std::string_view key{};
      // keyword argument: ident '=' (not '==')
      cursor save = c;
      std::string_view id = c.ident();
      c.skip_space();
      if (!id.empty() && c.peek() == '=' && c.peek(1) != '=') { ++c.i; key = id; }
      else { c.i = save.i; c.line = save.line; c.line_start = save.line_start; }
      value v = parse();
      v.key = key;
      stack.push_back(v);
      trailing_comma = false;
      c.skip_space();
      if (c.peek() == ',') { ++c.i; trailing_comma = true; continue; }
      if (c.peek() == close) { ++c.i; break; }
      char want[2] = {close, 0};
      c.fail(c.pos(), "expected ',' or '", std::string_view(want, 1), "'");
    }
    value v;
    v.at = at;
    std::size_t n = stack.size() - mark;
    // `(x)`: a parenthesized expression, not a tuple.
    if (close == ')' && !is_call && n == 1 && !trailing_comma && stack[mark].key.empty() && !c.failed) {
      v = stack[mark];
      stack.pop_back();
      return v;
    }
    v.k = vkind::list;
    v.first = static_cast<std::int32_t>(pool.size());
    v.count = static_cast<std::int32_t>(n);
    for (std::size_t k = mark; k < stack.size(); ++k) pool.push_back(stack[k]);
    while (stack.size() > mark) stack.pop_back();
    return v;
  }
};

template <class Resolve>
value_parser(cursor&, std::vector<value>&, std::vector<value>&, Resolve) -> value_parser<Resolve>;

}  // namespace ctfx::fx
#include "../core/diagnostics_pop.hpp"
