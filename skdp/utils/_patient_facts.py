"""The fitted facts of the privacy unit, ``privacy_unit_`` and ``max_rows_per_group_``
(:doc:`/patients`), as read-only properties of an estimator.

They are derived from the contribution bound ``k`` of the fit's plan, kept in the
private ``_max_rows_per_group`` (set at ``fit``; ``None`` for a row-level fit). As
properties they are not entries of ``vars(est)``, so adding them leaves the fitted
state of every row-level release as it was; before ``fit`` they raise
``AttributeError`` like any fitted attribute.
"""

from __future__ import annotations

__all__ = ["PatientFactsMixin"]


class PatientFactsMixin:
    """``privacy_unit_`` and ``max_rows_per_group_`` from ``_max_rows_per_group``."""

    @property
    def privacy_unit_(self):
        """``"row"`` (add/remove one row) or ``"group"`` (add/remove one patient with all
        their rows, ``groups=``)."""
        return "row" if self._max_rows_per_group is None else "group"

    @property
    def max_rows_per_group_(self):
        """The contribution bound ``k`` of a patient-level fit, ``None`` per row."""
        return self._max_rows_per_group
