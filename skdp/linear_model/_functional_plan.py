"""The release plan of :class:`DPLinearRegression`: every share of the budget, every
sensitivity and noise scale of one fit, computed once from public inputs.

The plan is built after the bounds are resolved (their budget is a public fraction) and
before any statistic of the rows is released; it is the only source of
``privacy_breakdown_``, ``epsilon_spent_`` and ``delta_spent_``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from skdp.linear_model._functional_release import (
    EIGENVALUE_SHARE,
    PATIENT_SLOPE_SCALE,
    _centre_share,
    _choose_mechanism,
    _target_weight,
)
from skdp.mechanisms import gaussian_sigma
from skdp.mechanisms.sensitivity import (
    gram_min_eigenvalue_sensitivity,
    group_sensitivity,
    sufficient_statistics_sensitivity,
    target_moments_sensitivity,
)

__all__ = ["FunctionalPlan"]


@dataclass(frozen=True)
class FunctionalPlan:
    """Budget, sensitivities and noise scales of one :class:`DPLinearRegression` fit.

    Attributes
    ----------
    n, p : int
        Public number of rows and of features.
    fit_intercept, adaptive, secure_mode : bool
        The estimator's parameters (``adaptive``: ``regularization="adaptive"``).
    epsilon, delta : float
        The total budget of the fit; ``delta`` is what the Gaussian release may spend
        (0 when only the Laplace release may run).
    eps_bounds, eps_centre, eps_eigenvalue, eps_objective : float
        Epsilon of the private bounds, the target's mean and variance, the smallest
        eigenvalue and the statistics (for the Gaussian release the last two are its
        ``(epsilon_r, delta)`` split as ``mu^2`` is split); they sum to ``epsilon``.
    mechanism : {"functional", "gaussian"}
        The release of the statistics.
    mean_only : bool
        ``n epsilon`` too small for slopes (at patient level ``(n / k) epsilon``
        below ``PATIENT_SLOPE_SCALE d'``): only the target's mean is released.
    target_weight, sensitivity, eigenvalue_sensitivity, centre_sensitivity : float
        Weight of ``X~^T y~`` and the sensitivities (L1 for Laplace, L2 for Gaussian
        noise) of the statistics, of the smallest eigenvalue and of the target's
        moments; ``nan`` where nothing is released.
    max_rows_per_group : int or None
        The contribution bound ``k`` of a patient-level fit (``groups``): every
        sensitivity is ``k`` times the row-level one
        (:func:`skdp.mechanisms.sensitivity.group_sensitivity`); ``None`` for a
        row-level fit.
    contribution : {"weight", "sample", "clip"} or None
        The contribution bounding of a patient-level fit (``None`` for a row-level
        fit). With ``"clip"`` the statistics' sensitivity is the clip norm of
        :mod:`skdp.linear_model._functional_clip`: ``k`` times one row's norm of the
        released vector, which then holds the count (the Gram's corner) too.
    noise_scale, eigenvalue_scale, centre_scale, entry_sd : float
        Laplace scale (Gaussian standard deviation) of the statistics, of the
        eigenvalue and of the moments in floating point, and the standard deviation
        of one statistic's noise; 0 at ``epsilon = inf``. With ``secure_mode`` the grid
        releases report their own (slightly larger) scales.
    """

    n: int
    p: int
    fit_intercept: bool
    adaptive: bool
    secure_mode: bool
    epsilon: float
    delta: float
    eps_bounds: float
    eps_centre: float
    eps_eigenvalue: float
    eps_objective: float
    mechanism: str
    mean_only: bool
    target_weight: float
    sensitivity: float
    eigenvalue_sensitivity: float
    centre_sensitivity: float
    noise_scale: float
    eigenvalue_scale: float
    centre_scale: float
    entry_sd: float
    max_rows_per_group: int | None = None
    contribution: str | None = None

    @classmethod
    def build(
        cls,
        *,
        n,
        p,
        epsilon,
        delta,
        eps_bounds,
        fit_intercept,
        mechanism,
        adaptive,
        secure_mode,
        max_rows_per_group=None,
        contribution=None,
    ):
        """The plan of a fit from public inputs only: ``n``, ``p``, the budget, the
        bounds' share and the parameters (``mechanism`` may be ``"auto"``; ``delta``
        is 0 where the Gaussian release may not run; ``max_rows_per_group`` the
        contribution bound of a patient-level fit, ``contribution`` its rule)."""
        eps_rest = epsilon - eps_bounds
        k = max_rows_per_group
        # per patient every sensitivity is k times a row's: the public rules read the
        # kept (or weighted) rows per unit of sensitivity, n / k (n for a row-level fit)
        n_unit = n if k is None else n / k
        share = _centre_share(n_unit, eps_rest) if fit_intercept else 0.0
        if share > 0.0 and _patient_mean_only(n_unit, eps_rest, p, fit_intercept, k):
            share = 1.0  # the whole budget to the private mean
        eps_centre = share * eps_rest if share > 0.0 else 0.0
        centre_sens = group_sensitivity(target_moments_sensitivity(norm="l1"), k)
        centre_scale = centre_sens / eps_centre if share > 0.0 else 0.0
        eps_stats = eps_rest - eps_centre
        mean_only = share >= 1.0
        if mechanism == "auto":
            mechanism = (
                "functional"
                if secure_mode or mean_only
                else _choose_mechanism(
                    p,
                    fit_intercept=fit_intercept,
                    epsilon=eps_stats,
                    delta=delta,
                    adaptive=adaptive,
                )
            )
        common = {
            "n": n,
            "p": p,
            "fit_intercept": fit_intercept,
            "adaptive": adaptive,
            "secure_mode": secure_mode,
            "epsilon": epsilon,
            "delta": delta,
            "eps_bounds": eps_bounds,
            "eps_centre": eps_centre,
            "mechanism": mechanism,
            "mean_only": mean_only,
            "eigenvalue_sensitivity": group_sensitivity(
                float(gram_min_eigenvalue_sensitivity(p, fit_intercept=fit_intercept)), k
            ),
            "centre_sensitivity": centre_sens,
            "centre_scale": centre_scale,
            "max_rows_per_group": max_rows_per_group,
            "contribution": None if k is None else contribution,
        }
        if mean_only:
            nan = float("nan")
            return cls(
                **common,
                eps_eigenvalue=0.0,
                eps_objective=0.0,
                target_weight=nan,
                sensitivity=nan,
                noise_scale=nan,
                eigenvalue_scale=0.0,
                entry_sd=nan,
            )
        return cls(**common, **_statistics_release(p, eps_stats, delta, common, k))

    @property
    def count_released(self):
        """Whether the count (the Gram's corner) is released with the statistics, not
        public: ``contribution="clip"`` with an intercept."""
        return self.contribution == "clip" and self.fit_intercept

    @property
    def gaussian(self):
        """Whether the statistics get Gaussian noise."""
        return self.mechanism == "gaussian"

    @property
    def delta_spent(self):
        """``delta`` when the Gaussian release runs, 0 otherwise."""
        return self.delta if self.gaussian and not self.mean_only else 0.0

    def breakdown(self):
        """``privacy_breakdown_``: the epsilon of each release; sums to ``epsilon``."""
        return {
            "bounds": float(self.eps_bounds),
            "centre": float(self.eps_centre),
            "eigenvalue": float(self.eps_eigenvalue),
            "objective": float(self.eps_objective),
        }


def _patient_mean_only(n_unit, epsilon, p, fit_intercept, k):
    """Whether a patient-level fit (``k`` not ``None``) releases the private mean only:
    ``(n / k) epsilon <= PATIENT_SLOPE_SCALE d'`` with ``d' = p + fit_intercept``, a
    public rule. A patient's rows share the patient's effect, so ``k`` kept rows carry
    less than ``k`` rows' information about the slopes while every noise is ``k``
    times a row's; below this budget the slopes' noise costs more than the slopes
    explain (``doc/patients.rst``, "What it costs"). Row-level fits keep their rule."""
    if k is None or math.isinf(epsilon):
        return False
    return n_unit * epsilon <= PATIENT_SLOPE_SCALE * (p + int(fit_intercept))


def _statistics_release(p, epsilon, delta, common, k=None):
    """Sensitivities, scales and the epsilon split of the statistics' release (and of
    the smallest eigenvalue) at budget ``epsilon`` (after the bounds and the centre)."""
    fit_intercept, adaptive = common["fit_intercept"], common["adaptive"]
    gaussian = common["mechanism"] == "gaussian"
    w = _target_weight(p, fit_intercept=fit_intercept, gaussian=gaussian)
    row = sufficient_statistics_sensitivity(
        p, fit_intercept=fit_intercept, target_weight=w, norm="l2" if gaussian else "l1"
    )
    if common["contribution"] == "clip" and fit_intercept:  # the count's entry, 1 a row
        row = math.hypot(row, 1.0) if gaussian else row + 1.0
    sens = group_sensitivity(row, k)
    sens_eig = common["eigenvalue_sensitivity"]
    share = EIGENVALUE_SHARE if adaptive else 0.0
    out = {"target_weight": w, "sensitivity": sens}
    if math.isinf(epsilon):
        return {
            **out,
            "eps_eigenvalue": 0.0,
            "eps_objective": math.inf,
            "noise_scale": 0.0,
            "eigenvalue_scale": 0.0,
            "entry_sd": 0.0,
        }
    if gaussian:
        mu = 1.0 / gaussian_sigma(sensitivity=1.0, epsilon=epsilon, delta=delta)
        scale = sens / (mu * math.sqrt(1.0 - share))
        return {
            **out,
            "eps_eigenvalue": share * epsilon,
            "eps_objective": (1.0 - share) * epsilon,
            "noise_scale": scale,
            "eigenvalue_scale": sens_eig / (mu * math.sqrt(share)) if adaptive else 0.0,
            "entry_sd": scale,
        }
    eps_eig = share * epsilon
    eps_obj = epsilon - eps_eig
    scale = sens / eps_obj
    return {
        **out,
        "eps_eigenvalue": eps_eig,
        "eps_objective": eps_obj,
        "noise_scale": scale,
        "eigenvalue_scale": sens_eig / eps_eig if adaptive else 0.0,
        "entry_sd": math.sqrt(2.0) * scale,
    }
