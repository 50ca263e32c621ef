"""The tabular front end (issue 16): every estimator that takes a table goes through
:class:`skdp.mechanisms._front_end.TabularFrontEnd`, accepts ``schema=``, and keeps the
output dtype rules (synthetic values inside the declared bounds, in a dtype that holds them).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from skdp.discovery import all_estimators
from skdp.mechanisms._front_end import TabularFrontEnd
from skdp.utils.schema import TabularSchema

TABLE_PARAMS = {"bounds", "categories", "column_types"}

# Fast settings; filtered by each estimator's own parameters. epsilon=10: no check here
# reads the quality of a fit, and at 1e6 the GAN's DP-SGD noise calibration (RDP at a noise
# multiplier near 0) took several seconds a fit.
FAST = {
    "epsilon": 10.0,
    "n_layers": 1,
    "n_iter": 3,
    "batch_size": 16,
    "hidden_size": 8,
    "latent_dim": 4,
    "n_critic": 1,
    "device": "cpu",
    "dtype": "float64",
    "random_state": 0,
}


def _table_estimators():
    return [(n, c) for n, c in all_estimators() if TABLE_PARAMS <= set(c().get_params())]


def _fast(cls, **extra):
    names = set(cls().get_params())
    return cls(**{k: v for k, v in FAST.items() if k in names}, **extra)


def _frame(n=64, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": rng.integers(20, 90, size=n).astype(np.int8),
            "bmi": rng.uniform(15.0, 45.0, size=n),
            "sex": rng.choice(["F", "M"], size=n),
        }
    )


DECLARED = {
    "bounds": {"age": (0, 1000), "bmi": (10.0, 60.0)},
    "categories": {"sex": ["F", "M"]},
    "column_types": {"age": "integer"},  # an int8 dtype alone gives "continuous"
}


def test_table_estimators_are_discovered():
    names = {n for n, _ in _table_estimators()}
    assert {"DPHistogramSynthesizer", "DPMarginalSynthesizer", "DPFlowDensity"} <= names


@pytest.mark.parametrize("name, cls", _table_estimators(), ids=lambda v: getattr(v, "__name__", v))
def test_table_estimator_uses_the_shared_front_end(name, cls):
    assert issubclass(cls, TabularFrontEnd), f"{name} validates its table its own way"
    assert "schema" in cls().get_params(), f"{name} does not accept schema="
    # no private copy of the preamble left behind
    assert "_validate_input" not in vars(cls), f"{name} keeps its own _validate_input"


def _schema_estimators():
    return [(n, c) for n, c in _table_estimators() if "schema" in c().get_params()]


@pytest.mark.parametrize("name, cls", _schema_estimators(), ids=lambda v: getattr(v, "__name__", v))
def test_schema_excludes_declared_metadata(name, cls):
    X = _frame()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        schema = TabularSchema.from_data(X, **DECLARED)
    with pytest.raises(ValueError, match="schema"):
        _fast(cls, schema=schema, bounds=DECLARED["bounds"]).fit(X)


@pytest.mark.parametrize("name, cls", _schema_estimators(), ids=lambda v: getattr(v, "__name__", v))
def test_schema_of_the_wrong_width_is_refused(name, cls):
    X = _frame()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        schema = TabularSchema.from_data(X[["age", "bmi"]], bounds=DECLARED["bounds"])
    with pytest.raises(ValueError, match="schema describes 2 columns but X has 3"):
        _fast(cls, schema=schema).fit(X)


@pytest.mark.parametrize("name, cls", _schema_estimators(), ids=lambda v: getattr(v, "__name__", v))
def test_schema_as_dict_or_object_and_output_dtype_rules(name, cls):
    X = _frame()
    # int8 cannot hold the declared (0, 1000): the schema warns once and widens the dtype
    with pytest.warns(UserWarning, match="cannot hold the declared bounds"):
        schema = TabularSchema.from_data(X, **DECLARED)
    assert schema["age"].dtype == "int64"
    a = _fast(cls, schema=schema).fit(X)
    b = _fast(cls, schema=schema.to_dict()).fit(X)
    assert a.schema_ == b.schema_
    S = a.sample(200, random_state=0)
    assert list(S.columns) == ["age", "bmi", "sex"]
    assert S["age"].dtype == np.int64
    assert S["age"].between(0, 1000).all()
    assert S["bmi"].between(10.0, 60.0).all()
    assert set(S["sex"]) <= {"F", "M"}
