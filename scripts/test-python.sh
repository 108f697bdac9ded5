#!/usr/bin/env bash
# make test-python: the Python package's tests (python/tests, pytest) over
# BUILD/libcomet.so, compared with BUILD/comet. Skipped with a message when
# python3 or pytest is missing here; CI installs both (scripts/install-deps.sh).
# Usage: test-python.sh PYTHON BUILD
set -euo pipefail
cd "$(dirname "$0")/.."
py=$1 b=$2
if ! command -v "$py" >/dev/null || ! "$py" -c 'import pytest' 2>/dev/null; then
    echo "test-python: SKIPPED: $py with pytest is not installed (scripts/install-deps.sh installs it)"
    exit 0
fi
COMET_LIBRARY=$PWD/$b/libcomet.so COMET_BIN=$PWD/$b/comet PYTHONPATH=$PWD/python \
    PYTHON=$py "$py" -m pytest -q -p no:cacheprovider python/tests 2>&1 | tail -n 25
exit "${PIPESTATUS[0]}"
