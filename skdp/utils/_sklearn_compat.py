"""The one module that imports private or version-dependent scikit-learn names.

Everything else in skdp imports these names from here, so a scikit-learn upgrade that
moves them is fixed in one place. It sits above :mod:`skdp.utils.validation` and nothing
in ``skdp.utils`` imports it, so the two cannot form an import cycle (the layering test
checks it). scikit-learn's ``validate_data`` (public since 1.6, the oldest version skdp
supports) is imported where it is wrapped, :mod:`skdp.utils._data_free`.
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

# Kept for the estimator modules that still import ``validate_data`` from here: skdp's
# (scikit-learn's, with error messages that carry no data value). New code imports it
# from skdp.utils.validation; once every estimator does, this line goes and the shim
# imports nothing from skdp.
from skdp.utils.validation import validate_data

__all__ = [
    "HasMethods",
    "Hidden",
    "Interval",
    "Options",
    "StrOptions",
    "_fit_context",
    "check_is_fitted",
    "validate_data",
    "validate_params",
]
