"""Attack: one patient with K = 5 rows against the ROC AUC / average precision.

The game: D (1000 positive and 1000 negative patients, one row each, scores that
overlap) versus D plus one patient with K = 5 negative rows scored above everyone. The
row-level release (smooth sensitivity for replace one row) lets the attacker tell the two
apart beyond the claimed epsilon; with ``groups=`` and ``max_rows_per_group`` (the
patient-level smooth sensitivity, :func:`skdp.mechanisms.sensitivity.
group_count_smooth_sensitivity`) the empirical lower bound stays at or below the claim.
The bound is a one-sided Clopper-Pearson bound at 95 % confidence on independent trials
(:func:`skdp.auditing.threshold_audit`, with the mechanism's delta), so a correct
mechanism fails with probability at most about 5 %; the seeds are fixed.
"""

from __future__ import annotations

import numpy as np
import pytest

from skdp.auditing import threshold_audit
from skdp.metrics import dp_average_precision_score, dp_roc_auc_score

K = 5
EPSILON = 2.0  # the row-level loss is about 2.3 EPSILON (AUC), 1.9 EPSILON (AP)
DELTA = 1e-4  # Laplace noise: the smooth-sensitivity shift is the whole privacy loss


def _worlds(n=1000, seed=0):
    rng = np.random.default_rng(seed)
    y0 = np.r_[np.ones(n, int), np.zeros(n, int)]
    s0 = np.r_[rng.normal(2.0, 1.0, n), rng.normal(0.0, 1.0, n)]
    g0 = np.arange(2 * n)
    y1, s1 = np.r_[y0, np.zeros(K, int)], np.r_[s0, np.full(K, 100.0)]
    g1 = np.r_[g0, np.full(K, 2 * n)]
    return (y0, s0, g0), (y1, s1, g1)


def _audit(metric, k, n_trials=1000, seed=1):
    worlds = _worlds()
    rng = np.random.default_rng(seed)
    labels = rng.permutation(np.arange(n_trials) % 2)
    scores = np.empty(n_trials)
    for t, label in enumerate(labels):
        y, s, g = worlds[label]
        kw = {} if k is None else {"groups": g, "max_rows_per_group": k}
        scores[t] = metric(
            y, s, epsilon=EPSILON, delta=DELTA, random_state=int(rng.integers(2**31)), **kw
        )
    return threshold_audit(scores, labels, delta=DELTA, epsilon=EPSILON)


@pytest.mark.slow
@pytest.mark.parametrize("metric", [dp_roc_auc_score, dp_average_precision_score])
def test_row_level_release_breaks_its_promise_for_a_patient_with_many_rows(metric):
    """Control: the row-level smooth sensitivity calibrates the noise to one row, the
    patient's five rows shift the release by about twice its scale in units of
    epsilon, and the audit proves more than the claimed epsilon."""
    res = _audit(metric, None, n_trials=2000)
    assert res.epsilon_lb > EPSILON, res


@pytest.mark.slow
@pytest.mark.parametrize("metric", [dp_roc_auc_score, dp_average_precision_score])
@pytest.mark.parametrize("k", [K, 2])
def test_patient_level_release_keeps_its_promise(metric, k):
    """k = K: every row of the patient is kept; k = 2: rows beyond 2 are dropped at
    random inside the mechanism, and the claim still holds for the patient."""
    res = _audit(metric, k)
    assert res.epsilon_lb <= EPSILON, res
