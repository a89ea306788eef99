#!/usr/bin/env bash
# Runs a multi-process test scenario under Open MPI's mpirun, which starts the
# ranks and serves PMIx; libmsg must join through its PMIx bootstrap (forced
# with VIADUCT_BOOTSTRAP=pmix) and every rank must pass.
# usage: run_under_mpirun.sh RANKS PROVIDER TIMEOUT_S WORKER SCENARIO [ARGS...]
# Exit 77 (a skip, as meson reports it) when mpirun is not installed.
set -uo pipefail
ranks=$1 provider=$2 limit=$3 worker=$4 scenario=$5
shift 5

if ! command -v mpirun >/dev/null; then
  echo "mpirun not found (Debian: openmpi-bin): skipped"
  exit 77
fi
slow=${VIADUCT_TEST_SLOWDOWN:-1}
# Open MPI refuses root unless told twice; CI runs as root.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Sanitizer settings reach the ranks only if mpirun is told to pass them on.
pass_on=()
for v in ASAN_OPTIONS TSAN_OPTIONS LSAN_OPTIONS; do
  if [ -n "${!v:-}" ]; then pass_on+=(-x "$v"); fi
done
out=$(timeout -k 10 $((limit * slow)) mpirun -n "$ranks" --oversubscribe \
  -x VIADUCT_BOOTSTRAP=pmix -x "VIADUCT_PROVIDER=$provider" -x VIADUCT_TEST_SLOWDOWN \
  "${pass_on[@]}" "$worker" "$scenario" "$@" 2>&1)
status=$?
echo "$out"
passes=$(grep -c "PASS $scenario" <<<"$out")
if [ "$status" -ne 0 ] || [ "$passes" -ne "$ranks" ]; then
  echo "FAILED: mpirun exit status $status, $passes of $ranks ranks passed"
  exit 1
fi
echo "ok: $ranks ranks under mpirun (PMIx bootstrap, provider $provider) passed $scenario"
