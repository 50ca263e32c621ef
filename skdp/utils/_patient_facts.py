"""The fitted facts of the privacy unit, ``privacy_unit_`` and ``max_rows_per_group_``
(:doc:`/patients`), as read-only properties of an estimator.

They are derived from the contribution bound ``k`` of the fit's plan, kept in the
private ``_max_rows_per_group`` (set at ``fit``; ``None`` for a row-level fit). As
properties they are not entries of ``vars(est)``, so adding them leaves the fitted
state of every row-level release as it was; before ``fit`` they raise
``AttributeError`` like any fitted attribute.
"""

from __future__ import annotations

import math

__all__ = ["PatientFactsMixin", "PlanFactsMixin", "PlanUnitMixin"]


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


class PlanUnitMixin:
    """``privacy_unit`` of a release plan (a frozen dataclass with a
    ``max_rows_per_group`` field, ``None`` per row): what its ``privacy_unit_`` reports."""

    @property
    def privacy_unit(self):
        """``privacy_unit_``: ``"row"``, or ``"group"`` (one patient) with a bound."""
        return "row" if self.max_rows_per_group is None else "group"


class PlanFactsMixin(PlanUnitMixin):
    """``privacy_unit``, ``private`` and ``delta_spent`` of a release plan with
    ``epsilon``, ``delta`` and ``max_rows_per_group`` fields."""

    @property
    def private(self):
        """Whether the fit is private (adds noise): ``epsilon`` finite."""
        return math.isfinite(self.epsilon)

    @property
    def delta_spent(self):
        """``delta`` for a private fit, 0 otherwise."""
        return self.delta if self.private else 0.0
