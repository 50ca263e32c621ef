"""Validation of privacy parameters, public bounds and data.

The rules (:doc:`privacy_guarantees`, "Metadata"):

* ``epsilon`` > 0 (``inf`` means non-private), ``0 <= delta < 1``.
* Bounds are public metadata: ``(lo, hi)`` scalars, per-feature arrays, a dict
  ``{column: (lo, hi)}`` (tabular data), ``None`` (a *private* estimate is made by the
  estimator, see :func:`skdp.mechanisms.resolve_bounds`) or ``"data"`` (explicit
  opt-in to reading them off the data; emits :class:`~skdp.exceptions.PrivacyLeakWarning`).
* Values outside declared bounds are clipped silently (a "some values were clipped"
  warning would leak a data fact into shared logs); with ``clip=False`` they raise a
  ``ValueError`` naming the column, never the value.
* NaN and inf always raise ``ValueError``.
* No error message carries a data value (issue 15 item 8): scikit-learn's and numpy's
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

import inspect
import math
import re
import warnings
from collections.abc import Mapping, Sequence
from numbers import Real

import numpy as np

from skdp.exceptions import DeltaTooLargeWarning, PrivacyLeakWarning

__all__ = [
    "check_array",
    "check_bounds",
    "check_finite",
    "check_n_samples",
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


def clip_rows_to_norm(X, max_norm):
    """Scale each row of ``X`` so its L2 norm is at most ``max_norm``."""
    X = np.asarray(X, dtype=float)
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    scale = np.minimum(1.0, max_norm / np.maximum(norms, np.finfo(float).tiny))
    return X * scale


# --------------------------------------------------------------------------------------
# Error messages without data values (issue 15 item 8)
# --------------------------------------------------------------------------------------

#: Messages of scikit-learn / numpy that state facts about shape, dtype or the presence
#: of NaN (never a value): passed through unchanged. Anchored at the start.
_SAFE_MESSAGES = re.compile(
    r"^(?:"
    r"Input (?:\w+ )?contains (?:NaN|infinity)"
    r"|Found array with \d+ (?:sample|feature)\(s\)"
    r"|Found array with dim \d+"
    r"|Found input variables with inconsistent numbers of samples: \[[\d, ]*\]$"
    r"|X has \d+ features?, but \w+ is expecting \d+ features? as input"
    r"|The feature names should match those that were passed during fit"
    r"|Feature names are only supported if all input features have string names"
    r"|\w+ should be a 1d array, got an array of shape \([\d, ]*\) instead\.?$"
    r"|Negative values in data passed to"
    r"|Unknown label type: (?:binary|multiclass|continuous|continuous-multioutput"
    r"|multiclass-multioutput|multilabel-indicator|unknown)\. "
    r"|Mix type of y not allowed, got types \{[\w', -]*\}$"
    r"|dtype='numeric' is not compatible with arrays of bytes/strings"
    r"|(?:A sparse matrix|Sparse data) was passed"
    r"|Only sparse matrices with 32-bit integer indices are accepted"
    r"|(?:This |Estimator )?\w+ (?:estimator )?requires y to be passed, but the target y is None"
    r"|setting an array element with a sequence\."
    r")"
)

_ARRAY_FIX = (
    "Reshape your data either using array.reshape(-1, 1) if your data has a single feature "
    "or array.reshape(1, -1) if it contains a single sample."
)


def _column_that_fails(X, convert):
    """Label of the first column of a 2-D ``X`` for which ``convert`` raises, or ``None``.

    Column names are metadata (never values); nothing about the failing cell is kept.
    """
    try:
        if hasattr(X, "columns") and hasattr(X, "iloc"):
            for j, name in enumerate(X.columns):
                try:
                    convert(X.iloc[:, j])
                except Exception:  # noqa: BLE001 - any failure marks the column
                    return repr(name)
            return None
        A = np.asarray(X, dtype=object) if not hasattr(X, "dtype") else np.asarray(X)
        if A.ndim != 2:
            return None
        for j in range(A.shape[1]):
            try:
                convert(A[:, j])
            except Exception:  # noqa: BLE001
                return str(j)
    except Exception:  # noqa: BLE001 - locating the column is best effort only
        return None
    return None


def _to_float(col):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # ComplexWarning: complex -> float drops data
        arr = np.asarray(col)
        if arr.dtype.kind == "c":
            raise ValueError
        np.asarray(arr, dtype=np.float64)


def _is_complex(col):
    arr = np.asarray(col)
    if arr.dtype.kind == "c" or (
        arr.dtype.kind == "O" and any(isinstance(v, complex | np.complexfloating) for v in arr)
    ):
        raise ValueError


def _where(name, X, convert):
    col = _column_that_fails(X, convert) if X is not None else None
    return f"{name} (column {col})" if col is not None else name


def _data_free_message(exc, name, X=None):
    """A message for ``exc`` (raised while validating the input ``name``) that carries no
    data value: scikit-learn's wording where its common checks match on it, the input's
    name, the column where it can be located, and what to do."""
    msg = str(exc)
    if _SAFE_MESSAGES.match(msg):
        return msg
    if msg.startswith("Expected 2D array, got 1D array instead"):
        return f"Expected 2D array, got 1D array instead for {name} (values not shown). " + (
            _ARRAY_FIX
        )
    if msg.startswith("Expected 2D array, got scalar array instead"):
        return (
            f"Expected 2D array, got scalar array instead for {name} (value not shown). "
            + _ARRAY_FIX
        )
    if msg.startswith("Complex data not supported"):
        return (
            f"Complex data not supported: {_where(name, X, _is_complex)} holds complex "
            "numbers (values not shown); pass real numbers."
        )
    if "could not convert" in msg or "invalid literal" in msg:
        return (
            f"{_where(name, X, _to_float)}: could not convert a value to a number (the value "
            "is not shown). Encode non-numeric columns first, with categories that are "
            "public knowledge (a synthesizer takes a DataFrame with declared categories)."
        )
    if "argument must be a string or a" in msg and "number" in msg:
        m = re.search(r"not '([A-Za-z_][\w.]*)'$", msg)
        kind = f", not '{m.group(1)}'" if m else ""
        return (
            f"{_where(name, X, _to_float)} holds an element that is neither a string nor a "
            f"number: float() argument must be a string or a real number{kind} (the value is "
            "not shown)."
        )
    if msg.startswith("Unknown label type"):
        return (
            f"Unknown label type for {name} (values not shown): labels must be numbers or "
            "strings of one type."
        )
    if msg.startswith("Mix of label input types (string and number)"):
        return (
            f"Mix of label input types (string and number) in {name} (values not shown): "
            "use labels of one type."
        )
    return (
        f"{name} is not valid input ({type(exc).__name__}; the details are withheld because "
        f"they may contain data values). Check {name}'s shape, dtype and values."
    )


def _raise_data_free(exc, name, X=None):
    """Build the data-free replacement of ``exc``; the caller raises it *outside* its
    ``except`` block with ``from None`` so that nothing is chained."""
    plain_type_error = isinstance(exc, TypeError) and not isinstance(exc, ValueError)
    cls = TypeError if plain_type_error else ValueError
    return cls(_data_free_message(exc, name, X))


def _rewritable(exc):
    # Only plain ValueError/TypeError: subclasses (NotFittedError, InvalidParameterError,
    # ...) are raised by skdp or scikit-learn about parameters and state, not data.
    return type(exc) in (ValueError, TypeError)


def _x_fails(X, check_params):
    """Whether ``X`` alone fails scikit-learn's ``check_array`` with ``check_params``."""
    from sklearn.utils import check_array as _check_array

    allowed = inspect.signature(_check_array).parameters
    kw = {k: v for k, v in check_params.items() if k in allowed and k != "input_name"}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _check_array(X, **kw)
    except Exception:  # noqa: BLE001
        return True
    return False


