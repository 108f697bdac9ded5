"""README's notebook-style example: GPT-3 175B on the Selene preset, step
time against NVLink bandwidth for three tensor-parallel sizes, as a table
(pandas) and a plot (matplotlib, when installed). Run from the source tree:
PYTHONPATH=python python3 examples/nvlink_grid.py [plot.png]"""
import sys

import comet

base = comet.preset("systems", "a100-80g-selene")
rows = []
for gbps in (50, 100, 150, 300, 600, 900):
    system = base.replace('bandwidth: "300 GB/s"', 'bandwidth: "%d GB/s"' % gbps, 1)
    for tp in (2, 4, 8):
        r = comet.estimate(system, model="gpt3-175b", strategy="gpt3-175b-selene",
                           tp=tp, pp=64 // tp)
        rows.append({"nvlink_GBps": gbps, "tp": tp, "step_s": r.step_time_s,
                     "tp_exposed_s": r.tp_exposed_s, "mfu": r.mfu})

try:
    import pandas as pd
    df = pd.DataFrame(rows)
    print(df.pivot(index="nvlink_GBps", columns="tp", values="step_s").round(2))
except ImportError:
    for row in rows:
        print(row)

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(5, 3.2))
    for tp in (2, 4, 8):
        pts = [(x["nvlink_GBps"], x["step_s"]) for x in rows if x["tp"] == tp]
        ax.plot(*zip(*pts), marker="o", label="tp %d, pp %d" % (tp, 64 // tp))
    ax.set_xlabel("NVLink bandwidth per GPU (GB/s)")
    ax.set_ylabel("step time (s)")
    ax.set_title("GPT-3 175B, 64 A100s, batch 64")
    ax.legend()
    fig.tight_layout()
    fig.savefig(sys.argv[1] if len(sys.argv) > 1 else "nvlink.png")
except ImportError:
    pass
