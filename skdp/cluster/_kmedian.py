"""SubsampledExpMedian: private k-median with the subsampled exponential mechanism.

Lantz 2016, ch. 8 (Lantz, Boyd and Page 2015).
"""

from __future__ import annotations

import itertools
import math
from numbers import Integral, Real

import numpy as np
from scipy.spatial.distance import cdist
from sklearn.base import BaseEstimator, ClusterMixin

from skdp.base import DPEstimatorMixin
from skdp.mechanisms import exponential_mechanism, subsampled_exponential_mechanism
from skdp.mechanisms.sensitivity import kmedian_cost_sensitivity
from skdp.utils._random import fit_streams
from skdp.utils._sklearn_compat import (
    Interval,
    StrOptions,
    _fit_context,
    check_is_fitted,
    validate_data,
)
from skdp.utils.validation import check_bounds, check_finite

__all__ = ["SubsampledExpMedian", "kmedian_costs"]

_METRICS = {"euclidean": "euclidean", "manhattan": "cityblock"}

#: largest number of candidate sets the plain exponential mechanism (``n_candidates=None``)
#: may enumerate
MAX_ENUMERATED = 5_000_000


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
    """Costs of index subsets given the point-to-candidate distance matrix ``D`` (n, |V|).

    ``weights`` (n,): multiplicity of each row of ``D`` (``None``: 1 each).
    """
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


def _snap_to_cells(X, lo, hi, cells):
    """Occupied cells of a regular grid with ``cells`` per axis: (centres, counts).

    Rows outside the box go to the edge cells. Used for the first round of the box
    search, where each private point then contributes ``min(Delta, d(cell centre, F))``,
    still in ``[0, Delta]``.
    """
    width = np.where(hi > lo, hi - lo, 1.0)
    idx = np.clip(np.floor((X - lo) / width * cells), 0, cells - 1).astype(np.int64)
    uniq, counts = np.unique(idx, axis=0, return_counts=True)
    return lo + (uniq + 0.5) * (hi - lo) / cells, counts.astype(float)


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


def _coarse_grid(lo, hi, k, *, max_sets=MAX_COARSE_SETS, rng=None):
    """Public coarse candidate centres for the first round of the box search.

    The cell centres of the finest regular grid on the box with ``g`` points per axis
    such that ``C(g**d, k) <= max_sets``, or the coarsest with at least ``4 k`` points if
    that is finer (at least 2 per axis, at most 4,096 points). When even ``g = 2`` gives
    more than ``max_sets`` subsets and ``2**d > max(64, 2 k)``, ``max(64, 2 k)`` points
    uniform in the box are drawn from ``rng`` instead. Reads only public quantities.
    """
    d = lo.shape[0]
    g = 2
    # finest grid whose k-subsets can all be enumerated, but at least 4 k points
    while (g + 1) ** d <= 4096 and (math.comb((g + 1) ** d, k) <= max_sets or g**d < 4 * k):
        g += 1
    if g**d >= k and (math.comb(g**d, k) <= max_sets or g**d <= max(64, 2 * k)):
        axes = [lo[j] + (hi[j] - lo[j]) * (np.arange(g) + 0.5) / g for j in range(d)]
        V = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, d)
        return V, (hi - lo) / g
    n_pts = max(64, 2 * k)
    V = lo + (hi - lo) * rng.random((n_pts, d))
    return V, (hi - lo) / n_pts ** (1.0 / d)


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


