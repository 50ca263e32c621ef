"""Attack: tell neighbouring tables apart by the dtypes pandas inferred (issue 30 item 2).

``pd.read_csv`` makes a column ``int64`` when every value is whole and ``float64`` when
one value is not. Before the fix, the schema took a numeric column's kind from that
dtype (``int64`` -> ``"integer"``, ``float64`` -> ``"continuous"``) and kept the dtype for
the synthetic output, so one record with ``age = 45.5`` changed ``schema_``, the bins and
the dtype of the synthetic column: D and D' were told apart with certainty at an
"exact" epsilon, with no warning. Declaring ``column_types`` did not help: the
``float64`` dtype still reached ``schema_`` and the output.

Rule (doc/privacy_guarantees.rst, "Metadata"): which *family* a column's dtype is in
(number, bool, string/object, pandas ``category``) is structural and public; whether a
numeric column is integer or float is a fact of the values and decides nothing. A
numeric column is ``"continuous"`` (output ``float64``) unless ``column_types`` (or
``schema=``, or the CLI schema) declares it ``"integer"`` (output ``int64``);
``column_types="data"`` reads the kinds off the dtypes, warns with
:class:`~skdp.exceptions.PrivacyLeakWarning` and makes the fit non-private. The ``skdp
schema`` draft leaves a numeric column's kind as a ``null`` placeholder.

Every discovered estimator with ``column_types`` and ``schema`` parameters is attacked
(fast settings from ``tests/test_common.py``), so a new tabular estimator is covered
without editing this file. The tests named ``test_attack_*`` failed before the fix.
"""

from __future__ import annotations

import importlib.util
import io
import json
import pathlib
import warnings

import numpy as np
import pandas as pd
import pytest

from skdp.discovery import all_estimators
from skdp.exceptions import PrivacyLeakWarning
from skdp.utils.schema import TabularSchema


