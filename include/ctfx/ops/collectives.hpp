// ctfx/ops/collectives.hpp — functional collectives (schema and metadata; no backend runs them yet:
// the executor reports them as unsupported by name).
#pragma once
#include "basic.hpp"

namespace ctfx {
namespace ops {
struct all_reduce_t : op_tag<op_kind::all_reduce, "_c10d_functional.all_reduce(Tensor input, str reduce_op, str group_name) -> Tensor"> {};
struct all_reduce__t : op_tag<op_kind::all_reduce_, "_c10d_functional.all_reduce_(Tensor(a!) input, str reduce_op, str group_name) -> Tensor(a!)"> {};
}  // namespace ops
}  // namespace ctfx
