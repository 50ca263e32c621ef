"""dp_accuracy_score on Dask labels: the same release as in memory."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")

from skdp.metrics import dp_accuracy_score  # noqa: E402

from ._guard import no_full_compute  # noqa: E402


def _labels(n=5000, seed=0):
    rng = np.random.default_rng(seed)
    yt = rng.integers(0, 3, n)
    yp = np.where(rng.random(n) < 0.7, yt, rng.integers(0, 3, n))
    return yt, yp


@pytest.mark.parametrize("chunks", [300, 2048, 5000])
@pytest.mark.parametrize("epsilon", [0.5, math.inf])
def test_dask_accuracy_bit_identical(sync_scheduler, chunks, epsilon):
    yt, yp = _labels()
    ref = dp_accuracy_score(yt, yp, epsilon=epsilon, random_state=4)
    with no_full_compute(max_rows=3):  # the count; the digest (rows, two lanes)
        got = dp_accuracy_score(
            da.from_array(yt, chunks=chunks),
            da.from_array(yp, chunks=chunks // 3 + 1),
            epsilon=epsilon,
            random_state=4,
        )
    assert got == ref


def test_dask_series_and_mixed_inputs(sync_scheduler):
    yt, yp = _labels(n=800)
    ref = dp_accuracy_score(yt, yp, epsilon=1.0, random_state=1)
    s_true = dd.from_pandas(pd.Series(yt, name="label"), npartitions=3)
    assert dp_accuracy_score(s_true, yp, epsilon=1.0, random_state=1) == ref
    s_pred = dd.from_pandas(pd.Series(yp), npartitions=3)
    assert dp_accuracy_score(s_true, s_pred, epsilon=1.0, random_state=1) == ref


def test_dask_accuracy_errors(sync_scheduler):
    yt, yp = _labels(n=100)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        dp_accuracy_score(da.from_array(yt), yp[:-1], epsilon=1.0)
    bad = yt.astype(float)
    bad[57] = np.nan
    with pytest.raises(ValueError, match="y_true"):
        dp_accuracy_score(da.from_array(bad, chunks=20), yp, epsilon=1.0)


def test_dask_refused_labels_spend_nothing(sync_scheduler):
    """A NaN found while counting on the workers used to be found after the ledger
    was charged: the budget went without a release (in-memory input was checked first)."""
    from skdp.accounting import PrivacyLedger

    yt, yp = _labels(n=100)
    bad = yp.astype(float)
    bad[83] = np.nan
    ledger = PrivacyLedger(epsilon_budget=5.0)
    for y_pred in (bad, da.from_array(bad, chunks=20)):
        with pytest.raises(ValueError, match="y_pred"):
            dp_accuracy_score(yt, y_pred, epsilon=1.0, ledger=ledger)
    assert ledger.entries == [] and ledger.epsilon_spent == 0.0
    dp_accuracy_score(da.from_array(yt, chunks=20), yp, epsilon=1.0, ledger=ledger)
    assert ledger.epsilon_spent == pytest.approx(1.0)


@pytest.mark.slow  # tests/dask/test_cluster.py covers the cluster by default
def test_dask_accuracy_on_local_cluster(dask_client):
    yt, yp = _labels(n=20000, seed=5)
    ref = dp_accuracy_score(yt, yp, epsilon=1.0, random_state=2)
    got = dp_accuracy_score(
        da.from_array(yt, chunks=4000), da.from_array(yp, chunks=3000), epsilon=1.0, random_state=2
    )
    assert got == ref
