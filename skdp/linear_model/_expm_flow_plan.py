"""The release plan of :class:`ExpMFlowClassifier` and :class:`ExpMFlowRegressor`: the
budget's shares of one fit, computed once from public inputs.

The plan is the only source of ``privacy_breakdown_``, ``epsilon_spent_``,
``delta_spent_``, ``epsilon_per_sample_`` and ``sensitivity_``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from skdp.mechanisms._bounds import BOUNDS_FRACTION
from skdp.mechanisms.sensitivity import expm_squared_loss_sensitivity, group_sensitivity

__all__ = ["ExpMFlowPlan"]


@dataclass(frozen=True)
class ExpMFlowPlan:
    """Budget of one ExpMFlow fit.

    Attributes
    ----------
    epsilon : float
        The total (nominal) budget of the fit.
    eps_bounds : float
        Epsilon of the private estimate of ``bounds_y`` (regressor only):
        ``BOUNDS_FRACTION * epsilon`` when it is estimated, else 0 (0 at
        ``epsilon = inf``, where the data range is used).
    eps_mechanism : float
        Epsilon of the exponential mechanism: ``epsilon - eps_bounds``.
    n_release_samples : int
        Number ``k`` of released models.
    epsilon_per_sample : float
        ``eps_mechanism / k``: the budget of each released model.
    sensitivity : float
        Sensitivity ``s`` of the squared-loss utility on ``[0, 1]`` targets per privacy
        unit: 1 per row, ``k`` per patient of at most ``k`` rows (the utility is a sum
        of per-row losses in ``[0, 1]`` plus a data-independent regulariser).
    regressor : bool
        Whether the breakdown has a ``"bounds"`` entry.
    max_rows_per_group : int or None
        The contribution bound ``k`` of a patient-level fit (``None`` per row).
    """

    epsilon: float
    eps_bounds: float
    eps_mechanism: float
    n_release_samples: int
    epsilon_per_sample: float
    sensitivity: float
    regressor: bool
    max_rows_per_group: int | None = None

    @classmethod
    def build(
        cls,
        *,
        epsilon,
        n_release_samples,
        regressor=False,
        bounds_estimated=False,
        max_rows_per_group=None,
    ):
        """The plan from public inputs only: the budget, ``n_release_samples``, for
        the regressor whether ``bounds_y`` is estimated privately, and the contribution
        bound of a patient-level fit (the sensitivity is multiplied by it here, once)."""
        private = math.isfinite(epsilon)
        estimated = regressor and bounds_estimated and private
        eps_bounds = BOUNDS_FRACTION * epsilon if estimated else 0.0
        eps_mechanism = epsilon - eps_bounds
        k = int(n_release_samples)
        return cls(
            epsilon=float(epsilon),
            eps_bounds=float(eps_bounds),
            eps_mechanism=float(eps_mechanism),
            n_release_samples=k,
            epsilon_per_sample=eps_mechanism / k,
            sensitivity=group_sensitivity(
                expm_squared_loss_sensitivity(0.0, 1.0), max_rows_per_group
            ),
            regressor=bool(regressor),
            max_rows_per_group=max_rows_per_group,
        )

    @property
    def exponent_epsilon(self):
        """The ``epsilon`` the engine's exponent ``epsilon u / (2 s_row)`` is given (its
        ``s_row = 1`` is the row's): ``epsilon_per_sample s_row / s``, so the density is
        ``exp(epsilon_per_sample u / (2 s))`` with the plan's ``s`` (``k`` per patient).
        The regulariser is inside ``u``, so the mechanism is exactly the one with
        sensitivity ``s``."""
        if self.max_rows_per_group is None:
            return self.epsilon_per_sample
        row = expm_squared_loss_sensitivity(0.0, 1.0)
        return self.epsilon_per_sample * row / self.sensitivity

    @property
    def private(self):
        """Whether the fit is private (``epsilon`` finite)."""
        return math.isfinite(self.epsilon)

    @property
    def epsilon_spent(self):
        """``epsilon`` (nominal; ``inf`` for a non-private fit)."""
        return self.epsilon

    @property
    def delta_spent(self):
        """0: the exponential mechanism is pure DP."""
        return 0.0

    @property
    def guarantee(self):
        """``"approximate"`` (the flow approximates the mechanism), ``"exact"`` at
        ``epsilon = inf``."""
        return "approximate" if self.private else "exact"

    def breakdown(self):
        """``privacy_breakdown_``: the epsilon of each release; sums to ``epsilon``."""
        out = {"bounds": self.eps_bounds} if self.regressor else {}
        return {**out, "exponential_mechanism": self.eps_mechanism}
