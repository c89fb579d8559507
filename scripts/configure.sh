#!/usr/bin/env bash
# Configures the build tree (default ./build; CTFX_BUILD_DIR overrides; extra args go to cmake).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${CTFX_BUILD_DIR:-$root/build}
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
cmake -S "$root" -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=${CTFX_BUILD_TYPE:-RelWithDebInfo} "$@"
