"""MST's numeric kernels for :class:`DPMarginalSynthesizer` (McKenna, Miklau & Sheldon 2021)."""

from __future__ import annotations

import math
from numbers import Integral

import numpy as np

from skdp.mechanisms import exponential_mechanism
from skdp.mechanisms.sensitivity import histogram_sensitivity
from skdp.synthesis._missing import with_missing_level
from skdp.utils._tabular.binning import ColumnBinner

#: numeric columns get between these many bins under n_bins="auto"
_MIN_BINS = 8
_MAX_BINS = 32
#: an integer column whose declared range holds at most this many integers (or at most
#: the column's bin count) gets one bin per value
_SMALL_INTEGER_DOMAIN = 32
#: MST's compression threshold: 1-way cells with a noisy count below this many noise
#: standard deviations are merged into one "rare" value
_COMPRESS_SDS = 3.0
#: add/remove one row changes one cell of a marginal by one: L1 (and L2) sensitivity 1
_MARGINAL_SENSITIVITY = histogram_sensitivity()
#: the selection score ||M_ij(D) - fixed model||_1 moves by at most that much
#: (brute-forced in tests/synthesis/test_marginal.py)
_SCORE_SENSITIVITY = _MARGINAL_SENSITIVITY


def marginal_n_bins(n_samples, noise_sd):
    """Bins per numeric column used by :class:`DPMarginalSynthesizer` (``n_bins="auto"``).

    ``k = floor(sqrt(n / sd))`` clipped to ``[8, 32]``, where ``sd`` is the noise
    standard deviation of one cell of a measured 2-way marginal: a ``k x k`` table then
    has an average count of at least the noise in each cell. Sparse cells are merged
    by the compression step, so the floor of 8 costs little. It depends only on the
    public ``n`` and on the noise scale (a function of ``epsilon``, ``delta``, the
    budget split and the number of columns), never on the data. (The constants were
    chosen on the data sets of ``benchmarks/marginal.py``: ``sqrt(n / (2 sd))`` and a
    floor of 4 or 6 gave larger 1- and 2-way total variation on the small ones.)

    Parameters
    ----------
    n_samples : int
        Public row count.
    noise_sd : float
        Noise standard deviation per cell of a 2-way marginal (0: no noise).

    Returns
    -------
    int

    Examples
    --------
    >>> from skdp.synthesis import marginal_n_bins
    >>> marginal_n_bins(5000, 20.0), marginal_n_bins(5000, 3.0), marginal_n_bins(500, 20.0)
    (15, 32, 8)
    """
    n, sd = float(n_samples), float(noise_sd)
    if sd <= 0:
        return _MAX_BINS
    k = math.floor(math.sqrt(max(n, 1.0) / sd))
    return int(min(max(k, _MIN_BINS), _MAX_BINS))


# ---------------------------------------------------------------- projections
def _simplex_rows(V, r):
    """Euclidean projection of each row of ``V`` onto ``{x >= 0, sum(x) = r_i}``."""
    n, k = V.shape
    U = -np.sort(-V, axis=1)
    css = np.cumsum(U, axis=1) - r[:, None]
    j = np.arange(1, k + 1)
    cond = U * j > css
    last = k - 1 - np.argmax(cond[:, ::-1], axis=1)
    theta = css[np.arange(n), last] / (last + 1)
    X = np.maximum(V - theta[:, None], 0.0)
    X[r <= 0] = 0.0
    return X


def _simplex(v, total=1.0):
    """Euclidean projection of a vector onto ``{x >= 0, sum(x) = total}``."""
    return _simplex_rows(np.asarray(v, dtype=float)[None, :], np.array([float(total)]))[0]


