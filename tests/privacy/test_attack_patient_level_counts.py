"""Attack: one patient with many rows against a per-row count and a per-row scaler.

The game (as in ``test_attack_patient_level.py``): D (patients with one row each)
versus D plus one patient who has k = 5 rows, released by

* :func:`skdp.metrics.dp_accuracy_score` (a count of correct predictions): the
  patient's five rows are all correct, so the count moves by 5;
* :class:`skdp.preprocessing.DPStandardScaler` (a sum): the patient's five rows sit at
  the upper bound, so the column sum moves by 5 scaled units.

A per-row release at epsilon = 1 protects that patient at about 5 epsilon, and the
audit proves more than the claim; with ``groups=`` and ``max_rows_per_group=5`` the
sensitivity is the patient's and the empirical lower bound stays at or below the claim.
The bound is a one-sided Clopper-Pearson bound at 95 % confidence on independent trials
(:func:`skdp.auditing.threshold_audit`, the attack's score is the released number), so
a correct mechanism fails with probability at most about 5 %; the seeds are fixed.
"""

from __future__ import annotations

import numpy as np
import pytest

from skdp.auditing import threshold_audit
from skdp.metrics import dp_accuracy_score
from skdp.preprocessing import DPStandardScaler

K = 5
EPSILON = 1.0
N = 200


def _labels(n_trials, seed):
    rng = np.random.default_rng(seed)
    return rng, rng.permutation(np.arange(n_trials) % 2)


def _accuracy_worlds():
    # D: 200 one-row patients, 10 % correct (the count stays away from the clamp at 0)
    y0 = np.zeros(N, dtype=int)
    p0 = np.r_[np.zeros(N // 10, dtype=int), np.ones(N - N // 10, dtype=int)]
    g0 = np.arange(N)
    # D plus one patient with K rows, all predicted correctly
    y1, p1, g1 = np.r_[y0, np.ones(K, int)], np.r_[p0, np.ones(K, int)], np.r_[g0, [N] * K]
    return (y0, p0, g0), (y1, p1, g1)


def _audit_accuracy(max_rows_per_group, n_trials=2000, seed=1):
    worlds = _accuracy_worlds()
    rng, labels = _labels(n_trials, seed)
    scores = np.empty(n_trials)
    for t, label in enumerate(labels):
        y, p, g = worlds[label]
        kw = {} if max_rows_per_group is None else {"groups": g}
        scores[t] = dp_accuracy_score(
            y,
            p,
            epsilon=EPSILON,
            max_rows_per_group=max_rows_per_group,
            random_state=int(rng.integers(2**31)),
            **kw,
        )
    return threshold_audit(scores, labels, epsilon=EPSILON)


def _scaler_worlds():
    rng = np.random.default_rng(0)
    X0 = rng.uniform(-0.2, 0.2, (N, 1))
    X1 = np.vstack([X0, np.ones((K, 1))])  # one patient, K visits at the upper bound
    return (X0, np.arange(N)), (X1, np.r_[np.arange(N), [N] * K])


def _audit_scaler(max_rows_per_group, n_trials=1000, seed=2):
    worlds = _scaler_worlds()
    rng, labels = _labels(n_trials, seed)
    scores = np.empty(n_trials)
    for t, label in enumerate(labels):
        X, g = worlds[label]
        est = DPStandardScaler(
            epsilon=EPSILON,
            bounds=(-1.0, 1.0),
            with_std=False,  # the whole budget on the sum: the mean is a noisy sum / n
            max_rows_per_group=max_rows_per_group,
            random_state=int(rng.integers(2**31)),
        )
        est.fit(X, groups=None if max_rows_per_group is None else g)
        scores[t] = float(est.mean_[0])  # the canary's pull on the mean
    return threshold_audit(scores, labels, epsilon=EPSILON)


@pytest.mark.parametrize("audit", [_audit_accuracy, _audit_scaler], ids=["accuracy", "scaler"])
def test_row_level_release_breaks_its_promise_for_a_patient_with_many_rows(audit):
    """Control (the failure this fixes): the per-row release protects the patient's five
    rows at about 5 epsilon, and the audit proves more than the claimed epsilon."""
    res = audit(None)
    assert res.epsilon_lb > EPSILON, res


@pytest.mark.parametrize("audit", [_audit_accuracy, _audit_scaler], ids=["accuracy", "scaler"])
def test_patient_level_release_keeps_its_promise(audit):
    res = audit(K)
    assert res.epsilon_lb <= EPSILON, res


def test_a_smaller_bound_drops_rows_at_random_and_still_keeps_the_promise():
    """With k = 2 below the patient's five rows, rows beyond k are dropped at random
    inside the mechanism: the claim holds for the patient."""
    res = _audit_accuracy(2, n_trials=1000, seed=3)
    assert res.epsilon_lb <= EPSILON, res
