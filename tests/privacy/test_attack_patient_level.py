"""Attack: one patient with many rows against a per-row guarantee.

The game: D (patients with one row each) versus D plus one patient who has k = 5
identical extreme rows. A release whose sensitivity is per row lets the attacker tell
the two apart far beyond the claimed epsilon (group privacy: about k epsilon); with
``groups=`` and ``max_rows_per_group=k`` the empirical lower bound must stay at or below
the claim. The bound is a one-sided Clopper-Pearson bound at 95 % confidence on
independent trials (:func:`skdp.auditing.threshold_audit`), so a correct mechanism
fails this test with probability at most about 5 %; the seeds are fixed.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from skdp.auditing import threshold_audit
from skdp.linear_model import DPLinearRegression, DPLogisticRegression
from skdp.preprocessing import DPStandardScaler

K = 5
EPSILON = 1.0


def _worlds(n=200, seed=0):
    rng = np.random.default_rng(seed)
    X0 = rng.uniform(-0.2, 0.2, (n, 1))
    y0 = rng.uniform(-0.2, 0.2, n)
    g0 = np.arange(n)
    canary_X, canary_y = np.ones((K, 1)), np.ones(K)  # one patient, K extreme visits
    X1, y1 = np.vstack([X0, canary_X]), np.r_[y0, canary_y]
    g1 = np.r_[g0, np.full(K, n)]
    return (X0, y0, g0), (X1, y1, g1)


def _audit(make, use_groups, n_trials=600, seed=1, worlds=None, score=None):
    worlds = _worlds() if worlds is None else worlds
    rng = np.random.default_rng(seed)
    labels = rng.permutation(np.arange(n_trials) % 2)
    scores = np.empty(n_trials)
    for t, label in enumerate(labels):
        X, y, g = worlds[label]
        est = make(int(rng.integers(2**31)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(X, y, groups=g if use_groups else None)
        point = np.ones((1, worlds[0][0].shape[1]))
        # the canary's pull on the model at its own point
        scores[t] = float(np.ravel(score(est, point) if score else est.predict(point))[0])
    return threshold_audit(scores, labels, epsilon=EPSILON)


def _linear(max_rows_per_group=None):
    def make(seed):
        return DPLinearRegression(
            epsilon=EPSILON,
            delta=0.0,
            bounds_X=(-1.0, 1.0),
            bounds_y=(-1.0, 1.0),
            # no intercept (no centre release) and a fixed ridge (no eigenvalue
            # release): the whole budget on the statistics, a stable solve, so the
            # slope is close to a linear function of the noisy sum x y
            fit_intercept=False,
            regularization=100.0,
            max_rows_per_group=max_rows_per_group,
            random_state=seed,
        )

    return make


def test_row_level_release_breaks_its_promise_for_a_patient_with_many_rows():
    """Control (the failure this fixes): a per-row fit protects the patient's five rows
    at about 5 epsilon, and the audit proves more than the claimed epsilon."""
    res = _audit(_linear(), use_groups=False)
    assert res.epsilon_lb > EPSILON, res


def test_patient_level_release_keeps_its_promise():
    res = _audit(_linear(max_rows_per_group=K), use_groups=True)
    assert res.epsilon_lb <= EPSILON, res


@pytest.mark.parametrize("k", [1, 2])
def test_a_smaller_bound_drops_rows_at_random_and_still_keeps_the_promise(k):
    """With k below the patient's row count, rows beyond k are dropped at random inside
    the mechanism: the claim holds for the patient, and the bounded fit sees at most k
    of the canary's rows."""
    res = _audit(_linear(max_rows_per_group=k), use_groups=True, n_trials=400)
    assert res.epsilon_lb <= EPSILON, res


def _binary_worlds(n=200, seed=0):
    """Labels independent of x, plus one patient with K rows at x = 1, label 1."""
    rng = np.random.default_rng(seed)
    X0 = rng.uniform(-0.2, 0.2, (n, 1))
    y0 = rng.integers(0, 2, n)
    g0 = np.arange(n)
    X1, y1 = np.vstack([X0, np.ones((K, 1))]), np.r_[y0, np.ones(K, dtype=int)]
    return (X0, y0, g0), (X1, y1, np.r_[g0, np.full(K, n)])


def _logistic(max_rows_per_group=None):
    def make(seed):
        return DPLogisticRegression(
            epsilon=EPSILON,
            bounds_X=(-1.0, 1.0),
            classes=[0, 1],
            mechanism="objective",
            fit_intercept=False,
            # a strong ridge (1 / C = 100): the weight is close to linear in the
            # gradient sum, where the canary's pull does not saturate
            C=0.01,
            max_rows_per_group=max_rows_per_group,
            random_state=seed,
        )

    return make


def _decision(est, point):
    return est.decision_function(point)


def test_logistic_per_row_release_breaks_its_promise_for_a_patient_with_many_rows():
    res = _audit(_logistic(), False, worlds=_binary_worlds(), score=_decision)
    assert res.epsilon_lb > EPSILON, res


def test_logistic_patient_level_release_keeps_its_promise():
    res = _audit(_logistic(K), True, worlds=_binary_worlds(), score=_decision)
    assert res.epsilon_lb <= EPSILON, res


def test_clip_false_refusal_does_not_depend_on_the_rows_kept_at_random():
    """clip=False refuses a value outside the declared bounds whichever rows of its
    patient the bounding keeps: the check reads every row before any is dropped (it
    read only the kept rows, so whether fit failed depended on the random choice)."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-0.5, 0.5, (40, 1))
    y = rng.uniform(-0.5, 0.5, 40)
    X[3, 0] = 5.0  # outside (-1, 1); its patient has 10 rows, k = 1 keeps one
    groups = np.r_[np.zeros(10, dtype=int), np.arange(1, 31)]
    for seed in range(20):
        with pytest.raises(ValueError, match="outside"):
            DPLinearRegression(
                bounds_X=(-1, 1),
                bounds_y=(-1, 1),
                clip=False,
                max_rows_per_group=1,
                random_state=seed,
            ).fit(X, y, groups=groups)
        with pytest.raises(ValueError, match="outside"):
            DPStandardScaler(
                bounds=(-1, 1), clip=False, max_rows_per_group=1, random_state=seed
            ).fit(X, groups=groups)
