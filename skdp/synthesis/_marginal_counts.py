"""Exact counts for :class:`~skdp.synthesis.DPMarginalSynthesizer`: the statistic
interface that hides numpy vs Dask.

:func:`table_counts` gives an object with two methods, the only statistics of the rows
that ``fit`` reads:

* ``one_way()``: every column's exact counts over its public-grid bins, concatenated
  (int64);
* ``marginals(sets, maps, csizes)``: the exact counts (flattened, int64) of the marginal
  of each column set (MST's pairs, AIM's candidates) over the compressed domains
  (``maps``: bin -> compressed value, a post-processing of the noisy 1-way release).

:class:`RowCounts` bins an in-memory table once; :class:`PartitionCounts` sums the same
counts over the partitions of a Dask collection with :func:`skdp.utils._rowsum.row_sum`
(the rows stay on the workers; one pass per :data:`_DASK_PASS_CELLS` cells of
marginals). The counts are exact integers, so both give the same counts bit for bit.
Nothing here adds noise: every count is released only through the estimator's noisy
mechanisms.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from skdp.synthesis._marginal_aim import candidate_counts
from skdp.utils._rowsum import is_dask_collection, row_sum

__all__ = ["PartitionCounts", "RowCounts", "table_counts"]

#: Most cells of marginals counted in one pass over Dask partitions (each partition's
#: partial holds them as int64: 16 MiB; the workers add up to ``split_every`` partials
#: at once)
_DASK_PASS_CELLS = 1 << 21


def table_counts(X, *, encoder, discs, names, kept=None):
    """The exact counts of ``X``'s rows over the public grid of ``discs``: a
    :class:`PartitionCounts` for a Dask collection, else a :class:`RowCounts`.

    ``kept`` (a :class:`~skdp.synthesis._histogram_groups.KeptRows`): only the rows a
    patient-level fit keeps -- in memory every row is binned (and checked) first, then
    the kept ones selected; on Dask the kept rows' encoder codes (bounded on the
    workers) are binned and counted there."""
    sizes = [discs[c].n_levels for c in names]
    if kept is not None and kept.codes is not None:  # Dask, bounded on the workers
        return PartitionCounts(
            kept.codes, functools.partial(_code_bins, discs=discs, names=names), sizes
        )
    codes = functools.partial(_bin_codes, encoder=encoder, discs=discs, names=names)
    if is_dask_collection(X):  # the rows stay on the workers
        return PartitionCounts(X, codes, sizes)
    counts = RowCounts(codes(X), sizes)
    return counts if kept is None else counts.rows(kept.index)


class RowCounts:
    """Exact counts of an in-memory table, whose rows' bins ``bins`` (n_rows x
    n_columns, from the public grid) are computed once."""

    def __init__(self, bins, sizes):
        self.bins = bins
        self.sizes = list(sizes)

    def one_way(self):
        """Every column's counts over its bins, concatenated (int64)."""
        return _one_way_counts(self.bins, self.sizes)

    def marginals(self, sets, maps, csizes):
        """The counts of each column set's marginal over the compressed domains."""
        return candidate_counts(_compress(self.bins, maps), csizes, list(sets))

    def rows(self, keep):
        """The counts of the rows ``keep`` only (a patient-level fit's kept rows)."""
        return RowCounts(self.bins[keep], self.sizes)


class PartitionCounts:
    """The counts of :class:`RowCounts`, summed over the partitions of the Dask
    collection ``X`` (``codes`` bins a block of rows)."""

    def __init__(self, X, codes, sizes):
        self.X = X
        self.codes = codes
        self.sizes = list(sizes)

    def one_way(self):
        """Every column's counts over its bins, in one pass."""
        return row_sum(
            functools.partial(_one_way_block, codes=self.codes, sizes=self.sizes), self.X
        )

    def marginals(self, sets, maps, csizes):
        """The marginals' counts, in one pass per :data:`_DASK_PASS_CELLS` cells."""
        out = []
        for group in _cell_groups(sets, csizes, _DASK_PASS_CELLS):
            block = functools.partial(
                _candidate_counts_block, codes=self.codes, maps=maps, csizes=csizes, cands=group
            )
            out += row_sum(block, self.X)
        return out


def _bin_codes(X, *, encoder, discs, names):
    """The public-grid bin of every cell of ``X`` (n_rows x n_columns, int64)."""
    C = encoder.codes(X)  # clipped numerics and level codes; raises on bad input
    return _code_bins(C, discs=discs, names=names)


def _code_bins(C, *, discs, names):
    """The public-grid bin of every cell of encoder codes ``C`` (int64)."""
    return np.column_stack([discs[c].index(C[:, j]) for j, c in enumerate(names)])


def _one_way_counts(B, sizes):
    return np.concatenate([np.bincount(B[:, j], minlength=k) for j, k in enumerate(sizes)]).astype(
        np.int64
    )


def _compress(B, maps):
    return np.column_stack([maps[j][B[:, j]] for j in range(B.shape[1])])


def _one_way_block(X, *, codes, sizes):
    """Exact 1-way counts of one block of rows (a row function of ``row_sum``)."""
    return _one_way_counts(codes(X), sizes)


def _cell_groups(cands, csizes, max_cells):
    """Consecutive groups of ``cands`` of at most ``max_cells`` cells each (a candidate
    larger than that alone); public: reads the compressed domain sizes only."""
    groups, group, cells = [], [], 0
    for c in cands:
        size = math.prod(csizes[j] for j in c)
        if group and cells + size > max_cells:
            groups.append(group)
            group, cells = [], 0
        group.append(c)
        cells += size
    if group:
        groups.append(group)
    return groups


def _candidate_counts_block(X, *, codes, maps, csizes, cands):
    """Exact compressed counts of one block of rows, for every AIM candidate marginal."""
    return candidate_counts(_compress(codes(X), maps), csizes, cands)
