"""Attack: one patient with many rows against the selection mechanisms' per-row
guarantee (k-median's exponential mechanism, the ILP classifier's coverage counts).

The game (as in ``test_attack_patient_level.py``): D versus D plus one patient who has
K = 5 identical extreme rows, claim epsilon = 1. A per-row release lets the attacker
tell the two apart beyond the claim (group privacy: up to K epsilon); with ``groups=``
and ``max_rows_per_group=K`` the empirical lower bound (one-sided Clopper-Pearson at
95 %, :func:`skdp.auditing.threshold_audit`, fixed seeds) must stay at or below it.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from skdp.auditing import threshold_audit
from skdp.cluster import SubsampledExpMedian
from skdp.ilp import DPILPClassifier

K = 5
EPSILON = 1.0


def _audit(make, worlds, score, use_groups, n_trials, seed=1):
    rng = np.random.default_rng(seed)
    labels = rng.permutation(np.arange(n_trials) % 2)
    scores = np.empty(n_trials)
    for t, label in enumerate(labels):
        X, y, g = worlds[label]
        est = make(int(rng.integers(2**31)))
        args = (X,) if y is None else (X, y)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(*args, groups=g if use_groups else None)
        scores[t] = score(est)
    return threshold_audit(scores, labels, epsilon=EPSILON)


# -- k-median: the exponential mechanism over the two centres {0} and {1}
def _kmedian_worlds():
    """20 points at 0.5 (equal cost for both centres) and 2 at 1; the canary patient
    adds K rows at 1, moving the quality gap by K Delta (Delta = 1, the diameter)."""
    X0 = np.r_[np.full(20, 0.5), np.ones(2)][:, None]
    g0 = np.arange(len(X0))
    X1 = np.vstack([X0, np.ones((K, 1))])
    return (X0, None, g0), (X1, None, np.r_[g0, np.full(K, len(X0))])


def _kmedian(max_rows_per_group=None):
    def make(seed):
        return SubsampledExpMedian(
            n_clusters=1,
            epsilon=EPSILON,
            candidates=np.array([[0.0], [1.0]]),
            n_candidates=None,  # the plain exponential mechanism over both
            max_rows_per_group=max_rows_per_group,
            random_state=seed,
        )

    return make


def _centre(est):
    return float(est.cluster_centers_[0, 0])


@pytest.mark.slow
def test_kmedian_per_row_release_breaks_its_promise_for_a_patient_with_many_rows():
    """Control: the per-row exponent lets K rows move the odds by up to e^(K eps / 2);
    the audit proves more than the claimed epsilon (1.6 with these seeds)."""
    res = _audit(_kmedian(), _kmedian_worlds(), _centre, False, n_trials=1000)
    assert res.epsilon_lb > EPSILON, res


@pytest.mark.slow
def test_kmedian_patient_level_release_keeps_its_promise():
    res = _audit(_kmedian(K), _kmedian_worlds(), _centre, True, n_trials=1000)
    assert res.epsilon_lb <= EPSILON, res


# -- ILP: the empty clause's coverage count, released with geometric noise
def _ilp_worlds():
    """200 rows, half positive (coverage 0); the canary patient adds K positive rows
    (coverage +K)."""
    X0 = np.ones((200, 1), dtype=int)
    y0 = np.r_[np.ones(100), np.zeros(100)].astype(int)
    g0 = np.arange(200)
    X1, y1 = np.vstack([X0, np.ones((K, 1), dtype=int)]), np.r_[y0, np.ones(K, dtype=int)]
    return (X0, y0, g0), (X1, y1, np.r_[g0, np.full(K, 200)])


def _ilp(max_rows_per_group=None):
    def make(seed):
        return DPILPClassifier(
            epsilon=EPSILON,
            max_clause_length=0,  # one clause, one batch: all the budget on its counts
            max_rows_per_group=max_rows_per_group,
            random_state=seed,
        )

    return make


def _coverage(est):
    """The released noisy coverage (a clause is kept only when it is positive)."""
    cov = est.clause_noisy_coverage_
    return float(cov[0]) if len(cov) else 0.0


def test_ilp_per_row_release_breaks_its_promise_for_a_patient_with_many_rows():
    """Control: the counts' noise is calibrated to one row; the audit proves 2.5."""
    res = _audit(_ilp(), _ilp_worlds(), _coverage, False, n_trials=400)
    assert res.epsilon_lb > EPSILON, res


def test_ilp_patient_level_release_keeps_its_promise():
    res = _audit(_ilp(K), _ilp_worlds(), _coverage, True, n_trials=400)
    assert res.epsilon_lb <= EPSILON, res


@pytest.mark.slow
def test_ilp_a_smaller_bound_drops_rows_at_random_and_still_keeps_the_promise():
    res = _audit(_ilp(2), _ilp_worlds(), _coverage, True, n_trials=400)
    assert res.epsilon_lb <= EPSILON, res
