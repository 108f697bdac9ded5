"""Every command's --json output against its JSON Schema in schema/json/:
the schemas use a small subset of JSON Schema (type, required, properties,
additionalProperties, items, enum, minimum), checked here by a validator of
that subset written for these tests (no third-party code); a keyword outside
it is refused, so a schema never claims more than is checked. The outputs
come from the CLI (build/comet, or $COMET_BIN) and, for the calls the
Python package offers, from the package too. Where the jsonschema module is
installed, each schema is also checked to be a valid 2020-12 schema and
each output validated by it, a second opinion on the subset validator."""
import csv
import json
import os
import subprocess

import pytest

import comet

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.environ.get("COMET_BIN", os.path.join(ROOT, "build", "comet"))
SCHEMAS = os.path.join(ROOT, "schema", "json")

ANNOTATIONS = {"$schema", "title", "description"}
KEYWORDS = {"type", "required", "properties", "additionalProperties", "items", "enum",
            "minimum"}
TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
}


def check(value, schema, path="$"):
    """The places where `value` breaks `schema`, as "path: why" lines."""
    errors = []
    unknown = set(schema) - KEYWORDS - ANNOTATIONS
    if unknown:
        return ["%s: the schema uses %s, outside the subset checked" % (path, sorted(unknown))]
    if "type" in schema:
        kinds = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(TYPES[k](value) for k in kinds):
            return ["%s: %r is not %s" % (path, value, " or ".join(kinds))]
    if "enum" in schema and value not in schema["enum"]:
        errors.append("%s: %r is not one of %r" % (path, value, schema["enum"]))
    if "minimum" in schema and TYPES["number"](value) and value < schema["minimum"]:
        errors.append("%s: %r is below %r" % (path, value, schema["minimum"]))
    if isinstance(value, dict):
        for key in schema.get("required", []):
            if key not in value:
                errors.append("%s: %s is missing" % (path, key))
        props = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        for key, v in value.items():
            if key in props:
                errors += check(v, props[key], "%s.%s" % (path, key))
            elif extra is False:
                errors.append("%s: %s is not a known key" % (path, key))
            elif isinstance(extra, dict):
                errors += check(v, extra, "%s.%s" % (path, key))
    if isinstance(value, list) and "items" in schema:
        for i, v in enumerate(value):
            errors += check(v, schema["items"], "%s[%d]" % (path, i))
    return errors


def schema(name):
    with open(os.path.join(SCHEMAS, name + ".schema.json")) as f:
        return json.load(f)


def conforms(value, name):
    s = schema(name)
    errors = check(value, s)
    assert not errors, "\n".join(errors[:20])
    try:
        import jsonschema
    except ImportError:
        return
    jsonschema.Draft202012Validator.check_schema(s)
    jsonschema.validate(value, s, cls=jsonschema.Draft202012Validator)


JOB = ["--model", "megatron-22b", "--system", "a100-80g-selene", "--global-batch", "16"]
CHAKRA = ["simulate", "--chakra", "examples/chakra/step", "--astra-network",
          "examples/astra/ring8.yml", "--astra-system", "examples/astra/system.json",
          "--astra-memory", "examples/astra/memory.json", "--json"]
# (schema, command line): every command that takes --json, in each form
# whose output has different keys
CASES = [
    ("estimate", ["estimate", "--json"]),
    ("estimate", ["estimate", *JOB, "--tp", "8", "--pp", "2", "--dp", "1", "--json"]),
    ("search", ["search", *JOB, "--npus", "16", "--top", "3", "-j", "1", "--json"]),
    ("simulate", ["simulate", *JOB, "--tp", "2", "--pp", "4", "--dp", "2", "--json"]),
    ("simulate", ["simulate", *JOB, "--tp", "2", "--pp", "4", "--dp", "2", "--flows",
                  "--json"]),
    ("simulate", ["simulate", *JOB, "--tp", "2", "--pp", "4", "--dp", "2", "--no-flows",
                  "--json"]),
    ("simulate-collective", ["simulate", "--collective", "all-reduce", "--size", "1GiB",
                             "--npus", "16", "--json"]),
    ("simulate-collective", ["simulate", "--collective", "all-to-all", "--size", "64MiB",
                             "--system", "h100-80g-dgx", "--npus", "64", "--json"]),
    ("simulate-chakra", CHAKRA),
    ("simulate-chakra", CHAKRA + ["--flows"]),
    ("allocate", ["allocate", "examples/allocate/selene-bandwidth.yaml", "-j", "1", "--json"]),
    ("partition", ["partition", "tests/data/digits_mlp.npz", "--workers", "4", "--data",
                   "tests/data/digits_test.npz", "--max-accuracy-loss", "1%", "--batch", "64",
                   "--json"]),
    ("partition", ["partition", "tests/data/digits_mlp.npz", "--workers", "2", "--json"]),
    ("validate", ["validate", "--format", "json"]),
]


