"""The patient as the privacy unit in the DP transformers: ``fit(X, groups=)`` with the
constructor's ``max_rows_per_group`` (:doc:`/patients`).

The transformers' releases are sums and counts of per-row terms, so bounding each
patient to at most ``k`` rows (chosen uniformly at random inside the mechanism,
:func:`skdp.utils._groups.bound_contributions`) makes every sensitivity ``k`` times the
row's (:func:`skdp.mechanisms.sensitivity.group_sensitivity`).
"""

from __future__ import annotations

import math

import numpy as np

from skdp.mechanisms import private_grid_quantile
from skdp.utils._groups import DASK_GROUPS_IN_MEMORY, check_max_rows_per_group
from skdp.utils._random import fit_streams
from skdp.utils._rowsum import any_dask

__all__ = [
    "check_patient_input",
    "patient_streams",
    "private_max_rows_per_group",
    "resolve_rows_bound",
]

#: share of epsilon that ``max_rows_per_group="private"`` spends on its estimate
PRIVATE_ROWS_FRACTION = 0.1
#: the public candidates of that estimate: 1 .. PRIVATE_ROWS_MAX rows a patient
PRIVATE_ROWS_MAX = 1000
#: the quantile of the patients' row counts that it estimates
PRIVATE_ROWS_QUANTILE = 0.9


def patient_streams(est, names, X, codes, *, dask=False):
    """The named random streams of a transformer's fit (:func:`fit_streams`).

    Seeded by the rows as a multiset (``order_invariant``) on Dask input, whose
    bounding of each patient is order-free, and without ``groups``; with ``groups`` in
    memory the bounded subset depends on the row order, so a permuted copy must not
    reuse the noise on other rows.
    """
    return fit_streams(
        est.random_state,
        names,
        estimator=est,
        X=X,
        groups=codes,
        order_invariant=dask or codes is None,
    )


def check_patient_input(X, groups):
    """Refuse, before anything is read or computed, Dask ``groups`` beside in-memory
    ``X`` (Dask ``X`` with Dask ``groups`` is bounded on the workers)."""
    if groups is not None and any_dask(groups) and not any_dask(X):
        raise ValueError(DASK_GROUPS_IN_MEMORY)


def resolve_rows_bound(codes, k, epsilon, rng):
    """``(k, eps_rows)``: the declared bound (nothing spent), or for
    ``max_rows_per_group="private"`` a private high quantile of the patients' row
    counts (:func:`skdp.utils._groups.private_max_rows_per_group`) on
    ``PRIVATE_ROWS_FRACTION * epsilon`` (nothing spent at ``epsilon = inf``)."""
    if codes is None or not (isinstance(k, str) and k == "private"):
        return k, 0.0
    eps_rows = PRIVATE_ROWS_FRACTION * epsilon if math.isfinite(epsilon) else 0.0
    k = private_max_rows_per_group(codes, epsilon=eps_rows or math.inf, rng=rng)
    return k, eps_rows


def private_max_rows_per_group(
    codes, *, epsilon, rng, quantile=PRIVATE_ROWS_QUANTILE, max_rows=PRIVATE_ROWS_MAX
):
    """A private high quantile of the patients' row counts: the contribution bound
    ``k`` of ``max_rows_per_group="private"`` (:doc:`/patients`).

    Each patient contributes **one** value, its number of rows ``c_p`` (clipped to the
    public candidates ``1 .. max_rows``); the exponential mechanism picks a candidate
    with the quantile utility ``-dist(q P, [#{c_p < j}, #{c_p <= j}])``
    (:func:`skdp.mechanisms.private_grid_quantile`). Adding or removing a patient adds
    or removes one value, so the utility moves by at most
    :func:`~skdp.mechanisms.sensitivity.quantile_utility_sensitivity` ``= 1``
    whatever the patient's number of rows: ``epsilon``-DP per patient, exact (pure
    DP). The bound is released; bounding to it and calibrating to it afterwards is
    post-processing, charged by sequential composition with the rest of the fit.
    At ``epsilon = inf`` the exact quantile (rounded up).

    Parameters
    ----------
    codes : ndarray of int
        The patient of each row (:func:`skdp.utils._groups.check_groups`).
    epsilon : float
    rng : numpy.random.Generator
    quantile : float in (0, 1], default=0.9
    max_rows : int, default=1000
        The largest candidate (public): a patient with more rows counts as ``max_rows``.

    Returns
    -------
    int
        ``k`` in ``1 .. max_rows``.

    Examples
    --------
    >>> import numpy as np
    >>> codes = np.repeat(np.arange(3000), np.arange(3000) % 10 + 1)  # 1 to 10 rows
    >>> from skdp.preprocessing._patients import private_max_rows_per_group
    >>> k = private_max_rows_per_group(codes, epsilon=1.0, rng=np.random.default_rng(0))
    >>> 8 <= k <= 10
    True
    """
    if not 0.0 < float(quantile) <= 1.0:
        raise ValueError("quantile must be in (0, 1]")
    max_rows = check_max_rows_per_group(max_rows, name="max_rows")
    counts = np.bincount(np.asarray(codes, dtype=np.int64))
    counts = np.clip(counts[counts > 0], 1, max_rows).astype(float)
    if math.isinf(epsilon):
        return int(np.ceil(np.quantile(counts, quantile))) if counts.size else 1
    candidates = np.arange(1, max_rows + 1, dtype=float)
    k = private_grid_quantile(counts, quantile, candidates=candidates, epsilon=epsilon, rng=rng)
    return int(k)
