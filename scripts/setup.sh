#!/usr/bin/env bash
# Installs the Debian 12 packages viaduct needs. Idempotent: packages already present are
# left alone.
#   scripts/setup.sh        everything: the build, the tests and the benchmarks
#   scripts/setup.sh main   only the build (every package meson's configuration looks for, so
#                           the tree is the same as after a full setup) and the main job
set -euo pipefail

usage() { echo "usage: scripts/setup.sh [main]" >&2; exit 2; }
[ $# -le 1 ] || usage
case "${1:-all}" in
  all|main) scope=${1:-all} ;;
  -h|--help) echo "usage: scripts/setup.sh [main]   (main: only what the build and the main job need)"; exit 0 ;;
  *) usage ;;
esac

# The build: what meson.build finds (required or auto), so that a later full setup does not
# change the release tree's configuration; and what scripts/main.sh runs.
packages=(
  build-essential g++ pkg-config meson ninja-build
  # meson compiles through ccache when it is installed: a machine that keeps ~/.cache/ccache
  # recompiles only what changed, in every build tree.
  ccache
  libfabric-dev libfabric-bin
  rdma-core libibverbs-dev librdmacm-dev
  catch2
  liburing-dev
  libopenmpi-dev libpmix-dev
  nlohmann-json3-dev
  # Every program's command line (common/include/viaduct/cli.hpp).
  libcli11-dev
  zlib1g-dev libstxxl-dev
  libsodium-dev
  procps
)
# The tests and benchmarks.
test_packages=(
  openmpi-bin
  # scripts/slurm-local and tests/slurm: a one-node Slurm; mpi_pmix.so is in
  # slurm-wlm-basic-plugins and loads libpmix.so, which libpmix-dev ships.
  slurmctld slurmd slurm-client munge slurm-wlm-basic-plugins
  iproute2
  # tests/sortapp/file_safety.py: the directory fsync after a publishing rename, seen by strace.
  strace
  gnuplot-nox
  chromium  # tests/timeline/chromium_test.py opens the timeline page in headless Chromium.
  # scripts/fuzz.sh: clang, whose runtime package carries libFuzzer and the sanitizers.
  clang libclang-rt-14-dev
  # scripts/format-check.sh (a stage of scripts/test.sh).
  clang-format
  # tests/install: builds a program against the installed libraries with CMake too.
  cmake
  # tests/abi: abidw and abidiff compare the public ABI with the committed baseline.
  abigail-tools
  # tests/man/man_test.py: groff formats every man page, warnings as errors; and
  # tests/man/lookup_test.sh looks the installed pages up with man.
  groff-base man-db
  # The Soft-RoCE guest (scripts/softroce-run): qemu boots Debian's kernel with rxe.
  qemu-system-x86 busybox-static xz-utils ibverbs-providers ibverbs-utils rdmacm-utils perftest
)
[ "$scope" = main ] || packages+=("${test_packages[@]}")

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages already installed"
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "setup: missing packages: ${missing[*]}" >&2
  echo "setup: run as root (or with sudo) to install them" >&2
  exit 1
fi

echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
