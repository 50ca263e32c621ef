"""The DP clause search of :class:`~skdp.ilp.DPILPClassifier` (Lantz 2016 ch. 6).

:func:`search_clause`: one DP reduction of a bottom clause, the smart search (Alg. 4:
level by level with pruning) or the naive one (Alg. 3: the whole lattice at once), on
the true satisfy-counts of :func:`_counts` (or of a Dask statistic) plus two-sided
geometric noise.
"""

from __future__ import annotations

import functools
import itertools
import math
from typing import NamedTuple

import numpy as np

from skdp.mechanisms import two_sided_geometric
from skdp.mechanisms.sensitivity import ilp_query_alpha

__all__ = [
    "CAUTIOUS_LEVEL",
    "CLAUSE_SCORES",
    "NOISE_LEVEL",
    "noise_penalty",
    "score_penalty",
    "search_clause",
]

#: about this many (example, clause) satisfy-flags are computed in one matrix product
_CHUNK = 1 << 22
#: the values of ``clause_score``
CLAUSE_SCORES = ("noise_aware", "noisy", "cautious")
#: ``noise_penalty``'s level: about the chance that noise alone lifts some clause of a
#: level by more than its penalty; 0.5 makes the penalty (a bound on) the median of the
#: level's largest noise error (public, fixed)
NOISE_LEVEL = 0.5
#: ``clause_score="cautious"``'s rank level: a clause of length ``i >= 1`` outranks the
#: empty clause only by more than its level's largest noise error exceeds with
#: probability about 0.05 (public, fixed)
CAUTIOUS_LEVEL = 0.05


def noise_penalty(alpha, beta, level=NOISE_LEVEL):
    """The coverage ``t`` that the largest of ``beta`` noisy-coverage errors exceeds
    with probability about ``level``.

    A clause's noisy coverage ``P' - N'`` carries the difference of two independent
    two-sided geometric variables of parameter ``alpha``; with their Laplace
    approximation (scale ``b = 1 / alpha``) the difference exceeds ``t = u b`` with
    probability ``(2 + u) exp(-u) / 4``, and a union bound over the level's ``beta``
    clauses sets ``beta (2 + u) exp(-u) / 4 = level``. Returns ``0.0`` where no
    ``u >= 0`` is needed, and for ``alpha = inf`` (no noise).
    """
    if math.isinf(alpha):
        return 0.0
    target = math.log(level) - math.log(beta)  # log of the per-clause tail

    def excess(u):  # decreasing in u
        return math.log((2.0 + u) / 4.0) - u - target

    if excess(0.0) <= 0.0:
        return 0.0
    lo, hi = 0.0, 1.0
    while excess(hi) > 0.0:
        hi *= 2.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if excess(mid) > 0.0 else (lo, mid)
    return hi / alpha


def score_penalty(clause_score, alpha, beta, size, accept=False):
    """What a clause of length ``size`` loses from its noisy coverage in the rank of
    ``clause_score`` (``accept=True``: the coverage it must exceed to enter the
    theory), its level holding ``beta`` clauses measured with noise of parameter
    ``alpha`` (public inputs only).

    ``"noisy"``: nothing (the thesis). ``"noise_aware"``: :func:`noise_penalty` at
    :data:`NOISE_LEVEL` in the rank, nothing to enter. ``"cautious"``: nothing for the
    empty clause (one clause, an unbiased noisy coverage whose sign is the noisy
    majority class); for a longer clause, whose level's largest noisy coverage is
    biased upward by the selection, :func:`noise_penalty` at :data:`CAUTIOUS_LEVEL` in
    the rank and at :data:`NOISE_LEVEL` to enter.
    """
    if clause_score == "noise_aware" and not accept:
        return noise_penalty(alpha, beta)
    if clause_score == "cautious" and size > 0:
        return noise_penalty(alpha, beta, NOISE_LEVEL if accept else CAUTIOUS_LEVEL)
    return 0.0


