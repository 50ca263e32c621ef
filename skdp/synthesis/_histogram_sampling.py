"""Sampling and scoring of :class:`~skdp.synthesis.DPHistogramSynthesizer`: post-processing
of the fitted noisy, filtered histograms (nothing here reads the training rows)."""

from __future__ import annotations

import math
import warnings
from numbers import Integral

import numpy as np

from skdp.synthesis._histogram_groups import COUNT_SYNTHESIS_DOCS
from skdp.synthesis._marginal_model import _draw_systematic
from skdp.utils._docstrings import insert_docs
from skdp.utils._random import make_rng
from skdp.utils._sklearn_compat import check_is_fitted
from skdp.utils.schema import TabularEncoder, assemble

__all__ = ["HistogramSamplingMixin"]


class HistogramSamplingMixin:
    """:meth:`sample`, :meth:`score_samples` and :meth:`score` of the fitted histograms."""

    # --------------------------------------------------------------- sample
    def sample(self, n_samples=1, *, random_state=None):
        """Draw synthetic rows (post-processing of the noisy histograms).

        Parameters
        ----------
        n_samples : int or None, default=1
            Number of rows, drawn from the normalised surviving counts (jointly by
            systematic sampling, or independently with ``sampling="iid"``).
            ``None`` returns the synthetic data set ``D_eps`` itself: ``rint(count)``
            copies of every surviving cell, shuffled (single projection only).
        random_state : None, int, Generator or SeedSequence, default=None
            ``None`` draws fresh OS entropy (the fitted model keeps no generator); a
            value makes the draw reproducible. Sampling is post-processing.

        Returns
        -------
        DataFrame (same columns and dtypes as the training data) or ndarray
        """
        check_is_fitted(self)
        rng = make_rng(random_state)
        if n_samples is None:
            if len(self.histograms_) != 1:
                raise ValueError("n_samples=None (the data set D_eps) needs a single projection")
            h = self.histograms_[0]
            reps = np.rint(h["counts"]).astype(np.int64)
            cells = np.repeat(h["cells"], reps)
            rng.shuffle(cells)
            if len(cells) == 0:
                warnings.warn(
                    "every cell was filtered out: the synthetic data set is empty",
                    UserWarning,
                    stacklevel=2,
                )
            group_cells = [cells]
            m = len(cells)
        else:
            if isinstance(n_samples, bool) or not isinstance(n_samples, Integral | np.integer):
                raise ValueError("n_samples must be a non-negative int or None")
            m = int(n_samples)
            if m < 0:
                raise ValueError("n_samples must be a non-negative int or None")
            from skdp.utils.validation import check_n_samples

            check_n_samples(m, getattr(self, "n_features_in_", 1))
            group_cells = []
            for h in self.histograms_:
                total = h["counts"].sum()
                n_cells = math.prod(h["shape"])
                if total > 0 and self.sampling == "systematic":
                    cdf = np.cumsum(h["counts"], dtype=float)[None, :]
                    pick = _draw_systematic(rng, cdf, np.zeros(m, dtype=np.int64))
                    group_cells.append(h["cells"][pick])
                elif total > 0:
                    pick = rng.choice(len(h["cells"]), size=m, p=h["counts"] / total)
                    group_cells.append(h["cells"][pick])
                else:
                    warnings.warn(
                        f"every cell of the histogram over {h['columns']} was filtered out; "
                        "those columns are sampled uniformly from their public domain",
                        UserWarning,
                        stacklevel=2,
                    )
                    group_cells.append(rng.integers(0, n_cells, size=m))
        bins = {}
        for h, cells in zip(self.histograms_, group_cells, strict=False):
            for c, ix in zip(h["columns"], np.unravel_index(cells, h["shape"]), strict=True):
                bins[c] = np.asarray(ix, dtype=np.int64)
        for c in self.uniform_columns_:
            bins[c] = rng.integers(0, self._binners[c].n_levels, size=m)
        encoder = TabularEncoder(self.schema_, categorical="ordinal")
        codes = [
            self._binners[c].values(bins[c], rng, self.representative) for c in self.schema_.names
        ]
        return assemble(self.schema_, encoder.decode_codes(codes))

    # ---------------------------------------------------------------- score
    @insert_docs(**COUNT_SYNTHESIS_DOCS)
    def score_samples(self, X):
        """Log-likelihood of each row under the noisy histogram density.

        The density of a row is, per projection, the normalised noisy count of its
        cell (mixed with weight ``smoothing`` with the uniform distribution over the
        cells) times the uniform density within the cell's numeric bins; unlisted
        columns are uniform. Finite for every in-domain row when ``smoothing > 0``;
        ``-inf`` for numeric values outside the bounds.

        {score_samples_sections}
        """
        C, outside = self._scoring_codes(X)
        schema = self.schema_
        idx = {c: self._binners[c].index(C[:, j]) for j, c in enumerate(schema.names)}
        logp = np.zeros(len(C))
        for c in schema.names:
            logp += self._binners[c].log_cell_density(idx[c])
        s = float(self.smoothing)
        for h in self.histograms_:
            n_cells = math.prod(h["shape"])
            flat = np.ravel_multi_index(tuple(idx[c] for c in h["columns"]), h["shape"])
            total = h["counts"].sum()
            if total > 0:
                pos = np.searchsorted(h["cells"], flat)
                pos_c = np.minimum(pos, max(len(h["cells"]) - 1, 0))
                found = (pos < len(h["cells"])) & (h["cells"][pos_c] == flat)
                count = np.where(found, h["counts"][pos_c], 0.0)
                with np.errstate(divide="ignore"):
                    logp += np.log((1 - s) * count / total + s / n_cells)
            else:
                logp -= math.log(n_cells)
        for c in self.uniform_columns_:
            logp -= math.log(self._binners[c].n_levels)
        logp[outside] = -np.inf
        return logp

    def score(self, X, y=None):
        """Mean log-likelihood of ``X`` (the mean, as ``GaussianMixture.score``)."""
        return float(np.mean(self.score_samples(X)))
