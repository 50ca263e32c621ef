"""The public time grid of a survival fit, and where each row's follow-up falls on it.

Every DP survival release in skdp is computed on a grid of time intervals fixed **before**
the data are read: from the public study horizon ``max_time`` and either the user's
``time_grid`` or a number of equal intervals. Times beyond ``max_time`` are censored there
(administrative censoring at the horizon), so the grid never depends on the data.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np

__all__ = ["MAX_INTERVALS", "check_max_time", "exposure_matrix", "interval_of", "time_grid_edges"]

#: The most intervals a grid may have (a public limit on the work and memory of a fit: the
#: histogram has a cell per interval and the Cox model a column per interval and row).
MAX_INTERVALS = 10_000


def check_max_time(max_time, *, name="max_time"):
    """``max_time`` as a positive finite float, or a ``ValueError``/``TypeError`` naming it."""
    if isinstance(max_time, bool) or not isinstance(max_time, Real):
        raise TypeError(f"{name} must be a positive number (the public study horizon)")
    value = float(max_time)
    if not (0.0 < value < np.inf):
        raise ValueError(f"{name} must be positive and finite (the public study horizon)")
    return value


def time_grid_edges(max_time, time_grid=None, *, n_intervals=None, name="time_grid"):
    """The grid's edges ``0 = e_0 < e_1 < ... < e_m = max_time`` (float64, length ``m + 1``).

    Parameters
    ----------
    max_time : float
        The public horizon (the last edge).
    time_grid : array-like of float, optional
        Interior edges (or all edges) chosen from public knowledge (e.g. the visit
        schedule): strictly increasing, within ``(0, max_time]``; ``0`` and ``max_time``
        are added when absent.
    n_intervals : int, optional
        With ``time_grid=None``: that many equal intervals (required then).

    Raises
    ------
    ValueError, TypeError
        A bad ``max_time``, ``time_grid`` or ``n_intervals``; the message names it.
    """
    horizon = check_max_time(max_time)
    if time_grid is None:
        if isinstance(n_intervals, bool) or not isinstance(n_intervals, Integral):
            raise TypeError("n_intervals must be a whole number >= 1")
        if n_intervals < 1 or n_intervals > MAX_INTERVALS:
            raise ValueError(f"n_intervals must be a whole number in [1, {MAX_INTERVALS}]")
        return _distinct(np.linspace(0.0, horizon, int(n_intervals) + 1))
    try:
        edges = np.asarray(time_grid, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a 1-d array of increasing times") from None
    if edges.ndim != 1 or edges.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-d array of increasing times")
    if not np.isfinite(edges).all():
        raise ValueError(f"{name} must hold finite times")
    if (edges < 0).any() or (edges > horizon).any():
        raise ValueError(f"{name} must lie within [0, max_time]")
    if (np.diff(edges) <= 0).any():
        raise ValueError(f"{name} must be strictly increasing")
    if edges[0] > 0:
        edges = np.r_[0.0, edges]
    if edges[-1] < horizon:
        edges = np.r_[edges, horizon]
    if edges.size < 2:
        raise ValueError(f"{name} must define at least one interval before max_time")
    if edges.size > MAX_INTERVALS + 1:
        raise ValueError(f"{name} must define at most {MAX_INTERVALS} intervals")
    return _distinct(edges)


def _distinct(edges):
    """Refuse edges that floating point merged (a horizon too small to split, e.g.
    subnormal): every interval needs a positive width."""
    if not (np.diff(edges) > 0).all():
        raise ValueError(
            "max_time is too small for the grid: its intervals have no width in floating "
            "point (give max_time in a unit where it is a normal number, e.g. days)"
        )
    return edges


def interval_of(time, event, edges):
    """``(interval, event)`` of each row on the grid: the index ``j`` of the interval
    ``(e_j, e_{j+1}]`` that holds its time (a time of 0 falls in the first), and the event
    indicator with rows past the horizon censored there (their interval is the last one).

    Post-processing of public edges and each row's own pair: a row's cell depends on
    that row only.
    """
    time = np.asarray(time, dtype=np.float64)
    event = np.asarray(event, dtype=bool)
    horizon = edges[-1]
    beyond = time > horizon
    idx = np.searchsorted(edges, np.minimum(time, horizon), side="left") - 1
    idx = np.clip(idx, 0, edges.size - 2)
    return idx.astype(np.int64), event & ~beyond


def exposure_matrix(time, edges):
    """Time at risk of each row in each interval, shape ``(n_rows, m)``: ``min(t, e_{j+1})
    - e_j`` clipped to ``[0, e_{j+1} - e_j]`` (times past the horizon count to it)."""
    time = np.asarray(time, dtype=np.float64)[:, None]
    lo, hi = edges[None, :-1], edges[None, 1:]
    return np.clip(np.minimum(time, hi) - lo, 0.0, hi - lo)
