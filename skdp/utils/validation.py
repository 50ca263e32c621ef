"""Validation of privacy parameters, public bounds and data.

The rules (:doc:`privacy_guarantees`, "Metadata"):

* ``epsilon`` > 0 (``inf`` means non-private), ``0 <= delta < 1``.
* Bounds are public metadata, finite, within ``+-1e150`` and at least ``1e-150`` wide
  (:func:`check_width`): ``(lo, hi)`` scalars, per-feature arrays, a dict
  ``{column: (lo, hi)}`` (tabular data), ``None`` (a *private* estimate is made by the
  estimator where public ``n``, ``d`` and ``epsilon`` make it reliable, refused
  otherwise; ``"private"`` opts in to it regardless, see
  :func:`skdp.mechanisms.resolve_bounds`) or ``"data"`` (explicit
  opt-in to reading them off the data; emits :class:`~skdp.exceptions.PrivacyLeakWarning`).
* Values outside declared bounds are clipped silently (a "some values were clipped"
  warning would leak a data fact into shared logs); with ``clip=False`` they raise a
  ``ValueError`` naming the column, never the value.
* NaN and inf always raise ``ValueError``; dates and durations (``datetime64``,
  ``timedelta64``, tz-aware pandas dates) raise ``TypeError`` naming the column
  (:func:`check_no_datetime`): numpy would read them as nanosecond counts.
* No error message carries a data value (it would reach shared logs): scikit-learn's and numpy's
  conversion errors print the offending array or cell ("Expected 2D array ...
  array=[...]", "could not convert string to float: '<cell>'", "Complex data not
  supported [[...]]"). :func:`validate_data`, :func:`check_array` and
  :func:`column_or_1d` re-raise them with a message that names the input (and the
  column where it can be found) and says what to fix, and chain nothing (the original
  exception, whose message holds the data, is neither ``__cause__`` nor
  ``__context__``). Messages that scikit-learn's common checks match on keep their
  wording ("Expected 2D array", "Reshape your data", "could not convert",
  "Complex data not supported", "argument must be a string or a real number", ...).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from numbers import Real

import numpy as np

from skdp.exceptions import DeltaTooLargeWarning, PrivacyLeakWarning
from skdp.utils._data_free import (
    as_float_array,
    check_array,
    check_no_datetime,
    column_or_1d,
    validate_data,
)

__all__ = [
    "as_float_array",
    "check_array",
    "check_bounds",
    "check_clip_bounds_declared",
    "check_finite",
    "check_finite_release",
    "check_width",
    "check_n_samples",
    "check_no_datetime",
    "check_privacy_params",
    "check_no_fit_params",
    "clip_rows_to_norm",
    "clip_to_bounds",
    "column_or_1d",
    "data_bounds",
    "validate_data",
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
    if epsilon < np.finfo(np.float64).tiny:  # 1 / epsilon overflows: noise scales are inf
        raise ValueError(f"epsilon must be at least {np.finfo(np.float64).tiny:g}, got {epsilon}")
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


# the largest declared bound: products and squares of bounds (sensitivities, widths,
# Gram matrices) stay finite in float64
MAX_ABS_BOUND = 1e150

# the narrowest declared bounds: the scale 1 / width of a narrower interval, squared
# (a rescaled Gram matrix, a Hessian), overflows float64; a subnormal width (0, 5e-324)
# gave NaN models and samples
MIN_BOUND_WIDTH = 1e-150

# the largest output a ``sample``/noise call builds (elements): 2**31 float64 is 16 GiB
MAX_OUTPUT_ELEMENTS = 2**31


def check_n_samples(n_samples, n_columns=1, *, name="n_samples"):
    """Validate a requested number of output rows; return it as an int.

    Refuses a bool, a non-integer, a negative count, and a request whose output
    (``n_samples * n_columns`` values) is larger than :data:`MAX_OUTPUT_ELEMENTS`, with a
    ``ValueError`` that names ``name`` (instead of a ``MemoryError`` from numpy).

    Examples
    --------
    >>> from skdp.utils.validation import check_n_samples
    >>> check_n_samples(5, 3)
    5
    """
    if isinstance(n_samples, bool) or not isinstance(n_samples, (int, np.integer)):
        raise ValueError(f"{name} must be a non-negative integer, got {type(n_samples).__name__}")
    n = int(n_samples)
    if n < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {n}")
    if n * max(int(n_columns), 1) > MAX_OUTPUT_ELEMENTS:
        raise ValueError(
            f"{name}={n} asks for more than {MAX_OUTPUT_ELEMENTS} output values; "
            "request fewer (e.g. in chunks)"
        )
    return n


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
        If the bounds are malformed, non-finite, outside ``+-MAX_ABS_BOUND``, or
        ``lo >= hi`` for some column, or a width ``hi - lo`` is not finite or below
        :data:`MIN_BOUND_WIDTH` (:func:`check_width`).

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
    huge = np.nonzero(np.maximum(np.abs(lo), np.abs(hi)) > MAX_ABS_BOUND)[0]
    if huge.size:
        labels = [_column_label(j, columns) for j in huge]
        raise ValueError(
            f"{name} must lie within +-{MAX_ABS_BOUND:g} (squares of larger bounds overflow the "
            f"sensitivity) for column(s) {', '.join(labels)}; rescale the data"
        )
    bad = np.nonzero(lo >= hi)[0]
    if bad.size:
        labels = [_column_label(j, columns) for j in bad]
        raise ValueError(f"{name}: low must be < high for column(s) {', '.join(labels)}")
    check_width(lo, hi, name=name, columns=columns)
    return lo, hi


def check_width(lo, hi, *, name="bounds", columns=None):
    """Refuse intervals ``[lo, hi]`` whose width is not finite or below
    :data:`MIN_BOUND_WIDTH`.

    A width that overflows (``(-1e308, 1e308)``) or underflows (``(0, 5e-324)``, a
    subnormal) makes every rescaling ``(x - lo) / (hi - lo)`` infinite or NaN, and with
    it the model or the samples. The error names ``name`` and the column(s), never a
    value (bounds are public, but a message is kept to one form).

    Parameters
    ----------
    lo, hi : float or array-like of float
        Lower and upper ends (``lo < hi``).
    name : str, default="bounds"
        Parameter name used in the message.
    columns : sequence, optional
        Column names for the message.

    Returns
    -------
    width : ndarray of float
        ``hi - lo``.

    Examples
    --------
    >>> from skdp.utils.validation import check_width
    >>> check_width(0.0, 2.0)
    array([2.])
    >>> try:
    ...     check_width(0.0, 5e-324, name="bounds_X")
    ... except ValueError as exc:
    ...     print(str(exc).split(";")[0])
    bounds_X: the width high - low must be finite and at least 1e-150 for column(s) 0
    """
    lo = np.atleast_1d(np.asarray(lo, dtype=float))
    hi = np.atleast_1d(np.asarray(hi, dtype=float))
    with np.errstate(over="ignore", invalid="ignore"):
        width = hi - lo
    bad = np.nonzero(~(np.isfinite(width) & (width >= MIN_BOUND_WIDTH)))[0]
    if bad.size:
        labels = [_column_label(int(j), columns) for j in bad]
        raise ValueError(
            f"{name}: the width high - low must be finite and at least {MIN_BOUND_WIDTH:g} "
            f"for column(s) {', '.join(labels)}; rescale the data (a narrower or wider "
            "interval makes the rescaled values overflow)"
        )
    return width


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


def check_clip_bounds_declared(clip, **bounds):
    """Refuse ``clip=False`` unless every named bound is declared (not ``None`` nor
    ``"private"``).

    With ``clip=False`` a value outside the bounds raises. Against a *private estimate*
    of the bounds (``None`` or the opt-in ``"private"``) that error would be an
    un-noised function of the data (it fires exactly when some record lies beyond the
    noisy estimate), so it is refused before any record is read.

    Examples
    --------
    >>> from skdp.utils.validation import check_clip_bounds_declared
    >>> check_clip_bounds_declared(False, bounds_X=(0.0, 1.0))
    >>> check_clip_bounds_declared(False, bounds_X=None)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: clip=False needs declared bounds_X ...
    """
    if clip:
        return
    missing = [
        name
        for name, value in bounds.items()
        if value is None or (isinstance(value, str) and value == "private")
    ]
    if missing:
        raise ValueError(
            f"clip=False needs declared {', '.join(missing)} (a private estimate would make "
            "the refusal depend on the data); declare them or pass clip=True"
        )


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


def check_magnitude(X, *, dtype="float64", name="X"):
    """Refuse values whose squares (products in a Hessian, ``x x^T``) overflow ``dtype``.

    Finite but enormous features (``1e308``, or ``1e30`` in float32) give inf/NaN losses
    and a ``LinAlgError`` deep inside a solver; this says which input to rescale instead.
    """
    X = np.asarray(X, dtype=float)
    if X.size == 0:
        return X
    try:
        dt = np.dtype(dtype)
    except TypeError:  # "auto" or a torch name: float32 is the device default
        dt = np.dtype(np.float32)
    if dt.kind != "f":
        dt = np.dtype(np.float32)
    limit = math.sqrt(float(np.finfo(dt).max)) / (X.shape[-1] + 1 if X.ndim else 1)
    if float(np.max(np.abs(X))) > limit:
        raise ValueError(
            f"{name} has values too large to square in {dt.name} "
            f"(above {limit:.3g} in absolute value); rescale the features"
        )
    return X


def check_finite_release(values, *, what, fix):
    """Refuse a released (noisy) output that is NaN or infinite.

    An overflow in a release (a noise scale or a rescaling beyond float64) would
    otherwise give a NaN/inf model or sample silently. The check reads only the released
    values, so refusing is post-processing of the release (no further privacy cost);
    the message names ``what`` and says what to change, never a value.

    Parameters
    ----------
    values : array-like or sequence of array-likes
        The release (e.g. ``coef_`` and ``intercept_``).
    what : str
        What the values are, for the message (``"the fitted coefficients"``).
    fix : str
        What to change (``"use a larger epsilon or narrower bounds"``).

    Raises
    ------
    ValueError
        If any value is NaN or infinite.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.utils.validation import check_finite_release
    >>> check_finite_release([np.ones(2), 0.5], what="the coefficients", fix="rescale")
    >>> try:
    ...     check_finite_release(np.array([np.inf]), what="the coefficients", fix="rescale")
    ... except ValueError as exc:
    ...     print(exc)
    the coefficients are not finite (a computation overflowed float64); rescale
    """
    parts = values if isinstance(values, list | tuple) else [values]
    for part in parts:
        arr = np.asarray(part)
        if arr.dtype.kind in "fc" and not np.all(np.isfinite(arr)):
            raise ValueError(f"{what} are not finite (a computation overflowed float64); {fix}")


def clip_rows_to_norm(X, max_norm):
    """Scale each row of ``X`` so its L2 norm is at most ``max_norm``."""
    X = np.asarray(X, dtype=float)
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    scale = np.minimum(1.0, max_norm / np.maximum(norms, np.finfo(float).tiny))
    return X * scale


def check_no_fit_params(fit_params, estimator_name, what):
    """Refuse ``sample_weight`` (it changes ``what``'s sensitivity) and unknown fit params.

    ``sample_weight=None`` is accepted, as scikit-learn's meta-estimators pass it.

    Examples
    --------
    >>> from skdp.utils.validation import check_no_fit_params
    >>> check_no_fit_params({"sample_weight": None}, "Est", "the released statistic")
    >>> try:
    ...     check_no_fit_params({"sample_weight": [1.0]}, "Est", "the statistic")
    ... except ValueError as exc:
    ...     print(str(exc).split(":")[0])
    Est does not support sample_weight
    """
    if fit_params.get("sample_weight") is not None:
        raise ValueError(
            f"{estimator_name} does not support sample_weight: weights change the "
            f"sensitivity of {what}, so the privacy guarantee would not hold."
        )
    unknown = set(fit_params) - {"sample_weight"}
    if unknown:
        raise TypeError(f"fit() got unexpected keyword argument(s) {sorted(unknown)}")
