// ctfx/passes/inplace_tables.hpp — which functional ops have an in-place twin, as types.
//
// Inductor's `inplaceable_ops` maps a functional op to InplaceableOp(in-place op, mutated arg(s),
// extra_check); `META_ONLY_OPS` lists the ops that read only metadata. Here both are Boost.Hana
// containers of types: keys are op tag types (ctfx::ops::*_t) or user op types (ctfx::custom_op),
// values are `ctfx::inplace<InplaceOp, Mutated, ExtraCheck>`. The reinplacing pass converts a table
// once, at compile time, into a constexpr array of rows (`inplace_rows<Table>`) and reads only that.
//
// A user adds their own pair without editing ctfx:
//
//   struct my_add  : ctfx::custom_op<"my_add",  "my_add(Tensor x, Tensor y) -> Tensor"> {};
//   struct my_add_ : ctfx::custom_op<"my_add_", "my_add_(Tensor(a!) x, Tensor y) -> ()"> {};
//   constexpr auto my_ops = ctfx::inplaceable_ops_with(
//       boost::hana::make_pair(boost::hana::type_c<my_add>, boost::hana::type_c<ctfx::inplace<my_add_>>));
//   ... ctfx::reinplace_inplaceable_ops_core<decltype(my_ops)>(g) / ctfx::pipeline<G, decltype(my_ops)>
//
// A pure user op with a registered twin is rewritten to the twin (Inductor's with_effects pairs):
// its p-th result becomes its p-th mutated argument. A user op may also be declared `elementwise_op`
// (value type): reading and writing the same tensor with one layout is then safe, so `op(x, x)` may be
// reinplaced (as Inductor does for `sin(out, out)`); by default it is not (pytorch#198031).
#pragma once
#include "../core/diagnostics_push.hpp"
#include <array>
#include <utility>
#include <cstdint>
#include <boost/hana/at_key.hpp>
#include <boost/hana/contains.hpp>
#include <boost/hana/first.hpp>
#include <boost/hana/map.hpp>
#include <boost/hana/pair.hpp>
#include <boost/hana/second.hpp>
#include <boost/hana/set.hpp>
#include <boost/hana/type.hpp>
#include <boost/hana/union.hpp>
#include <boost/hana/unpack.hpp>
#include "../ops/meta.hpp"

