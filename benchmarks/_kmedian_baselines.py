"""k-median baselines for ``benchmarks/kmedian.py`` (Lantz 2016, §8.3.1).

Benchmark code, not part of the skdp package (it was ``skdp.cluster._baselines``); the
benchmark script imports it from its own folder. All work on public candidate points ``V``
and a private point set ``X`` through the distance matrix ``D = d(X, V)`` (shape
``(n_private, |V|)``).

* ``random_centers`` / ``random_kpp_centers``: data-agnostic (DP for any epsilon).
* ``gupta_local_search``: Gupta et al. (2010) private local 1-swap search, as the
  thesis summarises it (Lantz 2016, §8.3.1.1): ``T = ceil(6 k ln |V|)`` swap steps and a final
  selection, each an exponential mechanism with budget ``epsilon / (T + 1)``.
* ``local_search``: non-private 1-swap local search (Arya et al. 2004), best of
  ``n_restarts`` runs; ``optimal_k2``: brute force for ``k = 2``.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from skdp.cluster._kmedian_costs import _kpp_subsets, _subset_costs_from_distances, _uniform_subsets
from skdp.mechanisms import exponential_mechanism

__all__ = [
    "all_subset_costs",
    "gupta_local_search",
    "local_search",
    "optimal_k2",
    "random_centers",
    "random_kpp_centers",
    "subset_cost",
]


def subset_cost(D, subset):
    """Untruncated cost of one centre index set."""
    return float(D[:, list(subset)].min(axis=1).sum())


def all_subset_costs(D, k, *, truncate=np.inf, chunk_size=1 << 22):
    """Costs of every k-subset of ``range(|V|)`` (lexicographic order)."""
    subsets = np.array(list(itertools.combinations(range(D.shape[1]), k)), dtype=np.intp)
    return subsets, _subset_costs_from_distances(D, subsets, truncate, chunk_size)


def random_centers(n_points, k, rng):
    return _uniform_subsets(n_points, k, 1, rng)[0]


def random_kpp_centers(V, k, rng, weighting="square"):
    return _kpp_subsets(V, k, 1, rng, "euclidean", weighting)[0]


def _swap_costs(D, F):
    """Cost of every swap (x in F -> y not in F): array (k, |V|), inf where y in F."""
    k = len(F)
    n_points = D.shape[1]
    out = np.full((k, n_points), np.inf)
    for i in range(k):
        rest = [F[j] for j in range(k) if j != i]
        base = D[:, rest].min(axis=1) if rest else np.full(D.shape[0], np.inf)
        out[i] = np.minimum(base[:, None], D).sum(axis=0)
    out[:, list(F)] = np.inf
    return out


def gupta_local_search(D, k, *, epsilon, sensitivity, rng, n_steps=None):
    """Private local search of Gupta et al. (2010), epsilon-DP under add/remove/move.

    Each of the ``T`` swap choices and the final choice among ``F_1..F_T`` is an
    exponential mechanism with quality ``-cost`` (sensitivity ``Delta``, the costs are
    truncated at ``Delta``) and budget ``epsilon / (T + 1)``.
    """
    n_points = D.shape[1]
    T = n_steps if n_steps is not None else math.ceil(6 * k * math.log(n_points))
    eps_step = epsilon / (T + 1)
    Dt = np.minimum(D, sensitivity)
    F = list(random_centers(n_points, k, rng))
    history, costs = [], []
    for _ in range(T):
        sc = _swap_costs(Dt, F)
        flat = np.flatnonzero(np.isfinite(sc))
        j = exponential_mechanism(
            -sc.ravel()[flat], epsilon=eps_step, sensitivity=sensitivity, rng=rng
        )
        i, y = np.unravel_index(flat[j], sc.shape)
        F[i] = int(y)
        history.append(sorted(F))
        costs.append(subset_cost(Dt, F))
    j = exponential_mechanism(-np.array(costs), epsilon=eps_step, sensitivity=sensitivity, rng=rng)
    return np.array(history[j])


def local_search(D, k, *, rng, n_restarts=10, max_iter=100):
    """Non-private best-improvement 1-swap local search, best of ``n_restarts``."""
    best, best_cost = None, np.inf
    for _ in range(n_restarts):
        F = list(random_centers(D.shape[1], k, rng))
        cost = subset_cost(D, F)
        for _ in range(max_iter):
            sc = _swap_costs(D, F)
            i, y = np.unravel_index(np.argmin(sc), sc.shape)
            if sc[i, y] >= cost - 1e-12:
                break
            F[i] = int(y)
            cost = sc[i, y]
        if cost < best_cost:
            best, best_cost = sorted(F), cost
    return np.array(best)


def optimal_k2(D):
    """Exact optimum for k = 2 by enumeration."""
    subsets, costs = all_subset_costs(D, 2)
    return subsets[int(np.argmin(costs))]
