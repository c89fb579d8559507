// ctfx/core/diagnostics_push.hpp — opens a header's text: g++'s and clang's -Wshadow off inside it.
// No include guard: every ctfx header includes it after `#pragma once`, and its pair
// core/diagnostics_pop.hpp as its last line, so the two nest as the headers do.
//
// Why: a user's globals, declared after the includes, are in scope where ctfx's templates are
// instantiated, and g++ reports each library local named like one of them (a global `i` against
// a loop's `i`, a global `N` against a kernel's extent) as a -Wshadow warning in the library, an
// error under -Werror. No choice of local names avoids every user's globals, so the headers turn
// the warning off for their own text, as Eigen's DisableStupidWarnings.h does; a user's own code
// keeps it. ctfx's tests define CTFX_LIBRARY_WARNINGS to keep it on for the library's text (its
// locals shadowing its own names still fail the build there).
#if (defined(__GNUC__) || defined(__clang__)) && !defined(CTFX_LIBRARY_WARNINGS)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wshadow"
#endif