def _transport_projection(Y, r, c, *, tol=1e-10, max_iter=3000):
    """Euclidean projection of ``Y`` onto ``{X >= 0, X 1 = r, X^T 1 = c}`` (Dykstra).

    Alternates exact projections onto the row set (each row on its scaled simplex) and
    the column set; Dykstra's corrections make the limit the projection onto their
    intersection (the transportation polytope, non-empty since ``sum r = sum c``).
    """
    X = np.array(Y, dtype=float)
    P = np.zeros_like(X)
    Q = np.zeros_like(X)
    for _ in range(max_iter):
        Z = _simplex_rows(X + P, r)
        P = X + P - Z
        Xn = _simplex_rows((Z + Q).T, c).T
        Q = Z + Q - Xn
        X = Xn
        if np.abs(X.sum(axis=1) - r).max() <= tol:
            break
    return X


class _DisjointSet:
    def __init__(self, n):
        self.parent = list(range(n))

    def find(self, i):
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def union(self, i, j):
        self.parent[self.find(i)] = self.find(j)


def pair_counts(Bc, csizes, pairs):
    """Exact 2-way counts ``M_ab(D)`` (flattened, int64) of the compressed cells ``Bc``
    for each pair; a row function of :func:`skdp.utils._rowsum.row_sum` (Dask input)."""
    out = []
    for a, b in pairs:
        ka, kb = csizes[a], csizes[b]
        out.append(np.bincount(Bc[:, a] * kb + Bc[:, b], minlength=ka * kb).astype(np.int64))
    return out


def _selection_scores(Bc, csizes, p1, n_hat, pairs, counts=None):
    """MST's scores ``||M_ab(D) - n_hat p_a p_b||_1`` of the pairs of columns.

    ``Bc`` holds the rows' compressed cells (public grid); ``p1`` and ``n_hat`` come from
    the noisy 1-way release only, so adding or removing a row moves one count of
    ``M_ab(D)`` by one and each score by at most 1. ``counts`` (the exact
    :func:`pair_counts`, summed over Dask partitions) replaces ``Bc`` when given.
    """
    score = np.empty(len(pairs))
    if counts is None:
        counts = pair_counts(Bc, csizes, pairs)
    for i, (a, b) in enumerate(pairs):
        x = counts[i]
        score[i] = np.abs(x - n_hat * np.outer(p1[a], p1[b]).ravel()).sum()
    return score


def _group_starts(sp):
    """First index of each run of equal values in the sorted parents ``sp``."""
    return np.flatnonzero(np.r_[True, sp[1:] != sp[:-1]])


def _lookup(cdf, sp, starts, order, pos):
    """Value of row ``i`` at position ``pos[i]`` (in ``[0, 1)``) of the cumulative table
    ``cdf[parent[i]]``: one search per distinct parent over the rows of its group
    (``order`` lists the rows grouped by parent, ``sp`` their parents in that order and
    ``starts`` where each group begins)."""
    stops = np.r_[starts[1:], len(sp)]
    out = np.empty(len(sp), dtype=np.int64)
    for a, b in zip(starts, stops, strict=True):
        row = cdf[sp[a]]
        rows = order[a:b]
        out[rows] = np.searchsorted(row, pos[rows] * row[-1], side="right")
    return np.minimum(out, cdf.shape[1] - 1)


def _draw(rng, cdf, parent):
    """One categorical draw per row from the CDF ``cdf[parent[i]]`` (independent rows)."""
    parent = np.asarray(parent, dtype=np.int64)
    u = rng.random(len(parent))
    if len(parent) == 0:
        return np.empty(0, dtype=np.int64)
    order = np.argsort(parent, kind="stable")
    sp = parent[order]
    return _lookup(cdf, sp, _group_starts(sp), order, u)


