"""The release plan of :class:`DPStandardScaler`: every share of the budget, every
sensitivity and noise scale of one fit, computed once from public inputs.

Built before any statistic of the rows is released (the private bound estimate spends a
public fraction of ``epsilon``, known in advance); the only source of
``privacy_breakdown_``, ``epsilon_spent_``, ``delta_spent_`` and ``noise_scale_``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from skdp.mechanisms.sensitivity import bounded_sum_sensitivity, group_sensitivity

__all__ = ["ScalerPlan", "estimates_bounds", "standard_scaler_sensitivities"]


def standard_scaler_sensitivities(n_features, *, neighbor="add_remove"):
    """L1 sensitivities of the two vectors :class:`DPStandardScaler` releases.

    With every column clipped to its bounds and mapped onto ``[-1, 1]``
    (``z = (clip(x) - c) / h``, ``c`` the midpoint and ``h`` the half-width of the
    bounds), the scaler releases ``S = sum_i z_i`` and ``W = sum_i (z_i^2 - 1/2)``
    (vectors over the ``d = n_features`` columns). One row contributes a value in
    ``[-1, 1]`` to each coordinate of ``S`` and in ``[-1/2, 1/2]`` to each of ``W``, so
    (:func:`skdp.mechanisms.sensitivity.bounded_sum_sensitivity`, Dwork & Roth 2014
    §3.3):

    * add/remove one row: ``Delta_S = d``, ``Delta_W = d / 2``;
    * replace one row: ``Delta_S = 2 d``, ``Delta_W = d``.

    Both are tight (a row at a corner of the box).

    Parameters
    ----------
    n_features : int
    neighbor : {"add_remove", "replace"}, default="add_remove"

    Returns
    -------
    delta_sum, delta_second_moment : float

    Examples
    --------
    >>> from skdp.preprocessing import standard_scaler_sensitivities
    >>> standard_scaler_sensitivities(3)
    (3.0, 1.5)
    """
    d = int(n_features)
    s = float(bounded_sum_sensitivity(-1.0, 1.0, neighbor=neighbor))
    w = float(bounded_sum_sensitivity(-0.5, 0.5, neighbor=neighbor))
    return d * s, d * w


def estimates_bounds(bounds):
    """Whether the ``bounds`` parameter asks for a private estimate (``None`` or
    ``"private"``), which spends ``bounds_fraction * epsilon``."""
    return bounds is None or (isinstance(bounds, str) and bounds == "private")


@dataclass(frozen=True)
class ScalerPlan:
    """Budget, sensitivities and noise scales of one :class:`DPStandardScaler` fit.

    Attributes
    ----------
    n_public : int
        The public row count the sums are divided by.
    n_features : int
        The number of columns ``d``.
    epsilon : float
        The budget of the fit (0 when nothing is released).
    with_mean, with_std : bool
        The estimator's parameters; the mean is released when either is set.
    eps_bounds, eps_mean, eps_variance : float
        Epsilon of the private bound estimate (``bounds_fraction * epsilon`` when the
        bounds are estimated and ``epsilon`` is finite, else 0), of the sums ``S`` and
        of the sums ``W``; they sum to ``epsilon``.
    sensitivity_mean, sensitivity_variance : float
        L1 sensitivities of ``S`` and ``W`` (:func:`standard_scaler_sensitivities`),
        ``k`` times the row's for a patient of at most ``k`` rows.
    noise_scale_mean, noise_scale_variance : float
        Laplace scales of ``S`` and ``W``: sensitivity over epsilon; 0 where nothing
        is released or at ``epsilon = inf``.
    max_rows_per_group : int or None
        The contribution bound ``k`` of a patient-level fit (``groups``); ``None`` per
        row.
    eps_rows : float
        Epsilon of the private estimate of ``k`` (``max_rows_per_group="private"``:
        ``PRIVATE_ROWS_FRACTION * epsilon``), 0 for a declared bound; taken off the
        budget before the other shares.
    """

    n_public: int
    n_features: int
    epsilon: float
    with_mean: bool
    with_std: bool
    eps_bounds: float
    eps_mean: float
    eps_variance: float
    sensitivity_mean: float
    sensitivity_variance: float
    noise_scale_mean: float
    noise_scale_variance: float
    max_rows_per_group: int | None = None
    eps_rows: float = 0.0

    @classmethod
    def build(
        cls,
        *,
        n_public,
        n_features,
        epsilon,
        bounds,
        bounds_fraction,
        mean_fraction,
        with_mean,
        with_std,
        max_rows_per_group=None,
        eps_rows=0.0,
    ):
        """The plan of a fit from public inputs only: the public row count, the number
        of columns, the budget, the ``bounds`` parameter (whether they are estimated,
        with ``bounds_fraction`` of ``epsilon``), ``mean_fraction``, ``with_mean`` /
        ``with_std`` and the contribution bound of a patient-level fit."""
        k = max_rows_per_group
        delta_s, delta_w = (
            group_sensitivity(s, k) for s in standard_scaler_sensitivities(n_features)
        )
        common = {
            "n_public": int(n_public),
            "n_features": int(n_features),
            "with_mean": bool(with_mean),
            "with_std": bool(with_std),
            "sensitivity_mean": float(delta_s),
            "sensitivity_variance": float(delta_w),
            "max_rows_per_group": k,
        }
        if not (with_mean or with_std):  # nothing is released, nothing spent
            zeros = ("eps_bounds", "eps_mean", "eps_variance")
            zeros += ("noise_scale_mean", "noise_scale_variance")
            return cls(**common, epsilon=0.0, **dict.fromkeys(zeros, 0.0))
        # what resolve_bounds spends: fraction * epsilon for an estimate, 0 at inf
        estimated = estimates_bounds(bounds) and math.isfinite(epsilon)
        eps_bounds = float(bounds_fraction) * epsilon if estimated else 0.0
        eps_rest = epsilon - eps_bounds - eps_rows
        eps_mean = mean_fraction * eps_rest if with_std else eps_rest
        if not with_std:
            eps_var = 0.0
        elif math.isinf(eps_rest):
            eps_var = math.inf
        else:
            eps_var = eps_rest - eps_mean
        return cls(
            **common,
            epsilon=epsilon,
            eps_rows=float(eps_rows),
            eps_bounds=float(eps_bounds),
            eps_mean=float(eps_mean),
            eps_variance=float(eps_var),
            noise_scale_mean=delta_s / eps_mean if math.isfinite(eps_mean) else 0.0,
            noise_scale_variance=(
                delta_w / eps_var if with_std and math.isfinite(eps_var) else 0.0
            ),
        )

    @property
    def releases(self):
        """Whether anything is released (``with_mean`` or ``with_std``)."""
        return self.with_mean or self.with_std

    @property
    def delta_spent(self):
        """0: every release is pure epsilon-DP."""
        return 0.0

    def breakdown(self):
        """``privacy_breakdown_``: the epsilon of each release; sums to ``epsilon``
        (``"max_rows_per_group"`` only when that bound was estimated)."""
        rows = {"max_rows_per_group": float(self.eps_rows)} if self.eps_rows else {}
        return {
            **rows,
            "bounds": float(self.eps_bounds),
            "mean": float(self.eps_mean),
            "variance": float(self.eps_variance),
        }

    def noise_scale(self):
        """``noise_scale_``: the Laplace scales, keyed like :meth:`breakdown`."""
        return {"mean": float(self.noise_scale_mean), "variance": float(self.noise_scale_variance)}