def _counts(Xpos, Xneg, clauses):
    """True satisfy-counts (q+_h(E+), q_h(E-)) for a list of equal-length clauses."""
    P = np.empty(len(clauses), dtype=np.int64)
    N = np.empty(len(clauses), dtype=np.int64)
    if not clauses:
        return P, N
    size = len(clauses[0])
    if size == 0:
        P[:] = Xpos.shape[0]
        N[:] = Xneg.shape[0]
        return P, N
    n_atoms = Xpos.shape[1]
    # at most about _CHUNK (rows x clauses) products held at once
    step = max(1, _CHUNK // max(Xpos.shape[0], Xneg.shape[0], 1))
    for c0 in range(0, len(clauses), step):
        block = np.asarray(clauses[c0 : c0 + step], dtype=np.intp)
        M = np.zeros((n_atoms, block.shape[0]), dtype=np.int32)
        np.put_along_axis(M, block.T, 1, axis=0)
        P[c0 : c0 + step] = ((Xpos @ M) == size).sum(axis=0)
        N[c0 : c0 + step] = ((Xneg @ M) == size).sum(axis=0)
    return P, N


def _next_level(kept, size):
    """Apriori candidates of length ``size``: every (size-1)-subset must be kept."""
    kept_set = set(kept)
    groups = {}
    for a in kept:  # join clauses that share their first size-2 atoms
        groups.setdefault(a[:-1], []).append(a[-1])
    out = []
    for prefix, lasts in groups.items():
        lasts = sorted(lasts)
        for i, x in enumerate(lasts):
            for y in lasts[i + 1 :]:
                c = prefix + (x, y)
                if all(c[:j] + c[j + 1 :] in kept_set for j in range(size - 2)):
                    out.append(c)
    return sorted(out)


def search_clause(
    Xpos,
    Xneg,
    bottom_clause,
    *,
    epsilon,
    max_clause_length,
    search="smart",
    min_pos=1,
    rng=None,
    counts=None,
    max_rows_per_group=None,
    secure_mode=False,
    clause_score="noisy",
):
    """One DP reduction of a bottom clause (Alg. 4 "smart" or Alg. 3 "naive").

    Parameters
    ----------
    Xpos, Xneg : ndarray of 0/1 of shape (n_pos, n_atoms), (n_neg, n_atoms)
        Positive and negative examples.
    bottom_clause : sequence of int
        Public atoms the clause may use.
    epsilon : float
        Budget of this reduction (``math.inf``: no noise).
    max_clause_length : int
        ``l``; levels ``0..l`` are searched.
    search : {"smart", "naive"}
    min_pos : int
        Smart search prunes the supersets of ``h`` when ``P' < min_pos`` or ``P'`` is not
        above the best noisy coverage so far.
    rng : numpy.random.Generator
    counts : callable, optional
        ``counts(clauses) -> (P, N)``, the true satisfy-counts of a list of equal-length
        clauses; replaces ``Xpos``/``Xneg`` (which may then be ``None``). Used for Dask
        input, whose counts are summed per partition.
    max_rows_per_group : int or None, default=None
        ``k`` when the privacy unit is a patient of at most ``k`` rows: every batch's L1
        sensitivity, hence its noise, is ``k`` times the row's
        (:func:`~skdp.mechanisms.sensitivity.ilp_query_alpha`).
    secure_mode : bool, default=False
        Draw the geometric noise from ``os.urandom`` instead of ``rng``.
    clause_score : {"noisy", "noise_aware", "cautious"}, default="noisy"
        How the smart search ranks clauses: the noisy coverage (Alg. 4) or the noisy
        coverage minus its level's :func:`score_penalty`. The
        naive search draws one noise scale for the whole lattice, where both rank
        alike.

    Returns
    -------
    best : tuple of int
        The clause with the best score (shortest, then lexicographically first, among
        ties).
    best_coverage : float
        Its noisy coverage ``P' - N'`` (without the penalty).
    ledger : list of dict
        One entry per batch of queries: ``level``, ``n_clauses`` (beta_i),
        ``epsilon`` (the batch's budget) and ``alpha`` (inverse scale of each count's
        noise).
    evaluated : list of tuple
        Every clause evaluated, in order.
    pruned : list of tuple
        Every clause whose supersets were deleted.
    """
    atoms = sorted(int(a) for a in bottom_clause)
    count = counts if counts is not None else functools.partial(_counts, Xpos, Xneg)
    run = _naive_search if search == "naive" else _smart_search
    noise = _Noise(rng, max_rows_per_group, bool(secure_mode), clause_score)
    return run(count, atoms, int(max_clause_length), epsilon, min_pos, noise)


class _Noise(NamedTuple):
    """How the counts' noise is drawn: ``rng`` (or ``os.urandom`` when ``secure``), with
    ``alpha`` for a privacy unit of at most ``rows`` rows (``None``: one row); ``score``:
    the smart search's rank (``clause_score``, :func:`score_penalty`)."""

    rng: object
    rows: int | None
    secure: bool
    score: str = "noisy"


def _noisy_counts(count, level, alpha, noisy, noise):
    """``(P', N')``: the true satisfy-counts of the clauses of ``level``, each with
    two-sided geometric noise ``G(alpha)`` when ``noisy``."""
    P, N = count(level)
    P, N = P.astype(float), N.astype(float)
    if noisy:
        draw = dict(alpha=alpha, rng=noise.rng, secure_mode=noise.secure)
        P += two_sided_geometric(len(level), **draw)
        N += two_sided_geometric(len(level), **draw)
    return P, N


def _naive_search(count, atoms, ell, epsilon, min_pos, noise):
    """Alg. 3: every clause of the lattice, ``alpha = epsilon / (k |lattice|)`` (``k =
    1`` per row); no pruning (``min_pos`` unused)."""
    noisy = not math.isinf(epsilon)
    lattice = [c for i in range(ell + 1) for c in itertools.combinations(atoms, i)]
    alpha = ilp_query_alpha(epsilon, len(lattice), max_rows_per_group=noise.rows)
    ledger = [
        {
            "level": "all",
            "n_clauses": len(lattice),
            "epsilon": float(epsilon),
            "alpha": float(alpha),
        }
    ]
    evaluated, best, best_cov = [], None, -math.inf
    for size in range(ell + 1):
        level = [c for c in lattice if len(c) == size]
        if not level:
            continue
        P, N = _noisy_counts(count, level, alpha, noisy, noise)
        for c, p, n in zip(level, P, N, strict=True):
            evaluated.append(c)
            if p - n > best_cov:
                best, best_cov = c, p - n
    return best, best_cov, ledger, evaluated, []


def _smart_search(count, atoms, ell, epsilon, min_pos, noise):
    """Alg. 4: level ``i`` of the lattice with ``epsilon / (l + 1)``, split over its
    ``beta_i`` clauses (and ``k`` rows per patient); the supersets of a pruned clause
    are never evaluated."""
    noisy = not math.isinf(epsilon)
    ledger, evaluated, pruned = [], [], []
    best, best_cov, best_score = None, -math.inf, -math.inf
    eps_level = epsilon / (ell + 1)
    level, kept = [()], []
    for size in range(ell + 1):
        if size == 1:
            level = [(a,) for a in atoms] if () in kept else []
        elif size > 1:
            level = _next_level(kept, size)
        if not level:
            ledger.append({"level": size, "n_clauses": 0, "epsilon": eps_level, "alpha": None})
            kept = []
            continue
        beta = len(level)
        # = eps_level / (k beta)
        alpha = ilp_query_alpha(epsilon, beta, n_levels=ell + 1, max_rows_per_group=noise.rows)
        ledger.append(
            {"level": size, "n_clauses": beta, "epsilon": float(eps_level), "alpha": float(alpha)}
        )
        P, N = _noisy_counts(count, level, alpha, noisy, noise)
        penalty = score_penalty(noise.score, alpha, beta, size) if noisy else 0.0
        kept = []
        for c, p, n in zip(level, P, N, strict=True):
            evaluated.append(c)
            if p - n - penalty > best_score:
                best, best_cov, best_score = c, p - n, p - n - penalty
            # supersets cannot cover more positives: P' bounds their coverage
            if p < min_pos or p <= best_cov:
                pruned.append(c)
            else:
                kept.append(c)
    return best, best_cov, ledger, evaluated, pruned
