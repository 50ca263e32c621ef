"""scikit-learn's input validation, re-raised without data values.

scikit-learn's and numpy's conversion errors print the offending array or cell
("Expected 2D array ... array=[...]", "could not convert string to float: '<cell>'").
:func:`validate_data`, :func:`check_array` and :func:`column_or_1d` re-raise them with a
message that names the input (and the column where it can be found) and says what to
fix, chaining nothing. Public via :mod:`skdp.utils.validation`.

Dates and durations are refused here, before any conversion (:func:`check_no_datetime`):
numpy and pandas turn ``datetime64``/``timedelta64`` values (pandas' tz-aware dates
too) into nanosecond counts, so a table of dates would silently fit a model on numbers
around ``1.6e18``.

Missing values (NaN) get skdp's own message (:func:`missing_values_message`), not
scikit-learn's, which recommends scikit-learn's imputers: fitted on the private rows,
those release un-noised statistics that no skdp accounting sees.
"""

from __future__ import annotations

import inspect
import re
import warnings

import numpy as np

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


#: scikit-learn's NaN refusal ("Input X contains NaN.", "Input contains NaN."): replaced
#: by :func:`missing_values_message`
_NAN_MESSAGE = re.compile(r"^Input (?:(\w+) )?contains NaN")

#: What to do about missing values, in skdp's terms (never scikit-learn's imputers).
MISSING_VALUES_ADVICE = (
    "skdp estimators do not accept missing values, and scikit-learn's imputers "
    "(SimpleImputer, KNNImputer, IterativeImputer) must not be used in front of them: "
    "fitted on the private rows, their fill values are un-noised statistics that no "
    "epsilon accounts for. Impute inside a skdp.pipeline.DPPipeline with "
    "skdp.preprocessing.DPSimpleImputer: strategy='constant' with a public fill_value "
    "costs no budget; strategy='mean' or 'median' with declared bounds spends its own "
    "epsilon, which the pipeline adds to its total (add_indicator=True keeps the "
    "missingness as 0/1 columns). Or drop the rows with a missing value before the fit."
)

#: The same for the tabular synthesizers, which can model missingness themselves.
MISSING_VALUES_SYNTH_ADVICE = (
    "Pass missing='category' to model missingness as its own level of every column "
    "(its rate is released under the same budget; sample() writes missing values back), "
    'or declare "missing": true on those columns of the schema. Otherwise impute '
    "first with skdp.preprocessing.DPSimpleImputer (never scikit-learn's imputers, whose "
    "fill values are un-noised statistics of the private rows), or drop those rows."
)


def _offers_missing(estimator):
    """Whether ``estimator`` has a ``missing`` parameter (the tabular synthesizers)."""
    try:
        return "missing" in estimator.get_params(deep=False)
    except Exception:  # noqa: BLE001 - not an estimator: the generic advice
        return False


def nan_columns(X):
    """Labels of the columns of ``X`` that hold a NaN or ``None`` (metadata for a message:
    column names or positions, never a value); ``[]`` if none is found."""
    try:
        if hasattr(X, "columns") and hasattr(X, "isna"):
            bad = X.isna().any(axis=0)
            return [c for c, b in zip(X.columns, bad, strict=True) if bool(b)]
        A = np.asarray(X)
        if A.dtype.kind == "O":
            import pandas as pd

            mask = np.asarray(pd.isna(A), dtype=bool)
        elif A.dtype.kind in "fc":
            mask = np.isnan(A)
        else:
            return []
        if mask.ndim == 1:
            return []
        return [int(j) for j in np.nonzero(mask.reshape(mask.shape[0], -1).any(axis=0))[0]]
    except Exception:  # noqa: BLE001 - locating the column is best effort only
        return []


