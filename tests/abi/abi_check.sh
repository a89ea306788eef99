#!/bin/bash
# Compares the public ABI of the built libmsg.so and libremoteio.so with the committed
# baselines (tests/abi/*.abi.gz, written by abidw) using abidiff from Debian's abigail-tools.
# New functions pass; anything else abidiff reports (a function or variable removed or
# changed, a public type's layout changed) fails, with abidiff's report. After a deliberate
# change, tests/abi/update_baseline.sh BUILD_DIR rewrites the baselines.
# Usage: abi_check.sh BUILD_DIR SOURCE_DIR
# Exits 77 (meson's skip), saying so, when abidiff is not installed.
set -uo pipefail

build=$(realpath "$1")
src=$(realpath "$2")
if ! command -v abidiff >/dev/null; then
  echo "abi_check: SKIPPED: abidiff is not installed (Debian package abigail-tools; scripts/setup.sh installs it)"
  exit 77
fi
. "$src/tests/abi/abi_libs.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

status=0
for name in "${abi_libs[@]}"; do
  so=$(abi_so "$build" "$name")
  baseline=$tmp/$name.abi
  if [ ! -f "$so" ]; then
    echo "abi_check: $name: $so not built; not checked"
    continue
  fi
  gzip -dc "$src/tests/abi/$name.abi.gz" >"$baseline" ||
    { echo "abi_check: $name: no baseline tests/abi/$name.abi.gz" >&2; status=1; continue; }
  # --no-added-syms: new functions keep the ABI compatible; every other difference counts.
  report=$(abidiff --no-added-syms --suppressions "$(abi_supp "$src")" "$baseline" "$so" 2>&1)
  rc=$?
  if [ $rc -eq 0 ]; then
    echo "abi_check: $name: compatible with its baseline"
  else
    echo "abi_check: $name: abidiff exit $rc (4: ABI change, 8: incompatible change)"
    echo "$report"
    echo "abi_check: $name: FAILED; if the change is deliberate (and the version bumped), run tests/abi/update_baseline.sh $build"
    status=1
  fi
done
exit $status
