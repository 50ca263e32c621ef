"""The patient (a group of rows) as the privacy unit: validation of ``groups`` and of the
contribution bound ``max_rows_per_group``, and contribution bounding.

Neighbouring relation with ``groups``: add or remove **one group with all its rows**.
Bounding each group to at most ``k = max_rows_per_group`` rows, chosen uniformly at random
inside the mechanism (never "the first k": the order of the rows is data), makes a
patient's effect on any statistic at most that of ``k`` rows; each mechanism then scales
its row-level sensitivity (:func:`skdp.mechanisms.sensitivity.group_sensitivity`).
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np

__all__ = [
    "GROUPS_HELP",
    "PRIVATE_ROWS_FRACTION",
    "bound_contributions",
    "check_groups",
    "check_max_rows_per_group",
    "private_max_rows_per_group",
]

#: share of epsilon that ``max_rows_per_group="private"`` spends on its estimate
PRIVATE_ROWS_FRACTION = 0.1
#: the public candidates of that estimate: 1 .. PRIVATE_ROWS_MAX rows a patient
PRIVATE_ROWS_MAX = 1000
#: the quantile of the patients' row counts that it estimates
PRIVATE_ROWS_QUANTILE = 0.9

#: what to do when ``groups`` is given without a contribution bound
GROUPS_HELP = (
    "declare max_rows_per_group, the public number of rows a patient may contribute "
    "(from the visit schedule or the study protocol, e.g. the planned number of visits; "
    "never from the data): rows beyond it are dropped at random, and the guarantee "
    "holds per patient"
)


#: Dask labels beside in-memory data (computing them would bring them to the client)
DASK_GROUPS_IN_MEMORY = (
    "groups is a Dask collection but the data are in memory: pass groups in memory "
    "too (or the data as a Dask collection)"
)


def check_groups(groups, n_samples, *, name="groups"):
    """Validated group labels as integer codes ``0 .. n_groups - 1`` in order of first
    appearance (``ndarray`` of ``int64``, one per row).

    Raises ``ValueError`` for a wrong length, a missing label (NaN/None) or a
    multi-dimensional ``groups``, ``TypeError`` for unhashable labels; the messages name
    the parameter and never show a label (labels are private).
    """
    import pandas as pd  # a dependency of skdp; imported here to keep skdp's import light

    if isinstance(groups, (str, bytes)) or not hasattr(groups, "__len__"):
        raise TypeError(f"{name} must be an array-like of one label per row")
    if hasattr(groups, "array"):  # a pandas Series / Index
        values = np.asarray(groups.array)
    elif isinstance(groups, np.ndarray):
        values = groups
    else:  # a list: pandas infers one dtype without merging 1 and "1" into one label
        try:
            values = pd.Series(list(groups)).to_numpy()
        except (TypeError, ValueError):
            raise TypeError(f"{name} must be an array-like of one label per row") from None
        if values.dtype == object and any(isinstance(v, (list, np.ndarray)) for v in values):
            raise ValueError(f"{name} must be 1-d (one label per row), got nested labels")
    if values.ndim != 1:
        raise ValueError(f"{name} must be 1-d (one label per row), got {values.ndim}-d")
    if values.shape[0] != n_samples:
        raise ValueError(
            f"{name} has {values.shape[0]} labels for {n_samples} rows: one label per row"
        )
    if values.dtype.kind == "f" and not np.isfinite(values).all():
        raise ValueError(f"{name} has missing or non-finite labels (every row needs one)")
    try:
        codes, _ = pd.factorize(values, use_na_sentinel=True)
    except TypeError:
        raise TypeError(f"{name} labels must be hashable (e.g. ints or strings)") from None
    if codes.size and codes.min() < 0:
        raise ValueError(f"{name} has missing or non-finite labels (every row needs one)")
    return codes.astype(np.int64)


def check_max_rows_per_group(value, *, name="max_rows_per_group"):
    """``value`` as an int ``>= 1``, or a ``ValueError``/``TypeError`` naming it."""
    if isinstance(value, bool) or not isinstance(value, (Integral, Real)):
        raise TypeError(f"{name} must be a whole number >= 1")
    if isinstance(value, Real) and not isinstance(value, Integral):
        if not float(value).is_integer():
            raise ValueError(f"{name} must be a whole number >= 1")
    if value < 1:
        raise ValueError(f"{name} must be a whole number >= 1")
    return int(value)


def bound_contributions(codes, max_rows, rng):
    """Indices (sorted) of the rows kept when each group keeps at most ``max_rows`` of
    its rows, chosen uniformly at random with ``rng`` (every subset of that size equally
    likely, whatever the order of the rows)."""
    codes = np.asarray(codes)
    order = rng.permutation(codes.shape[0])  # a uniform random order ...
    by_group = order[np.argsort(codes[order], kind="stable")]  # ... kept inside groups
    sorted_codes = codes[by_group]
    starts = np.r_[0, np.flatnonzero(np.diff(sorted_codes)) + 1]
    rank = np.arange(codes.shape[0]) - np.repeat(starts, np.diff(np.r_[starts, len(codes)]))
    return np.sort(by_group[rank < max_rows])


def patient_codes(
    est, groups, n_samples, *, dask_input=False, estimated=(), dask_ok=False, private_ok=False
):
    """``(codes, k)`` of a patient-level fit by ``est``; ``(None, None)`` without
    ``groups``.

    Refuses, naming the parameter: Dask input (bounding a patient's rows needs them
    together) unless ``dask_ok`` (the caller bounds on the workers,
    :func:`skdp.utils._groups_dask.bound_dask_rows`; the codes are then the labels as a
    1-D Dask array, or the checked in-memory labels), Dask ``groups`` beside in-memory
    data, ``groups`` without ``est.max_rows_per_group`` (with :data:`GROUPS_HELP`), a
    bad bound, bad labels (:func:`check_groups`), and any of the bounds parameters
    named in ``estimated`` left to a private estimate (``None`` or ``"private"``),
    which is not implemented per patient. ``max_rows_per_group="private"`` is returned
    as ``k = "private"`` where ``private_ok`` (the caller estimates it with
    :func:`private_max_rows_per_group`), refused otherwise.
    """
    from skdp.utils._rowsum import is_dask_collection

    if groups is None:
        return None, None
    if dask_input and not dask_ok:
        raise ValueError(
            "groups= is not supported for Dask input yet: bounding a patient's rows "
            "needs them together (fit in memory, or without groups)"
        )
    if dask_input:
        from skdp.utils._groups_dask import check_dask_groups

        codes = check_dask_groups(groups, n_samples)
    elif is_dask_collection(groups):
        raise ValueError(DASK_GROUPS_IN_MEMORY)
    else:
        codes = check_groups(groups, n_samples)
    if est.max_rows_per_group is None:
        raise ValueError(f"groups= needs max_rows_per_group: {GROUPS_HELP}")
    if isinstance(est.max_rows_per_group, str) and est.max_rows_per_group == "private":
        if not private_ok:
            raise ValueError(
                "max_rows_per_group='private' is not supported here (in memory, "
                f"DPStandardScaler only): {GROUPS_HELP}"
            )
        k = "private"  # estimated by the caller (private_max_rows_per_group)
    else:
        k = check_max_rows_per_group(est.max_rows_per_group)
    for name in estimated:
        value = getattr(est, name)
        if value is None or (isinstance(value, str) and value == "private"):
            raise ValueError(
                f"{name}={value!r} with groups=: a private bound estimate per patient "
                f"is not implemented; declare {name} (doc/choosing_bounds.rst)"
            )
    return codes, k


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
        The patient of each row (:func:`check_groups`).
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
    >>> k = private_max_rows_per_group(codes, epsilon=1.0, rng=np.random.default_rng(0))
    >>> 8 <= k <= 10
    True
    """
    import math

    from skdp.mechanisms import private_grid_quantile

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
