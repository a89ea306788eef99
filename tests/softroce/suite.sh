#!/usr/bin/env bash
# The Soft-RoCE suite, run inside the guest by scripts/softroce-run (see
# docs/verbs.md): libmsg scenarios over the native verbs transport and over
# libfabric's verbs;ofi_rxm on rxe0, then reference figures from rdma-core's
# ibv_rc_pingpong and perftest and libmsg's msg-pingpong / msg-alltoall over
# both, and libmsg/perftest ratios at 1-16 MiB (verbs_ratios.py). Figures are
# printed, never judged; the scenarios pass or fail.
# usage: tests/softroce/suite.sh [BUILD_DIR]
set -uo pipefail
build=${1:-build}
msgrun=$build/libmsg/tools/msgrun
worker=$build/tests/libmsg/libmsg_test_worker
[ -x "$msgrun" ] && [ -x "$worker" ] || { echo "suite: build $build first" >&2; exit 2; }
[ -e /sys/class/infiniband/rxe0 ] || { echo "suite: no rxe0: run me through scripts/softroce-run" >&2; exit 2; }

passed=0
failed=()
t_start=$(date +%s)

# The scenario workers' settings (those of tests/libmsg's matrix); generous
# timeouts: emulation is slow.
export VIADUCT_EAGER_MAX=4096 VIADUCT_BUFFER_SIZE=16384 VIADUCT_CREDITS=4 VIADUCT_TIMEOUT_MS=20000
# libfabric's rxm sizes its verbs CQ by the universe size (default 256),
# beyond rxe's 32767 entries; a small job needs far fewer.
export FI_UNIVERSE_SIZE=16

transport_env() {
  case $1 in
    verbs) echo "VIADUCT_TRANSPORT=verbs" ;;
    rxm) echo "VIADUCT_TRANSPORT=ofi VIADUCT_PROVIDER=verbs;ofi_rxm" ;;
  esac
}

# scenario TRANSPORT EXTRA_ENV RANKS WANT_STATUS WANT_PASSES PASS_WORD PROGRAM ARGS...
scenario() {
  local tr=$1 extra=$2 ranks=$3 want_status=$4 want_passes=$5 word=$6
  shift 6
  local name="$tr${extra:+ ($extra)}: $*" out t0 status passes fails
  t0=$(date +%s%N)
  out=$(env $(transport_env "$tr") $extra timeout 180 "$msgrun" -n "$ranks" --timeout 150 "$@" 2>&1)
  status=$?
  passes=$(grep -c "$word" <<<"$out")
  fails=$(grep -c "FAIL" <<<"$out")
  local secs
  secs=$((($(date +%s%N) - t0) / 1000000))
  secs=$((secs / 1000)).$(((secs % 1000) / 100))
  if [ "$status" -eq "$want_status" ] && [ "$passes" -eq "$want_passes" ] && [ "$fails" -eq 0 ]; then
    passed=$((passed + 1))
    printf 'ok    %-70s %6s s\n' "$name" "$secs"
  else
    failed+=("$name")
    printf 'FAIL  %-70s %6s s (status %d, want %d; %d of %d passes)\n' "$name" "$secs" \
      "$status" "$want_status" "$passes" "$want_passes"
    tail -n 25 <<<"$out" | sed 's/^/      /'
  fi
}

echo "== libmsg scenarios on rxe0 =="
# Native verbs and verbs;ofi_rxm: every multi-process scenario of tests/libmsg
# except the timing-bound idle_cpu and the shm-only payload_huge, at smaller
# counts; plus a registration failure and kept registrations.
for tr in verbs rxm; do
  for proto in rdma rdma-write sendrecv; do
    scenario $tr "VIADUCT_PROTOCOL=$proto" 2 0 2 "PASS payload" "$worker" payload 7 20 8
  done
  for proto in rdma rdma-write; do
    scenario $tr "VIADUCT_PROTOCOL=$proto VIADUCT_RESTRICTED=1" 2 0 2 "PASS payload" \
      "$worker" payload 11 10 4
  done
  scenario $tr "" 4 0 4 "PASS wildcard" "$worker" wildcard
  scenario $tr "" 2 0 2 "PASS truncation" "$worker" truncation
  scenario $tr "" 3 0 3 "PASS fifo" "$worker" fifo 60
  scenario $tr "" 4 0 4 "PASS outstanding" "$worker" outstanding 8
  scenario $tr "" 3 0 3 "PASS threads" "$worker" threads 4 6
  scenario $tr "" 2 0 2 "PASS api_errors" "$worker" api_errors
  scenario $tr "" 6 0 6 "PASS connect" "$worker" connect
  # A killed rank: msgrun reports its SIGKILL; the two survivors carry on.
  scenario $tr "VIADUCT_TIMEOUT_MS=5000" 3 137 2 "SURVIVOR_OK" "$worker" peer_failure kill
  if [ $tr = verbs ]; then
    # ... while it receives long messages that the survivors RDMA-write into it.
    scenario $tr "VIADUCT_PROTOCOL=rdma-write VIADUCT_TIMEOUT_MS=5000" 3 137 2 "SURVIVOR_OK" \
      "$worker" peer_failure kill_busy
  fi
  for proto in rdma rdma-write; do
    scenario $tr "VIADUCT_PROTOCOL=$proto" 2 0 2 "PASS registration_failure" \
      "$build/tests/softroce/softroce_registration_failure"
  done
  # Kept registrations: reused by repeated messages (native verbs keeps them;
  # rxm's own cache is its business), never served for remapped, discarded or
  # reallocated memory.
  reuse=0
  [ $tr = verbs ] && reuse=1
  for proto in rdma rdma-write sendrecv; do
    scenario $tr "VIADUCT_PROTOCOL=$proto" 2 0 2 "PASS registration" "$worker" registration 1 6 $reuse
  done
