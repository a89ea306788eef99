#!/usr/bin/env bash
# Configures a build directory (once; options given again are applied to it) and builds it,
# or only the targets asked for.
# usage: scripts/build.sh [BUILD_DIR] [MESON_OPTION...] [-- TARGET...]
#   TARGET: a ninja target (sortapp/sortapp), or @SUITE: the programs the tests of meson
#   suite SUITE need, or @tests: the programs every test needs (scripts/test-targets.py).
#   No TARGET: the whole tree.
# ccache, when installed, is used by meson by itself.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
shift || true
options=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do
  options+=("$1")
  shift
done
[ "${1:-}" = -- ] && shift
if [ ! -f "$dir/build.ninja" ]; then
  meson setup "$dir" "${options[@]}"
elif [ ${#options[@]} -gt 0 ]; then
  meson configure "$dir" "${options[@]}"
fi
targets=()
suites=()
tests=0
for t in "$@"; do
  case $t in
    @tests) tests=1 ;;
    @*) suites+=("${t#@}") ;;
    *) targets+=("$t") ;;
  esac
done
if [ $tests = 1 ] || [ ${#suites[@]} -gt 0 ]; then
  [ $tests = 1 ] && suites=()
  # The targets come from the configured tree, so it must be up to date first.
  ninja -C "$dir" build.ninja
  needed=$(scripts/test-targets.py "$dir" ${suites[@]+"${suites[@]}"})
  [ -n "$needed" ] || { echo "build.sh: the tests of $dir need no program" >&2; exit 1; }
  mapfile -t found <<<"$needed"
  targets+=("${found[@]}")
fi
ninja -C "$dir" ${targets[@]+"${targets[@]}"}
