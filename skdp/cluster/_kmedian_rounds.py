"""The rounds of :class:`~skdp.cluster.SubsampledExpMedian`'s box search.

Round 1 (the noisy public-grid histogram of :mod:`._box_histogram`, or the exponential
mechanism over the k-subsets of a coarse public grid), the optional private median step
(:mod:`._box_median`) and the local rounds of the subsampled exponential mechanism
(candidates from :mod:`._box_search`, costs from :mod:`._kmedian_costs`), in the order
the estimator runs them. A mixin: every public number (epsilons, sensitivities, radii,
grid sizes, candidate counts) comes from the fit's
:class:`~skdp.cluster._kmedian_plan.KMedianPlan`; every selection goes through the
estimator's ``_select``.
"""

from __future__ import annotations

import numpy as np

from skdp.cluster._box_histogram import noisy_grid_histogram, weighted_kmedian
from skdp.cluster._box_median import private_median_step
from skdp.cluster._box_search import _local_candidates, coarse_grid_points, local_cost_units
from skdp.cluster._kmedian_costs import (
    _all_subsets,
    _exact_costs,
    _uniform_subsets,
    subset_cost_units,
)

__all__ = ["BoxSearchRounds"]


class BoxSearchRounds:
    """The box search of :class:`~skdp.cluster.SubsampledExpMedian` (``bounds`` without
    ``candidates`` and ``n_rounds != 1``), as methods of the estimator."""

    def _box_search(self, X, plan, rng):
        """Multi-round subsampled exponential mechanism on the public box.

        Round 1: a noisy public-grid histogram and a weighted k-median of it
        (``first_round="histogram"``), or the exponential mechanism over the k-subsets of
        a coarse public grid (``_grid_round``). Then, when the plan says so, a private
        Lloyd step of k-medians (:mod:`._box_median`). Then the local rounds: the
        subsampled exponential mechanism over candidate sets drawn around the previous
        round's (private) choice by ``_local_candidates``; local round ``t`` is
        ``epsilon_t``-DP with quality ``-sum_x min(Delta, d(x, F))`` and exponent
        ``epsilon_t / (2 Delta_t)``; the rounds compose to ``epsilon``. No candidate
        depends on ``X`` except through earlier private outputs.
        """
        search = plan.search
        if search.first_round == "histogram":
            current = self._histogram_round(X, plan, rng)
        else:
            current = self._grid_round(X, plan, rng)
        if search.median_step:
            # a private Lloyd step of k-medians within one round-1 cell of each coordinate
            current = private_median_step(
                X,
                current,
                search.lo,
                search.hi,
                search.spacing,
                plan.round_epsilons[1],
                plan.metric,
                rng,
                sensitivity=plan.round_sensitivities[1],
            )
        return self._local_rounds(X, plan, current, rng)

    def _histogram_round(self, X, plan, rng):
        """Round 1: noisy counts on a public grid, then a weighted k-median on them."""
        search = plan.search
        P, index, counts = noisy_grid_histogram(
            X,
            search.lo,
            search.hi,
            search.cells,
            plan.round_epsilons[0],
            rng,
            sensitivity=plan.round_sensitivities[0],
            secure_mode=self.secure_mode,
        )
        return weighted_kmedian(
            P,
            index,
            counts,
            plan.n_clusters,
            metric=plan.metric,
            truncate=plan.cost_sensitivity,
            rng=rng,
        )

    def _grid_round(self, X, plan, rng):
        """Round 1 over the k-subsets of a coarse public grid (``first_round="grid"``);
        the private points are scored at the centres of their cells of a finer grid."""
        search, k = plan.search, plan.n_clusters
        lo, hi = search.lo, search.hi
        V1 = coarse_grid_points(lo, hi, search.coarse_axis, search.coarse_points, rng)
        if search.coarse_enumerated:
            subsets = _all_subsets(V1.shape[0], k)
        else:
            subsets = _uniform_subsets(V1.shape[0], k, search.coarse_sets, rng)
        snap = (lo, hi, search.snap_cells)
        return V1[self._select_subset(X, V1, subsets, plan.round_epsilons[0], plan, rng, snap)]

    def _quality(self, units, X, plan, **candidates):
        """A round's quality: minus the exact truncated costs of its ``candidates``
        (:func:`_exact_costs` of ``units``, cap ``plan.cost_sensitivity``)."""
        return -_exact_costs(
            units,
            X,
            metric=plan.metric,
            truncate=plan.cost_sensitivity,
            chunk_size=self.chunk_size,
            **candidates,
        )

    def _select_subset(self, X, V, subsets, epsilon, plan, rng, snap=None):
        """The exponential mechanism over index ``subsets`` of the public points ``V``
        (quality: the negative truncated cost, exponent ``epsilon / (2 Delta_1)`` with
        ``Delta_1 = plan.round_sensitivities[0]``, the cap ``Delta`` per row; ``snap``
        as :func:`subset_cost_units`'s): the chosen subset."""
        q = self._quality(subset_cost_units, X, plan, V=V, subsets=subsets, snap=snap)
        return subsets[self._select(q, epsilon, plan.round_sensitivities[0], rng)]

    def _local_rounds(self, X, plan, current, rng):
        """The local rounds of the box search, one per radius of the plan, from the
        (private) choice ``current`` of the earlier rounds (the plan's last rounds)."""
        search = plan.search
        first = plan.n_rounds - len(search.radii)
        for t, radius in enumerate(search.radii, start=first):
            cands = _local_candidates(
                current, search.lo, search.hi, radius, search.sets_per_round, rng
            )
            q = self._quality(local_cost_units, X, plan, prev=current, cands=cands)
            current = cands[
                self._select(q, plan.round_epsilons[t], plan.round_sensitivities[t], rng)
            ]
        return np.asarray(current, dtype=float).copy()