@pytest.mark.parametrize("name,args", CASES, ids=["%s-%d" % (c[0], i) for i, c in enumerate(CASES)])
def test_cli_json_conforms(name, args):
    r = subprocess.run([BIN, *args], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    for one in out if isinstance(out, list) else [out]:
        assert one["schema_version"] == 1
    conforms(out, name)


MIXED_STUDY = """study:
  name: mixed
  models: [megatron-22b]
  system: a100-80g-selene
  npus: 16
  global_batch: 16
  axes:
    hbm_capacity: ["8 GiB", "80 GiB"]
    network:
      infiniband:
        bandwidth: ["12.5 GB/s", "50 GB/s"]
  search: {max_microbatch: 4, offload: false}
"""


def test_sweep_rows_conform(tmp_path):
    """results.jsonl, a row per design: two where nothing fits (best is
    null), two with a best strategy; the package's rows are the same."""
    study = tmp_path / "mixed.yaml"
    study.write_text(MIXED_STUDY)
    r = subprocess.run([BIN, "sweep", str(study), "-o", str(tmp_path / "out"), "-j", "1",
                        "--quiet"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    with open(tmp_path / "out" / "results.jsonl") as f:
        rows = [json.loads(line) for line in f]
    assert [row["status"] for row in rows] == ["no_fit", "no_fit", "ok", "ok"]
    assert rows[0]["best"] is None and rows[2]["best"]["step_time_s"] > 0
    for row in rows:
        conforms(row, "sweep-row")
    for row in comet.sweep(MIXED_STUDY, threads=1):
        conforms(dict(row), "sweep-row")
    assert all(row["schema_version"] == 1 for row in rows)
    # results.csv and pareto.csv: the version as their first column, on
    # every line, and the units in the names, read with a CSV reader's
    # defaults (pandas.read_csv's too, where pandas is installed)
    for name in ("results.csv", "pareto.csv"):
        with open(tmp_path / "out" / name, newline="") as f:
            table = list(csv.reader(f))
        assert table[0][0] == "schema_version", name
        assert {line[0] for line in table[1:]} == {"1"}, name
    with open(tmp_path / "out" / "results.csv", newline="") as f:
        head = next(csv.reader(f))
    for column in ("design_cost_usd", "network.infiniband.bandwidth_bytes_per_s", "cost_usd",
                   "cost_usd_per_mtoken_s", "mfu_fraction", "hfu_fraction", "step_time_s"):
        assert column in head, column
    assert "cost" not in head and "mfu" not in head
    try:
        import pandas
    except ImportError:
        return
    df = pandas.read_csv(tmp_path / "out" / "results.csv")
    assert list(df["schema_version"].unique()) == [1]
    assert list(df["status"]) == ["no_fit", "no_fit", "ok", "ok"]


def test_every_schema_has_a_case_and_a_version():
    names = sorted(f[:-len(".schema.json")] for f in os.listdir(SCHEMAS)
                   if f.endswith(".schema.json"))
    assert names == sorted({c[0] for c in CASES} | {"sweep-row"})
    for n in sorted({c[0] for c in CASES} | {"sweep-row"}):
        s = schema(n)
        top = s["items"] if s["type"] == "array" else s
        assert "schema_version" in top["required"], n
        assert top["properties"]["schema_version"]["enum"] == [1], n


def test_python_results_conform():
    """The package's calls render the CLI's JSON writers: same schemas."""
    conforms(comet.estimate().to_dict(), "estimate")
    conforms(dict(comet.search(model="megatron-22b", system="a100-80g-selene", npus=16,
                               global_batch=16, top=2, threads=1)), "search")
    conforms(dict(comet.simulate(model="megatron-22b", system="a100-80g-selene", tp=2, pp=4,
                                 dp=2, global_batch=16)), "simulate")


def test_the_validator_refuses_what_breaks_a_schema():
    """The subset validator is not a rubber stamp: each keyword bites."""
    s = schema("simulate-collective")
    r = subprocess.run([BIN, "simulate", "--collective", "all-reduce", "--size", "1GiB",
                        "--npus", "16", "--json"], capture_output=True, text=True, cwd=ROOT)
    good = json.loads(r.stdout)
    assert check(good, s) == []
    bad = dict(good)
    del bad["time_s"]
    assert check(bad, s) == ["$: time_s is missing"]
    assert check(dict(good, collective="all-sum"), s)[0].startswith("$.collective: 'all-sum'")
    assert check(dict(good, schema_version=2), s) == ["$.schema_version: 2 is not one of [1]"]
    assert check(dict(good, time_s=-1.0), s) == ["$.time_s: -1.0 is below 0"]
    assert check(dict(good, npus="16"), s) == ["$.npus: '16' is not number"]
    assert "$.dims[0].name: 3 is not string" in check(dict(good, dims=[{"name": 3}]), s)
    assert check(True, {"type": "number"}) == ["$: True is not number"]
    assert check({"a": 1}, {"additionalProperties": False}) == ["$: a is not a known key"]
    assert check(1, {"pattern": "x"})[0].endswith("outside the subset checked")
