"""The survival target: scikit-survival's structured array ``(event, time)``.

A survival outcome is one pair per row: whether the event was observed (``True``) or the
follow-up was censored (``False``), and the time of the event or of censoring. skdp uses
scikit-survival's convention -- a structured array whose **first field is the event
indicator (bool) and second the time (float)**, as ``sksurv.util.Surv.from_arrays``
builds it -- without requiring scikit-survival: :func:`make_survival_target` builds the
same array, and :func:`check_survival_target` reads one (or any structured array with two
such fields, e.g. scikit-survival's own) back into two plain arrays.
"""

from __future__ import annotations

import numpy as np

__all__ = ["check_survival_target", "make_survival_target"]

_EVENT, _TIME = "event", "time"


def make_survival_target(event, time):
    """Build the survival target ``y`` from an event indicator and a time per row.

    Parameters
    ----------
    event : array-like of shape (n_samples,)
        ``True`` (or 1) where the event was observed, ``False`` (or 0) where the row was
        censored.
    time : array-like of shape (n_samples,)
        Time of the event or of censoring: finite and ``>= 0``.

    Returns
    -------
    y : numpy structured array of shape (n_samples,)
        Fields ``("event", bool)`` and ``("time", float64)``, in that order: the layout of
        ``sksurv.util.Surv.from_arrays(event, time)``, so scikit-survival's metrics and
        estimators accept it.

    Raises
    ------
    ValueError
        Arrays of different lengths, an event indicator that is not boolean (0/1), or a
        time that is negative, NaN or infinite; the message names the parameter.

    Examples
    --------
    >>> from skdp.survival import make_survival_target
    >>> y = make_survival_target([True, False, True], [5.0, 8.0, 2.5])
    >>> y.dtype.names
    ('event', 'time')
    >>> y["time"]
    array([5. , 8. , 2.5])
    """
    event = _check_event(event, "event")
    time = _check_time(time, "time")
    if event.shape[0] != time.shape[0]:
        raise ValueError(
            f"event and time must have one entry per row, got {event.shape[0]} and {time.shape[0]}"
        )
    y = np.empty(event.shape[0], dtype=[(_EVENT, bool), (_TIME, np.float64)])
    y[_EVENT] = event
    y[_TIME] = time
    return y


def check_survival_target(y, *, name="y"):
    """``(event, time)`` of a survival target, validated.

    Parameters
    ----------
    y : numpy structured array of shape (n_samples,)
        Two fields: the event indicator (bool) first, the time (float) second, as
        :func:`make_survival_target` and ``sksurv.util.Surv`` build it. The field names
        are free (scikit-survival data sets use e.g. ``("Status", "Survival_in_days")``).
    name : str, default="y"
        The parameter's name in error messages.

    Returns
    -------
    event : ndarray of bool, shape (n_samples,)
    time : ndarray of float64, shape (n_samples,)

    Raises
    ------
    TypeError
        ``y`` is not a structured array with two fields.
    ValueError
        ``y`` is not 1-d, its first field is not boolean (0/1), or a time is negative,
        NaN or infinite. Messages name the parameter and never show a value.
    """
    first, second = _pair_fields(
        y, name, "event indicator", "skdp.survival.make_survival_target(event, time)"
    )
    event = _check_event(first[1], f"{name}[{first[0]!r}] (the event indicator)")
    time = _check_time(second[1], f"{name}[{second[0]!r}] (the time)")
    return event, time


def _pair_fields(y, name, what, builder):
    """``(field name, column)`` of the two fields of a 1-d structured target ``y``
    (``what`` names the first field in the messages, ``builder`` the function that
    makes such a target); ``TypeError``/``ValueError`` naming ``name`` otherwise."""
    arr = y if isinstance(y, np.ndarray) else None
    if arr is None or arr.dtype.names is None or len(arr.dtype.names) != 2:
        raise TypeError(
            f"{name} must be a structured array with two fields ({what}, time); "
            f"build it with {builder}"
        )
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-d (one (event, time) pair per row)")
    return [(field, arr[field]) for field in arr.dtype.names]


def _check_event(event, name):
    values = np.asarray(event)
    if values.ndim != 1:
        raise ValueError(f"{name} must be 1-d, got {values.ndim}-d")
    if values.dtype == bool:
        return values.copy()
    if values.dtype.kind not in "iuf":
        raise ValueError(f"{name} must be boolean (True where the event was observed)")
    with np.errstate(invalid="ignore"):
        ok = np.isin(values, (0, 1)).all()
    if not ok:
        raise ValueError(f"{name} must be boolean or 0/1 (True where the event was observed)")
    return values.astype(bool)


def _check_time(time, name):
    values = np.asarray(time)
    if values.ndim != 1:
        raise ValueError(f"{name} must be 1-d, got {values.ndim}-d")
    if values.dtype.kind not in "iuf":
        raise ValueError(f"{name} must be numeric (a time per row)")
    values = values.astype(np.float64)
    if not np.isfinite(values).all():
        raise ValueError(f"{name} has NaN or infinite times: every row needs a finite time")
    if (values < 0).any():
        raise ValueError(f"{name} has negative times: times must be >= 0")
    return values
