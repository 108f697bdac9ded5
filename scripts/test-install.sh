#!/usr/bin/env bash
# make test-install: `make install` into a temporary DESTDIR, a tiny C
# program (tests/install/example.c) built there with
# `pkg-config --cflags --libs comet` and run against the installed shared
# library, its step time checked against `comet estimate --json`'s, then
# `make uninstall`, after which no file may be left. Usage: test-install.sh BUILD
set -euo pipefail
cd "$(dirname "$0")/.."
b=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dest=$tmp/root prefix=/usr
fail() { echo "test-install: FAILED: $*" >&2; exit 1; }
make --no-print-directory -s B="$b" DESTDIR="$dest" PREFIX="$prefix" install >/dev/null
for f in bin/comet lib/libcomet.a lib/libcomet.so lib/pkgconfig/comet.pc \
         share/man/man1/comet.1 include/comet/comet.h; do
    [ -e "$dest$prefix/$f" ] || fail "$prefix/$f not installed"
done
soname=$(objdump -p "$dest$prefix/lib/libcomet.so" | awk '/SONAME/ {print $2}')
[ -e "$dest$prefix/lib/$soname" ] || fail "no $soname (the soname) installed"
export PKG_CONFIG_PATH=$dest$prefix/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$dest
# shellcheck disable=SC2046 # pkg-config's flags are words
cc -std=c11 -Wall -Wextra -Werror tests/install/example.c -o "$tmp/example" \
    $(pkg-config --cflags --libs comet)
got=$(LD_LIBRARY_PATH=$dest$prefix/lib "$tmp/example")
want=$("$dest$prefix/bin/comet" estimate --json | sed -n 's/^  "step_time_s": \(.*\),$/\1/p')
[ -n "$want" ] && [ "$got" = "$want" ] || fail "example printed '$got', comet estimate --json '$want'"
# (whole outputs captured first: grep -q stopping early must not fail the pipe)
libs=$(LD_LIBRARY_PATH=$dest$prefix/lib ldd "$tmp/example")
grep -q "$dest$prefix/lib/$soname" <<<"$libs" || fail "example did not load the installed $soname"
grep -q 'COMET ESTIMATE' "$dest$prefix/share/man/man1/comet.1" || fail "comet.1 has no estimate section"
make --no-print-directory -s B="$b" DESTDIR="$dest" PREFIX="$prefix" uninstall >/dev/null
left=$(find "$dest" ! -type d)
[ -z "$left" ] || fail "uninstall left: $left"
echo "test-install: ok (installed, example built with pkg-config printed $got as comet estimate does, uninstalled clean)"
