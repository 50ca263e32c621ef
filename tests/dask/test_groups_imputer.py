"""DPSimpleImputer(strategy="mean") on Dask input, per row and per patient: sums and
counts of the observed values on the workers (exact), each patient bounded to k rows
after Dask's shuffle by patient; the other strategies are refused on Dask."""

from __future__ import annotations

import numpy as np
import pytest

da = pytest.importorskip("dask.array")

from skdp.preprocessing import DPSimpleImputer  # noqa: E402

from ._guard import no_full_compute  # noqa: E402


def _data(n_patients=600, rows=3, seed=0):
    rng = np.random.default_rng(seed)
    groups = np.repeat(np.arange(n_patients), rows)
    rng.shuffle(groups)
    X = rng.normal(size=(groups.size, 2)) + [1.0, -1.0]
    X[rng.random(X.shape) < 0.2] = np.nan
    return X, groups


@pytest.mark.parametrize("grouped", [False, True])
def test_matches_in_memory_at_epsilon_inf(sync_scheduler, grouped):
    X, groups = _data()
    kw = dict(bounds=(-5, 5), epsilon=np.inf, max_rows_per_group=3 if grouped else None)
    ref = DPSimpleImputer(**kw).fit(X, groups=groups if grouped else None)
    lazy = da.from_array(groups, chunks=500) if grouped else None
    with no_full_compute(max_rows=2 * X.shape[1]):
        got = DPSimpleImputer(**kw).fit(da.from_array(X, chunks=(700, 2)), groups=lazy)
    np.testing.assert_allclose(got.statistics_, ref.statistics_, rtol=0, atol=1e-9)
    assert got.privacy_unit_ == ("group" if grouped else "row")


def test_patient_level_noise_and_facts(sync_scheduler):
    X, groups = _data()
    kw = dict(bounds=(-5, 5), epsilon=1.0, max_rows_per_group=2, random_state=0)
    ref = DPSimpleImputer(**kw).fit(X, groups=groups)
    got = DPSimpleImputer(**kw).fit(
        da.from_array(X, chunks=(500, 2)), groups=da.from_array(groups, chunks=400)
    )
    assert got.noise_scale_ == ref.noise_scale_  # k d / (epsilon / 2) for the sums
    assert got.privacy_breakdown_ == ref.privacy_breakdown_
    np.testing.assert_allclose(got.statistics_, [1.0, -1.0], atol=0.5)


def test_refusals_name_the_parameter(sync_scheduler):
    X, groups = _data(n_patients=20)
    lazy = da.from_array(X, chunks=(20, 2))
    with pytest.raises(ValueError, match="strategy='median' is not supported for Dask"):
        DPSimpleImputer(strategy="median", bounds=(-5, 5)).fit(lazy)
    with pytest.raises(ValueError, match="bounds='data' is not supported for Dask"):
        DPSimpleImputer(bounds="data").fit(lazy)
    bad = X.copy()
    bad[3, 0] = np.inf  # checked on every row before the random choice
    with pytest.raises(ValueError, match="non-finite values"):
        DPSimpleImputer(bounds=(-5, 5), max_rows_per_group=1).fit(
            da.from_array(bad, chunks=(20, 2)), groups=da.from_array(groups, chunks=20)
        )
