#!/usr/bin/env bash
# Runs a multi-process test scenario with every rank on its own "host": a
# network namespace (own interfaces, addresses and TCP stack) and its own
# hostname, all joined by veth pairs to a bridge in a switch namespace. The
# ranks meet through a coordinator (msgrun --serve) in host 0's namespace,
# over the TCP rendezvous, and libmsg picks its multi-host default provider
# (tcp;ofi_rxm) because the hostnames differ.
# usage: run_in_netns.sh RANKS TIMEOUT_S MSGRUN WORKER SCENARIO [ARGS...]
# Exit 77 (a skip, as meson reports it) where namespaces cannot be made
# (not root, or no CAP_NET_ADMIN in this container).
set -uo pipefail
ranks=$1 limit=$2 msgrun=$3 worker=$4 scenario=$5
shift 5
slow=${VIADUCT_TEST_SLOWDOWN:-1}
limit=$((limit * slow))

tag="vd$$"                   # short: interface names stop at 15 characters
sw="$tag-sw"
subnet="10.$(( ($$ >> 8) % 200 + 20 )).$(( $$ % 250 + 1 ))"
port=$(( 20000 + $$ % 20000 ))
created=()

cleanup() {
  for ns in "${created[@]}"; do ip netns del "$ns" 2>/dev/null; done
}
trap cleanup EXIT

if ! command -v ip >/dev/null || ! ip netns add "$sw" 2>/dev/null; then
  echo "cannot create network namespaces here (needs root and CAP_NET_ADMIN): skipped"
  exit 77
fi
created+=("$sw")
ip -n "$sw" link add br0 type bridge && ip -n "$sw" link set br0 up && ip -n "$sw" link set lo up ||
  { echo "FAILED: cannot build the switch namespace"; exit 1; }
for ((i = 0; i < ranks; i++)); do
  ns="$tag-h$i"
  ip netns add "$ns" || { echo "FAILED: ip netns add $ns"; exit 1; }
  created+=("$ns")
  ip link add "${tag}h${i}a" netns "$ns" type veth peer name "${tag}h${i}b" netns "$sw" &&
    ip -n "$ns" link set "${tag}h${i}a" name eth0 &&
    ip -n "$ns" addr add "$subnet.$((i + 1))/24" dev eth0 &&
    ip -n "$ns" link set eth0 up && ip -n "$ns" link set lo up &&
    ip -n "$sw" link set "${tag}h${i}b" master br0 && ip -n "$sw" link set "${tag}h${i}b" up ||
    { echo "FAILED: cannot wire host $i"; exit 1; }
done

coord="$subnet.1:$port"
outdir=$(mktemp -d)
trap 'cleanup; rm -rf "$outdir"' EXIT
# Every process of the job holds its key; strangers are refused.
export VIADUCT_JOB_KEY=$(od -An -tx1 -N32 /dev/urandom | tr -d " \n")
ip netns exec "$tag-h0" timeout -k 5 "$limit" "$msgrun" -n "$ranks" --serve "$coord" \
  >"$outdir/coordinator" 2>&1 &
coordinator=$!
pids=()
for ((i = 0; i < ranks; i++)); do
  # unshare --uts: the rank's own hostname, as on a real cluster node.
  ip netns exec "$tag-h$i" unshare --uts sh -c 'hostname "$0" && exec "$@"' "node$i" \
    env VIADUCT_COORDINATOR="$coord" VIADUCT_RANK="$i" VIADUCT_SIZE="$ranks" \
    timeout -k 5 "$limit" "$worker" "$scenario" "$@" >"$outdir/rank$i" 2>&1 &
  pids+=($!)
done
status=0
for ((i = 0; i < ranks; i++)); do
  wait "${pids[$i]}" || { rc=$?; [ $status -eq 0 ] && status=$rc; }
done
# Ranks that failed may never tell the coordinator; do not wait out its join timeout.
[ "$status" -ne 0 ] && kill "$coordinator" 2>/dev/null
wait "$coordinator" || true
for ((i = 0; i < ranks; i++)); do cat "$outdir/rank$i"; done
passes=$(cat "$outdir"/rank* | grep -c "PASS $scenario")
tcp=$(cat "$outdir"/rank* | grep -c "provider=tcp;ofi_rxm" || true)
if [ "$status" -ne 0 ] || [ "$passes" -ne "$ranks" ]; then
  echo "FAILED: first failing status $status, $passes of $ranks ranks passed"
  echo "--- coordinator:"; cat "$outdir/coordinator"
  exit 1
fi
if [ "$scenario" = connect ] && [ "$tcp" -eq 0 ]; then
  echo "FAILED: ranks on different hosts did not default to the tcp;ofi_rxm provider"
  exit 1
fi
echo "ok: $ranks ranks on $ranks network namespaces (subnet $subnet.0/24) passed $scenario"
