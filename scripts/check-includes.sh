#!/usr/bin/env bash
# Checks the library's layering (run by `make test`; docs/architecture.md
# draws the picture):
#   1. a folder's interface to other folders is its header named after the
#      folder, src/X/X.h; every other header in src/X/ is private to X, so
#      a file outside src/X/ may include src/X/X.h and nothing else of X;
#   2. a folder includes only the interfaces of folders on lower layers
#      (LAYERS below, bottom first; folders on one line are peers and do
#      not include each other);
#   3. given the build folder (`scripts/check-includes.sh build`), a folder
#      calls only functions defined on lower layers, as the compiled
#      objects' symbols show (this sees calls through public headers too).
# Public headers (include/comet/*.h) may be included from anywhere.
# Prints each violation as FILE:LINE: why, and fails when there is one.
set -euo pipefail
cd "$(dirname "$0")/.."

LAYERS=(
    "core vocab"
    "workload hardware network"
    "parallel schedule"
    "cost"
    "estimate"
    "sim"
    "explore plan"
    "report"
    "config"
    "chakra"
    "api"
)

declare -A rank
for i in "${!LAYERS[@]}"; do
    for d in ${LAYERS[$i]}; do rank[$d]=$i; done
done

bad=0
for dir in src/*/; do
    from=$(basename "$dir")
    if [[ -z "${rank[$from]+set}" ]]; then
        echo "$dir: a folder on no layer: add it to LAYERS in $0"
        bad=1
    fi
done
while IFS=: read -r file line text; do
    inc=${text#*\"} inc=${inc%%\"*}
    from=${file#src/} from=${from%%/*}
    case $inc in
        ../*/*) target=src/${inc#../} ;;   # another folder of src/
        */*) continue ;;                   # a public or generated header
        *) target=${file%/*}/$inc ;;       # this folder's own
    esac
    to=${target#src/} to=${to%%/*}
    [[ $to == "$from" ]] && continue
    if [[ $(basename "$target") != "$to.h" ]]; then
        echo "$file:$line: includes $inc, private to src/$to/ (its interface is src/$to/$to.h)"
        bad=1
    elif [[ -n "${rank[$from]+set}" && -n "${rank[$to]+set}" ]] && ((rank[$to] >= rank[$from])); then
        echo "$file:$line: includes $inc, but $to is not on a layer below $from"
        bad=1
    fi
done < <(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' src/*/*.c src/*/*.h)

# 3. calls: each object's undefined symbols against the folder defining them
if [[ $# -ge 1 ]]; then
    objects=()
    for c in src/*/*.c; do objects+=("$1/${c%.c}.o"); done
    defined=$(for o in "${objects[@]}"; do
        nm -g --defined-only "$o" | awk -v f="$o" '{print $3, f}'
    done | sort -u)
    while read -r sym user owner; do
        from=${user%/*} to=${owner%/*}
        from=${from##*/} to=${to##*/}
        [[ $from == "$to" ]] && continue
        if ((rank[$to] >= rank[$from])); then
            echo "src/$from/$(basename "${user%.o}").c: calls $sym of src/$to/, not on a layer below $from"
            bad=1
        fi
    done < <(for o in "${objects[@]}"; do nm -u "$o" | awk -v f="$o" '{print $2, f}'; done |
             sort | join - <(echo "$defined"))
fi

if ((bad)); then
    echo "check-includes: failed (see docs/architecture.md, Layers)"
    exit 1
fi
echo "check-includes: every include${1:+ and every call} respects the layers"
