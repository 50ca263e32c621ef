"""Shared base for every skdp estimator.

:class:`DPEstimatorMixin` adds the privacy parameters' constraints and the fitted
privacy facts every estimator reports:

``epsilon_spent_``, ``delta_spent_``
    What one ``fit`` actually spent (never more than ``epsilon``/``delta``; ``inf``
    for a non-private fit).
``privacy_guarantee_``
    ``"exact"`` when the spend is a proven bound (pure DP, RDP/PLD accounting,
    closed-form samplers) or ``"approximate"`` when it is not (the ``"gdp_clt"``
    accountant, flow-sampled exponential mechanisms).

Put it first in the bases: ``class Est(DPEstimatorMixin, RegressorMixin, BaseEstimator)``.
"""

from __future__ import annotations

import math
from numbers import Real

from skdp.utils._sklearn_compat import Interval, Options
from skdp.utils.validation import check_privacy_params

__all__ = ["DPEstimatorMixin", "PRIVACY_GUARANTEES"]

PRIVACY_GUARANTEES = ("exact", "approximate")


class DPEstimatorMixin:
    """Mixin for differentially private estimators.

    Subclasses merge :attr:`_privacy_parameter_constraints` into their own
    ``_parameter_constraints`` and call :meth:`_record_privacy_spent` at the end of
    ``fit``.
    """

    _privacy_parameter_constraints: dict = {
        "epsilon": [Interval(Real, 0, None, closed="neither"), Options(Real, {math.inf})],
        "delta": [Interval(Real, 0, 1, closed="left")],
    }

    def _check_privacy_params(self, *, n_samples=None, require_delta=False):
        """Validate ``self.epsilon`` / ``self.delta`` (``delta`` defaults to 0 if absent)."""
        return check_privacy_params(
            self.epsilon,
            getattr(self, "delta", 0.0),
            n_samples=n_samples,
            require_delta=require_delta,
        )

    def _record_privacy_spent(self, epsilon, delta=0.0, *, guarantee="exact"):
        """Store the fitted privacy facts (called at the end of ``fit``)."""
        if guarantee not in PRIVACY_GUARANTEES:
            raise ValueError(f"guarantee must be one of {PRIVACY_GUARANTEES}")
        self.epsilon_spent_ = float(epsilon)
        self.delta_spent_ = float(delta)
        self.privacy_guarantee_ = guarantee
        return self