def _draw_systematic(rng, cdf, parent):
    """Draws from ``cdf[parent[i]]`` whose counts in each parent group are the expected
    counts rounded up or down (systematic sampling).

    Within the group of rows that share a parent value (size ``g``), the rows are put in
    a random order and row ``r`` of that order gets the value at ``(r + U) / g`` of the
    group's CDF, one ``U ~ Uniform(0, 1)`` per group. Each row alone is an exact draw
    from its CDF (its position ``(r + U) / g`` is uniform on ``[0, 1)``), and a value of
    probability ``p`` appears ``floor(g p)`` or ``ceil(g p)`` times in the group: the
    sample's marginals carry no multinomial sampling noise beyond one row per cell
    (Private-PGM's synthetic data rounds in the same spirit). Post-processing only.
    """
    parent = np.asarray(parent, dtype=np.int64)
    m = len(parent)
    if m == 0:
        return np.empty(0, dtype=np.int64)
    # grouped by parent, in random order within a group (one float sort: a random
    # fraction below 1/2 never moves a row across an integer parent)
    order = np.argsort(parent + 0.5 * rng.random(m))
    sp = parent[order]
    starts = _group_starts(sp)
    sizes = np.diff(np.r_[starts, m])
    group = np.repeat(np.arange(len(starts)), sizes)
    pos = np.empty(m)
    pos[order] = (np.arange(m) - starts[group] + rng.random(len(starts))[group]) / sizes[group]
    return _lookup(cdf, sp, starts, order, pos)


def _weighted_total(totals, variances):
    totals, variances = np.asarray(totals, float), np.asarray(variances, float)
    if np.any(variances == 0):
        t = float(totals[variances == 0].mean())
    else:
        w = 1.0 / variances
        t = float((w * totals).sum() / w.sum())
    return max(t, 1.0)


def _estimate_tree(y1c, v1c, totals, t_var, y2, edges, csizes, sd2):
    """Consistent non-negative marginals on the tree from the noisy measurements.

    The total ``n_hat`` is the inverse-variance weighted mean of every measurement's
    total. Each node's distribution combines (per cell, inverse-variance weights) its
    own compressed measurement and the margins of its incident 2-way measurements,
    divided by ``n_hat`` and projected onto the simplex; each edge table is its
    measurement divided by ``n_hat``, projected onto the tables with those margins.
    """
    totals = list(totals) + [float(t.sum()) for t in y2]
    t_var = list(t_var) + [csizes[a] * csizes[b] * sd2**2 for a, b in edges]
    n_hat = _weighted_total(totals, t_var)
    d = len(y1c)
    num = [np.zeros(k) for k in csizes]
    den = [np.zeros(k) for k in csizes]
    exact = sd2 == 0 or any(np.all(v == 0) for v in v1c)
    for j in range(d):
        w = 1.0 if exact else 1.0 / v1c[j]
        num[j] += w * y1c[j]
        den[j] += w
    if not exact:
        for (a, b), t in zip(edges, y2, strict=True):
            num[a] += t.sum(axis=1) / (csizes[b] * sd2**2)
            den[a] += 1.0 / (csizes[b] * sd2**2)
            num[b] += t.sum(axis=0) / (csizes[a] * sd2**2)
            den[b] += 1.0 / (csizes[a] * sd2**2)
    nodes = [_simplex(num[j] / den[j] / n_hat) for j in range(d)]
    tables = [
        _transport_projection(t / n_hat, nodes[a], nodes[b])
        for (a, b), t in zip(edges, y2, strict=True)
    ]
    return nodes, tables, n_hat


def discretizers(schema, n_pub, sd2, n_bins):
    """One data-independent binner per column (public quantities only): a
    :class:`~skdp.utils._tabular.binning.ColumnBinner` of ``k`` bins, integer columns in
    near-equal groups, one bin per integer up to ``_SMALL_INTEGER_DOMAIN`` integers."""
    if isinstance(n_bins, dict):
        unknown = [c for c in n_bins if c not in set(schema.names)]
        if unknown:
            raise ValueError(f"n_bins names unknown column(s) {unknown}")
    auto = marginal_n_bins(n_pub, sd2)
    out = {}
    for spec in schema:
        if n_bins == "auto":
            k = auto
        elif isinstance(n_bins, dict):
            k = n_bins.get(spec.name, auto)
            if isinstance(k, bool) or not isinstance(k, Integral) or k < 1:
                raise ValueError(f"n_bins for column {spec.name!r} must be an int >= 1")
        else:
            k = n_bins
        # a declared missing level is one more level after the bins (MissingLevel)
        binner = ColumnBinner(spec, int(k), small_domain=_SMALL_INTEGER_DOMAIN)
        out[spec.name] = with_missing_level(binner, spec)
    return out


