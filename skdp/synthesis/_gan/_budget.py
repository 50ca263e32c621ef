"""How one ``fit`` of :class:`~skdp.synthesis.DPGANSynthesizer` splits ``epsilon``.

The mechanisms of a fit compose sequentially, so their epsilons add up (Dwork & Roth 2014,
Theorem 3.16); each share has one entry here:

* :data:`BOUNDS_FRACTION`: a private estimate of the missing numeric bounds, by the shared
  front end (:class:`skdp.mechanisms._front_end.TabularFrontEnd`), which spends at most
  that fraction and only for undeclared bounds;
* :func:`prior_share`: the Laplace-noised class counts of the DP class prior;
* :func:`selection_share`: DP checkpoint selection (report-noisy-max peeling);
* :func:`marginals_share`: the Gaussian release of every column's noisy 1-way marginal
  (:mod:`skdp.synthesis._gan._marginals`), with :data:`MARGINALS_DELTA_FRACTION` of
  delta;
* :func:`dpsgd_share`: what is left, for every DP-SGD step (autoencoder and critic), with
  the rest of delta. :func:`calibrate_noise` picks the noise multiplier that meets it.

Where the marginals are released and DP-SGD's noise is calibrated (:attr:`GANPlan.joint`),
the two are instead accounted together (:mod:`skdp.accounting._mixed`, PLD or RDP) at
the whole delta: the release's Gaussian noise is set by :func:`joint_marginals_mu` (a
:func:`joint_marginals_fraction` share of the Gaussian-DP budget ``mu^2``: 0.5 where
``mu`` is small, 0.2 where it is large), DP-SGD gets the
smallest noise that keeps both within what is left of ``(epsilon, delta)``, and the
breakdown's ``"marginals"`` is the release's own epsilon at delta
(:func:`joint_marginals_epsilon`), ``"dpsgd"`` the joint account less it.

:func:`breakdown` writes the shares as ``privacy_breakdown_`` and :func:`noise_scales`
the Laplace scale of each noisy release that is not a DP-SGD step as ``noise_scale_``
(keyed like the breakdown; the DP-SGD noise is ``noise_multiplier_``).

:class:`GANPlan` holds them for one fit with its privacy unit: a patient-level fit
(``groups=``) multiplies the sensitivity of every count (class counts, checkpoint
utilities) by ``k = max_rows_per_group`` here, once
(:func:`skdp.mechanisms.sensitivity.group_sensitivity`); the DP-SGD steps clip each
sampled patient's term to ``C`` (:mod:`skdp.training._patients`), so their sensitivity
stays ``C`` per unit and their sampling rate is the patients'.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from skdp.mechanisms._bounds import BOUNDS_FRACTION

__all__ = [
    "BOUNDS_FRACTION",
    "GANPlan",
    "JOINT_MARGINALS_FRACTION",
    "JOINT_MARGINALS_MU",
    "MARGINALS_DELTA_FRACTION",
    "MARGINALS_FRACTION",
    "PRIOR_FRACTION",
    "SELECTION_FRACTION",
    "breakdown",
    "calibrate_noise",
    "dpsgd_share",
    "joint_marginals_epsilon",
    "joint_marginals_fraction",
    "joint_marginals_mu",
    "marginals_share",
    "noise_scales",
    "prior_share",
    "selection_share",
]

#: Share of epsilon spent on the DP class prior (skdp's default).
PRIOR_FRACTION = 0.05
#: Share of epsilon spent on DP checkpoint selection (Beaulieu-Jones et al. 2019: 0.5 of 2.5).
SELECTION_FRACTION = 0.2
#: Share of epsilon and of delta spent on the noisy 1-way marginals (split account).
MARGINALS_FRACTION = 0.2
MARGINALS_DELTA_FRACTION = 0.1
#: In the joint account, the marginals' share of the Gaussian-DP budget ``mu^2``
#: (:func:`joint_marginals_fraction`) where the whole budget's ``mu`` is at most
#: ``JOINT_MARGINALS_MU[0]`` (DP-SGD's noise large), and where it is at least
#: ``JOINT_MARGINALS_MU[1]`` (DP-SGD's noise small); linear in ``log mu`` between. On a
#: few hundred rows at epsilon = 1 (``mu`` 0.27 at delta = 1e-5) the DP-SGD critic carries
#: next to no dependence between columns, so the 2-way total variation of the samples is
#: mostly the error of their 1-way marginals and half of ``mu^2`` lowers it; at epsilon =
#: 10 (``mu`` 2.0) half and 0.2 gave the same 2-way TV while half cost DP-SGD noise and
#: downstream accuracy (``doc/benchmarks_synthesis.rst``).
JOINT_MARGINALS_FRACTION = (0.5, 0.2)
JOINT_MARGINALS_MU = (0.5, 2.0)


def prior_share(epsilon, *, conditional, class_prior):
    """Epsilon of the DP class prior: ``0.05 * epsilon`` for ``class_prior="dp"`` of a
    conditional model, else 0 (a uniform or public prior reads no data).

    ``epsilon=inf`` gives ``inf`` (the exact frequencies of a non-private fit).
    """
    if not conditional or isinstance(class_prior, dict) or class_prior != "dp":
        return 0.0
    return PRIOR_FRACTION * epsilon if math.isfinite(epsilon) else math.inf


def selection_share(epsilon, *, selection):
    """Epsilon of DP checkpoint selection: ``0.2 * epsilon`` when it is on (and the fit
    private), else 0."""
    if not selection or not math.isfinite(epsilon):
        return 0.0
    return SELECTION_FRACTION * epsilon


def marginals_share(epsilon, *, marginals):
    """Epsilon of the noisy 1-way marginals: ``0.2 * epsilon`` when they are released
    (and the fit private), else 0."""
    if not marginals or not math.isfinite(epsilon):
        return 0.0
    return MARGINALS_FRACTION * epsilon


def joint_marginals_mu(epsilon, delta):
    """The noisy marginals' Gaussian-DP parameter ``mu_m = 1 / noise multiplier`` in a
    joint account of ``(epsilon, delta)``: ``sqrt(joint_marginals_fraction(mu)) * mu`` with ``mu``
    the largest Gaussian-DP parameter within ``(epsilon, delta)``
    (:func:`skdp.accounting.gdp_mu`; Dong, Roth & Su 2022). Gaussian-DP composes as
    ``mu^2`` adds, so the release takes that share of the whole and leaves about the
    rest to DP-SGD (the joint account then settles DP-SGD's noise exactly). A function
    of public numbers only."""
    from skdp.accounting import gdp_mu

    mu = gdp_mu(epsilon, delta)
    return math.sqrt(joint_marginals_fraction(mu)) * mu


def joint_marginals_fraction(mu):
    """The noisy marginals' share of ``mu^2`` in a joint account whose whole Gaussian-DP
    parameter is ``mu`` (:data:`JOINT_MARGINALS_FRACTION`): 0.5 for ``mu <= 0.5``, 0.2 for
    ``mu >= 2``, and ``0.5 - 0.15 log2(2 mu)`` between (linear in ``log mu``). ``mu``
    depends on ``(epsilon, delta)`` only, so the share is public; it falls as DP-SGD's
    calibrated noise falls."""
    (hi_share, lo_share), (lo_mu, hi_mu) = JOINT_MARGINALS_FRACTION, JOINT_MARGINALS_MU
    if mu <= lo_mu:
        return hi_share
    if mu >= hi_mu:
        return lo_share
    t = math.log(mu / lo_mu) / math.log(hi_mu / lo_mu)
    return hi_share + t * (lo_share - hi_share)


def joint_marginals_epsilon(epsilon, delta):
    """The marginals' own epsilon at ``delta`` in a joint account of ``(epsilon, delta)``:
    the Gaussian mechanism with ``mu = joint_marginals_mu(epsilon, delta)``, in closed
    form (:func:`skdp.accounting.gdp_epsilon`; Balle & Wang 2018)."""
    from skdp.accounting import gdp_epsilon

    return float(gdp_epsilon(delta, joint_marginals_mu(epsilon, delta)))


def dpsgd_share(epsilon, *, bounds, prior, selection, marginals=0.0):
    """What is left of ``epsilon`` for DP-SGD; ``ValueError`` when it is not positive."""
    if not math.isfinite(epsilon):
        return math.inf
    left = epsilon - bounds - prior - selection - marginals
    if left <= 0:
        raise ValueError("the budget left for DP-SGD is not positive")
    return left


def calibrate_noise(epsilon, delta, sample_rate, steps, *, noise_multiplier, accountant):
    """Noise multiplier of ``steps`` Poisson-subsampled Gaussian steps within
    ``(epsilon, delta)`` (:func:`skdp.accounting.resolve_noise_multiplier`): the smallest
    one when ``noise_multiplier`` is None, else the given one (``ValueError`` when it
    spends more than ``epsilon``). ``epsilon=inf`` (a non-private fit): 0, no noise."""
    from skdp.accounting import resolve_noise_multiplier

    if not math.isfinite(epsilon):
        return 0.0

    sigma, _ = resolve_noise_multiplier(
        epsilon=epsilon,
        delta=delta,
        sample_rate=sample_rate,
        steps=steps,
        noise_multiplier=noise_multiplier,
        accountant=accountant,
    )
    return float(sigma)


def breakdown(*, bounds, prior, dpsgd, selection, marginals=0.0, nonprivate=False):
    """``privacy_breakdown_``: the epsilon of each share, adding up to the fit's total.

    ``dpsgd=inf`` is a non-private fit (``epsilon=inf``): nothing else is charged. A fit
    made non-private by a ``"data"`` opt-in (``nonprivate=True``) gets the extra entry
    ``"nonprivate": inf``, so that the parts still add up to ``epsilon_spent_``.
    """
    if math.isinf(dpsgd):
        bounds = prior = selection = marginals = 0.0
    parts = {
        "bounds": float(bounds),
        "prior": float(prior),
        "dpsgd": float(dpsgd),
        "selection": float(selection),
        "marginals": float(marginals),
    }
    if nonprivate and math.isfinite(sum(parts.values())):
        parts["nonprivate"] = math.inf
    return parts


def noise_scales(*, prior, selection, selection_rounds, sensitivity=1.0, marginals=0.0):
    """``noise_scale_``: the Laplace scale of each noisy release that is not a DP-SGD
    step, keyed like :func:`breakdown` (``doc/glossary.rst``).

    ``"prior"``: the noise on each class count of the DP class prior, ``1 / eps_prior``
    (sensitivity 1). ``"selection"``: the noise on each candidate's utility (a count,
    sensitivity 1, monotone) in each of the ``selection_rounds = top_k * n_scorers``
    report-noisy-max rounds, ``1 / (eps_selection / selection_rounds)``. 0 where the part
    releases nothing noisy (no DP prior, no selection, or ``epsilon=inf``).
    ``sensitivity``: of each count, 1 per row and ``k`` per patient (:class:`GANPlan`).
    ``"marginals"``: the Gaussian standard deviation on each count of the noisy 1-way
    marginals (``marginals``, computed by :class:`GANPlan`; 0 when not released).
    """

    def laplace_scale(eps, rounds=1):
        if not 0.0 < eps < math.inf:
            return 0.0
        return sensitivity / (eps / rounds)  # as drawn: sensitivity / (the round's epsilon)

    return {
        "prior": float(laplace_scale(prior)),
        "selection": float(laplace_scale(selection, selection_rounds)),
        "marginals": float(marginals),
    }


@dataclass(frozen=True)
class GANPlan:
    """The privacy plan of one fit: the epsilon shares and the privacy unit.

    The only source of ``privacy_breakdown_``, ``noise_scale_`` and of the count
    sensitivity the class prior and checkpoint selection are drawn with.

    Parameters
    ----------
    epsilon, delta : float
        The fit's total, per privacy unit.
    eps_bounds, eps_prior, eps_selection : float
        The shares spent on the private bound estimate, the DP class prior and
        checkpoint selection (0 where the part reads no data).
    selection_rounds : int
        Report-noisy-max rounds of checkpoint selection (``top_k * n_scorers``; 1 if off).
    eps_marginals : float, default=0.0
        The share of the noisy 1-way marginals (0: not released); they take
        :data:`MARGINALS_DELTA_FRACTION` of ``delta``.
    n_marginals : int, default=0
        The number of columns whose marginal is released (``d``).
    max_rows_per_group : int or None, default=None
        ``k`` of a patient-level fit; ``None`` per row.
    secure_mode : bool, default=False
        The class prior and checkpoint selection draw exact noise from ``os.urandom``.
    joint_accountant : {"pld", "rdp"} or None, default=None
        The noisy marginals and DP-SGD in one account (:attr:`joint`): the marginals'
        noise from :func:`joint_marginals_mu` and ``eps_marginals`` their own epsilon
        at ``delta`` (:func:`joint_marginals_epsilon`). ``None``: split accounts.
    """

    epsilon: float
    delta: float
    eps_bounds: float
    eps_prior: float
    eps_selection: float
    selection_rounds: int = 1
    max_rows_per_group: int | None = None
    secure_mode: bool = False
    eps_marginals: float = 0.0
    n_marginals: int = 0
    joint_accountant: str | None = None

    @property
    def privacy_unit(self):
        """``"row"`` or ``"group"`` (one patient with all their rows)."""
        return "row" if self.max_rows_per_group is None else "group"

    @property
    def count_sensitivity(self):
        """L1 sensitivity of a count of rows (each class count, each checkpoint's utility)
        under the privacy unit: 1 per row, ``k`` per patient (``k`` multiplies it here,
        once)."""
        from skdp.mechanisms.sensitivity import group_sensitivity

        return float(group_sensitivity(1.0, self.max_rows_per_group))

    @property
    def eps_dpsgd(self):
        """The DP-SGD share (:func:`dpsgd_share`)."""
        return dpsgd_share(
            self.epsilon,
            bounds=self.eps_bounds,
            prior=self.eps_prior,
            selection=self.eps_selection,
            marginals=self.eps_marginals,
        )

    @property
    def eps_joint(self):
        """What the joint account may spend: ``epsilon`` less the bounds, prior and
        selection shares (the marginals and every DP-SGD step together)."""
        return self.eps_dpsgd + self.eps_marginals

    @property
    def delta_marginals(self):
        """The noisy marginals' delta: :data:`MARGINALS_DELTA_FRACTION` of ``delta``
        when they are released in a split account, else 0 (the joint account spends
        the whole ``delta`` once)."""
        if self.eps_marginals <= 0 or self.joint:
            return 0.0
        return MARGINALS_DELTA_FRACTION * self.delta

    @property
    def delta_dpsgd(self):
        """The DP-SGD delta: the rest of ``delta``."""
        return self.delta - self.delta_marginals

    @property
    def marginals_sigma(self):
        """The Gaussian noise on each marginal count: the joint account's noise
        multiplier (:func:`joint_marginals_mu`) or (split) ``rho`` from
        ``(eps_marginals, delta_marginals)`` (:func:`skdp.accounting.zcdp_rho`), times
        the L2 sensitivity ``sqrt(d)`` times the unit's count sensitivity; 0 when none."""
        if not 0.0 < self.eps_marginals < math.inf or self.n_marginals < 1:
            return 0.0
        if self.joint:
            scale = math.sqrt(self.n_marginals) * self.count_sensitivity
            return scale * self.marginals_noise_multiplier
        from skdp.accounting import zcdp_rho

        rho = zcdp_rho(self.eps_marginals, self.delta_marginals)
        sigma = (
            math.sqrt(self.n_marginals * self.count_sensitivity**2 / (2.0 * rho))
            if rho > 0
            else math.inf
        )
        if not math.isfinite(sigma):
            raise ValueError(
                "epsilon and delta are too small for the noisy 1-way marginals "
                "(their zCDP budget is 0): raise them or set calibrate_marginals=False"
            )
        return sigma

    @property
    def joint(self):
        """Whether the noisy marginals and the DP-SGD steps share one account
        (:mod:`skdp.accounting._mixed`): the marginals are released and
        ``joint_accountant`` is set (DP-SGD's noise calibrated, not given). DP-SGD is
        calibrated so that both together spend :attr:`eps_joint` at ``delta``."""
        released = 0.0 < self.eps_marginals < math.inf and self.n_marginals > 0
        return released and self.joint_accountant is not None

    @property
    def marginals_noise_multiplier(self):
        """The marginals' Gaussian noise over their L2 sensitivity per unit."""
        if self.joint:
            return 1.0 / joint_marginals_mu(self.eps_joint, self.delta)
        return self.marginals_sigma / (math.sqrt(self.n_marginals) * self.count_sensitivity)

    def breakdown(self, dpsgd, *, nonprivate=False):
        """``privacy_breakdown_`` with the DP-SGD epsilon as spent (:func:`breakdown`)."""
        return breakdown(
            bounds=self.eps_bounds,
            prior=self.eps_prior,
            dpsgd=dpsgd,
            selection=self.eps_selection,
            marginals=self.eps_marginals,
            nonprivate=nonprivate,
        )

    def noise_scales(self):
        """``noise_scale_`` (:func:`noise_scales`) at the unit's count sensitivity."""
        return noise_scales(
            prior=self.eps_prior,
            selection=self.eps_selection,
            selection_rounds=self.selection_rounds,
            sensitivity=self.count_sensitivity,
            marginals=self.marginals_sigma,
        )
