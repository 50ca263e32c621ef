"""The fitted attributes of :class:`DPLinearRegression`: the model in original units
and the plan's facts (post-processing of the releases and public numbers only)."""

from __future__ import annotations

import math

import numpy as np

from skdp.linear_model._functional_release import _target_moments
from skdp.linear_model._inference import (
    exact_sum_sq,
    record_inference_centre,
    released_statistics,
)
from skdp.utils.validation import check_finite_release

__all__ = ["record_fit", "weighted_sum_sq"]


def record_fit(est, plan, scaling, centre, model):
    """Write the fitted attributes of ``est``: the model in original units and the
    plan's facts (``model`` is ``(w, ridge, n_kept, releases)``, or ``None`` for the
    mean only)."""
    p, sc = plan.p, scaling
    est.mechanism_ = plan.mechanism
    est.target_centre_ = float((centre.mean - sc.cy) / sc.ay) if plan.fit_intercept else None
    est.bounds_X_ = (sc.lo, sc.hi)
    est.bounds_y_ = (float(sc.ylo), float(sc.yhi))
    est.eigenvalue_sensitivity_ = float(plan.eigenvalue_sensitivity)
    est.target_weight_ = float(plan.target_weight)
    est.sensitivity_ = float(plan.sensitivity)
    if model is None:
        est.coef_ = np.zeros(p)
        est.intercept_ = float(est.target_centre_)
        scales = (float("nan"), 0.0)
        est.min_eigenvalue_ = None
        est.regularization_ = float("inf")
        est.n_components_ = 0
    else:
        w, reg, kept, rel = model
        slope = w[:p]
        w0 = w[p] if plan.fit_intercept else 0.0
        # y = (u + centre - cy) / ay with u = slope . (ax x + cx) + w0
        est.coef_ = slope * sc.ax / sc.ay
        cy_c = sc.cy - centre.mean
        if plan.fit_intercept:
            est.intercept_ = float((slope @ sc.cx + w0 - cy_c) / sc.ay)
        else:
            est.intercept_ = 0.0
        if kept == 0 and plan.fit_intercept:
            est.intercept_ = float((centre.mean - sc.cy) / sc.ay)
        check_finite_release(
            [est.coef_, est.intercept_],
            what="the fitted coefficients",
            fix="use a larger epsilon or bounds of a less extreme scale",
        )
        scales = (float(rel["scale"]), float(rel["eigenvalue_scale"]))
        est.min_eigenvalue_ = rel["min_eigenvalue"]
        est.regularization_ = float(reg)
        est.n_components_ = int(kept)
    est.noise_scale_ = {
        "centre": float(centre.scale),
        "eigenvalue": scales[1],
        "objective": scales[0],
    }
    est.released_statistics_ = released_statistics(plan, centre, model)
    if plan.contribution == "clip" and model is not None:  # the released count, or none
        est.released_statistics_["n"] = model[3]["n"] if plan.count_released else None
    est.privacy_breakdown_ = plan.breakdown()
    est.privacy_unit_ = "row" if plan.max_rows_per_group is None else "group"
    est.max_rows_per_group_ = plan.max_rows_per_group
    est._record_privacy_spent(plan.epsilon, plan.delta_spent, guarantee="exact")
    return record_inference_centre(est)


def weighted_sum_sq(rel, plan, X, y, scaling, columns, clip, weights):
    """``epsilon = inf`` only (a non-private fit): the weighted ``sum u^2`` for the
    ordinary least squares interval, as :func:`skdp.linear_model._inference.exact_sum_sq`
    adds the unweighted one for a row-level fit."""
    if weights is None:
        return exact_sum_sq(rel, plan, X, y, scaling, columns, clip)
    # "clip": no interval reads it (conf_int refused), and the weighted sum is not its own
    if math.isinf(plan.eps_objective) and plan.contribution != "clip":
        rel["target_sum_sq"] = _target_moments(
            X, y, *scaling.args(), clip=clip, columns=columns, weights=weights
        )[1]
    return rel
