"""Weighted contribution bounding of :class:`DPLinearRegression` (``groups`` with
``contribution="weight"``, :doc:`/patients`).

Every row of patient ``p``, who has ``n_p`` rows, enters every sufficient statistic with
the weight ``w_p = min(1, k / n_p)`` (``k = max_rows_per_group``): no row is dropped and
a patient's total weight is ``min(n_p, k) <= k``.

Sensitivity. Each released statistic is ``sum_p w_p sum_{i in p} t(z_i)`` for a per-row
term ``t`` whose norm (L1 or L2) is at most the row bound ``B`` (``|z_ij| <= 1`` after
clipping and scaling). ``w_p`` depends on patient ``p``'s own rows only, so adding or
removing one patient leaves every other patient's weights as they were and changes the
statistic by that patient's term alone, of norm at most ``w_p n_p B = min(n_p, k) B <= k
B`` (triangle inequality): the ``k`` times the row's sensitivity of the plan
(:func:`skdp.mechanisms.sensitivity.group_sensitivity`), as for the random choice of
``k`` rows. The smallest eigenvalue moves by at most the largest eigenvalue of the
patient's term ``sum_i w_p x~_i x~_i^T``, at most its trace ``<= k d'`` (Weyl). The sum
of the weights, ``n = sum_p min(n_p, k)``, is the number of rows the random choice
keeps, public as it is (the Gram's corner with an intercept). The statistics' expected
value under the random choice is exactly the weighted one (each row is kept with
probability ``w_p``); the weighted sum is that expectation without the sampling's
variance (Rao-Blackwell).

Exactness. The per-row products are the fixed-point integers of
:func:`skdp.utils._rowsum.fixed_point_gram` (values rounded to ``2^-39``, still in
``[-1, 1]``); rows with the same ``n_p`` share one weight, so a block's partial sum is
``sum_m Fraction(min(k, m), m) G_m`` with ``G_m`` the exact integer Gram of its rows of
patients with ``m`` rows: exact rationals, whose sum does not depend on the order or the
chunking of the rows, rounded once to float64 at the end. When no patient has more than
``k`` rows the result is bit for bit the unweighted one.

Dask. A patient's rows are brought together by Dask's shuffle on the label, on the
workers (as :func:`skdp.utils._groups_dask.bound_dask_rows` does); each shuffled
partition then counts its patients' rows and the data keep a column of ``n_p``. The
client receives one row count per partition and the statistics' totals only.
"""

from __future__ import annotations

import functools
from fractions import Fraction

import numpy as np

from skdp.utils._rowsum import row_sum

__all__ = ["patient_weights", "weighted_gram"]

#: the column of each row's patient size in the shuffled Dask frame
_SIZE = "__skdp_rows_of_patient__"


def patient_weights(X, y, codes, k, dask_input):
    """``(X, y, sizes, n)``: the rows (all of them), each row's patient size ``n_p`` and
    the public ``n = sum_p min(n_p, k)``. In memory ``codes`` are the checked patient
    codes; on Dask the labels (shuffled with the rows on the workers)."""
    if dask_input:
        X, y, sizes = _dask_sizes(X, y, codes)
    else:
        counts = np.bincount(codes)
        sizes = counts[codes]
    total = row_sum(functools.partial(_count_block, k=k), sizes)
    if total is None:
        raise ValueError("X has 0 samples")
    return X, y, sizes, int(total)


def _count_block(sizes, *, k):
    """Exact ``sum_i min(1, k / n_(p(i)))`` over a block of rows (a ``Fraction``)."""
    values, counts = np.unique(np.asarray(sizes, dtype=np.int64), return_counts=True)
    return sum(
        (Fraction(int(c) * min(k, int(m)), int(m)) for m, c in zip(values, counts, strict=True)),
        Fraction(0),
    )


def _weighted_block(X, y, sizes, *, k, block):
    """Exact weighted partial ``sum_m Fraction(min(k, m), m) G_m`` of one block of rows
    (module docstring); ``block`` is the unweighted kernel (validation, clipping,
    scaling and the fixed-point Gram)."""
    sizes = np.asarray(sizes, dtype=np.int64).reshape(-1)
    X, y = np.asarray(X), np.asarray(y).reshape(-1)  # converted (and checked) by block
    full = sizes <= k
    total = block(X[full], y[full]) if full.any() else None
    for m in np.unique(sizes[~full]):
        rows = sizes == m
        part = block(X[rows], y[rows]) * Fraction(k, int(m))
        total = part if total is None else total + part
    return total if total is not None else block(X[:0], y[:0])


def weighted_gram(block, X, y, weights, scale_bits):
    """The weighted Gram of the rows, ``weights = (sizes, k)``: one exact pass
    (:func:`skdp.utils._rowsum.row_sum`) rounded once to float64 (``S 2^-scale_bits``)."""
    sizes, k = weights
    total = row_sum(functools.partial(_weighted_block, k=k, block=block), X, y, sizes)
    if total is None:
        raise ValueError("X has 0 samples")
    flat = [_to_float(Fraction(v), scale_bits) for v in np.asarray(total, dtype=object).ravel()]
    return np.asarray(flat, dtype=np.float64).reshape(np.shape(total))


def _to_float(value, scale_bits):
    """``value 2^-scale_bits`` correctly rounded to float64 (exact rational input)."""
    return float(value / (1 << scale_bits)) if value else 0.0


# ------------------------------------------------------------------ Dask
def _with_sizes(part):
    """One shuffled partition (whole patients) with the column of each row's patient
    size; missing labels refused, naming ``groups``."""
    from skdp.utils._groups_dask import _LABEL, _check_labels

    if len(part) == 0:
        return part.assign(**{_SIZE: np.zeros(0, dtype=np.int64)}).drop(columns=_LABEL)
    _check_labels(part[_LABEL].to_numpy())
    sizes = part.groupby(_LABEL, sort=False, dropna=False)[_LABEL].transform("size")
    return part.assign(**{_SIZE: sizes.to_numpy().astype(np.int64)}).drop(columns=_LABEL)


def _dask_sizes(X, y, labels):
    """``(X, y, sizes)`` as lazy Dask arrays after Dask's shuffle by patient on the
    workers (module docstring); only one row count per partition reaches the client."""
    from skdp.utils._groups_dask import _frame, _shuffle_method
    from skdp.utils._rowsum import _frame_lengths, dask_errors

    frame = _frame([X, y], labels)
    shuffled = frame.shuffle(
        on=frame.columns[-1],
        npartitions=frame.npartitions,
        ignore_index=True,
        shuffle_method=_shuffle_method(),
    )
    meta = _with_sizes(frame._meta)
    sized = shuffled.map_partitions(_with_sizes, meta=meta)
    with dask_errors("groups"):
        lengths = tuple(_frame_lengths(sized))
    x_cols = [c for c in sized.columns if c.startswith("a0_")]
    y_cols = [c for c in sized.columns if c.startswith("a1_")]
    Xd = sized[x_cols].to_dask_array(lengths=lengths)
    yd = sized[y_cols].to_dask_array(lengths=lengths)[:, 0]
    sizes = sized[_SIZE].to_dask_array(lengths=lengths)
    return Xd, yd, sizes
