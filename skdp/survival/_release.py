"""Reading a survival target (in memory or Dask) onto the public grid, bounding each
patient's rows, and releasing the noisy histogram (:mod:`skdp.survival._histogram`)."""

from __future__ import annotations

import functools
from numbers import Integral

import numpy as np

from skdp.survival._grid import interval_of, time_grid_edges
from skdp.survival._histogram import (
    HistogramPlan,
    add_cell_noise,
    default_n_intervals,
    noisy_histogram,
)
from skdp.survival._target import (
    _check_event,
    _check_time,
    _pair_fields,
    check_survival_target,
)
from skdp.utils._groups import bound_contributions, patient_codes
from skdp.utils._rowsum import is_dask_collection, row_sum

__all__ = ["check_no_dask_groups", "grid_of", "read_target", "release"]


def grid_of(max_time, time_grid, n_intervals, epsilon, *, default=default_n_intervals):
    """The public edges: ``time_grid``, else ``n_intervals`` equal intervals, else
    ``default(epsilon)`` of them
    (:func:`~skdp.survival._histogram.default_n_intervals` for a curve)."""
    if max_time is None:
        raise ValueError(
            "max_time is required: the public study horizon (e.g. the planned "
            "follow-up); times beyond it are censored there"
        )
    if time_grid is None and n_intervals is None:
        n_intervals = default(epsilon)
    if time_grid is not None and n_intervals is not None:
        raise ValueError("give time_grid or n_intervals, not both")
    if isinstance(n_intervals, Integral) and not isinstance(n_intervals, bool):
        n_intervals = int(n_intervals)
    return time_grid_edges(max_time, time_grid, n_intervals=n_intervals)


def _competing_status(event, name):
    """Event types as ints ``>= 0`` (0 = censored), validated."""
    values = np.asarray(event)
    if values.ndim != 1:
        raise ValueError(f"{name} must be 1-d")
    if values.dtype == bool:
        return values.astype(np.int64)
    if values.dtype.kind not in "iuf":
        raise ValueError(f"{name} must hold integer event types (0 = censored)")
    with np.errstate(invalid="ignore"):
        ok = np.isfinite(values).all() and (values == np.round(values)).all()
    if not ok or (values < 0).any():
        raise ValueError(f"{name} must hold integer event types >= 0 (0 = censored)")
    return values.astype(np.int64)


def read_target(y, *, competing=False, name="y"):
    """``(status, time)`` of an in-memory target: the event indicator (or the event type
    with ``competing=True``) and the time."""
    if not competing:
        event, time = check_survival_target(y, name=name)
        return event.astype(np.int64), time
    first, second = _pair_fields(
        y, name, "event type", "skdp.survival.make_competing_risks_target(event, time)"
    )
    status = _competing_status(first[1], f"{name}[{first[0]!r}] (the event type)")
    return status, _check_time(second[1], f"{name}[{second[0]!r}] (the time)")


def _status_columns(status, event_types, name):
    """Histogram column of each row: 0 censored, ``c`` the ``c``-th declared event type."""
    if event_types is None:
        return status
    codes = np.zeros(status.shape[0], dtype=np.int64)
    known = status == 0
    for c, value in enumerate(event_types, start=1):
        hit = status == value
        codes[hit] = c
        known |= hit
    if not known.all():
        raise ValueError(
            f"{name} has event types outside event_types: declare every event type (0 = censored)"
        )
    return codes


def _strata_codes(labels, arms, n, name="labels"):
    """Stratum of each row: the index of its label in the public ``arms``."""
    values = np.asarray(labels)
    if values.ndim != 1 or values.shape[0] != n:
        raise ValueError(f"{name} must be 1-d with one label per row of y")
    codes = np.full(n, -1, dtype=np.int64)
    for g, arm in enumerate(arms):
        codes[values == arm] = g
    if (codes < 0).any():
        raise ValueError(
            f"{name} has values outside arms: every row must belong to one declared arm "
            "(arms is public, e.g. (0, 1) for control and treatment)"
        )
    return codes


