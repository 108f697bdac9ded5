#!/usr/bin/env bash
# Installs the Debian packages comet needs to build and test, only if missing.
# Used by `make run`, `make test` and .ci/run, so a fresh machine needs nothing else.
# `install-deps.sh fuzz` adds clang, its libFuzzer and sanitizer runtimes
# (libclang-rt-dev, only a Recommends of clang) and llvm-symbolizer (in llvm)
# so crash reports name file and line, for `make fuzz`;
# `install-deps.sh browser` adds Debian's Chromium for the report's browser
# test (without it that one test is skipped with a message).
set -euo pipefail
need=(gcc make libc6-dev libyaml-dev libcmocka-dev protobuf-c-compiler libprotobuf-c-dev zlib1g-dev)
# OpenMPI is optional for the build (comet sweep then runs single-process);
# it is installed so that `mpirun -n K comet sweep` and its test work.
need+=(libopenmpi-dev openmpi-bin)
# make test-install builds a program with pkg-config against the installed
# library; make test-python runs the Python package's tests with pytest
# (pandas for .to_pandas())
need+=(pkgconf python3 python3-pytest python3-pandas)
if [ "${1:-}" = fuzz ]; then
    need+=(clang libclang-rt-dev llvm)
fi
if [ "${1:-}" = browser ]; then
    need+=(chromium)
fi
missing=()
for p in "${need[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "install-deps: installing ${missing[*]}" >&2
sudo_cmd=()
[ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
