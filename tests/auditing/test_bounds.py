"""Bounds behind the empirical epsilon: Clopper-Pearson and the one-run p-value (T18)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from skdp.auditing import (
    clopper_pearson,
    epsilon_from_rates,
    epsilon_lower_bound,
    one_run_epsilon_lower_bound,
    one_run_p_value,
)


def _steinke_reference_p_value(m, r, v, eps, delta):
    """Steinke, Nasr, Jagielski (2023) App. D, transcribed loop by loop."""
    q = 1 / (1 + math.exp(-eps))
    beta = stats.binom.sf(v - 1, r, q)
    alpha = 0.0
    total = 0.0
    for i in range(1, v + 1):
        total = total + stats.binom.pmf(v - i, r, q)
        if total > i * alpha:
            alpha = total / i
    return min(beta + alpha * delta * 2 * m, 1)


def test_clopper_pearson_known_values():
    lo, hi = clopper_pearson(5, 10, confidence=0.95)
    # textbook values (e.g. R binom.test(5, 10)$conf.int)
    assert lo == pytest.approx(0.187086, abs=1e-6)
    assert hi == pytest.approx(0.812914, abs=1e-6)
    assert clopper_pearson(0, 10, side="lower") == 0.0
    assert clopper_pearson(10, 10, side="upper") == 1.0
    # one-sided upper bound for 0/n is 1 - alpha^(1/n)
    assert clopper_pearson(0, 20, confidence=0.95, side="upper") == pytest.approx(
        1 - 0.05 ** (1 / 20)
    )


def test_clopper_pearson_coverage():
    """Empirical coverage of the one-sided lower bound is at least the confidence."""
    rng = np.random.default_rng(0)
    p, n = 0.3, 50
    k = rng.binomial(n, p, size=4000)
    lo = clopper_pearson(k, np.full_like(k, n), confidence=0.9, side="lower")
    assert np.mean(lo <= p) >= 0.9 - 3 * math.sqrt(0.09 / 4000)


def test_clopper_pearson_rejects_bad_input():
    with pytest.raises(ValueError):
        clopper_pearson(11, 10)
    with pytest.raises(ValueError):
        clopper_pearson(1, 10, confidence=1.5)
    with pytest.raises(ValueError):
        clopper_pearson(1, 10, side="left")


def test_epsilon_from_rates_is_the_dp_inequality():
    eps = 1.3
    p = math.exp(eps) / (1 + math.exp(eps))
    assert epsilon_from_rates(p, 1 - p) == pytest.approx(eps)
    assert epsilon_from_rates(0.5, 0.5) == 0.0
    assert epsilon_from_rates(0.2, 0.6) == 0.0  # worse than chance is not evidence
    assert epsilon_from_rates(0.5, 0.1, delta=0.05) == pytest.approx(math.log(4.5))


def test_epsilon_lower_bound_is_below_point_estimate_and_tightens():
    point = math.log(0.9 / 0.1)
    lbs = [epsilon_lower_bound(9 * n, n, n, 9 * n) for n in (10, 100, 1000, 10000)]
    assert all(b < point for b in lbs)
    assert lbs == sorted(lbs)
    assert lbs[-1] > 0.95 * point
    assert epsilon_lower_bound(5, 5, 5, 5) == 0.0
    assert epsilon_lower_bound(0, 0, 3, 3) == 0.0


@given(
    r=st.integers(1, 300),
    frac=st.floats(0, 1),
    eps=st.floats(0, 6),
    delta=st.sampled_from([0.0, 1e-5, 1e-3]),
)
def test_one_run_p_value_matches_reference(r, frac, eps, delta):
    v = int(round(frac * r))
    m = 2 * r
    assert one_run_p_value(m, r, v, eps, delta) == pytest.approx(
        _steinke_reference_p_value(m, r, v, eps, delta), rel=1e-9, abs=1e-12
    )


@given(r=st.integers(1, 200), frac=st.floats(0, 1), delta=st.sampled_from([0.0, 1e-4]))
def test_one_run_p_value_monotone(r, frac, delta):
    v = int(round(frac * r))
    m = 5 * r
    ps = [one_run_p_value(m, r, v, e, delta) for e in np.linspace(0, 5, 11)]
    assert all(0 <= p <= 1 for p in ps)
    assert all(a <= b + 1e-12 for a, b in zip(ps, ps[1:], strict=False))
    if v < r:
        assert one_run_p_value(m, r, v + 1, 1.0, delta) <= one_run_p_value(m, r, v, 1.0, delta)


def test_one_run_delta_zero_is_binomial_tail():
    q = 1 / (1 + math.exp(-0.7))
    assert one_run_p_value(100, 60, 40, 0.7) == pytest.approx(stats.binom.sf(39, 60, q))


@pytest.mark.parametrize("r", [10, 101, 1000])
def test_one_run_bound_zero_without_majority(r):
    for v in range(0, r // 2 + 1, max(1, r // 20)):
        assert one_run_epsilon_lower_bound(10 * r, r, v) == 0.0


def test_one_run_bound_monotone_in_v_and_valid():
    r = 200
    bounds = [one_run_epsilon_lower_bound(1000, r, v) for v in range(100, r + 1, 10)]
    assert bounds == sorted(bounds)
    # at the bound, the p-value is below beta; a bit above it is not
    v = 170
    b = one_run_epsilon_lower_bound(1000, r, v)
    assert one_run_p_value(1000, r, v, b) < 0.05
    assert one_run_p_value(1000, r, v, b + 1e-6) >= 0.05 - 1e-9


def test_one_run_delta_term_weakens_bound():
    """expm_flow.md §4.6: with m ~ 1.75e4 and delta=1e-5 the 2 m delta term costs a lot."""
    b0 = one_run_epsilon_lower_bound(17500, 1000, 600, delta=0.0)
    b5 = one_run_epsilon_lower_bound(17500, 1000, 600, delta=1e-5)
    b4 = one_run_epsilon_lower_bound(17500, 1000, 600, delta=1e-4)
    b3 = one_run_epsilon_lower_bound(17500, 1000, 600, delta=1e-3)
    assert b0 > b5 > b4 > b3
    assert b3 == 0.0


def _rr_one_run_bounds(eps0, n_runs, m, k, seed):
    """Randomized response audit: each canary's bit reported correctly w.p. e^eps0/(1+e^eps0)."""
    rng = np.random.default_rng(seed)
    q0 = math.exp(eps0) / (1 + math.exp(eps0))
    out = []
    for _ in range(n_runs):
        S = rng.integers(0, 2, m) * 2 - 1
        released = np.where(rng.random(m) < q0, S, -S)
        # guess the k top and k bottom scores, ties broken at random
        score = released + rng.random(m) * 1e-3
        order = np.argsort(score)
        T = np.zeros(m, dtype=int)
        T[order[:k]] = -1
        T[order[-k:]] = 1
        v = int(np.sum((T != 0) & (T == S)))
        out.append(one_run_epsilon_lower_bound(m, 2 * k, v))
    return np.array(out)


