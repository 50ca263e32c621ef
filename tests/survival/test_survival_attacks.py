"""Distinguishing attacks on the survival releases: D versus D plus one patient.

The attacker knows D and that the extra patient had an event in the first grid interval
(where D has none), and scores each release by its estimate of the number of events
there. The bound is a one-sided Clopper--Pearson bound at 95 % confidence on independent
trials (:func:`skdp.auditing.threshold_audit`): a correct mechanism fails with
probability at most about 5 %; the seeds are fixed.

* one row per patient, row-level release: the bound stays at or below epsilon;
* a patient with K rows, ``groups=`` with ``max_rows_per_group=K``: at or below epsilon;
* the same patient against a row-level release (no ``groups``): above epsilon (the
  audit has the power to see group privacy's ``K epsilon``).
"""

from __future__ import annotations

import numpy as np
import pytest

from skdp.auditing import threshold_audit
from skdp.survival import (
    DPAalenJohansen,
    DPKaplanMeier,
    dp_logrank_test,
    make_competing_risks_target,
    make_survival_target,
)

EPSILON = 1.0
K = 5
N_TRIALS = 600


def _worlds(rows_of_canary, n=150, seed=0):
    rng = np.random.default_rng(seed)
    time = rng.uniform(2.0, 10.0, n)  # nobody leaves in the first interval (0, 1]
    event = rng.random(n) < 0.7
    groups = np.arange(n)
    t1 = np.r_[time, np.full(rows_of_canary, 0.5)]
    e1 = np.r_[event, np.ones(rows_of_canary, bool)]
    g1 = np.r_[groups, np.full(rows_of_canary, n)]
    return (event, time, groups), (e1, t1, g1)


def _run(score, rows_of_canary, seed=1):
    worlds = _worlds(rows_of_canary)
    rng = np.random.default_rng(seed)
    labels = rng.permutation(np.arange(N_TRIALS) % 2)
    scores = np.array(
        [score(*worlds[lab], int(rng.integers(2**31))) for lab in labels], dtype=float
    )
    return threshold_audit(scores, labels, epsilon=EPSILON)


def _km(use_groups, k=None):
    def score(event, time, groups, seed):
        km = DPKaplanMeier(
            epsilon=EPSILON, max_time=10.0, n_intervals=10, n_bootstrap=0,
            max_rows_per_group=k, random_state=seed,
        )  # fmt: skip
        km.fit(make_survival_target(event, time), groups=groups if use_groups else None)
        return km.at_risk_[0] * (1.0 - km.survival_function_[1])

    return score


def _aj(use_groups, k=None):
    def score(event, time, groups, seed):
        aj = DPAalenJohansen(
            epsilon=EPSILON, max_time=10.0, n_intervals=10, n_bootstrap=0,
            max_rows_per_group=k, random_state=seed,
        )  # fmt: skip
        y = make_competing_risks_target(event.astype(int), time)
        aj.fit(y, groups=groups if use_groups else None)
        return aj.cumulative_incidence_[1, 0]

    return score


def _logrank(use_groups, k=None):
    def score(event, time, groups, seed):
        arm = groups % 2
        res = dp_logrank_test(
            make_survival_target(event, time), arm, epsilon=EPSILON, max_time=10.0,
            n_intervals=1, n_simulations=1, groups=groups if use_groups else None,
            max_rows_per_group=k, random_state=seed,
        )  # fmt: skip
        return res.observed[arm[-1]]

    return score


@pytest.mark.slow
@pytest.mark.parametrize("make", [_km, _aj, _logrank], ids=["km", "aj", "logrank"])
def test_one_patient_one_row_stays_within_the_claim(make):
    res = _run(make(False), 1)
    assert res.epsilon_lb <= EPSILON, res


@pytest.mark.slow
@pytest.mark.parametrize("make", [_km, _aj, _logrank], ids=["km", "aj", "logrank"])
def test_one_patient_with_k_rows_stays_within_the_claim_with_groups(make):
    res = _run(make(True, K), K)
    assert res.epsilon_lb <= EPSILON, res


@pytest.mark.slow
def test_the_audit_sees_k_rows_against_a_row_level_release():
    res = _run(_km(False), K)
    assert res.epsilon_lb > EPSILON, res
