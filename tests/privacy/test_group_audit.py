"""The patient-level audit (skdp.auditing.group_audit) over every estimator that takes
groups=: one patient with K = 5 extreme rows in or out, claim epsilon = 1. Each
estimator's empirical lower bound (95 % Clopper-Pearson, fixed seeds) must stay at or
below the claim; a control that ignores groups (a per-row release) must exceed it, so
the audit can fail. Every other estimator must refuse groups= instead of fitting."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest
from sklearn.utils import get_tags

from skdp.auditing import group_audit
from skdp.discovery import all_estimators
from skdp.linear_model import DPLinearRegression, DPLogisticRegression
from skdp.preprocessing import DPSimpleImputer, DPStandardScaler

K, EPSILON, N = 5, 1.0, 200


def _base(seed=0, label=False):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-0.2, 0.2, (N, 1))
    y = rng.integers(0, 2, N) if label else rng.uniform(-0.2, 0.2, N)
    return X, y, np.arange(N)


def _linear(est, Xc, yc):
    return est.predict(np.ones((1, 1)))


def _logit(est, Xc, yc):
    return est.decision_function(np.ones((1, 1)))


CASES = {
    "DPLinearRegression": (
        lambda: DPLinearRegression(
            epsilon=EPSILON,
            delta=0.0,
            bounds_X=(-1, 1),
            bounds_y=(-1, 1),
            fit_intercept=False,
            regularization=100.0,
            max_rows_per_group=K,
        ),
        False,
        _linear,
    ),
    "DPLogisticRegression": (
        lambda: DPLogisticRegression(
            epsilon=EPSILON,
            bounds_X=(-1, 1),
            classes=[0, 1],
            mechanism="objective",
            fit_intercept=False,
            C=0.01,
            max_rows_per_group=K,
        ),
        True,
        _logit,
    ),
    "DPStandardScaler": (
        lambda: DPStandardScaler(
            epsilon=EPSILON, bounds=(-1, 1), with_std=False, max_rows_per_group=K
        ),
        None,
        lambda est, Xc, yc: est.mean_,
    ),
    "DPSimpleImputer": (
        lambda: DPSimpleImputer(epsilon=EPSILON, bounds=(-1, 1), max_rows_per_group=K),
        None,
        lambda est, Xc, yc: est.statistics_,
    ),
}


def _audit(make, label, score, n_trials=400):
    X, y, g = _base(label=bool(label))
    canary_y = None if label is None else np.ones(K, dtype=int if label else float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return group_audit(
            make(),
            X,
            None if label is None else y,
            groups=g,
            canary_X=np.ones((K, 1)),
            canary_y=canary_y,
            score=score,
            n_trials=n_trials,
            random_state=1,
        )


@pytest.mark.parametrize("name", sorted(CASES))
def test_patient_level_guarantee_holds_under_the_group_audit(name):
    res = _audit(*CASES[name])
    assert res.details["canary_rows"] == K
    assert res.epsilon_lb <= EPSILON, res


class _IgnoresGroups(DPStandardScaler):
    """A per-row release that accepts groups= and ignores it (the bug class)."""

    def fit(self, X, y=None, *, groups=None):
        return super().fit(X)


def test_the_audit_catches_a_release_that_ignores_groups():
    make = lambda: _IgnoresGroups(epsilon=EPSILON, bounds=(-1, 1), with_std=False)  # noqa: E731
    res = _audit(make, None, lambda est, Xc, yc: est.mean_)
    assert res.epsilon_lb > EPSILON, res


def test_every_estimator_either_supports_groups_or_refuses_them():
    """No estimator fits silently per row when it is given groups=."""
    supported = set()
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (40, 2))
    for name, cls in all_estimators():
        if "groups" in inspect.signature(cls.fit).parameters:
            supported.add(name)
            continue
        est = cls()
        kind = get_tags(est).estimator_type
        y = (X[:, 0] > 0).astype(int) if kind in ("classifier", "regressor") else None
        args = (X,) if y is None else (X, y)
        with pytest.raises(TypeError, match="groups"):
            est.fit(*args, groups=np.arange(40))
    assert set(CASES) <= supported
