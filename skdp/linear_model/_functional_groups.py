"""The patient as the privacy unit in :class:`DPLinearRegression`: the labels and the
contribution bound, the ``clip=False`` check of every row, and the contribution bounding
(:doc:`/patients`): every row weighted by ``min(1, k / n_p)``
(``contribution="weight"``, :mod:`skdp.linear_model._functional_weights`) or the random
choice of at most ``k`` rows per patient (``"sample"``), in memory or on the Dask
workers.

Every statistic of the fit is a sum of per-row terms, so after the bounding a patient
moves it by at most ``k`` rows' terms and every sensitivity is ``k`` times the row's
(:func:`skdp.mechanisms.sensitivity.group_sensitivity`, in the release plan).
"""

from __future__ import annotations

import functools

import numpy as np

from skdp.linear_model._functional_release import _check_inside, _resolve_bounds
from skdp.linear_model._functional_weights import patient_weights
from skdp.utils._groups import bound_contributions, patient_codes
from skdp.utils._groups_dask import bound_dask_rows
from skdp.utils._rowsum import n_rows, row_sum

__all__ = ["_bound_rows", "_bounds_and_rows", "_check_groups"]


def _check_groups(est, groups, n, dask_input):
    """``(codes, k)`` of a patient-level fit; on Dask input the codes are the labels,
    bounded on the workers (:func:`_bound_rows`)."""
    return patient_codes(
        est,
        groups,
        n,
        dask_input=dask_input,
        dask_ok=True,
    )


def _inside_block(X, y, lo, hi, ylo, yhi, columns):
    """Check one block of rows against the declared bounds (``clip=False``)."""
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64).reshape(-1, 1)
    _check_inside(X, lo, hi, columns)
    _check_inside(y, np.array([ylo]), np.array([yhi]), ["y"])
    return 0


def _bound_rows(est, X, y, bounds, columns, codes, k, rng, dask_input):
    """``(X, y, n)`` of the rows released: with ``clip=False`` every row is checked
    against the declared ``bounds = (lo, hi, ylo, yhi)`` before any is dropped at
    random; with ``groups`` each patient keeps at most ``k`` rows chosen at random with
    ``rng`` (in memory, or on the Dask workers after Dask's shuffle by patient,
    :func:`skdp.utils._groups_dask.bound_dask_rows`)."""
    if not est.clip and not dask_input:  # clip=False: the bounds are declared
        _inside_block(X, y, *bounds, columns)
    elif not est.clip and codes is not None:  # Dask: a pass over all rows, on the workers
        lo, hi, ylo, yhi = bounds
        row_sum(
            functools.partial(_inside_block, lo=lo, hi=hi, ylo=ylo, yhi=yhi, columns=columns), X, y
        )
    if codes is None:
        return X, y, n_rows(X) if dask_input else X.shape[0]
    if dask_input:
        (X, y), n = bound_dask_rows([X, y], codes, k, rng)
        return X, y, n
    keep = bound_contributions(codes, k, rng)
    return X[keep], y[keep], keep.shape[0]


def _estimates_bounds(est):
    """Whether ``bounds_X`` or ``bounds_y`` is left to a private estimate."""
    return any(
        v is None or (isinstance(v, str) and v == "private") for v in (est.bounds_X, est.bounds_y)
    )


def _bounds_and_rows(est, X, y, epsilon, streams, columns, patients, dask_input):
    """``(X, y, n, (lo, hi, ylo, yhi), eps_bounds, weights)``: the bounds and the rows
    released, with ``weights = (sizes, k)`` for ``contribution="weight"`` (every row,
    weighted by ``min(1, k / n_p)``, :mod:`skdp.linear_model._functional_weights`) and
    ``None`` otherwise.

    Declared bounds: resolved first, then every row checked (``clip=False``) and each
    patient bounded to ``k`` rows (:func:`_bound_rows`) or weighted. A private estimate
    with ``groups`` (in memory; ``clip=True``, as an estimate requires): the estimate
    runs on at most ``k`` rows of each patient chosen at random, its queries calibrated
    per patient (:func:`skdp.mechanisms.resolve_bounds` with ``max_rows_per_group=k``);
    with ``contribution="weight"`` the statistics then read every row, weighted.
    """
    codes, k = patients
    # "clip": the centre stage weighted as "weight" (the statistics clipped later)
    weighted = codes is not None and est.contribution in ("weight", "clip")
    if codes is not None and _estimates_bounds(est):
        Xk, yk, n = _bound_rows(est, X, y, None, columns, codes, k, streams["groups"], dask_input)
        xb, yb, eps = _resolve_bounds(est, Xk, yk, epsilon, streams["bounds"], columns, k)
        if not weighted:
            return Xk, yk, n, (*xb, *yb), eps, None
    else:
        xb, yb, eps = _resolve_bounds(est, X, y, epsilon, streams["bounds"], columns)
    if weighted:  # clip=False: every row is checked by the statistics' own pass
        X, y, sizes, n = patient_weights(X, y, codes, k, dask_input)
        return X, y, n, (*xb, *yb), eps, (sizes, k)
    X, y, n = _bound_rows(est, X, y, (*xb, *yb), columns, codes, k, streams["groups"], dask_input)
    return X, y, n, (*xb, *yb), eps, None