def validate_data(estimator, X="no_validation", y="no_validation", reset=True, **check_params):
    """scikit-learn's ``validate_data``, with error messages that carry no data value.

    Same parameters and return value as :func:`sklearn.utils.validation.validate_data`
    (every skdp estimator uses it through :mod:`skdp.utils._sklearn_compat`). A
    ``ValueError``/``TypeError`` raised while validating is re-raised with a message that
    names the input (``X`` or ``y``, and the column where it can be located) and what to
    fix, never a cell or the array, and with nothing chained (``from None`` outside the
    ``except`` block: neither ``__cause__`` nor ``__context__`` holds the original).

    Parameters
    ----------
    estimator : estimator instance
        The estimator whose ``n_features_in_`` / ``feature_names_in_`` are set or checked.
    X : array-like or "no_validation", default="no_validation"
        Features.
    y : array-like, None or "no_validation", default="no_validation"
        Targets.
    reset : bool, default=True
        Whether to (re)set ``n_features_in_`` and ``feature_names_in_``.
    **check_params : dict
        Passed to scikit-learn's ``validate_data`` (``dtype``, ``y_numeric``, ...).

    Returns
    -------
    out : ndarray or tuple of ndarray
        As scikit-learn's ``validate_data``.

    Raises
    ------
    ValueError, TypeError
        As scikit-learn's, with the data values removed from the message. Subclasses
        (``NotFittedError``, ``InvalidParameterError``) pass through unchanged.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.base import BaseEstimator
    >>> from skdp.utils.validation import validate_data
    >>> try:
    ...     validate_data(BaseEstimator(), np.array([0.123, 4.56]))
    ... except ValueError as exc:
    ...     print(str(exc).split(".")[0])
    Expected 2D array, got 1D array instead for X (values not shown)
    """
    from skdp.utils._sklearn_compat import sklearn_validate_data

    try:
        out = sklearn_validate_data(estimator, X, y, reset=reset, **check_params)
    except (ValueError, TypeError) as exc:
        if not _rewritable(exc):
            raise
        no_x = isinstance(X, str) and X == "no_validation"
        no_y = y is None or (isinstance(y, str) and y == "no_validation")
        msg = str(exc)
        if no_x:
            name, where = "y", None
        elif no_y:
            name, where = "X", X
        elif re.match(r"^(Input y|y should)", msg) or "by y" in msg[:200]:
            name, where = "y", None
        elif msg.startswith("Expected 2D array") or _x_fails(X, check_params):
            name, where = "X", X
        else:
            name, where = "y", None
        err = _raise_data_free(exc, name, where)
    else:
        if check_params.get("y_numeric") and isinstance(out, tuple) and len(out) == 2:
            _check_numeric_y(out[1])
        return out
    raise err from None


