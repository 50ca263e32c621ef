"""Warnings and errors raised by skdp.

Every warning that signals a privacy leak is a :class:`PrivacyLeakWarning`; the
project's test suite turns it into an error except where a test expects it.
Advisory warnings (the guarantee is approximate, delta is large, ...) derive from
:class:`PrivacyAdvisoryWarning`, itself a :class:`UserWarning`.
"""

from __future__ import annotations

__all__ = [
    "ApproximateGuaranteeWarning",
    "BoundsEstimateWarning",
    "BudgetExceededError",
    "DeltaTooLargeWarning",
    "PrivacyAdvisoryWarning",
    "PrivacyLeakWarning",
]


class PrivacyLeakWarning(UserWarning):
    """Something touched private data without being privatised and accounted.

    Raised, for example, when the user opts in to reading bounds or categories off
    the data (``bounds="data"``): the released result then carries no formal
    differential-privacy guarantee with respect to those statistics.
    """


class PrivacyAdvisoryWarning(UserWarning):
    """Base class for advice about a privacy setting that is legal but questionable."""


class ApproximateGuaranteeWarning(PrivacyAdvisoryWarning):
    """The stated (epsilon, delta) is an approximation, not a proven bound.

    Emitted for the ``"gdp_clt"`` accountant and for flow-sampled exponential
    mechanisms, whose ``privacy_guarantee_`` is ``"approximate"``.
    """


class DeltaTooLargeWarning(PrivacyAdvisoryWarning):
    """``delta`` is at least ``1/n``: the guarantee then permits releasing a record."""


class BoundsEstimateWarning(PrivacyAdvisoryWarning):
    """Missing bounds are being estimated privately with too little data or budget for the
    estimate to be useful. Depends only on public quantities (n, d, epsilon)."""


class BudgetExceededError(ValueError):
    """A spend would take a :class:`~skdp.accounting.PrivacyLedger` past its budget,
    or the requested budget is too small for the mechanism to be run at all."""
