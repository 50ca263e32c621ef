import math

import numpy as np
import pytest
from sklearn.base import BaseEstimator, RegressorMixin, clone

from skdp.base import DPEstimatorMixin


class _Toy(DPEstimatorMixin, RegressorMixin, BaseEstimator):
    _parameter_constraints = {**DPEstimatorMixin._privacy_parameter_constraints}

    def __init__(self, *, epsilon=1.0, delta=0.0):
        self.epsilon = epsilon
        self.delta = delta

    def fit(self, X, y):
        self._validate_params()
        self._check_privacy_params(n_samples=len(X))
        self.mean_ = 0.0
        return self._record_privacy_spent(self.epsilon, self.delta)

    def predict(self, X):
        return np.zeros(len(X))


def test_constraints_accept_inf_and_reject_bad():
    X, y = np.zeros((4, 1)), np.zeros(4)
    assert _Toy(epsilon=math.inf).fit(X, y).epsilon_spent_ == math.inf
    with pytest.raises(ValueError):
        _Toy(epsilon=0.0).fit(X, y)
    with pytest.raises(ValueError):
        _Toy(delta=1.0).fit(X, y)


def test_record_privacy_spent_and_clone():
    est = _Toy(epsilon=2.0, delta=1e-6).fit(np.zeros((4, 1)), np.zeros(4))
    assert (est.epsilon_spent_, est.delta_spent_, est.privacy_guarantee_) == (2.0, 1e-6, "exact")
    assert not hasattr(clone(est), "epsilon_spent_")
    with pytest.raises(ValueError):
        est._record_privacy_spent(1.0, guarantee="maybe")
