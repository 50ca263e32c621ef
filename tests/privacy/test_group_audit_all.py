"""The patient-level audit (skdp.auditing.group_audit) over every estimator that
skdp.discovery lists: one patient with K = 5 worst-case rows in or out, claim
epsilon = 1. Every estimator whose ``fit`` takes ``groups`` must keep its empirical lower
bound (one-sided Clopper-Pearson at 95 %, fixed seeds, so a correct mechanism fails with
probability at most about 5 %) at or below the claim; for a few, the row-level fit of the
same configuration on the same data must exceed it (the attack the guarantee stops).
Estimators without ``groups`` are public transformers (no privacy cost), which refuse
``groups=`` (``test_group_audit.py``). The torch-model cases run under ``-m slow``; the
configurations are in ``_group_cases.py``. The synthesizers' cases pass the canary
patient as a DataFrame (``group_audit`` keeps it one).
"""

from __future__ import annotations

import inspect
import warnings

import pytest

from skdp.auditing import group_audit

from ._configs import discover_estimators
from ._group_cases import CASES, EPSILON, K
from .test_group_audit import CASES as BASE_CASES

#: audited in their own files (test_group_audit.py, test_group_audit_flow.py)
ELSEWHERE = set(BASE_CASES) | {"DPFlowDensity"}
#: the estimators whose row-level fit the audit must catch
CONTROLS = [
    "DPAalenJohansen",
    "DPHistogramSynthesizer",
    "DPILPClassifier",
    "DPKaplanMeier",
    "DPMarginalSynthesizer",
]


def _row_level(estimator):
    """The same configuration fitted per row: ``groups`` is accepted and ignored (the bug
    class a patient-level guarantee prevents)."""

    def fit(self, *args, groups=None, **kwargs):
        return super(cls, self).fit(*args, **kwargs)

    cls = type(f"RowLevel{type(estimator).__name__}", (type(estimator),), {"fit": fit})
    return cls(**estimator.get_params())


def _audit(name, k=K):
    case = CASES[name]
    X, y, groups, canary_X, canary_y = case["data"]()
    est = case["make"](k)
    if k is None:
        est = _row_level(est)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return group_audit(
            est,
            X,
            y,
            groups=groups,
            canary_X=canary_X,
            canary_y=canary_y,
            score=case["score"],
            n_trials=case["n_trials"],
            random_state=1,
        )


def _params(names):
    return [pytest.param(n, marks=[pytest.mark.slow] if CASES[n]["slow"] else []) for n in names]


def test_every_estimator_with_groups_is_group_audited():
    with_groups = {
        name
        for name, cls in discover_estimators()
        if "groups" in inspect.signature(cls.fit).parameters
    }
    assert with_groups == set(CASES) | ELSEWHERE
    assert not set(CASES) & ELSEWHERE


@pytest.mark.parametrize("name", _params(sorted(CASES)))
def test_patient_level_guarantee_holds_under_the_group_audit(name):
    res = _audit(name)
    assert res.details["canary_rows"] == K
    assert res.epsilon_lb <= EPSILON, res


@pytest.mark.parametrize("name", _params(CONTROLS))
def test_the_row_level_fit_of_the_same_data_exceeds_the_claim(name):
    res = _audit(name, k=None)
    assert res.epsilon_lb > EPSILON, res