def _test_params():
    path = pathlib.Path(__file__).resolve().parents[1] / "test_common.py"
    spec = importlib.util.spec_from_file_location("_skdp_test_common_dtypes", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.TEST_PARAMS


TEST_PARAMS = _test_params()
TABULAR = [
    (n, c) for n, c in all_estimators() if {"column_types", "schema"} <= set(c().get_params())
]
IDS = [n for n, _ in TABULAR]
CLASSES = [c for _, c in TABULAR]

BOUNDS = {"age": (18.0, 90.0), "sbp": (80.0, 200.0)}
CATEGORIES = {"sex": ["F", "M"]}
DECLARED = {"age": "integer", "sbp": "continuous", "sex": "categorical"}


def _csv(n=60, seed=0):
    rng = np.random.default_rng(seed)
    age = rng.integers(20, 80, n)
    return pd.DataFrame(
        {
            "age": age,
            "sex": rng.choice(["F", "M"], n),
            "sbp": np.round(100 + 0.6 * age + rng.normal(0, 8, n), 1),
        }
    ).to_csv(index=False)


def _neighbours():
    """D and D' = D plus one record whose age is not whole, both read by ``pd.read_csv``."""
    text = _csv()
    D = pd.read_csv(io.StringIO(text))
    D2 = pd.read_csv(io.StringIO(text + "45.5,F,131.0\n"))
    # the premise of the attack: pandas infers a different dtype for D'
    assert D["age"].dtype == np.int64 and D2["age"].dtype == np.float64
    return D, D2


def _make(cls, **overrides):
    params = dict(TEST_PARAMS.get(cls.__name__, {}))
    params.update(overrides)
    return cls(**params)


def _fit(est, X):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # advisory (e.g. delta); not leaks
        return est.fit(X)


def _fitted_metadata(est):
    out = {}
    for name in ("schema_", "n_bins_", "n_encoded_features_", "bounds_"):
        if hasattr(est, name):
            value = getattr(est, name)
            out[name] = repr(value)
    return out


def _sample_dtypes(est):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        S = est.sample(5)
    S = S[0] if isinstance(S, tuple) else S
    return {c: str(t) for c, t in S.dtypes.items()}


# ------------------------------------------------------------------------- schema
def test_attack_schema_kinds_and_dtypes_do_not_follow_pandas_inference():
    D, D2 = _neighbours()
    for column_types in (None, DECLARED, {"age": "integer"}, {"age": "continuous"}):
        a, b = (
            TabularSchema.from_data(
                X, bounds=BOUNDS, categories=CATEGORIES, column_types=column_types
            )
            for X in (D, D2)
        )
        assert a == b and a.to_dict() == b.to_dict(), column_types
    plain = TabularSchema.from_data(D, bounds=BOUNDS, categories=CATEGORIES)
    assert (plain["age"].kind, plain["age"].dtype) == ("continuous", "float64")
    assert (plain["sex"].kind, plain["sex"].dtype) == ("categorical", str(D["sex"].dtype))
    declared = TabularSchema.from_data(
        D2, bounds=BOUNDS, categories=CATEGORIES, column_types=DECLARED
    )
    assert (declared["age"].kind, declared["age"].dtype) == ("integer", "int64")
    assert not plain.data_derived and not declared.data_derived


def test_attack_array_schema_does_not_follow_numpy_inference():
    D, D2 = _neighbours()
    A, A2 = (X[["age"]].to_numpy() for X in (D, D2))
    assert A.dtype != A2.dtype
    for column_types in (None, ["integer"], ["continuous"]):
        a, b = (
            TabularSchema.from_data(X, bounds=(0.0, 300.0), column_types=column_types)
            for X in (A, A2)
        )
        assert a == b, column_types
    assert TabularSchema.from_data(A, bounds=(0.0, 300.0)).array_dtype == "float64"
    declared = TabularSchema.from_data(A2, bounds=(0.0, 300.0), column_types=["integer"])
    assert declared.array_dtype == "int64"


def test_declared_schema_output_dtypes_follow_the_kind():
    """A declared schema with no dtypes (or with a dtype of the wrong family) outputs
    int64 for an integer column and float64 for a continuous one."""
    from skdp.utils.schema import ColumnSpec, TabularEncoder

    schema = TabularSchema(
        columns=(
            ColumnSpec("age", "integer", bounds=(18, 90)),
            ColumnSpec("sbp", "continuous", bounds=(80, 200), dtype="int64"),
            ColumnSpec("n", "integer", bounds=(0, 9), dtype="float64"),
        )
    )
    assert schema["sbp"].dtype == "float64" and schema["n"].dtype == "int64"
    out = TabularEncoder(schema).inverse_transform(np.full((3, 3), 0.5))
    assert {c: str(t) for c, t in out.dtypes.items()} == {
        "age": "int64",
        "sbp": "float64",
        "n": "int64",
    }


def test_column_types_data_opt_in_reads_dtypes_and_warns():
    D, _ = _neighbours()
    with pytest.warns(PrivacyLeakWarning, match="column_types"):
        s = TabularSchema.from_data(D, bounds=BOUNDS, categories=CATEGORIES, column_types="data")
    assert (s["age"].kind, s["age"].dtype) == ("integer", "int64") and s.data_derived
    with pytest.warns(PrivacyLeakWarning, match="column_types"):
        s = TabularSchema.from_data(
            D, bounds=BOUNDS, categories=CATEGORIES, column_types={"age": "data"}
        )
    assert s["age"].kind == "integer" and s["sbp"].kind == "continuous" and s.data_derived


# ---------------------------------------------------------------------- estimators
@pytest.mark.parametrize("cls", CLASSES, ids=IDS)
def test_attack_default_kinds_give_the_same_release_metadata(cls):
    """Without column_types, D (age int64) and D' (age float64) fit the same schema_,
    bins and sample dtypes (before the fix: "integer" vs "continuous")."""
    D, D2 = _neighbours()
    a = _fit(_make(cls, bounds=BOUNDS, categories=CATEGORIES), D)
    b = _fit(_make(cls, bounds=BOUNDS, categories=CATEGORIES), D2)
    assert _fitted_metadata(a) == _fitted_metadata(b)
    assert _sample_dtypes(a) == _sample_dtypes(b)
    assert _sample_dtypes(a)["age"] == "float64"
    assert a.privacy_guarantee_ != "none" and a.nonprivate_options_ == []


@pytest.mark.parametrize("cls", CLASSES, ids=IDS)
@pytest.mark.parametrize("age", ["integer", "continuous"])
def test_attack_declared_column_types_give_the_same_release_metadata(cls, age):
    """With column_types declared, the float64 dtype pandas gave D' no longer reaches
    schema_ or the output (before the fix: schema_ held "int64" vs "float64" and the
    declared-integer column came out float64 for D' only)."""
    D, D2 = _neighbours()
    types = {**DECLARED, "age": age}
    a = _fit(_make(cls, bounds=BOUNDS, categories=CATEGORIES, column_types=types), D)
    b = _fit(_make(cls, bounds=BOUNDS, categories=CATEGORIES, column_types=types), D2)
    assert _fitted_metadata(a) == _fitted_metadata(b)
    assert _sample_dtypes(a) == _sample_dtypes(b)
    expect = {"integer": "int64", "continuous": "float64"}[age]
    assert _sample_dtypes(b)["age"] == expect and _sample_dtypes(b)["sbp"] == "float64"


@pytest.mark.parametrize("cls", CLASSES, ids=IDS)
def test_column_types_data_opt_in_is_not_private(cls):
    D, _ = _neighbours()
    est = _make(cls, bounds=BOUNDS, categories=CATEGORIES, column_types="data")
    with pytest.warns(PrivacyLeakWarning, match="column_types"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            warnings.simplefilter("always", PrivacyLeakWarning)
            est.fit(D)
    assert est.privacy_guarantee_ == "none" and est.epsilon_spent_ == float("inf")
    assert "column_types" in est.nonprivate_options_
    assert est.schema_["age"].kind == "integer"


# ---------------------------------------------------------------------------- CLI
def _cli(tmp_path, monkeypatch, capsys, *args):
    from skdp.cli import main

    monkeypatch.chdir(tmp_path)
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_attack_cli_schema_draft_does_not_follow_pandas_inference(tmp_path, monkeypatch, capsys):
    """``skdp schema`` drafted "integer" for D and "continuous" for D' (with the dtypes):
    now a numeric column's kind is a placeholder to fill from public knowledge."""
    text = _csv()
    (tmp_path / "d.csv").write_text(text)
    (tmp_path / "d2.csv").write_text(text + "45.5,F,131.0\n")
    drafts = []
    for name in ("d.csv", "d2.csv"):
        code, out, err = _cli(tmp_path, monkeypatch, capsys, "schema", name)
        assert code == 0, err
        drafts.append(json.loads(out))
        assert "kind" in err and "age" in err  # names the placeholders
    assert drafts[0] == drafts[1]
    cols = {c["name"]: c for c in drafts[0]["columns"]}
    assert cols["age"]["kind"] is None and cols["sbp"]["kind"] is None
    assert cols["sex"]["kind"] == "categorical"
    assert all("dtype" not in c for c in drafts[0]["columns"])
    assert "data_derived" not in drafts[0]
    # the unedited draft is refused, naming the columns whose kind is missing
    (tmp_path / "draft.json").write_text(json.dumps(drafts[0]))
    code, _, err = _cli(
        tmp_path, monkeypatch, capsys, "synthesize", "d.csv", "--schema", "draft.json",
        "--epsilon", "1", "-o", "out.csv",
    )  # fmt: skip
    assert code == 1 and "kind" in err and "'age'" in err and "integer" in err
    assert not (tmp_path / "out.csv").exists()


def test_attack_cli_release_dtypes_do_not_follow_pandas_inference(tmp_path, monkeypatch, capsys):
    text = _csv()
    (tmp_path / "d.csv").write_text(text)
    (tmp_path / "d2.csv").write_text(text + "45.5,F,131.0\n")
    for age in ("continuous", "integer"):
        schema = {
            "columns": [
                {"name": "age", "kind": age, "bounds": list(BOUNDS["age"])},
                {"name": "sex", "kind": "categorical", "categories": CATEGORIES["sex"]},
                {"name": "sbp", "kind": "continuous", "bounds": list(BOUNDS["sbp"])},
            ]
        }
        (tmp_path / "s.json").write_text(json.dumps(schema))
        outs = {}
        for name in ("d.csv", "d2.csv"):
            code, _, err = _cli(
                tmp_path, monkeypatch, capsys, "synthesize", name, "--schema", "s.json",
                "--method", "histogram", "--epsilon", "1", "--rows", "20", "--seed", "0",
                "-o", f"out-{name}",
            )  # fmt: skip
            if age == "integer" and name == "d2.csv":
                # a value outside the declared domain is refused (naming the column only)
                assert code == 1 and "'age'" in err and "45.5" not in err
                continue
            assert code == 0, err
            outs[name] = pd.read_csv(tmp_path / f"out-{name}")
        if age == "continuous":
            # the written text has the same form for D and D' (45.0, not 45 vs 45.0)
            assert {c: str(t) for c, t in outs["d.csv"].dtypes.items()} == {
                c: str(t) for c, t in outs["d2.csv"].dtypes.items()
            }
            assert outs["d.csv"]["age"].dtype == np.float64
        else:
            assert outs["d.csv"]["age"].dtype == np.int64
