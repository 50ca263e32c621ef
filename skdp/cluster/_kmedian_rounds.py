"""The rounds of :class:`~skdp.cluster.SubsampledExpMedian`'s box search.

Round 1 (the noisy public-grid histogram of :mod:`._box_histogram`, or the exponential
mechanism over the k-subsets of a coarse public grid), the optional private median step
(:mod:`._box_median`) and the local rounds of the subsampled exponential mechanism
(candidates and sensitivities from :mod:`._box_search`, costs from
:mod:`._kmedian_costs`), in the order the estimator runs them. A mixin: the methods read
the estimator's parameters and set its round facts (``first_round_``,
``first_round_cells_``, ``median_step_``, ``n_rounds_``, ``n_candidates_``,
``round_epsilons_``, ``round_sensitivities_``); every selection goes through the
estimator's ``_select``.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from skdp.cluster._box_histogram import (
    HIST_MAX_CELLS,
    HIST_SENSITIVITY,
    histogram_cells_per_axis,
    noisy_grid_histogram,
    weighted_kmedian,
)
from skdp.cluster._box_median import (
    MEDIAN_SHARE,
    median_step_applies,
    private_median_step,
    window_size,
)
from skdp.cluster._box_search import (
    DEFAULT_ROUND_CANDIDATES,
    FIRST_SHARE,
    MAX_COARSE_SETS,
    ROUND1_WORK,
    _coarse_grid,
    _local_candidates,
    box_search_schedule,
    local_cost_units,
    local_step_sensitivity,
)
from skdp.cluster._kmedian_costs import (
    FIXED_BITS,
    _exact_costs,
    _uniform_subsets,
    subset_cost_units,
)

__all__ = ["BoxSearchRounds"]


class BoxSearchRounds:
    """The box search of :class:`~skdp.cluster.SubsampledExpMedian` (``bounds`` without
    ``candidates`` and ``n_rounds != 1``), as methods of the estimator."""

    def _box_search(self, X, box, epsilon, delta, n_sched, rng):
        """Multi-round subsampled exponential mechanism on the public box.

        Round 1: a noisy public-grid histogram and a weighted k-median of it
        (``first_round="histogram"``), or the exponential mechanism over the k-subsets of
        a coarse public grid (``_grid_round``). Then, when ``median_step`` says so, a
        private Lloyd step of k-medians (:mod:`._box_median`). Then the local rounds:
        the subsampled exponential mechanism over candidate sets drawn around
        the previous round's (private) choice by ``_local_candidates``; local round ``t`` is
        ``epsilons[t]``-DP with quality ``-sum_x min(Delta, d(x, F))`` and exponent
        ``epsilons[t] / (2 Delta)``; the rounds compose to ``epsilon``. No candidate
        depends on ``X`` except through earlier private outputs.
        """
        k = self.n_clusters
        lo, hi = box
        d = lo.shape[0]
        eps_1 = epsilon * FIRST_SHARE
        g = histogram_cells_per_axis(d, n_sched, eps_1, k) if self.first_round != "grid" else None
        if self.first_round == "histogram" and g is None:
            raise ValueError(
                f'first_round="histogram" needs a grid of at most {HIST_MAX_CELLS} cells with '
                f"at least n_clusters={k} of them; {d} features are too many"
            )
        if g is not None:
            # round 1: noisy counts on a public grid, then a weighted k-median on them
            h = (hi - lo) / g
            radii, eps = box_search_schedule(h, hi - lo, epsilon, n_sched, n_rounds=self.n_rounds)
            P, index, counts = noisy_grid_histogram(X, lo, hi, g, eps[0], rng)
            current = weighted_kmedian(
                P, index, counts, k, metric=self.metric, truncate=delta, rng=rng
            )
            sens, total = [float(HIST_SENSITIVITY)], 0
            self.first_round_ = "histogram"
        else:
            grid = self._grid_round(X, box, epsilon, delta, n_sched, rng)
            current, h, radii, eps, total = grid
            sens = [float(delta)]
            self.first_round_ = "grid"
        self.first_round_cells_ = int(g) if g is not None else None
        eps = [float(e) for e in eps]
        eps_m = MEDIAN_SHARE * float(sum(eps[1:]))
        use = self.median_step is True or (
            self.median_step == "auto"
            and median_step_applies(n_sched, k, d, eps_m, window_size(h, lo, hi))
        )
        self.median_step_ = bool(use)
        if use:
            # a private Lloyd step of k-medians within one round-1 cell of each coordinate
            current = private_median_step(X, current, lo, hi, h, eps_m, self.metric, rng)
            eps = [eps[0], eps_m] + [e * (1 - MEDIAN_SHARE) for e in eps[1:]]
            sens.append(1.0)
        return self._local_rounds(X, box, delta, current, radii, eps, sens, total, rng)

    def _grid_round(self, X, box, epsilon, delta, n_sched, rng):
        """Round 1 over the k-subsets of a coarse public grid (``first_round="grid"``)."""
        k = self.n_clusters
        lo, hi = box
        metric = self.metric
        chunk = self.chunk_size
        V1, h = _coarse_grid(lo, hi, k, rng=rng)
        radii, eps = box_search_schedule(h, hi - lo, epsilon, n_sched, n_rounds=self.n_rounds)

        # round 1: coarse public grid; the private points are scored at the centres of
        # their cells of a grid twice as fine (each point's term stays in [0, Delta]) so
        # that many more subsets can be scored: all of them when that costs at most
        # ROUND1_WORK distance lookups. Always snapped, and the number of subsets from
        # public numbers only (the grid and n_sched), never from the occupied cells.
        cells = max(int(round(float(np.max((hi - lo) / np.where(h > 0, h, 1.0))))) * 2, 2)
        n_scored = min(n_sched, cells ** lo.shape[0])  # public bound on occupied cells
        n_sets = math.comb(V1.shape[0], k)
        budget = max(MAX_COARSE_SETS, ROUND1_WORK // max(n_scored * k, 1))
        if n_sets <= budget:
            subsets = np.array(list(itertools.combinations(range(V1.shape[0]), k)), dtype=np.intp)
        else:
            subsets = _uniform_subsets(V1.shape[0], k, budget, rng)
        q = -_exact_costs(
            subset_cost_units,
            X,
            V=V1,
            subsets=subsets,
            metric=metric,
            truncate=delta,
            chunk_size=chunk,
            snap=(lo, hi, cells),
        )
        current = V1[subsets[self._select(q, eps[0], delta, rng)]]
        return current, h, radii, eps, len(subsets)

    def _local_rounds(self, X, box, delta, current, radii, eps, sens, total, rng):
        """The local rounds of the box search, one per radius, from the (private) choice
        ``current`` of the earlier rounds; ``eps`` and ``sens`` list every round's
        epsilon (the local ones last) and the earlier rounds' sensitivities."""
        lo, hi = box
        metric = self.metric
        chunk = self.chunk_size
        m = DEFAULT_ROUND_CANDIDATES if self.n_candidates == "auto" else int(self.n_candidates)

        first = len(eps) - len(radii)
        for t in range(first, len(eps)):
            radius = radii[t - first]
            cands = _local_candidates(current, lo, hi, radius, m, rng)
            total += m
            q = -_exact_costs(
                local_cost_units,
                X,
                prev=current,
                cands=cands,
                metric=metric,
                truncate=delta,
                chunk_size=chunk,
            )
            # each point's rounded term moves by at most rho + 2 u (u = Delta 2^-40, one
            # grid step plus the scaling's rounding), so the quality by 2 rho + 4 u
            slack = 4.0 * math.ldexp(delta, -FIXED_BITS)
            delta_t = min(delta, local_step_sensitivity(radius, metric) + slack)
            sens.append(float(delta_t))
            current = cands[self._select(q, eps[t], delta_t, rng)]
        self.n_rounds_ = len(eps)
        self.n_candidates_ = int(total)
        self.round_epsilons_ = np.asarray(eps, dtype=float)
        self.round_sensitivities_ = np.asarray(sens)
        return np.asarray(current, dtype=float).copy()
