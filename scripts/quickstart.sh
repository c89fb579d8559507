#!/usr/bin/env bash
# Quick start: install what is missing, configure, build, and run the main example (one LLM decode
# step's KV-cache update, examples/kv_cache.cpp). CTFX_BUILD_DIR overrides ./build; extra
# arguments go to cmake.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${CTFX_BUILD_DIR:-$root/build}
if [ ! -f "$root/examples/kv_cache.cpp" ]; then
  echo "quickstart: examples/kv_cache.cpp does not exist (yet): no main example to run" >&2
  exit 1
fi
bash "$root/scripts/bootstrap.sh"
bash "$root/scripts/configure.sh" "$@"
cmake --build "$build" -j "$(nproc)" --target example_kv_cache
exe="$build/examples/example_kv_cache"
if [ ! -x "$exe" ]; then
  echo "quickstart: $exe was not built" >&2
  exit 1
fi
"$exe"
