"""comet from Python: the cluster design-space explorer's library, called
in-process through ctypes (see _lib.py for why and how it is found).

Inputs are what the CLI reads: documents with model:, system: and
strategy: sections given as dicts, YAML or JSON strings or file paths
(positional, read in order, later sections winning), and model=, system=,
strategy= as preset names, dicts (the section's body) or documents.
Strategy knobs are keyword arguments named as the JSON output's
"strategy" keys (tp=8, sp=True, recompute="full"), applied after the
inputs as the CLI's knob flags are. Results are the CLI's --json output
as plain Python objects; errors raise CometError with the file, line,
column and key the CLI shows. Calls release the GIL while in C.
"""
import ctypes
import json
import os
import tempfile

from . import _lib
from ._lib import CometError

__all__ = ["CometError", "Estimate", "estimate", "search", "sweep", "study", "simulate",
           "simulate_collective", "presets", "preset", "export_chakra", "version"]

_SECTIONS = (("models", "model"), ("systems", "system"), ("strategies", "strategy"))


def version():
    """The library's version, as `comet version` prints it."""
    return "0.1.0"


def _document(x):
    """(text, label, kind) of one positional input."""
    if isinstance(x, dict):
        return (json.dumps(x), "<dict>", None)
    if isinstance(x, bytes):
        return (x, "<bytes>", None)
    if isinstance(x, os.PathLike):
        x = os.fspath(x)
        return (_read(x), x, None)
    if isinstance(x, str):
        if "\n" not in x and ":" not in x and os.path.exists(x):
            return (_read(x), x, None)
        if "\n" in x or ":" in x:
            return (x, "<string>", None)
        raise CometError(2, "", 0, 0, "", "not a document and no such file: %r" % x,
                         "not a document and no such file: %r" % x)
    raise TypeError("an input is a dict, a YAML or JSON string, or a file path, not %s"
                    % type(x).__name__)


def _read(path):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as e:
        msg = "cannot read: %s" % e.strerror
        raise CometError(4, path, 0, 0, "", msg, "%s: %s" % (path, msg)) from None
    except UnicodeDecodeError:
        msg = "not UTF-8 text"
        raise CometError(2, path, 0, 0, "", msg, "%s: %s" % (path, msg)) from None


def _entries(inputs, model, system, strategy):
    out = [_document(x) for x in inputs]
    for (kind, section), v in zip(_SECTIONS, (model, system, strategy)):
        if v is None:
            continue
        if isinstance(v, dict):
            out.append((json.dumps({section: v}), "<%s>" % section, None))
        elif isinstance(v, str) and "\n" not in v and ":" not in v and "/" not in v \
                and not v.endswith((".yaml", ".yml", ".json")):
            out.append((v, None, kind))
        else:
            out.append(_document(v))
    return tuple(out)


class _Job:
    """Inputs read once in C (freed with this object)."""
    __slots__ = ("handle",)

    def __init__(self, entries, defaults):
        n = len(entries)
        enc = lambda s: s.encode("utf-8") if isinstance(s, str) else s
        texts = (ctypes.c_char_p * max(n, 1))(*[enc(e[0]) for e in entries])
        names = (ctypes.c_char_p * max(n, 1))(*[enc(e[1]) for e in entries])
        kinds = (ctypes.c_char_p * max(n, 1))(*[enc(e[2]) for e in entries])
        h = ctypes.c_void_p()
        err = _lib._Error()
        _lib.check(_lib.lib().comet_api_job_read(ctypes.byref(h), n, texts, names, kinds,
                                                 defaults, ctypes.byref(err)), err)
        self.handle = h

    def __del__(self):
        if getattr(self, "handle", None) and _lib._state.get("lib") is not None:
            _lib._state["lib"].comet_api_job_free(self.handle)


_jobs = {}   # by the documents read: (entries, defaults) -> _Job
_named = {}  # by the arguments themselves when they are all strings (the fast path)


