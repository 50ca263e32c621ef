""":class:`DPStandardScaler` on Dask input (:doc:`/dask`), per row or per patient.

The release is the scaler's: Laplace noise on ``S = sum z`` and ``W = sum (z^2 - 1/2)``
of the clipped rows scaled into ``[-1, 1]``, with the plan's sensitivities. The sums are
computed partition by partition on the workers in fixed point (every ``z`` rounded to the
grid ``2^-39``, products summed exactly in integers, :mod:`skdp.utils._exact_partials`),
so they do not depend on the partitioning and differ from the in-memory float sums by
at most ``n 2^-38`` per entry; rounding is monotone and keeps ``|z| <= 1``, so the
sensitivities are unchanged. Only the ``2 d`` totals come back to the client. With
``groups`` each patient is bounded to ``k`` rows on the workers after Dask's shuffle by
patient (:func:`skdp.utils._groups_dask.bound_dask_rows`). The bounds must be declared
(no private estimate over partitions).
"""

from __future__ import annotations

import functools

import numpy as np

from skdp.preprocessing._common import column_labels
from skdp.preprocessing._patients import patient_streams
from skdp.utils._data_free import nonfinite_error
from skdp.utils._exact_partials import FRACTION_BITS
from skdp.utils._groups import patient_codes
from skdp.utils._groups_dask import bound_dask_rows
from skdp.utils._rowsum import check_dask_input, n_rows, row_sum
from skdp.utils.validation import check_bounds, clip_to_bounds

__all__ = ["fit_dask", "fixed_point_moments"]

_DIGIT = 13


def fixed_point_moments(Z):
    """Exact ``(sum q, sum q^2)`` per column, ``q = round(z 2^FRACTION_BITS)`` for
    ``|z| <= 1``: object arrays of Python integers (units ``2^-39`` and ``2^-78``),
    the same for every split of the rows (an exact partial of
    :func:`skdp.utils._rowsum.row_sum`)."""
    Z = np.asarray(Z, dtype=np.float64)
    d = Z.shape[1]
    s1 = np.zeros(d, dtype=object)
    s2 = np.zeros(d, dtype=object)
    base = float(1 << _DIGIT)
    step = 1 << 20  # products < 2^26, column sums < 2^46: exact in float64
    for start in range(0, Z.shape[0], step):
        q = np.rint(Z[start : start + step] * float(1 << FRACTION_BITS))
        # int64: |sum| < 2^59 is exact there, not in float64
        s1 += np.array([int(v) for v in q.astype(np.int64).sum(axis=0)], dtype=object)
        h = np.floor(q / (base * base))
        rest = q - h * (base * base)
        m = np.floor(rest / base)
        low = rest - m * base
        digits = [(h, 2 * _DIGIT), (m, _DIGIT), (low, 0)]
        for a, sa in digits:
            for b, sb in digits:
                col = (a * b).sum(axis=0)
                s2 += np.array([int(v) << (sa + sb) for v in col], dtype=object)
    return s1, s2


def _scaled_block(X, lo, hi, clip, columns, check_only=False):
    """One block of rows: validated (finite; inside the bounds with ``clip=False``),
    clipped, scaled into ``[-1, 1]``; its fixed-point moments (0 with ``check_only``)."""
    X = np.asarray(X, dtype=np.float64)
    if not np.isfinite(X).all():
        raise nonfinite_error(X, "X")
    Xc = clip_to_bounds(X, lo, hi, clip=clip, columns=columns)
    if check_only:
        return 0
    centre, half = lo / 2 + hi / 2, hi / 2 - lo / 2
    s1, s2 = fixed_point_moments(np.clip((Xc - centre) / half, -1.0, 1.0))
    return np.concatenate([s1, s2])


def _check_dask_bounds(est):
    if est.bounds is None or isinstance(est.bounds, str):
        raise ValueError(
            f"bounds={est.bounds!r} is not supported for Dask input: declare public bounds "
            "(a private bound estimate over partitions is not implemented)"
        )


def fit_dask(est, X, groups):
    """``est.fit(X, groups=groups)`` for a Dask ``X`` (module docstring)."""
    Xa, _ = check_dask_input(est, X)
    d = Xa.shape[1]
    n = n_rows(Xa)
    codes, k = patient_codes(est, groups, n, dask_input=True, dask_ok=True)
    epsilon, _ = est._check_privacy_params()
    if not (est.with_mean or est.with_std):
        return est._record(est._plan(n, d, epsilon, k))
    _check_dask_bounds(est)
    columns = column_labels(est, d)
    lo, hi = (
        np.asarray(b, dtype=float)
        for b in check_bounds(est.bounds, d, name="bounds", columns=columns)
    )
    streams = patient_streams(est, ["bounds", "mean", "variance", "groups"], Xa, codes, dask=True)
    block = functools.partial(_scaled_block, lo=lo, hi=hi, clip=est.clip, columns=columns)
    if codes is not None:
        if not est.clip:  # every row, before any is dropped at random
            row_sum(functools.partial(block, check_only=True), Xa)
        (Xa,), n = bound_dask_rows([Xa], codes, k, streams["groups"])
    plan = est._plan(n, d, epsilon, k)
    total = row_sum(block, Xa)
    if total is None:
        raise ValueError("X has 0 samples")
    s = np.array([float(v) for v in total[:d]]) * 2.0**-FRACTION_BITS
    sq = np.array([float(v) for v in total[d:]]) * 2.0 ** (-2 * FRACTION_BITS)
    mean, var = est._release_moments(
        (s, sq - 0.5 * n), (lo / 2 + hi / 2, hi / 2 - lo / 2), plan, streams
    )
    return est._record(plan, mean=mean, var=var, bounds=(lo, hi))
