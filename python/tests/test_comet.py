"""Tests of the Python package over libcomet.so: the same numbers and the
same errors as the CLI (build/comet, or $COMET_BIN), every command the
package offers, pandas frames, the GIL released during a long call, and
the fuzz corpora fed through the API without harming the interpreter.
Run by `make test-python` (scripts/test-python.sh sets the paths)."""
import json
import os
import subprocess
import threading
import time

import pytest

import comet

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.environ.get("COMET_BIN", os.path.join(ROOT, "build", "comet"))

SMALL_STUDY = """study:
  name: small
  models: [megatron-22b]
  system: a100-80g-selene
  npus: 16
  global_batch: 16
  axes:
    hbm_capacity: ["40 GiB", "80 GiB"]
    network:
      infiniband:
        bandwidth: ["12.5 GB/s", "25 GB/s", "50 GB/s"]
        topology: [switch]
  search: {max_microbatch: 4, offload: false}
"""


def cli(*args):
    r = subprocess.run([BIN, *args], capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


def test_estimate_default_is_the_cli_json():
    code, out, _ = cli("estimate", "--json")
    assert code == 0
    r = comet.estimate()
    assert r.to_dict() == json.loads(out)
    assert r.step_time_s == json.loads(out)["step_time_s"] or \
        abs(r.step_time_s - json.loads(out)["step_time_s"]) < 1e-9 * r.step_time_s
    assert r.feasible


def test_estimate_presets_and_knobs_match_the_cli_flags():
    code, out, _ = cli("estimate", "--model", "gpt3-175b", "--system", "a100-80g-selene",
                       "--strategy", "gpt3-175b-selene", "--tp", "4", "--pp", "16",
                       "--recompute", "full", "--json")
    assert code == 0
    r = comet.estimate(model="gpt3-175b", system="a100-80g-selene",
                       strategy="gpt3-175b-selene", tp=4, pp=16, recompute="full")
    assert r.to_dict() == json.loads(out)
    assert r["strategy"]["tp"] == 4


def test_inputs_as_dict_yaml_and_file_agree(tmp_path):
    text = comet.preset("strategies", "gpt3-175b-selene")
    path = tmp_path / "s.yaml"
    path.write_text(text)
    a = comet.estimate(strategy="gpt3-175b-selene")
    b = comet.estimate(text)
    c = comet.estimate(str(path))
    body = {"tp": 8, "pp": 8, "dp": 1, "sp": True, "global_batch": 64, "microbatch": 1,
            "interleave": 3, "recompute": "selective", "zero": 0, "grad_fp32": True}
    d = comet.estimate(strategy=body)
    e = comet.estimate({"strategy": body}, model="gpt3-175b")
    f = comet.estimate(json.dumps({"strategy": body}))
    assert a.step_time_s == b.step_time_s == c.step_time_s == d.step_time_s == \
        e.step_time_s == f.step_time_s


def test_error_carries_what_the_cli_shows(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("model:\n  name: x\n  kind: bogus\n")
    code, _, err = cli("estimate", str(bad))
    assert code == 2
    with pytest.raises(comet.CometError) as e:
        comet.estimate(str(bad))
    assert err.strip() == "comet estimate: " + str(e.value)
    assert (e.value.file, e.value.line, e.value.column, e.value.key) == \
        (str(bad), 3, 9, "model.kind")
    assert e.value.status == 2


def test_strategy_error_is_located_in_its_file(tmp_path):
    bad = tmp_path / "s.yaml"
    bad.write_text("strategy:\n  tp: 3\n  pp: 1\n  dp: 1\n")
    code, _, err = cli("estimate", str(bad))
    with pytest.raises(comet.CometError) as e:
        comet.estimate(str(bad))
    assert code == 2 and err.strip() == "comet estimate: " + str(e.value)
    assert e.value.file == str(bad) and e.value.line >= 1 and e.value.key == "strategy"


def test_unknown_preset_and_knob():
    code, _, err = cli("estimate", "--model", "nope")
    with pytest.raises(comet.CometError) as e:
        comet.estimate(model="nope")
    assert err.strip() == "comet estimate: " + str(e.value)
    with pytest.raises(comet.CometError) as e:
        comet.estimate(bogus_knob=1)
    assert e.value.key == "bogus_knob"
    with pytest.raises(comet.CometError):
        comet.estimate(tp="eight")


def test_search_matches_the_cli():
    code, out, _ = cli("search", "--npus", "64", "--gbs", "64", "--top", "3", "-j", "2",
                       "--json")
    assert code == 0
    r = comet.search(npus=64, global_batch=64, top=3, threads=2)
    assert r == json.loads(out)
    assert len(r["top"]) == 3
    with pytest.raises(comet.CometError) as e:
        comet.search(npus=0)
    assert e.value.key == "npus"
    with pytest.raises(comet.CometError) as e:
        comet.search(npus=64)
    assert e.value.key == "global_batch"


def test_sweep_with_progress(tmp_path):
    seen = []
    rows = comet.sweep(SMALL_STUDY, dir=tmp_path / "out", threads=2,
                       progress=lambda done, total: seen.append((done, total)))
    assert len(rows) == 6
    assert seen[-1] == (6, 6) and len(seen) == 6
    code, _, _ = cli("sweep", str(_write(tmp_path / "small.yaml", SMALL_STUDY)),
                     "-o", str(tmp_path / "cli"), "-j", "1", "--quiet")
    assert code == 0
    assert (tmp_path / "out" / "results.jsonl").read_text() == \
        (tmp_path / "cli" / "results.jsonl").read_text()


def test_sweep_stops_when_progress_says_so(tmp_path):
    with pytest.raises(comet.CometError) as e:
        comet.sweep(SMALL_STUDY, dir=tmp_path, threads=1, progress=lambda d, t: d < 2)
    assert e.value.status == 6
    with pytest.raises(ZeroDivisionError):
        comet.sweep(SMALL_STUDY, dir=tmp_path, threads=1, force=True,
                    progress=lambda d, t: 1 / 0)


def test_simulate_step_matches_the_cli():
    code, out, _ = cli("simulate", "--tp", "8", "--pp", "2", "--global-batch", "8",
                       "--microbatch", "1", "--json")
    assert code == 0, out
    r = comet.simulate(tp=8, pp=2, global_batch=8, microbatch=1)
    assert r == json.loads(out)
    assert r["step_time_s"] > 0 and len(r["stages"]) == 2


def test_simulate_collective_matches_the_cli():
    code, out, _ = cli("simulate", "--collective", "all-reduce", "--size", "1GiB", "--npus",
                       "64", "--json")
    assert code == 0
    r = comet.simulate_collective("all-reduce", "1 GiB", npus=64)
    assert r == json.loads(out)
    assert r == comet.simulate_collective("all_reduce", 2**30, system="a100-80g-selene", npus=64)
    code, _, err = cli("simulate", "--collective", "all-sum", "--size", "1GiB", "--npus", "8")
    with pytest.raises(comet.CometError) as e:
        comet.simulate_collective("all-sum", 1e9, npus=8)
    assert e.value.key == "collective" and e.value.message in err


def test_study_summary_matches_the_cli(tmp_path):
    path = _write(tmp_path / "small.yaml", SMALL_STUDY)
    code, out, _ = cli("study", str(path), "-o", str(tmp_path / "cli"), "-j", "1", "--quiet")
    assert code == 0
    r = comet.study(str(path), dir=tmp_path / "py", threads=1)
    assert len(r) == 6
    # the same summary but the line naming the report, which only the CLI writes
    assert r.summary.splitlines() == [l for l in out.splitlines() if not l.startswith("report: ")]


def test_presets_match_the_cli():
    code, out, _ = cli("presets")
    names = comet.presets()
    for kind in ("models", "systems", "strategies", "studies"):
        assert names[kind] and all(n in out for n in names[kind])
    code, out, _ = cli("presets", "show", "gpt3-175b")
    assert code == 0 and comet.preset("models", "gpt3-175b") in out
    with pytest.raises(comet.CometError):
        comet.preset("models", "nope")


def test_export_chakra(tmp_path):
    info = comet.export_chakra(tmp_path / "t", strategy="gpt3-175b-selene", tp=8, pp=2, dp=1,
                               global_batch=8, interleave=1)
    assert info["ranks"] == 16
    assert (tmp_path / "t.0.et").exists() and (tmp_path / "t.network.yml").exists()


def test_to_pandas():
    pd = pytest.importorskip("pandas")
    df = comet.search(npus=64, global_batch=64, top=3, threads=1).to_pandas()
    assert isinstance(df, pd.DataFrame) and len(df) == 3
    assert list(df["rank"]) == [1, 2, 3] and "strategy.tp" in df.columns
    assert comet.estimate().to_pandas()["step_time_s"][0] > 0


def test_gil_released_during_a_search():
    """The main thread keeps running Python while another thread is inside
    a long C call: ctypes released the GIL."""
    done = threading.Event()
    calls = []

    def run():
        t0 = time.perf_counter()
        comet.search(npus=256, global_batch=256, top=1, threads=1)
        calls.append(time.perf_counter() - t0)
        done.set()

    comet.search(npus=8, global_batch=8, top=1, threads=1)  # warm: session built
    t = threading.Thread(target=run)
    t.start()
    ticks = 0
    while not done.is_set():
        ticks += 1
        sum(range(100))
    t.join()
    assert calls[0] > 0.02, "the search was too short to tell"
    assert ticks > 100


def test_threads_share_the_session():
    out = [None] * 4

    def run(i):
        out[i] = [comet.estimate(tp=8, pp=8, global_batch=64, microbatch=1,
                                 interleave=1 + i % 2).step_time_s for _ in range(200)]

    ts = [threading.Thread(target=run, args=(i,)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert out[0] == out[2] and out[1] == out[3] and len(set(out[0])) == 1


def _write(path, text):
    path.write_text(text)
    return path


def test_fuzz_corpora_raise_comet_error_never_crash():
    """Every seed of every fuzz corpus through the Python API, as documents
    and as studies: either a result or a CometError, in this interpreter."""
    n = 0
    for corpus in sorted(os.listdir(os.path.join(ROOT, "fuzz"))):
        d = os.path.join(ROOT, "fuzz", corpus)
        if not corpus.startswith("corpus-"):
            continue
        for name in sorted(os.listdir(d)):
            data = open(os.path.join(d, name), "rb").read()
            for call in (lambda: comet.estimate(data),
                         lambda: comet.estimate(data, tp=2),
                         lambda: comet.export_chakra("/nonexistent/x", data)):
                try:
                    call()
                except comet.CometError as e:
                    assert str(e)
                n += 1
            if b"study" not in data:
                try:
                    comet.sweep(data, dir="/nonexistent/dir")
                except comet.CometError as e:
                    assert str(e)
    assert n > 20


def test_readme_example_runs(tmp_path):
    png = tmp_path / "nvlink.png"
    r = subprocess.run([os.environ.get("PYTHON", "python3"),
                        os.path.join(ROOT, "examples", "nvlink_grid.py"), str(png)],
                       capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python")))
    assert r.returncode == 0, r.stderr
    assert "nvlink_GBps" in r.stdout or "'nvlink_GBps'" in r.stdout
