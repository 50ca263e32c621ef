"""The one module that imports private or version-dependent scikit-learn names.

Everything else in skdp imports these names from here, so a scikit-learn upgrade that
moves them is fixed in one place.
"""

from __future__ import annotations

from sklearn.base import _fit_context  # noqa: F401
from sklearn.utils._param_validation import (  # noqa: F401
    HasMethods,
    Hidden,
    Interval,
    Options,
    StrOptions,
    validate_params,
)
from sklearn.utils.validation import check_is_fitted  # noqa: F401

try:  # scikit-learn >= 1.6
    from sklearn.utils.validation import validate_data as sklearn_validate_data
except ImportError:  # pragma: no cover - older scikit-learn

    def sklearn_validate_data(estimator, X="no_validation", y="no_validation", reset=True, **kw):
        return estimator._validate_data(X, y, reset=reset, **kw)


# What estimators import as ``validate_data``: scikit-learn's, with error messages that
# carry no data value (issue 15 item 8; see skdp.utils.validation).
from skdp.utils.validation import validate_data  # noqa: E402

__all__ = [
    "HasMethods",
    "Hidden",
    "Interval",
    "Options",
    "StrOptions",
    "_fit_context",
    "check_is_fitted",
    "sklearn_validate_data",
    "validate_data",
    "validate_params",
]
