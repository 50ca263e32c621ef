"""The public check_privacy helper and its default audit data."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin

from skdp.auditing import LaplaceCountRelease, check_privacy
from skdp.auditing._checks import default_audit_data
from skdp.base import DPEstimatorMixin
from skdp.utils._random import make_rng

IDS = np.arange(40).reshape(-1, 1)


class _NoisySumRegressor(DPEstimatorMixin, RegressorMixin, BaseEstimator):
    """Toy: predicts (sum of clipped y + Laplace) / 100. eps-DP under add/remove when
    noise_factor=1 (sensitivity max(|lo|, |hi|) of bounds_y)."""

    def __init__(
        self,
        *,
        epsilon=1.0,
        bounds_X=(0.0, 1.0),
        bounds_y=(-1.0, 1.0),
        noise_factor=1.0,
        random_state=None,
    ):
        self.epsilon = epsilon
        self.bounds_X = bounds_X
        self.bounds_y = bounds_y
        self.noise_factor = noise_factor
        self.random_state = random_state

    def fit(self, X, y):
        lo, hi = self.bounds_y
        sens = max(abs(lo), abs(hi))
        total = np.clip(np.asarray(y, float), lo, hi).sum()
        noise = make_rng(self.random_state).laplace() * sens / self.epsilon * self.noise_factor
        self.value_ = (total + noise) / 100.0
        self.n_features_in_ = np.asarray(X).shape[1]
        return self._record_privacy_spent(self.epsilon)

    def predict(self, X):
        return np.full(len(X), self.value_)


class _Unbounded(DPEstimatorMixin, ClassifierMixin, BaseEstimator):
    def __init__(self, *, epsilon=1.0):
        self.epsilon = epsilon


def test_check_privacy_passes_correct_mechanism():
    res = check_privacy(LaplaceCountRelease(epsilon=1.0, n_ids=50), IDS, canary_X=[[45]])
    assert res.consistent and 0 < res.epsilon_lb <= 1.0


def test_check_privacy_catches_missing_noise():
    with pytest.raises(AssertionError, match="exceeds the claimed epsilon=1"):
        check_privacy(
            LaplaceCountRelease(epsilon=1.0, n_ids=50, noise_factor=0.1), IDS, canary_X=[[45]]
        )
    res = check_privacy(
        LaplaceCountRelease(epsilon=1.0, n_ids=50, noise_factor=0.1),
        IDS,
        canary_X=[[45]],
        raise_on_failure=False,
    )
    assert res.consistent is False


@pytest.mark.parametrize("audit", ["one-run", "lira"])
def test_check_privacy_other_audits(audit):
    X = np.arange(1000).reshape(-1, 1)
    kw = {"n_shadow": 4, "n_targets": 1} if audit == "lira" else {}
    res = check_privacy(LaplaceCountRelease(epsilon=1.0, n_ids=1000), X, audit=audit, **kw)
    assert res.epsilon_lb <= 1.0
    with pytest.raises(ValueError, match="audit must be"):
        check_privacy(LaplaceCountRelease(), X, audit="nope")


def test_check_privacy_default_data_regressor():
    ok = check_privacy(_NoisySumRegressor(epsilon=1.0), n_trials=300)
    assert ok.epsilon_lb <= 1.0 and ok.epsilon_lb > 0.2
    with pytest.raises(AssertionError):
        check_privacy(_NoisySumRegressor(epsilon=1.0, noise_factor=0.05), n_trials=200)


def test_default_audit_data_respects_bounds():
    X, y, cX, cy = default_audit_data(
        _NoisySumRegressor(bounds_X=([0, -2, 5], [1, 2, 6]), bounds_y=(3.0, 4.0))
    )
    assert X.shape == (60, 3)
    assert np.all(X >= [0, -2, 5]) and np.all(X <= [1, 2, 6])
    assert np.all((y >= 3.0) & (y <= 4.0))
    np.testing.assert_array_equal(cX, [[1, 2, 6]])
    assert cy.tolist() == [3.0]
    with pytest.raises(ValueError, match="declares no numeric bounds"):
        default_audit_data(_Unbounded())
