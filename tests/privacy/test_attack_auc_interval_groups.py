"""Attack: one patient with many rows against the AUC interval's per-row guarantee.

The game (as in ``test_attack_patient_level.py``): D (200 negatives scored above 200
positives, one row a patient, AUC 0) versus D plus one patient with ``K`` positive rows
scored above everything. The statistic is the released AUC of
``dp_roc_auc_score(..., return_interval=True)`` (the interval is post-processing of the
same release and the noisy counts). A per-row release lets the attacker tell the two
apart far beyond the claimed epsilon; with ``groups=`` and ``max_rows_per_group=K`` the
Clopper-Pearson lower bound (95 %, :func:`skdp.auditing.threshold_audit`) must stay at
or below the claim, so a correct mechanism fails with probability about 5 %; seeds fixed.
"""

from __future__ import annotations

import numpy as np
import pytest

from skdp.auditing import threshold_audit
from skdp.metrics import dp_roc_auc_score

K = 10
EPSILON = 1.0
DELTA = 1e-6


def _worlds(n=200, seed=0):
    rng = np.random.default_rng(seed)
    y0 = np.r_[np.zeros(n), np.ones(n)].astype(int)
    s0 = np.r_[rng.uniform(0.5, 1.0, n), rng.uniform(0.0, 0.4, n)]
    g0 = np.arange(2 * n)
    y1, s1 = np.r_[y0, np.ones(K, int)], np.r_[s0, np.full(K, 10.0)]
    g1 = np.r_[g0, np.full(K, 2 * n)]
    return (y0, s0, g0), (y1, s1, g1)


def _audit(use_groups, n_trials=600, seed=1):
    worlds = _worlds()
    rng = np.random.default_rng(seed)
    labels = rng.permutation(np.arange(n_trials) % 2)
    scores = np.empty(n_trials)
    for t, label in enumerate(labels):
        y, s, g = worlds[label]
        extra = {"groups": g, "max_rows_per_group": K} if use_groups else {}
        auc, _ = dp_roc_auc_score(
            y,
            s,
            epsilon=EPSILON,
            delta=DELTA,
            return_interval=True,
            random_state=int(rng.integers(2**31)),
            **extra,
        )
        scores[t] = auc
    return threshold_audit(scores, labels, epsilon=EPSILON, delta=DELTA)


@pytest.mark.slow
def test_row_level_interval_release_breaks_its_promise_for_a_patient_with_many_rows():
    """Control: the per-row release protects the patient's K rows at about K epsilon."""
    res = _audit(use_groups=False)
    assert res.epsilon_lb > EPSILON, res


def test_patient_level_interval_release_keeps_its_promise():
    res = _audit(use_groups=True)
    assert res.epsilon_lb <= EPSILON, res
