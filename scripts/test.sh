#!/usr/bin/env bash
# THE test command (the README quotes it; .ci/run execs it): install what is missing, configure,
# build everything, run every test. CTFX_BUILD_DIR overrides ./build; extra arguments go to cmake,
# e.g. scripts/test.sh -DCMAKE_CXX_COMPILER=clang++-14 -DCTFX_CUDA=OFF.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${CTFX_BUILD_DIR:-$root/build}
jobs=$(nproc)
bash "$root/scripts/bootstrap.sh"
bash "$root/scripts/configure.sh" "$@"
cmake --build "$build" -j "$jobs"
ctest --test-dir "$build" --output-on-failure -j "$jobs" --timeout "${CTFX_TEST_TIMEOUT:-900}"
