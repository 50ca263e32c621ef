"""The release plan of :class:`DPLogisticRegression`: the mechanism, the budget of each
problem and the objective perturbation's ridge and noise rate, from public inputs only.

Built after the bounds are resolved (their budget is a public fraction) and before any
statistic of the rows is released; the only source of ``privacy_breakdown_``,
``epsilon_spent_`` and ``delta_spent_``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from skdp.linear_model._objective_perturbation import objective_perturbation_parameters

__all__ = ["LogisticPlan", "auto_mechanism"]

#: ``mechanism="auto"`` uses DP-SGD below this many rows per unit of noise,
#: ``n epsilon / (K' (p + 1))`` (measured, ``doc/benchmarks_models.rst``)
AUTO_DPSGD_BELOW = 100.0
#: share of each problem's epsilon that ``inference=True`` gives to the noisy release of
#: the Fisher information (the rest goes to the objective perturbation)
INFERENCE_SHARE = 0.35
#: the share instead where the public ``n epsilon_k / d'`` is below
#: :data:`LOW_INFORMATION` (there the Fisher information is mostly noise at 35 %;
#: measured in :ref:`inference-logistic`)
INFERENCE_SHARE_LOW = 0.5
#: rows per unit of a problem's epsilon and coordinate below which the larger share is used
LOW_INFORMATION = 40.0


def auto_mechanism(n_samples, n_features, epsilon, delta, n_problems=1):
    """The mechanism ``DPLogisticRegression(mechanism="auto")`` uses: a public rule.

    ``"dpsgd"`` when ``delta`` allows it (``0 < delta < 1 / n_samples``), ``epsilon``
    is finite and ``r = n_samples * epsilon / (n_problems * (n_features + 1))`` is below
    :data:`AUTO_DPSGD_BELOW` (100); ``"objective"`` otherwise (always for
    ``delta = 0``: pure epsilon-DP). ``r`` is the number of rows per unit of the
    objective-perturbation noise of one problem (its noise norm grows like ``d' /
    epsilon_k``, ``d' = n_features + 1``, against a Hessian growing like ``n``). Every
    argument is public under skdp's neighbouring relation (:ref:`neighbouring-relation`:
    the row count is public; the feature and class counts are the declared shape), so
    the choice reveals nothing about the rows.

    Measured (``benchmarks/logistic_regression.py``, 20 seeds, :ref:`dp-logistic-auto`):
    on nine public tables of 225-4,774 training rows at epsilon 0.5, 1 and 3, DP-SGD had
    the higher median test AUC in 16 of the 17 cells with ``r < 100`` (the other tied;
    by up to 0.12), objective perturbation was higher or tied in 9 of the 10 cells with
    ``r >= 150`` (by up to 0.01; 0.001 lower in the other), where it is also about a
    hundred times faster. No measured cell lies between ``r = 90`` and ``150``.

    Parameters
    ----------
    n_samples, n_features : int
        The shape of ``X``.
    epsilon, delta : float
        The fit's budget.
    n_problems : int, default=1
        1 for two classes, the number of classes for one-vs-rest.

    Returns
    -------
    {"objective", "dpsgd"}

    Examples
    --------
    >>> from skdp.linear_model._logistic import auto_mechanism
    >>> auto_mechanism(300, 8, 1.0, 1e-5)  # r = 300 / 9 = 33
    'dpsgd'
    >>> auto_mechanism(300, 8, 1.0, 0.0)  # no delta allowed: pure epsilon-DP
    'objective'
    >>> auto_mechanism(5000, 8, 1.0, 1e-5)  # r = 556
    'objective'
    """
    n, p, k = int(n_samples), int(n_features), max(int(n_problems), 1)
    epsilon, delta = float(epsilon), float(delta)
    if not math.isfinite(epsilon) or not 0.0 < delta < 1.0 / max(n, 1):
        return "objective"
    return "dpsgd" if n * epsilon / (k * (p + 1)) < AUTO_DPSGD_BELOW else "objective"


@dataclass(frozen=True)
class LogisticPlan:
    """Budget and noise parameters of one :class:`DPLogisticRegression` fit.

    Attributes
    ----------
    epsilon, delta : float
        The total budget; ``delta`` is what DP-SGD may spend.
    eps_bounds : float
        Epsilon of the private bound estimate (0 with declared bounds).
    mechanism : {"objective", "dpsgd"}
        The mechanism that runs (``"auto"`` resolved by its public rule).
    n_problems : int
        1 for two classes, one per class (one-vs-rest) otherwise.
    eps_problem, delta_problem : float
        The budget of each problem: ``(epsilon - eps_bounds) / n_problems`` and
        ``delta / n_problems`` (sequential composition).
    ridge, rate : float
        Objective perturbation's ridge ``lambda`` and noise rate ``beta`` of one
        problem (:func:`objective_perturbation_parameters`; also computed for DP-SGD,
        unused there).
    max_rows_per_group : int or None
        The contribution bound ``k`` of a patient-level fit: each problem is run at
        ``eps_problem = (epsilon - eps_bounds) / (n_problems k)`` per row, which is
        ``k`` times that per patient of at most ``k`` rows (``DPLogisticRegression``
        Notes); DP-SGD clips per patient and runs at ``eps_problem`` per patient
        (no division); ``None`` per row.
    eps_fisher : float
        Per problem (per row, as ``eps_problem``), the epsilon of the noisy Fisher
        information released for ``conf_int`` (``inference=True``: ``INFERENCE_SHARE``
        of the problem's budget, ``INFERENCE_SHARE_LOW`` where the public ``n_samples
        eps_problem / d'`` is below ``LOW_INFORMATION``, taken out of ``eps_problem``;
        0 otherwise).
    """

    epsilon: float
    delta: float
    eps_bounds: float
    mechanism: str
    n_problems: int
    eps_problem: float
    delta_problem: float
    ridge: float
    rate: float
    max_rows_per_group: int | None = None
    eps_fisher: float = 0.0
    #: the public ``n_samples eps_problem / d'`` of a row-level fit (``None`` with
    #: ``groups`` or without the shape): ``conf_int`` picks its method by it
    information: float | None = None

    @classmethod
    def build(
        cls,
        *,
        epsilon,
        delta,
        eps_bounds,
        mechanism,
        n_problems,
        C,
        max_rows_per_group=None,
        inference=False,
        n_samples=None,
        n_coords=None,
    ):
        """The plan from public inputs: the budget, the bounds' share, the resolved
        mechanism, the number of problems (from the declared classes), ``C``, the
        contribution bound of a patient-level fit, whether the Fisher information
        is released for inference and, for its share, the row count and the number of
        coordinates ``d'`` (public: :ref:`neighbouring-relation`)."""
        eps_problem = (epsilon - eps_bounds) / n_problems
        if max_rows_per_group is not None and mechanism != "dpsgd":  # k x per patient
            eps_problem = eps_problem / int(max_rows_per_group)
        eps_fisher, information = 0.0, None
        if n_samples is not None and n_coords is not None:
            information = n_samples * eps_problem / max(int(n_coords), 1)
        if inference and math.isfinite(eps_problem):  # inside the same total
            eps_fisher = inference_share(n_samples, n_coords, eps_problem) * eps_problem
            eps_problem = eps_problem - eps_fisher
        ridge, rate = objective_perturbation_parameters(eps_problem, C)
        return cls(
            epsilon=epsilon,
            delta=delta,
            eps_bounds=eps_bounds,
            mechanism=mechanism,
            n_problems=n_problems,
            eps_problem=eps_problem,
            delta_problem=delta / n_problems,
            ridge=ridge,
            rate=rate,
            max_rows_per_group=max_rows_per_group,
            eps_fisher=eps_fisher,
            information=information,
        )

    @property
    def eps_problem_spent(self):
        """The epsilon one problem spends per privacy unit (per patient with groups:
        ``k eps_problem`` for objective perturbation, ``eps_problem`` for DP-SGD), for
        the progress records' public schedule."""
        return (self.epsilon - self.eps_bounds) / self.n_problems

    @property
    def dpsgd(self):
        """Whether DP-SGD runs."""
        return self.mechanism == "dpsgd"

    @property
    def delta_spent(self):
        """``delta`` for DP-SGD, 0 for objective perturbation (pure DP)."""
        return self.delta if self.dpsgd else 0.0

    def noise_scale(self, d=None):
        """``noise_scale_``: ``{"objective": 1 / beta}`` (0 without noise), empty for
        DP-SGD (its noise is ``noise_multiplier_``); with inference also ``"fisher"``,
        the Laplace scale of the Fisher information's entries (``d`` coordinates)."""
        if self.dpsgd:
            return {}
        scale = {"objective": 0.0 if math.isinf(self.rate) else 1.0 / float(self.rate)}
        if self.eps_fisher > 0:
            scale["fisher"] = self.fisher_scale(d)
        return scale

    def fisher_scale(self, d):
        """Laplace scale of each upper-triangle entry of the released Fisher information
        of ``d = d'`` coordinates: its L1 sensitivity per row is ``c (d' + 1) / 2`` with
        ``c = 1/4`` (``sum_(j <= l) |z_j z_l| <= (d' + 1) / 2`` for ``||z|| <= 1``), so the
        scale is ``(d' + 1) / (8 eps_fisher)`` (0 without inference or at
        ``epsilon=inf``)."""
        if self.eps_fisher <= 0 or not math.isfinite(self.eps_fisher):
            return 0.0
        return (d + 1.0) / (8.0 * self.eps_fisher)

    @property
    def fisher_total(self):
        """The epsilon of all Fisher releases per privacy unit."""
        k = 1 if self.max_rows_per_group is None or self.dpsgd else self.max_rows_per_group
        return self.eps_fisher * self.n_problems * k

    def breakdown(self):
        """``privacy_breakdown_``: the bounds and all problems together."""
        part = "dpsgd" if self.dpsgd else "objective"
        if self.eps_fisher > 0:
            fisher = float(self.fisher_total)
            return {
                "bounds": float(self.eps_bounds),
                part: float(self.epsilon - self.eps_bounds - fisher),
                "fisher": fisher,
            }
        return {
            "bounds": float(self.eps_bounds),
            part: float(self.epsilon - self.eps_bounds),
        }


def inference_share(n_samples, n_coords, eps_problem):
    """The share of a problem's (per-row) epsilon that goes to the Fisher release:
    :data:`INFERENCE_SHARE_LOW` where ``n_samples eps_problem / n_coords`` is below
    :data:`LOW_INFORMATION`, :data:`INFERENCE_SHARE` otherwise (and when the shape is
    not given: a patient-level fit, whose row count is not public). A public rule: the
    row count (public under the row-level relation, :ref:`neighbouring-relation`) and
    the declared shape only."""
    if n_samples is None or n_coords is None:
        return INFERENCE_SHARE
    low = n_samples * eps_problem / max(int(n_coords), 1) < LOW_INFORMATION
    return INFERENCE_SHARE_LOW if low else INFERENCE_SHARE


def _rate_of_scale(noise_scale):
    """The deprecated ``noise_rate_``: ``beta = 1 / scale`` (0 without noise or for
    DP-SGD, as before)."""
    scale = noise_scale.get("objective", 0.0)
    return 0.0 if scale == 0.0 else 1.0 / scale