def select_tree(Bc, csizes, p1, n_hat, epsilon, rng, counts=None, sensitivity=_SCORE_SENSITIVITY):
    """Kruskal's maximum spanning tree, each edge picked by the exponential mechanism
    of ``epsilon`` (scores of ``sensitivity``).

    ``counts``: the :func:`pair_counts` of all pairs ``a < b`` in place of ``Bc``."""
    d = len(csizes)
    if d < 2:
        return []
    pairs = [(a, b) for a in range(d) for b in range(a + 1, d)]
    if d == 2:
        return pairs
    score = _selection_scores(Bc, csizes, p1, n_hat, pairs, counts)
    ds = _DisjointSet(d)
    chosen = []
    for _ in range(d - 1):
        cand = [i for i, (a, b) in enumerate(pairs) if ds.find(a) != ds.find(b)]
        pick = exponential_mechanism(
            score[cand],
            epsilon=epsilon,
            sensitivity=sensitivity,
            rng=rng,
        )
        a, b = pairs[cand[pick]]
        ds.union(a, b)
        chosen.append((a, b))
    return chosen


def tree_orientation(names, edge_marginals, node_marginals):
    """Root, then (parent, child, conditional table) in breadth-first order."""
    names = list(names)
    index = {c: j for j, c in enumerate(names)}
    adj = {j: [] for j in range(len(names))}
    for (a, b), t in edge_marginals.items():
        ia, ib = index[a], index[b]
        adj[ia].append((ib, t))
        adj[ib].append((ia, t.T))
    order, seen, queue = [], {0}, [0]
    while queue:
        u = queue.pop(0)
        for v, t in adj[u]:
            if v not in seen:
                seen.add(v)
                queue.append(v)
                rows = t.sum(axis=1, keepdims=True)
                child = node_marginals[names[v]]
                with np.errstate(invalid="ignore", divide="ignore"):
                    cond = np.where(rows > 0, t / np.where(rows > 0, rows, 1.0), child)
                order.append((u, v, cond))
    return order


def rare_law(noisy, support):
    """Law of a column's merged bins given its rare value (post-processing).

    ``noisy`` is the column's noisy 1-way marginal and ``support`` its kept bins.

    Proportional to the positive part of their noisy counts, mixed 9:1 with the
    uniform law (so that every merged bin stays possible); uniform when no noisy
    count is positive.
    """
    y = noisy[~support].astype(float)
    uniform = np.full(len(y), 1.0 / len(y))
    w = np.maximum(y, 0.0)
    if w.sum() <= 0:
        return uniform
    return 0.9 * w / w.sum() + 0.1 * uniform


def compress_one_way(y1, sizes, sd1, compress):
    """MST's compression of the noisy 1-way marginals (post-processing).

    Bins whose noisy count is below ``_COMPRESS_SDS`` noise standard deviations are
    merged into one "rare" value. Returns, per column, the kept bins (boolean), the map
    bin -> compressed value, the compressed size, the compressed noisy counts and their
    noise variances.
    """
    supports, maps, csizes, y1c, v1c = [], [], [], [], []
    for j in range(len(sizes)):
        if compress and sd1 > 0:
            sup = y1[j] >= _COMPRESS_SDS * sd1
        else:
            sup = np.ones(sizes[j], dtype=bool)
        s = int(sup.sum())
        rare = sizes[j] - s
        cmap = np.full(sizes[j], s, dtype=np.int64)
        cmap[sup] = np.arange(s)
        yc = y1[j][sup].astype(float)
        vc = np.full(s, sd1**2)
        if rare:
            yc = np.append(yc, float(y1[j][~sup].sum()))
            vc = np.append(vc, rare * sd1**2)
        supports.append(sup)
        maps.append(cmap)
        csizes.append(s + (1 if rare else 0))
        y1c.append(yc)
        v1c.append(vc)
    return supports, maps, csizes, y1c, v1c
