"""Validation of privacy parameters, public bounds and data.

The rules (ARCHITECTURE.md, spec README §2 rows 8 and 19):

* ``epsilon`` > 0 (``inf`` means non-private), ``0 <= delta < 1``.
* Bounds are public metadata: ``(lo, hi)`` scalars, per-feature arrays, a dict
  ``{column: (lo, hi)}`` (tabular data), ``None`` (a *private* estimate is made by the
  estimator, see :func:`skdp.mechanisms.resolve_bounds`) or ``"data"`` (explicit
  opt-in to reading them off the data; emits :class:`~skdp.exceptions.PrivacyLeakWarning`).
* Values outside declared bounds are clipped silently (a "some values were clipped"
  warning would leak a data fact into shared logs); with ``clip=False`` they raise a
  ``ValueError`` naming the column, never the value.
* NaN and inf always raise ``ValueError``.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from numbers import Real

import numpy as np

from skdp.exceptions import DeltaTooLargeWarning, PrivacyLeakWarning

__all__ = [
    "check_bounds",
    "check_finite",
    "check_privacy_params",
    "clip_rows_to_norm",
    "clip_to_bounds",
    "data_bounds",
]


def check_privacy_params(epsilon, delta=0.0, *, n_samples=None, require_delta=False):
    """Validate ``epsilon`` and ``delta``; return them as floats.

    Parameters
    ----------
    epsilon : float
        Total privacy loss, > 0. ``math.inf`` disables privacy.
    delta : float, default=0.0
        Failure probability in [0, 1).
    n_samples : int, optional
        When given and ``delta >= 1 / n_samples`` a
        :class:`~skdp.exceptions.DeltaTooLargeWarning` is emitted (the guarantee then
        allows releasing a whole record). Note that ``n_samples`` is treated as public.
    require_delta : bool, default=False
        Whether the mechanism needs ``delta > 0`` (Gaussian noise, RDP accounting).

    Raises
    ------
    ValueError
        On a non-positive or NaN ``epsilon``, or a ``delta`` outside [0, 1).

    Examples
    --------
    >>> from skdp.utils.validation import check_privacy_params
    >>> check_privacy_params(1.0, 1e-5)
    (1.0, 1e-05)
    """
    if isinstance(epsilon, bool) or not isinstance(epsilon, (Real, np.floating, np.integer)):
        raise TypeError(f"epsilon must be a real number, got {type(epsilon).__name__}")
    if isinstance(delta, bool) or not isinstance(delta, (Real, np.floating, np.integer)):
        raise TypeError(f"delta must be a real number, got {type(delta).__name__}")
    epsilon, delta = float(epsilon), float(delta)
    if math.isnan(epsilon) or epsilon <= 0:
        raise ValueError(f"epsilon must be > 0 (use math.inf for no privacy), got {epsilon}")
    if math.isnan(delta) or not 0.0 <= delta < 1.0:
        raise ValueError(f"delta must be in [0, 1), got {delta}")
    if require_delta and delta == 0.0 and math.isfinite(epsilon):
        raise ValueError("this mechanism needs delta > 0 (approximate DP); got delta=0")
    if n_samples is not None and n_samples > 0 and delta >= 1.0 / n_samples:
        warnings.warn(
            f"delta={delta:g} is at least 1/n_samples; such a guarantee allows releasing "
            "an individual's record. Use delta well below 1/n.",
            DeltaTooLargeWarning,
            stacklevel=3,
        )
    return epsilon, delta


def check_finite(X, *, name="X"):
    """Raise ``ValueError`` if ``X`` holds NaN or inf (naming the column, not the value)."""
    X = np.asarray(X)
    if X.dtype.kind in "fc":
        bad = ~np.isfinite(X)
        if bad.any():
            cols = np.unique(np.nonzero(bad.reshape(bad.shape[0], -1))[1]) if X.ndim > 1 else []
            where = f" in column(s) {list(map(int, cols))}" if len(cols) else ""
            raise ValueError(f"{name} contains NaN or infinity{where}")
    return X


def _column_label(j, columns):
    return repr(columns[j]) if columns is not None else str(j)


def check_bounds(bounds, n_features, *, name="bounds", columns=None):
    """Turn user bounds into two float arrays ``(lo, hi)`` of shape ``(n_features,)``.

    Parameters
    ----------
    bounds : tuple (lo, hi) of scalars or array-likes, or dict {column: (lo, hi)}
        Public bounds. A dict needs ``columns`` (the names, in order) and an entry for
        every column.
    n_features : int
    name : str
        Parameter name used in error messages.
    columns : sequence, optional
        Column names for dict bounds and error messages.

    Returns
    -------
    lo, hi : ndarray of shape (n_features,)

    Raises
    ------
    ValueError
        If the bounds are malformed, non-finite, or ``lo >= hi`` for some column.

    Examples
    --------
    >>> from skdp.utils.validation import check_bounds
    >>> check_bounds((0, 1), 2)
    (array([0., 0.]), array([1., 1.]))
    """
    if isinstance(bounds, str):
        raise ValueError(f"{name}={bounds!r} must be resolved by the estimator first")
    if isinstance(bounds, Mapping):
        if columns is None:
            raise ValueError(f"{name} given as a dict needs named columns (a DataFrame)")
        missing = [c for c in columns if c not in bounds]
        if missing:
            raise ValueError(f"{name} has no entry for column(s) {missing}")
        unknown = [c for c in bounds if c not in set(columns)]
        if unknown:
            raise ValueError(f"{name} names unknown column(s) {unknown}")
        pairs = [bounds[c] for c in columns]
        try:
            lo = np.array([float(p[0]) for p in pairs])
            hi = np.array([float(p[1]) for p in pairs])
        except (TypeError, IndexError, ValueError):
            raise ValueError(f"every value of {name} must be a (low, high) pair") from None
    else:
        if not isinstance(bounds, Sequence | np.ndarray) or len(bounds) != 2:
            raise ValueError(f"{name} must be a (low, high) pair, got {bounds!r}")
        try:
            lo = np.broadcast_to(np.asarray(bounds[0], dtype=float), (n_features,)).copy()
            hi = np.broadcast_to(np.asarray(bounds[1], dtype=float), (n_features,)).copy()
        except ValueError:
            raise ValueError(
                f"{name} must hold scalars or arrays of length n_features={n_features}"
            ) from None
    if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))):
        raise ValueError(f"{name} must be finite")
    bad = np.nonzero(lo >= hi)[0]
    if bad.size:
        labels = [_column_label(j, columns) for j in bad]
        raise ValueError(f"{name}: low must be < high for column(s) {', '.join(labels)}")
    return lo, hi


def data_bounds(X, *, name="bounds"):
    """Bounds read off the data: the explicit, non-private ``bounds="data"`` opt-in.

    Emits :class:`~skdp.exceptions.PrivacyLeakWarning`: the minimum and maximum of
    private data are not differentially private.
    """
    warnings.warn(
        f'{name}="data" reads the bounds off the private data without noise; the result '
        "carries no differential-privacy guarantee for them. Pass public bounds, or "
        f"{name}=None for a private estimate.",
        PrivacyLeakWarning,
        stacklevel=3,
    )
    X = np.asarray(X, dtype=float)
    lo, hi = X.min(axis=0), X.max(axis=0)
    same = lo >= hi
    hi = np.where(same, lo + 1.0, hi)
    return lo, hi


def clip_to_bounds(X, lo, hi, *, clip=True, name="X", columns=None):
    """Clip ``X`` (n, d) column-wise to ``[lo, hi]``, or raise if ``clip=False``.

    Clipping is silent on purpose (a warning would reveal that some record lies
    outside the bounds). The error names the column, never the value.
    """
    X = np.asarray(X, dtype=float)
    if not clip:
        out = (X < lo) | (X > hi)
        if out.any():
            cols = np.unique(np.nonzero(out.reshape(X.shape[0], -1))[1])
            labels = ", ".join(_column_label(int(j), columns) for j in cols)
            raise ValueError(
                f"{name} has values outside the declared bounds in column(s) {labels}; "
                "pass clip=True to clip them"
            )
        return X
    return np.clip(X, lo, hi)


def clip_rows_to_norm(X, max_norm):
    """Scale each row of ``X`` so its L2 norm is at most ``max_norm``."""
    X = np.asarray(X, dtype=float)
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    scale = np.minimum(1.0, max_norm / np.maximum(norms, np.finfo(float).tiny))
    return X * scale
