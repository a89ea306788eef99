#!/bin/bash
# Installs this build's manual pages into a temporary folder (meson install --tags man
# --destdir) and looks pages up there with man(1) as a user would: a hand-written group page
# and a function's one-line page of each library, the overview pages, and programs' pages.
# Each must print a page whose text names what was asked for; and every page the build
# installs must be in that folder. Skipped (77) without man-db.
# Usage: lookup_test.sh BUILD_DIR
set -euo pipefail

build=$(realpath "$1")
command -v man >/dev/null || { echo "man is not installed (Debian: man-db): nothing looked up"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "lookup_test: $*" >&2; exit 1; }

meson install -C "$build" --no-rebuild --quiet --tags man --destdir "$tmp/root" >/dev/null
# man(1) may read the pages as another user: the tree must be readable as an installed one is.
chmod -R a+rX "$tmp"
page=$(find "$tmp/root" -path '*/man7/libmsg.7' -print -quit)
[ -n "$page" ] || fail "libmsg.7 not installed under $tmp/root"
mandir=$(dirname "$(dirname "$page")")
# Every page the build installs is in the man tag (an untagged page would be missing here).
expected=$(python3 -c '
import json, re, sys
plan = json.load(open(sys.argv[1] + "/meson-info/intro-installed.json"))
print("\n".join(sorted(m.group(0) for d in plan.values() for m in [re.search(r"man[1-9]/[^/]+$", d)] if m)))
' "$build")
got=$(cd "$mandir" && find . -type f | sed 's|^\./||' | LC_ALL=C sort)
[ "$got" = "$expected" ] ||
  fail "meson install --tags man installed other pages than the build installs: $(diff <(echo "$expected") <(echo "$got") | head -20)"

# Each library's pages, the overviews and some programs' are found here (man -w), a group
# page and a one-line page of each section rendered in full.
n=0
for entry in 3:msg_init 3:msg_isend 3:rio_init 3:rio_read 3:river_put 3:river_get_batch \
  7:libmsg 7:libremoteio 7:river 1:msgrun 1:sortapp 1:sortapp-job 1:datapump 1:sansim; do
  section=${entry%%:*}
  name=${entry#*:}
  where=$(man -M "$mandir" -w "$section" "$name" 2>&1) || fail "man -w $section $name: $where"
  case $where in "$mandir"/*) ;; *) fail "man -w $section $name found $where, not under $mandir" ;; esac
  n=$((n + 1))
done
for entry in 3:msg_init 3:rio_read 3:river_put 7:libremoteio 1:sortapp 1:sortapp-job; do
  section=${entry%%:*}
  name=${entry#*:}
  out=$(MANWIDTH=100 man -M "$mandir" -P cat "$section" "$name" 2>&1) ||
    fail "man $section $name: exit $?: $out"
  # The rendered NAME section names the page (a one-line page shows its group's, which names
  # it); roff's hyphens come out as plain ones.
  grep -q -- "^ *NAME" <<<"$out" || fail "man $section $name printed no NAME section: ${out:0:300}"
  grep -qw -- "$name" <<<"$out" || fail "man $section $name printed a page that does not name it"
done
echo "lookup_test: $n pages found with man -M $mandir, 6 of them rendered"
