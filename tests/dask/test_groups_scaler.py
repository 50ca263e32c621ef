"""DPStandardScaler on Dask input, per row and per patient: the moments summed in fixed
point on the workers (equal to the in-memory fit up to rounding at epsilon = inf), each
patient bounded to k rows after Dask's shuffle by patient, nothing but the 2 d sums and
the partitions' lengths on the client."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")

from skdp.preprocessing import DPStandardScaler  # noqa: E402
from skdp.preprocessing._scaler_dask import fixed_point_moments  # noqa: E402

from ._guard import no_full_compute  # noqa: E402


def _data(n_patients=500, rows=3, seed=0):
    rng = np.random.default_rng(seed)
    groups = np.repeat(np.arange(n_patients), rows)
    rng.shuffle(groups)
    X = rng.normal(size=(groups.size, 3)) * [1.0, 2.0, 3.0] + [0.0, 1.0, -1.0]
    return X, groups


@pytest.mark.parametrize("grouped", [False, True])
def test_matches_in_memory_at_epsilon_inf(sync_scheduler, grouped):
    X, groups = _data()
    kw = dict(bounds=(-10, 10), epsilon=np.inf, max_rows_per_group=3 if grouped else None)
    fit_kw = {"groups": groups} if grouped else {}
    ref = DPStandardScaler(**kw).fit(X, **fit_kw)
    lazy = {"groups": da.from_array(groups, chunks=400)} if grouped else {}
    with no_full_compute(max_rows=2 * X.shape[1]):
        got = DPStandardScaler(**kw).fit(da.from_array(X, chunks=(700, 3)), **lazy)
    np.testing.assert_allclose(got.mean_, ref.mean_, rtol=0, atol=1e-9)
    np.testing.assert_allclose(got.var_, ref.var_, rtol=1e-9)
    assert got.privacy_unit_ == ("group" if grouped else "row")


def test_per_patient_on_a_dataframe_with_text_labels(sync_scheduler):
    X, groups = _data(rows=4)
    frame = pd.DataFrame(X, columns=["age", "bmi", "sbp"])
    bounds = {"age": (-10, 10), "bmi": (-10, 10), "sbp": (-12, 12)}
    ref = DPStandardScaler(bounds=bounds, max_rows_per_group=2, random_state=0)
    ref.fit(frame, groups=groups)
    got = DPStandardScaler(bounds=bounds, max_rows_per_group=2, random_state=0).fit(
        dd.from_pandas(frame, npartitions=3),
        groups=dd.from_pandas(pd.Series([f"p{g}" for g in groups]), npartitions=3),
    )
    assert list(got.feature_names_in_) == ["age", "bmi", "sbp"]
    assert got.privacy_breakdown_ == ref.privacy_breakdown_
    assert got.epsilon_spent_ == ref.epsilon_spent_ == 1.0
    np.testing.assert_allclose(got.mean_, [0.0, 1.0, -1.0], atol=0.5)


def test_clip_false_checks_every_row_and_bounds_must_be_declared(sync_scheduler):
    X, groups = _data(n_patients=40)
    X[5, 1] = 50.0  # one row outside; its patient has 3 rows, k = 1
    lazy = da.from_array(X, chunks=(30, 3))
    est = DPStandardScaler(bounds=(-10, 10), clip=False, max_rows_per_group=1)
    for seed in range(3):
        with pytest.raises(ValueError, match="outside the declared bounds"):
            est.set_params(random_state=seed).fit(lazy, groups=da.from_array(groups, chunks=30))
    with pytest.raises(ValueError, match="bounds=None is not supported for Dask"):
        DPStandardScaler(max_rows_per_group=1).fit(lazy, groups=da.from_array(groups))


def test_fixed_point_moments_are_exact_and_split_free():
    Z = np.random.default_rng(0).uniform(-1, 1, (1000, 2))
    s1, s2 = fixed_point_moments(Z)
    a1, a2 = fixed_point_moments(Z[:333])
    b1, b2 = fixed_point_moments(Z[333:])
    assert list(s1) == list(a1 + b1) and list(s2) == list(a2 + b2)
    q = [[int(round(v * 2.0**39)) for v in col] for col in Z.T]
    assert list(s2) == [sum(v * v for v in col) for col in q]
    assert list(s1) == [sum(col) for col in q]
    m, top = 2**15 + 1, 2**39 - 1  # an odd column sum beyond 2^53: exact (int64)
    column = np.full((m, 1), top * 2.0**-39)
    assert fixed_point_moments(column)[0][0] == m * top
    assert fixed_point_moments(column)[1][0] == m * top * top
