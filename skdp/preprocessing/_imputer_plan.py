"""The release plan of :class:`DPSimpleImputer`: every share of the budget, every
sensitivity and noise scale of one fit, computed once from public inputs.

Built before any statistic of the rows is released; the only source of
``privacy_breakdown_``, ``epsilon_spent_`` and ``delta_spent_``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from skdp.mechanisms.sensitivity import (
    bounded_sum_sensitivity,
    count_sensitivity,
    group_sensitivity,
    quantile_utility_sensitivity,
)

__all__ = ["ImputerPlan"]


@dataclass(frozen=True)
class ImputerPlan:
    """Budget, sensitivities and noise scales of one :class:`DPSimpleImputer` fit.

    Attributes
    ----------
    strategy : {"mean", "median", "constant"}
    n_features : int
        The number of columns ``d``.
    epsilon : float
        The budget of the fit (0 for ``"constant"``: nothing is read off the rows).
    eps_sum, eps_count : float
        ``"mean"``: epsilon of the noisy sums and of the noisy observed counts
        (``epsilon / 2`` each); 0 otherwise.
    eps_median, eps_column : float
        ``"median"``: epsilon of all the columns' exponential mechanisms together
        (``epsilon``) and the exponent each column's runs with (``epsilon / d`` per
        row, ``epsilon / (d k)`` for a patient of at most ``k`` rows); 0 otherwise.
    sensitivity_sum, sensitivity_count : float
        L1 sensitivities of the sum and the count vectors (``d``, ``k d`` with groups).
    utility_sensitivity : float
        Sensitivity of the quantile utility (1, ``k`` with groups).
    noise_scale_sum, noise_scale_count : float
        ``"mean"``: the Laplace scale of the sums and the discrete Laplace scale of the
        counts (sensitivity over epsilon); 0 at ``epsilon = inf`` and for the other
        strategies.
    max_rows_per_group : int or None
        The contribution bound ``k`` of a patient-level fit (``groups``); ``None`` per
        row.
    """

    strategy: str
    n_features: int
    epsilon: float
    eps_sum: float
    eps_count: float
    eps_median: float
    eps_column: float
    sensitivity_sum: float
    sensitivity_count: float
    utility_sensitivity: float
    noise_scale_sum: float
    noise_scale_count: float
    max_rows_per_group: int | None = None

    @classmethod
    def build(cls, *, strategy, n_features, epsilon, max_rows_per_group=None):
        """The plan of a fit from public inputs only: the strategy, the number of
        columns, the budget (ignored for ``"constant"``) and the contribution bound of
        a patient-level fit."""
        d, k = int(n_features), max_rows_per_group
        unit = group_sensitivity(quantile_utility_sensitivity(), k)
        plan = {
            "strategy": strategy,
            "n_features": d,
            "epsilon": 0.0,
            "sensitivity_sum": float(
                group_sensitivity(d * float(bounded_sum_sensitivity(-1.0, 1.0)), k)
            ),
            "sensitivity_count": float(group_sensitivity(d * count_sensitivity(), k)),
            "utility_sensitivity": float(unit),
            "max_rows_per_group": k,
        }
        plan.update(dict.fromkeys(("eps_sum", "eps_count", "eps_median", "eps_column"), 0.0))
        plan.update(noise_scale_sum=0.0, noise_scale_count=0.0)
        if strategy == "mean":
            eps_sum = epsilon / 2.0
            eps_count = epsilon / 2.0 if math.isfinite(epsilon) else math.inf
            plan.update(epsilon=epsilon, eps_sum=float(eps_sum), eps_count=float(eps_count))
            if math.isfinite(epsilon):
                plan.update(
                    noise_scale_sum=plan["sensitivity_sum"] / eps_sum,
                    noise_scale_count=plan["sensitivity_count"] / eps_count,
                )
        elif strategy == "median":
            # a row changes every column's quantile utility by at most 1 (the scale
            # private_quantile assumes): one exponential mechanism per column with
            # epsilon / d; a patient of at most k rows by at most k, so the exponent
            # of sensitivity k: epsilon / (d k)
            eps_col = epsilon / d if k is None else epsilon / (d * unit)
            plan.update(epsilon=epsilon, eps_median=float(epsilon), eps_column=float(eps_col))
        return cls(**plan)

    @property
    def releases(self):
        """Whether a statistic of the rows is released (``"mean"`` or ``"median"``)."""
        return self.strategy != "constant"

    @property
    def delta_spent(self):
        """0: every release is pure epsilon-DP."""
        return 0.0

    def breakdown(self):
        """``privacy_breakdown_``: the epsilon of each release; sums to ``epsilon``."""
        if self.strategy == "mean":
            return {"sum": float(self.eps_sum), "count": float(self.eps_count)}
        if self.strategy == "median":
            return {"median": float(self.eps_median)}
        return {}

    def noise_scale(self):
        """The scales of the noisy sums and counts (``"mean"``), keyed like
        :meth:`breakdown`; empty for the other strategies."""
        if self.strategy != "mean":
            return {}
        return {"sum": float(self.noise_scale_sum), "count": float(self.noise_scale_count)}