def _check_numeric_y(y):
    """scikit-learn's ``y_numeric`` casts an object ``y`` to float *after* its finiteness
    check (a ``None`` becomes a NaN target, and a NaN model) and lets strings through."""
    y = np.asarray(y)
    if y.dtype.kind not in "biuf":
        raise ValueError("y must be numeric for a regressor (convert the targets to numbers)")
    if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
        raise ValueError(
            "y contains NaN, inf or missing values (None); drop or impute those rows first"
        )


def check_array(array, *, input_name="X", **check_params):
    """scikit-learn's ``check_array`` with error messages that carry no data value.

    Parameters
    ----------
    array : object
        Input to check.
    input_name : str, default="X"
        Name used in messages (``"X"``, ``"y"``, ``"sample_weight"``, ...).
    **check_params : dict
        Passed to :func:`sklearn.utils.check_array`.

    Returns
    -------
    ndarray

    Raises
    ------
    ValueError, TypeError
        As scikit-learn's, with the data values removed from the message and nothing
        chained.
    """
    from sklearn.utils import check_array as _check_array

    try:
        return _check_array(array, input_name=input_name, **check_params)
    except (ValueError, TypeError) as exc:
        if not _rewritable(exc):
            raise
        err = _raise_data_free(exc, input_name, array)
    raise err from None


def column_or_1d(y, *, input_name="y", dtype=None, warn=False):
    """scikit-learn's ``column_or_1d`` with error messages that carry no data value.

    Parameters
    ----------
    y : array-like
        Input, of shape (n_samples,) or (n_samples, 1).
    input_name : str, default="y"
        Name used in messages (``"y_true"``, ``"y_score"``, ...).
    dtype : data-type, default=None
        Passed to :func:`sklearn.utils.column_or_1d`.
    warn : bool, default=False
        Passed to :func:`sklearn.utils.column_or_1d`.

    Returns
    -------
    ndarray of shape (n_samples,)

    Examples
    --------
    >>> from skdp.utils.validation import column_or_1d
    >>> try:
    ...     column_or_1d([7 + 3j, 1.0], input_name="y_true")
    ... except ValueError as exc:
    ...     print(exc)
    Complex data not supported: y_true holds complex numbers (values not shown); pass real numbers.
    """
    from sklearn.utils import column_or_1d as _column_or_1d

    try:
        return _column_or_1d(y, dtype=dtype, input_name=input_name, warn=warn)
    except (ValueError, TypeError) as exc:
        if not _rewritable(exc):
            raise
        err = _raise_data_free(exc, input_name)
    raise err from None


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
