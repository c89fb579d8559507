// ctfx/core/diagnostics_pop.hpp — closes a header's text opened by core/diagnostics_push.hpp: the
// user's warning settings again. No include guard: included once at the end of every ctfx header.
#if (defined(__GNUC__) || defined(__clang__)) && !defined(CTFX_LIBRARY_WARNINGS)
#pragma GCC diagnostic pop
#endif
