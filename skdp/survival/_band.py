"""Shared pieces of the DP survival curves: the estimator base (parameters, the noisy
histogram, the privacy facts), the noise-aware band and the step-function lookup."""

from __future__ import annotations

from numbers import Integral, Real
from statistics import NormalDist

import numpy as np
from sklearn.base import BaseEstimator

from skdp.base import DPEstimatorMixin
from skdp.survival._histogram import fit_curves, simulate_histograms
from skdp.survival._release import check_no_dask_groups, grid_of, read_target, release
from skdp.utils._deprecation import RenamedAttribute
from skdp.utils._groups import patient_codes
from skdp.utils._keyword_init import keyword_init
from skdp.utils._random import fit_streams
from skdp.utils._rowsum import is_dask_collection
from skdp.utils._sklearn_compat import Interval

__all__ = ["SurvivalCurveBase", "band_from_draws", "step_lookup"]

#: the fit streams of every survival curve, in this order (append new ones at the end)
STREAMS = ("groups", "noise", "band")


def step_lookup(edges, values, times, *, interpolate=False, name="times"):
    """``values`` (one row per edge) at ``times`` as a right-continuous step function:
    the value at the last edge ``<= t``; with ``interpolate=True`` linear between the
    edges. Times outside ``[0, max_time]`` are refused."""
    try:
        t = np.asarray(times, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be an array-like of numbers") from None
    scalar = t.ndim == 0
    t = np.atleast_1d(t)
    if t.ndim != 1:
        raise ValueError(f"{name} must be a number or a 1-d array of times")
    if not np.isfinite(t).all() or (t < 0).any() or (t > edges[-1]).any():
        raise ValueError(
            f"{name} must lie within [0, max_time]: the curve is not estimated beyond "
            "the public horizon"
        )
    values = np.asarray(values)
    if interpolate:
        flat = values.reshape(values.shape[0], -1)
        cols = [np.interp(t, edges, flat[:, i]) for i in range(flat.shape[1])]
        out = np.stack(cols, axis=-1).reshape((t.size, *values.shape[1:]))
    else:
        idx = np.clip(np.searchsorted(edges, t, side="right") - 1, 0, edges.size - 1)
        out = values[idx]
    return out[0] if scalar else out


def band_from_draws(estimate, draws, alpha):
    """Pointwise ``1 - alpha`` interval from the parametric-bootstrap ``draws``
    ``(B, ...)`` of the estimator: ``estimate -+ z_{1 - alpha/2} sd(draws)`` clipped to
    ``[0, 1]`` (the normal interval with the bootstrap standard error; in skdp's
    simulations it covered better than the percentile and basic intervals where the
    noise dominates)."""
    if isinstance(alpha, bool) or not isinstance(alpha, Real) or not 0.0 < alpha < 1.0:
        raise ValueError("alpha must be a number in (0, 1)")
    z = NormalDist().inv_cdf(1.0 - float(alpha) / 2.0)
    half = z * np.std(draws, axis=0)
    return np.clip(estimate - half, 0.0, 1.0), np.clip(estimate + half, 0.0, 1.0)


class SurvivalCurveBase(DPEstimatorMixin, BaseEstimator):
    """Parameters, fit plumbing and privacy facts shared by the DP survival curves."""

    # the grid edges are the resolved time_grid (one spelling with DPCoxPH, doc/glossary.rst)
    timeline_ = RenamedAttribute("time_grid_")

    _parameter_constraints: dict = {
        "epsilon": DPEstimatorMixin._privacy_parameter_constraints["epsilon"],
        "max_time": [None, Interval(Real, 0, None, closed="neither")],
        "time_grid": [None, "array-like"],
        "n_intervals": [None, Interval(Integral, 1, None, closed="left")],
        "n_bootstrap": [Interval(Integral, 0, None, closed="left")],
        "max_rows_per_group": [None, Interval(Integral, 1, None, closed="left")],
        **DPEstimatorMixin._common_constraints("random_state"),
    }

    __init__ = keyword_init(
        [
            ("epsilon", 1.0),
            ("max_time", None),
            ("time_grid", None),
            ("n_intervals", None),
            ("n_bootstrap", 200),
            ("max_rows_per_group", None),
            ("random_state", None),
        ],
        qualname="SurvivalCurveBase.__init__",
    )

    def _release(self, y, groups, *, event_types=None, n_columns=2):
        """The noisy histogram of one fit, its plan and the band's stream; records the
        privacy facts (the plan is their only source)."""
        epsilon, _ = self._check_privacy_params()
        edges = grid_of(self.max_time, self.time_grid, self.n_intervals, epsilon)
        target = _digestible(y, competing=event_types is not None)
        check_no_dask_groups(is_dask_collection(target), groups)
        if groups is not None:  # validated before any use
            groups, _ = patient_codes(
                self, groups, len(target), dask_input=is_dask_collection(target)
            )
        streams = fit_streams(
            self.random_state,
            list(STREAMS),
            estimator=self,
            y=target,
            groups=groups,
            # a histogram is a function of the multiset of rows; with groups the random
            # bounding depends on the row order, so the order is digested too
            order_invariant=groups is None,
        )
        counts, plan = release(
            y,
            owner=self,
            plan_args={"epsilon": epsilon, "n_strata": 1, "n_columns": n_columns},
            rngs=streams,
            edges=edges,
            groups=groups,
            event_types=event_types,
        )
        self.time_grid_ = edges
        self.noise_scale_ = {"histogram": float(plan.noise_scale)}  # keyed like the breakdown
        self.privacy_unit_ = "row" if plan.max_rows_per_group is None else "group"
        self.max_rows_per_group_ = plan.max_rows_per_group
        self._record_privacy_spent(plan.epsilon, 0.0, breakdown=plan.breakdown)
        return counts, plan, streams["band"]

    def _n_draws(self):
        """Bootstrap draws (at ``epsilon = inf`` too: the band is then the sampling
        variance alone)."""
        return int(self.n_bootstrap)

    def _bootstrap(self, counts, plan, band_rng, curve, shape):
        """The band's draws: ``curve(n_risk, hazard, survival)`` of the curves of every
        histogram simulated from the released ``counts`` (post-processing), an array of
        shape ``(n_bootstrap, *shape)``."""
        draws = self._n_draws()
        boot = np.empty((draws, *shape))
        if draws:
            sims = simulate_histograms(counts.astype(np.float64), plan, band_rng, draws)
            for b in range(draws):
                boot[b] = curve(*fit_curves(sims[b, 0]))
        return boot


def _digestible(y, *, competing):
    """The target, validated, as a plain ``(status, time)`` table for the seed digest (a
    Dask collection as it is: it is validated block by block)."""
    if is_dask_collection(y):
        return y
    status, time = read_target(y, competing=competing)
    return np.column_stack([status.astype(np.float64), time])
