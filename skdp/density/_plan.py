"""The release plan of :class:`DPFlowDensity`: the budget's shares and the DP-SGD schedule
of one fit, computed once from public inputs.

The plan is built after the public schema is known (which numeric bounds are estimated
privately is a property of the declared schema, not of the rows) and the flow is built
(its parameter count sets the default step count), before any DP-SGD step; it is the
only source of ``privacy_breakdown_``, ``epsilon_spent_``, ``delta_spent_`` and
``noise_multiplier_``.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

from skdp.exceptions import ApproximateGuaranteeWarning
from skdp.mechanisms._bounds import BOUNDS_FRACTION

__all__ = ["FlowDensityPlan"]


@dataclass(frozen=True)
class FlowDensityPlan:
    """Budget and DP-SGD schedule of one :class:`DPFlowDensity` fit.

    Attributes
    ----------
    n : int
        Public number of sampled units: rows, or patients with ``max_rows_per_group``.
    epsilon, delta : float
        The total budget of the fit (all of ``delta`` goes to DP-SGD).
    eps_bounds : float
        Epsilon of the private estimate of the missing numeric bounds:
        ``BOUNDS_FRACTION * epsilon`` when some are estimated, else 0 (0 at
        ``epsilon = inf``, where the data range is used).
    eps_dpsgd : float
        The accountant's epsilon of the ``n_iter`` DP-SGD steps at ``noise_multiplier``
        (at most ``epsilon - eps_bounds``; ``inf`` for a non-private fit).
    batch_size, n_iter : int
        Expected batch size and number of steps.
    sample_rate : float
        Poisson sampling rate ``q = min(1, batch_size / n)`` (of rows, or of patients).
    noise_multiplier : float
        ``sigma``: the given one, or the smallest that meets ``epsilon - eps_bounds``
        (0 for a non-private fit).
    accountant : str
    max_rows_per_group : int or None
        The contribution bound ``k`` of a patient-level fit (``None`` per row). DP-SGD
        clips each patient's gradient sum divided by ``k`` to ``max_grad_norm`` as one
        vector, so its L2 sensitivity stays ``max_grad_norm`` per patient and the
        accountant runs at the patients' sampling rate unchanged: ``k`` enters the
        mechanism as that public ``1 / k`` scaling only (:mod:`skdp.training._patients`).
    """

    n: int
    epsilon: float
    delta: float
    eps_bounds: float
    eps_dpsgd: float
    batch_size: int
    n_iter: int
    sample_rate: float
    noise_multiplier: float
    accountant: str
    max_rows_per_group: int | None = None

    @classmethod
    def build(
        cls,
        *,
        n,
        epsilon,
        delta,
        bounds_estimated,
        batch_size,
        n_iter,
        noise_multiplier=None,
        accountant="pld",
        max_rows_per_group=None,
    ):
        """The plan from public inputs only: ``n``, the budget, whether the schema leaves
        numeric bounds to a private estimate, the schedule and the noise multiplier
        (``None``: calibrated; ``BudgetExceededError`` when a given one spends more), and
        the contribution bound of a patient-level fit."""
        from skdp.accounting import resolve_noise_multiplier

        private = math.isfinite(epsilon)
        eps_bounds = BOUNDS_FRACTION * epsilon if private and bounds_estimated else 0.0
        q = min(1.0, float(batch_size) / n)
        sigma, eps_dpsgd = 0.0, math.inf
        if private:
            with warnings.catch_warnings():
                # train_dpsgd warns once for the approximate accountant
                warnings.simplefilter("ignore", ApproximateGuaranteeWarning)
                sigma, eps_dpsgd = resolve_noise_multiplier(
                    epsilon=epsilon - eps_bounds,
                    delta=delta,
                    sample_rate=q,
                    steps=int(n_iter),
                    noise_multiplier=noise_multiplier,
                    accountant=accountant,
                )
        return cls(
            n=int(n),
            epsilon=float(epsilon),
            delta=float(delta),
            eps_bounds=float(eps_bounds),
            eps_dpsgd=float(eps_dpsgd),
            batch_size=int(batch_size),
            n_iter=int(n_iter),
            sample_rate=q,
            noise_multiplier=float(sigma),
            accountant=accountant,
            max_rows_per_group=None if max_rows_per_group is None else int(max_rows_per_group),
        )

    @property
    def privacy_unit(self):
        """``privacy_unit_``: ``"row"``, or ``"group"`` (one patient) with a bound."""
        return "row" if self.max_rows_per_group is None else "group"

    @property
    def private(self):
        """Whether the fit is private (``epsilon`` finite)."""
        return math.isfinite(self.epsilon)

    @property
    def delta_spent(self):
        """``delta`` for a private fit, 0 otherwise."""
        return self.delta if self.private else 0.0

    def breakdown(self):
        """``privacy_breakdown_``: ``{"bounds", "dpsgd"}`` epsilons (basic composition:
        they add up to at most ``epsilon``; ``dpsgd`` is ``inf`` for a non-private fit)."""
        return {"bounds": self.eps_bounds, "dpsgd": self.eps_dpsgd}
