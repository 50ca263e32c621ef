"""The patient as the privacy unit in the DP transformers: ``fit(X, groups=)`` with the
constructor's ``max_rows_per_group`` (:doc:`/patients`).

The transformers' releases are sums and counts of per-row terms, so bounding each
patient to at most ``k`` rows (chosen uniformly at random inside the mechanism,
:func:`skdp.utils._groups.bound_contributions`) makes every sensitivity ``k`` times the
row's (:func:`skdp.mechanisms.sensitivity.group_sensitivity`).
"""

from __future__ import annotations

from skdp.utils._groups import GROUPS_HELP, check_groups, check_max_rows_per_group
from skdp.utils._rowsum import any_dask

__all__ = ["check_patient_input", "patient_codes"]


def check_patient_input(X, groups):
    """Refuse ``groups`` with Dask input, before anything is read or computed."""
    if groups is not None and any_dask(X, groups):
        raise ValueError(
            "groups= is not supported for Dask input yet: bounding a patient's rows "
            "needs them together (fit in memory, or without groups)"
        )


def patient_codes(est, groups, n, *, estimated_bounds=False):
    """``(codes, k)`` of a patient-level fit, ``(None, None)`` without ``groups``.

    ``estimated_bounds``: the fit would estimate its bounds privately, which is not
    implemented per patient (refused, naming ``bounds``).
    """
    if groups is None:
        return None, None
    codes = check_groups(groups, n)
    if est.max_rows_per_group is None:
        raise ValueError(f"groups= needs max_rows_per_group: {GROUPS_HELP}")
    k = check_max_rows_per_group(est.max_rows_per_group)
    if estimated_bounds:
        raise ValueError(
            f"bounds={est.bounds!r} with groups=: a private bound estimate per patient "
            "is not implemented; declare bounds (doc/choosing_bounds.rst)"
        )
    return codes, k
