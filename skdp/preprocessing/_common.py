"""Helpers shared by the preprocessing transformers (feature names, bounds, labels)."""

from __future__ import annotations

import numpy as np

from skdp.utils._sklearn_compat import StrOptions, check_is_fitted
from skdp.utils.validation import check_array, validate_data

__all__ = [
    "DOCS",
    "bounds_constraint",
    "column_labels",
    "feature_names_in_or_default",
    "fitted_float_input",
    "fitted_inverse_input",
    "like_input",
    "noisy_release",
]

#: docstring sections the transformers' methods share, for
#: ``@insert_docs(**DOCS)`` (:func:`skdp.utils._docstrings.insert_docs`)
DOCS = {
    "transform_param_X": """\
Parameters
----------
X : array-like or DataFrame of shape (n_samples, n_features)""",
    "transform_returns_like_input": """\
Returns
-------
ndarray or DataFrame of shape (n_samples, n_features)
    A DataFrame (same column names and index) when ``X`` is a DataFrame with
    string column names; an array otherwise, or what ``set_output`` asks for.""",
    "inverse_transform_io": """\
Parameters
----------
X : array-like of shape (n_samples, n_features)

Returns
-------
ndarray of shape (n_samples, n_features)""",
    "feature_names_io": """\
Parameters
----------
input_features : array-like of str, optional

Returns
-------
ndarray of str""",
}
#: ``transform``'s Parameters and Returns together (a transformer that keeps the input's
#: container)
DOCS["transform_io"] = DOCS["transform_param_X"] + "\n\n" + DOCS["transform_returns_like_input"]


def like_input(estimator, X, out):
    """``out`` in the container of ``X``: a DataFrame (columns from
    ``estimator.get_feature_names_out()``, the index of ``X``) when ``X`` is a pandas
    DataFrame with string column names (the estimator has ``feature_names_in_``), else
    ``out`` unchanged.

    This is how skdp's transformers keep feature names through a pipeline without
    ``set_output``: a DataFrame in gives a DataFrame out, so a later step can take
    metadata by column name (``PublicBoundsScaler(bounds={...})`` after
    ``DPSimpleImputer``); an array in gives an array out, as in scikit-learn.
    ``set_output(transform="pandas" | "polars" | "default")`` still applies on top.
    Object columns that hold only numbers become numeric columns.
    """
    if getattr(estimator, "feature_names_in_", None) is None or not (
        hasattr(X, "columns") and hasattr(X, "index") and hasattr(X, "iloc")
    ):
        return out
    import pandas as pd

    frame = pd.DataFrame(out, columns=list(estimator.get_feature_names_out()), index=X.index)
    return frame.infer_objects() if any(dt.kind == "O" for dt in frame.dtypes) else frame


def bounds_constraint(private=False):
    """``_parameter_constraints`` entry of a ``bounds`` parameter (``private=True``: it
    also takes ``"private"``, the opt-in to a private estimate that may be unreliable)."""
    return [
        None,
        StrOptions({"data", "private"} if private else {"data"}),
        tuple,
        list,
        np.ndarray,
        dict,
    ]


def column_labels(estimator, n_features):
    """Column names for messages and dict metadata: ``feature_names_in_`` or positions."""
    names = getattr(estimator, "feature_names_in_", None)
    if names is not None:
        return list(names)
    return list(range(n_features))


def feature_names_in_or_default(estimator, input_features=None):
    """Input feature names, checked like scikit-learn's ``get_feature_names_out``.

    ``input_features=None`` gives ``feature_names_in_`` when the estimator was fitted on
    a DataFrame with string column names, else ``x0, x1, ...``. A given
    ``input_features`` must have ``n_features_in_`` entries and, when the estimator saw
    names, equal them.
    """
    n = estimator.n_features_in_
    seen = getattr(estimator, "feature_names_in_", None)
    if input_features is None:
        if seen is not None:
            return np.asarray(seen, dtype=object)
        return np.asarray([f"x{i}" for i in range(n)], dtype=object)
    input_features = np.asarray(input_features, dtype=object)
    if seen is not None and not np.array_equal(seen, input_features):
        raise ValueError("input_features is not equal to feature_names_in_")
    if len(input_features) != n:
        raise ValueError(
            f"input_features should have length equal to number of features "
            f"({n}), got {len(input_features)}"
        )
    return input_features


def noisy_release(add, value, sensitivity, epsilon, rng, secure_mode):
    """``add(value, ...)`` (:func:`~skdp.mechanisms.add_laplace` or
    :func:`~skdp.mechanisms.add_geometric`) with a plan's sensitivity and budget, as
    a float array."""
    released = add(
        value, sensitivity=sensitivity, epsilon=epsilon, rng=rng, secure_mode=secure_mode
    )
    return np.asarray(released, dtype=float)


def fitted_float_input(estimator, X):
    """``X`` of a fitted transformer's ``transform``, validated as float64 against the
    fitted width and feature names (``NotFittedError`` before ``fit``)."""
    check_is_fitted(estimator)
    return validate_data(estimator, X, dtype=np.float64, reset=False)


def fitted_inverse_input(estimator, X, *, copy=False):
    """``X`` of a fitted transformer's ``inverse_transform``: float64 with
    ``n_features_in_`` columns (``NotFittedError`` before ``fit``; ``copy=True`` for a
    caller that writes into it)."""
    check_is_fitted(estimator)
    X = check_array(X, dtype=np.float64, copy=copy)
    if X.shape[1] != estimator.n_features_in_:
        raise ValueError(
            f"X has {X.shape[1]} features, but {type(estimator).__name__} is expecting "
            f"{estimator.n_features_in_} features as input"
        )
    return X