def test_randomized_response_calibration_fast():
    """T18 calibration, CI size: the bound exceeds eps0 no more often than beta allows,
    and it gets close to eps0 from below."""
    eps0 = 2.0
    bounds = _rr_one_run_bounds(eps0, n_runs=60, m=10_000, k=500, seed=1)
    assert np.mean(bounds > eps0) <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 60)
    assert np.median(bounds) >= 0.5 * eps0
    assert np.median(bounds) < eps0


@pytest.mark.slow
@pytest.mark.parametrize("eps0", [0.5, 1.0, 2.0, 4.0])
def test_randomized_response_calibration_full(eps0):
    """T18 calibration at full size: 400 runs, m=1e4, k+ = k- = 500."""
    bounds = _rr_one_run_bounds(eps0, n_runs=400, m=10_000, k=500, seed=2)
    assert np.mean(bounds > eps0) <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 400)
    if eps0 == 2.0:
        assert np.median(bounds) >= 0.5 * eps0


def test_randomized_response_bound_approaches_from_below():
    """More guesses -> the bound gets closer to eps0 (and stays below)."""
    eps0 = 1.5
    med = [np.median(_rr_one_run_bounds(eps0, 15, 20 * k, k, seed=3)) for k in (50, 500, 5000)]
    assert med == sorted(med)
    assert med[-1] < eps0
    assert med[-1] > 0.85 * eps0


def test_epsilon_lower_bound_coverage_on_randomized_response():
    """Independent-trials bound: over 500 repetitions of 400 RR trials, the bound
    exceeds the true epsilon no more often than 1 - confidence allows."""
    eps0 = 1.0
    q0 = math.exp(eps0) / (1 + math.exp(eps0))
    rng = np.random.default_rng(11)
    reps, n = 500, 200
    tp = rng.binomial(n, q0, size=reps)  # positives guessed IN
    fp = rng.binomial(n, 1 - q0, size=reps)  # negatives guessed IN
    bounds = np.array(
        [
            epsilon_lower_bound(a, n - a, b, n - b, confidence=0.9)
            for a, b in zip(tp, fp, strict=True)
        ]
    )
    assert np.mean(bounds > eps0) <= 0.1 + 3 * math.sqrt(0.1 * 0.9 / reps)
    assert 0.5 * eps0 < np.median(bounds) < eps0