def missing_values_message(name="X", columns=None, *, synthesizer=False):
    """skdp's refusal of missing values in ``name``: the columns, and what to do.

    Starts like scikit-learn's (``"Input X contains NaN"``, which its common checks
    match) and names the columns (``columns``: labels or positions), never a value. The
    advice is skdp's: :class:`~skdp.preprocessing.DPSimpleImputer` inside a
    :class:`~skdp.pipeline.DPPipeline` (``strategy="constant"`` is free), or, for a
    tabular synthesizer (``synthesizer=True``), its ``missing="category"``. A target
    ``y`` is not imputed: drop those rows.

    Examples
    --------
    >>> from skdp.utils._data_free import missing_values_message
    >>> missing_values_message("X", ["bmi"]).split(". ")[0]
    "Input X contains NaN (column(s) ['bmi'])"
    """
    where = f" (column(s) {list(columns)})" if columns else ""
    head = f"Input {name} contains NaN{where}. "
    if name in ("y", "y_true", "y_pred", "y_score", "sample_weight"):
        return head + (
            f"skdp does not impute {name}: drop the rows whose {name} is missing before the "
            "fit (scikit-learn's imputers would release un-noised statistics of the rows)."
        )
    return head + (MISSING_VALUES_SYNTH_ADVICE if synthesizer else MISSING_VALUES_ADVICE)


def nonfinite_error(X, name="X"):
    """The refusal of a block of ``name`` that holds a non-finite value (for checks made
    block by block, e.g. on Dask partitions): :func:`missing_values_message` (the columns,
    what to do) when it holds NaN, else that it holds infinity. Never a value."""
    A = np.asarray(X)
    try:
        has_nan = bool(np.isnan(A.astype(float, copy=False)).any())
    except (TypeError, ValueError):
        has_nan = False
    if has_nan:
        return ValueError(missing_values_message(name, nan_columns(A)))
    return ValueError(f"Input {name} contains infinity (the value is not shown).")


_ARRAY_FIX = (
    "Reshape your data either using array.reshape(-1, 1) if your data has a single feature "
    "or array.reshape(1, -1) if it contains a single sample."
)


_DATETIME_KINDS = ("M", "m")  # numpy's datetime64 and timedelta64 (pandas' tz dates: "M")


def _datetime_labels(X):
    """``(labels, whole)`` of the date/time columns of ``X``, from dtype metadata only.

    ``labels`` lists the DataFrame columns whose dtype is a datetime or timedelta (tz-aware
    ones included); ``whole`` says that an array, Series or list as a whole has such a
    dtype. No value is read (a list is converted to find its dtype, as numpy would).
    """
    if hasattr(X, "columns") and hasattr(X, "dtypes"):  # pandas / Dask DataFrame
        try:
            items = list(X.dtypes.items())
        except Exception:  # noqa: BLE001 - an exotic frame: scikit-learn decides
            return [], False
        return [c for c, dt in items if getattr(dt, "kind", None) in _DATETIME_KINDS], False
    dtype = getattr(X, "dtype", None)
    if dtype is not None:
        return [], getattr(dtype, "kind", None) in _DATETIME_KINDS
    if isinstance(X, list | tuple) and X:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                kind = np.asarray(X).dtype.kind
        except Exception:  # noqa: BLE001 - ragged or odd input: scikit-learn's message
            return [], False
        return [], kind in _DATETIME_KINDS
    return [], False


def check_no_datetime(X, *, name="X"):
    """Refuse date/time input: ``datetime64``/``timedelta64`` arrays, Series and columns.

    numpy and pandas convert dates (tz-aware pandas dates too) and durations to
    nanosecond counts, which a model would then fit as ordinary numbers. The refusal is
    decided from the dtypes alone (public metadata), never from a value.

    Parameters
    ----------
    X : object
        An input (array, DataFrame, Series, Dask collection, list).
    name : str, default="X"
        The input's name in the message.

    Returns
    -------
    X : object
        Unchanged.

    Raises
    ------
    TypeError
        If ``X`` (or a column of it, named in the message) holds dates or durations.

    Examples
    --------
    >>> import pandas as pd
    >>> from skdp.utils.validation import check_no_datetime
    >>> X = pd.DataFrame({"age": [40, 50], "visit": pd.to_datetime(["2020-01-01"] * 2)})
    >>> try:
    ...     check_no_datetime(X)
    ... except TypeError as exc:
    ...     print(str(exc).split(":")[0])
    X has date/time column(s) ['visit'] (datetime64/timedelta64 dtype)
    """
    labels, whole = _datetime_labels(X)
    if not labels and not whole:
        return X
    where = (
        f"{name} has date/time column(s) {labels} (datetime64/timedelta64 dtype)"
        if labels
        else f"{name} holds dates or durations (datetime64/timedelta64 dtype)"
    )
    raise TypeError(
        f"{where}: skdp does not read them as numbers (numpy would count nanoseconds). "
        "Convert them first by a public rule, e.g. days since a fixed public reference date "
        "or a duration in days, as a float column, or drop them."
    )


