"""First round of the box search of :class:`SubsampledExpMedian`: a noisy public-grid histogram.

The private points are counted in the cells of a regular grid on the public box; the counts
get discrete Laplace noise (one pure-DP release), and a weighted k-median on the noisy
cell centres (post-processing, no further access to the points) gives the centres the
local rounds start from. The grid is chosen from public numbers only (the number of
columns, the public ``n`` and the round's epsilon).
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy.spatial.distance import cdist

from skdp.cluster._kmedian_costs import _METRICS, _cell_index, _nearest, check_finite_block
from skdp.mechanisms import discrete_laplace_noise
from skdp.utils._rowsum import row_sum

#: most cells of the first round's histogram (2**16: every table with at most 16 columns
#: fits with 2 cells per axis)
HIST_MAX_CELLS = 1 << 16
#: largest share of ``n`` that the positive part of the noise on empty cells may add
HIST_PHANTOM_SHARE = 0.1
#: L1 sensitivity of the cell counts: 1 when a point is added or removed, 2 when one
#: moves to another cell (the estimator's relation covers both)
HIST_SENSITIVITY = 2
#: most restarts and most iterations of the weighted k-median on the noisy histogram
HIST_RESTARTS = 20
HIST_ITERATIONS = 30
#: work budget of the weighted k-median (points x centres x features x iterations summed
#: over restarts): large histograms get fewer restarts, at least 2
HIST_WORK = 1 << 27
#: Weiszfeld steps per centre update (Euclidean metric)
_WEISZFELD_STEPS = 5


def histogram_cells_per_axis(n_features, n, epsilon_1, k=1, *, sensitivity=HIST_SENSITIVITY):
    """Cells per axis ``g`` of the first round's grid, or ``None`` when the coarsest
    admissible grid (``g >= 2`` with at least ``k`` cells) exceeds :data:`HIST_MAX_CELLS`.

    The largest ``g >= 2`` with ``g**d <= min(HIST_MAX_CELLS, n)`` (no finer than about
    one cell per point) and, for finite ``epsilon_1``,
    ``g**d * E[max(0, Z)] <= HIST_PHANTOM_SHARE * n`` with ``Z`` the noise of one cell
    (``E[max(0, Z)] ~ scale / 2 = sensitivity / (2 epsilon_1)``, ``sensitivity`` the
    counts' L1 sensitivity, :data:`HIST_SENSITIVITY` per row): the noise on empty
    cells adds at most about a tenth of the points as spurious mass. When even that is too
    fine, the coarsest grid with ``g >= 2`` and ``g**d >= k`` (``k`` centres need ``k``
    distinct cells). Reads only public numbers.
    """
    d = int(n_features)
    if d > HIST_MAX_CELLS.bit_length() - 1:
        return None
    g_min = 2
    while g_min**d < k:
        g_min += 1
    if g_min**d > HIST_MAX_CELLS:
        return None
    # no finer than about one cell per point
    limit = float(min(HIST_MAX_CELLS, max(n, 1)))
    if not math.isinf(epsilon_1):
        limit = min(limit, HIST_PHANTOM_SHARE * n * 2.0 * epsilon_1 / sensitivity)
    g = g_min
    while (g + 1) ** d <= limit:
        g += 1
    return g


def grid_cell_counts(X, *, lo, hi, cells):
    """Number of rows of ``X`` in each cell of the regular grid with ``cells`` per axis
    on the box ``[lo, hi]`` (C order over the cell indices; int64, an exact partial for
    :func:`~skdp.utils._rowsum.row_sum`). Rows outside the box count in the edge cells."""
    X = np.asarray(X, dtype=np.float64)
    check_finite_block(X)
    d = lo.shape[0]
    flat = np.ravel_multi_index(_cell_index(X, lo, hi, cells).T, (cells,) * d)
    return np.bincount(flat, minlength=cells**d).astype(np.int64)


def noisy_grid_histogram(
    X, lo, hi, cells, epsilon_1, rng, *, sensitivity=HIST_SENSITIVITY, secure_mode=False
):
    """The first round's release: cell counts plus discrete Laplace noise of scale
    ``sensitivity / epsilon_1`` (exactly ``epsilon_1``-DP when ``sensitivity`` bounds the
    counts' L1 change: :data:`HIST_SENSITIVITY` per row, ``k`` per patient of at most
    ``k`` rows; none at infinity). ``secure_mode``: the noise from ``os.urandom``.

    Returns ``(centres, cell_index, counts)``: the cell centres (``cells**d``, d), their
    integer indices per axis and the noisy counts (int64, may be negative).
    """
    d = lo.shape[0]
    counts = row_sum(functools.partial(grid_cell_counts, lo=lo, hi=hi, cells=cells), X)
    if not math.isinf(epsilon_1):
        scale = sensitivity / float(epsilon_1)
        noise = discrete_laplace_noise(counts.shape, scale=scale, rng=rng, secure_mode=secure_mode)
        counts = counts + noise
    index = np.stack(np.unravel_index(np.arange(cells**d), (cells,) * d), axis=1)
    centres = lo + (index + 0.5) * (hi - lo) / cells
    return centres, index, counts


def weighted_kmedian(P, index, weights, k, *, metric, truncate, rng):
    """k centres for the weighted points ``P`` (post-processing of a noisy histogram).

    Up to ``HIST_RESTARTS`` runs (fewer when the points are many: at most
    ``HIST_WORK`` distance terms over all runs, at least 2 runs; never more runs than
    points) of weighted k-means++ seeding followed by at most ``HIST_ITERATIONS`` Lloyd
    steps for the k-median, until the assignment repeats (coordinate-wise weighted
    medians for the Manhattan metric, read off the integer cell ``index`` per axis; a few
    Weiszfeld steps for the Euclidean one); the run with the smallest weighted truncated cost
    ``sum_p w_p min(truncate, d(p, F))`` wins. Negative weights are set to 0. With fewer
    than ``k`` positive weights the zero-weight points are candidates as well, so ``k``
    centres are always returned (the points themselves when there are only ``k``).
    """
    scipy_metric = _METRICS[metric]
    w = np.maximum(np.asarray(weights, dtype=np.float64), 0.0)
    keep = w > 0
    if keep.sum() >= k:
        P, index, w = P[keep], index[keep], w[keep]
    if P.shape[0] <= k:
        return P.copy()
    cells = int(index.max()) + 1 if index.size else 1
    per_run = max(P.shape[0] * k * max(P.shape[1], 1) * HIST_ITERATIONS, 1)
    restarts = int(min(np.clip(HIST_WORK // per_run, 2, HIST_RESTARTS), P.shape[0]))
    best, best_cost = None, math.inf
    for _ in range(restarts):
        C = _weighted_kpp(P, w, k, scipy_metric, rng)
        previous = None
        for _ in range(HIST_ITERATIONS):
            label = _nearest(P, C, metric)
            if previous is not None and np.array_equal(label, previous):
                break  # C already holds this assignment's update
            previous = label
            new = C.copy()
            for j in range(k):
                sel = label == j
                wj = w[sel]
                if not sel.any() or wj.sum() <= 0:
                    continue
                if metric == "manhattan":
                    new[j] = _weighted_axis_medians(P[sel], index[sel], wj, cells)
                else:
                    new[j] = _weiszfeld(P[sel], wj, C[j])
            if np.array_equal(new, C):
                break
            C = new
        cost = float(w @ np.minimum(_nearest(P, C, metric, distance=True), truncate))
        if cost < best_cost:
            best, best_cost = C, cost
    return best


def _weighted_kpp(P, w, k, scipy_metric, rng):
    """Weighted k-means++ seeding (first point by weight, then by weight times squared
    distance); uniform among the not yet chosen points when every product is 0."""
    n = P.shape[0]
    chosen = np.zeros(n, dtype=bool)
    dmin = np.full(n, np.inf)
    picks = []
    for j in range(k):
        p = w.copy() if j == 0 else w * dmin**2
        p[chosen] = 0.0
        total = p.sum()
        if not total > 0:
            p = (~chosen).astype(float)
            total = p.sum()
        i = int(rng.choice(n, p=p / total))
        picks.append(i)
        chosen[i] = True
        dmin = np.minimum(dmin, cdist(P, P[i : i + 1], metric=scipy_metric)[:, 0])
    return P[picks].copy()


def _weighted_axis_medians(P, index, w, cells):
    """Coordinate-wise weighted median of grid points (the lower median per axis)."""
    out = np.empty(P.shape[1])
    half = w.sum() / 2.0
    for a in range(P.shape[1]):
        mass = np.bincount(index[:, a], weights=w, minlength=cells)
        level = int(np.searchsorted(np.cumsum(mass), half))
        out[a] = P[index[:, a] == level, a][0]
    return out


def _weiszfeld(P, w, start):
    """A few Weiszfeld steps towards the weighted geometric median of ``P``."""
    c = start
    for _ in range(_WEISZFELD_STEPS):
        dist = np.maximum(np.linalg.norm(P - c, axis=1), 1e-12)
        v = w / dist
        c = (v[:, None] * P).sum(axis=0) / v.sum()
    return c
