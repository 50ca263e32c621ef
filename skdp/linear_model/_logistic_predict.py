"""The prediction methods of :class:`DPLogisticRegression` (post-processing of the
released ``coef_`` and ``intercept_``)."""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from skdp.utils._sklearn_compat import check_is_fitted, validate_data

__all__ = ["LogisticPredictMixin"]


class LogisticPredictMixin:
    """``decision_function``, ``predict_proba``, ``predict_log_proba`` and ``predict``."""

    def decision_function(self, X):
        """``X @ coef_.T + intercept_``: shape ``(n,)`` for two classes (the logit of
        ``classes_[1]``), ``(n, n_classes)`` otherwise."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        scores = X @ self.coef_.T + self.intercept_
        return scores[:, 0] if scores.shape[1] == 1 else scores

    def predict_proba(self, X):
        """Class probabilities: ``[1 - p, p]`` with ``p = sigmoid(decision)`` for two
        classes; the one-vs-rest sigmoids normalised to sum 1 otherwise."""
        scores = self.decision_function(X)
        if scores.ndim == 1:
            prob = expit(scores)
            return np.column_stack([1.0 - prob, prob])
        prob = expit(scores)
        total = prob.sum(axis=1, keepdims=True)
        return np.divide(prob, total, out=np.full_like(prob, 1.0 / prob.shape[1]), where=total > 0)

    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba`."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def predict(self, X):
        """The class with the largest decision value (binary: ``classes_[1]`` when it
        is positive)."""
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]
