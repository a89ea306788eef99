#!/bin/bash
# Installs the current build into a temporary folder (meson install --destdir) and uses it
# as an application would: builds C and C++ programs against libmsg with pkg-config (shared,
# and static from C) and with CMake (find_package(libmsg)), runs them as a job of one and
# under the installed msgrun, checks that the libraries export only their C API and that
# the installed programs start without LD_LIBRARY_PATH; builds every installed example
# (share/doc/viaduct/examples) with pkg-config and with the CMakeLists.txt installed beside
# them, and runs each under the installed msgrun; then builds libmsg alone with clang
# (-Dlibremoteio=false -Driver=false -Dsortapp=false -Dsimulator=false -Dtests=false -Dbenchmarks=false).
# Usage: install_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail

build=$(realpath "$1")
src=$(realpath "$2")
here=$src/tests/install
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "install_test: $*" >&2; exit 1; }
step() { echo "--- $*"; }

step "meson install --destdir"
meson install -C "$build" --no-rebuild --quiet --destdir "$tmp/root" >/dev/null
# The prefix and libdir this build installs to.
introspect() {
  meson introspect "$build" --buildoptions |
    python3 -c "import json,sys; print(next(o['value'] for o in json.load(sys.stdin) if o['name']=='$1'))"
}
prefix=$(introspect prefix)
libdir=$(introspect libdir)
case $libdir in /*) ;; *) libdir=$prefix/$libdir ;; esac
root=$tmp/root
lib=$root$libdir
bin=$root$prefix/bin
[ -f "$lib/libmsg.so" ] && [ -f "$lib/libmsg.a" ] && [ -x "$bin/msgrun" ] ||
  fail "libmsg.so, libmsg.a or msgrun not installed under $root$prefix"
with_rio=0
[ -f "$lib/libremoteio.so" ] && with_rio=1

step "exported symbols"
exports() { nm -D --defined-only "$1" | awk '{print $3}'; }
n=$(exports "$lib/libmsg.so" | wc -l)
bad=$(exports "$lib/libmsg.so" | grep -v '^msg_' || true)
[ -z "$bad" ] || fail "libmsg.so exports more than msg_*: $(echo "$bad" | tr "\n" " " | head -c 400)"
exports "$lib/libmsg.so" | grep -qx msg_get_version || fail "libmsg.so lacks msg_get_version"
echo "libmsg.so: $n symbols, all msg_*"
readelf -d "$lib/libmsg.so" | grep -q 'SONAME.*\[libmsg\.so\.0\]' || fail "libmsg.so's SONAME is not libmsg.so.0"
if [ $with_rio = 1 ]; then
  bad=$(exports "$lib/libremoteio.so" | grep -v '^rio_' || true)
  [ -z "$bad" ] || fail "libremoteio.so exports more than rio_*: $(echo "$bad" | tr "\n" " " | head -c 400)"
  echo "libremoteio.so: $(exports "$lib/libremoteio.so" | wc -l) symbols, all rio_*"
fi

step "installed programs start without LD_LIBRARY_PATH"
progs=(msgrun)
[ -x "$bin/msg-pingpong" ] && progs+=(msg-pingpong msg-alltoall)
[ $with_rio = 1 ] && [ -x "$bin/rio-bench" ] && progs+=(rio-bench)
[ -x "$bin/sortapp" ] && progs+=(sortapp sortapp-job sortgen sortcheck)
[ -x "$bin/sansim" ] && progs+=(sansim)
[ -x "$bin/datapump" ] && progs+=(datapump)
for p in "${progs[@]}"; do
  [ -x "$bin/$p" ] || fail "$p not installed"
  if env -u LD_LIBRARY_PATH ldd "$bin/$p" | grep -q 'not found'; then
    env -u LD_LIBRARY_PATH ldd "$bin/$p" >&2
    fail "$p does not find its libraries"
  fi
done
echo "${progs[*]}: libraries found"

step "pkg-config"
# The installed .pc files, their paths read below the temporary root.
pc() { PKG_CONFIG_PATH=$lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$root pkg-config "$@"; }
cflags=$(pc --cflags libmsg)
case " $cflags " in *pmix*|*libnl*|*" -I/usr/include "*) fail "pkg-config --cflags libmsg names other packages' paths: $cflags" ;; esac
cd "$tmp"
run=(env LD_LIBRARY_PATH="$lib")
# shellcheck disable=SC2046
cc -std=c11 -Wall -Werror $cflags "$here/hello.c" -o hello-c $(pc --libs libmsg)
# shellcheck disable=SC2046
c++ -std=c++17 -Wall -Werror $cflags "$here/hello.cpp" -o hello-cpp $(pc --libs libmsg)
# Static libmsg from C: libmsg.a and its private dependencies (libstdc++ among them).
# shellcheck disable=SC2046
cc -std=c11 -Wall -Werror $cflags "$here/hello.c" -o hello-c-static \
  $(pc --static --libs libmsg | sed 's/-lmsg\b/-l:libmsg.a/')
if ldd hello-c-static | grep -q libmsg; then fail "hello-c-static loads libmsg.so"; fi
if [ $with_rio = 1 ]; then
  # shellcheck disable=SC2046
  cc -std=c11 -Wall -Werror $(pc --cflags libremoteio) "$here/hello_rio.c" -o hello-rio \
    $(pc --libs libremoteio)
fi

step "CMake find_package(libmsg)"
cmake -S "$here" -B cmake-build -DCMAKE_PREFIX_PATH="$root$prefix" -DWITH_LIBREMOTEIO=$with_rio \
  -DCMAKE_BUILD_TYPE=Release >cmake.log 2>&1 || { cat cmake.log >&2; fail "cmake configure failed"; }
cmake --build cmake-build >>cmake.log 2>&1 || { cat cmake.log >&2; fail "cmake build failed"; }
if ldd cmake-build/hello-c-static | grep -q libmsg; then fail "CMake hello-c-static loads libmsg.so"; fi

step "run: a job of one, and under the installed msgrun -n 2"
version=$(meson introspect "$build" --projectinfo | python3 -c "import json,sys; print(json.load(sys.stdin)['version'])")
expect_one() { # PROGRAM EXPECTED-LINE
  out=$("${run[@]}" "$1")
  [ "$out" = "$2" ] || fail "$1 printed '$out', expected '$2'"
}
expect_two() { # PROGRAM EXPECTED-LINES (sorted)
  out=$("${run[@]}" "$bin/msgrun" -n 2 "$1" | sort)
  [ "$out" = "$2" ] || fail "msgrun -n 2 $1 printed '$out', expected '$2'"
}
for p in hello-c hello-c-static cmake-build/hello-c cmake-build/hello-c-static; do
  expect_one "./$p" "hello-c rank 0 of 1 libmsg $version"
  expect_two "./$p" "hello-c rank 0 of 2 libmsg $version
hello-c rank 1 of 2 libmsg $version"
done
for p in hello-cpp cmake-build/hello-cpp; do
  expect_one "./$p" "hello-cpp rank 0 of 1 sum 0"
  expect_two "./$p" "hello-cpp rank 0 of 2 sum 1
hello-cpp rank 1 of 2"
done
if [ $with_rio = 1 ]; then
  expect_one ./hello-rio "hello-rio ok"
  expect_one ./cmake-build/hello-rio "hello-rio ok"
fi
step "the installed examples, built with pkg-config and with their CMakeLists.txt"
# What each example prints when it succeeds under msgrun -n N (survivor: its last rank fails,
# and msgrun exits with that rank's status, 137 for SIGKILL).
declare -A ranks=([hello]=2 [ring_sum]=3 [halo]=4 [allreduce]=3 [cq_poll]=2 [survivor]=3)
declare -A status=([survivor]=137)
declare -A says=(
  [hello]="hello: the token visited all 2 ranks over provider "
  [ring_sum]="ring_sum: 3 ranks, sum 6"
  [halo]="halo: 4 ranks, 1000 points, 50 iterations, checksum"
  [allreduce]="allreduce: every rank checked every result"
  [cq_poll]="cq_poll: 2 ranks, 200 messages from every rank to every rank, all received once"
  [survivor]="survivor: rank 2 failed; ranks 0 to 1 carried on, their sum 3")
examples=$root$prefix/share/doc/viaduct/examples
[ -f "$examples/CMakeLists.txt" ] || fail "no CMakeLists.txt under $examples"
found=()
for f in "$examples"/*.c; do
  name=$(basename "$f" .c)
  [ -n "${says[$name]:-}" ] || fail "$f: an installed example this test does not know"
  found+=("$name")
done
[ ${#found[@]} = ${#says[@]} ] || fail "$examples holds ${found[*]}, expected ${!says[*]}"
mkdir examples-pc
for name in "${found[@]}"; do
  # shellcheck disable=SC2046
  cc -std=c99 -Wall -Wextra -Wpedantic -Werror $cflags "$examples/$name.c" -o "examples-pc/$name" \
    $(pc --libs libmsg)
done
cmake -S "$examples" -B examples-cmake -DCMAKE_PREFIX_PATH="$root$prefix" \
  -DCMAKE_C_FLAGS="-Wall -Wextra -Wpedantic -Werror" >examples.log 2>&1 ||
  { cat examples.log >&2; fail "cmake configure of the installed examples failed"; }
cmake --build examples-cmake >>examples.log 2>&1 ||
  { cat examples.log >&2; fail "cmake build of the installed examples failed"; }
for name in "${found[@]}"; do
  for exe in "examples-pc/$name" "examples-cmake/$name"; do
    n=${ranks[$name]}
    set +e
    out=$("${run[@]}" "$bin/msgrun" -n "$n" --timeout 120 "./$exe" 2>"$tmp/examples.err")
    got=$?
    set -e
    [ "$got" = "${status[$name]:-0}" ] ||
      { cat "$tmp/examples.err" >&2; fail "msgrun -n $n $exe exited $got, expected ${status[$name]:-0}"; }
    grep -qF "${says[$name]}" <<<"$out" || fail "msgrun -n $n $exe printed '$out', not '${says[$name]}'"
  done
done
echo "examples ${found[*]}: built with pkg-config and CMake, each run under msgrun"

step "libmsg-only build with clang"
# Kept beside the build (BUILD_DIR/install-clang-libmsg) so that later runs only rebuild
# what changed.
if command -v clang >/dev/null && command -v clang++ >/dev/null; then
  cb=$build/install-clang-libmsg
  opts=(-Dlibremoteio=false -Driver=false -Dsortapp=false -Dsimulator=false -Dtests=false
    -Dbenchmarks=false)
  if [ -f "$cb/build.ninja" ]; then
    meson setup --reconfigure "$cb" "$src" "${opts[@]}" >"$tmp/clang.log" 2>&1
  else
    CC=clang CXX=clang++ meson setup "$cb" "$src" "${opts[@]}" >"$tmp/clang.log" 2>&1
  fi || { cat "$tmp/clang.log" >&2; fail "meson setup of the clang libmsg-only build failed"; }
  # What is checked below: the library and msgrun (the tools and examples would add a third
  # to a cold build's time).
  so=$(ninja -C "$cb" -t targets all | sed -n 's|^\(libmsg/libmsg\.so[.0-9]*\): .*|\1|p' | head -n 1)
  [ -n "$so" ] || fail "$cb has no libmsg.so target"
  ninja -C "$cb" "$so" libmsg/tools/msgrun >>"$tmp/clang.log" 2>&1 ||
    { tail -40 "$tmp/clang.log" >&2; fail "the clang libmsg-only build failed"; }
  grep -q 'command = .*clang++ ' "$cb/build.ninja" || fail "$cb was not configured with clang"
  bad=$(exports "$cb/libmsg/libmsg.so" | grep -v '^msg_' || true)
  [ -z "$bad" ] || fail "clang's libmsg.so exports more than msg_*: $(echo "$bad" | tr "\n" " " | head -c 400)"
  echo "clang libmsg-only build: libmsg.so and msgrun built, $(exports "$cb/libmsg/libmsg.so" | wc -l) symbols, all msg_*"
else
  echo "clang not installed: the libmsg-only clang build is not tried"
fi
echo "install_test: all passed"
