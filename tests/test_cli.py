"""End-to-end tests of the ``skdp`` command line (``main`` in this process; the console
script itself in a subprocess for help/usage, one synthesis and the signal tests)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

# Public bounds of the test table (declared, like a data dictionary would).
BOUNDS = {"age": [18, 90], "bmi": [15.0, 50.0], "score": [0.0, 10.0]}
LEVELS = {"sex": ["F", "M"], "smoker": ["no", "yes"]}
# declared kinds of the numeric columns (the draft leaves them null: issue 30 item 2)
KINDS = {"age": "integer", "bmi": "continuous", "score": "continuous"}


def _skdp_command():
    exe = shutil.which("skdp")
    if exe is not None:
        return [exe]
    return [sys.executable, "-m", "skdp.cli"]  # package not installed as a script


def run(*args, cwd, timeout=180, console=False):
    """The command line's result: ``main(argv)`` in this process, or with
    ``console=True`` the installed console script in a subprocess (a few tests keep that
    path end to end; each subprocess pays the interpreter and import start-up)."""
    if not console:
        return _main_in_this_process(args, cwd)
    return subprocess.run(
        [*_skdp_command(), *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )


def _main_in_this_process(args, cwd):
    from skdp.cli import main

    out, err, here = io.StringIO(), io.StringIO(), os.getcwd()
    try:
        os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main([str(a) for a in args])
            except SystemExit as exc:  # argparse: --help and usage errors
                code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    finally:
        os.chdir(here)
    return subprocess.CompletedProcess(args, code, out.getvalue(), err.getvalue())


def run_inprocess(capsys, monkeypatch, *args, cwd):
    """``main(argv)`` in this process (for the many error cases; the console script itself
    is exercised in a subprocess by the other tests)."""
    from skdp.cli import main

    monkeypatch.chdir(cwd)
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return subprocess.CompletedProcess(args, code, out.out, out.err)


@pytest.fixture
def table(tmp_path):
    rng = np.random.default_rng(0)
    n = 400
    df = pd.DataFrame(
        {
            "age": rng.integers(20, 85, n),
            "sex": rng.choice(["F", "M"], n),
            "bmi": np.round(rng.normal(27, 4, n), 1),
            "smoker": rng.choice(["no", "yes"], n, p=[0.7, 0.3]),
            "score": rng.uniform(0, 10, n),
        }
    )
    path = tmp_path / "real.csv"
    df.to_csv(path, index=False)
    return path


def _complete_schema(tmp_path, table, name="schema.json", *, via_cli=False):
    """A complete schema: the CLI's draft with the public bounds and levels filled in
    (``via_cli``), or the same written directly (faster)."""
    if via_cli:
        res = run("schema", table, "-o", "draft.json", cwd=tmp_path)
        assert res.returncode == 0, res.stderr
        d = json.loads((tmp_path / "draft.json").read_text())
    else:
        d = {"columns": [], "input_type": "dataframe"}
        for col in ("age", "sex", "bmi", "smoker", "score"):
            d["columns"].append({"name": col, "kind": KINDS.get(col, "categorical")})
    for c in d["columns"]:
        if c["name"] in KINDS:
            c["kind"] = KINDS[c["name"]]
        if c["name"] in BOUNDS:
            c["bounds"] = BOUNDS[c["name"]]
        if c["name"] in LEVELS:
            c["categories"] = LEVELS[c["name"]]
    path = tmp_path / name
    path.write_text(json.dumps(d))
    return path


def _no_temp_files(directory):
    return not [p for p in os.listdir(directory) if p.startswith(".skdp-")]


# ------------------------------------------------------------------------ schema
def test_help_and_usage_errors(tmp_path):
    res = run("--help", cwd=tmp_path, console=True)
    assert res.returncode == 0
    for cmd in ("schema", "synthesize", "evaluate"):
        assert cmd in res.stdout
    res = run("synthesize", "x.csv", "-o", "out.csv", cwd=tmp_path, console=True)
    assert res.returncode == 2  # no --epsilon/--schema
    res = run(cwd=tmp_path, console=True)
    assert res.returncode == 2


def test_schema_draft_has_placeholders_not_data(tmp_path, table):
    res = run("schema", table, "-o", "draft.json", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    d = json.loads((tmp_path / "draft.json").read_text())
    kinds = {c["name"]: c["kind"] for c in d["columns"]}
    # a numeric column's kind is a placeholder too: int64 vs float64 is what pandas
    # inferred from the values (one non-whole value changes it)
    assert kinds == {
        "age": None,
        "sex": "categorical",
        "bmi": None,
        "smoker": "categorical",
        "score": None,
    }
    for c in d["columns"]:
        # no value of the data in the draft: placeholders only
        assert c.get("bounds", None) is None
        assert c.get("categories", None) is None
        assert "dtype" not in c
    assert "data_derived" not in d
    assert "public" in d["note"].lower()
    assert "placeholders" in res.stderr and "age" in res.stderr
    assert "'kind'" in res.stderr and "integer" in res.stderr
    # standard output when no -o
    res = run("schema", table, cwd=tmp_path)
    assert res.returncode == 0
    assert json.loads(res.stdout)["columns"][0]["name"] == "age"


def test_schema_from_data_is_flagged(tmp_path, table):
    res = run("schema", table, "--from-data", "-o", "leaky.json", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    d = json.loads((tmp_path / "leaky.json").read_text())
    assert d["data_derived"] is True
    assert "READ OFF THE DATA" in d["warning"]
    assert "READ OFF THE DATA" in res.stderr
    real = pd.read_csv(table)
    cols = {c["name"]: c for c in d["columns"]}
    assert cols["age"]["bounds"] == [real["age"].min(), real["age"].max()]
    assert cols["sex"]["categories"] == ["F", "M"]
    # synthesize repeats the warning
    res = run(
        "synthesize", table, "--schema", "leaky.json", "--epsilon", "1", "-o", "s.csv",
        "--seed", "0", cwd=tmp_path,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert "NOT differentially private" in res.stderr


# -------------------------------------------------------------------- synthesize
def test_synthesize_histogram_end_to_end(tmp_path, table):
    schema = _complete_schema(tmp_path, table, via_cli=True)
    res = run(
        "synthesize", table, "--schema", schema, "--method", "histogram", "--epsilon", "1",
        "--rows", "300", "-o", "synth.csv", "--seed", "0", cwd=tmp_path, console=True,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert "epsilon spent 1" in res.stderr
    out = pd.read_csv(tmp_path / "synth.csv")
    assert list(out.columns) == ["age", "sex", "bmi", "smoker", "score"]
    assert len(out) == 300
    assert out["age"].dtype.kind == "i"
    for col, (lo, hi) in BOUNDS.items():
        assert out[col].between(lo, hi).all()
    for col, levels in LEVELS.items():
        assert set(out[col]) <= set(levels)
    assert _no_temp_files(tmp_path)
    # same seed, same output; the evaluate command reads it
    res = run("evaluate", table, "synth.csv", "--json", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    m = json.loads(res.stdout)["metrics"]
    assert set(m) == {"marginal_tv_1way", "marginal_tv_2way", "correlation_distance", "mmd"}
    assert all(0.0 <= v <= 1.5 for v in m.values())
    assert "without differential privacy" in res.stderr


@pytest.mark.parametrize(("delta", "selection"), [("1e-5", "mst"), ("0", "mst"), ("1e-5", "aim")])
def test_synthesize_marginal_end_to_end(tmp_path, table, delta, selection):
    schema = _complete_schema(tmp_path, table, via_cli=True)
    res = run(
        "synthesize", table, "--schema", schema, "--method", "marginal", "--epsilon", "1",
        "--delta", delta, "--rows", "300", "-o", "synth.csv", "--seed", "0",
        "--selection", selection, cwd=tmp_path,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert "method marginal, epsilon spent 1," in res.stderr
    assert f"delta spent {float(delta):.3g}" in res.stderr
    out = pd.read_csv(tmp_path / "synth.csv")
    assert list(out.columns) == ["age", "sex", "bmi", "smoker", "score"] and len(out) == 300
    assert out["age"].dtype.kind == "i"
    for col, (lo, hi) in BOUNDS.items():
        assert out[col].between(lo, hi).all()
    for col, levels in LEVELS.items():
        assert set(out[col]) == set(levels)


def test_synthesize_sampling_option(tmp_path, table):
    schema = _complete_schema(tmp_path, table, via_cli=True)
    common = ("synthesize", table, "--schema", schema, "--epsilon", "1", "--rows", "50")
    res = run(*common, "--sampling", "iid", "-o", "a.csv", "--seed", "0", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert len(pd.read_csv(tmp_path / "a.csv")) == 50
    res = run(*common, "--sampling", "stratified", "-o", "b.csv", cwd=tmp_path)
    assert res.returncode == 2 and "--sampling" in res.stderr
    assert not (tmp_path / "b.csv").exists()


def test_synthesize_refuses_placeholders(tmp_path, table):
    run("schema", table, "-o", "draft.json", cwd=tmp_path)
    res = run(
        "synthesize", table, "--schema", "draft.json", "--epsilon", "1", "-o", "out.csv",
        cwd=tmp_path,
    )  # fmt: skip
    assert res.returncode == 1
    assert "no 'kind'" in res.stderr and "'age'" in res.stderr and "'score'" in res.stderr
    assert not (tmp_path / "out.csv").exists()
    d = json.loads((tmp_path / "draft.json").read_text())
    for c in d["columns"]:
        c["kind"] = KINDS.get(c["name"], c["kind"])
    (tmp_path / "draft.json").write_text(json.dumps(d))
    res = run(
        "synthesize", table, "--schema", "draft.json", "--epsilon", "1", "-o", "out.csv",
        cwd=tmp_path,
    )  # fmt: skip
    assert res.returncode == 1
    assert "no categories" in res.stderr and "'sex'" in res.stderr
    assert not (tmp_path / "out.csv").exists()
    # categories filled, bounds missing: error unless --estimate-bounds
    for c in d["columns"]:
        if c["name"] in LEVELS:
            c["categories"] = LEVELS[c["name"]]
    (tmp_path / "nobounds.json").write_text(json.dumps(d))
    args = ("synthesize", table, "--schema", "nobounds.json", "--epsilon", "2", "-o", "out.csv")
    res = run(*args, cwd=tmp_path)
    assert res.returncode == 1
    assert "no bounds" in res.stderr and "--estimate-bounds" in res.stderr
    assert not (tmp_path / "out.csv").exists()
    res = run(*args, "--estimate-bounds", "--seed", "1", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert len(pd.read_csv(tmp_path / "out.csv")) == 400  # default: as many rows as the input


@pytest.mark.parametrize(
    "content, message",
    [
        ("", "is empty"),
        ("age,sex,bmi,smoker,score\n", "no rows"),
        ("age,sex,bmi,smoker,score\n30,F,,no,1.0\n", "missing values in column(s) ['bmi']"),
        ("age,sex,bmi,score\n30,F,20.0,1.0\n", "missing column(s) ['smoker']"),
        ("age,sex,bmi,smoker,score,extra\n30,F,20,no,1,5\n", "not in the schema ['extra']"),
        ("age,sex,bmi,smoker,score\n30,F,fat,no,1.0\n", "'bmi' is not numeric"),
        ("age,sex,bmi,smoker,score\n30.5,F,20,no,1.0\n", "'age' is declared integer"),
        ('age,sex,bmi,smoker,score\n30,"F,1,2\n', "not a readable CSV"),
    ],
)
def test_synthesize_bad_csv(tmp_path, table, content, message, capsys, monkeypatch):
    schema = _complete_schema(tmp_path, table)
    bad = tmp_path / "bad.csv"
    bad.write_text(content)
    (tmp_path / "out.csv").write_text("previous\n")  # must survive a failed run
    args = ("synthesize", bad, "--schema", schema, "--epsilon", "1", "-o", "out.csv")
    if "missing values" in message:  # one case through the console script
        res = run(*args, cwd=tmp_path)
    else:
        res = run_inprocess(capsys, monkeypatch, *args, cwd=tmp_path)
    assert res.returncode == 1, res.stderr
    assert message in res.stderr
    assert "Traceback" not in res.stderr
    assert (tmp_path / "out.csv").read_text() == "previous\n"
    assert _no_temp_files(tmp_path)


def test_unknown_category_names_column_not_value(tmp_path, table):
    schema = _complete_schema(tmp_path, table)
    df = pd.read_csv(table)
    df.loc[3, "smoker"] = "SECRETVALUE"
    df.to_csv(tmp_path / "bad.csv", index=False)
    res = run(
        "synthesize", "bad.csv", "--schema", schema, "--epsilon", "1", "-o", "out.csv",
        cwd=tmp_path,
    )  # fmt: skip
    assert res.returncode == 1
    assert "'smoker'" in res.stderr
    assert "SECRETVALUE" not in res.stderr
    assert not (tmp_path / "out.csv").exists()


@pytest.mark.parametrize(
    "text, message",
    [
        ("{not json", "not valid JSON"),
        ('{"cols": []}', "'columns' list"),
        ('{"columns": [{"name": "age"}]}', "'name' and 'kind'"),
        ('{"columns": [{"name": "age", "kind": "weird"}]}', "kind must be one of"),
        ('{"columns": [{"name": "age", "kind": "integer", "bounds": [5]}]}', "[low, high]"),
        ('{"columns": [{"name": "age", "kind": "integer", "bounds": [9, 1]}]}', "low < high"),
    ],
)
def test_synthesize_bad_schema(tmp_path, table, text, message, capsys, monkeypatch):
    (tmp_path / "bad.json").write_text(text)
    args = ("synthesize", table, "--schema", "bad.json", "--epsilon", "1", "-o", "out.csv")
    if "not valid JSON" in message:  # one case through the console script
        res = run(*args, cwd=tmp_path)
    else:
        res = run_inprocess(capsys, monkeypatch, *args, cwd=tmp_path)
    assert res.returncode == 1
    assert message in res.stderr
    assert "Traceback" not in res.stderr
    assert not (tmp_path / "out.csv").exists()


def test_bad_arguments(tmp_path, table):
    schema = _complete_schema(tmp_path, table)
    base = ("synthesize", table, "--schema", schema, "-o", "out.csv")
    assert run(*base, "--epsilon", "0", cwd=tmp_path).returncode == 1
    assert run(*base, "--epsilon", "nan", cwd=tmp_path).returncode == 2
    assert run(*base, "--epsilon", "1", "--rows", "0", cwd=tmp_path).returncode == 1
    res = run(*base, "--epsilon", "1", "--method", "flow", "--delta", "2", cwd=tmp_path)
    assert res.returncode == 1 and "--delta" in res.stderr
    res = run(*base[:-1], "nodir/out.csv", "--epsilon", "1", cwd=tmp_path)
    assert res.returncode == 1 and "does not exist" in res.stderr
    res = run("synthesize", "missing.csv", "--schema", schema, "--epsilon", "1", "-o", "o.csv",
              cwd=tmp_path)  # fmt: skip
    assert res.returncode == 1 and "does not exist" in res.stderr
    assert not (tmp_path / "out.csv").exists()


@pytest.mark.slow
def test_budget_too_small_for_flow(tmp_path, table):
    schema = _complete_schema(tmp_path, table)
    res = run(
        "synthesize", table, "--schema", schema, "--method", "flow", "--epsilon", "1e-6",
        "--n-iter", "100000", "-o", "out.csv", cwd=tmp_path,
    )  # fmt: skip
    assert res.returncode == 1, res.stderr
    assert "Traceback" not in res.stderr
    assert not (tmp_path / "out.csv").exists()


@pytest.mark.slow
@pytest.mark.parametrize("method", ["flow", "gan"])
def test_synthesize_dpsgd_methods(tmp_path, table, method):
    schema = _complete_schema(tmp_path, table)
    res = run(
        "synthesize", table, "--schema", schema, "--method", method, "--epsilon", "2",
        "--n-iter", "4", "--batch-size", "64", "--rows", "50", "-o", "synth.csv",
        "--seed", "0", cwd=tmp_path,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert "4/4 steps" in res.stderr  # the progress lines, from the logging records
    assert res.stdout == ""  # nothing printed: progress goes through logging to stderr
    out = pd.read_csv(tmp_path / "synth.csv")
    assert list(out.columns) == ["age", "sex", "bmi", "smoker", "score"] and len(out) == 50
    for col, (lo, hi) in BOUNDS.items():
        assert out[col].between(lo, hi).all()
    for col, levels in LEVELS.items():
        assert set(out[col]) <= set(levels)
    spent = float(res.stderr.split("epsilon spent ")[1].split(",")[0])
    assert 0 < spent <= 2.0


def test_progress_comes_from_log_records_not_printed_text(tmp_path, table, capsys, monkeypatch):
    """The command line shows the "skdp" logger's progress records; printed text is ignored."""
    import logging

    from skdp.utils import log_progress

    schema = _complete_schema(tmp_path, table)
    from skdp.synthesis import DPHistogramSynthesizer

    def fake_fit(self, X, y=None):
        print("[Fake] step 1/1")  # text shaped like the old progress: must not be parsed
        for t in (1, 2):
            log_progress(logging.getLogger("skdp.test"), estimator="Fake", step=t, total=2)
        return original_fit(self, X, y)

    original_fit = DPHistogramSynthesizer.fit
    monkeypatch.setattr(DPHistogramSynthesizer, "fit", fake_fit)
    res = run_inprocess(
        capsys, monkeypatch, "synthesize", table, "--schema", schema, "--epsilon", "1",
        "-o", "synth.csv", "--seed", "0", cwd=tmp_path,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    # (the histogram's own progress record, "histogram: 1/1 steps", is a log record too)
    assert "2/2 steps" in res.stderr and "[Fake] step 1/1" not in res.stderr
    from skdp.utils import ProgressHandler

    # the handler is removed afterwards
    assert not any(isinstance(h, ProgressHandler) for h in logging.getLogger("skdp").handlers)
    res = run_inprocess(
        capsys, monkeypatch, "synthesize", table, "--schema", schema, "--epsilon", "1",
        "-o", "synth.csv", "--seed", "0", "--quiet", cwd=tmp_path,
    )  # fmt: skip
    assert res.returncode == 0 and "steps" not in res.stderr


def test_sigterm_while_writing_leaves_no_temp_file(tmp_path, table, capsys, monkeypatch):
    """SIGTERM in the middle of writing the output: the hidden temporary file is removed."""
    import signal

    import pandas as pd

    schema = _complete_schema(tmp_path, table)
    original = pd.DataFrame.to_csv

    def to_csv_then_sigterm(self, path, *args, **kwargs):
        with open(path, "w") as fh:
            fh.write("age,sex\n1,")  # a partial file ...
        os.kill(os.getpid(), signal.SIGTERM)  # ... then the signal arrives
        return original(self, path, *args, **kwargs)

    monkeypatch.setattr(pd.DataFrame, "to_csv", to_csv_then_sigterm)
    before = signal.getsignal(signal.SIGTERM)
    res = run_inprocess(
        capsys, monkeypatch, "synthesize", table, "--schema", schema, "--epsilon", "1",
        "-o", "synth.csv", "--seed", "0", cwd=tmp_path,
    )  # fmt: skip
    assert res.returncode == 143 and "terminated; no output written" in res.stderr
    assert _no_temp_files(tmp_path) and not (tmp_path / "synth.csv").exists()
    assert signal.getsignal(signal.SIGTERM) == before  # the handler is restored


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_sigterm_mid_fit_leaves_no_partial_output(tmp_path, table):
    """A ``skdp synthesize`` process terminated during fit exits 143 and leaves nothing."""
    import signal
    import time

    schema = _complete_schema(tmp_path, table)
    before = set(os.listdir(tmp_path))
    proc = subprocess.Popen(
        [*_skdp_command(), "synthesize", str(table), "--schema", str(schema), "--method",
         "flow", "--epsilon", "1", "--n-iter", "2000", "--batch-size", "32", "-o",
         "out.csv", "--seed", "0"],
        cwd=tmp_path, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        line = ""
        while "steps" not in line and time.monotonic() < deadline:  # fit has started
            line = proc.stderr.readline()
            if not line and proc.poll() is not None:
                break
        assert "steps" in line, "no progress before the process ended"
        proc.send_signal(signal.SIGTERM)
        err = line + proc.stderr.read()
        code = proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert code == 143, err
    assert "terminated; no output written" in err
    assert set(os.listdir(tmp_path)) == before


# ---------------------------------------------------------------------- evaluate
def test_evaluate_identical_and_mismatched(tmp_path, table):
    res = run("evaluate", table, table, "--json", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    m = json.loads(res.stdout)["metrics"]
    assert m["marginal_tv_1way"] == 0.0 and m["marginal_tv_2way"] == 0.0
    assert m["correlation_distance"] == 0.0 and m["mmd"] < 1e-6
    # a shifted copy is worse on every metric
    df = pd.read_csv(table)
    df["score"] = 10 - df["score"] ** 2 / 10
    df["sex"] = "F"
    df.to_csv(tmp_path / "shifted.csv", index=False)
    res = run("evaluate", table, "shifted.csv", "--json", cwd=tmp_path)
    m2 = json.loads(res.stdout)["metrics"]
    assert all(m2[k] > m[k] for k in m)
    # text output and schema-driven reading
    schema = _complete_schema(tmp_path, table)
    res = run("evaluate", table, "shifted.csv", "--schema", schema, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert "marginal_tv_1way" in res.stdout
    df[["age", "sex"]].to_csv(tmp_path / "narrow.csv", index=False)
    res = run("evaluate", table, "narrow.csv", cwd=tmp_path)
    assert res.returncode == 1 and "same columns" in res.stderr


# ------------------------------------------------------------------ evaluate: TSTR
def _outcome_tables(tmp_path, n=1200):
    """Real train/test tables where 'outcome' and 'sbp' depend on age and BMI."""
    rng = np.random.default_rng(1)
    age = rng.integers(20, 85, n)
    bmi = np.round(rng.normal(27, 4, n), 1)
    sex = rng.choice(["F", "M"], n)
    logit = 0.08 * (age - 50) + 0.3 * (bmi - 27) + (sex == "M") * 0.8
    outcome = np.where(rng.random(n) < 1 / (1 + np.exp(-logit)), "yes", "no")
    sbp = 95 + 0.6 * age + 0.9 * bmi + rng.normal(0, 10, n)
    df = pd.DataFrame({"age": age, "sex": sex, "bmi": bmi, "outcome": outcome, "sbp": sbp})
    df.iloc[: n // 2].to_csv(tmp_path / "train.csv", index=False)
    df.iloc[n // 2 :].to_csv(tmp_path / "test.csv", index=False)
    noise = df.iloc[: n // 2].copy()
    noise["outcome"] = rng.permutation(noise["outcome"].to_numpy())
    noise["sbp"] = rng.permutation(noise["sbp"].to_numpy())
    noise.to_csv(tmp_path / "noise.csv", index=False)
    return df


def test_evaluate_tstr_classification(tmp_path, capsys, monkeypatch):
    _outcome_tables(tmp_path)
    args = ("evaluate", "train.csv")
    # synthetic == the real training rows: TSTR is TRTR exactly
    res = run(
        *args, "train.csv", "--target", "outcome", "--test", "test.csv", "--json", cwd=tmp_path
    )
    assert res.returncode == 0, res.stderr
    m = json.loads(res.stdout)["metrics"]
    assert m["tstr_roc_auc"] == m["trtr_roc_auc"] > 0.75
    assert "split off" not in res.stderr and "without differential privacy" in res.stderr
    # a synthetic table that lost the relation: TSTR about 0.5, TRTR unchanged
    res = run_inprocess(
        capsys,
        monkeypatch,
        *args,
        "noise.csv",
        "--target",
        "outcome",
        "--test",
        "test.csv",
        "--json",
        cwd=tmp_path,
    )
    m2 = json.loads(res.stdout)["metrics"]
    assert abs(m2["tstr_roc_auc"] - 0.5) < 0.1 and m2["trtr_roc_auc"] == m["trtr_roc_auc"]
    # no --test: a split of REAL.csv, with a warning; text output names the metric
    res = run_inprocess(
        capsys, monkeypatch, *args, "train.csv", "--target", "outcome", cwd=tmp_path
    )
    assert res.returncode == 0, res.stderr
    assert "tstr_roc_auc" in res.stdout and "trained on synthetic" in res.stdout
    assert "split off REAL.csv" in res.stderr


def test_evaluate_tstr_regression_and_errors(tmp_path, capsys, monkeypatch):
    _outcome_tables(tmp_path)
    base = ("evaluate", "train.csv")
    res = run_inprocess(
        capsys,
        monkeypatch,
        *base,
        "noise.csv",
        "--target",
        "sbp",
        "--test",
        "test.csv",
        "--json",
        cwd=tmp_path,
    )
    assert res.returncode == 0, res.stderr
    m = json.loads(res.stdout)["metrics"]
    assert m["trtr_r2"] > 0.4 and m["tstr_r2"] < 0.1
    # an integer target with many values is numeric; --task overrides
    res = run_inprocess(
        capsys, monkeypatch, *base, "train.csv", "--target", "age", "--json", cwd=tmp_path
    )
    assert "tstr_r2" in json.loads(res.stdout)["metrics"]
    res = run_inprocess(
        capsys,
        monkeypatch,
        *base,
        "train.csv",
        "--target",
        "sex",
        "--task",
        "classification",
        "--json",
        cwd=tmp_path,
    )
    assert "tstr_roc_auc" in json.loads(res.stdout)["metrics"]
    for extra, msg in [
        (("--target", "nope"), "not a column"),
        (("--target", "outcome", "--task", "regression"), "not numeric"),
        (("--target", "outcome", "--test-size", "1.5"), "--test-size"),
    ]:
        res = run_inprocess(capsys, monkeypatch, *base, "train.csv", *extra, cwd=tmp_path)
        assert res.returncode == 1 and msg in res.stderr, res.stderr
