"""The regression and accuracy scorers with groups on Dask input: patients bounded to k
rows on the workers; the same value as in memory when no patient has more than k rows;
every row is validated before the random choice."""

from __future__ import annotations

import numpy as np
import pytest

da = pytest.importorskip("dask.array")

from skdp.metrics import (  # noqa: E402
    dp_accuracy_score,
    dp_mean_absolute_error,
    dp_mean_squared_error,
    dp_r2_score,
)

from ._guard import no_full_compute  # noqa: E402


def _targets(n_patients=200, rows=2, seed=0):
    rng = np.random.default_rng(seed)
    groups = np.repeat(np.arange(n_patients), rows)
    rng.shuffle(groups)
    y = rng.uniform(0, 10, groups.size)
    return y, y + rng.normal(size=groups.size), groups


@pytest.mark.parametrize("metric", [dp_mean_squared_error, dp_mean_absolute_error, dp_r2_score])
def test_regression_matches_in_memory_when_no_patient_exceeds_k(sync_scheduler, metric):
    yt, yp, groups = _targets()
    kw = dict(bounds_y=(0, 10), epsilon=np.inf, max_rows_per_group=2)
    want = metric(yt, yp, groups=groups, **kw)
    with no_full_compute(max_rows=4):
        got = metric(
            da.from_array(yt, chunks=130),
            da.from_array(yp, chunks=170),
            groups=da.from_array(groups, chunks=90),
            **kw,
        )
    assert got == want


def test_accuracy_matches_in_memory_and_bounds_each_patient(sync_scheduler):
    rng = np.random.default_rng(1)
    groups = np.repeat(np.arange(100), 5)
    yt = np.repeat(rng.integers(0, 2, 100), 5)  # one label per patient
    yp = np.where(np.arange(500) % 5 == 0, yt, 1 - yt)  # one row in 5 right
    lazy = dict(
        y_true=da.from_array(yt, chunks=70),
        y_pred=da.from_array(yp, chunks=70),
        groups=da.from_array(groups, chunks=70),
    )
    kw = dict(epsilon=np.inf)
    assert dp_accuracy_score(**lazy, max_rows_per_group=5, **kw) == 0.2
    # k = 1: one row per patient, chosen at random: about one patient in five is right
    acc = dp_accuracy_score(**lazy, max_rows_per_group=1, random_state=0, **kw)
    assert 0.05 <= acc <= 0.4 and acc * 100 == round(acc * 100)  # N = 100 rows kept


def test_every_row_is_validated_before_the_random_choice(sync_scheduler):
    yt, yp, groups = _targets(n_patients=20, rows=1)
    yt = np.r_[yt, np.full(6, 5.0)]
    yp = np.r_[yp, np.full(6, 5.0)]
    yp[-1] = np.nan  # a patient with 6 rows, one of them NaN; k = 1
    groups = np.r_[groups, np.full(6, 99)]
    for seed in range(3):
        with pytest.raises(ValueError, match="y_pred"):
            dp_mean_squared_error(
                da.from_array(yt, chunks=9),
                da.from_array(yp, chunks=9),
                bounds_y=(0, 10),
                epsilon=1.0,
                groups=da.from_array(groups, chunks=9),
                max_rows_per_group=1,
                random_state=seed,
            )


def test_seeded_scores_with_groups_are_reproducible(sync_scheduler):
    yt, yp, groups = _targets(rows=3)
    perm = np.random.default_rng(2).permutation(groups.size)

    def score(order, chunks):
        return dp_r2_score(
            da.from_array(yt[order], chunks=chunks),
            da.from_array(yp[order], chunks=chunks),
            bounds_y=(0, 10),
            epsilon=1.0,
            groups=da.from_array(groups[order], chunks=chunks),
            max_rows_per_group=2,
            random_state=4,
        )

    assert score(np.arange(groups.size), 100) == score(perm, 77)
