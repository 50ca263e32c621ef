"""Methods of a fitted search that delegate to ``best_estimator_`` (post-processing)."""

from __future__ import annotations

from sklearn.utils.metaestimators import available_if

from skdp.utils._sklearn_compat import check_is_fitted

__all__ = ["BestEstimatorMixin"]


def _search_estimator_has(attr):
    def check(self):
        est = self.best_estimator_ if hasattr(self, "best_estimator_") else self.estimator
        getattr(est, attr)
        return True

    return check


def _delegated(name, summary=None):
    """The method ``name(X)`` of a fitted search: ``best_estimator_``'s, available when
    the (best) estimator has it."""

    def method(self, X):
        check_is_fitted(self, "best_estimator_")
        return getattr(self.best_estimator_, name)(X)

    method.__name__ = name
    method.__qualname__ = f"BestEstimatorMixin.{name}"
    summary = summary or f"``best_estimator_.{name}``"
    method.__doc__ = f"{summary} (post-processing: spends nothing)."
    return available_if(_search_estimator_has(name))(method)


class BestEstimatorMixin:
    """``classes_``, ``n_features_in_``, ``predict``, ... of ``best_estimator_``."""

    @property
    def classes_(self):
        """Class labels of ``best_estimator_``."""
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.classes_

    @property
    def n_features_in_(self):
        """Number of features seen by ``best_estimator_``."""
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.n_features_in_

    predict = _delegated("predict", "Predict with ``best_estimator_``")
    predict_proba = _delegated("predict_proba")
    decision_function = _delegated("decision_function")
    transform = _delegated("transform")
