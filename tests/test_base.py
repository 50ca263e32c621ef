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


class _Parts(DPEstimatorMixin, BaseEstimator):
    """Two charged parts, or none (``parts=False``); ``classes='data'`` is an opt-in."""

    _parameter_constraints = {
        **DPEstimatorMixin._privacy_parameter_constraints,
        "parts": ["boolean"],
        "classes": [None, str, list],
    }

    def __init__(self, *, epsilon=1.0, parts=True, classes=None):
        self.epsilon = epsilon
        self.parts = parts
        self.classes = classes

    def fit(self, X, y=None):
        if self.parts:
            self.privacy_breakdown_ = {"a": self.epsilon / 4, "b": 3 * self.epsilon / 4}
        return self._record_privacy_spent(self.epsilon)


def test_privacy_breakdown_is_a_float_dict_adding_up_to_the_spend():
    X = np.zeros((4, 1))
    est = _Parts(epsilon=2.0).fit(X)
    assert est.privacy_breakdown_ == {"a": 0.5, "b": 1.5}
    assert all(type(v) is float for v in est.privacy_breakdown_.values())
    # an estimator without parts of its own: one part, recomputed on every fit
    one = _Parts(epsilon=2.0, parts=False).fit(X)
    assert one.privacy_breakdown_ == {"fit": 2.0}
    assert one.set_params(epsilon=0.5).fit(X).privacy_breakdown_ == {"fit": 0.5}
    # a non-private opt-in: an infinite part, so the parts add up to epsilon_spent_ = inf
    leaky = _Parts(epsilon=2.0, classes="data").fit(X)
    assert leaky.epsilon_spent_ == math.inf and leaky.privacy_guarantee_ == "none"
    assert leaky.privacy_breakdown_ == {"a": 0.5, "b": 1.5, "nonprivate": math.inf}
    # an explicit breakdown wins
    est._record_privacy_spent(1.0, breakdown={"x": 1})
    assert est.privacy_breakdown_ == {"x": 1.0}


def test_common_constraints_are_shared_and_named():
    c = DPEstimatorMixin._common_constraints("device", "random_state")
    assert set(c) == {"device", "random_state"}
    assert c["device"][0].is_satisfied_by("cuda:3") and not c["device"][0].is_satisfied_by("x")
    assert c["random_state"][1:] == [np.random.Generator, np.random.SeedSequence]
    with pytest.raises(ValueError, match="no shared constraint"):
        DPEstimatorMixin._common_constraints("device", "learning_rate")
