#!/usr/bin/env bash
# The main job on one machine: libmsg's all-to-all benchmark (the paper's
# Figure 5 test) on 4 local processes, restricted and unrestricted, next to
# this machine's memory-copy limit.
set -euo pipefail
cd "$(dirname "$0")/.."
ranks=${RANKS:-4}
scripts/build.sh build
echo "== memory-copy limit of this machine =="
build/libmsg/bench/memcpy-bw
for mode in unrestricted restricted; do
  echo "== all-to-all, $ranks local ranks, $mode =="
  VIADUCT_RESTRICTED=$([ "$mode" = restricted ] && echo 1 || echo 0) \
    build/libmsg/tools/msgrun -n "$ranks" --timeout 300 build/libmsg/bench/msg-alltoall
done
