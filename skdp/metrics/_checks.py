"""Input checks shared by skdp's DP metrics (labels, scores, ledger, parameters).

Error messages name the offending argument, never a data value.
"""

from __future__ import annotations

import math
from numbers import Real

import numpy as np
from sklearn.utils import check_consistent_length

from skdp.utils.validation import check_finite, column_or_1d


def _check_gamma(gamma):
    if isinstance(gamma, bool) or not isinstance(gamma, Real) or not float(gamma) > 1.0:
        raise ValueError("gamma must be a real number > 1")
    if not math.isfinite(float(gamma)):
        raise ValueError("gamma must be finite")
    return float(gamma)


def _distinct_labels(y):
    """Sorted distinct values of ``y`` (at most three are needed: more means non-binary)."""
    if y.dtype.kind in "biuf":
        lo, hi = y.min(), y.max()
        if np.all((y == lo) | (y == hi)):  # O(N), no sort
            return np.unique(np.array([lo, hi], dtype=y.dtype))
    try:
        return np.unique(y)
    except TypeError:  # e.g. None among numbers: labels that cannot be ordered
        raise TypeError(
            "y_true mixes labels that cannot be compared (e.g. None among numbers); "
            "drop or impute missing labels first"
        ) from None


def _check_ledger(ledger):
    """``None`` or an object with a ``spend`` method (a :class:`PrivacyLedger`)."""
    if ledger is not None and not callable(getattr(ledger, "spend", None)):
        raise TypeError(
            f"ledger must be a skdp.accounting.PrivacyLedger or None, got {type(ledger).__name__}"
        )


def _positive_mask(y_true, pos_label, allow_empty=False):
    """Boolean mask of the positive rows; never raises on single-class ``y_true``.

    Errors depend only on public facts and on the label domain (dtype, the type of
    ``pos_label``, more than two labels), never on which labels are present or how many
    rows each class has: a ``pos_label`` of the right type that no row carries means
    "no positive rows" (raising only when the other class is present would tell a
    neighbouring data set apart).
    """
    y = column_or_1d(y_true, input_name="y_true")
    if y.dtype.kind in "fc":
        check_finite(y, name="y_true")
    if y.shape[0] == 0:
        if allow_empty:  # a patient-level call on an empty fold: no positive rows
            return np.zeros(0, dtype=bool)
        raise ValueError("y_true is empty")
    pos_label = _resolve_pos_label(_distinct_labels(y).tolist(), y.dtype, pos_label)
    return np.asarray(y == pos_label, dtype=bool)


def _resolve_pos_label(labels, dtype, pos_label):
    """The positive label, from the distinct labels (a list; three suffice) and dtype."""
    if len(labels) > 2:
        raise ValueError("y_true must be binary (at most two distinct labels)")
    if pos_label is None:
        if dtype.kind == "b":
            pos_label = True
        elif dtype.kind in "iuf":
            allowed = ({0, 1}, {-1, 1})
            if not any(set(labels) <= a for a in allowed):
                raise ValueError(
                    "y_true must take values in {0, 1} or {-1, 1} when pos_label is None; "
                    "pass pos_label"
                )
            pos_label = 1
        else:
            raise ValueError("pos_label must be given when y_true holds non-numeric labels")
    else:
        _check_pos_label_type(pos_label, dtype)
    return pos_label


def _check_pos_label_type(pos_label, dtype):
    """``pos_label`` must be comparable with labels of ``dtype`` (a public check)."""
    numeric = isinstance(pos_label, bool | np.bool_ | int | float | np.number)
    if dtype.kind == "b":
        ok = isinstance(pos_label, bool | np.bool_) or pos_label in (0, 1)
    elif dtype.kind in "iuf":
        ok = numeric
    else:
        ok = not numeric or dtype.kind == "O"
    if not ok:
        raise ValueError(
            f"pos_label of type {type(pos_label).__name__} cannot match labels of dtype "
            f"{dtype}; pass a pos_label of the labels' type"
        )


def _check_scores(y_score, n_rows):
    s = column_or_1d(y_score, input_name="y_score")
    if s.dtype.kind not in "biuf":
        raise ValueError("y_score must be numeric")
    s = s.astype(np.float64, copy=False)
    check_finite(s, name="y_score")
    check_consistent_length(np.empty(n_rows), s)
    return s


def _check_ties(ties):
    if ties not in ("sklearn", "pessimistic"):
        raise ValueError("ties must be 'sklearn' or 'pessimistic'")
    return ties