def _job(inputs, model, system, strategy, defaults):
    raw = (inputs, model, system, strategy, defaults)
    try:
        j = _named.get(raw)
    except TypeError:  # a dict among them: go by the documents
        raw = None
        j = None
    if j is not None:
        return j
    key = (_entries(inputs, model, system, strategy), defaults)
    j = _jobs.get(key)
    if j is None:
        if len(_jobs) >= 256:
            _jobs.clear()
            _named.clear()
        j = _jobs[key] = _Job(key[0], defaults)
    # a file's name stands for its text, which may change: only inline
    # texts and preset names are remembered by the arguments
    if raw is not None and all(e[1] is None or e[1] == "<string>" for e in key[0]):
        _named[raw] = j
    return j


def _word(k, v):
    if v is True or v is False:
        v = "true" if v else "false"
    return "%s=%s" % (k, v)


_knob_texts = {}  # the knobs' text by their items, as loops repeat them


def _knobs(knobs):
    if not knobs:
        return None
    try:
        key = tuple(knobs.items())
        text = _knob_texts.get(key)
    except TypeError:  # an unhashable value: it will be refused as a knob anyway
        key = text = None
    if text is None:
        text = ";".join([_word(k, v) for k, v in knobs.items()]).encode("utf-8")
        if key is not None:
            if len(_knob_texts) >= 4096:
                _knob_texts.clear()
            _knob_texts[key] = text
    return text


def _frame(rows):
    import pandas  # only where pandas is installed
    return pandas.json_normalize(rows)


class Result(dict):
    """A command's --json output as a dict, with .to_pandas()."""

    def to_pandas(self):
        return _frame([self])


class Estimate:
    """One estimate: every numeric field of `comet estimate --json` as an
    attribute (step_time_s, mfu, tokens_per_s, hbm_total_bytes, ...) and
    `feasible`; to_dict() is the whole JSON object (strategy, reason and
    uncertainty band too), rendered on first use."""
    __slots__ = ("_values", "feasible", "_job", "_knobs", "_dict")

    def __init__(self, values, feasible, job, knobs):
        self._values = values
        self.feasible = feasible
        self._job = job
        self._knobs = knobs
        self._dict = None

    def __getattr__(self, name):
        i = _fields().get(name)
        if i is None:
            raise AttributeError(name)
        return self._values[i]

    def to_dict(self):
        if self._dict is None:
            self._dict = Result(json.loads(_estimate_json(self._job, self._knobs)))
        return self._dict

    def __getitem__(self, key):
        return self.to_dict()[key]

    def to_pandas(self):
        return _frame([self.to_dict()])

    def __repr__(self):
        return "Estimate(step_time_s=%.6g, mfu=%.4g, feasible=%s)" % (
            self.step_time_s, self.mfu, self.feasible)


_field_index = {}


def _fields():
    """Field name -> index in a result's values (and "_n": how many)."""
    global _field_index
    if not _field_index:  # built whole, then published: threads see all or nothing
        l = _lib.lib()
        n = l.comet_result_field_count()
        index = {l.comet_result_field_name(i).decode(): i for i in range(n)}
        index["_n"] = n
        _field_index = index
    return _field_index


def _estimate_json(job, knobs):
    out = ctypes.c_void_p()
    err = _lib._Error()
    _lib.check(_lib.lib().comet_api_estimate(_lib.session(), job.handle, knobs, None, 0, None,
                                             ctypes.byref(out), ctypes.byref(err)), err)
    return _lib.take_text(out)


_fast = None  # (the C function, the session, the field count, the values' array type)


def estimate(*inputs, model=None, system=None, strategy=None, **knobs):
    """`comet estimate`: one training step's time, breakdown, memory, MFU
    and cost. With no input and no knob, the CLI's default job."""
    global _fast
    if _fast is None:  # set whole, once: threads may race here harmlessly
        n = _fields()["_n"]
        _fast = (_lib.lib().comet_api_estimate, _lib.session(), n, ctypes.c_double * n)
    call, api, n, array = _fast
    job = _job(inputs, model, system, strategy,
               2 if not inputs and not knobs and strategy is None else 1)
    values = array()
    feasible = ctypes.c_bool()
    err = _lib._Error()
    k = _knobs(knobs)
    if call(api, job.handle, k, values, n, ctypes.byref(feasible), None, ctypes.byref(err)):
        _lib.raise_error(err)
    return Estimate(values, feasible.value, job, k)


