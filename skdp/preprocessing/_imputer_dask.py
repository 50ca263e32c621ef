""":class:`DPSimpleImputer` (``strategy="mean"``) on Dask input (:doc:`/dask`), per row
or per patient.

The release is the imputer's: per column, Laplace noise on the sum of the observed values
scaled into ``[-1, 1]`` and geometric noise on the count of observed values, with the
plan's sensitivities. The sums are computed on the workers in fixed point (every scaled
value rounded to the grid ``2^-39``, summed exactly in integers, so independent of the
partitioning; rounding is monotone and keeps ``|z| <= 1``, so the sensitivity is
unchanged), the counts as integers; only the ``2 d`` totals reach the client. With
``groups`` each patient is bounded to ``k`` rows on the workers after Dask's shuffle by
patient (:func:`skdp.utils._groups_dask.bound_dask_rows`). The bounds must be declared.
The median (an exponential mechanism over the sorted values) and the constant strategy
are in memory only.
"""

from __future__ import annotations

import functools

import numpy as np

from skdp.preprocessing._common import column_labels
from skdp.preprocessing._imputer_plan import ImputerPlan
from skdp.preprocessing._patients import patient_streams
from skdp.utils._exact_partials import FRACTION_BITS
from skdp.utils._groups import patient_codes
from skdp.utils._groups_dask import bound_dask_rows
from skdp.utils._rowsum import check_dask_input, n_rows, row_sum
from skdp.utils.validation import check_bounds

__all__ = ["fit_dask"]


def _observed_block(X, lo, hi, missing_mask, missing_values):
    """Exact per-column ``(sum of q(z) over observed cells, observed count)`` of one
    block (``z`` the observed value clipped and scaled into ``[-1, 1]``); a non-finite
    observed value is refused, naming ``X``."""
    X = np.asarray(X, dtype=np.float64)
    mask = missing_mask(X, missing_values)
    if not np.isfinite(np.where(mask, 0.0, X)).all():
        raise ValueError(
            "X has non-finite values that are not the declared missing_values (the value "
            "is not shown)"
        )
    centre, half = lo / 2 + hi / 2, hi / 2 - lo / 2
    Z = np.where(mask, 0.0, np.clip((np.where(mask, centre, X) - centre) / half, -1, 1))
    q = np.rint(Z * float(1 << FRACTION_BITS)).astype(np.int64)
    sums = [int(v) for v in q.sum(axis=0)]  # |sum| < 2^59 per block of 2^20 rows
    counts = [int(v) for v in (~mask).sum(axis=0)]
    return np.array(sums + counts, dtype=object)


def fit_dask(est, X, groups, missing_mask):
    """``est.fit(X, groups=groups)`` for a Dask ``X`` (module docstring)."""
    if est.strategy != "mean":
        raise ValueError(
            f"strategy={est.strategy!r} is not supported for Dask input: use "
            "strategy='mean', or fit in memory"
        )
    if est.bounds is None or isinstance(est.bounds, str):
        raise ValueError(
            f"bounds={est.bounds!r} is not supported for Dask input: declare public bounds"
        )
    Xa, _ = check_dask_input(est, X)
    d, n = Xa.shape[1], n_rows(Xa)
    codes, k = patient_codes(est, groups, n, dask_input=True, dask_ok=True)
    epsilon, _ = est._check_privacy_params()
    plan = ImputerPlan.build(strategy="mean", n_features=d, epsilon=epsilon, max_rows_per_group=k)
    lo, hi = (
        np.asarray(b, dtype=float)
        for b in check_bounds(est.bounds, d, name="bounds", columns=column_labels(est, d))
    )
    streams = patient_streams(est, ["noise", "groups"], Xa, codes, dask=True)
    block = functools.partial(
        _observed_block,
        lo=lo,
        hi=hi,
        missing_mask=missing_mask,
        missing_values=est.missing_values,
    )
    if codes is not None:  # every row validated before any is dropped at random
        row_sum(functools.partial(_only_check, block), Xa)
        (Xa,), _ = bound_dask_rows([Xa], codes, k, streams["groups"])
    total = row_sum(block, Xa)
    if total is None:
        raise ValueError("X has 0 samples")
    sums = np.array([float(v) for v in total[:d]]) * 2.0**-FRACTION_BITS
    counts = np.array([int(v) for v in total[d:]], dtype=np.int64)
    statistics = est._mean_release(sums, counts, lo, hi, plan, streams["noise"])
    return est._record(plan, statistics, (lo, hi))


def _only_check(block, X):
    block(X)
    return 0
