"""Confidence intervals and p-values that include the privacy noise, for
:class:`DPLinearRegression` (:doc:`/inference`): post-processing of the fitted model only.
"""

from __future__ import annotations

import math

import numpy as np

from skdp.utils._docstrings import insert_docs
from skdp.utils._inference import (
    bootstrap_rng,
    check_alpha,
    check_n_bootstrap,
    coefficient_names,
    infinite_rows,
    normal_table,
    summary_frame,
    t_table,
)
from skdp.utils._sklearn_compat import check_is_fitted

__all__ = [
    "LinearInferenceMixin",
    "exact_sum_sq",
    "record_inference_centre",
    "released_statistics",
]

#: the fitted model of the examples of conf_int and summary
EXAMPLE_LINEAR_FIT = """\
>>> import numpy as np
>>> from skdp.linear_model import DPLinearRegression
>>> rng = np.random.default_rng(0)
>>> X = rng.uniform(-1, 1, size=(5000, 2))
>>> y = X @ [0.5, -0.3] + 0.1 + rng.normal(0, 0.2, size=5000)
>>> reg = DPLinearRegression(epsilon=1.0, bounds_X=(-1, 1), bounds_y=(-2, 2),
...                          random_state=0).fit(X, y)"""


def released_statistics(plan, centre, model):
    """The ``released_statistics_`` of a fit: what ``conf_int`` reads (scaled units).

    ``gram`` and ``target`` are the noisy ``X~^T X~`` (with the public corner ``n``)
    and ``X~^T u`` exactly as released, ``target_variance`` the private variance of the
    scaled target (``None`` when not released), ``target_sum_sq`` the exact ``sum u^2``
    of a non-private fit (``epsilon=inf`` only, ``None`` otherwise), ``n`` the public
    number of rows. Nothing un-noised is stored at a finite ``epsilon``.
    """
    out = {"n": int(plan.n), "gram": None, "target": None, "target_sum_sq": None}
    out["target_variance"] = None if centre.variance is None else float(centre.variance)
    if model is not None:
        rel = model[3]
        out["gram"] = np.array(rel["gram"], dtype=float)
        out["target"] = np.array(rel["target"], dtype=float)
        if math.isinf(plan.eps_objective):
            out["target_sum_sq"] = rel.get("target_sum_sq")
    return out


def exact_sum_sq(rel, plan, X, y, scaling, columns, clip):
    """Add ``sum u^2`` of the clipped, scaled target to ``rel`` at ``epsilon=inf`` (a
    non-private fit: nothing is private there), for the residual variance of the
    ordinary least squares interval; at a finite ``epsilon`` nothing is added."""
    if math.isinf(plan.eps_objective):
        from skdp.linear_model._functional_release import _target_moments

        rel["target_sum_sq"] = _target_moments(X, y, *scaling.args(), clip=clip, columns=columns)[1]
    return rel


#: ``conf_int``, ``summary`` and ``inference=True`` after a patient-level fit with
#: ``contribution="clip"`` (its count is released, not public)
CLIP_INFERENCE_REFUSAL = (
    "contribution='clip' releases the count of the statistics with noise, and the "
    "intervals of conf_int/summary (and inference=True) assume a public count; use "
    "contribution='weight' (the default) for inference"
)


def _bootstrap_ready(est):
    """Whether the finite-epsilon bootstrap applies (not the mean only, not epsilon=inf)."""
    stats = est.released_statistics_
    return (
        stats["gram"] is not None
        and stats["target_sum_sq"] is None
        and bool(est.fit_intercept)
        and stats["target_variance"] is not None
    )


def record_inference_centre(est):
    """With ``inference=True``: ``coef_`` and ``intercept_`` become the bias-corrected
    centre of :meth:`~LinearInferenceMixin.conf_int` (post-processing of the releases,
    with the default bootstrap seed derived from them); the released estimate is kept
    in ``released_coef_`` and ``released_intercept_`` (``None`` where nothing is
    corrected; absent with ``inference=False``, so the default fit is unchanged)."""
    for name in ("released_coef_", "released_intercept_"):
        est.__dict__.pop(name, None)  # a refit keeps nothing of the previous one
    if not getattr(est, "inference", False):
        return est
    est.released_coef_ = est.released_intercept_ = None
    if not _bootstrap_ready(est):
        return est
    from skdp.linear_model._inference_linear import _released_estimate, bootstrap

    stats = est.released_statistics_
    estimate = _released_estimate(est)
    rng = bootstrap_rng(None, stats["gram"], stats["target"], estimate)
    centre, _ = bootstrap(est, None, rng)
    est.released_coef_, est.released_intercept_ = np.asarray(est.coef_), est.intercept_
    est.coef_, est.intercept_ = np.asarray(centre[:-1]), float(centre[-1])
    return est