namespace ctfx {

struct reinplace_context;  // passes/reinplace.hpp: the graph and its users, for extra checks

// Mutated argument positions, and positions that form one list argument (all or nothing; its
// elements must not alias each other).
template <int... I> struct args {};
template <int... I> struct list_args {};
struct foreach_list {};  // the first list of a foreach op (its length is the node's aux)

// An extra check: `static constexpr bool check(const reinplace_context&, std::int32_t node)`.
struct no_check;
struct should_reinplace_scatter;  // A.7, defined in passes/reinplace.hpp

template <class InplaceOp, class Mutated = args<0>, class ExtraCheck = no_check>
struct inplace {
  using op = InplaceOp;
  using mutated = Mutated;
  using extra_check = ExtraCheck;
};
// Value types for a user op key that has no twin: `list_args<I...>` (those mutated arguments are
// the elements of one Tensor[] argument: reinplaced all together or cloned all together), or
// `elementwise_op`: the op reads and writes elementwise, so an argument that aliases a
// mutated one with the same layout is safe.
struct elementwise_op {};

namespace hana = boost::hana;

// Inductor's table (A.6), with foreach and collectives.
inline constexpr auto builtin_inplaceable_ops = hana::make_map(
    hana::make_pair(hana::type_c<ops::index_put_t>, hana::type_c<inplace<ops::index_put__t>>),
    hana::make_pair(hana::type_c<ops::unsafe_index_put_t>, hana::type_c<inplace<ops::unsafe_index_put__t>>),
    hana::make_pair(hana::type_c<ops::generalized_scatter_t>,
                    hana::type_c<inplace<ops::generalized_scatter__t, args<0>, should_reinplace_scatter>>),
    hana::make_pair(hana::type_c<ops::all_reduce_t>, hana::type_c<inplace<ops::all_reduce__t>>),
    hana::make_pair(hana::type_c<ops::broadcast_t>, hana::type_c<inplace<ops::broadcast__t>>),
    hana::make_pair(hana::type_c<ops::all_gather_blocks_t>, hana::type_c<inplace<ops::all_gather_blocks__t>>),
    hana::make_pair(hana::type_c<ops::reduce_scatter_blocks_t>, hana::type_c<inplace<ops::reduce_scatter_blocks__t>>),
    hana::make_pair(hana::type_c<ops::halo_exchange_t>, hana::type_c<inplace<ops::halo_exchange__t>>),
    hana::make_pair(hana::type_c<ops::foreach_add_t>, hana::type_c<inplace<ops::foreach_add__t, foreach_list>>),
    hana::make_pair(hana::type_c<ops::foreach_mul_t>, hana::type_c<inplace<ops::foreach_mul__t, foreach_list>>));

// Operators that don't depend on the tensor data.
inline constexpr auto meta_only_ops = hana::make_set(hana::type_c<ops::sym_size_t>);

// The built-in table plus the user's pairs (later keys win).
template <class... Pairs>
constexpr auto inplaceable_ops_with(Pairs... user) {
  return hana::union_(builtin_inplaceable_ops, hana::make_map(user...));
}
using builtin_inplace_table = std::remove_cv_t<decltype(builtin_inplaceable_ops)>;

// ----- the value side: what the pass reads -----

using extra_check_fn = bool (*)(const reinplace_context&, std::int32_t);

struct inplace_row {
  op_kind functional = op_kind::count_;  // a built-in op, or op_kind::custom for a user op
  op_kind inplace = op_kind::count_;
  name_t user_name{};                    // user ops: the functional op's name
  custom_schema twin{};                  // user ops: the in-place twin's schema
  std::uint32_t mutated = 0;             // bit i: argument i is written
  bool list = false;                     // the mutated arguments form one list
  bool foreach = false;                  // the mutated arguments are the foreach op's first list
  bool elementwise = false;              // elementwise_op: aliasing with one layout is safe
  extra_check_fn extra = nullptr;
};

namespace detail {

template <class T> struct mutated_spec {};
template <class T> inline constexpr bool is_list_args = false;
template <int... I> inline constexpr bool is_list_args<list_args<I...>> = true;
template <int... I> struct mutated_spec<args<I...>> {
  static constexpr std::uint32_t mask = (0u | ... | (1u << I));
  static constexpr bool list = false, foreach = false;
};
template <int... I> struct mutated_spec<list_args<I...>> {
  static constexpr std::uint32_t mask = (0u | ... | (1u << I));
  static constexpr bool list = true, foreach = false;
};
template <> struct mutated_spec<foreach_list> {
  static constexpr std::uint32_t mask = 1u;
  static constexpr bool list = true, foreach = true;
};

template <class Check>
constexpr extra_check_fn extra_of() {
  if constexpr (std::is_same_v<Check, no_check>) return nullptr;
  else return &Check::check;
}

template <class Key, class Value>
constexpr inplace_row make_inplace_row() {
  inplace_row r{};
  if constexpr (std::is_same_v<Value, elementwise_op>) {
    r.functional = op_kind::custom;
    r.user_name = Key::schema().name;
    r.elementwise = true;
  } else if constexpr (is_list_args<Value>) {
    // A functionalized user op whose mutated arguments `list_args<...>` form one Tensor[] list.
    r.functional = op_kind::custom;
    r.user_name = Key::schema().name;
    r.mutated = mutated_spec<Value>::mask;
    r.list = true;
  } else {
    using M = mutated_spec<typename Value::mutated>;
    r.mutated = M::mask;
    r.list = M::list;
    r.foreach = M::foreach;
    r.extra = extra_of<typename Value::extra_check>();
    if constexpr (requires { Key::kind; }) {
      r.functional = Key::kind;
      r.inplace = Value::op::kind;
    } else {
      r.functional = op_kind::custom;
      r.inplace = op_kind::custom;
      r.user_name = Key::schema().name;
      r.twin = Value::op::schema();
      r.twin.mutates = M::mask;  // the table's mutated args are authoritative
      r.twin.n_returns = 0;      // an in-place twin's results are its mutated arguments
    }
  }
  return r;
}

template <class Table>
constexpr auto make_inplace_rows() {
  // Unnamed parameters: the pairs are used only through their types (a named, unread parameter
  // draws nvcc's warning #550-D).
  return hana::unpack(Table{}, []<class... P>(P...) {
    return std::array<inplace_row, sizeof...(P)>{
        make_inplace_row<typename decltype(+hana::first(std::declval<P>()))::type,
                         typename decltype(+hana::second(std::declval<P>()))::type>()...};
  });
}

constexpr auto make_meta_only() {
  std::array<bool, static_cast<std::size_t>(op_kind::count_)> r{};
  hana::unpack(meta_only_ops, [&](auto... t) { ((r[static_cast<std::size_t>(decltype(+t)::type::kind)] = true), ...); });
  return r;
}

}  // namespace detail

// The rows of a table, computed once per table type.
template <class Table = builtin_inplace_table>
inline constexpr auto inplace_rows = detail::make_inplace_rows<Table>();

inline constexpr auto meta_only_table = detail::make_meta_only();
constexpr bool is_meta_only(op_kind k) { return meta_only_table[static_cast<std::size_t>(k)]; }

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
