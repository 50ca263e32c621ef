"""The coverage statistic of :class:`~skdp.ilp.DPILPClassifier`: true satisfy-counts.

One interface over numpy and Dask rows: ``counts(level) -> (P, N)``, the numbers of
positives (not covered by a removed clause) and negatives that satisfy each clause of
``level``, and ``counts.remove(clause)`` (cover removal: the positives it covers no longer
count). :class:`InMemoryCoverage` holds the rows; :class:`DaskCoverage` sums exact
integer counts partition by partition (:func:`~skdp.utils._rowsum.row_sum`), so the rows
never reach this process and the counts, hence the release, are the same.
"""

from __future__ import annotations

import functools

import numpy as np

from skdp.ilp._search import _counts
from skdp.utils._data_free import nonfinite_error
from skdp.utils._rowsum import is_dask_collection, row_sum

__all__ = ["DaskCoverage", "InMemoryCoverage"]


class InMemoryCoverage:
    """Satisfy-counts over the 0/1 atoms ``X`` (numpy) and labels ``y``."""

    def __init__(self, X, y):
        self._pos = X[y == 1]
        self._neg = X[y == 0]

    def __call__(self, level):
        return _counts(self._pos, self._neg, level)

    def remove(self, clause):
        """Cover removal: drop the positives that satisfy ``clause`` (``()``: all)."""
        pos = self._pos
        covered = pos[:, list(clause)].all(axis=1) if clause else np.ones(len(pos), bool)
        self._pos = pos[~covered]


class DaskCoverage:
    """Satisfy-counts over Dask rows ``X``, ``y`` on the same row chunks, summed per
    partition; ``binarize`` and ``names`` as the estimator's (atoms made on the workers)."""

    def __init__(self, X, y, binarize, names):
        self._X, self._y = X, y
        self._binarize, self._names = binarize, names
        self._removed = []

    def __call__(self, level):
        fn = functools.partial(
            _block_counts, level, tuple(self._removed), self._binarize, self._names
        )
        total = row_sum(fn, self._X, self._y)
        return total[0], total[1]

    def remove(self, clause):
        """Cover removal, applied on the workers from the next count on."""
        self._removed.append(clause)


def _check_binary(X, name, columns=None):
    bad = ~np.isin(X, (0, 1))
    if bad.any():
        if X.ndim == 1:
            raise ValueError(f"{name} must be binary (0/1)")
        cols = np.unique(np.nonzero(bad)[1])
        labels = [repr(columns[j]) if columns is not None else str(j) for j in cols[:10]]
        more = " ..." if cols.size > 10 else ""
        raise ValueError(
            f"{name} must be binary (0/1 atoms); column(s) {', '.join(labels)}{more} are not"
        )


def _block_counts(clauses, removed, binarize, columns, X, y):
    """Exact satisfy-counts ``(P, N)`` of ``clauses`` in one block of rows (on a worker):
    positives covered by a ``removed`` clause do not count (cover removal)."""
    X, y = np.asarray(X), np.asarray(y)
    if X.dtype.kind not in "biuf":
        raise ValueError("X must be binary (0/1 atoms), got a non-numeric array")
    if X.dtype.kind == "f" and not np.isfinite(X).all():
        raise nonfinite_error(X, "X")  # NaN: skdp's advice (impute privately, or drop)
    if binarize is not None:
        X = (X > binarize).astype(np.int32)
    else:
        _check_binary(X, "X", columns)
        X = X.astype(np.int32)
    _check_labels(y)
    pos = y.astype(np.int64) == 1
    Xpos, Xneg = X[pos], X[~pos]
    for c in removed:
        Xpos = Xpos[~(Xpos[:, list(c)].all(axis=1) if c else np.ones(Xpos.shape[0], bool))]
    return _counts(Xpos, Xneg, clauses)


def _known_rows(a):
    if any(np.isnan(c) for c in a.chunks[0]):
        a = a.compute_chunk_sizes()  # one count per partition
    return tuple(int(c) for c in a.chunks[0])


def _on_rows(a, rows):
    """``a`` as a Dask array with row chunks ``rows`` (all columns in one chunk)."""
    import dask.array as da

    if not is_dask_collection(a):
        return da.from_array(a, chunks=(rows,) + tuple(-1 for _ in a.shape[1:]))
    if any(np.isnan(c) for c in a.chunks[0]):
        a = a.compute_chunk_sizes()
    return a.rechunk((rows,) + tuple(-1 for _ in a.shape[1:]))


def _check_labels(y):
    if y.dtype.kind not in "biuf" or not np.isin(y, (0, 1)).all():
        raise ValueError(
            "Unknown label type: y must be binary with values in {0, 1} (1 = positive)"
        )