def as_float_array(X, *, name="X"):
    """``numpy.asarray(X, dtype=float64)`` with errors that carry no data value.

    numpy's own messages print the offending cell ("could not convert string to float:
    '<cell>'"); this re-raises them naming ``name`` (and the column where it can be
    located), with nothing chained. Dates and durations are refused
    (:func:`check_no_datetime`), complex numbers too (numpy would drop their imaginary
    part with a warning).

    Parameters
    ----------
    X : array-like
        Values to convert (any shape).
    name : str, default="X"
        The input's name in messages (a parameter such as ``"value"`` or ``"utilities"``).

    Returns
    -------
    ndarray of float64

    Raises
    ------
    ValueError
        If a value is not a number (a string, a complex number, a nested sequence).
    TypeError
        If a value is neither a string nor a number, or ``X`` holds dates or durations.

    Examples
    --------
    >>> from skdp.utils.validation import as_float_array
    >>> as_float_array([1, 2.5])
    array([1. , 2.5])
    >>> try:
    ...     as_float_array(["1", "not a number"], name="value")
    ... except ValueError as exc:
    ...     print(str(exc).split(" (")[0])
    value: could not convert a value to a number
    """
    check_no_datetime(X, name=name)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", np.exceptions.ComplexWarning)
            return np.asarray(X, dtype=np.float64)
    except np.exceptions.ComplexWarning:
        err = ValueError(
            f"Complex data not supported: {name} holds complex numbers (values not shown); "
            "pass real numbers."
        )
    except (ValueError, TypeError) as exc:
        err = _raise_data_free(exc, name, X)
    raise err from None


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
    if _NAN_MESSAGE.match(msg):
        return missing_values_message(name, nan_columns(X) if X is not None else None)
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
    (every skdp estimator uses it, from :mod:`skdp.utils.validation`). A
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
        (``NotFittedError``, ``InvalidParameterError``) pass through unchanged. A
        ``TypeError`` for date/time input, before any conversion
        (:func:`check_no_datetime`).

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
    from sklearn.utils.validation import validate_data as sklearn_validate_data

    if not (isinstance(X, str) and X == "no_validation"):
        check_no_datetime(X, name="X")
    if not (y is None or (isinstance(y, str) and y == "no_validation")):
        check_no_datetime(y, name="y")
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
        if name == "X" and _NAN_MESSAGE.match(msg):
            # skdp's advice; a synthesizer's own missing="category" where it has one
            err = ValueError(
                missing_values_message("X", nan_columns(X), synthesizer=_offers_missing(estimator))
            )
        else:
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
            "y contains NaN, inf or missing values (None); drop those rows before the fit "
            "(skdp does not impute targets)"
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
        chained; a ``TypeError`` for date/time input (:func:`check_no_datetime`).
    """
    from sklearn.utils import check_array as _check_array

    check_no_datetime(array, name=input_name)
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

    check_no_datetime(y, name=input_name)
    try:
        return _column_or_1d(y, dtype=dtype, input_name=input_name, warn=warn)
    except (ValueError, TypeError) as exc:
        if not _rewritable(exc):
            raise
        err = _raise_data_free(exc, input_name)
    raise err from None
