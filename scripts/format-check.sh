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
differ=()
while IFS= read -r -d '' f; do
  if ! clang-format --dry-run -Werror "$f" >/dev/null 2>&1; then
    differ+=("$f")
    [ $fix = 1 ] && clang-format -i "$f"
  fi
done < <(git ls-files -z '*.c' '*.cpp' '*.h' '*.hpp')
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
