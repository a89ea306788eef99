#!/usr/bin/env bash
# Builds viaduct if needed, then runs every benchmark beside its peers: a thin wrapper that
# hands all other options to scripts/compare.py (see its --help).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD="$ROOT/build"
args=()
while [ $# -gt 0 ]; do
    case "$1" in
        -b | --build)
            [ $# -ge 2 ] || { echo "bench-all.sh: $1 needs a value" >&2; exit 2; }
            BUILD=$2
            shift 2
            ;;
        --build=*) BUILD=${1#*=}; shift ;;
        -h | --help)
            echo "usage: scripts/bench-all.sh [-b BUILD_DIR] [compare.py options...]"
            echo "Configures BUILD_DIR (default build) if needed, builds it, runs compare.py."
            exit 0
            ;;
        *) args+=("$1"); shift ;;
    esac
done

[ -f "$BUILD/build.ninja" ] || meson setup "$BUILD" "$ROOT"
ninja -C "$BUILD" >&2
exec "$ROOT/scripts/compare.py" --build "$BUILD" "${args[@]}"
