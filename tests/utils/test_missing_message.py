"""Issue 31 item 3a: every entry point refuses missing values with skdp's advice.

scikit-learn's own NaN message recommends its imputers (fitted on the private rows, they
release un-noised statistics that no skdp accounting sees) and
HistGradientBoosting. skdp's message names the column (never a value) and says what to do
in skdp's terms: DPSimpleImputer inside a DPPipeline (a constant fill is free), or a
synthesizer's own ``missing="category"``.
"""

from __future__ import annotations

import importlib.util
import pathlib
import warnings

import numpy as np
import pandas as pd
import pytest

from skdp.utils._data_free import missing_values_message


def _bad_inputs_module():
    path = pathlib.Path(__file__).resolve().parents[1] / "test_bad_inputs.py"
    spec = importlib.util.spec_from_file_location("_skdp_bad_inputs_for_nan", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BAD = _bad_inputs_module()
# DPSimpleImputer takes NaN (it is the fix); every other estimator refuses it. The
# survival curves take no X (fit(y)): a missing time is refused by the survival target's
# own check (tests/survival/test_target.py), with no imputation advice to give.
NO_X = {"DPKaplanMeier", "DPAalenJohansen"}
NAMES = sorted(n for n in BAD.ESTIMATORS if n != "DPSimpleImputer" and n not in NO_X)
SYNTHESIZERS = {"DPHistogramSynthesizer", "DPMarginalSynthesizer", "DPGANSynthesizer"}
SENTINEL = 987654.321


def _fit(name, X, y):
    est = BAD._make(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X) if y is None else est.fit(X, y)


def _check(msg, name, column):
    assert "contains NaN" in msg or "missing values" in msg
    assert column in msg, msg
    assert "987654" not in msg
    # never scikit-learn's advice (its imputers leak; HistGradientBoosting is not DP)
    assert "HistGradientBoosting" not in msg and "scikit-learn.org" not in msg
    assert "DPSimpleImputer" in msg
    if name in SYNTHESIZERS:
        assert "missing='category'" in msg
    else:
        assert "DPPipeline" in msg and "strategy='constant'" in msg


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("cell", [np.nan, None])
def test_nan_in_an_array_gets_skdp_advice(name, cell):
    X, y = BAD._good(name)
    X = X.astype(object if cell is None else float)
    X[0, 0] = SENTINEL
    X[3, 1] = cell
    with pytest.raises(ValueError) as exc:
        _fit(name, X, y)
    _check(str(exc.value), name, "[1]")


@pytest.mark.parametrize("name", NAMES)
def test_nan_in_a_dataframe_names_the_column(name):
    X, y = BAD._good(name)
    X = X.copy()
    X[0, 0] = SENTINEL
    X[3, 1] = np.nan
    df = pd.DataFrame(X, columns=["age", "bmi"])
    with pytest.raises(ValueError) as exc:
        _fit(name, df, y)
    _check(str(exc.value), name, "'bmi'")


def test_target_nan_says_drop_not_impute():
    from skdp.linear_model import DPLinearRegression

    X = np.random.default_rng(0).uniform(0, 1, (20, 2))
    y = X[:, 0].copy()
    y[4] = np.nan
    with pytest.raises(ValueError, match="Input y contains NaN") as exc:
        DPLinearRegression(epsilon=1.0, bounds_X=(0, 1), bounds_y=(0, 1)).fit(X, y)
    assert "drop the rows" in str(exc.value)
    assert "SimpleImputer(" not in str(exc.value)


def test_message_helper():
    msg = missing_values_message("X", ["bmi"])
    assert msg.startswith("Input X contains NaN (column(s) ['bmi'])")
    assert "DPSimpleImputer" in msg and "DPPipeline" in msg
    assert "missing='category'" in missing_values_message("X", [0], synthesizer=True)


@pytest.mark.parametrize("name", ["DPLinearRegression", "SubsampledExpMedian", "DPILPClassifier"])
def test_nan_in_a_dask_partition_gets_skdp_advice(name):
    """Checked block by block on the workers: the same advice as for numpy input."""
    da = pytest.importorskip("dask.array")
    X, y = BAD._good(name, n=40)
    if name == "DPILPClassifier":
        X = (X > 0).astype(float)
    X[0, 0] = SENTINEL if name != "DPILPClassifier" else 1.0
    X[13, 1] = np.nan
    Xd = da.from_array(X, chunks=10)
    yd = None if y is None else da.from_array(y, chunks=10)
    with pytest.raises(ValueError) as exc:
        _fit(name, Xd, yd)
    msg = str(exc.value)
    assert "NaN" in msg and "987654" not in msg
    assert "DPSimpleImputer" in msg and "HistGradientBoosting" not in msg
