"""dp_logrank_test: the result, validation, the exact test at epsilon = inf (lifelines
where installed), the size under the null and the power by simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from skdp.survival import DPLogrankResult, dp_logrank_test, make_survival_target
from skdp.survival._logrank import logrank_statistic


def _trial(n=1000, hr=1.0, seed=0, arms=2):
    rng = np.random.default_rng(seed)
    arm = np.arange(n) % arms
    te = rng.exponential(10.0 * np.where(arm == 1, hr, 1.0))
    tc = rng.uniform(0, 40, n)
    return make_survival_target(te <= tc, np.minimum(te, tc)), arm


def test_result_and_privacy_facts():
    y, arm = _trial(2000, hr=1.5)
    res = dp_logrank_test(y, arm, epsilon=1.0, max_time=20.0, random_state=0)
    assert isinstance(res, DPLogrankResult)
    assert res.df == 1 and res.arms == (0, 1) and res.observed.shape == (2,)
    assert res.epsilon_spent == 1.0 and res.delta_spent == 0.0
    assert res.privacy_guarantee == "exact" and res.privacy_unit == "row"
    assert res.privacy_breakdown == {"histogram": 1.0}
    assert res.p_value == pytest.approx(1 / 1000) and res.n_simulations == 999
    again = dp_logrank_test(y, arm, epsilon=1.0, max_time=20.0, random_state=0)
    assert again.statistic == res.statistic and again.p_value == res.p_value


def test_three_arms_and_string_labels():
    y, arm = _trial(1500, hr=1.0, arms=3)
    labels = np.array(["a", "b", "c"])[arm]
    res = dp_logrank_test(
        y, labels, epsilon=2.0, max_time=20.0, arms=("a", "b", "c"), random_state=1,
        n_simulations=99,
    )  # fmt: skip
    assert res.df == 2 and res.arms == ("a", "b", "c")
    assert 0.0 < res.p_value <= 1.0


def test_exact_test_matches_lifelines_with_the_distinct_times_as_grid():
    stats = pytest.importorskip("lifelines.statistics")
    y, arm = _trial(400, hr=1.3, seed=2)
    t = np.round(y["time"], 1) + 0.1  # ties, and no time 0
    y = make_survival_target(y["event"], t)
    grid = np.unique(t)
    res = dp_logrank_test(y, arm, epsilon=math.inf, max_time=float(grid[-1]), time_grid=grid)
    ref = stats.logrank_test(t[arm == 0], t[arm == 1], y["event"][arm == 0], y["event"][arm == 1])
    assert res.statistic == pytest.approx(ref.test_statistic, rel=1e-9)
    assert res.p_value == pytest.approx(ref.p_value, rel=1e-6)
    assert res.privacy_guarantee == "none" and res.epsilon_spent == math.inf


def test_noise_variance_is_added_to_the_statistic():
    y, arm = _trial(600, hr=1.5, seed=3)
    from skdp.survival._grid import interval_of, time_grid_edges

    edges = time_grid_edges(20.0, n_intervals=20)
    idx, ev = interval_of(y["time"], y["event"], edges)
    counts = np.zeros((2, 20, 2))
    np.add.at(counts, (arm, idx, ev.astype(int)), 1)
    exact = logrank_statistic(counts, 0.0)[0]
    assert logrank_statistic(counts, 4.0)[0] < exact


@pytest.mark.parametrize(
    "kwargs, err, match",
    [
        ({"epsilon": 0.0}, ValueError, "epsilon"),
        ({"arms": (0,)}, ValueError, "arms must hold at least two"),
        ({"arms": "ab"}, TypeError, "arms must be a sequence"),
        ({"arms": (5, 6)}, ValueError, "labels has values outside arms"),
        ({"n_simulations": 0}, ValueError, "n_simulations"),
        ({"max_time": None}, ValueError, "max_time is required"),
        ({"groups": np.arange(100)}, ValueError, "max_rows_per_group"),
        ({"max_rows_per_group": 0}, ValueError, "max_rows_per_group"),
    ],
)
def test_bad_input_is_refused(kwargs, err, match):
    y, arm = _trial(100)
    args = {"epsilon": 1.0, "max_time": 20.0, **kwargs}
    with pytest.raises(err, match=match):
        dp_logrank_test(y, arm, **args)


def test_labels_must_match_rows():
    y, arm = _trial(100)
    with pytest.raises(ValueError, match="labels must be 1-d with one label per row"):
        dp_logrank_test(y, arm[:50], epsilon=1.0, max_time=20.0)


def test_groups_scale_the_noise():
    y, arm = _trial(300)
    groups = np.arange(300) // 3 * 2 + arm  # a patient stays in one arm
    res = dp_logrank_test(
        y, arm, epsilon=1.0, max_time=20.0, groups=groups, max_rows_per_group=2,
        n_simulations=19, random_state=0,
    )  # fmt: skip
    assert res.privacy_unit == "group" and res.epsilon_spent == 1.0


@pytest.mark.slow
@pytest.mark.parametrize("epsilon, n", [(1.0, 400), (0.1, 1000)])
def test_size_under_the_null_stays_at_alpha(epsilon, n):
    """150 null trials: the rejection rate at alpha = 0.05 stays within sampling error
    of 0.05 (a 99 % binomial upper limit, 0.10)."""
    rejected = 0
    for r in range(150):
        y, arm = _trial(n, hr=1.0, seed=1000 + r)
        res = dp_logrank_test(
            y, arm, epsilon=epsilon, max_time=20.0, n_simulations=199, random_state=r
        )
        rejected += res.p_value <= 0.05
    assert rejected / 150 <= 0.10, rejected


@pytest.mark.slow
def test_power_at_hazard_ratio_1_5():
    stats = pytest.importorskip("lifelines.statistics")
    hits, hits_np = 0, 0
    for r in range(20):
        y, arm = _trial(600, hr=1.5, seed=2000 + r)
        res = dp_logrank_test(y, arm, epsilon=1.0, max_time=20.0, n_simulations=199,
                              random_state=r)  # fmt: skip
        hits += res.p_value <= 0.05
        t, e = np.minimum(y["time"], 20.0), y["event"] & (y["time"] <= 20.0)
        ref = stats.logrank_test(t[arm == 0], t[arm == 1], e[arm == 0], e[arm == 1])
        hits_np += ref.p_value <= 0.05
    assert hits >= 0.8 * hits_np
