"""The declared *missing* level of a column, for the binned synthesizers.

A column whose schema entry declares ``missing`` (the estimators' ``missing="category"``,
or ``"missing": true`` in a schema) gets one more level after its value bins (numeric) or
its declared categories (categorical, binary). The level exists because it was declared,
never because the data hold a missing value, so neighbouring data sets get the same grid.
A missing cell is counted in that level like any value in its bin: the counts are the
same histogram or marginal with one more cell per column, released by the same noisy
mechanism under the same budget (a row still falls in exactly one cell, so the
sensitivities do not change). Sampling writes the level back as a missing value.

:class:`MissingLevel` wraps the data-independent binner of one column (a
:class:`~skdp.utils._tabular.binning.ColumnBinner` of the histogram or marginal
synthesizer): bin indices ``0 .. k-1`` are the inner binner's, ``k`` is the missing level.
"""

from __future__ import annotations

import numpy as np

__all__ = ["MissingLevel", "with_missing_level"]


class MissingLevel:
    """A column binner with one declared missing level after its ``k`` own levels.

    Parameters
    ----------
    inner : binner
        Has ``kind``, ``n_levels``, ``index(values)``, ``values(idx, ...)`` and a log
        width method (``log_cell_density`` or ``log_width``); numeric ones ``edges``.
    numeric : bool
        Whether the column is numeric: its codes (from
        :meth:`skdp.utils.schema.TabularEncoder.codes`) hold NaN for a missing cell.
        Categorical codes hold the extra code ``k`` already.
    """

    def __init__(self, inner, numeric):
        self.inner = inner
        self.kind = inner.kind
        self.numeric = bool(numeric)
        self.missing_index = int(inner.n_levels)
        self.n_levels = self.missing_index + 1

    @property
    def edges(self):
        """The inner binner's edges (the missing level is not an interval)."""
        return self.inner.edges

    def index(self, v):
        """Bin index of every code; a missing cell gets ``missing_index``."""
        if not self.numeric:
            return np.asarray(v).astype(np.int64)  # the encoder's extra code is k
        v = np.asarray(v, dtype=float)
        absent = np.isnan(v)
        if not absent.any():
            return self.inner.index(v)
        filled = np.where(absent, self.inner.edges[0], v)
        return np.where(absent, self.missing_index, self.inner.index(filled)).astype(np.int64)

    def values(self, idx, *args):
        """Synthetic values (or level codes) of bin indices; NaN for the missing level of
        a numeric column (the code ``k`` of a categorical one decodes to missing)."""
        idx = np.asarray(idx, dtype=np.int64)
        if not self.numeric:
            return idx.astype(float)
        absent = idx == self.missing_index
        out = np.asarray(self.inner.values(np.where(absent, 0, idx), *args), dtype=float)
        return np.where(absent, np.nan, out)

    def _log(self, method, idx):
        idx = np.asarray(idx, dtype=np.int64)
        absent = idx == self.missing_index
        inner = getattr(self.inner, method)(np.where(absent, 0, idx))
        return np.where(absent, 0.0, inner)  # an atom: counting measure

    def log_cell_density(self, idx):
        """log of the within-bin density; 0 for the missing level (an atom)."""
        return self._log("log_cell_density", idx)

    def log_width(self, idx):
        """log of the bin's width; 0 for the missing level (an atom)."""
        return self._log("log_width", idx)


def with_missing_level(binner, spec):
    """``binner`` wrapped in :class:`MissingLevel` when the column's schema entry
    declares a missing level, else ``binner`` itself."""
    return MissingLevel(binner, spec.is_numeric) if spec.missing else binner
