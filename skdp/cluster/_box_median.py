"""The private median step of the box search of :class:`SubsampledExpMedian`.

After round 1, every point is assigned to its nearest current centre (public: an earlier
private release) and each coordinate of each centre moves to a private median of its
points' coordinates: the exponential mechanism over a public grid of values within one
cell of round 1's grid around the current coordinate, with the rank utility
``-|#{x_a < v} - #{x_a > v}|`` (McSherry and Talwar 2007; Smith 2011). It is one
Lloyd step of k-medians, made private; the local rounds then refine.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from skdp.cluster._kmedian_costs import _nearest, check_finite_block
from skdp.mechanisms import exponential_mechanism
from skdp.utils._rowsum import row_sum

#: values per axis of the median step's public grid on the box (``lo + (hi - lo) i / G``)
MEDIAN_GRID = 256
#: share of the local rounds' epsilon that the median step takes
MEDIAN_SHARE = 0.3
#: the step runs when the scale of its rank error, ``(4 d / epsilon_m) ln(window)``, is
#: at most this share of the mean cluster size ``n / k`` (public numbers only)
MEDIAN_MAX_RANK_ERROR = 0.1


def median_windows(centers, lo, hi, half_width):
    """Public candidate values per (centre, axis): the points of the grid
    ``lo + (hi - lo) i / MEDIAN_GRID`` within ``half_width`` of the current coordinate
    (always at least the nearest grid point). Returns a list (k) of lists (d) of arrays."""
    steps = np.arange(MEDIAN_GRID + 1) / MEDIAN_GRID
    grids = lo[:, None] + (hi - lo)[:, None] * steps  # (d, G + 1)
    out = []
    for c in centers:
        gap = np.abs(grids - c[:, None])
        near = gap <= half_width[:, None] * (1 + 1e-12)
        near[np.arange(len(c)), gap.argmin(axis=1)] = True  # never an empty window
        out.append([grid[keep] for grid, keep in zip(grids, near, strict=True)])
    return out


def window_size(half_width, lo, hi):
    """Most candidate values of one window (public): ``2 floor(w G / (hi - lo)) + 1``."""
    width = np.where(hi > lo, hi - lo, 1.0)
    return int(np.max(2 * np.floor(half_width / width * MEDIAN_GRID) + 1))


def median_step_applies(n, k, d, epsilon_m, n_window):
    """Whether the median step runs under ``median_step="auto"`` (public numbers only):
    the scale of the exponential mechanism's utility error, ``(2 / epsilon_axis)
    ln(window)`` with ``epsilon_axis = epsilon_m / (2 d)`` (the error exceeds it by
    ``(2 / epsilon_axis) t`` with probability at most ``e^-t``; McSherry and Talwar
    2007), is at most ``MEDIAN_MAX_RANK_ERROR`` times the mean cluster size ``n / k``."""
    if math.isinf(epsilon_m):
        return True
    if epsilon_m <= 0:
        return False
    rank_error = 4.0 * d / epsilon_m * math.log(max(n_window, 2))
    return bool(rank_error <= MEDIAN_MAX_RANK_ERROR * n / k)


def median_rank_counts(X, *, centers, windows, metric):
    """Per (centre, axis, candidate value): the number of rows assigned to that centre
    whose coordinate is below and above the value. A flat int64 array (the windows
    concatenated, then below/above), an exact partial for
    :func:`~skdp.utils._rowsum.row_sum`."""
    X = np.asarray(X, dtype=np.float64)
    check_finite_block(X)
    label = _nearest(X, centers, metric)
    parts = []
    for j, row in enumerate(windows):
        Xj = X[label == j]
        for a, values in enumerate(row):
            xs = np.sort(Xj[:, a])
            below = np.searchsorted(xs, values, side="left")
            above = len(xs) - np.searchsorted(xs, values, side="right")
            parts.append(np.stack([below, above]).astype(np.int64).ravel())
    return np.concatenate(parts)


def private_median_step(X, centers, lo, hi, half_width, epsilon_m, metric, rng, *, sensitivity=1.0):
    """One private Lloyd step of k-medians from the public ``centers`` (see module).

    Each coordinate is an exponential-mechanism choice with utility sensitivity 1 at
    ``epsilon_m / (2 d)``: a point added or removed changes the counts of one centre
    (``d`` choices), a moved point those of at most two (or one centre's by 2), so the
    step is ``epsilon_m``-DP under add/remove and move. ``sensitivity``: the utilities'
    sensitivity per privacy unit (1 per row; ``k`` for a patient of at most ``k`` rows,
    whose rows change the ``k d`` choices' utilities by at most ``k d`` in total, so the
    step stays ``epsilon_m``-DP per patient).
    """
    k, d = centers.shape
    windows = median_windows(centers, lo, hi, half_width)
    counts = row_sum(
        functools.partial(median_rank_counts, centers=centers, windows=windows, metric=metric),
        X,
    )
    eps_axis = float(epsilon_m) / (2 * d)
    new = centers.copy()
    pos = 0
    for j in range(k):
        for a in range(d):
            values = windows[j][a]
            m = len(values)
            below, above = counts[pos : pos + m], counts[pos + m : pos + 2 * m]
            pos += 2 * m
            utility = -np.abs(below - above).astype(np.float64)
            if math.isinf(eps_axis):
                i = int(np.argmax(utility))
            else:
                i = exponential_mechanism(
                    utility, epsilon=eps_axis, sensitivity=sensitivity, rng=rng
                )
            new[j, a] = values[i]
    return new