class SearchResult(Result):
    """`comet search --json` as a dict; to_pandas() has one row per ranked
    strategy (rank, score, then the estimate's fields)."""

    def to_pandas(self):
        rows = []
        for t in self["top"]:
            row = {"rank": t["rank"], "score": t["score"]}
            row.update(t["estimate"])
            rows.append(row)
        return _frame(rows)


def search(*inputs, npus, model=None, system=None, strategy=None, max_gbs=0, max_mb=0,
           max_cp=0, top=10, threads=0, objective="time", flash=True, offload=True,
           keep_dominated=False, **knobs):
    """`comet search`: the best strategies for the model on `npus` NPUs.
    The global batch is the global_batch knob (or the strategy's), or
    max_gbs; threads=0 uses every core (the GIL is released meanwhile)."""
    job = _job(inputs, model, system, strategy, 1)
    o = _lib.SearchOptions(npus=npus, max_global_batch=max_gbs, max_microbatch=max_mb,
                           max_cp=max_cp, top=top, threads=threads,
                           objective=objective.encode(), no_flash=not flash,
                           no_offload=not offload, keep_dominated=keep_dominated)
    out = ctypes.c_void_p()
    err = _lib._Error()
    _lib.check(_lib.lib().comet_api_search(_lib.session(), job.handle, _knobs(knobs),
                                           ctypes.byref(o), ctypes.byref(out),
                                           ctypes.byref(err)), err)
    return SearchResult(json.loads(_lib.take_text(out)))


class SweepResult(list):
    """A sweep's rows (each line of results.jsonl as a dict); `dir` is
    where results.csv and results.jsonl are; a study's has `summary`."""

    def __init__(self, rows, directory):
        super().__init__(rows)
        self.dir = directory
        self.summary = None

    def to_pandas(self):
        return _frame(list(self))


def _study_text(study):
    if isinstance(study, bytes):
        return study, "<bytes>"
    if isinstance(study, dict):
        return json.dumps(study if "study" in study else {"study": study}), "<dict>"
    if isinstance(study, os.PathLike) or (isinstance(study, str) and "\n" not in study
                                          and ":" not in study and os.path.exists(study)):
        p = os.fspath(study)
        return _read(p), p
    if isinstance(study, str) and "\n" not in study and ":" not in study:
        text = _lib.lib().comet_preset_text(b"studies", study.encode())
        if text is None:
            msg = "unknown study preset \"%s\" (known: %s)" % (study,
                                                              ", ".join(presets("studies")))
            raise CometError(2, "", 0, 0, "", msg, msg)
        return text.decode(), "preset %s" % study
    return study, "<string>"


