"""Attack: one patient with many rows against the AUC interval's per-row guarantee.

The game of ``test_attack_patient_level_auc.py`` (D: 1000 positive and 1000 negative
patients of one row; D plus one patient with ``K = 5`` negative rows scored above
everyone), played on the AUC released by ``dp_roc_auc_score(..., return_interval=True)``
(the interval is post-processing of that release and of the noisy class counts). The
per-row release lets the attacker tell the two apart beyond the claimed epsilon; with
``groups=`` and ``max_rows_per_group=K`` the Clopper-Pearson lower bound (95 %,
:func:`skdp.auditing.threshold_audit`) must stay at or below the claim, so a correct
mechanism fails with probability about 5 %; the seeds are fixed.
"""

from __future__ import annotations

import pytest

from skdp.metrics import dp_roc_auc_score

from .test_attack_patient_level_auc import EPSILON, K, _audit


def _released_auc(y, s, **kw):
    auc, _ = dp_roc_auc_score(y, s, return_interval=True, **kw)
    return auc


@pytest.mark.slow
def test_row_level_interval_release_breaks_its_promise_for_a_patient_with_many_rows():
    """Control: the per-row release protects the patient's K rows at about K epsilon."""
    res = _audit(_released_auc, None, n_trials=2000)
    assert res.epsilon_lb > EPSILON, res


def test_patient_level_interval_release_keeps_its_promise():
    res = _audit(_released_auc, K)
    assert res.epsilon_lb <= EPSILON, res
