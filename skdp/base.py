"""Shared base for every skdp estimator.

:class:`DPEstimatorMixin` adds the privacy parameters' constraints and the fitted
privacy facts every estimator reports:

``epsilon_spent_``, ``delta_spent_``
    What one ``fit`` actually spent (never more than ``epsilon``/``delta``; ``inf``
    for a non-private fit).
``privacy_guarantee_``
    ``"exact"`` when the spend is a proven bound (pure DP, RDP/PLD accounting,
    closed-form samplers), ``"approximate"`` when it is not (the ``"gdp_clt"``
    accountant, flow-sampled exponential mechanisms), ``"none"`` when the fit is not
    private at all (``epsilon=inf``, or a non-private opt-in such as ``bounds="data"``).
``nonprivate_options_``
    The names of the parameters that made the fit non-private (empty when private).

A non-private opt-in (a parameter set to ``"data"``, which reads metadata off the
private rows, or an estimator-specific one such as keeping un-noised diagnostics) emits
:class:`~skdp.exceptions.PrivacyLeakWarning` where it is used and makes
``epsilon_spent_ = inf`` and ``privacy_guarantee_ = "none"``, so that
:meth:`skdp.accounting.PrivacyLedger.spend_fitted` refuses such a model.

Put it first in the bases: ``class Est(DPEstimatorMixin, RegressorMixin, BaseEstimator)``.
"""

from __future__ import annotations

import math
from numbers import Real

from skdp.utils._sklearn_compat import Interval, Options
from skdp.utils.validation import check_privacy_params

__all__ = ["DPEstimatorMixin", "PRIVACY_GUARANTEES"]

PRIVACY_GUARANTEES = ("exact", "approximate", "none")


def _is_data_opt_in(value) -> bool:
    """``"data"``, or a dict / list holding ``"data"`` (per-column opt-ins)."""
    if isinstance(value, str):
        return value == "data"
    if isinstance(value, dict):
        return any(_is_data_opt_in(v) for v in value.values())
    if isinstance(value, list | tuple):
        return any(isinstance(v, str) and v == "data" for v in value)
    return False


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

    def _nonprivate_options(self) -> list[str]:
        """Names of the parameters whose values make a fit non-private.

        Every parameter set to ``"data"`` (metadata read off the private rows), plus
        what :meth:`_extra_nonprivate_options` names. Decided from the parameters only.
        """
        names = [k for k, v in self.get_params(deep=False).items() if _is_data_opt_in(v)]
        return names + [k for k in self._extra_nonprivate_options() if k not in names]

    def _extra_nonprivate_options(self) -> list[str]:
        """Estimator-specific non-private opt-ins (override; default none)."""
        return []

    def _planned_privacy_spend(self):
        """``(epsilon, delta)`` a fit with the current parameters will spend at most.

        Read from parameters only (meta-estimators plan a total before any row is read).
        Default: the ``epsilon`` / ``delta`` parameters (0 where absent); override where
        the spend depends on other parameters.
        """
        params = self.get_params(deep=False)
        return params.get("epsilon", 0.0), params.get("delta", 0.0)

    def _record_privacy_spent(self, epsilon, delta=0.0, *, guarantee="exact"):
        """Store the fitted privacy facts (called at the end of ``fit``).

        A fit with ``epsilon = inf`` or any non-private opt-in
        (:meth:`_nonprivate_options`) is recorded as ``epsilon_spent_ = inf``,
        ``privacy_guarantee_ = "none"``.
        """
        if guarantee not in PRIVACY_GUARANTEES:
            raise ValueError(f"guarantee must be one of {PRIVACY_GUARANTEES}")
        self.nonprivate_options_ = self._nonprivate_options()
        if self.nonprivate_options_ or math.isinf(float(epsilon)):
            epsilon, guarantee = math.inf, "none"
        self.epsilon_spent_ = float(epsilon)
        self.delta_spent_ = float(delta)
        self.privacy_guarantee_ = guarantee
        return self
