#!/usr/bin/env bash
# Checks that every tracked C and C++ file is formatted as .clang-format says.
# usage: scripts/format-check.sh [--fix]
#   --fix  rewrites the files that differ instead of only naming them
# Exits 1, naming each file that differs, when any does (without --fix).
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
  "") fix=0 ;;
  --fix) fix=1 ;;
  -h | --help) sed -n '2,5s/^# \{0,1\}//p' "$0"; exit 0 ;;
  *) echo "format-check.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
esac
command -v clang-format >/dev/null || { echo "format-check.sh: clang-format is not installed (scripts/setup.sh installs it)" >&2; exit 2; }
# Two clang-format processes at a time, 50 files each; a file that differs is named in its
# first complaint ("FILE:LINE:COLUMN: error: code should be clang-formatted").
out=$(mktemp)
trap 'rm -f "$out"' EXIT
ran=0
git ls-files -z '*.c' '*.cpp' '*.h' '*.hpp' |
  xargs -0 -r -P 2 -n 50 clang-format --dry-run -Werror >"$out" 2>&1 || ran=$?
mapfile -t differ < <(sed -n 's/^\(.*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p' \
  "$out" | sort -u)
# clang-format failing for another reason (a file it cannot read or parse) names no file.
if [ $ran -ne 0 ] && [ ${#differ[@]} -eq 0 ]; then
  cat "$out" >&2
  echo "format-check.sh: clang-format failed (exit $ran; see above)" >&2
  exit 2
fi
if [ ${#differ[@]} -gt 0 ] && [ $fix = 1 ]; then
  clang-format -i "${differ[@]}"
fi
if [ ${#differ[@]} -eq 0 ]; then
  echo "format-check.sh: every C/C++ file is formatted"
  exit 0
fi
if [ $fix = 1 ]; then
  printf 'format-check.sh: reformatted %s\n' "${differ[@]}"
  exit 0
fi
printf 'format-check.sh: not formatted as .clang-format says: %s\n' "${differ[@]}"
echo "format-check.sh: ${#differ[@]} file(s) differ; scripts/format-check.sh --fix rewrites them" >&2
exit 1
