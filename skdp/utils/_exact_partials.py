"""Exact partial sums: what a row function of :func:`~skdp.utils._rowsum.row_sum` returns.

A partial is a Python ``int``, an integer numpy array (counts), an object array of Python
ints (fixed point), a :class:`SparseCounts`, or a tuple/list/dict of those:
:func:`add_partials` adds two of them exactly and refuses floats, whose sum would depend
on the chunking. So a total is bit-identical for every split of the rows into blocks
and partitions, and for numpy vs Dask input.

Exact float sums. :func:`fixed_point_gram` quantises every value ``|z| <= 1`` to the grid
``2^-FRACTION_BITS`` (``FRACTION_BITS = 39``; rounding to nearest is monotone and keeps
``|z| <= 1``, so per-row sensitivity bounds still hold) and accumulates ``sum_i z_i
z_i^T`` exactly: each integer is split into three signed 13-bit digits, the digit
matrices are multiplied with BLAS in float64 -- every product and partial sum is an
integer below ``2^53``, hence exact whatever order BLAS adds in -- and the digit blocks
are combined in Python integers. :func:`fixed_point_to_float` rounds the exact total to
the nearest double once. The result differs from a float64 accumulation of the
unquantised values by at most ``n 2^-39`` per entry (about ``1.8e-12 n``), far below any
DP noise, and does not depend on the chunking.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

__all__ = [
    "add_partials",
    "fixed_point_gram",
    "fixed_point_to_float",
    "FRACTION_BITS",
    "SparseCounts",
]

#: bits after the binary point of the fixed-point accumulation of float sums
FRACTION_BITS = 39
_DIGIT = 13  # 3 digits of 13 bits: |digit| <= 2^13, products <= 2^26
_MAX_BLOCK_ROWS = 1 << 20  # 2^20 rows * 2^26 per product < 2^53: exact in float64
_BLOCK_CELLS = 1 << 20  # values per block on the client or a worker (8 MiB of float64)


def add_partials(a, b):
    """Exact sum of two partials (``None`` is the identity)."""
    if a is None:
        return b
    if b is None:
        return a
    if isinstance(a, tuple | list):
        return type(a)(add_partials(u, v) for u, v in zip(a, b, strict=True))
    if isinstance(a, Mapping):
        return {k: add_partials(a[k], b[k]) for k in a}
    if isinstance(a, np.ndarray) and a.dtype.kind == "f":
        raise TypeError("float partial sums depend on the chunking; use fixed_point_gram")
    if isinstance(a, float):
        raise TypeError("float partial sums depend on the chunking; use fixed_point_gram")
    return a + b


def fixed_point_gram(Z) -> np.ndarray:
    """Exact ``sum_i q(z_i) q(z_i)^T`` in units of ``2^(-2 FRACTION_BITS)``.

    Parameters
    ----------
    Z : ndarray of shape (n_rows, k)
        Values in ``[-1, 1]`` (clipped and scaled by the caller).

    Returns
    -------
    ndarray of shape (k, k), dtype object
        Python integers; ``q(z) = round(z 2^FRACTION_BITS)``. Independent of how the
        rows are split into calls (module docstring).
    """
    Z = np.asarray(Z, dtype=np.float64)
    n, k = Z.shape
    out = np.zeros((k, k), dtype=object)
    if n == 0:
        return out
    shifts = [2 * _DIGIT, _DIGIT, 0]
    base = float(1 << _DIGIT)
    step = max(1, min(_MAX_BLOCK_ROWS, _BLOCK_CELLS // (3 * k)))
    D = np.empty((min(step, n), 3 * k))
    for start in range(0, n, step):
        rows = min(step, n - start)
        # q = h 2^26 + m 2^13 + l with l, m in [0, 2^13) and |h| <= 2^13; every step is
        # exact in float64 (integers below 2^53)
        q = np.rint(Z[start : start + rows] * float(1 << FRACTION_BITS))
        h, m, low = D[:rows, :k], D[:rows, k : 2 * k], D[:rows, 2 * k :]
        np.floor(q / (base * base), out=h)
        q -= h * (base * base)
        np.floor(q / base, out=m)
        np.subtract(q, m * base, out=low)
        P = D[:rows].T @ D[:rows]  # exact: integers below 2^53
        P = P.astype(np.int64)
        for i, si in enumerate(shifts):
            for j, sj in enumerate(shifts):
                block = P[i * k : (i + 1) * k, j * k : (j + 1) * k].astype(object)
                out += block * (1 << (si + sj))
    return out


def fixed_point_to_float(S, scale_bits: int = 2 * FRACTION_BITS) -> np.ndarray:
    """``S * 2^-scale_bits`` as float64, each entry correctly rounded once."""
    S = np.asarray(S, dtype=object)
    # int -> float is correctly rounded; scaling by a power of two is then exact
    flat = [math.ldexp(float(int(v)), -scale_bits) for v in S.ravel()]
    return np.asarray(flat, dtype=np.float64).reshape(S.shape)


class SparseCounts:
    """Exact counts of the occupied cells of a histogram, a partial for :func:`row_sum`.

    ``cells`` are sorted, distinct int64 cell indices and ``counts`` their int64 counts;
    ``+`` merges two of them exactly, so the memory of a partial is O(occupied cells),
    never O(rows) or O(all cells).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.utils._rowsum import SparseCounts
    >>> s = SparseCounts.from_cells(np.array([3, 1, 3])) + SparseCounts.from_cells(np.array([1]))
    >>> s.cells.tolist(), s.counts.tolist()
    ([1, 3], [2, 2])
    """

    __slots__ = ("cells", "counts")

    def __init__(self, cells, counts):
        self.cells = np.asarray(cells, dtype=np.int64)
        self.counts = np.asarray(counts, dtype=np.int64)

    @classmethod
    def from_cells(cls, flat):
        """Count the cell indices ``flat`` of one block of rows."""
        cells, counts = np.unique(np.asarray(flat, dtype=np.int64), return_counts=True)
        return cls(cells, counts)

    def __add__(self, other):
        cells, inverse = np.unique(np.concatenate([self.cells, other.cells]), return_inverse=True)
        counts = np.zeros(cells.size, dtype=np.int64)
        np.add.at(counts, inverse, np.concatenate([self.counts, other.counts]))
        return SparseCounts(cells, counts)

    def __getstate__(self):
        return self.cells, self.counts

    def __setstate__(self, state):
        self.cells, self.counts = state
