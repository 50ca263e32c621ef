"""The release plan of :class:`~skdp.synthesis.DPMarginalSynthesizer`: every share of the
budget, every noise scale and sensitivity of one fit, computed once from public inputs.

The plan is built after the bounds are resolved (their budget is a public fraction of
``epsilon``) and before any count of the rows is released, from the column count, the
public ``n`` (read only by ``n_bins="auto"``), ``(epsilon, delta)``, the budget fractions
(:func:`budget_shares`) and ``selection``; it is the only source of
``privacy_breakdown_``, ``rho_breakdown_``, ``epsilon_spent_`` and ``delta_spent_``.

Approximate DP (``delta > 0``): the ``rho`` left after the bounds
(:func:`rho_after_bounds`) is split by the fractions (MST: 1-way, selection, 2-way;
AIM: 1-way, then the rounds, each split ``0.9 : 0.1`` between its measurement and its
selection) and every stage's epsilon is its share of ``rho`` times the epsilon left
after the bounds. Pure DP (``delta = 0``): the epsilon left after the bounds is split
the same way and composed sequentially. AIM's rounds are charged adaptively under a
privacy filter that never lets them exceed their share (``rounds_`` lists the charges);
the plan attributes the whole share to them.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from skdp.accounting import zcdp_delta, zcdp_rho
from skdp.mechanisms import discrete_gaussian_noise, discrete_laplace_noise
from skdp.mechanisms.sensitivity import clipped_histogram_sensitivity, group_sensitivity
from skdp.synthesis._marginal_model import _MARGINAL_SENSITIVITY, _SCORE_SENSITIVITY
from skdp.utils._deprecation import DEPRECATED, REMOVED_IN
from skdp.utils._logging import get_logger, log_progress

__all__ = ["BUDGET_FRACTIONS", "MarginalPlan", "budget_shares", "log_stage", "rho_after_bounds"]

_logger = get_logger(__name__)

#: AIM's split of each round's budget between the measurement and the selection
_MEASURE_SHARE = 0.9
#: AIM's rounds start with the budget of this many rounds per column (AIM's 16 d)
_ROUNDS_PER_COLUMN = 16

#: the stages' names in privacy_breakdown_ / rho_breakdown_ and in the progress records
#: (doc/glossary.rst)
_PARTS = ("one_way", "selection", "two_way")
#: the constructor's budget fractions, one per part (``budget_split`` is their deprecated
#: tuple)
BUDGET_FRACTIONS = tuple(f"{part}_fraction" for part in _PARTS)


def budget_shares(est):
    """The normalised shares of the three parts of ``est``'s budget, from its fractions
    (which add up to 1) or from its deprecated ``budget_split`` (``FutureWarning``;
    ``ValueError`` when both spellings are set). Either way the shares are the three
    values divided by their sum, so both spellings release the same values."""
    split = est.budget_split
    values = tuple(getattr(est, name) for name in BUDGET_FRACTIONS)
    if isinstance(split, str) and split == DEPRECATED:
        s = np.array([float(v) for v in values])
        if not math.isclose(s.sum(), 1.0, rel_tol=0.0, abs_tol=1e-9):
            raise ValueError(f"{' + '.join(BUDGET_FRACTIONS)} must add up to 1, not {s.sum():.6g}")
        return s / s.sum()
    if values != (1 / 3,) * 3:
        raise ValueError(
            f"{type(est).__name__}: set {', '.join(BUDGET_FRACTIONS)} only "
            "(budget_split= is their deprecated spelling)"
        )
    warnings.warn(
        f"{type(est).__name__}(budget_split=...) is deprecated and will be removed in skdp "
        f"{REMOVED_IN}; use {'=..., '.join(BUDGET_FRACTIONS)}=... (fractions adding up to 1)",
        FutureWarning,
        stacklevel=4,
    )
    if isinstance(split, str) or len(split) != 3:
        raise ValueError("budget_split must be three positive shares")
    try:
        s = np.array([float(v) for v in split])
    except (TypeError, ValueError):
        raise ValueError("budget_split must be three positive shares") from None
    if not np.all(np.isfinite(s)) or np.any(s <= 0):
        raise ValueError("budget_split must be three positive shares")
    return s / s.sum()


def aim_n_rounds(d):
    """Rounds of the budget that sets the bins: ``d`` (public).

    The noise of ``d`` equal rounds is close to that of one of MST's ``d - 1`` 2-way
    measurements at the same budget; :func:`~skdp.synthesis.marginal_n_bins` is given
    it. The rounds themselves are annealed (:mod:`skdp.synthesis._marginal_aim`);
    without noise (``epsilon = inf``) there are exactly ``d``.
    """
    return max(int(d), 1)


def rho_after_bounds(epsilon, delta, eps_bounds):
    """The zCDP budget ``rho`` left for the measurements of an ``(epsilon, delta)`` fit
    after a pure ``eps_bounds``-DP bound estimate (both selections).

    The larger of two valid compositions: the bounds charged sequentially in
    ``(epsilon, delta)`` (``zcdp_rho(epsilon - eps_bounds, delta)``), or inside zCDP
    (``eps_b``-DP is ``eps_b^2 / 2``-zCDP), shrunk until the converted total is within
    ``delta`` in floating point.
    """
    rho = zcdp_rho(epsilon - eps_bounds, delta)
    if eps_bounds > 0:
        rho_bounds = eps_bounds * eps_bounds / 2  # (inf, not OverflowError, past 1e154)
        rho_in = zcdp_rho(epsilon, delta) - rho_bounds
        while rho_in > rho and zcdp_delta(rho_in + rho_bounds, epsilon) > delta:
            rho_in *= 1.0 - 1e-12  # floating-point rounding of the sum
        rho = max(rho, rho_in)
    return rho


def _stage_shares(selection, d, share):
    """The normalised budget shares as they apply to ``d`` columns: with one column
    everything goes to the 1-way release; MST with two columns has one candidate pair,
    so its selection share is spread over the measurements in proportion; AIM's rounds
    get what the 1-way release leaves (selection and measurement shares together)."""
    if selection == "aim":
        s1 = float(share[0]) if d > 1 else 1.0
        return s1, 1.0 - s1
    if d == 1:
        return np.array([1.0, 0.0, 0.0])
    if d == 2:
        return np.array([share[0], 0.0, share[2]]) / (share[0] + share[2])
    return share


@dataclass(frozen=True)
class MarginalPlan:
    """Budget, noise scales and sensitivities of one :class:`DPMarginalSynthesizer` fit.

    Attributes
    ----------
    selection : {"mst", "aim"}
        The selection (``"auto"`` resolved from the column count).
    n_columns, n_public : int
        The number of columns and the public ``n`` that ``n_bins="auto"`` reads.
    mechanism : {"gaussian", "laplace", "none"}
        The noise of the measurements: discrete Gaussian (``delta > 0``, zCDP),
        discrete Laplace (``delta = 0``) or none (``epsilon = inf``).
    epsilon, delta : float
        The total budget of the fit.
    eps_bounds, eps_one_way, eps_select, eps_two_way : float
        Epsilon of the private bounds, the 1-way release, the selection (MST's tree, or
        the exponential mechanisms of AIM's rounds) and the 2-way measurements (AIM:
        the rounds' measurements); they sum to ``epsilon`` (all ``inf`` but the bounds'
        without noise).
    rho, rho_one_way, rho_select, rho_two_way : float or None
        The zCDP budget left after the bounds and its split (``None`` but under zCDP).
    one_way_scale, one_way_sd : float
        The 1-way cells' noise scale (the discrete Gaussian's ``sigma``, the discrete
        Laplace's ``b``) and standard deviation.
    two_way_scale, two_way_sd : float
        MST: those of the 2-way cells. AIM: the first round's measurement scale, and
        the noise of :func:`aim_n_rounds` equal rounds (``n_bins="auto"`` reads it).
    select_epsilon : float
        Epsilon of each of MST's exponential-mechanism rounds (AIM: of the first
        round's); ``inf`` where nothing is selected.
    rounds_total, first_charge : float
        AIM: the rounds' budget (``rho`` under zCDP, ``epsilon`` under pure DP) and the
        first round's charge (``rounds_total / (16 d)``); 0 for MST.
    sensitivity, score_sensitivity : float
        L1 (and L2) sensitivity of every marginal and of every selection score: 1 per
        row, ``k`` per patient (``max_rows_per_group=k``; a patient's at most ``k`` rows
        change a marginal by a non-negative vector summing to ``k``, whose L2 norm is at
        most ``k`` too, :func:`skdp.mechanisms.sensitivity.histogram_sensitivity`).
        Multiplied here, once: every noise scale above is in units of it, so each
        measurement's ``rho`` (or epsilon) and each selection's epsilon are the same per
        patient as they are per row.
    max_rows_per_group : int or None
        ``k`` of a patient-level fit (``groups``); ``None`` per row.
    secure_mode : bool
        The measurements' discrete noise from ``os.urandom`` instead of the fit's
        streams.
    clip_norm : float or None
        ``contribution="clip"`` of a patient-level zCDP fit: ``sqrt(k)``, the L2 norm
        each patient's count vector is clipped to in the 2-way (MST) or round (AIM)
        measurements, whose L2 sensitivity it is
        (:func:`skdp.mechanisms.sensitivity.clipped_histogram_sensitivity`); the 1-way
        release and the selection scores keep ``sensitivity``. ``None`` otherwise.
    """

    selection: str
    n_columns: int
    n_public: int
    mechanism: str
    epsilon: float
    delta: float
    eps_bounds: float
    eps_one_way: float
    eps_select: float
    eps_two_way: float
    rho: float | None
    rho_one_way: float | None
    rho_select: float | None
    rho_two_way: float | None
    one_way_scale: float
    one_way_sd: float
    two_way_scale: float
    two_way_sd: float
    select_epsilon: float
    rounds_total: float
    first_charge: float
    sensitivity: float
    score_sensitivity: float
    max_rows_per_group: int | None = None
    secure_mode: bool = False
    clip_norm: float | None = None

    @classmethod
    def build(
        cls,
        *,
        epsilon,
        delta,
        eps_bounds,
        n_columns,
        share,
        selection,
        n_public,
        max_rows_per_group=None,
        secure_mode=False,
        clip=False,
    ):
        """The plan of a fit from public inputs only: the budget, the bounds' share, the
        column count, the normalised shares (:func:`budget_shares`), ``selection`` (may be
        ``"auto"``), the public ``n``, the contribution bound ``k`` of a patient-level
        fit, ``secure_mode`` and ``clip`` (``contribution="clip"``: applies to a
        patient-level fit under zCDP only)."""
        k = max_rows_per_group
        d = int(n_columns)
        if selection == "auto":  # the column count: public
            selection = "mst" if d <= 2 else "aim"
        eps_bounds = float(eps_bounds)
        common = {
            "selection": selection,
            "n_columns": d,
            "n_public": int(n_public),
            "epsilon": float(epsilon),
            "delta": float(delta),
            "eps_bounds": eps_bounds,
            # per patient: k times the row's (1.0 per row, so row-level fits are unchanged)
            "sensitivity": float(group_sensitivity(_MARGINAL_SENSITIVITY, k)),
            "score_sensitivity": float(group_sensitivity(_SCORE_SENSITIVITY, k)),
            "max_rows_per_group": k,
            "secure_mode": bool(secure_mode),
        }
        shares = _stage_shares(selection, d, share)
        if math.isinf(epsilon):
            return cls(**common, **_without_noise(eps_bounds))
        if delta > 0:
            rho = rho_after_bounds(epsilon, delta, eps_bounds)
            if not rho * min(s for s in shares if s > 0) >= 1e-300:
                # (epsilon, delta) so small that no zCDP budget is resolvable in float64:
                # the noise would be infinite
                raise ValueError(
                    f"epsilon={epsilon:g} with delta={delta:g} leaves no usable zCDP budget "
                    "for the measurements (the noise would be infinite); use a larger "
                    "epsilon or delta"
                )
        else:
            rho = None
        split = _aim_split if selection == "aim" else _mst_split
        sens = common["sensitivity"]
        if clip and k is not None and rho is not None:
            common["clip_norm"] = clipped_histogram_sensitivity(k)  # sqrt(k), L2
        sens = (sens, common.get("clip_norm") or sens)  # 1-way, the other measurements
        plan = cls(**common, **split(epsilon - eps_bounds, rho, d, shares, sens))
        if not (math.isfinite(plan.one_way_scale) and math.isfinite(plan.two_way_scale)):
            raise ValueError(
                f"epsilon={epsilon:g} is too small: the noise scale of the measurements "
                "overflows float64; use a larger epsilon"
            )
        return plan

    @property
    def bins_sd(self):
        """The noise standard deviation that ``n_bins="auto"`` reads: of a 2-way cell
        (AIM: of :func:`aim_n_rounds` equal rounds), of a 1-way cell for one column."""
        return self.two_way_sd if self.n_columns > 1 else self.one_way_sd

    @property
    def phases(self):
        """The logged stages of the fit."""
        return ("one_way", "rounds") if self.selection == "aim" else _PARTS

    # ------------------------------------------------------------ privacy facts
    @property
    def epsilon_spent(self):
        """``epsilon`` (``inf`` without noise)."""
        return math.inf if self.mechanism == "none" else self.epsilon

    @property
    def delta_spent(self):
        """``delta`` under zCDP (discrete Gaussian noise), 0 otherwise."""
        return self.delta if self.mechanism == "gaussian" else 0.0

    def breakdown(self):
        """``privacy_breakdown_``: the epsilon of each stage; sums to ``epsilon``."""
        parts = (self.eps_one_way, self.eps_select, self.eps_two_way)
        return {"bounds": self.eps_bounds, **dict(zip(_PARTS, parts, strict=True))}

    def rho_breakdown(self):
        """``rho_breakdown_``: the zCDP budget of each stage (``None`` but under zCDP)."""
        if self.rho is None:
            return None
        parts = (self.rho_one_way, self.rho_select, self.rho_two_way)
        return dict(zip(_PARTS, parts, strict=True))

    def spent_after(self, phase):
        """Epsilon spent by the end of a logged stage (``"one_way"``, ``"selection"``,
        ``"two_way"`` or ``"rounds"``) by the public split; ``None`` for the 1-way
        stage without noise."""
        if phase == "one_way":
            return None if self.mechanism == "none" else self.eps_bounds + self.eps_one_way
        if phase == "selection":
            return self.eps_bounds + self.eps_one_way + self.eps_select
        return self.epsilon_spent

    # ------------------------------------------------------------------ noise
    def noise(self, size, scale, rng):
        """``size`` integers of noise of ``scale`` from the plan's mechanism (exact
        discrete Gaussian or Laplace; zeros without noise)."""
        if scale == 0 or self.mechanism == "none":
            return np.zeros(size, dtype=np.int64)
        secure = self.secure_mode
        if self.mechanism == "gaussian":
            return discrete_gaussian_noise(size, sigma=scale, rng=rng, secure_mode=secure)
        return discrete_laplace_noise(size, scale=scale, rng=rng, secure_mode=secure)

    def round_noise(self, charge):
        """Selection epsilon, measurement noise scale and standard deviation of an AIM
        round charged ``charge`` (``rho`` under zCDP, ``epsilon`` under pure DP)."""
        return _round_noise(self.mechanism, charge, self.clip_norm or self.sensitivity)


def log_stage(plan, phase):
    """The progress record of a finished stage of ``plan.phases``: the epsilon spent so
    far by the public budget split (never a count, nor the number of AIM rounds)."""
    log_progress(
        _logger,
        estimator="DPMarginalSynthesizer",
        phase=phase,
        step=plan.phases.index(phase) + 1,
        total=len(plan.phases),
        epsilon_spent=plan.spent_after(phase),
    )


def _round_noise(mechanism, charge, sens):
    if mechanism == "gaussian":
        sd = sens * math.sqrt(1.0 / (2 * _MEASURE_SHARE * charge))
        return math.sqrt(8 * (1 - _MEASURE_SHARE) * charge), sd, sd
    scale = sens * (1.0 / (_MEASURE_SHARE * charge))
    return (1 - _MEASURE_SHARE) * charge, scale, math.sqrt(2) * scale


def _without_noise(eps_bounds):
    inf = math.inf
    return {
        "mechanism": "none",
        **dict.fromkeys(("eps_one_way", "eps_select", "eps_two_way"), inf),
        **dict.fromkeys(("rho", "rho_one_way", "rho_select", "rho_two_way")),
        **dict.fromkeys(("one_way_scale", "one_way_sd", "two_way_scale", "two_way_sd"), 0.0),
        "select_epsilon": inf,
        "rounds_total": inf,
        "first_charge": 0.0,
    }


def _mst_split(eps_rest, rho, d, share, sens):
    """MST: the 1-way release, ``d - 1`` selection rounds and ``d - 1`` 2-way marginals
    (``sens``: the 1-way and the 2-way marginals' sensitivities, L2 under zCDP, else
    L1)."""
    sens, sens2 = sens
    n_edges = d - 1
    parts = eps_rest * share
    out = {"rounds_total": 0.0, "first_charge": 0.0, "rho": None if rho is None else float(rho)}
    out.update(zip(("eps_one_way", "eps_select", "eps_two_way"), map(float, parts), strict=True))
    if rho is not None:
        rhos = rho * share
        sigma1 = sens * math.sqrt(d / (2 * rhos[0]))
        sigma2 = sens2 * math.sqrt(n_edges / (2 * rhos[2])) if rhos[2] > 0 else 0.0
        sel = math.sqrt(8 * rhos[1] / n_edges) if rhos[1] > 0 else math.inf
        out.update(zip(("rho_one_way", "rho_select", "rho_two_way"), map(float, rhos), strict=True))
        out.update(mechanism="gaussian", one_way_scale=sigma1, one_way_sd=sigma1)
        out.update(two_way_scale=sigma2, two_way_sd=sigma2, select_epsilon=sel)
        return out
    b1 = sens * (d / parts[0])
    b2 = sens2 * (n_edges / parts[2]) if parts[2] > 0 else 0.0
    out.update(dict.fromkeys(("rho_one_way", "rho_select", "rho_two_way")))
    out.update(mechanism="laplace", one_way_scale=b1, one_way_sd=math.sqrt(2) * b1)
    out.update(two_way_scale=b2, two_way_sd=math.sqrt(2) * b2)
    out["select_epsilon"] = parts[1] / n_edges if parts[1] > 0 else math.inf
    return out


def _aim_split(eps_rest, rho, d, shares, sens):
    """AIM: the 1-way release, then annealed rounds that share the rest (``sens``: the
    1-way and the rounds' marginals' sensitivities, L2 under zCDP, else L1)."""
    sens, sens2 = sens
    s1, rounds_share = shares
    T = aim_n_rounds(d)
    if rho is not None:
        rho1 = rho * s1
        rounds = rho * rounds_share if d > 1 else 0.0
        sigma1 = sens * math.sqrt(d / (2 * rho1))
        nominal = sens2 * math.sqrt(T / (2 * _MEASURE_SHARE * rounds)) if rounds > 0 else 0.0
        rho_sel, rho_meas = (1 - _MEASURE_SHARE) * rounds, _MEASURE_SHARE * rounds
        out = {"mechanism": "gaussian", "one_way_scale": sigma1, "one_way_sd": sigma1}
        out.update(rho=float(rho), rho_one_way=float(rho1))
        out.update(rho_select=float(rho_sel), rho_two_way=float(rho_meas))
        parts = [eps_rest * r / rho for r in (rho1, rho_sel, rho_meas)]
    else:
        e1 = eps_rest * s1
        rounds = eps_rest * rounds_share if d > 1 else 0.0
        b1 = sens * (d / e1)
        nominal = sens2 * (math.sqrt(2) * T / (_MEASURE_SHARE * rounds)) if rounds > 0 else 0.0
        out = {"mechanism": "laplace", "one_way_scale": b1, "one_way_sd": math.sqrt(2) * b1}
        out.update(dict.fromkeys(("rho", "rho_one_way", "rho_select", "rho_two_way")))
        parts = [e1, (1 - _MEASURE_SHARE) * rounds, _MEASURE_SHARE * rounds]
    out.update(zip(("eps_one_way", "eps_select", "eps_two_way"), map(float, parts), strict=True))
    first = rounds / (_ROUNDS_PER_COLUMN * d) if rounds > 0 else 0.0
    out.update(rounds_total=float(rounds), first_charge=first, two_way_sd=nominal)
    if first > 0:  # the first round's noise (the later rounds' are in rounds_)
        eps_sel, scale, _ = _round_noise(out["mechanism"], first, sens2)
    else:
        eps_sel, scale = math.inf, 0.0
    out.update(two_way_scale=scale, select_epsilon=eps_sel)
    return out
