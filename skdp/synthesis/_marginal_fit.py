"""The steps of :meth:`DPMarginalSynthesizer.fit <skdp.synthesis.DPMarginalSynthesizer.fit>`
after its :class:`~skdp.synthesis._marginal_plan.MarginalPlan`: the noisy 1-way release
and its compression (both selections), MST's tree (selection, 2-way release,
estimation), and the one ``_record`` that writes the fitted attributes. AIM's rounds are
:func:`skdp.synthesis._marginal_aim.fit_rounds`.

Every step reads the rows only through the statistic interface of
:mod:`skdp.synthesis._marginal_counts` (in memory or Dask) and draws its noise with the
plan's scales from its own stream of the fit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from skdp.synthesis._marginal_clip import measure_clipped
from skdp.synthesis._marginal_model import (
    _estimate_tree,
    _simplex,
    _weighted_total,
    compress_one_way,
    select_tree,
)
from skdp.synthesis._marginal_plan import log_stage

__all__ = ["MarginalFitMixin", "OneWayRelease", "TreeModel", "fit_tree", "release_one_way"]


@dataclass(frozen=True)
class OneWayRelease:
    """The noisy 1-way release and its compression (post-processing), per column.

    ``noisy``: the released counts over the bins; ``supports``: the bins kept;
    ``maps``: bin -> compressed value; ``csizes``: the compressed domain sizes;
    ``compressed`` and ``variances``: the compressed noisy counts and their noise
    variances; ``totals`` and ``total_variances``: each column's noisy total and its
    variance (the row count is estimated from them, never read)."""

    noisy: list
    supports: list
    maps: list
    csizes: list
    compressed: list
    variances: list
    totals: list
    total_variances: list


def release_one_way(stats, plan, rng, *, compress):
    """Every 1-way marginal with one noise draw for all cells, then MST's compression
    (``compress``: merge the cells below three noise standard deviations)."""
    counts = stats.one_way()
    noisy = counts + plan.noise(len(counts), plan.one_way_scale, rng)
    del counts
    sizes, d = stats.sizes, len(stats.sizes)
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    y1 = [noisy[offsets[j] : offsets[j + 1]] for j in range(d)]
    log_stage(plan, "one_way")
    sd1 = plan.one_way_sd
    supports, maps, csizes, y1c, v1c = compress_one_way(y1, sizes, sd1, compress)
    totals = [float(y1[j].sum()) for j in range(d)]
    t_var = [sizes[j] * sd1**2 for j in range(d)]
    return OneWayRelease(y1, supports, maps, csizes, y1c, v1c, totals, t_var)


@dataclass(frozen=True)
class TreeModel:
    """MST's tree: the chosen ``edges`` (in Kruskal's order), their noisy 2-way counts
    ``noisy``, the estimated node and edge distributions and the total ``n_hat``."""

    edges: list
    noisy: list
    nodes: list
    tables: list
    n_hat: float

    @property
    def measured(self):
        """Whether a 2-way marginal was measured."""
        return bool(self.edges)

    def fitted(self, names, plan):
        """The model's fitted attributes (``None`` for AIM's)."""
        pairs = [(names[a], names[b]) for a, b in self.edges]
        return {
            "noisy_two_way_": dict(zip(pairs, self.noisy, strict=True)),
            "tree_": pairs,
            "node_marginals_": {c: self.nodes[j] for j, c in enumerate(names)},
            "edge_marginals_": dict(zip(pairs, self.tables, strict=True)),
            "n_records_": float(self.n_hat),
            **dict.fromkeys(("cliques_", "noisy_marginals_", "clique_marginals_", "rounds_")),
            "_aim_order": None,
        }


def fit_tree(stats, one_way, plan, streams, clipped=None):
    """MST's steps 3-5: the spanning tree (exponential mechanism inside Kruskal, scored
    against the independent model of the noisy 1-way release), its 2-way marginals
    with one noise draw for all cells, and the consistent tree model (post-processing).
    ``clipped`` (a :class:`~skdp.synthesis._marginal_clip.ClippedCounts`): the 2-way
    marginals are measured on the per-patient clipped counts instead
    (``contribution="clip"``)."""
    csizes, y1c = one_way.csizes, one_way.compressed
    d = len(csizes)
    n_hat1 = _weighted_total(one_way.totals, one_way.total_variances)
    p1 = [_simplex(y1c[j] / n_hat1) for j in range(d)]
    pairs = [(a, b) for a in range(d) for b in range(a + 1, d)]
    counts = stats.marginals(pairs, one_way.maps, csizes)  # every pair's exact counts
    rng = streams["select"]
    edges = select_tree(
        None, csizes, p1, n_hat1, plan.select_epsilon, rng, counts, plan.score_sensitivity
    )
    log_stage(plan, "selection")
    chosen = [counts[pairs.index(e)] for e in edges]
    del counts
    sd2 = plan.two_way_sd
    if clipped is None:
        y2 = _measure_edges(chosen, edges, csizes, plan, streams["two_way"])
    else:
        y2, sd2 = _measure_edges_clipped(clipped, edges, one_way, plan, streams, n_hat1)
    log_stage(plan, "two_way")
    nodes, tables, n_hat = _estimate_tree(
        y1c,
        one_way.variances,
        one_way.totals,
        one_way.total_variances,
        y2,
        edges,
        csizes,
        sd2,
    )
    return TreeModel(edges, y2, nodes, tables, n_hat)


def _measure_edges(chosen, edges, csizes, plan, rng):
    """The noisy 2-way counts of the tree's ``edges`` (exact counts ``chosen``), one
    noise draw for all cells."""
    cells = int(sum(len(c) for c in chosen))
    noise = plan.noise(cells, plan.two_way_scale, rng)
    y2, pos = [], 0
    for (a, b), cnt in zip(edges, chosen, strict=True):
        size = csizes[a] * csizes[b]
        y2.append((cnt + noise[pos : pos + size]).reshape(csizes[a], csizes[b]))
        pos += size
    return y2


def _measure_edges_clipped(clipped, edges, one_way, plan, streams, n_hat):
    """The noisy 2-way counts of ``edges`` on the per-patient clipped counts, each
    brought to the total ``n_hat`` (:func:`~skdp.synthesis._marginal_clip.
    measure_clipped`), and their noise standard deviation (the mean factor's)."""
    csizes = one_way.csizes
    scaled = clipped.marginals(edges, one_way.maps, csizes)
    y2, factors = [], []
    for (a, b), w in zip(edges, scaled, strict=True):
        y, f = measure_clipped(w, plan.two_way_scale, plan, streams["two_way"], n_hat)
        y2.append(y.reshape(csizes[a], csizes[b]))
        factors.append(f)
    return y2, plan.two_way_sd * (float(np.mean(factors)) if factors else 1.0)


class MarginalFitMixin:
    """The one place that writes the fitted attributes of
    :class:`~skdp.synthesis.DPMarginalSynthesizer`."""

    def _record(self, plan, schema, discs, one_way, model):
        """Write the fitted attributes: the grid and the noisy 1-way release, the
        model's (:class:`TreeModel` or AIM's ``RoundsModel``), the noise and the
        privacy facts, which come from ``plan`` alone."""
        names = list(schema.names)
        self.selection_ = plan.selection
        self.schema_ = schema
        self.bounds_ = {c.name: c.bounds for c in schema if c.is_numeric}
        self.n_bins_ = {c: discs[c].n_levels for c in names}
        self.bin_edges_ = {c.name: discs[c.name].edges.copy() for c in schema if c.is_numeric}
        self.noisy_one_way_ = {c: one_way.noisy[j].copy() for j, c in enumerate(names)}
        self.supports_ = {c: one_way.supports[j] for j, c in enumerate(names)}
        for name, value in model.fitted(names, plan).items():
            setattr(self, name, value)
        self._discs = discs
        self.mechanism_ = plan.mechanism
        self.noise_scale_ = {  # AIM: the first round's 2-way scale
            "one_way": float(plan.one_way_scale),
            "two_way": float(plan.two_way_scale) if model.measured else 0.0,
        }
        # the per-round selection epsilon, for the deprecated noise_ (public numbers)
        self._select_epsilon = float(plan.select_epsilon) if model.measured else math.inf
        self.rho_ = plan.rho
        self._max_rows_per_group = plan.max_rows_per_group  # privacy_unit_, max_rows_...
        self.rho_breakdown_ = plan.rho_breakdown()
        self._record_privacy_spent(plan.epsilon_spent, plan.delta_spent, breakdown=plan.breakdown())
        return self
