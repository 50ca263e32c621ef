"""The private box search of :class:`SubsampledExpMedian` (Lantz 2016, ch. 8).

Public candidate centres (the coarse grid of the first round, local candidates around the
previous choice), the round schedule and the sensitivity of one local step.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.spatial.distance import cdist

from skdp.cluster._kmedian_costs import (
    _METRICS,
    FixedCosts,
    _cost_units,
    _exact_column_sums,
    check_finite_block,
    set_cost_units,
)

#: factor by which the search radius shrinks from one round to the next
SHRINK = 0.7
#: distance lookups the first round of the box search may spend scoring grid subsets
ROUND1_WORK = 60_000_000
#: most rounds of the "auto" schedule of the box search
MAX_ROUNDS = 12
#: share of epsilon spent by the first (coarse grid) round of the box search
FIRST_SHARE = 0.3
#: candidate sets per round of the box search when ``n_candidates="auto"``
DEFAULT_ROUND_CANDIDATES = 512
#: largest number of k-subsets of the coarse public grid that the first round of the box
#: search enumerates (above it, this many uniform k-subsets are sampled instead)
MAX_COARSE_SETS = 4096


def coarse_grid_spec(lo, hi, k, *, max_sets=MAX_COARSE_SETS):
    """Public shape of the coarse candidate centres of the first round of the box search.

    Returns ``(g, n_points, h)``: the finest regular grid on the box with ``g`` points per
    axis such that ``C(g**d, k) <= max_sets``, or the coarsest with at least ``4 k``
    points if that is finer (at least 2 per axis, at most 4,096 points); ``h`` its
    spacing per axis. When even ``g = 2`` gives more than ``max_sets`` subsets and
    ``2**d > max(64, 2 k)``, ``g`` is ``None`` and the ``n_points = max(64, 2 k)`` centres
    are drawn uniform in the box (:func:`coarse_grid_points`). Reads only public
    quantities and draws nothing.
    """
    d = lo.shape[0]
    g = 2
    # finest grid whose k-subsets can all be enumerated, but at least 4 k points
    while (g + 1) ** d <= 4096 and (math.comb((g + 1) ** d, k) <= max_sets or g**d < 4 * k):
        g += 1
    if g**d >= k and (math.comb(g**d, k) <= max_sets or g**d <= max(64, 2 * k)):
        return g, g**d, (hi - lo) / g
    n_pts = max(64, 2 * k)
    return None, n_pts, (hi - lo) / n_pts ** (1.0 / d)


def coarse_grid_points(lo, hi, g, n_points, rng):
    """The coarse candidate centres of :func:`coarse_grid_spec`: the cell centres of the
    regular grid with ``g`` points per axis, or (``g=None``) ``n_points`` uniform in the
    box drawn from ``rng``."""
    d = lo.shape[0]
    if g is not None:
        axes = [lo[j] + (hi[j] - lo[j]) * (np.arange(g) + 0.5) / g for j in range(d)]
        return np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, d)
    return lo + (hi - lo) * rng.random((n_points, d))


def _coarse_grid(lo, hi, k, *, max_sets=MAX_COARSE_SETS, rng=None):
    """Public coarse candidate centres for the first round of the box search, and their
    spacing ``h`` (:func:`coarse_grid_spec`, then :func:`coarse_grid_points`)."""
    g, n_points, h = coarse_grid_spec(lo, hi, k, max_sets=max_sets)
    return coarse_grid_points(lo, hi, g, n_points, rng), h


def _local_candidates(prev, lo, hi, radius, m, rng):
    """``m`` candidate centre sets around the previous selection ``prev`` (k, d).

    Data-independent given ``prev`` (a previous private release) and the public
    ``lo``, ``hi`` and ``radius`` (per-axis half-width): set 0 is ``prev`` itself; of
    the others, half move every centre and half move one random centre, each move
    uniform in the cube of half-width ``radius``, clipped to the box. No centre moves
    by more than ``radius`` along any axis.
    """
    k, d = prev.shape
    out = np.broadcast_to(prev, (m, k, d)).copy()
    if m <= 1:
        return out
    step = radius * (2.0 * rng.random((m - 1, k, d)) - 1.0)
    all_move = rng.random(m - 1) < 0.5
    one = np.zeros((m - 1, k), dtype=bool)
    one[np.arange(m - 1), rng.integers(k, size=m - 1)] = True
    mask = all_move[:, None] | one
    out[1:] += step * mask[:, :, None]
    np.clip(out, lo, hi, out=out)
    return out


def local_cost_units(X, prev, cands, *, metric, truncate, chunk_size):
    """Exact rounded costs of ``cands`` over the rows ``X`` (a :class:`FixedCosts`, equal
    to ``set_cost_units(X, cands, ...)``) for candidates that are ``prev`` with some
    centres moved: a candidate that moves a single centre ``j`` costs one distance per
    point (against the nearest of the other, unmoved centres) instead of ``k``.
    """
    X = np.asarray(X, dtype=np.float64)
    check_finite_block(X)
    m, k, _ = cands.shape
    moved = np.any(cands != prev[None], axis=2)  # (m, k)
    n_moved = moved.sum(axis=1)
    units = np.zeros(m, dtype=np.int64)
    total = FixedCosts(units)
    multi = np.nonzero(n_moved != 1)[0]
    if len(multi):
        part = set_cost_units(
            X, cands[multi], metric=metric, truncate=truncate, chunk_size=chunk_size
        )
        whole, frac = np.zeros(m, dtype=np.int64), np.zeros(m, dtype=np.int64)
        whole[multi], frac[multi] = part.whole, part.frac
        total.whole, total.frac = whole, frac
    single = np.nonzero(n_moved == 1)[0]
    if len(single) == 0:
        return total
    scipy_metric = _METRICS[metric]
    which = np.argmax(moved[single], axis=1)
    rows = max(1, min(X.shape[0], 1 << 20, chunk_size // max(len(single), 1)))
    for r0 in range(0, X.shape[0], rows):
        Xb = X[r0 : r0 + rows]
        D0 = cdist(Xb, prev, metric=scipy_metric)
        units[:] = 0
        for j in range(k):
            sel = single[which == j]
            if len(sel) == 0:
                continue
            others = np.delete(D0, j, axis=1).min(axis=1) if k > 1 else np.full(len(Xb), np.inf)
            D = cdist(Xb, cands[sel, j], metric=scipy_metric)
            np.minimum(D, others[:, None], out=D)
            units[sel] = _exact_column_sums(_cost_units(D, truncate))
        total = total + FixedCosts(units)
    return total


def local_step_sensitivity(radius, metric="euclidean"):
    """Sensitivity of a local round's quality: ``2 rho``, ``rho`` the largest move.

    A candidate ``F`` of a local round moves each centre of the public previous choice
    ``F0`` by at most ``radius`` per axis, so by at most ``rho = ||radius||`` in the
    metric, and ``|min(Delta, d(x, F)) - min(Delta, d(x, F0))| <= rho`` for every ``x``
    (both maps are 1-Lipschitz). The exponential mechanism with quality
    ``q(D, F) = -cost(D, F)`` has the same law as with ``q(D, F) + cost(D, F0)``, a sum of
    one term per point in ``[-rho, rho]``: it changes by at most ``rho`` when a point is
    added or removed and by at most ``2 rho`` when one is moved. ``2 rho`` covers all
    three.
    """
    radius = np.asarray(radius, dtype=float)
    rho = float(np.abs(radius).sum()) if metric == "manhattan" else float(np.linalg.norm(radius))
    return 2.0 * rho


def box_search_schedule(h, width, epsilon, n, *, n_rounds="auto"):
    """Public schedule of the box search: rounds, radii and the split of ``epsilon``.

    Depends only on the public grid spacing ``h`` (per axis), the box ``width``,
    ``epsilon`` and the (public) number of points ``n``; never on the data. Round 1
    selects among k-subsets of a coarse grid; round ``t >= 2`` searches cubes of
    per-axis half-width ``(h / 2) * SHRINK**(t - 2)`` around the previous choice.
    ``"auto"`` shrinks the radius by ``SHRINK = 0.7`` per round down to
    ``r_min = max(width) * max(1e-3, 1 / sqrt(epsilon n))`` (the displacement whose cost
    the selection can still resolve), with 2 to ``MAX_ROUNDS = 12`` rounds (12 at
    ``epsilon = inf``). Round 1 gets
    ``FIRST_SHARE = 0.3`` of ``epsilon``, the others share the rest equally.

    Returns
    -------
    radii : list of ndarray of shape (n_features,)
        Per-axis half-widths of rounds 2..n_rounds (``n_rounds - 1`` of them).
    epsilons : ndarray of shape (n_rounds,)
        Sums to ``epsilon``; its length is the number of rounds.
    """
    if n_rounds == "auto":
        if math.isinf(epsilon):
            T = MAX_ROUNDS
        else:
            r_min = float(np.max(width)) * max(1e-3, 1.0 / math.sqrt(max(epsilon * n, 1.0)))
            ratio = max(float(np.max(h)) / 2 / r_min, 1.0)
            T = 1 + max(1, math.ceil(math.log(ratio) / math.log(1 / SHRINK)))
            T = min(T, MAX_ROUNDS)
    else:
        T = int(n_rounds)
    radii = [h / 2.0 * SHRINK ** (t - 1) for t in range(1, T)]
    if T == 1:
        eps = np.array([float(epsilon)])
    else:
        eps = np.full(T, epsilon * (1 - FIRST_SHARE) / (T - 1))
        eps[0] = epsilon * FIRST_SHARE
    return radii, eps
