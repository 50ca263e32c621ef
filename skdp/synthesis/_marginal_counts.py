"""Exact counts for :class:`~skdp.synthesis.DPMarginalSynthesizer`: the public-grid bin
of every cell, and the 1-way, 2-way and candidate-marginal counts of a block of rows.

The ``*_block`` functions are row functions of :func:`skdp.utils._rowsum.row_sum` (one
call per block of rows, in memory or per Dask partition); nothing here adds noise, and
every count is released only through the estimator's noisy mechanisms.
"""

from __future__ import annotations

import math

import numpy as np

from skdp.synthesis._marginal_aim import candidate_counts
from skdp.synthesis._marginal_model import pair_counts

__all__ = [
    "_bin_codes",
    "_candidate_counts_block",
    "_cell_groups",
    "_compress",
    "_one_way_block",
    "_one_way_counts",
    "_two_way_block",
]


def _bin_codes(X, *, encoder, discs, names):
    """The public-grid bin of every cell of ``X`` (n_rows x n_columns, int64)."""
    C = encoder.codes(X)  # clipped numerics and level codes; raises on bad input
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


def _two_way_block(X, *, codes, maps, csizes, pairs):
    """Exact compressed 2-way counts of one block of rows, for every pair."""
    return pair_counts(_compress(codes(X), maps), csizes, pairs)
