"""Harrell's concordance index, O(n log n) (a non-private evaluation, like sklearn's
``score``)."""

from __future__ import annotations

import numpy as np

__all__ = ["concordance_index"]


class _Fenwick:
    """Counts over ``size`` ranks: add one at a rank, count the ranks ``< r``."""

    def __init__(self, size):
        self.tree = [0] * (size + 1)

    def add(self, rank):
        i = rank + 1
        tree = self.tree
        while i < len(tree):
            tree[i] += 1
            i += i & -i

    def below(self, rank):
        """The number of added ranks strictly below ``rank``."""
        i, total, tree = rank, 0, self.tree
        while i > 0:
            total += tree[i]
            i -= i & -i
        return total


def concordance_index(event, time, risk):
    """Harrell's C: the share of comparable pairs whose riskier member fails first.

    A pair ``(i, j)`` is comparable when ``i`` has an event and ``t_i < t_j``, or
    ``t_i = t_j`` and ``j`` is censored (scikit-survival's
    ``concordance_index_censored``); it is concordant when ``risk_i > risk_j`` and
    counts one half when the risks tie. Computed in ``O(n log n)`` with a Fenwick tree
    over the risk ranks, sweeping the times from the last.

    Parameters
    ----------
    event : ndarray of bool, shape (n,)
    time : ndarray of float, shape (n,)
    risk : ndarray of float, shape (n,)
        Higher means riskier (earlier failure).

    Returns
    -------
    float

    Raises
    ------
    ValueError
        No comparable pair (no event before the last time), or a non-finite risk.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.survival._cox_score import concordance_index
    >>> concordance_index(np.array([True, True, False]), np.array([1.0, 2.0, 3.0]),
    ...                   np.array([3.0, 2.0, 1.0]))
    1.0
    """
    event = np.asarray(event, dtype=bool)
    time = np.asarray(time, dtype=np.float64)
    risk = np.asarray(risk, dtype=np.float64)
    if not np.isfinite(risk).all():
        raise ValueError("the risk scores must be finite")
    _, rank = np.unique(risk, return_inverse=True)
    rank = rank.ravel()
    tree = _Fenwick(int(rank.max(initial=0)) + 1)
    order = np.lexsort((event, -time))  # times descending; censored first within a time
    times = time[order]
    starts = np.r_[0, np.flatnonzero(np.diff(times)) + 1, len(order)]
    numerator, denominator, inserted = 0.0, 0, 0
    for a, b in zip(starts[:-1], starts[1:], strict=True):
        group = order[a:b]
        censored = group[~event[group]]
        for j in censored:  # comparable to the events at the same time
            tree.add(int(rank[j]))
        inserted += len(censored)
        failed = group[event[group]]
        for i in failed:
            r = int(rank[i])
            below = tree.below(r)
            ties = tree.below(r + 1) - below
            numerator += below + 0.5 * ties
            denominator += inserted
        for i in failed:
            tree.add(int(rank[i]))
        inserted += len(failed)
    if denominator == 0:
        raise ValueError("no comparable pair: the concordance needs an event before the last time")
    return float(numerator / denominator)
