#!/usr/bin/env bash
# The test command: install what is missing, configure, build everything, run every test.
# The README's Quick start and .ci/run both call this script.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/bootstrap.sh"
bash "$root/scripts/configure.sh" "$@"
build=${CTFX_BUILD_DIR:-$root/build}
jobs=$(nproc)
cmake --build "$build" -j "$jobs"
ctest --test-dir "$build" --output-on-failure -j "$jobs"
