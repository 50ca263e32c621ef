"""DPLinearRegression on Dask input: the same release as in memory, rows never collected."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")

from skdp.linear_model import DPLinearRegression  # noqa: E402

from ._guard import no_full_compute  # noqa: E402


def _data(n=3000, p=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, size=(n, p))
    y = X @ np.linspace(0.5, -0.5, p) + 0.1 * rng.normal(size=n)
    return X, y


def _released(est):
    return np.r_[est.coef_, est.intercept_, est.min_eigenvalue_ or 0.0, est.regularization_]


@pytest.mark.parametrize("mechanism", ["functional", "gaussian"])
@pytest.mark.parametrize("chunks", [250, 1111, 3000])
def test_dask_array_bit_identical(sync_scheduler, mechanism, chunks):
    X, y = _data()
    kw = dict(
        bounds_X=(-2, 2),
        bounds_y=(-3, 3),
        mechanism=mechanism,
        random_state=7,
        delta=1e-6 if mechanism == "gaussian" else 0.0,
    )
    ref = DPLinearRegression(**kw).fit(X, y)
    with no_full_compute(max_rows=X.shape[1] + 2):
        got = DPLinearRegression(**kw).fit(
            da.from_array(X, chunks=(chunks, 2)), da.from_array(y, chunks=chunks // 2 + 1)
        )
    np.testing.assert_array_equal(_released(got), _released(ref))
    assert got.n_features_in_ == 3 and got.epsilon_spent_ == ref.epsilon_spent_


@pytest.mark.parametrize("npartitions", [1, 4])
def test_dask_dataframe_bit_identical(sync_scheduler, npartitions):
    X, y = _data(p=2)
    frame = pd.DataFrame(X, columns=["age", "bmi"])
    target = pd.Series(y, name="cost")
    kw = dict(bounds_X={"age": (-2, 2), "bmi": (-2, 2)}, bounds_y=(-3, 3), random_state=3)
    ref = DPLinearRegression(**kw).fit(frame, target)
    with no_full_compute(max_rows=4):
        got = DPLinearRegression(**kw).fit(
            dd.from_pandas(frame, npartitions=npartitions),
            dd.from_pandas(target, npartitions=npartitions),
        )
    np.testing.assert_array_equal(_released(got), _released(ref))
    assert list(got.feature_names_in_) == ["age", "bmi"]


def test_dask_needs_declared_bounds(sync_scheduler):
    X, y = _data(n=100)
    with pytest.raises(ValueError, match="bounds_X=None is not supported for Dask"):
        DPLinearRegression(bounds_y=(-3, 3)).fit(da.from_array(X), da.from_array(y))
    with pytest.raises(ValueError, match="bounds_y='data'"):
        DPLinearRegression(bounds_X=(-2, 2), bounds_y="data").fit(
            da.from_array(X), da.from_array(y)
        )


def test_dask_clip_false_and_nan_checked_per_block(sync_scheduler):
    X, y = _data(n=200)
    est = DPLinearRegression(bounds_X=(-1, 1), bounds_y=(-3, 3), clip=False, random_state=0)
    with pytest.raises(ValueError, match="outside the declared bounds in column"):
        est.fit(da.from_array(X, chunks=(50, 3)), da.from_array(y, chunks=50))
    X[150, 1] = np.nan
    est = DPLinearRegression(bounds_X=(-2, 2), bounds_y=(-3, 3), random_state=0)
    with pytest.raises(ValueError, match="NaN"):
        est.fit(da.from_array(X, chunks=(50, 3)), da.from_array(y, chunks=50))


@pytest.mark.slow  # tests/dask/test_cluster.py covers the cluster by default
def test_dask_linear_regression_on_local_cluster(dask_client):
    X, y = _data(n=6000)
    kw = dict(bounds_X=(-2, 2), bounds_y=(-3, 3), random_state=11)
    ref = DPLinearRegression(**kw).fit(X, y)
    got = DPLinearRegression(**kw).fit(
        da.from_array(X, chunks=(1000, 3)), da.from_array(y, chunks=1500)
    )
    np.testing.assert_array_equal(_released(got), _released(ref))