done

echo
echo "== the distributed sort over native verbs: 3 nodes x 10 MB, validated by sortcheck =="
if [ -x "$build/sortapp/sortapp" ]; then
  sortdir=$(mktemp -d /tmp/softroce-sort-XXXXXX)
  gen=$("$build/sortapp/sortgen" --json --partitions 3 300000 "$sortdir/in")
  want=$(sed -n 's/^{"records": *[0-9]*, *"checksum": *"\([0-9a-f]*\)".*/\1/p' <<<"$gen")
  t0=$(date +%s)
  if env VIADUCT_TRANSPORT=verbs VIADUCT_MSGRUN="$msgrun" timeout 400 \
      "$build/sortapp/sortapp" run -n 3 --input "$sortdir/in.{rank}" \
      --output "$sortdir/out.{rank}" --memory 32M --network-mb-s 20 --timeout 360 &&
    "$build/sortapp/sortcheck" --expect-checksum "$want" --expect-records 300000 \
      "$sortdir/out.0" "$sortdir/out.1" "$sortdir/out.2"; then
    passed=$((passed + 1))
    echo "ok    verbs: sortapp run -n 3, 3 x 10 MB, sorted with the input's checksum $want ($(($(date +%s) - t0)) s)"
  else
    failed+=("verbs: sortapp run -n 3")
    echo "FAIL  verbs: sortapp run -n 3 (see above)"
  fi
  rm -rf "$sortdir"
else
  failed+=("sortapp not built")
fi
scenario_seconds=$(($(date +%s) - t_start))

echo
echo "== reference: rdma-core and perftest on rxe0 (same boot) =="
wait_port() {  # servers take a moment to listen; clients do not retry
  local i
  for i in $(seq 100); do ss -ltn | grep -q ":$1 " && return 0; sleep 0.1; done
  return 1
}
pair() {  # pair PORT SERVER_CMD...  : server in the background, client against 10.9.9.1
  local port=$1
  shift
  "$@" >/tmp/server.out 2>&1 &
  local spid=$!
  wait_port "$port" || echo "(server on $port did not listen)"
  timeout 120 "$@" 10.9.9.1 2>&1 | grep -vE '^ *(local|remote) address|^-+$|WARNING|^ *$'
  wait "$spid"
}
echo "-- ibv_rc_pingpong -g 1 -s 4096 -n 1000"
pair 18515 timeout 120 ibv_rc_pingpong -d rxe0 -g 1 -s 4096 -n 1000
for t in ib_send_lat ib_send_bw ib_read_bw; do
  case $t in
    ib_send_lat) args=(-s 2 -n 1000) ;;
    *) args=(-s 65536 -n 200) ;;
  esac
  echo "-- $t ${args[*]}"
  pair 18515 timeout 120 $t -d rxe0 -x 1 -F "${args[@]}" | grep -E '^ *[0-9]' | head -n 3
done

echo
echo "== libmsg benchmarks over both transports (same boot) =="
# Native verbs with both RDMA protocols; verbs;ofi_rxm with the default (rdma).
for run in verbs:rdma verbs:rdma-write rxm:rdma; do
  tr=${run%%:*} proto=${run#*:}
  echo "-- msg-pingpong, $tr, $proto"
  env $(transport_env "$tr") VIADUCT_EAGER_MAX=8192 VIADUCT_BUFFER_SIZE=131072 VIADUCT_CREDITS=8 \
    timeout 120 "$msgrun" -n 2 "$build/libmsg/bench/msg-pingpong" --max 1M --iters 200 \
    --protocol "$proto" 2>&1 | grep -E '^ *(0|2|4096|65536|1048576) |^#'
  echo "-- msg-alltoall -n 3 --bytes 256K --iters 20, $tr, $proto"
  env $(transport_env "$tr") VIADUCT_EAGER_MAX=8192 VIADUCT_BUFFER_SIZE=131072 VIADUCT_CREDITS=8 \
    timeout 120 "$msgrun" -n 3 "$build/libmsg/bench/msg-alltoall" --bytes 256K --iters 20 \
    --protocol "$proto" 2>&1
done

echo
echo "== libmsg against perftest: ping-pong bandwidth at 1-16 MiB on native verbs (same boot) =="
python3 "$(dirname "$0")/verbs_ratios.py" --build "$build" || echo "(verbs_ratios.py failed: figures missing)"

echo
echo "suite: $passed scenarios passed, ${#failed[@]} failed (scenarios ${scenario_seconds} s, all $(($(date +%s) - t_start)) s)"
for f in "${failed[@]}"; do echo "suite: FAILED $f"; done
[ ${#failed[@]} -eq 0 ]
