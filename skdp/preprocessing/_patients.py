"""The patient as the privacy unit in the DP transformers: ``fit(X, groups=)`` with the
constructor's ``max_rows_per_group`` (:doc:`/patients`).

The transformers' releases are sums and counts of per-row terms, so bounding each
patient to at most ``k`` rows (chosen uniformly at random inside the mechanism,
:func:`skdp.utils._groups.bound_contributions`) makes every sensitivity ``k`` times the
row's (:func:`skdp.mechanisms.sensitivity.group_sensitivity`).
"""

from __future__ import annotations

from skdp.utils._rowsum import any_dask

__all__ = ["check_patient_input"]


def check_patient_input(X, groups):
    """Refuse ``groups`` with Dask input, before anything is read or computed."""
    if groups is not None and any_dask(X, groups):
        raise ValueError(
            "groups= is not supported for Dask input yet: bounding a patient's rows "
            "needs them together (fit in memory, or without groups)"
        )