def _local_costs(X, prev, cands, *, metric, truncate, chunk_size):
    """``kmedian_costs(X, cands, ...)`` for candidates that are ``prev`` with some centres
    moved: a candidate that moves a single centre ``j`` costs one distance per point
    (against the nearest of the other, unmoved centres, precomputed) instead of ``k``.
    """
    m, k, _ = cands.shape
    moved = np.any(cands != prev[None], axis=2)  # (m, k)
    n_moved = moved.sum(axis=1)
    out = np.empty(m)
    multi = np.nonzero(n_moved != 1)[0]
    if len(multi):
        out[multi] = kmedian_costs(
            X, cands[multi], metric=metric, truncate=truncate, chunk_size=chunk_size
        )
    single = np.nonzero(n_moved == 1)[0]
    if len(single) == 0:
        return out
    scipy_metric = _METRICS[metric]
    D0 = cdist(X, prev, metric=scipy_metric)
    which = np.argmax(moved[single], axis=1)
    rows = max(1, min(X.shape[0], chunk_size // max(len(single), 1)))
    for j in range(k):
        sel = single[which == j]
        if len(sel) == 0:
            continue
        others = np.delete(D0, j, axis=1).min(axis=1) if k > 1 else np.full(len(X), np.inf)
        acc = np.zeros(len(sel))
        for r0 in range(0, X.shape[0], rows):
            D = cdist(X[r0 : r0 + rows], cands[sel, j], metric=scipy_metric)
            np.minimum(D, others[r0 : r0 + rows, None], out=D)
            np.minimum(D, truncate, out=D)
            acc += D.sum(axis=0)
        out[sel] = acc
    return out


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
    n_rounds : int
    radii : list of ndarray of shape (n_features,)
        Per-axis half-widths of rounds 2..n_rounds.
    epsilons : ndarray of shape (n_rounds,)
        Sums to ``epsilon``.
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
    return T, radii, eps


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


class SubsampledExpMedian(DPEstimatorMixin, ClusterMixin, BaseEstimator):
    """Differentially private k-median with the subsampled exponential mechanism.

    ``n_candidates`` sets of ``n_clusters`` centres are drawn from a data-independent
    base distribution over a public candidate set ``candidates``, and one is selected
    with the exponential mechanism whose quality is the negative (truncated) k-median
    cost of the private data (Lantz 2016, Def. 8.1). ``n_candidates=None`` runs the
    plain exponential mechanism over all ``C(|V|, k)`` subsets of the candidate set
    instead (for comparison; feasible only for small settings).

    With only a public box ``bounds`` (the default use: ``k``, ``epsilon`` and the box),
    the output space is continuous and a single subsample cannot cover it, so the search
    runs in rounds (``n_rounds``): round 1 is the exponential mechanism over the
    k-subsets of a coarse public grid on the box; each later round is a subsampled
    exponential mechanism over ``n_candidates`` centre sets drawn around the previous
    round's choice, in a cube that shrinks by a factor 0.7 per round. The rounds
    compose to ``epsilon``.

    Parameters
    ----------
    n_clusters : int, default=2
        Number of centres ``k``.
    epsilon : float, default=1.0
        Total privacy loss of one ``fit`` (pure epsilon-DP). ``math.inf`` selects the
        best sampled candidate set (the optimum when ``n_candidates=None``).
    n_candidates : int, "auto" or None, default="auto"
        Number ``m`` of candidate sets drawn from the base distribution (per round of the
        box search). ``"auto"``: with ``candidates``, ``ceil(6 k ln |V|)`` (the iteration
        count of Gupta et al.'s private local search, the thesis's ``ssemauto``); with
        the box, 512 per round. ``None``: the plain exponential mechanism over every
        k-subset of ``candidates``.
    candidates : array-like of shape (n_candidates_points, n_features) or None
        Public candidate centres ``V``. Centres are chosen among them.
    bounds : (lo, hi) of scalars or per-feature arrays, or None, default=None
        Public box. Without ``candidates``, centres are searched in this box (see
        ``n_rounds``). It is not used to clip data (the cost is truncated instead, see
        Notes).
    base : {"uniform", "kmeans++"}, default="uniform"
        Base distribution of a candidate set: a uniform random k-subset of ``V`` (or k
        uniform points of the box), or a k-means++ seeding on ``V`` (``candidates``
        needed). Either way it is independent of the private data.
    kpp_weighting : {"square", "inverse"}, default="square"
        k-means++ weighting of later centres by the squared distance to the nearest
        chosen one (standard), or by its inverse (the literal description of Lantz
        2016, §8.3.1.1; spreads centres less).
    sensitivity : float or None, default=None
        Cap ``Delta`` on each point's contribution to the cost and sensitivity of the
        quality. ``None``: the diameter of the public domain, i.e. of ``candidates``
        (or of the box ``bounds``).
    metric : {"euclidean", "manhattan"}, default="euclidean"
    chunk_size : int, default=2**22
        Approximate number of distances held in memory at once during cost evaluation.
    n_rounds : int or "auto", default="auto"
        Rounds of the box search (``bounds`` without ``candidates``). ``1``: the
        thesis's single subsampled exponential mechanism with ``n_candidates`` sets of
        ``k`` points uniform in the box. ``"auto"``: from the public box, ``epsilon`` and
        the number of points (``box_search_schedule``: enough rounds that the last
        radius reaches the displacement the selection can resolve, 2 to 12). Must be 1
        or ``"auto"`` with ``candidates``.
    n_public : int or None, default=None
        Public number of private points used by the ``"auto"`` schedule of the box
        search. ``None``: ``len(X)``, which treats the row count as public (as
        ``KMeans`` and the library's other estimators that read ``n``); pass a declared
        number for a strict add/remove guarantee on the count.
    random_state : None, int, Generator or SeedSequence, default=None
        Seed of the candidate sampling and of the selection. ``None`` draws fresh OS
        entropy. Keep it secret for a real release.

    Attributes
    ----------
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
    center_indices_ : ndarray of shape (n_clusters,) or None
        Rows of ``candidates`` chosen as centres (``None`` for the box base).
    n_candidates_ : int
        Number of candidate sets the mechanism chose from (summed over rounds).
    n_rounds_ : int
        Rounds of the search (1 except for the multi-round box search).
    round_epsilons_ : ndarray of shape (n_rounds,)
        Privacy loss of each round (public; sums to ``epsilon``).
    round_sensitivities_ : ndarray of shape (n_rounds,)
        Sensitivity ``Delta_t`` of each round's quality (public): ``Delta`` for round 1,
        twice the largest centre move for the local rounds (capped at ``Delta``).
    sensitivity_ : float
        The ``Delta`` used (public).
    epsilon_spent_ : float
    delta_spent_ : float
        Always 0.
    privacy_guarantee_ : str
        ``"exact"``.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when fitted on a DataFrame with string column names.

    Notes
    -----
    **Privacy.** Neighbouring relation: add, remove or move (replace) one private
    point (the thesis's relation for ch. 8; for add/remove, the library default, the
    guarantee is the same). Mechanism: the subsampled exponential mechanism (Lantz 2016,
    Def. 8.1 and Thm 8.2), which is exact pure ``epsilon``-DP because the candidate sets
    are sampled independently of the data; the exponent is ``epsilon * q / (2 Delta)``.
    Quality ``q(F) = -sum_x min(Delta, d(x, F))``: the truncation at ``Delta`` makes the
    sensitivity exactly ``Delta`` for any data, and it changes nothing when every private
    point lies in the convex hull of ``candidates`` (Euclidean metric; the default
    ``Delta`` is then the diameter of ``candidates``). Accountant: a single
    pure-DP mechanism, ``epsilon_spent_ = epsilon``, ``delta_spent_ = 0``,
    ``privacy_guarantee_ = "exact"``. The fitted estimator stores no private statistic:
    in particular no cost, ``inertia_`` or training ``labels_`` (``fit_predict`` returns
    the labels without storing them). ``score`` evaluates the cost of the data it is
    given and is not private.

    **Box search.** Round 1: the exponential mechanism over the k-subsets of a public coarse
    grid with at least ``4 k`` points (all of them when scoring them costs at most
    ``ROUND1_WORK`` distance lookups, else that many uniform draws, at least 4,096),
    exponent ``epsilon_1 / (2 Delta)``; its quality scores each private point by the centre
    of its cell in a grid twice as fine (``sum_x min(Delta, d(cell(x), F))``, each term
    still in ``[0, Delta]``), which only makes scoring cheaper. Round ``t >= 2``: the
    subsampled exponential mechanism over ``n_candidates`` sets drawn around the previous
    choice ``F0`` (set 0 is ``F0``; each other set moves every centre, or one, uniformly in
    a cube of public half-width ``r_t``). Every candidate moves each centre by at most
    ``rho_t = ||r_t||`` in the metric, so ``|min(Delta, d(x, F)) - min(Delta, d(x, F0))| <=
    rho_t`` for every point ``x``; the exponential mechanism's law is unchanged by adding
    the ``F``-independent ``cost(D, F0)`` to the quality, and the sum of the per-point
    differences changes by at most ``rho_t`` (add/remove) or ``2 rho_t`` (move). The round's
    exponent is ``epsilon_t / (2 Delta_t)`` with ``Delta_t = min(Delta, 2 rho_t)``, a public
    number. Each round is exactly ``epsilon_t``-DP; the candidate sets depend on the data
    only through the earlier private choices (adaptive composition), and the ``epsilon_t``
    (``round_epsilons_``) sum to ``epsilon``. The grid, the radii and the split read only
    the box, ``epsilon``, ``k`` and ``n_public`` (or ``len(X)``).

    **Floating point.** Not exact in floating point: the exponential-mechanism choice
    among the candidate sets uses floating-point log-weights and Gumbel draws
    (Gumbel-max); the guarantee is for the mathematical mechanism (Mironov 2012). The
    candidate sets themselves are drawn without looking at the data.

    References
    ----------
    .. [1] Lantz, E. (2016). Machine learning for risk prediction and privacy in
       electronic health records. PhD thesis, University of Wisconsin-Madison, ch. 8.
    .. [2] Lantz, E., Boyd, K. and Page, D. (2015). Subsampled exponential mechanism:
       differential privacy in large output spaces. AISec.
    .. [3] McSherry, F. and Talwar, K. (2007). Mechanism design via differential
       privacy. FOCS.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.cluster import SubsampledExpMedian
    >>> rng = np.random.default_rng(0)
    >>> V = rng.uniform(-1, 1, size=(100, 2))          # public candidate centres
    >>> X = np.vstack([rng.normal(-0.5, 0.1, (50, 2)), rng.normal(0.5, 0.1, (50, 2))])
    >>> km = SubsampledExpMedian(n_clusters=2, epsilon=5.0, candidates=V, random_state=0)
    >>> km.fit(X).cluster_centers_.shape
    (2, 2)
    >>> km.n_candidates_
    56

    From a user's defaults, ``k``, ``epsilon`` and the public box:

    >>> est = SubsampledExpMedian(n_clusters=2, bounds=(-1, 1), random_state=0).fit(X)
    >>> est.cluster_centers_.shape, est.n_rounds_ > 1
    ((2, 2), True)
    """

    _parameter_constraints: dict = {
        **DPEstimatorMixin._privacy_parameter_constraints,
        "n_clusters": [Interval(Integral, 1, None, closed="left")],
        "n_candidates": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"}), None],
        "candidates": ["array-like", None],
        "bounds": [tuple, list, np.ndarray, None],
        "base": [StrOptions({"uniform", "kmeans++"})],
        "kpp_weighting": [StrOptions({"square", "inverse"})],
        "sensitivity": [Interval(Real, 0, None, closed="neither"), None],
        "metric": [StrOptions(set(_METRICS))],
        "chunk_size": [Interval(Integral, 1, None, closed="left")],
        "n_rounds": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "n_public": [Interval(Integral, 1, None, closed="left"), None],
        "random_state": ["random_state", np.random.Generator, np.random.SeedSequence],
    }
    _parameter_constraints.pop("delta", None)

    def __init__(
        self,
        *,
        n_clusters=2,
        epsilon=1.0,
        n_candidates="auto",
        candidates=None,
        bounds=None,
        base="uniform",
        kpp_weighting="square",
        sensitivity=None,
        metric="euclidean",
        chunk_size=1 << 22,
        n_rounds="auto",
        n_public=None,
        random_state=None,
    ):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.n_candidates = n_candidates
        self.candidates = candidates
        self.bounds = bounds
        self.base = base
        self.kpp_weighting = kpp_weighting
        self.sensitivity = sensitivity
        self.metric = metric
        self.chunk_size = chunk_size
        self.n_rounds = n_rounds
        self.n_public = n_public
        self.random_state = random_state

    # ------------------------------------------------------------------ helpers
    def _public_domain(self, n_features):
        """Resolve the public candidate set / box; raise on missing public metadata."""
        if self.candidates is not None:
            V = check_finite(np.asarray(self.candidates, dtype=float), name="candidates")
            if V.ndim != 2 or V.shape[1] != n_features:
                raise ValueError(
                    f"candidates must have shape (n_points, {n_features}) to match X, got {V.shape}"
                )
            if V.shape[0] < self.n_clusters:
                raise ValueError(
                    f"n_clusters={self.n_clusters} exceeds the number of candidates ({V.shape[0]})"
                )
            return V, None
        if self.bounds is None:
            raise ValueError(
                "SubsampledExpMedian needs public metadata: pass candidates (public "
                "candidate centres) or bounds (a public box to draw centres from)"
            )
        if self.base != "uniform":
            raise ValueError(f'base="{self.base}" needs candidates')
        if self.n_candidates is None:
            raise ValueError(
                "with the box base (no candidates) n_candidates must be an int or "
                '"auto": the subsets of a continuous box cannot be enumerated'
            )
        return None, check_bounds(self.bounds, n_features)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Select ``n_clusters`` centres privately.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Private points.
        y : None
            Ignored.

        Returns
        -------
        self : SubsampledExpMedian
        """
        X = validate_data(self, X, dtype=np.float64, ensure_min_samples=1)
        epsilon, _ = self._check_privacy_params()
        k = self.n_clusters
        if self.candidates is None and k > X.shape[0]:
            # as KMeans; the row count is public here (n_public default). With public
            # candidates the thesis's setting allows fewer private points than centres.
            raise ValueError(f"n_clusters={k} must be at most the number of samples")
        V, box = self._public_domain(X.shape[1])
        delta = (
            float(self.sensitivity)
            if self.sensitivity is not None
            else kmedian_cost_sensitivity(candidates=V, bounds=box, metric=self.metric)
        )
        if delta <= 0:
            raise ValueError(
                "the public domain has diameter 0; pass a positive sensitivity or a "
                "larger candidate set / box"
            )
        rng = fit_streams(self.random_state, ["noise"], estimator=self, X=X)["noise"]
        chunk = self.chunk_size

        if V is None and self.n_rounds != 1:
            if self.n_public is not None:
                n_sched = int(self.n_public)
            else:
                n_sched = X.shape[0]
            chosen = self._box_search(X, box, epsilon, delta, n_sched, rng)
            self.center_indices_ = None
            self.cluster_centers_ = chosen
            self.sensitivity_ = float(delta)
            self._record_privacy_spent(epsilon, 0.0, guarantee="exact")
            return self
        if V is not None and self.n_rounds not in ("auto", 1):
            raise ValueError("n_rounds > 1 needs the box base (bounds without candidates)")
        if V is not None and self.n_candidates is None:
            # plain exponential mechanism over all C(|V|, k) subsets
            n_sets = math.comb(V.shape[0], k)
            if n_sets > MAX_ENUMERATED:
                raise ValueError(
                    f"n_candidates=None enumerates C({V.shape[0]}, {k}) = {n_sets} subsets, "
                    f"more than {MAX_ENUMERATED}; pass an int n_candidates"
                )
            subsets = np.array(list(itertools.combinations(range(V.shape[0]), k)), dtype=np.intp)
            if X.shape[0] * V.shape[0] <= chunk:
                D = cdist(X, V, metric=_METRICS[self.metric])
                q = -_subset_costs_from_distances(D, subsets, delta, chunk)
            else:  # never hold the full (n, |V|) distance matrix
                step = max(1, chunk // (k * V.shape[1]))
                q = -np.concatenate(
                    [
                        kmedian_costs(
                            X,
                            V[subsets[s0 : s0 + step]],
                            metric=self.metric,
                            truncate=delta,
                            chunk_size=chunk,
                        )
                        for s0 in range(0, len(subsets), step)
                    ]
                )
            idx = self._select(q, epsilon, delta, rng)
            chosen = subsets[idx]
            self.n_candidates_ = int(n_sets)
        else:
            if self.n_candidates == "auto" and V is None:
                m = DEFAULT_ROUND_CANDIDATES
            elif self.n_candidates == "auto":
                m = math.ceil(6 * k * math.log(V.shape[0])) if V.shape[0] > 1 else 1
            else:
                m = int(self.n_candidates)
            self.n_candidates_ = int(m)
            metric = self.metric
            if V is not None:
                if self.base == "uniform":

                    def sample(m_, rng_):
                        return _uniform_subsets(V.shape[0], k, m_, rng_)

                else:
                    weighting = self.kpp_weighting

                    def sample(m_, rng_):
                        return _kpp_subsets(V, k, m_, rng_, metric, weighting)

                def utility(subsets):
                    subsets = np.asarray(subsets)
                    return -kmedian_costs(
                        X, V[subsets], metric=metric, truncate=delta, chunk_size=chunk
                    )

            else:
                lo, hi = box

                def sample(m_, rng_):
                    return lo + (hi - lo) * rng_.random((m_, k, lo.shape[0]))

                def utility(centers):
                    return -kmedian_costs(
                        X, centers, metric=metric, truncate=delta, chunk_size=chunk
                    )

            if math.isinf(epsilon):
                cands = sample(m, rng)
                best = int(np.argmax(utility(cands)))
                chosen = cands[best]
            else:
                cands, best = subsampled_exponential_mechanism(
                    sample, utility, m=m, epsilon=epsilon, sensitivity=delta, rng=rng
                )
                chosen = np.asarray(cands)[int(best)]
        if V is not None:
            chosen = np.sort(np.asarray(chosen, dtype=np.intp))
            self.center_indices_ = chosen
            self.cluster_centers_ = V[chosen].copy()
        else:
            self.center_indices_ = None
            self.cluster_centers_ = np.asarray(chosen, dtype=float).copy()
        self.sensitivity_ = float(delta)
        self.n_rounds_ = 1
        self.round_epsilons_ = np.array([float(epsilon)])
        self.round_sensitivities_ = np.array([float(delta)])
        self._record_privacy_spent(epsilon, 0.0, guarantee="exact")
        return self

    def _box_search(self, X, box, epsilon, delta, n_sched, rng):
        """Multi-round subsampled exponential mechanism on the public box.

        Round 1: exponential mechanism over the k-subsets of a coarse public grid (all of
        them when there are at most ``MAX_COARSE_SETS``, else that many uniform draws).
        Rounds 2..T: subsampled exponential mechanism over candidate sets drawn around
        the previous round's (private) choice by ``_local_candidates``. Round ``t`` is
        ``epsilons[t]``-DP with quality ``-sum_x min(Delta, d(x, F))`` and exponent
        ``epsilons[t] / (2 Delta)``; the rounds compose to ``epsilon``. No candidate
        depends on ``X`` except through earlier private outputs.
        """
        k = self.n_clusters
        lo, hi = box
        metric = self.metric
        chunk = self.chunk_size
        V1, h = _coarse_grid(lo, hi, k, rng=rng)
        T, radii, eps = box_search_schedule(h, hi - lo, epsilon, n_sched, n_rounds=self.n_rounds)
        m = DEFAULT_ROUND_CANDIDATES if self.n_candidates == "auto" else int(self.n_candidates)
        total = 0
        sens = [float(delta)]

        # round 1: coarse public grid; the private points are snapped to a grid twice as
        # fine (each point's term stays in [0, Delta]) so that many more subsets can be
        # scored: all of them when that costs at most ROUND1_WORK distance lookups
        cells = int(round(float(np.max((hi - lo) / np.where(h > 0, h, 1.0))))) * 2
        Xc, w = _snap_to_cells(X, lo, hi, max(cells, 2))
        if Xc.shape[0] > X.shape[0] // 2:  # snapping does not compress: keep the points
            Xc, w = X, None
        n_sets = math.comb(V1.shape[0], k)
        budget = max(MAX_COARSE_SETS, ROUND1_WORK // max(Xc.shape[0] * k, 1))
        if n_sets <= budget:
            subsets = np.array(list(itertools.combinations(range(V1.shape[0]), k)), dtype=np.intp)
        else:
            subsets = _uniform_subsets(V1.shape[0], k, budget, rng)
        total += len(subsets)
        if Xc.shape[0] * V1.shape[0] <= chunk:
            D = cdist(Xc, V1, metric=_METRICS[metric])
            q = -_subset_costs_from_distances(D, subsets, delta, chunk, weights=w)
        else:  # never hold a large (n, |V|) distance matrix
            q = -kmedian_costs(X, V1[subsets], metric=metric, truncate=delta, chunk_size=chunk)
        current = V1[subsets[self._select(q, eps[0], delta, rng)]]

        # rounds 2..T: local search around the previous private choice
        for t in range(1, T):
            cands = _local_candidates(current, lo, hi, radii[t - 1], m, rng)
            total += m
            q = -_local_costs(X, current, cands, metric=metric, truncate=delta, chunk_size=chunk)
            delta_t = min(delta, local_step_sensitivity(radii[t - 1], metric))
            sens.append(float(delta_t))
            current = cands[self._select(q, eps[t], delta_t, rng)]
        self.n_rounds_ = int(T)
        self.n_candidates_ = int(total)
        self.round_epsilons_ = np.asarray(eps, dtype=float)
        self.round_sensitivities_ = np.asarray(sens)
        return np.asarray(current, dtype=float).copy()

    @staticmethod
    def _select(q, epsilon, delta, rng):
        if math.isinf(epsilon):
            return int(np.argmax(q))
        return int(exponential_mechanism(q, epsilon=epsilon, sensitivity=delta, rng=rng))

    def predict(self, X):
        """Index of the nearest centre for each row of ``X`` (post-processing)."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        D = cdist(X, self.cluster_centers_, metric=_METRICS[self.metric])
        return np.argmin(D, axis=1).astype(np.int64)

    def fit_predict(self, X, y=None):
        """Fit, then return the nearest-centre labels of ``X`` (not stored)."""
        return self.fit(X).predict(X)

    def score(self, X, y=None):
        """Negative (untruncated) k-median cost of ``X`` for the fitted centres.

        Not differentially private: it evaluates the data it is given.
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return -float(
            kmedian_costs(
                X, self.cluster_centers_[None], metric=self.metric, chunk_size=self.chunk_size
            )[0]
        )
