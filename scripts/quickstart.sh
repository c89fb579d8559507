#!/usr/bin/env bash
# Quick start: install what is missing, configure, build, and run the main example (one LLM decode
# step's KV-cache update, examples/kv_cache.cpp). It builds that one file, header-only
# (examples/quickstart/CMakeLists.txt): not ctfx's tests, tools or static runtime library, which
# `bash scripts/test.sh` builds. CTFX_QUICKSTART_DIR overrides ./build-quickstart; extra arguments
# go to cmake.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${CTFX_QUICKSTART_DIR:-$root/build-quickstart}
if [ ! -f "$root/examples/kv_cache.cpp" ]; then
  echo "quickstart: examples/kv_cache.cpp does not exist (yet): no main example to run" >&2
  exit 1
fi
bash "$root/scripts/bootstrap.sh"
gen=()
if [ ! -f "$build/CMakeCache.txt" ] && command -v ninja >/dev/null; then
  gen=(-G Ninja)
fi
cmake -S "$root/examples/quickstart" -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
      -DCTFX_MPI=OFF -DCTFX_NCCL=OFF "$@"
cmake --build "$build" --target example_kv_cache
exe="$build/example_kv_cache"
if [ ! -x "$exe" ]; then
  echo "quickstart: $exe was not built" >&2
  exit 1
fi
"$exe"