def _run_sweep(entry, study, dir, threads, resume, force, progress, extra=()):
    text, name = _study_text(study)
    if dir is None:
        dir = tempfile.mkdtemp(prefix="comet-sweep-")
    error = []

    def call(ctx, done, total):
        try:
            return progress(done, total) is not False
        except BaseException as e:  # stop the sweep, raise it after
            error.append(e)
            return False

    cb = _lib.PROGRESS(call) if progress else _lib.PROGRESS()
    err = _lib._Error()
    text = text.encode() if isinstance(text, str) else text
    st = entry(_lib.session(), text, name.encode(), os.fspath(dir).encode(), threads, resume,
               force, cb, None, *extra, ctypes.byref(err))
    if error:
        raise error[0]
    _lib.check(st, err)
    with open(os.path.join(dir, "results.jsonl"), encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    return rows, dir


def sweep(study, dir=None, threads=0, resume=False, force=False, progress=None):
    """`comet sweep`: the best strategy for every design point of a study
    (a preset name, a file, a YAML string or a dict), written to
    dir/results.csv and dir/results.jsonl (a fresh temporary directory
    when dir is None) and returned as rows. progress(done, total) is called
    after each row (from the sweep's writer thread, holding the GIL); a
    False return stops the sweep (CometError, status 6; rows so far kept).
    """
    rows, dir = _run_sweep(_lib.lib().comet_api_sweep, study, dir, threads, resume, force,
                           progress)
    return SweepResult(rows, dir)


def study(name="transformer-1t", dir=None, threads=0, resume=False, force=False,
          progress=None):
    """`comet study`: the COMET methodology on a study (a preset name, file,
    YAML string or dict): its sweep, as sweep() runs it, then steps 1-3 and
    5. Returns the rows, with .summary the summary comet study prints."""
    out = ctypes.c_void_p()
    rows, dir = _run_sweep(_lib.lib().comet_api_study, name, dir, threads, resume, force,
                           progress, (ctypes.byref(out),))
    r = SweepResult(rows, dir)
    r.summary = _lib.take_text(out)
    return r


def presets(kind=None):
    """The embedded presets' names: of one kind ("models", "systems",
    "strategies", "studies", "validation"), or all as a dict by kind."""
    kinds = ("models", "systems", "strategies", "studies", "validation")
    if kind is None:
        return {k: presets(k) for k in kinds}
    names = _lib.lib().comet_preset_names(kind.encode())
    out = []
    i = 0
    while names and names[i] is not None:
        out.append(names[i].decode())
        i += 1
    return out


def preset(kind, name):
    """A preset's source text (YAML), as `comet presets show` prints it."""
    text = _lib.lib().comet_preset_text(kind.encode(), name.encode())
    if text is None:
        msg = "unknown preset \"%s\" of kind %s" % (name, kind)
        raise CometError(2, "", 0, 0, "", msg, msg)
    return text.decode()


def export_chakra(prefix, *inputs, model=None, system=None, strategy=None, **knobs):
    """`comet export --chakra PREFIX`: the step as Chakra traces plus
    ASTRA-sim input files; returns what was written."""
    default = 2 if not inputs and not knobs and strategy is None else 1
    job = _job(inputs, model, system, strategy, default)
    out = ctypes.c_void_p()
    err = _lib._Error()
    _lib.check(_lib.lib().comet_api_export(job.handle, _knobs(knobs),
                                           os.fspath(prefix).encode(), ctypes.byref(out),
                                           ctypes.byref(err)), err)
    return Result(json.loads(_lib.take_text(out)))


def simulate(*inputs, model=None, system=None, strategy=None, congestion=False, flows=None,
             scheduler="baseline", max_tasks=0, **knobs):
    """`comet simulate` (a training step): the job's step on the
    event-driven simulator beside its estimate, as --json prints it.
    flows: None decides as the CLI does, True is --flows, False --no-flows."""
    default = 2 if not inputs and not knobs and strategy is None else 1
    job = _job(inputs, model, system, strategy, default)
    o = _lib.SimOptions(congestion=congestion,
                        fabric=0 if flows is None else 1 if flows else 2,
                        scheduler=scheduler.encode(), max_tasks=max_tasks)
    out = ctypes.c_void_p()
    err = _lib._Error()
    _lib.check(_lib.lib().comet_api_simulate(job.handle, _knobs(knobs), ctypes.byref(o),
                                             ctypes.byref(out), ctypes.byref(err)), err)
    return Result(json.loads(_lib.take_text(out)))


def _bytes(size):
    if isinstance(size, (int, float)) and not isinstance(size, bool):
        return float(size)
    v = ctypes.c_double()
    err = _lib._Error()
    _lib.check(_lib.lib().comet_parse_quantity(str(size).encode(), 0, b"size", ctypes.byref(v),
                                               ctypes.byref(err)), err)
    return v.value


def simulate_collective(collective, size, system=None, npus=0, splits=0, active_chunks=0,
                        congestion=False, scheduler="baseline"):
    """`comet simulate --collective C --size S`: one collective of `size`
    per NPU (bytes, or a text such as "1 GiB") on `system` (a preset name,
    dict, document or file; the CLI's default system when None), on npus
    NPUs (0: the whole system)."""
    job = _job((), None, system, None, 1)
    o = _lib.CollectiveOptions(collective=str(collective).encode(), bytes=_bytes(size),
                               npus=npus, splits=splits, active_chunks=active_chunks,
                               congestion=congestion, scheduler=scheduler.encode())
    out = ctypes.c_void_p()
    err = _lib._Error()
    _lib.check(_lib.lib().comet_api_collective(job.handle, ctypes.byref(o), ctypes.byref(out),
                                               ctypes.byref(err)), err)
    return Result(json.loads(_lib.take_text(out)))
