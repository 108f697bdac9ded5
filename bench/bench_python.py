#!/usr/bin/env python3
"""Benchmark of the Python package (python/comet) over build/libcomet.so.

1. comet.estimate in a Python loop: gpt3-175b on a100-80g-selene, cycling
   through the 8 strategies bench/estimate.c uses (tp 8, pp 8; full or
   selective recompute; SP on or off; interleave 1 or 3), every call a
   full Python call (inputs looked up, knobs passed, result object built).
2. A strategy search from Python against the same search in C: gpt3-175b
   on 1,024 NPUs, global batches up to 2,048 (about 3.1 M points, half a
   second), one thread, the whole space; C's rate is
   what `comet search -j 1` reports for the library's search alone, the
   Python rate the points enumerated over the wall time of comet.search
   (band model, JSON rendering and parsing included).

Each figure is the median of RUNS runs (default 5), alternating.
Usage: PYTHONPATH=python python3 bench/bench_python.py [N] [RUNS]
"""
import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
import comet  # noqa: E402

N = int(sys.argv[1]) if len(sys.argv) > 1 else 200000
RUNS = int(sys.argv[2]) if len(sys.argv) > 2 else 5
BIN = os.environ.get("COMET_BIN", os.path.join(HERE, "..", "build", "comet"))

STRATEGIES = [dict(tp=8, pp=8, dp=1, microbatch=1, global_batch=64, recompute=rc, sp=sp,
                   interleave=v)
              for rc in ("full", "selective") for sp in (True, False) for v in (1, 3)]


def estimate_rate():
    kw = dict(model="gpt3-175b", system="a100-80g-selene")
    s = STRATEGIES
    comet.estimate(**kw, **s[0])
    t0 = time.perf_counter()
    for i in range(N):
        comet.estimate(**kw, **s[i & 7])
    return N / (time.perf_counter() - t0)


def search_python():
    t0 = time.perf_counter()
    r = comet.search(npus=1024, max_gbs=2048, threads=1)
    return r["enumerated"] / (time.perf_counter() - t0)


def search_c():
    out = subprocess.run([BIN, "search", "--npus", "1024", "--max-gbs", "2048", "-j", "1"],
                         capture_output=True, text=True, check=True).stdout
    m = re.search(r"(\d+) points enumerated in ([\d.]+) s", out)
    return int(m.group(1)) / float(m.group(2))


def main():
    est, py, c = [], [], []
    for _ in range(RUNS):
        est.append(estimate_rate())
        py.append(search_python())
        c.append(search_c())
    fmt = lambda xs, scale: ", ".join("%.3g" % (x / scale) for x in xs)
    print("comet.estimate from Python: median %.0f k evaluations/s (runs: %s k; N = %d)"
          % (statistics.median(est) / 1e3, fmt(est, 1e3), N))
    print("search from Python: median %.3g M points/s (runs: %s M)"
          % (statistics.median(py) / 1e6, fmt(py, 1e6)))
    print("search in C (comet search -j 1): median %.3g M points/s (runs: %s M)"
          % (statistics.median(c) / 1e6, fmt(c, 1e6)))
    print("Python / C: %.2f" % (statistics.median(py) / statistics.median(c)))


if __name__ == "__main__":
    main()
