// ctfx/exec/inplace_table.hpp — the inplaceable-op table that ctfx's own executors plan with.
//
// Inductor's should_reinplace_scatter leaves a scatter functional unless its input and output are
// "realized", because Inductor's scheduler then fuses the functional scatter into its neighbours'
// kernels. ctfx's executors run every op as its own kernel: every node is realized, and a
// functional scatter is a clone of the whole buffer plus the write. So plans for ctfx's executors
// reinplace every scatter the legality rules allow. `pipeline<G>` (and ctfx_opt) keep Inductor's
// table, for parity with Inductor's decisions. Likewise aten.scatter / scatter_add: Inductor lowers
// them into its own kernels and keeps them out of its table; here each would clone x whole, so plans
// for ctfx's executors run them in place (scatter_) where legal.
// ctfx: nvcc-tested-by test/cuda/exec_cuda.cu
#pragma once
#include "../core/diagnostics_push.hpp"
#include "../passes/inplace_tables.hpp"

namespace ctfx {

inline constexpr auto executor_inplaceable_ops = inplaceable_ops_with(
    hana::make_pair(hana::type_c<ops::generalized_scatter_t>, hana::type_c<inplace<ops::generalized_scatter__t, args<0>, no_check>>),
    hana::make_pair(hana::type_c<ops::scatter_t>, hana::type_c<inplace<ops::scatter__t>>));
using executor_inplace_table = std::remove_cv_t<decltype(executor_inplaceable_ops)>;

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
