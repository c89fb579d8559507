#!/usr/bin/env bash
# Configures the build tree (default ./build; CTFX_BUILD_DIR overrides; extra args go to cmake).
# Ninja when available, else Makefiles; build type CTFX_BUILD_TYPE (default RelWithDebInfo).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${CTFX_BUILD_DIR:-$root/build}
gen=()
# An existing build tree keeps its generator (cmake refuses to switch one).
if [ ! -f "$build/CMakeCache.txt" ] && command -v ninja >/dev/null; then
  gen=(-G Ninja)
fi
cmake -S "$root" -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE="${CTFX_BUILD_TYPE:-RelWithDebInfo}" "$@"
