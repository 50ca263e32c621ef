"""``sample``, ``score_samples`` and ``score`` of
:class:`~skdp.synthesis.DPMarginalSynthesizer`: post-processing of the fitted noisy
marginals (the tree of the MST selection, or the junction tree of the AIM rounds)."""

from __future__ import annotations

from numbers import Integral

import numpy as np

from skdp.synthesis._histogram_groups import COUNT_SYNTHESIS_DOCS
from skdp.synthesis._marginal_model import _draw, _draw_systematic, rare_law, tree_orientation
from skdp.utils._docstrings import insert_docs
from skdp.utils._random import make_rng
from skdp.utils._sklearn_compat import check_is_fitted
from skdp.utils.schema import TabularEncoder, assemble

__all__ = ["MarginalSamplingMixin"]


class MarginalSamplingMixin:
    """Sampling and likelihood of the fitted marginal model (reads fitted attributes
    only; nothing here touches the training rows)."""

    def _compressed_draw(self, m, rng):
        """Compressed values of ``m`` rows, drawn ancestrally from the fitted model."""
        names = list(self.schema_.names)
        comp = [None] * len(names)
        draw = _draw_systematic if self.sampling == "systematic" else _draw
        if getattr(self, "_aim_order", None) is not None:
            zeros = np.zeros(m, dtype=np.int64)
            for sep, new, cdf in self._aim_order:
                parent = (
                    np.ravel_multi_index(
                        tuple(comp[j] for j in sep), [self._csizes[j] for j in sep]
                    )
                    if sep
                    else zeros
                )
                flat = draw(rng, cdf, parent)
                vals = np.unravel_index(flat, [self._csizes[j] for j in new])
                for j, v in zip(new, vals, strict=True):
                    comp[j] = np.asarray(v, dtype=np.int64)
            return comp
        root = self.node_marginals_[names[0]]
        comp[0] = draw(rng, np.cumsum(root)[None, :], np.zeros(m, dtype=np.int64))
        for u, v, cond in tree_orientation(names, self.edge_marginals_, self.node_marginals_):
            comp[v] = draw(rng, np.cumsum(cond, axis=1), comp[u])
        return comp

    # ---------------------------------------------------------------- sample

    def sample(self, n_samples=1, *, random_state=None):
        """Draw synthetic rows (post-processing of the noisy marginals).

        Parameters
        ----------
        n_samples : int, default=1
            Number of rows. Each row is drawn from the fitted model; with
            ``sampling="systematic"`` (the default) the rows are drawn jointly so that
            the counts of every column, given the columns it is drawn after, are the
            model's expected counts rounded up or down; ``sampling="iid"`` draws them
            independently.
        random_state : None, int, Generator or SeedSequence, default=None
            ``None`` draws fresh OS entropy (the fitted model keeps no generator); a
            value makes the draw reproducible.

        Returns
        -------
        DataFrame (same columns and dtypes as the training data) or ndarray
        """
        check_is_fitted(self)
        if isinstance(n_samples, bool) or not isinstance(n_samples, Integral | np.integer):
            raise ValueError("n_samples must be a non-negative int")
        m = int(n_samples)
        if m < 0:
            raise ValueError("n_samples must be a non-negative int")
        from skdp.utils.validation import check_n_samples

        check_n_samples(m, len(self.schema_.names))
        rng = make_rng(random_state)
        names = list(self.schema_.names)
        comp = self._compressed_draw(m, rng)
        codes = []
        for j, c in enumerate(names):
            sup = self.supports_[c]
            kept = np.flatnonzero(sup)
            rare = np.flatnonzero(~sup)
            bins = np.empty(m, dtype=np.int64)
            is_rare = comp[j] >= len(kept)
            bins[~is_rare] = kept[comp[j][~is_rare]]
            if is_rare.any():
                w = rare_law(self.noisy_one_way_[c], self.supports_[c])
                bins[is_rare] = rare[
                    np.minimum(
                        np.searchsorted(np.cumsum(w), rng.random(int(is_rare.sum())) * w.sum()),
                        len(rare) - 1,
                    )
                ]
            codes.append(self._discs[c].values(bins, rng))
        encoder = TabularEncoder(self.schema_, categorical="ordinal")
        return assemble(self.schema_, encoder.decode_codes(codes))

    # ----------------------------------------------------------------- score
    @insert_docs(**COUNT_SYNTHESIS_DOCS)
    def score_samples(self, X):
        """Log-likelihood of each row under the tree model.

        ``log p(x) = log p(root) + sum log p(child | parent)`` over the compressed
        values (each factor mixed with weight ``smoothing`` with the uniform law),
        plus ``log`` of the merged bin's probability given a rare value, minus ``log``
        of the bin widths of numeric columns (uniform within a bin; counting measure
        for integers). ``-inf`` for numeric values outside the bounds.

        {score_samples_sections}
        """
        C, outside = self._scoring_codes(X)
        names = list(self.schema_.names)
        s = float(self.smoothing)
        logp = np.zeros(len(C))
        comp = []
        for j, c in enumerate(names):
            bins = self._discs[c].index(C[:, j])
            sup = self.supports_[c]
            cmap = np.full(len(sup), int(sup.sum()), dtype=np.int64)
            cmap[sup] = np.arange(int(sup.sum()))
            comp.append(cmap[bins])
            if not sup.all():
                law = np.zeros(len(sup))
                law[~sup] = rare_law(self.noisy_one_way_[c], self.supports_[c])
                with np.errstate(divide="ignore"):
                    logp += np.where(~sup[bins], np.log(law[bins]), 0.0)
            logp -= self._discs[c].log_width(bins)
        if getattr(self, "_aim_order", None) is not None:
            with np.errstate(divide="ignore"):
                for (sep, new, _), cond in zip(self._aim_order, self._aim_cond, strict=True):
                    size = [self._csizes[j] for j in sep]
                    parent = np.ravel_multi_index(tuple(comp[j] for j in sep), size) if sep else 0
                    child = np.ravel_multi_index(
                        tuple(comp[j] for j in new), [self._csizes[j] for j in new]
                    )
                    logp += np.log((1 - s) * cond[parent, child] + s / cond.shape[1])
            logp[outside] = -np.inf
            return logp
        root = self.node_marginals_[names[0]]
        with np.errstate(divide="ignore"):
            logp += np.log((1 - s) * root[comp[0]] + s / len(root))
            for u, v, cond in tree_orientation(names, self.edge_marginals_, self.node_marginals_):
                k = cond.shape[1]
                logp += np.log((1 - s) * cond[comp[u], comp[v]] + s / k)
        logp[outside] = -np.inf
        return logp

    def score(self, X, y=None):
        """Mean log-likelihood of ``X`` under the tree model."""
        return float(np.mean(self.score_samples(X)))
