"""DPKaplanMeier: a differentially private survival curve with a noise-aware band."""

from __future__ import annotations

import numpy as np

from skdp.survival._band import SurvivalCurveBase, band_from_draws, step_lookup
from skdp.survival._histogram import fit_curves
from skdp.utils._docstrings import insert_docs
from skdp.utils._sklearn_compat import _fit_context, check_is_fitted

__all__ = ["DPKaplanMeier"]


@insert_docs
class DPKaplanMeier(SurvivalCurveBase):
    """Kaplan--Meier survival curve with differential privacy, and its confidence band.

    The private replacement for lifelines' ``KaplanMeierFitter`` and scikit-survival's
    ``kaplan_meier_estimator``. One noisy histogram of (grid interval, event or
    censored) is released; the number at risk, the Nelson--Aalen cumulative hazard,
    the survival curve and its band are computed from it alone.

    Parameters
    ----------
    epsilon : float, default=1.0
        Total privacy loss of one ``fit`` (one histogram). ``math.inf`` gives the exact
        grouped (life-table) estimate on the grid.
    max_time : float
        The public study horizon (e.g. the planned follow-up), required: the grid ends
        there and later times are censored at it. Never read it off the data.
    time_grid : array-like of float, default=None
        Public grid edges in ``(0, max_time]`` (e.g. the visit schedule).
    n_intervals : int, default=None
        With ``time_grid=None``: that many equal intervals. ``None``: a public rule of
        ``epsilon`` only, ``round(40 sqrt(epsilon))`` clipped to ``[10, 100]`` (40 at
        ``epsilon = 1``; see :doc:`/survival` for the trade-off).
    n_bootstrap : int, default=200
        Draws of the parametric bootstrap behind :meth:`predict_interval` (0: no band).
    max_rows_per_group : int or None, default=None
        The public number of rows one patient may contribute when ``fit`` gets
        ``groups`` (recurrent episodes; from the protocol, never from the data): rows
        beyond it are dropped at random, and the guarantee holds per patient
        (:doc:`/patients`). Required with ``groups``.
    random_state : None, int, Generator or SeedSequence, default=None
        Seed of the noise and of the bootstrap. ``None`` draws fresh OS entropy (what a
        real release uses).

    Attributes
    ----------
    time_grid_ : ndarray of shape (m + 1,)
        The grid edges ``0 = e_0 < ... < e_m = max_time`` (the resolved ``time_grid``;
        ``timeline_`` is a deprecated name of it, removed in 0.2).
    survival_function_ : ndarray of shape (m + 1,)
        The private ``S(e_j)``, non-increasing, ``S(0) = 1``.
    cumulative_hazard_ : ndarray of shape (m + 1,)
        The private Nelson--Aalen ``H(e_j)``, non-decreasing.
    at_risk_ : ndarray of shape (m,)
        The private number at risk at the start of each interval (projected).
    median_survival_time_ : float
        The first grid time where ``S <= 1/2`` (``inf`` if the curve stays above).
    bootstrap_survival_ : ndarray of shape (n_bootstrap, m + 1)
        Parametric-bootstrap draws of the curve through the mechanism (Notes).
    noise_scale_ : dict
        ``{"histogram": b}``: the discrete Laplace scale ``b`` of every cell, in counts
        (0 at ``epsilon = inf``).
    epsilon_spent_, delta_spent_ : float
        ``epsilon`` and 0.
    privacy_guarantee_ : str
        ``"exact"`` (``"none"`` at ``epsilon = inf``).
    privacy_breakdown_ : dict
        ``{"histogram": epsilon}``.
    privacy_unit_ : {"row", "group"}
    max_rows_per_group_ : int or None

    Notes
    -----
    **Privacy.** Neighbouring relation: add or remove one row (one patient's follow-up);
    with ``groups``, one patient with all their rows (:doc:`/patients`). Mechanism: the
    histogram of (interval, status) over the public grid, one cell per row (a time past
    ``max_time`` is censored there), with integer discrete Laplace noise of scale
    ``Delta / epsilon`` on every cell (:func:`skdp.mechanisms.add_geometric`; exact in
    integer arithmetic, Canonne, Kamath and Steinke 2020). Sensitivity: a row is
    counted once, so ``Delta = 1`` in L1; with ``groups`` each patient keeps at most
    ``k = max_rows_per_group`` rows (chosen uniformly at random, never the first ``k``)
    and ``Delta = k`` (:func:`skdp.mechanisms.sensitivity.group_sensitivity`). One pure
    ``epsilon``-DP release, no composition: the accounting is exact. Laplace rather
    than Gaussian noise: one release of an L1-sensitivity-1 query is where pure DP is
    tightest and needs no ``delta``; an integer mechanism keeps the counts integer and
    is safe in floating point. Everything after is post-processing: the number at risk
    ``n_j`` is the suffix sum of the noisy counts, projected onto non-increasing
    sequences; the cumulative hazard adds ``d_j / (n_j - c_j / 2)`` (life-table
    denominator: rows censored inside an interval count half) and is projected onto
    non-decreasing sequences (isotonic regression); ``S`` is the product of
    ``1 - dH_j``.

    **Floating point.** Every released count is an integer ``c + Z`` with ``Z`` drawn
    exactly in integer arithmetic (no floating-point ``exp``/``log`` on the private
    side; ``epsilon / Delta`` is first rounded down to 20 significant bits: more
    noise), so the attack of Mironov (2012) on floating-point Laplace noise does not
    apply and the guarantee holds as implemented. The curves, the band and its
    bootstrap draws are floating-point post-processing of the noisy counts.

    **Band.** ``predict_interval`` is a parametric bootstrap through the mechanism:
    ``n_bootstrap`` cohorts are drawn from the model the noisy histogram estimates
    (the number at the start, the event and censoring probabilities of each interval),
    each is counted into a histogram, given fresh noise of the same scale and
    re-estimated. Their spread carries both the sampling variance (Greenwood's) and the
    DP noise; the band is ``S -+ z_{1 - alpha/2} sd*`` with ``sd*`` the bootstrap
    standard deviation, clipped to ``[0, 1]``. Pointwise coverage of the true curve is
    checked by simulation in skdp's tests and in :doc:`/survival` (about 95 % for a
    95 % band at ``epsilon`` from 0.1 to 1 and ``n`` from 500 to 2,000).

    ``predict`` is a right-continuous step function on the grid; within an interval it
    keeps the value at its start, so it differs from a continuous-time Kaplan--Meier
    curve by up to the drop of one interval (choose the grid accordingly, or use
    ``interpolate=True``).

    References
    ----------
    E. L. Kaplan, P. Meier. "Nonparametric Estimation from Incomplete Observations."
    JASA 53, 1958.

    L. Gondara, K. Wang. "Differentially Private Survival Function Estimation."
    Machine Learning for Healthcare (MLHC) 2020.

    {ref_canonne2020}

    {ref_mironov2012}

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.survival import DPKaplanMeier, make_survival_target
    >>> rng = np.random.default_rng(0)
    >>> t_event, t_cens = rng.exponential(10, 3000), rng.uniform(0, 30, 3000)
    >>> y = make_survival_target(t_event <= t_cens, np.minimum(t_event, t_cens))
    >>> km = DPKaplanMeier(epsilon=1.0, max_time=20.0, random_state=0).fit(y)
    >>> s = km.predict([5.0, 10.0])
    >>> bool(np.all(np.abs(s - np.exp(-np.array([5.0, 10.0]) / 10)) < 0.05))
    True
    >>> km.predict_interval([10.0]).shape
    (1, 2)
    >>> km.privacy_breakdown_, km.noise_scale_
    ({'histogram': 1.0}, {'histogram': 1.0})
    """

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, y, *, groups=None):
        """Release the private survival curve.

        Parameters
        ----------
        y : structured array of shape (n_samples,)
            The survival target (event indicator, time):
            :func:`~skdp.survival.make_survival_target` or scikit-survival's ``Surv``.
            A Dask array of that dtype or a Dask DataFrame with the two columns is
            counted on the workers (without ``groups``).
        groups : array-like of shape (n_samples,), default=None
            The patient of each row (recurrent episodes). With ``groups`` the guarantee
            is per patient (Notes); needs ``max_rows_per_group``.

        Returns
        -------
        self
        """
        counts, plan, band_rng = self._release(y, groups)
        n_risk, hazard, survival = fit_curves(counts[0])
        self.at_risk_ = n_risk
        self.cumulative_hazard_ = hazard[:, 0]
        self.survival_function_ = survival
        below = np.flatnonzero(survival <= 0.5)
        self.median_survival_time_ = float(self.time_grid_[below[0]]) if below.size else np.inf
        self.bootstrap_survival_ = self._bootstrap(
            counts, plan, band_rng, lambda _, __, s: s, survival.shape
        )
        return self

    def predict(self, times, *, interpolate=False):
        """The private survival probability ``S(t)`` at ``times`` (a step function).

        Parameters
        ----------
        times : float or array-like of shape (n_times,)
            Within ``[0, max_time]``.
        interpolate : bool, default=False
            ``True``: linear between the grid edges (the life-table assumption of
            events spread evenly inside an interval) instead of the step function;
            closer to a continuous-time curve on a coarse grid.

        Returns
        -------
        float or ndarray of shape (n_times,)
        """
        check_is_fitted(self, "survival_function_")
        return step_lookup(self.time_grid_, self.survival_function_, times, interpolate=interpolate)

    def predict_cumulative_hazard(self, times, *, interpolate=False):
        """The private Nelson--Aalen cumulative hazard ``H(t)`` at ``times`` (a step
        function; ``interpolate=True``: linear between the grid edges)."""
        check_is_fitted(self, "cumulative_hazard_")
        return step_lookup(self.time_grid_, self.cumulative_hazard_, times, interpolate=interpolate)

    def predict_interval(self, times, alpha=0.05, *, interpolate=False):
        """Pointwise ``1 - alpha`` confidence interval of ``S(t)``, noise included
        (``interpolate`` as in :meth:`predict`).

        Returns
        -------
        ndarray of shape (n_times, 2)
            Lower and upper bounds (Notes: parametric bootstrap through the mechanism;
            at ``epsilon = inf`` it has the sampling variance alone; with
            ``n_bootstrap = 0`` it is the estimate).
        """
        check_is_fitted(self, "survival_function_")
        est = self.survival_function_
        if self.bootstrap_survival_.shape[0]:
            lower, upper = band_from_draws(est, self.bootstrap_survival_, alpha)
        else:
            band_from_draws(est, est[None, :], alpha)  # validates alpha
            lower, upper = est, est
        band = np.column_stack([lower, upper])
        out = step_lookup(self.time_grid_, band, times, interpolate=interpolate)
        return out if out.ndim == 2 else out[None]  # one row per time, also for a scalar

    def plot(self, ax=None, *, alpha=0.05, label="DP Kaplan-Meier", **kwargs):
        """Draw the curve as a step function with its ``1 - alpha`` band.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Where to draw (the current axes by default).
        alpha : float, default=0.05
        label : str
        **kwargs
            Passed to ``ax.step``.

        Returns
        -------
        ax : matplotlib Axes
        """
        import matplotlib.pyplot as plt

        check_is_fitted(self, "survival_function_")
        ax = plt.gca() if ax is None else ax
        (line,) = ax.step(
            self.time_grid_, self.survival_function_, where="post", label=label, **kwargs
        )
        band = self.predict_interval(self.time_grid_, alpha=alpha)
        ax.fill_between(
            self.time_grid_, band[:, 0], band[:, 1], step="post", alpha=0.25,
            color=line.get_color(), linewidth=0,
        )  # fmt: skip
        ax.set_xlabel("time")
        ax.set_ylabel("survival probability")
        ax.set_ylim(0.0, 1.02)
        return ax
