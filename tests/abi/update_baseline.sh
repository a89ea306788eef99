#!/bin/bash
# Rewrites tests/abi/*.abi.gz from a release build's libmsg.so and libremoteio.so (abidw from
# abigail-tools), after a deliberate ABI change. Review the diff before committing it.
# Usage: tests/abi/update_baseline.sh BUILD_DIR
set -euo pipefail
build=$(realpath "$1")
src=$(realpath "$(dirname "$0")/../..")
. "$src/tests/abi/abi_libs.sh"
for name in "${abi_libs[@]}"; do
  so=$(abi_so "$build" "$name")
  # The exported symbols and every type they reach (abidiff's suppressions, not abidw's,
  # narrow them to the public ones: abidiff cannot read a dump with types dropped); no
  # paths or line numbers. Compressed: the C++ types behind the handles make it large.
  abidw --no-corpus-path --no-comp-dir-path --no-show-locs "$so" | gzip -9n \
    >"$src/tests/abi/$name.abi.gz"
  echo "update_baseline: wrote tests/abi/$name.abi.gz"
done
