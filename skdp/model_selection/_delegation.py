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

    @available_if(_search_estimator_has("predict"))
    def predict(self, X):
        """Predict with ``best_estimator_`` (post-processing: spends nothing)."""
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.predict(X)

    @available_if(_search_estimator_has("predict_proba"))
    def predict_proba(self, X):
        """``best_estimator_.predict_proba`` (post-processing: spends nothing)."""
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.predict_proba(X)

    @available_if(_search_estimator_has("decision_function"))
    def decision_function(self, X):
        """``best_estimator_.decision_function`` (post-processing: spends nothing)."""
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.decision_function(X)

    @available_if(_search_estimator_has("transform"))
    def transform(self, X):
        """``best_estimator_.transform`` (post-processing: spends nothing)."""
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.transform(X)
