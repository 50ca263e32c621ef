"""Issue 31 items 3 and 7 on the command line: ``--missing`` and a reproducible ``--seed``.

* ``skdp schema --missing category`` declares a missing level on every column; ``skdp
  synthesize --missing category`` (histogram, marginal, gan) models empty cells as that
  level and writes empty cells back; ``skdp evaluate --missing category`` compares them.
* ``--seed`` seeds the sampling too (``sample(random_state=SeedSequence([SEED, 1]))``):
  two runs with the same seed write byte-identical files.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from tests.test_cli import run

BOUNDS = {"age": [18, 90], "bmi": [15, 50]}
LEVELS = {"sex": ["F", "M"], "smoker": ["no", "yes"]}
KINDS = {"age": "integer", "bmi": "continuous"}
RATES = {"age": 0.1, "bmi": 0.2, "sex": 0.05}


@pytest.fixture
def holey(tmp_path):
    rng = np.random.default_rng(0)
    n = 3000
    df = pd.DataFrame(
        {
            "age": rng.integers(20, 85, n).astype(float),
            "sex": rng.choice(["F", "M"], n).astype(object),
            "bmi": np.round(rng.normal(27, 4, n), 1),
            "smoker": rng.choice(["no", "yes"], n, p=[0.7, 0.3]),
        }
    )
    for c, r in RATES.items():
        rows = rng.choice(n, size=int(r * n), replace=False)
        df.loc[rows, c] = np.nan if df[c].dtype.kind == "f" else None
    path = tmp_path / "real.csv"
    df.to_csv(path, index=False)
    return path


def _fill(draft_path, out_path):
    d = json.loads(draft_path.read_text())
    for c in d["columns"]:
        if c["name"] in KINDS:
            c["kind"] = KINDS[c["name"]]
            c["bounds"] = BOUNDS[c["name"]]
        if c["name"] in LEVELS:
            c["categories"] = LEVELS[c["name"]]
    out_path.write_text(json.dumps(d))
    return out_path


def test_schema_refuses_empty_cells_with_what_to_do(tmp_path, holey):
    res = run("schema", holey, "-o", "d.json", cwd=tmp_path)
    assert res.returncode == 1
    assert "missing values in column(s) ['age', 'sex', 'bmi']" in res.stderr
    assert "--missing category" in res.stderr
    assert "does not handle missing values" not in res.stderr


def test_schema_missing_category_declares_every_column(tmp_path, holey):
    res = run("schema", holey, "-o", "d.json", "--missing", "category", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    d = json.loads((tmp_path / "d.json").read_text())
    # every column, also 'smoker' without empty cells: a declaration, not a finding
    assert [c.get("missing") for c in d["columns"]] == [True] * 4
    # the draft itself reads no value: the same draft for a table without empty cells
    full = pd.read_csv(holey).fillna({"age": 40.0, "bmi": 27.0, "sex": "F"})
    full.to_csv(tmp_path / "full.csv", index=False)
    run("schema", "full.csv", "-o", "d2.json", "--missing", "category", cwd=tmp_path)
    assert json.loads((tmp_path / "d2.json").read_text()) == d


@pytest.mark.parametrize("method", ["histogram", "marginal"])
def test_synthesize_missing_category_round_trip(tmp_path, holey, method):
    run("schema", holey, "-o", "d.json", "--missing", "category", cwd=tmp_path)
    schema = _fill(tmp_path / "d.json", tmp_path / "s.json")
    args = ["synthesize", holey, "--schema", schema, "--method", method, "--epsilon", "50"]
    res = run(*args, "--rows", "6000", "-o", "out.csv", "--seed", "0", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert "epsilon spent 50" in res.stderr
    out = pd.read_csv(tmp_path / "out.csv", keep_default_na=False, na_values=[""])
    for c, r in {**RATES, "smoker": 0.0}.items():
        assert out[c].isna().mean() == pytest.approx(r, abs=0.02), c
    assert out["age"].dropna().between(18, 90).all()
    assert set(out["sex"].dropna()) <= {"F", "M"}
    # evaluate reads the empty cells with --missing category (or the schema's declaration)
    res = run("evaluate", holey, "out.csv", "--missing", "category", "--json", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["metrics"]["marginal_tv_1way"] < 0.2
    res = run("evaluate", holey, "out.csv", "--schema", schema, "--target", "smoker", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert "tstr_roc_auc" in res.stdout
    res = run("evaluate", holey, "out.csv", cwd=tmp_path)
    assert res.returncode == 1 and "--missing category" in res.stderr


def test_synthesize_missing_option_overrides_and_flow_refuses(tmp_path, holey):
    run("schema", holey, "-o", "d.json", "--missing", "category", cwd=tmp_path)
    d = json.loads(_fill(tmp_path / "d.json", tmp_path / "s.json").read_text())
    for c in d["columns"]:
        c.pop("missing")
    (tmp_path / "plain.json").write_text(json.dumps(d))
    base = ["synthesize", holey, "--method", "histogram", "--epsilon", "1", "-o", "o.csv"]
    res = run(*base, "--schema", "plain.json", cwd=tmp_path)
    assert res.returncode == 1 and "--missing category" in res.stderr
    res = run(*base, "--schema", "plain.json", "--missing", "category", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    flow = [*base[:3], "flow", *base[4:], "--schema", "plain.json", "--missing", "category"]
    res = run(*flow, cwd=tmp_path)
    assert res.returncode == 1 and "not available for --method flow" in res.stderr
    d["columns"][0]["missing"] = "yes"
    (tmp_path / "bad.json").write_text(json.dumps(d))
    res = run(*base, "--schema", "bad.json", cwd=tmp_path)
    assert res.returncode == 1 and "'missing' must be true or false" in res.stderr


@pytest.mark.parametrize("method", ["histogram", "marginal"])
def test_same_seed_same_bytes(tmp_path, holey, method):
    run("schema", holey, "-o", "d.json", "--missing", "category", cwd=tmp_path)
    schema = _fill(tmp_path / "d.json", tmp_path / "s.json")
    args = ["synthesize", holey, "--schema", schema, "--method", method, "--epsilon", "1",
            "--rows", "500"]  # fmt: skip
    for name, seed in (("a.csv", "0"), ("b.csv", "0"), ("c.csv", "1")):
        res = run(*args, "-o", name, "--seed", seed, cwd=tmp_path)
        assert res.returncode == 0, res.stderr
    a, b, c = ((tmp_path / n).read_bytes() for n in ("a.csv", "b.csv", "c.csv"))
    assert a == b
    assert a != c
    # the documented rule: the fit with random_state=SEED, sample with SeedSequence([SEED, 1])
    from skdp.cli._io import _load_schema, _read_with_schema
    from skdp.cli._synthesize import sample_random_state

    sch, _ = _load_schema(str(schema))
    df = _read_with_schema(str(holey), sch, what="input", missing="category")
    if method == "histogram":
        from skdp.synthesis import DPHistogramSynthesizer as cls

        kw = {"representative": "uniform"}
    else:
        from skdp.synthesis import DPMarginalSynthesizer as cls

        kw = {"delta": 1e-5}
    est = cls(epsilon=1.0, schema=sch, random_state=0, **kw).fit(df)
    out = est.sample(500, random_state=sample_random_state(0))
    assert (tmp_path / "a.csv").read_text() == out.to_csv(index=False)


def test_no_seed_draws_fresh_samples(tmp_path, holey):
    run("schema", holey, "-o", "d.json", "--missing", "category", cwd=tmp_path)
    schema = _fill(tmp_path / "d.json", tmp_path / "s.json")
    args = ["synthesize", holey, "--schema", schema, "--epsilon", "1", "--rows", "200"]
    run(*args, "-o", "a.csv", cwd=tmp_path)
    run(*args, "-o", "b.csv", cwd=tmp_path)
    assert (tmp_path / "a.csv").read_bytes() != (tmp_path / "b.csv").read_bytes()