class LinearInferenceMixin:
    """``conf_int`` and ``summary`` of :class:`DPLinearRegression` (post-processing)."""

    def _inference(self, alpha, n_bootstrap, random_state):
        """``(names, estimate, se, lower, upper, p)`` of every coefficient."""
        check_is_fitted(self)
        if self.privacy_unit_ == "group" and getattr(self, "contribution", None) == "clip":
            raise ValueError(CLIP_INFERENCE_REFUSAL)
        alpha = check_alpha(alpha)
        if n_bootstrap is not None:
            n_bootstrap = check_n_bootstrap(n_bootstrap)
        stats = self.released_statistics_
        p = np.asarray(self.coef_).shape[0]
        intercept = bool(self.fit_intercept)
        names = coefficient_names(self, p, intercept)
        from skdp.linear_model._inference_linear import _released_estimate

        estimate = _released_estimate(self)
        if stats["gram"] is None:  # the private mean only: nothing about the slopes
            return (names, estimate, *infinite_rows(estimate.size))
        if stats["target_sum_sq"] is not None:  # epsilon=inf: ordinary least squares
            from skdp.linear_model._inference_linear import ols

            centre, se, df = ols(self)
            lower, upper, pval = t_table(centre, se, alpha, df)
            return names, estimate, se, lower, upper, pval
        if not intercept or stats["target_variance"] is None:
            raise ValueError(
                "conf_int needs fit_intercept=True at a finite epsilon: the residual "
                "variance comes from the private variance of the target, which is "
                "released only with an intercept"
            )
        from skdp.linear_model._inference_linear import bootstrap

        rng = bootstrap_rng(random_state, stats["gram"], stats["target"], estimate)
        centre, se = bootstrap(self, n_bootstrap, rng)
        lower, upper, pval = normal_table(estimate, centre, se, alpha)
        shown = np.append(self.coef_, self.intercept_)  # the centre with inference=True
        return names, shown, se, lower, upper, pval

    @insert_docs(example_linear_fit=EXAMPLE_LINEAR_FIT)
    def conf_int(self, alpha=0.05, *, n_bootstrap=None, random_state=None):
        """Confidence intervals of the coefficients that include the privacy noise.

        Post-processing only: it reads the fitted model (the released statistics
        ``released_statistics_``, the noise scales, the public bounds and ``n``), never
        the data, and spends no privacy budget (``epsilon_spent_`` is unchanged). It
        works on an unpickled model with the data gone.

        Parameters
        ----------
        alpha : float, default=0.05
            One minus the nominal coverage (0.05 for 95 % intervals).
        n_bootstrap : int or None, default=None
            Replicates of the mechanism per bootstrap stage (at least 50). ``None``:
            2000, or where the replicates simulate ``n`` rows each (the model clips
            targets) ``min(2000, max(400, 4e6 / n))``.
        random_state : None, int or Generator, default=None
            Seed of the bootstrap's simulation. ``None``: a seed derived from the
            released values (public), so the same model always gives the same interval.

        Returns
        -------
        ndarray of shape (n_features + 1, 2)
            Lower and upper bounds, rows in the order of ``coef_`` followed by the
            intercept (no intercept row when ``fit_intercept=False``).

        Notes
        -----
        **Finite epsilon: a parametric bootstrap through the whole mechanism**
        (Ferrando, Wang & Sheldon 2022), inverted through the mechanism's mean map
        (:doc:`/inference`). A data model is fitted to the releases: ``n`` Gaussian
        feature rows with the mean and covariance of the noisy ``X~^T X~`` after
        removing the noise's expected share of the spread of the covariance's
        eigenvalues and of the mean's norm (James-Stein-type shrinkage; clipped to the
        public bounds and held fixed over the replicates, as ordinary least squares
        conditions on the design), and a target ``y~ = clip(x~ b + a + sigma e, -1,
        1)`` with Gaussian errors whose ``sigma`` gives the clipped simulated target
        the private variance of the target (every model keeps that variance). Each
        replicate re-runs the mechanism on simulated data: clipping of the target, the
        private centre, the noisy statistics (Laplace or Gaussian, the fitted scales),
        the private smallest eigenvalue, the adaptive ridge and the trimmed solve.
        Where the model clips no
        target the replicates are drawn exactly at the level of the sufficient
        statistics (``X~^T e`` Gaussian with covariance ``X~^T X~``, ``||e||^2`` its
        square plus an independent chi-square), so the cost does not grow with ``n``;
        otherwise ``n`` rows are simulated. The replicates at the estimate give the
        mechanism's mean ``m`` (biased: the ridge shrinks, clipping the target
        flattens) and, by finite differences with common random numbers, its Jacobian
        ``J``; the centre is the bias-corrected ``theta0 = theta^ + J^-1 (theta^ -
        m)``. The mechanism is run again at ``theta0`` (nearer the truth than the
        shrunken estimate) for the covariance ``S0`` of the replicates there: the
        interval is ``theta0 -+ z_(1 - alpha/2) sqrt(diag(J^-1 S0 J^-T))``, the delta
        method's spread of the centre (``theta0`` moves by ``J^-1`` times a move of
        ``theta^``; ``J`` inverted with singular values at least 0.05), the p-value
        the two-sided normal one of ``theta0`` over its standard error.
        Assumptions: rows independent (with ``groups``, rows of one patient are treated
        as independent), the target linear in the clipped features with homoscedastic
        Gaussian errors; the interval covers the regression on the clipped features.
        Needs ``fit_intercept=True`` (the residual variance comes from the private
        variance of the target, released only with an intercept). Where ``n epsilon``
        is so small that the release is the private mean only, every interval is the
        whole line. Measured coverage: :ref:`inference-coverage`.

        **epsilon=inf:** the ordinary least squares interval of the clipped data
        (Student's ``t`` with ``n - d'`` degrees of freedom), the same as
        statsmodels' ``OLS`` when no value is clipped.

        References
        ----------
        C. Ferrando, S. Wang, D. Sheldon. "Parametric bootstrap for differentially
        private confidence intervals." AISTATS 2022.

        Examples
        --------
        {example_linear_fit}
        >>> ci = reg.conf_int()
        >>> ci.shape
        (3, 2)
        >>> bool(np.all(ci[:, 0] < ci[:, 1]))
        True
        """
        _, _, _, lower, upper, _ = self._inference(alpha, n_bootstrap, random_state)
        return np.column_stack([lower, upper])

    @insert_docs(example_linear_fit=EXAMPLE_LINEAR_FIT)
    def summary(self, alpha=0.05, *, n_bootstrap=None, random_state=None):
        """A statsmodels-like table of the coefficients with noise-aware inference.

        Post-processing only, as :meth:`conf_int` (same method, same interval).

        Parameters
        ----------
        alpha : float, default=0.05
            One minus the nominal coverage.
        n_bootstrap : int or None, default=None
            Replicates of the mechanism per bootstrap stage (``None``: as
            :meth:`conf_int`).
        random_state : None, int or Generator, default=None
            Seed of the bootstrap (``None``: derived from the released values).

        Returns
        -------
        pandas.DataFrame
            Indexed by feature name (``feature_names_in_`` when present, else ``x0,
            x1, ...``; ``"intercept"`` last), with columns ``coef`` (the released
            estimate), ``std err``, the interval's bounds (``[0.025`` and ``0.975]``
            for ``alpha=0.05``) and ``P>|z|``, the two-sided p-value of ``coefficient =
            0`` (``P>|t|`` semantics at ``epsilon=inf``).

        Examples
        --------
        {example_linear_fit}
        >>> list(reg.summary().index)
        ['x0', 'x1', 'intercept']
        """
        names, estimate, se, lower, upper, p = self._inference(alpha, n_bootstrap, random_state)
        return summary_frame(names, estimate, se, lower, upper, p, alpha)
