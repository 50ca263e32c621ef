"""The release plan of :class:`~skdp.survival.DPCoxPH`: every budget share, sensitivity
and noise scale of one fit, computed once from public inputs.

The fit releases four kinds of Gaussian-noised sums (all clipped per patient): the row
count and feature sums (a centre for the features), the baseline histogram (events and
exposure per interval), one Hessian of the piecewise-exponential log-likelihood, and
``n_iter`` gradients. They compose under
zero-concentrated DP (Bun & Steinke 2016): ``rho = zcdp_rho(epsilon, delta)`` is split
by the public fractions and converted back to ``(epsilon, delta)`` exactly (Canonne,
Kamath & Steinke 2020). The plan is the only source of ``privacy_breakdown_``,
``rho_breakdown_``, ``noise_scale_``, ``epsilon_spent_`` and ``delta_spent_``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from skdp.accounting import zcdp_rho
from skdp.utils._patient_facts import PlanFactsMixin

__all__ = ["CoxPlan", "cox_sensitivities"]

#: the parts of a fit in privacy_breakdown_ / rho_breakdown_ / noise_scale_
PARTS = ("centre", "baseline", "hessian", "gradient")


def cox_sensitivities(edges, n_features, *, max_grad_norm, hessian_clip):
    """L2 sensitivities of the four sums :class:`~skdp.survival.DPCoxPH` releases.

    Features are clipped to ``bounds_X`` and mapped onto ``z`` in ``[-1, 1]^d``; times
    are in units of the horizon ``M = max_time``. On the public grid ``0 = e_0 < ... <
    e_J = M`` patient ``i`` has the event indicator ``d_ij`` and the exposure ``t_ij``
    (time at risk) of interval ``j``, with ``sum_j d_ij <= 1`` and ``0 <= t_ij <=
    Delta_j / M`` (``Delta_j = e_{j+1} - e_j``) for a patient of one row.

    * **Centre** ``sum_i (1, z_i)``: one row's vector has L2 norm at most ``sqrt(1 +
      d)``; a patient's sum over their rows is clipped to it.
    * **Baseline** ``(D_j, T_j)_j = sum_i (d_ij, t_ij)_j``: one patient's vector has L2
      norm at most ``s_0 = sqrt(1 + sum_j (Delta_j / M)^2)`` (one event, and each
      exposure at most its interval's width). A patient of several rows is clipped to
      ``s_0`` as a whole, so ``s_0`` is the sensitivity under add/remove one patient.
    * **Gradient** of the piecewise-exponential log-likelihood at a released point
      ``(alpha, beta)``: patient ``i`` contributes ``g_i = ((d_ij - mu_ij)_j, (d_i -
      Lambda_i) z_i)`` with ``mu_ij = t_ij exp(alpha_j + z_i beta)`` and ``Lambda_i =
      sum_j mu_ij``; ``g_i`` (summed over the patient's rows) is clipped to L2 norm
      ``C = max_grad_norm``: sensitivity ``C``.
    * **Hessian** ``sum_i H_i`` with ``H_i = [[diag(mu_i), mu_i z_i^T], [z_i mu_i^T,
      Lambda_i z_i z_i^T]]``. Its Frobenius norm is at most ``w_i = Lambda_i (1 +
      ||z_i||^2)`` (``||mu_i|| <= Lambda_i``), summed over a patient's rows (triangle
      inequality); the patient's ``mu`` is scaled by ``min(1, C_H / w_i)``, so the
      released upper triangle (which holds the matrix) moves by at most ``C_H =
      hessian_clip`` in L2.

    Each bound holds under add/remove one patient with every row, whatever the number
    of rows (each is a clipped per-patient sum); it is tight (a patient whose clipped
    contribution reaches the bound). Under replace-one they double.

    Parameters
    ----------
    edges : ndarray of shape (J + 1,)
        The public grid (:func:`skdp.survival._grid.time_grid_edges`).
    n_features : int
    max_grad_norm, hessian_clip : float

    Returns
    -------
    dict
        ``{"centre": sqrt(1 + d), "baseline": s_0, "hessian": C_H, "gradient": C}``.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.survival._cox_plan import cox_sensitivities
    >>> s = cox_sensitivities(np.linspace(0, 10, 5), 3, max_grad_norm=2.0, hessian_clip=3.5)
    >>> s["centre"], round(s["baseline"], 4), s["gradient"], s["hessian"]
    (2.0, 1.118, 2.0, 3.5)
    """
    widths = np.diff(np.asarray(edges, dtype=np.float64)) / float(edges[-1])
    return {
        "centre": float(math.sqrt(1.0 + int(n_features))),
        "baseline": float(math.sqrt(1.0 + float(np.sum(widths * widths)))),
        "hessian": float(hessian_clip),
        "gradient": float(max_grad_norm),
    }


@dataclass(frozen=True)
class CoxPlan(PlanFactsMixin):
    """Budget, sensitivities and noise scales of one :class:`DPCoxPH` fit.

    Attributes
    ----------
    epsilon, delta : float
        The fit's budget (``epsilon = inf``: an exact non-private fit, no noise).
    rho : float
        ``zcdp_rho(epsilon, delta)`` (``inf`` when not private).
    rho_centre, rho_baseline, rho_hessian, rho_gradient : float
        Shares of ``rho`` (``rho_gradient`` for all ``n_iter`` gradients together);
        they sum to ``rho``.
    n_iter : int
        Number of released gradients (Newton steps).
    sensitivities : dict
        :func:`cox_sensitivities`.
    sigma_centre, sigma_baseline, sigma_hessian, sigma_gradient : float
        Gaussian standard deviations, ``sensitivity / sqrt(2 rho_part)`` (per gradient
        for ``sigma_gradient``: ``rho_gradient / n_iter`` each); 0 when not private.
    eigen_floor : float
        Floor of the noisy Hessian's eigenvalues, ``2 sigma_hessian sqrt(J + d)`` (the
        typical size of the noise matrix's top eigenvalue): a public number.
    max_rows_per_group : int or None
    """

    epsilon: float
    delta: float
    n_features: int
    n_intervals: int
    n_iter: int
    rho: float
    rho_centre: float
    rho_baseline: float
    rho_hessian: float
    rho_gradient: float
    sensitivities: dict
    sigma_centre: float
    sigma_baseline: float
    sigma_hessian: float
    sigma_gradient: float
    eigen_floor: float
    max_rows_per_group: int | None = None

    @classmethod
    def build(
        cls,
        *,
        epsilon,
        delta,
        edges,
        n_features,
        n_iter,
        max_grad_norm,
        hessian_clip,
        baseline_fraction,
        hessian_fraction,
        centre_fraction=0.05,
        max_rows_per_group=None,
    ):
        """The plan from public inputs only (budget, grid, number of features, the
        estimator's parameters); no row is read."""
        sens = cox_sensitivities(
            edges, n_features, max_grad_norm=max_grad_norm, hessian_clip=hessian_clip
        )
        common = {
            "epsilon": float(epsilon),
            "delta": float(delta),
            "n_features": int(n_features),
            "n_intervals": int(len(edges) - 1),
            "n_iter": int(n_iter),
            "sensitivities": sens,
            "max_rows_per_group": max_rows_per_group,
        }
        if math.isinf(epsilon):
            inf = math.inf
            return cls(
                **common,
                rho=inf,
                rho_centre=inf,
                rho_baseline=inf,
                rho_hessian=inf,
                rho_gradient=inf,
                sigma_centre=0.0,
                sigma_baseline=0.0,
                sigma_hessian=0.0,
                sigma_gradient=0.0,
                eigen_floor=0.0,
            )
        rho = float(zcdp_rho(epsilon, delta))
        rho_c = float(centre_fraction) * rho
        rho_b = float(baseline_fraction) * rho
        rho_h = float(hessian_fraction) * rho
        rho_g = rho - rho_c - rho_b - rho_h
        if not rho_g > 0:
            raise ValueError(
                "centre_fraction + baseline_fraction + hessian_fraction must be < 1 "
                "(the rest of the budget goes to the gradients)"
            )
        sig_h = sens["hessian"] / math.sqrt(2.0 * rho_h)
        return cls(
            **common,
            rho=rho,
            rho_centre=rho_c,
            rho_baseline=rho_b,
            rho_hessian=rho_h,
            rho_gradient=rho_g,
            sigma_centre=sens["centre"] / math.sqrt(2.0 * rho_c),
            sigma_baseline=sens["baseline"] / math.sqrt(2.0 * rho_b),
            sigma_hessian=sig_h,
            sigma_gradient=sens["gradient"] / math.sqrt(2.0 * rho_g / int(n_iter)),
            eigen_floor=2.0 * sig_h * math.sqrt(len(edges) - 1 + int(n_features)),
        )

    def breakdown(self):
        """``privacy_breakdown_``: ``epsilon`` split in proportion to each part's
        ``rho`` (the parts compose under zCDP); sums to ``epsilon``. Empty when not
        private (the estimator adds ``"nonprivate": inf``)."""
        if not self.private:
            return {}
        rhos = (self.rho_centre, self.rho_baseline, self.rho_hessian, self.rho_gradient)
        shares = [self.epsilon * r / self.rho for r in rhos]
        shares[-1] = self.epsilon - math.fsum(shares[:-1])  # the parts sum to epsilon
        return dict(zip(PARTS, (float(s) for s in shares), strict=True))

    def rho_breakdown(self):
        """``rho_breakdown_``: the zCDP budget of each part (``None`` when not private)."""
        if not self.private:
            return None
        rhos = (self.rho_centre, self.rho_baseline, self.rho_hessian, self.rho_gradient)
        return dict(zip(PARTS, (float(r) for r in rhos), strict=True))

    def noise_scale(self):
        """``noise_scale_``: the Gaussian standard deviation of each part, in the units
        of its sum (rows and features in ``[-1, 1]``; events and exposure in horizon
        units; the gradient per step)."""
        sig = (self.sigma_centre, self.sigma_baseline, self.sigma_hessian, self.sigma_gradient)
        return dict(zip(PARTS, (float(s) for s in sig), strict=True))
