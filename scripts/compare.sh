#!/usr/bin/env bash
# Runs libmsg's benchmarks beside their peers in one go and prints libmsg/peer ratios:
# msg-alltoall vs Open MPI, msg-pingpong vs libfabric's fi_pingpong, and the memcpy limit.
set -u -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

usage() {
    cat <<'EOF'
usage: scripts/compare.sh [options]

Runs, in this order and on this machine:
  memory   memcpy-bw: 1- and 2-thread copy bandwidth, the limit for one-host all-to-all;
  alltoall msg-alltoall vs mpi-alltoall at P = 2, 4, 8 (512 KiB x 50 per peer and
           direction), buffers reused and rotated through DRAM:
             shm:  libmsg --provider shm            vs Open MPI default (ob1 + vader)
             tcp:  libmsg --provider "tcp;ofi_rxm"  vs Open MPI pml cm + mtl ofi "tcp;ofi_rxm"
           for each long-message protocol (sendrecv, rdma, rdma-write), restricted and
           unrestricted (one table per mode);
  pingpong msg-pingpong vs fi_pingpong (rdm endpoints, two local processes) on shm and
           tcp;ofi_rxm, for each long-message protocol: small-message latency and 1-16 MiB
           bandwidth (one table each).
Ratios are libmsg speed / peer speed: above 1 libmsg is faster. A run that fails, times out
or is missing is reported as such. Raw JSON, logs and exact commands are kept in --out.

  -b, --build DIR     meson build directory (default: build, under the repository root
                      unless DIR exists relative to the current directory)
  -q, --quick         P = 2 and 4, reused buffers, fewer iterations and sizes (~1 minute)
  -o, --out DIR       where to keep raw results (default: results/compare-<date>-<time>)
      --ranks "LIST"  all-to-all job sizes (default "2 4 8")
      --iters N       all-to-all issues per send and receive (default 50, quick 20)
      --repeat R      all-to-all measurements per job; the median one is reported (default
                      15, quick 5): 50 x 512 KiB lasts milliseconds, one run is one sample
      --only LIST     comma-separated subset of: memory,alltoall,pingpong
      --timeout S     limit per run in seconds (default 120)
  -h, --help          this text
EOF
}

die() {
    echo "compare.sh: $*" >&2
    exit 2
}

BUILD=build
QUICK=0
OUT=""
RANKS=""
ITERS=""
REPEAT=""
ONLY="memory,alltoall,pingpong"
TIMEOUT=120
while [ $# -gt 0 ]; do
    case "$1" in
        -b | --build | -o | --out | --ranks | --iters | --repeat | --only | --timeout)
            [ $# -ge 2 ] || die "$1 needs a value (see --help)"
            case "$1" in
                -b | --build) BUILD=$2 ;;
                -o | --out) OUT=$2 ;;
                --ranks) RANKS=$2 ;;
                --iters) ITERS=$2 ;;
                --repeat) REPEAT=$2 ;;
                --only) ONLY=$2 ;;
                --timeout) TIMEOUT=$2 ;;
            esac
            shift 2
            ;;
        --build=* | --out=* | --ranks=* | --iters=* | --repeat=* | --only=* | --timeout=*)
            name=${1%%=*}
            set -- "$name" "${1#*=}" "${@:2}"
            ;;
        -q | --quick) QUICK=1; shift ;;
        -h | --help) usage; exit 0 ;;
        *) die "unknown option '$1' (see --help)" ;;
    esac
done

[[ "$TIMEOUT" =~ ^[1-9][0-9]*$ ]] || die "--timeout: '$TIMEOUT' is not a number of seconds"
[ -z "$ITERS" ] || [[ "$ITERS" =~ ^[1-9][0-9]*$ ]] || die "--iters: '$ITERS' is not a count"
[ -z "$REPEAT" ] || [[ "$REPEAT" =~ ^[1-9][0-9]*$ ]] || die "--repeat: '$REPEAT' is not a count"
for p in $RANKS; do
    if ! [[ "$p" =~ ^[1-9][0-9]*$ ]] || [ "$p" -lt 2 ]; then die "--ranks: '$p' is not >= 2"; fi
done
for s in ${ONLY//,/ }; do
    case "$s" in memory | alltoall | pingpong) ;; *) die "--only: unknown section '$s'" ;; esac
done
command -v jq >/dev/null || die "needs jq to read the benchmarks' JSON (apt-get install jq)"

if [ "$QUICK" = 1 ]; then
    : "${RANKS:=2 4}" "${ITERS:=20}" "${REPEAT:=5}"
    BUFFERS="reuse"
    PP_ITERS=200
    PP_SIZES="8 1048576 16777216"
    MEMCPY_ARGS=(--bytes 128M --reps 3)
