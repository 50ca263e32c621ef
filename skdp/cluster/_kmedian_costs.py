"""k-median costs of candidate centre sets, and the candidate sets themselves.

Bounded-memory cost evaluation and the uniform and k-means++-style candidate subsets of the
subsampled exponential mechanism (Lantz, Boyd and Page 2015).
"""

from __future__ import annotations

import functools
import itertools

import numpy as np
from scipy.spatial.distance import cdist

from skdp.utils._data_free import nonfinite_error
from skdp.utils._rowsum import row_sum

_METRICS = {"euclidean": "euclidean", "manhattan": "cityblock"}


def kmedian_costs(X, centers, *, metric="euclidean", truncate=None, chunk_size=1 << 22):
    """k-median cost of many candidate centre sets, evaluated in bounded memory.

    ``cost(F) = sum_x min(truncate, min_{f in F} d(x, f))``.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    centers : ndarray of shape (n_sets, k, n_features)
        ``n_sets`` candidate sets of ``k`` centres each.
    metric : {"euclidean", "manhattan"}, default="euclidean"
    truncate : float or None, default=None
        Cap on each point's distance to its nearest centre (the sensitivity; ``None``:
        no cap).
    chunk_size : int, default=2**22
        At most about this many point-to-centre distances are held in memory at once
        (the full ``n_sets x n_samples x k`` array is never materialised).

    Returns
    -------
    costs : ndarray of shape (n_sets,)

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.cluster import kmedian_costs
    >>> X = np.array([[0.0, 0.0], [1.0, 0.0]])
    >>> kmedian_costs(X, np.array([[[0.0, 0.0]], [[0.5, 0.0]]])).tolist()
    [1.0, 1.0]
    """
    X = np.asarray(X, dtype=float)
    centers = np.asarray(centers, dtype=float)
    n_sets, k, d = centers.shape
    n = X.shape[0]
    out = np.zeros(n_sets)
    if n == 0 or n_sets == 0:
        return out
    scipy_metric = _METRICS[metric]
    rows = max(1, min(n, chunk_size // max(k, 1)))
    sets = max(1, chunk_size // (rows * k))
    for s0 in range(0, n_sets, sets):
        C = centers[s0 : s0 + sets]
        flat = C.reshape(-1, d)
        for r0 in range(0, n, rows):
            D3 = cdist(X[r0 : r0 + rows], flat, metric=scipy_metric).reshape(-1, C.shape[0], k)
            D = D3[:, :, 0].copy()
            for j in range(1, k):  # faster than .min(axis=2) over a short last axis
                np.minimum(D, D3[:, :, j], out=D)
            if truncate is not None:
                np.minimum(D, truncate, out=D)
            out[s0 : s0 + sets] += D.sum(axis=0)
    return out


def _subset_costs_from_distances(D, subsets, truncate, chunk_size, weights=None):
    """Float costs of index subsets given the point-to-candidate distance matrix ``D``
    (n, |V|); ``weights`` (n,): multiplicity of each row of ``D``. For the benchmarks'
    non-private baselines; the estimator uses the exact :func:`subset_cost_units`."""
    n = D.shape[0]
    m, k = subsets.shape
    out = np.empty(m)
    step = max(1, chunk_size // max(n * k, 1))
    for s0 in range(0, m, step):
        idx = subsets[s0 : s0 + step]
        part = D[:, idx[:, 0]]  # (n, step)
        for j in range(1, k):
            np.minimum(part, D[:, idx[:, j]], out=part)
        np.minimum(part, truncate, out=part)
        out[s0 : s0 + step] = part.sum(axis=0) if weights is None else weights @ part
    return out


# ------------------------------------------------------------ exact (fixed-point) costs
#: bits after the binary point of a per-row cost in units of the truncation ``Delta``
FIXED_BITS = 40
_ONE = 1 << FIXED_BITS
_EXACT_ROWS = 1 << 12  # 2^12 integers <= 2^40 sum exactly in float64 (below 2^53)


class FixedCosts:
    """Exact sums of rounded per-row costs, one per candidate set: a partial for
    :func:`skdp.utils._rowsum.row_sum`.

    A row's cost ``min(Delta, d(x, F))`` is rounded to the nearest multiple of ``u =
    Delta 2^-FIXED_BITS`` (:func:`_cost_units`); the sum of the integers is kept exactly
    as ``whole 2^FIXED_BITS + frac`` (two int64 arrays, ``0 <= frac < 2^FIXED_BITS``), so
    it does not depend on how the rows are split or in which order blocks are added.
    """

    __slots__ = ("whole", "frac")

    def __init__(self, units):
        units = np.asarray(units, dtype=np.int64)
        self.whole = units >> FIXED_BITS
        self.frac = units & (_ONE - 1)

    def __add__(self, other):
        out = FixedCosts.__new__(FixedCosts)
        frac = self.frac + other.frac
        out.whole = self.whole + other.whole + (frac >> FIXED_BITS)
        out.frac = frac & (_ONE - 1)
        return out

    def __getstate__(self):
        return self.whole, self.frac

    def __setstate__(self, state):
        self.whole, self.frac = state

    def __len__(self):
        return len(self.whole)

    def to_float(self, truncate):
        """The costs as floats: ``(whole + frac 2^-FIXED_BITS) Delta``, each rounded
        the same way whatever the chunking."""
        units = self.whole.astype(np.float64) + np.ldexp(self.frac.astype(np.float64), -FIXED_BITS)
        return units * float(truncate)


def _cost_units(D, truncate):
    """``min(Delta, D)`` rounded to the grid ``Delta 2^-FIXED_BITS``, as integer-valued
    floats in ``[0, 2^FIXED_BITS]`` (in place). Rounding is monotone, so it commutes
    with the minimum over centres, and ``Delta`` maps to ``2^FIXED_BITS``: every row's
    rounded cost stays in ``[0, Delta]``."""
    np.minimum(D, truncate, out=D)
    np.multiply(D, _ONE / float(truncate), out=D)
    np.rint(D, out=D)
    np.minimum(D, float(_ONE), out=D)
    return D


def _exact_column_sums(U, weights=None):
    """Exact int64 column sums of integer-valued float units ``U`` (rows, sets)."""
    if weights is not None:
        return (U.astype(np.int64) * np.asarray(weights, dtype=np.int64)[:, None]).sum(axis=0)
    out = np.zeros(U.shape[1], dtype=np.int64)
    for r0 in range(0, U.shape[0], _EXACT_ROWS):  # each float partial sum is exact
        out += U[r0 : r0 + _EXACT_ROWS].sum(axis=0).astype(np.int64)
    return out


def check_finite_block(X):
    """Refuse a block of rows with a non-finite value (no value in the message)."""
    if not np.isfinite(X).all():
        raise nonfinite_error(X, "X")  # NaN: skdp's advice (impute privately, or drop)


def set_cost_units(X, centers, *, metric, truncate, chunk_size):
    """Exact rounded truncated costs of ``n_sets`` centre sets ``centers`` (n_sets, k, d)
    over the rows ``X``: a :class:`FixedCosts` (the exact form of :func:`kmedian_costs`)."""
    X = np.asarray(X, dtype=np.float64)
    check_finite_block(X)
    n_sets, k, d = centers.shape
    n = X.shape[0]
    total = FixedCosts(np.zeros(n_sets, dtype=np.int64))
    scipy_metric = _METRICS[metric]
    # at most 2^20 rows per int64 partial sum (2^20 * 2^40 < 2^63)
    rows = max(1, min(n, 1 << 20, chunk_size // max(k, 1)))
    sets = max(1, chunk_size // (rows * k))
    units = np.zeros(n_sets, dtype=np.int64)
    for r0 in range(0, n, rows):
        for s0 in range(0, n_sets, sets):
            C = centers[s0 : s0 + sets]
            # cdist computes each pair on its own: a row's distances do not depend on the
            # other rows of the block (the Dask tests check the bit-identity)
            D3 = cdist(X[r0 : r0 + rows], C.reshape(-1, d), metric=scipy_metric)
            D3 = D3.reshape(-1, C.shape[0], k)
            D = D3[:, :, 0].copy()
            for j in range(1, k):
                np.minimum(D, D3[:, :, j], out=D)
            units[s0 : s0 + sets] = _exact_column_sums(_cost_units(D, truncate))
        total = total + FixedCosts(units)
    return total


def subset_cost_units(X, V, subsets, *, metric, truncate, chunk_size, snap=None):
    """Exact rounded truncated costs of index ``subsets`` (m, k) of the candidate points
    ``V`` over the rows ``X``, a :class:`FixedCosts`.

    ``snap=(lo, hi, cells)``: each row is scored at the centre of its cell of the regular
    grid with ``cells`` per axis (:func:`_snap_to_cells`; the rows of one cell are scored
    once and weighted by their count). Each row's term is still in ``[0, Delta]``.
    """
    X = np.asarray(X, dtype=np.float64)
    check_finite_block(X)
    m, k = subsets.shape
    total = FixedCosts(np.zeros(m, dtype=np.int64))
    rows = max(1, min(X.shape[0], 1 << 20, chunk_size // max(V.shape[0], 1)))
    for r0 in range(0, X.shape[0], rows):
        Xb, w = X[r0 : r0 + rows], None
        if snap is not None:
            Xb, w = _snap_to_cells(Xb, *snap)
        # rounding is monotone: round the distances once, then take minima over subsets
        U = _cost_units(cdist(Xb, V, metric=_METRICS[metric]), truncate)
        units = np.empty(m, dtype=np.int64)
        step = max(1, chunk_size // max(U.shape[0] * k, 1))
        for s0 in range(0, m, step):
            idx = subsets[s0 : s0 + step]
            part = U[:, idx[:, 0]]
            for j in range(1, k):
                np.minimum(part, U[:, idx[:, j]], out=part)
            units[s0 : s0 + step] = _exact_column_sums(part, w)
        total = total + FixedCosts(units)
    return total


def _cell_index(X, lo, hi, cells):
    """Integer cell of each row in the regular grid with ``cells`` per axis on the box
    ``[lo, hi]`` (rows outside the box go to the edge cells)."""
    width = np.where(hi > lo, hi - lo, 1.0)
    return np.clip(np.floor((X - lo) / width * cells), 0, cells - 1).astype(np.int64)


def _snap_to_cells(X, lo, hi, cells):
    """Occupied cells of a regular grid with ``cells`` per axis: (centres, counts).

    Rows outside the box go to the edge cells. Used for the first round of the box
    search, where each private point then contributes ``min(Delta, d(cell centre, F))``,
    still in ``[0, Delta]``.
    """
    uniq, counts = np.unique(_cell_index(X, lo, hi, cells), axis=0, return_counts=True)
    return lo + (uniq + 0.5) * (hi - lo) / cells, counts


def _all_subsets(n_points, k):
    """Every ``k``-subset of ``range(n_points)``, in lexicographic order (``(C, k)``)."""
    return np.array(list(itertools.combinations(range(n_points), k)), dtype=np.intp)


def _uniform_subsets(n_points, k, m, rng):
    """``m`` i.i.d. uniform ``k``-subsets of ``range(n_points)`` (no repeat within a set)."""
    # argpartition of uniform keys gives a uniform random k-subset per row
    out = np.empty((m, k), dtype=np.intp)
    step = max(1, (1 << 22) // max(n_points, 1))
    for s0 in range(0, m, step):
        keys = rng.random((min(step, m - s0), n_points))
        out[s0 : s0 + step] = np.argpartition(keys, k - 1, axis=1)[:, :k]
    return np.sort(out, axis=1)


def _kpp_subsets(V, k, m, rng, metric, weighting):
    """``m`` i.i.d. k-means++ seedings on the public points ``V`` (data-independent).

    ``weighting="square"``: later centres with probability proportional to the squared
    distance to the nearest chosen centre (Arthur and Vassilvitskii 2007);
    ``"inverse"``: to its inverse (the literal wording of Lantz 2016, §8.3.1.1). Chosen
    points get weight 0, so a set never repeats a point.
    """
    n_points = V.shape[0]
    scipy_metric = _METRICS[metric]
    out = np.empty((m, k), dtype=np.intp)
    step = max(1, (1 << 22) // max(n_points, 1))
    for s0 in range(0, m, step):
        b = min(step, m - s0)
        rows = np.arange(b)
        chosen = np.zeros((b, n_points), dtype=bool)
        first = rng.integers(n_points, size=b)
        out[s0 : s0 + b, 0] = first
        chosen[rows, first] = True
        dmin = cdist(V[first], V, metric=scipy_metric)
        for j in range(1, k):
            if weighting == "square":
                w = dmin**2
            else:
                w = 1.0 / np.maximum(dmin, 1e-12) ** 2
            w[chosen] = 0.0
            total = w.sum(axis=1)
            # all remaining points coincide with chosen ones: fall back to uniform
            flat = total <= 0
            if flat.any():
                w[flat] = (~chosen[flat]).astype(float)
                total[flat] = w[flat].sum(axis=1)
            cum = np.cumsum(w, axis=1)
            u = rng.random(b) * total
            pick = np.minimum((cum <= u[:, None]).sum(axis=1), n_points - 1)
            # guard against landing on a zero-weight point through rounding
            bad = chosen[rows, pick]
            if bad.any():
                for r in np.nonzero(bad)[0]:
                    pick[r] = rng.choice(np.nonzero(~chosen[r])[0])
            out[s0 : s0 + b, j] = pick
            chosen[rows, pick] = True
            np.minimum(dmin, cdist(V[pick], V, metric=scipy_metric), out=dmin)
    return np.sort(out, axis=1)


def _exact_costs(func, X, *, truncate, **kwargs):
    """Candidate costs ``sum_x min(truncate, d(x, F))``, each row's term rounded to the
    grid ``truncate 2^-FIXED_BITS`` and summed exactly over the rows of ``X`` (numpy, or
    Dask partition by partition on the workers: the client receives the cost vector
    only), as floats. Identical for every chunking and for numpy vs Dask input."""
    total = row_sum(functools.partial(func, truncate=truncate, **kwargs), X)
    return total.to_float(truncate)


def _nearest(X, centers, metric, distance=False):
    """Index of (or, with ``distance``, distance to) the nearest of ``centers`` for each
    row of ``X``."""
    D = cdist(X, centers, metric=_METRICS[metric])
    if distance:
        return D.min(axis=1)
    return np.argmin(D, axis=1).astype(np.int64)


# ------------------------------------------- base distributions and quality of one round
def _box_sets(lo, hi, k, m, rng):
    """``m`` sets of ``k`` centres uniform in the box."""
    return lo + (hi - lo) * rng.random((m, k, lo.shape[0]))


def _negative_costs(X, sets, *, V, metric, cost_sensitivity, chunk_size):
    """The quality ``-sum_x min(Delta, d(x, F))`` of each candidate set: index subsets of
    the candidates ``V``, or centre sets when ``V`` is ``None``."""
    centers = V[np.asarray(sets)] if V is not None else np.asarray(sets, dtype=float)
    return -_exact_costs(
        set_cost_units,
        X,
        centers=centers,
        metric=metric,
        truncate=cost_sensitivity,
        chunk_size=chunk_size,
    )
