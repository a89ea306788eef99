#!/usr/bin/env bash
# Installs every Debian 12 package viaduct's build, tests and benchmarks need.
# Idempotent: packages already present are left alone.
set -euo pipefail

packages=(
  build-essential g++ pkg-config meson ninja-build
  # meson compiles through ccache when it is installed: a machine that keeps ~/.cache/ccache
  # recompiles only what changed, in every build tree.
  ccache
  libfabric-dev libfabric-bin
  rdma-core libibverbs-dev librdmacm-dev ibverbs-utils
  catch2
  liburing-dev
  openmpi-bin libopenmpi-dev libpmix-dev
  # scripts/slurm-local and tests/slurm: a one-node Slurm; mpi_pmix.so is in
  # slurm-wlm-basic-plugins and loads libpmix.so, which libpmix-dev ships.
  slurmctld slurmd slurm-client munge slurm-wlm-basic-plugins
  iproute2 procps
  # tests/sortapp/file_safety.py: the directory fsync after a publishing rename, seen by strace.
  strace
  nlohmann-json3-dev gnuplot-nox
  chromium  # tests/timeline/chromium_test.py opens the timeline page in headless Chromium.
  # Every program's command line (common/include/viaduct/cli.hpp).
  libcli11-dev
  zlib1g-dev libstxxl-dev
  libsodium-dev
  # scripts/fuzz.sh: clang, whose runtime package carries libFuzzer and the sanitizers.
  clang libclang-rt-14-dev
  # scripts/format-check.sh (a stage of scripts/test.sh).
  clang-format
  # tests/install: builds a program against the installed libraries with CMake too.
  cmake
  # tests/abi: abidw and abidiff compare the public ABI with the committed baseline.
  abigail-tools
  # The Soft-RoCE guest (scripts/softroce-run): qemu boots Debian's kernel with rxe.
  qemu-system-x86 busybox-static xz-utils ibverbs-providers rdmacm-utils perftest
)

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