else
    : "${RANKS:=2 4 8}" "${ITERS:=50}" "${REPEAT:=15}"
    BUFFERS="reuse rotate"
    PP_ITERS=1000
    PP_SIZES="1 8 1048576 2097152 4194304 8388608 16777216"
    MEMCPY_ARGS=(--bytes 256M --reps 5)
fi

if [ -d "$BUILD" ]; then
    BUILD=$(cd "$BUILD" && pwd)
elif [[ "$BUILD" != /* ]]; then
    BUILD="$ROOT/$BUILD"
fi
[ -d "$BUILD" ] || die "no build directory $BUILD (meson setup $BUILD && ninja -C $BUILD)"
BENCH="$BUILD/libmsg/bench"
MSGRUN="$BUILD/libmsg/tools/msgrun"
[ -n "$OUT" ] || OUT="$ROOT/results/compare-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$OUT" || die "cannot create $OUT"

MPIRUN=(mpirun --allow-run-as-root --oversubscribe)
MPI_TCP=(--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include "tcp;ofi_rxm")
FAILURES=0

section_wanted() { [[ ",$ONLY," == *",$1,"* ]]; }

# execute NAME CMD...: one run under the time limit, stdout to NAME.out, stderr to NAME.log, the
# exact command to NAME.cmd; NAME.status becomes ok, TIMEOUT, FAILED(exit N) or MISSING.
execute() {
    local name=$1
    shift
    printf '%q ' "$@" >"$OUT/$name.cmd"
    echo >>"$OUT/$name.cmd"
    local arg
    for arg in "$@"; do
        if [[ "$arg" == "$BUILD"/* && ! -x "$arg" ]]; then
            echo "MISSING" >"$OUT/$name.status"
            echo "not built: $arg" >"$OUT/$name.log"
            printf '  %-50s%s\n' "$name" "MISSING" >&2
            return
        fi
    done
    printf '  %-50s' "$name" >&2
    local start=$SECONDS
    timeout --kill-after=5 "$TIMEOUT" "$@" >"$OUT/$name.out" 2>"$OUT/$name.log" </dev/null
    local rc=$?
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
        echo "TIMEOUT" >"$OUT/$name.status"
    elif [ $rc -ne 0 ]; then
        echo "FAILED(exit $rc)" >"$OUT/$name.status"
    else
        echo "ok" >"$OUT/$name.status"
    fi
    echo "$(cat "$OUT/$name.status") ($((SECONDS - start)) s)" >&2
}

# run NAME CMD...: execute a benchmark that prints one JSON object; NAME.json holds it.
run() {
    local name=$1
    execute "$@"
    grep '^{' "$OUT/$name.out" 2>/dev/null | tail -n 1 >"$OUT/$name.json"
    if [ "$(cat "$OUT/$name.status")" = ok ] &&
        ! jq -e 'type == "object"' "$OUT/$name.json" >/dev/null 2>&1; then
        echo "FAILED(no JSON)" >"$OUT/$name.status"
    fi
    [ "$(cat "$OUT/$name.status")" = ok ] || FAILURES=$((FAILURES + 1))
}

# figure NAME JQ: a number from NAME's JSON, or the reason there is none.
figure() {
    local status
    status=$(cat "$OUT/$1.status" 2>/dev/null || echo "NOT-RUN")
    if [ "$status" != ok ]; then
        echo "$status"
        return
    fi
    local v
    v=$(jq -r "$2" "$OUT/$1.json" 2>/dev/null | head -n 1)
    [[ "$v" =~ ^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$ ]] && echo "$v" || echo "n/a"
}

is_number() { [[ "$1" =~ ^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$ ]]; }

# ratio A B: A/B to two decimals, or "-" when either is not a figure.
ratio() {
    if is_number "$1" && is_number "$2" && awk -v b="$2" 'BEGIN { exit !(b > 0) }'; then
        awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'
    else
        echo "-"
    fi
}

# cell VALUE [RATIO]: "12345.6 (0.74)" or the failure text, fixed width.
cell() {
    local v=$1 r=${2:-}
    if is_number "$v"; then
        v=$(awk -v x="$v" 'BEGIN { printf (x >= 100 ? "%.1f" : "%.3g"), x }')
        [ -n "$r" ] && v="$v ($r)"
    fi
    printf ' %-18s' "$v"
}

echo "# compare.sh $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) CPUs, $(uname -sr)"
echo "# build $BUILD; raw results in $OUT"
echo "# $(fi_info --version 2>/dev/null | grep '^libfabric:' | tr -s ' ')," \
    "$(mpirun --version 2>/dev/null | head -n 1)"
echo "# MB = 10^6 bytes; ratio = libmsg speed / peer speed (above 1: libmsg faster)"
# Busy-polling peers (fi_pingpong, Open MPI) collapse when other work shares the cores; the
# load and CPU pressure printed at both ends say how far to trust a run.
machine_load() {
    local pressure
    pressure=$(awk '/^some/ { sub("avg10=", "", $2); print $2 "%" }' /proc/pressure/cpu 2>/dev/null)
    echo "load average $(cut -d' ' -f1-3 /proc/loadavg), CPU pressure (10 s) ${pressure:-n/a}"
}
echo "# at start: $(machine_load) (other work on the machine skews every figure)"

# ---- memory-copy limit ----
COPY1="-"
COPY2="-"
if section_wanted memory || section_wanted alltoall; then
    echo >&2 "memory-copy limit:"
    run memcpy "$BENCH/memcpy-bw" --json --threads 1,2 "${MEMCPY_ARGS[@]}"
    COPY1=$(figure memcpy '.results[] | select(.threads == 1) | .best_mbps')
    COPY2=$(figure memcpy '.results[] | select(.threads == 2) | .best_mbps')
    echo
    echo "## memory-copy limit (memcpy-bw, $(jq -r '.buffer_bytes // "?"' "$OUT/memcpy.json" 2>/dev/null) B buffers, best of reps)"
    printf '%-10s%s\n' "threads" "MB/s copied"
    printf '%-10s%s\n' 1 "$COPY1" 2 "$COPY2"
fi

# ---- all-to-all ----
PROTOCOLS=(sendrecv rdma rdma-write)
MODES=(unrestricted restricted)
if section_wanted alltoall; then
    # One table per mode, printed once every run is done (progress goes to stderr).
    declare -A ALLTOALL_ROWS=()
    for fabric in shm tcp; do
        if [ "$fabric" = shm ]; then provider=shm; mpi_args=(); else provider="tcp;ofi_rxm"; mpi_args=("${MPI_TCP[@]}"); fi
        for p in $RANKS; do
            for buffers in $BUFFERS; do
                extra=()
                [ "$buffers" = rotate ] && extra=(--rotate)
                base="alltoall-$fabric-p$p-$buffers"
                echo >&2 "all-to-all, $fabric, P=$p, buffers $buffers:"
                run "$base-mpi" "${MPIRUN[@]}" -np "$p" "${mpi_args[@]}" \
                    "$BENCH/mpi-alltoall" --json --iters "$ITERS" --repeat "$REPEAT" "${extra[@]}"
                mpi=$(figure "$base-mpi" .per_rank_bidir_mbps)
                for mode in "${MODES[@]}"; do
                    row=$(printf '%-7s%-4s%-8s' "$fabric" "$p" "$buffers")
                    row+=$(cell "$mpi")
                    for protocol in "${PROTOCOLS[@]}"; do
                        name="$base-$protocol-$mode"
                        run "$name" "$MSGRUN" -n "$p" "$BENCH/msg-alltoall" --json --iters "$ITERS" --repeat "$REPEAT" \
                            --provider "$provider" --protocol "$protocol" "--$mode" "${extra[@]}"
                        v=$(figure "$name" .per_rank_bidir_mbps)
                        row+=$(cell "$v" "$(ratio "$v" "$mpi")")
                    done
                    ALLTOALL_ROWS[$mode]+="$row"$'\n'
                done
            done
        done
    done
    echo
    echo "## all-to-all (msg-alltoall vs mpi-alltoall): 512 KiB x $ITERS to and from every peer"
    echo "# per-rank bidirectional MB/s (sent + received) / elapsed, mean over ranks, median of" \
        "$REPEAT measurements in one job; (ratio vs MPI)"
    echo "# memory-copy limit beside it: $COPY1 MB/s (1 thread), $COPY2 MB/s (2 threads)"
    for mode in "${MODES[@]}"; do
        echo "# libmsg $mode"
        printf '%-7s%-4s%-8s' fabric P buffers
        printf ' %-18s' "MPI" "${PROTOCOLS[@]}"
        echo
        printf '%s' "${ALLTOALL_ROWS[$mode]}"
    done
fi

# ---- ping-pong ----
# fi_pingpong_run NAME PROVIDER BYTES ITERS PORT: libfabric's own ping-pong, server and client as
# two local processes; NAME.json gets the client's one-way time in msg-pingpong's terms.
fi_pingpong_run() {
    local name=$1 provider=$2 bytes=$3 iters=$4 port=$5
    local args=(-p "$provider" -e rdm -I "$iters" -S "$bytes")
    if ! command -v fi_pingpong >/dev/null; then
        echo "MISSING" >"$OUT/$name.status"
        FAILURES=$((FAILURES + 1))
        return
    fi
    timeout --kill-after=5 "$TIMEOUT" fi_pingpong "${args[@]}" -B "$port" \
        >"$OUT/$name-server.out" 2>&1 </dev/null &
    local server=$!
    local _
    for _ in $(seq 100); do
        ss -ltn "sport = :$port" 2>/dev/null | grep -q LISTEN && break
        sleep 0.05
    done
    execute "$name" fi_pingpong "${args[@]}" -P "$port" 127.0.0.1
    local status
    status=$(cat "$OUT/$name.status")
    # A client that failed leaves its server waiting; it is ours to end.
    [ "$status" = ok ] || kill "$server" 2>/dev/null
    wait "$server"
    local server_rc=$?
    # The client's figures line: bytes #sent #ack total time MB/sec usec/xfer Mxfers/sec.
    local usec
    usec=$(awk 'NF >= 8 && $1 != "bytes" { u = $7 } END { print u }' "$OUT/$name.out")
    if [ "$status" = ok ] && [ $server_rc -ne 0 ]; then
        status="FAILED(server exit $server_rc)"
    elif [ "$status" = ok ] && ! is_number "$usec"; then
        status="FAILED(no figures)"
    fi
    if [ "$status" = ok ]; then
        awk -v b="$bytes" -v u="$usec" 'BEGIN {
            printf "{\"bytes\":%d,\"latency_us\":%.3f,\"bandwidth_mbps\":%.4f}\n", b, u, b / u }' \
            >"$OUT/$name.json"
    else
        FAILURES=$((FAILURES + 1))
    fi
    echo "$status" >"$OUT/$name.status"
}

# Same per-size iteration counts as msg-pingpong: full count up to 64 KiB, then scaled down.
pp_iters() {
    awk -v b="$1" -v n="$PP_ITERS" 'BEGIN {
        if (b <= 65536) { print n; exit }
        s = int(n * 65536 / b); f = (n < 20) ? n : 20; print (s > f) ? s : f }'
}

if section_wanted pingpong; then
    # Latency and bandwidth tables, printed once every run is done (progress goes to stderr).
    LAT_ROWS=""
    BW_ROWS=""
    port=47700
    for provider in shm "tcp;ofi_rxm"; do
        tag=${provider%%;*}
        echo >&2 "ping-pong, $provider:"
        for protocol in "${PROTOCOLS[@]}"; do
            run "pingpong-$tag-$protocol" "$MSGRUN" -n 2 "$BENCH/msg-pingpong" --json \
                --provider "$provider" --protocol "$protocol" --iters "$PP_ITERS" --max 16M
        done
        for bytes in $PP_SIZES; do
            port=$((port + 1))
            fi_pingpong_run "fi-$tag-$bytes" "$provider" "$bytes" "$(pp_iters "$bytes")" "$port"
            fi_lat=$(figure "fi-$tag-$bytes" .latency_us)
            fi_bw=$(figure "fi-$tag-$bytes" .bandwidth_mbps)
            lat_row=$(printf '%-13s%-10s' "$provider" "$bytes")$(cell "$fi_lat")
            bw_row=$(printf '%-13s%-10s' "$provider" "$bytes")$(cell "$fi_bw")
            for protocol in "${PROTOCOLS[@]}"; do
                sel=".results[] | select(.bytes == $bytes)"
                lat=$(figure "pingpong-$tag-$protocol" "$sel | .latency_us")
                bw=$(figure "pingpong-$tag-$protocol" "$sel | .bandwidth_mbps")
                lat_row+=$(cell "$lat" "$(ratio "$fi_lat" "$lat")")
                bw_row+=$(cell "$bw" "$(ratio "$bw" "$fi_bw")")
            done
            LAT_ROWS+="$lat_row"$'\n'
            BW_ROWS+="$bw_row"$'\n'
        done
    done
    echo
    echo "## ping-pong (msg-pingpong vs fi_pingpong, rdm, two local processes)"
    echo "# one-way latency us (round trip / 2); (ratio vs fi_pingpong, above 1: libmsg faster)"
    printf '%-13s%-10s' provider bytes
    printf ' %-18s' "fi_pingpong" "${PROTOCOLS[@]}"
    echo
    printf '%s' "$LAT_ROWS"
    echo "# bandwidth MB/s (bytes / one-way time); (ratio vs fi_pingpong)"
    printf '%-13s%-10s' provider bytes
    printf ' %-18s' "fi_pingpong" "${PROTOCOLS[@]}"
    echo
    printf '%s' "$BW_ROWS"
fi

echo
echo "# at end: $(machine_load)"
if [ "$FAILURES" -gt 0 ]; then
    echo "# $FAILURES run(s) did not produce figures; see the .log files in $OUT"
    exit 1
fi
echo "# every run produced figures"