def _block_counts(y_block, labels_block, *, edges, arms, event_types, competing, plan):
    """Exact partial: the histogram of one block of rows (for :func:`row_sum`)."""
    if hasattr(y_block, "columns"):  # a pandas block of a Dask DataFrame
        cols = list(y_block.columns)
        status = (
            _competing_status(y_block[cols[0]].to_numpy(), "y (the event type)")
            if competing
            else _check_event(y_block[cols[0]].to_numpy(), "y (the event indicator)").astype(
                np.int64
            )
        )
        time = _check_time(y_block[cols[1]].to_numpy(), "y (the time)")
    else:
        status, time = read_target(np.asarray(y_block), competing=competing)
    n = status.shape[0]
    strata = np.zeros(n, dtype=np.int64) if arms is None else _strata_codes(labels_block, arms, n)
    idx, status = _cells(status, time, edges, event_types)
    cells = (strata * (plan.n_intervals + 1) + idx) * plan.n_columns + status
    size = int(np.prod(plan.shape))
    return np.bincount(cells, minlength=size).astype(np.int64)


def _cells(status, time, edges, event_types):
    """Each row's bin (its interval; ``m`` for a row still followed at the horizon:
    later, or censored exactly there) and its column."""
    idx, observed = interval_of(time, status > 0, edges)
    cols = _status_columns(status, event_types, "y")
    past = (time > edges[-1]) | ((time == edges[-1]) & ~observed)
    idx = np.where(past, edges.size - 1, idx)
    return idx, np.where(observed, cols, 0)


def release(
    y,
    *,
    owner,
    plan_args,
    rngs,
    edges,
    groups=None,
    labels=None,
    arms=None,
    event_types=None,
):
    """The noisy histogram ``(G, m, C)`` and its plan.

    ``owner`` holds ``max_rows_per_group`` (an estimator, or a stand-in of a function);
    ``rngs`` the streams ``"groups"`` and ``"noise"``; ``plan_args`` the plan's public
    inputs (epsilon, strata, columns). ``y``, ``labels`` and ``groups`` are private.
    """
    competing = event_types is not None
    dask_input = is_dask_collection(y) or is_dask_collection(labels)
    check_no_dask_groups(dask_input, groups)
    codes, k = patient_codes(owner, groups, _n_rows(y, dask_input), dask_input=dask_input)
    plan = HistogramPlan.build(n_intervals=edges.size - 1, max_rows_per_group=k, **plan_args)
    if dask_input:
        func = functools.partial(
            _block_counts, edges=edges, arms=arms, event_types=event_types,
            competing=competing, plan=plan,
        )  # fmt: skip
        total = row_sum(func, y, labels)
        counts = np.zeros(int(np.prod(plan.shape)), np.int64) if total is None else total
        return add_cell_noise(counts, plan, rngs["noise"]), plan
    status, time = read_target(y, competing=competing)
    n = status.shape[0]
    strata = np.zeros(n, dtype=np.int64) if arms is None else _strata_codes(labels, arms, n)
    idx, cols = _cells(status, time, edges, event_types)
    if codes is not None:  # at most k rows per patient, chosen at random
        keep = bound_contributions(codes, k, rngs["groups"])
        strata, idx, cols = strata[keep], idx[keep], cols[keep]
    return noisy_histogram(strata, idx, cols, plan, rngs["noise"]), plan


def check_no_dask_groups(dask_input, groups):
    """Refuse ``groups`` with Dask input here, whatever other estimators accept: the
    Dask path counts rows on the workers and could not bound a patient's rows."""
    if dask_input and groups is not None:
        raise ValueError(
            "groups= is not supported for Dask input by skdp.survival: bounding a "
            "patient's rows needs them together (fit in memory, or without groups)"
        )


def _n_rows(y, dask_input):
    if dask_input:
        return 0
    return len(y) if hasattr(y, "__len__") else 0
