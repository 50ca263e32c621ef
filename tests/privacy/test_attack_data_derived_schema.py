"""Attack: launder "data" metadata through ``schema=`` (issue 30 item 3).

``TabularSchema.from_data(df, bounds="data", categories="data")`` and ``skdp schema
--from-data`` read bounds and levels off the private rows and warn, but before the fix a
fit given that schema through ``schema=`` reported ``epsilon_spent_ = epsilon``,
``"exact"`` and an empty ``nonprivate_options_``, and a :class:`PrivacyLedger` accepted
it, while ``bounds_`` held the exact private maximum (one record far out is then read
off the release). The CLI's final message said "exact guarantee".

Rule: a schema is marked ``data_derived`` when any of its metadata was read off the
rows (``"data"`` opt-ins), and the mark travels with it (``to_dict``/``from_dict``, the
CLI's JSON ``"data_derived": true``). A fit given a data-derived schema, however it
arrives, warns with :class:`~skdp.exceptions.PrivacyLeakWarning` and is non-private:
``epsilon_spent_ = inf``, ``privacy_guarantee_ = "none"``, ``"schema"`` in
``nonprivate_options_``. Every discovered estimator with a ``schema`` parameter is
attacked. The tests named ``test_attack_*`` failed before the fix.
"""

from __future__ import annotations

import importlib.util
import json
import pathlib
import warnings

import numpy as np
import pandas as pd
import pytest

from skdp.accounting import PrivacyLedger
from skdp.discovery import all_estimators
from skdp.exceptions import BudgetExceededError, PrivacyLeakWarning
from skdp.utils.schema import TabularSchema


def _test_params():
    path = pathlib.Path(__file__).resolve().parents[1] / "test_common.py"
    spec = importlib.util.spec_from_file_location("_skdp_test_common_derived", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.TEST_PARAMS


TEST_PARAMS = _test_params()
WITH_SCHEMA = [(n, c) for n, c in all_estimators() if "schema" in c().get_params()]
IDS = [n for n, _ in WITH_SCHEMA]
CLASSES = [c for _, c in WITH_SCHEMA]


def _table(n=60, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {
            "age": rng.uniform(20.0, 80.0, n),
            "sex": rng.choice(["F", "M"], n).astype(object),
        }
    )
    df.loc[0, "age"] = 117.25  # one record far out: its exact value is the data maximum
    return df


def _derived_schema(df):
    with pytest.warns(PrivacyLeakWarning):
        return TabularSchema.from_data(df, bounds="data", categories="data")


def _make(cls, **overrides):
    params = {
        k: v
        for k, v in TEST_PARAMS.get(cls.__name__, {}).items()
        if k not in ("bounds", "categories", "column_types")
    }
    params.update(overrides)
    return cls(**params)


def _fit_warns(est, X):
    with pytest.warns(PrivacyLeakWarning, match="schema"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            warnings.simplefilter("always", PrivacyLeakWarning)
            est.fit(X)
    return est


def _assert_nonprivate(est):
    assert est.epsilon_spent_ == float("inf")
    assert est.privacy_guarantee_ == "none"
    assert "schema" in est.nonprivate_options_
    assert est.privacy_breakdown_.get("nonprivate") == float("inf")
    with pytest.raises(BudgetExceededError):
        PrivacyLedger(epsilon_budget=100.0).spend_fitted(est)


def test_from_data_marks_the_schema_and_the_mark_travels():
    df = _table()
    schema = _derived_schema(df)
    assert schema.data_derived
    assert schema["age"].bounds[1] == 117.25  # what the mark is about
    d = schema.to_dict()
    assert d["data_derived"] is True
    assert TabularSchema.from_dict(json.loads(json.dumps(d))).data_derived
    assert schema.with_bounds({"age": (0, 120)}).data_derived  # editing keeps the mark
    for kw in (
        {"bounds": "data", "categories": {"sex": ["F", "M"]}},
        {"bounds": {"age": (0, 120)}, "categories": "data"},
    ):
        with pytest.warns(PrivacyLeakWarning):
            assert TabularSchema.from_data(df, **kw).data_derived
    declared = TabularSchema.from_data(df, bounds={"age": (0, 120)}, categories={"sex": ["F", "M"]})
    assert not declared.data_derived and "data_derived" not in declared.to_dict()


@pytest.mark.parametrize("form", ["object", "dict", "json"])
@pytest.mark.parametrize("cls", CLASSES, ids=IDS)
def test_attack_data_derived_schema_makes_the_fit_nonprivate(cls, form):
    df = _table()
    schema = _derived_schema(df)
    if form == "dict":
        schema = schema.to_dict()
    elif form == "json":
        schema = json.loads(json.dumps(schema.to_dict()))
    est = _make(cls, schema=schema)
    assert est._planned_privacy_guarantee() == "none"  # read from the parameters alone
    _assert_nonprivate(_fit_warns(est, df))


@pytest.mark.parametrize("cls", CLASSES, ids=IDS)
def test_declared_schema_stays_private(cls):
    df = _table()
    schema = TabularSchema.from_data(
        df, bounds={"age": (0.0, 120.0)}, categories={"sex": ["F", "M"]}
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        est = _make(cls, schema=schema).fit(df)
    assert est.privacy_guarantee_ != "none" and est.nonprivate_options_ == []
    assert np.isfinite(est.epsilon_spent_)


def test_attack_cli_from_data_schema_final_message_says_nonprivate(tmp_path, monkeypatch, capsys):
    """Before the fix the last line read "... epsilon spent 1, ..., exact guarantee"."""
    from skdp.cli import main

    monkeypatch.chdir(tmp_path)
    _table().to_csv(tmp_path / "real.csv", index=False)
    assert main(["schema", "real.csv", "--from-data", "-o", "leaky.json"]) == 0
    capsys.readouterr()
    code = main(
        ["synthesize", "real.csv", "--schema", "leaky.json", "--epsilon", "1", "--seed", "0",
         "--rows", "20", "-o", "out.csv"]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 0, err
    final = [line for line in err.splitlines() if "wrote 20 synthetic rows" in line]
    assert len(final) == 1
    assert "NOT differentially private" in final[0] and "schema" in final[0]
    assert "exact" not in final[0] and "epsilon spent inf" in final[0]
    assert "Warning" not in err  # warnings go through the CLI's own messages
