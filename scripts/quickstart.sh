#!/usr/bin/env bash
# Quick start: install what is missing, build, and run the main example (an LLM KV-cache update).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/bootstrap.sh"
bash "$root/scripts/configure.sh" "$@"
build=${CTFX_BUILD_DIR:-$root/build}
cmake --build "$build" --target example_kv_cache
"$build/examples/example_kv_cache"
