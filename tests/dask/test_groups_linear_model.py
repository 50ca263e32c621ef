"""DPLinearRegression with groups on Dask input: each patient bounded to k rows on the
workers, the same statistics as in memory when no patient has more than k rows, the
rows never collected on the client."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")

from skdp.linear_model import DPLinearRegression  # noqa: E402

from ._guard import no_full_compute  # noqa: E402


def _data(n_patients=150, rows=2, p=3, seed=0):
    rng = np.random.default_rng(seed)
    groups = np.repeat(np.arange(n_patients), rows)
    rng.shuffle(groups)
    X = rng.uniform(-2, 2, size=(groups.size, p))
    y = X @ np.linspace(0.5, -0.5, p) + 0.1 * rng.normal(size=groups.size)
    return X, y, groups


_KW = dict(bounds_X=(-2, 2), bounds_y=(-3, 3), random_state=0)


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_matches_in_memory_when_no_patient_exceeds_k(sync_scheduler, fit_intercept):
    X, y, groups = _data()
    kw = dict(_KW, epsilon=np.inf, max_rows_per_group=2, fit_intercept=fit_intercept)
    ref = DPLinearRegression(**kw).fit(X, y, groups=groups)
    with no_full_compute(max_rows=X.shape[1] + 2):
        got = DPLinearRegression(**kw).fit(
            da.from_array(X, chunks=(70, 3)),
            da.from_array(y, chunks=90),
            groups=da.from_array(groups, chunks=55),
        )
    # the same rows, exact fixed-point sums: the same statistics bit for bit
    np.testing.assert_array_equal(got.coef_, ref.coef_)
    assert got.intercept_ == ref.intercept_
    assert got.privacy_unit_ == "group" and got.max_rows_per_group_ == 2


def test_patient_level_facts_and_a_dataframe_with_text_labels(sync_scheduler):
    X, y, groups = _data(rows=4)
    frame = pd.DataFrame(X, columns=["age", "bmi", "sbp"])
    kw = dict(_KW, bounds_X={c: (-2, 2) for c in frame.columns}, max_rows_per_group=2)
    ref = DPLinearRegression(**kw).fit(frame, y, groups=groups)
    labels = pd.Series([f"patient-{g}" for g in groups])
    with no_full_compute(max_rows=X.shape[1] + 2):
        got = DPLinearRegression(**kw).fit(
            dd.from_pandas(frame, npartitions=5),
            dd.from_pandas(pd.Series(y), npartitions=5),
            groups=dd.from_pandas(labels, npartitions=5),
        )
    # the plan is a public function of n, p, epsilon and k: the same facts
    assert got.privacy_breakdown_ == ref.privacy_breakdown_
    assert got.noise_scale_ == ref.noise_scale_
    assert (
        got.sensitivity_ == ref.sensitivity_ == 2 * DPLinearRegression(**_KW).fit(X, y).sensitivity_
    )
    assert got.epsilon_spent_ == 1.0 and got.privacy_unit_ == "group"


def test_seeded_release_ignores_row_order_and_partitions(sync_scheduler):
    X, y, groups = _data(rows=3)
    kw = dict(_KW, max_rows_per_group=2)
    perm = np.random.default_rng(1).permutation(groups.size)
    a = DPLinearRegression(**kw).fit(
        da.from_array(X, chunks=(100, 3)), da.from_array(y, chunks=100), groups=groups
    )
    b = DPLinearRegression(**kw).fit(
        da.from_array(X[perm], chunks=(33, 3)),
        da.from_array(y[perm], chunks=77),
        groups=da.from_array(groups[perm], chunks=50),
    )
    np.testing.assert_array_equal(a.coef_, b.coef_)


def test_clip_false_checks_every_row_before_the_random_choice(sync_scheduler):
    # one patient with 10 rows, one outside the bounds, k = 1: refused whatever is kept
    X, y, groups = _data(n_patients=30, rows=1)
    X = np.r_[X, np.zeros((10, 3))]
    X[-1, 0] = 5.0
    y = np.r_[y, np.zeros(10)]
    groups = np.r_[groups, np.full(10, 99)]
    for seed in range(4):
        est = DPLinearRegression(**dict(_KW, random_state=seed), clip=False, max_rows_per_group=1)
        with pytest.raises(ValueError, match="outside the declared bounds in column"):
            est.fit(
                da.from_array(X, chunks=(16, 3)),
                da.from_array(y, chunks=16),
                groups=da.from_array(groups, chunks=16),
            )


def test_bad_groups_are_refused_by_name(sync_scheduler):
    X, y, groups = _data(n_patients=20)
    Xd, yd = da.from_array(X, chunks=(10, 3)), da.from_array(y, chunks=10)
    with pytest.raises(ValueError, match="needs max_rows_per_group"):
        DPLinearRegression(**_KW).fit(Xd, yd, groups=da.from_array(groups))
    est = DPLinearRegression(**_KW, max_rows_per_group=2)
    with pytest.raises(ValueError, match="groups has 5 labels for 40 rows"):
        est.fit(Xd, yd, groups=da.from_array(groups[:5]))
    bad = groups.astype(float)
    bad[7] = np.nan
    with pytest.raises(ValueError, match="groups has missing or non-finite labels"):
        est.fit(Xd, yd, groups=da.from_array(bad, chunks=15))
    with pytest.raises(ValueError, match="groups is a Dask collection but the data are in"):
        est.fit(X, y, groups=da.from_array(groups))
    with pytest.raises(ValueError, match="bounds_X=None is not supported for Dask"):
        DPLinearRegression(bounds_y=(-3, 3), max_rows_per_group=2).fit(
            Xd, yd, groups=da.from_array(groups)
        )


@pytest.mark.slow
def test_on_a_distributed_cluster(dask_client):
    X, y, groups = _data(rows=3)
    kw = dict(_KW, epsilon=np.inf, max_rows_per_group=3)
    ref = DPLinearRegression(**kw).fit(X, y, groups=groups)
    got = DPLinearRegression(**kw).fit(
        da.from_array(X, chunks=(100, 3)),
        da.from_array(y, chunks=100),
        groups=dd.from_pandas(pd.Series(groups.astype(str)), npartitions=3),
    )
    np.testing.assert_array_equal(got.coef_, ref.coef_)
