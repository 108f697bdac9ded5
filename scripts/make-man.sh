#!/usr/bin/env bash
# Writes the comet(1) man page from the help text the CLI itself prints:
# `comet --help` gives the synopsis and the command list, and each
# command's `comet CMD --help` becomes a section of its own, so the page
# never drifts from the program. Usage: make-man.sh BUILD/comet OUT.1
# (written to a temporary beside OUT and renamed into place).
set -euo pipefail
bin=$1 out=$2
tmp=$(mktemp "$out.XXXXXX")
trap 'rm -f "$tmp"' EXIT

# roff: a backslash is \e; a line starting with . or ' is protected by \&
roff() { sed -e 's/\\/\\e/g' -e "s/^\([.']\)/\\\\\&\1/"; }

version=$("$bin" version | awk '{print $2}')
commands=$("$bin" --help | awk '/^commands:/ {on = 1; next} on && /^  [a-z]/ {print $1} on && /^$/ {exit}')
{
    echo ".TH COMET 1 \"\" \"comet $version\" \"User Commands\""
    echo ".SH NAME"
    echo "comet \\- cluster design-space explorer for distributed deep-learning training"
    echo ".SH SYNOPSIS"
    echo ".B comet"
    echo ".I command"
    echo "[options]"
    echo ".SH DESCRIPTION"
    echo "The text below is what \\fBcomet \\-\\-help\\fR and \\fBcomet"
    echo "\\fIcommand\\fB \\-\\-help\\fR print."
    echo ".PP"
    echo ".nf"
    "$bin" --help | roff
    echo ".fi"
    for c in $commands; do
        [ "$c" = version ] && continue
        echo ".SH \"COMET $(echo "$c" | tr '[:lower:]' '[:upper:]')\""
        echo ".nf"
        # a command that answers --help with its usage on stderr still documents itself
        { "$bin" "$c" --help 2>&1 || true; } | roff
        echo ".fi"
    done
    echo ".SH SEE ALSO"
    echo "The project's README.md and docs/ (docs/python.md for the Python package)."
} >"$tmp"
chmod 644 "$tmp"
mv "$tmp" "$out"
trap - EXIT
