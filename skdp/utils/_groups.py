"""The patient (a group of rows) as the privacy unit: validation of ``groups`` and of the
contribution bound ``max_rows_per_group``, and contribution bounding.

Neighbouring relation with ``groups``: add or remove **one group with all its rows**.
Bounding each group to at most ``k = max_rows_per_group`` rows, chosen uniformly at random
inside the mechanism (never "the first k": the order of the rows is data), makes a
patient's effect on any statistic at most that of ``k`` rows; each mechanism then scales
its row-level sensitivity (:func:`skdp.mechanisms.sensitivity.group_sensitivity`).
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np

__all__ = [
    "GROUPS_HELP",
    "bound_contributions",
    "check_dask_groups",
    "check_groups",
    "check_max_rows_per_group",
    "schema_patient_codes",
]

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
    :func:`skdp.preprocessing._patients.private_max_rows_per_group`), refused
    otherwise.
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


def check_dask_groups(groups, n_samples, *, name="groups"):
    """``groups`` for a fit on Dask input: a 1-D Dask array of labels (from a Dask
    array, Series or one-column DataFrame) or an in-memory array checked as in memory.

    Raises ``ValueError`` for a wrong length or shape, naming ``name``; missing labels
    are refused per partition when the rows are bounded
    (:func:`skdp.utils._groups_dask.bound_dask_rows`). Nothing is computed but one row
    count per partition (when Dask does not know it).
    """
    from skdp.utils._rowsum import as_1d, is_dask_collection, n_rows

    if not is_dask_collection(groups):
        check_groups(groups, n_samples, name=name)  # in memory already: checked here
        return np.asarray(groups.array if hasattr(groups, "array") else groups)
    try:
        with warnings.catch_warnings():  # text labels become an object array: intended
            warnings.filterwarnings("ignore", "Dask currently has limited support")
            labels = as_1d(groups, name)
    except ValueError:
        raise ValueError(f"{name} must be 1-d (one label per row)") from None
    if n_rows(labels) != n_samples:
        raise ValueError(
            f"{name} has {n_rows(labels)} labels for {n_samples} rows: one label per row"
        )
    return labels


def schema_patient_codes(est, X, groups, n):
    """``(codes, k)`` of a patient-level fit of a tabular estimator (one with a
    ``_build_schema(X)`` and an ``epsilon``); ``(None, None)`` without ``groups``.

    Refused before any row is read by a mechanism, naming the parameter: Dask input,
    ``groups`` without ``max_rows_per_group``, bad labels (:func:`patient_codes`), and a
    private fit whose declared schema leaves numeric bounds to the private estimate (a
    per-row mechanism, not implemented per patient).
    """
    import math
    import warnings

    from skdp.utils._rowsum import is_dask_collection

    codes, k = patient_codes(est, groups, n, dask_input=is_dask_collection(X))
    if codes is None or not math.isfinite(est.epsilon):
        return codes, k
    with warnings.catch_warnings():  # the fit's own schema step warns again, once
        warnings.simplefilter("ignore")
        missing = est._build_schema(X).missing_bounds()
    if missing:
        raise ValueError(
            f"bounds of column(s) {list(missing)} are missing: with groups= every numeric "
            "column needs declared bounds (a private bound estimate per patient is not "
            "implemented; doc/choosing_bounds.rst)"
        )
    return codes, k
