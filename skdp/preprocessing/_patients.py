"""The patient as the privacy unit in the DP transformers: ``fit(X, groups=)`` with the
constructor's ``max_rows_per_group`` (:doc:`/patients`).

The transformers' releases are sums and counts of per-row terms, so bounding each
patient to at most ``k`` rows (chosen uniformly at random inside the mechanism,
:func:`skdp.utils._groups.bound_contributions`) makes every sensitivity ``k`` times the
row's (:func:`skdp.mechanisms.sensitivity.group_sensitivity`).
"""

from __future__ import annotations

from skdp.utils._groups import DASK_GROUPS_IN_MEMORY
from skdp.utils._rowsum import any_dask

__all__ = ["check_patient_input", "resolve_rows_bound"]


def check_patient_input(X, groups, *, dask_ok=False):
    """Refuse, before anything is read or computed, Dask ``groups`` beside in-memory
    ``X`` and (unless ``dask_ok``: the transformer bounds on the workers) ``groups``
    with Dask input."""
    if groups is not None and any_dask(groups) and not any_dask(X):
        raise ValueError(DASK_GROUPS_IN_MEMORY)
    if groups is not None and any_dask(X, groups) and not dask_ok:
        raise ValueError(
            "groups= is not supported for Dask input yet: bounding a patient's rows "
            "needs them together (fit in memory, or without groups)"
        )


def resolve_rows_bound(codes, k, epsilon, rng):
    """``(k, eps_rows)``: the declared bound (nothing spent), or for
    ``max_rows_per_group="private"`` a private high quantile of the patients' row
    counts (:func:`skdp.utils._groups.private_max_rows_per_group`) on
    ``PRIVATE_ROWS_FRACTION * epsilon`` (nothing spent at ``epsilon = inf``)."""
    import math

    from skdp.utils._groups import PRIVATE_ROWS_FRACTION, private_max_rows_per_group

    if codes is None or not (isinstance(k, str) and k == "private"):
        return k, 0.0
    eps_rows = PRIVATE_ROWS_FRACTION * epsilon if math.isfinite(epsilon) else 0.0
    k = private_max_rows_per_group(codes, epsilon=eps_rows or math.inf, rng=rng)
    return k, eps_rows
