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
from skdp.utils._patient_facts import PlanFactsMixin

__all__ = ["BASE_SHARE", "FlowDensityPlan"]

#: Share of ``epsilon - eps_bounds`` spent on the copula base when DP-SGD follows it.
BASE_SHARE = 0.3
#: The copula base is used only where its histogram noise SD is at most this share of
#: the mean count per bin ``n / n_bins`` (public: ``n``, ``d``, ``epsilon``, ``delta``);
#: otherwise the plan falls back to ``base="none"``.
NOISE_TO_COUNT = 0.3
#: ... and where the correlation noise SD is at most this share of ``n`` (about the noise
#: SD of one correlation, the marginals being near N(0, 1)).
NOISE_TO_CORRELATION = 0.1
#: The copula base's noise is calibrated at ``min(share, CALIBRATION_CAP)``: the analytic
#: calibration overflows far beyond it, and more noise than the share needs keeps the
#: share an upper bound of the spend.
CALIBRATION_CAP = 100.0


@dataclass(frozen=True)
class FlowDensityPlan(PlanFactsMixin):
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
    base : {"copula", "none"}
        ``"copula"``: two fixed layers released before DP-SGD (noisy marginal
        histograms, then a noisy correlation of the Gaussianised rows;
        :mod:`skdp.density._copula_base`); ``"none"``: the seed paper's ``N(0, I)`` base,
        also where ``"copula"`` was asked with trainable layers but the histogram noise
        SD would exceed :data:`NOISE_TO_COUNT` times ``n / n_bins``.
    eps_marginals, eps_correlation : float
        Epsilons of the two Gaussian mechanisms of the copula base (0 without it). They
        take :data:`BASE_SHARE` of ``epsilon - eps_bounds`` (all of it when the flow has
        no trainable layer), half each (all to the marginals with one numeric column).
    delta_base : float
        Delta of the copula base (half of ``delta`` with DP-SGD, all without), split
        evenly between its two mechanisms; DP-SGD gets the rest.
    n_bins, clip_norm : int, float
        Public histogram grid size and L2 clipping norm ``R`` of the Gaussianised rows.
    sigma_marginals, sigma_correlation : float
        Noise SDs of the two mechanisms, sensitivity included: the analytic Gaussian
        mechanism (Balle & Wang 2018) at L2 sensitivity ``k sqrt(d_num)`` (one count per
        numeric column) and ``k R^2`` (``||c c^T||_F = ||c||^2 <= R^2``), ``k = 1`` per row.
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
    base: str = "none"
    eps_marginals: float = 0.0
    eps_correlation: float = 0.0
    delta_base: float = 0.0
    n_bins: int = 0
    clip_norm: float = 0.0
    sigma_marginals: float = 0.0
    sigma_correlation: float = 0.0

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
        base="none",
        n_numeric=0,
        trainable=True,
    ):
        """The plan from public inputs only: ``n``, the budget, whether the schema leaves
        numeric bounds to a private estimate, the schedule and the noise multiplier
        (``None``: calibrated; ``BudgetExceededError`` when a given one spends more), and
        the contribution bound of a patient-level fit; ``base``, the number of numeric
        encoded coordinates and whether the flow has trainable layers set the copula
        base's shares."""
        from skdp.accounting import resolve_noise_multiplier

        private = math.isfinite(epsilon)
        eps_bounds = BOUNDS_FRACTION * epsilon if private and bounds_estimated else 0.0
        q = min(1.0, float(batch_size) / n)
        k = 1 if max_rows_per_group is None else int(max_rows_per_group)
        cop = _copula_shares(
            base, int(n_numeric), int(n), epsilon - eps_bounds, delta, trainable, k
        )
        noisy = cop["sigma_marginals"] > NOISE_TO_COUNT * int(n) / max(cop["n_bins"], 1)
        noisy = noisy or cop["sigma_correlation"] > NOISE_TO_CORRELATION * int(n)
        if base == "copula" and trainable and noisy:
            # the histograms or the correlations would be mostly noise: the paper's base
            base = "none"
            cop = _copula_shares(base, 0, int(n), epsilon, delta, trainable, k)
        sigma, eps_dpsgd = 0.0, math.inf
        if private and not trainable:
            eps_dpsgd = 0.0
        elif private:
            with warnings.catch_warnings():
                # train_dpsgd warns once for the approximate accountant
                warnings.simplefilter("ignore", ApproximateGuaranteeWarning)
                sigma, eps_dpsgd = resolve_noise_multiplier(
                    epsilon=epsilon - eps_bounds - cop["eps_marginals"] - cop["eps_correlation"],
                    delta=delta - cop["delta_base"],
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
            base=base,
            **cop,
        )

    @property
    def delta_dpsgd(self):
        """The delta of the DP-SGD steps: ``delta - delta_base``."""
        return self.delta - self.delta_base

    def breakdown(self):
        """``privacy_breakdown_``: ``{"bounds", "dpsgd"}`` epsilons, with ``"marginals"``
        and ``"correlation"`` for the copula base (basic composition: they add up to at
        most ``epsilon``; ``dpsgd`` is ``inf`` for a non-private fit, 0 without
        trainable layers)."""
        if self.base == "none":
            return {"bounds": self.eps_bounds, "dpsgd": self.eps_dpsgd}
        return {
            "bounds": self.eps_bounds,
            "marginals": self.eps_marginals,
            "correlation": self.eps_correlation,
            "dpsgd": self.eps_dpsgd,
        }


def _copula_shares(base, n_numeric, n, epsilon, delta, trainable, k):
    """The copula base's fields of the plan (all zero for ``base="none"`` or no numeric
    coordinate; zero noise at ``epsilon = inf``)."""
    from skdp.density._copula_base import correlation_clip_norm, default_n_bins
    from skdp.mechanisms import gaussian_sigma

    out = dict(eps_marginals=0.0, eps_correlation=0.0, delta_base=0.0, n_bins=0)
    out.update(clip_norm=0.0, sigma_marginals=0.0, sigma_correlation=0.0)
    if base == "none" or n_numeric == 0:
        return out
    out["n_bins"] = default_n_bins(n)
    out["clip_norm"] = correlation_clip_norm(n_numeric) if n_numeric > 1 else 0.0
    if not math.isfinite(epsilon):
        return out
    eps_base = epsilon * (1.0 if not trainable else BASE_SHARE)
    delta_base = delta * (1.0 if not trainable else 0.5)
    parts = 2 if n_numeric > 1 else 1
    out["eps_marginals"] = eps_base / parts
    out["eps_correlation"] = eps_base - out["eps_marginals"]
    out["delta_base"] = delta_base
    out["sigma_marginals"] = gaussian_sigma(
        sensitivity=k * math.sqrt(n_numeric),
        epsilon=min(out["eps_marginals"], CALIBRATION_CAP),
        delta=delta_base / parts,
    )
    if parts == 2:
        out["sigma_correlation"] = gaussian_sigma(
            sensitivity=k * out["clip_norm"] ** 2,
            epsilon=min(out["eps_correlation"], CALIBRATION_CAP),
            delta=delta_base / 2,
        )
    return out
