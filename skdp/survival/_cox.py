"""DPCoxPH: a differentially private proportional-hazards model (piecewise-exponential
likelihood on a public time grid, fitted by noisy Newton steps on per-patient clipped
gradients)."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator

from skdp.base import DPEstimatorMixin
from skdp.survival._cox_fit import exact_newton, noisy_newton, pe_data
from skdp.survival._cox_inference import (
    EXAMPLE_COX_SETUP,
    CoxInferenceMixin,
    exact_statistics,
    move_to_interval_centre,
)
from skdp.survival._cox_plan import CoxPlan
from skdp.survival._cox_score import concordance_index
from skdp.survival._grid import exposure_matrix, time_grid_edges
from skdp.survival._target import check_survival_target
from skdp.utils._docstrings import insert_docs
from skdp.utils._groups import bound_contributions, patient_codes
from skdp.utils._keyword_init import keyword_init
from skdp.utils._logging import get_logger, log_progress
from skdp.utils._random import fit_streams
from skdp.utils._sklearn_compat import Interval, _fit_context, check_is_fitted
from skdp.utils.validation import check_bounds, validate_data

__all__ = ["DPCoxPH"]

_LOG = get_logger(__name__)


@insert_docs(example_cox_setup=EXAMPLE_COX_SETUP)
class DPCoxPH(CoxInferenceMixin, DPEstimatorMixin, BaseEstimator):
    """Differentially private proportional-hazards (Cox) regression.

    The hazard of a patient with features ``x`` is ``h(t | x) = h_0(t) exp(x .
    coef_)``, with ``h_0`` constant on each interval of a public time grid (the
    piecewise-exponential model, whose estimate of ``coef_`` approaches Cox's as the
    grid refines). Unlike Cox's partial likelihood, whose risk sets couple the
    patients, its log-likelihood is a sum of one term per patient, so each patient's
    influence can be clipped and the fit made private: a noisy baseline histogram,
    one noisy Hessian and ``n_iter`` Newton steps on noisy clipped gradients, all
    under one zCDP budget (Notes).

    Parameters
    ----------
    epsilon : float, default=1.0
        Total privacy budget of the fit (per patient); ``math.inf``: the exact
        non-private maximum-likelihood fit.
    delta : float, default=1e-5
        The ``delta`` of the ``(epsilon, delta)`` guarantee (Gaussian noise): > 0.
    bounds_X : (lo, hi) of scalars or per-feature arrays, or dict {column: (lo, hi)}
        Public bounds of the features (from the study protocol or the measurement
        ranges, never from the data). Required. Features are clipped to them.
    max_time : float
        The public study horizon: follow-up beyond it is censored there. Required.
    time_grid : array-like of float, default=None
        Public interior edges of the baseline's intervals (e.g. the visit schedule);
        ``None``: ``n_intervals`` equal intervals on ``[0, max_time]``.
    n_intervals : int, default=10
        The number of equal intervals when ``time_grid`` is None.
    n_iter : int, default=8
        The number of noisy Newton steps (released gradients).
    step_size : float, default=0.7
        The damping of each Newton step (``1``: a full step). Below 1 the steps
        converge even where the Hessian released at the start underestimates the
        curvature at the optimum (strong effects).
    max_grad_norm : float, default=2.0
        The clipping norm ``C`` of a patient's gradient (features in ``[-1, 1]``,
        times in units of ``max_time``).
    hessian_clip : float, default=3.5
        The bound ``C_H`` of a patient's Hessian block (Frobenius norm).
    baseline_fraction : float, default=0.1
        Share of the zCDP budget ``rho`` spent on the baseline histogram.
    hessian_fraction : float, default=0.3
        Share of ``rho`` spent on the Hessian.
    centre_fraction : float, default=0.05
        Share of ``rho`` spent on the features' mean (the expansion point); the rest
        goes to the gradients.
    max_rows_per_group : int, default=None
        With ``groups``: the public number of rows (episodes) a patient may
        contribute; rows beyond it are dropped at random.
    inference : bool, default=False
        Release ``coef_`` at the centre of the noise-aware interval of :meth:`conf_int`
        (the Newton path's remaining shrinkage corrected) instead of the path's last
        point, and ``baseline_hazard_`` moved with it: post-processing of the same
        releases under the same plan and budget. Where ``n epsilon`` is small the last
        point is shrunk toward 0 and the interval is centred elsewhere; with ``True``
        the interval is centred on ``coef_`` and 1.02-1.40 times as wide as ``coef_``'s
        spread implies (measured in :doc:`/inference`), at the price of a noisier
        point estimate. ``False`` leaves every release unchanged; ``True`` enters the
        seed material (other noise for the same ``random_state``) and changes nothing
        at ``epsilon = inf``.
    random_state : None, int, numpy.random.Generator or SeedSequence, default=None
        The noise's seed (``None``: fresh OS entropy). No generator is stored.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        Log hazard ratios per unit of each feature (with ``inference=True``: the centre
        of :meth:`conf_int`'s interval).
    baseline_hazard_ : ndarray of shape (n_intervals,)
        The hazard rate (per unit of time) in each interval of a patient at the centre
        of ``bounds_X``.
    time_grid_ : ndarray of shape (n_intervals + 1,)
        The public edges used.
    bounds_X_ : tuple of two ndarrays of shape (n_features,)
    epsilon_spent_, delta_spent_ : float
    privacy_guarantee_ : {"exact", "none"}
    privacy_breakdown_ : dict
        ``{"centre", "baseline", "hessian", "gradient"}``: ``epsilon_spent_`` split in proportion
        to each part's ``rho`` (see ``rho_breakdown_``); sums to ``epsilon_spent_``.
    rho_breakdown_ : dict or None
        The zCDP budget of each part (``None`` for a non-private fit).
    noise_scale_ : dict
        The Gaussian standard deviation of each part's sum (the gradient's per step).
    n_iter_ : int
        The released Newton steps (0 for the exact fit at ``epsilon = inf``).
    released_statistics_ : dict
        What :meth:`conf_int` reads, in the scaled units of the fit: the noisy
        ``centre``, ``baseline``, ``hessian`` and ``gradients`` (one row per step)
        exactly as released (never an un-noised sum); at ``epsilon = inf`` only the
        exact ``hessian`` at the estimate (nothing is private there).
    loss_curve_ : ndarray of shape (0,)
        Empty: the likelihood of the private rows is an un-noised statistic of them
        and is not kept (:doc:`/glossary`); the exact fit runs no released steps.
    privacy_unit_ : {"row", "group"}
    max_rows_per_group_ : int or None
    nonprivate_options_ : list of str
    {attr_features_in}

    Notes
    -----
    **Model.** On the grid ``0 = e_0 < ... < e_J = max_time``, patient ``i`` (features
    scaled to ``z_i`` in ``[-1, 1]^d`` by ``bounds_X``) has the event indicator
    ``d_ij`` and the time at risk ``t_ij`` (in units of ``max_time``) of interval
    ``j``, and contributes ``l_i = sum_j [d_ij eta_ij - t_ij exp(eta_ij)]`` with
    ``eta_ij = alpha_j + z_i beta`` (Holford 1980; Laird & Olivier 1981).

    **Privacy.** Neighbouring relation: add or remove one row (one patient with all
    their rows with ``groups``); the number of rows is *not* used (every release is
    a sum, and the one mean is a ratio of two noisy sums). Four kinds of sums are
    released with Gaussian noise, each of a per-patient contribution clipped in L2
    (:func:`~skdp.survival._cox_plan.cox_sensitivities`, which proves the bounds):

    1. the centre ``sum_i (1, z_i)``, sensitivity ``sqrt(1 + d)``; the noisy mean
       ``m`` is the expansion point (features ``z - m`` from then on);
    2. the baseline histogram ``(sum_i d_ij, sum_i t_ij)_j``, sensitivity
       ``sqrt(1 + sum_j (Delta_j / max_time)^2)``; its noisy ratio starts ``alpha``;
    3. the Hessian of ``sum_i l_i`` at ``(alpha, 0)``, each patient's block scaled to
       Frobenius norm ``hessian_clip``, noise on its upper triangle; its eigenvalues
       are floored at a public level and it is inverted (post-processing);
    4. ``n_iter`` gradients ``sum_i clip(grad l_i, max_grad_norm)`` at the current
       released point, each followed by the damped chord-Newton step ``theta +=
       step_size H~^-1 g~``.

    Gaussian noise of standard deviation ``sensitivity / sqrt(2 rho_part)`` is
    ``rho_part``-zCDP; the parts compose adaptively to ``rho = zcdp_rho(epsilon,
    delta)`` (Bun & Steinke 2016), converted to ``(epsilon, delta)`` with the tight
    conversion of Canonne, Kamath & Steinke (2020): an exact guarantee for the
    mathematical mechanism (noise drawn in floating point). Everything after the
    releases -- the Newton steps, ``coef_ = beta / h``, the baseline -- is
    post-processing. With ``groups`` each patient keeps at most
    ``max_rows_per_group`` rows (chosen at random inside the mechanism) and every
    clipping applies to the patient's sum over those rows, so the sensitivities do
    not grow with it (:doc:`/patients`).

    **Floating point.** Every release adds Gaussian noise drawn in floating point:
    the guarantee is for the mathematical mechanism (Mironov 2012); no ``secure_mode``
    yet.

    **Utility.** The noise does not shrink with ``n`` but the signal grows with it:
    on simulations with known hazard ratios and on FLCHAIN (4,000 training patients,
    up to 10 features) the held-out concordance at ``epsilon = 1`` is within 0.005 of
    lifelines' Cox fit, within 0.03 at ``epsilon = 0.3``; on a few hundred patients
    the loss is several points (benchmarks/survival_cox.py). Fewer intervals
    (``n_intervals=5``) help small cohorts (less noise on the baseline).

    **Inference.** :meth:`conf_int` and :meth:`summary` give intervals and p-values
    of ``coef_`` that include the noise, by post-processing of
    ``released_statistics_`` and the noise scales (:doc:`/inference`).

    **Evaluation.** ``score`` is Harrell's concordance on the rows given: a
    non-private evaluation, as scikit-learn's ``score``. ``DPGridSearchCV`` needs a
    DP scorer (:mod:`skdp.metrics`); skdp has no DP concordance yet, so the search
    refuses ``scoring=None`` with a ``TypeError``.

    References
    ----------
    T. R. Holford. "The analysis of rates and of survivorship using log-linear
    models." Biometrics 36, 1980.

    N. Laird, D. Olivier. "Covariance analysis of censored survival data using
    log-linear analysis techniques." JASA 76, 1981.

    {ref_mironov2012}

    M. Bun, T. Steinke. "Concentrated Differential Privacy: Simplifications,
    Extensions, and Lower Bounds." TCC 2016.

    {ref_canonne2020}

    Examples
    --------
    {example_cox_setup}
    >>> cox = cox.fit(X, y)
    >>> bool(cox.coef_[0] > 0 > cox.coef_[1])
    True
    >>> bool(cox.score(X, y) > 0.6)
    True
    """

    _parameter_constraints: dict = {
        **DPEstimatorMixin._privacy_parameter_constraints,
        "bounds_X": [None, tuple, list, np.ndarray, dict],
        "max_time": [None, Interval(Real, 0, None, closed="neither")],
        "time_grid": [None, "array-like"],
        "n_intervals": [Interval(Integral, 1, None, closed="left")],
        "n_iter": [Interval(Integral, 1, None, closed="left")],
        "max_grad_norm": [Interval(Real, 0, None, closed="neither")],
        "hessian_clip": [Interval(Real, 0, None, closed="neither")],
        "baseline_fraction": [Interval(Real, 0, 1, closed="neither")],
        "hessian_fraction": [Interval(Real, 0, 1, closed="neither")],
        "centre_fraction": [Interval(Real, 0, 1, closed="neither")],
        "step_size": [Interval(Real, 0, 1, closed="right")],
        "max_rows_per_group": [None, Interval(Integral, 1, None, closed="left")],
        "inference": ["boolean"],
        **DPEstimatorMixin._common_constraints("random_state"),
    }

    __init__ = keyword_init(
        [
            ("epsilon", 1.0),
            ("delta", 1e-5),
            ("bounds_X", None),
            ("max_time", None),
            ("time_grid", None),
            ("n_intervals", 10),
            ("n_iter", 8),
            ("step_size", 0.7),
            ("max_grad_norm", 2.0),
            ("hessian_clip", 3.5),
            ("baseline_fraction", 0.1),
            ("hessian_fraction", 0.3),
            ("centre_fraction", 0.05),
            ("max_rows_per_group", None),
            ("inference", False),
            ("random_state", None),
        ],
        qualname="DPCoxPH.__init__",
    )

    _later_parameters = {"inference": False}  # out of the seed material when False

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, *, groups=None):
        """Fit the private proportional-hazards model.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
        y : structured array of shape (n_samples,)
            ``(event, time)`` per row (:func:`skdp.survival.make_survival_target`, or
            scikit-survival's ``Surv``).
        groups : array-like of shape (n_samples,), default=None
            The patient of each row (recurrent episodes). With ``groups`` the
            guarantee is per patient and ``max_rows_per_group`` is required.

        Returns
        -------
        self
        """
        Z, event, time, codes, edges, (lo, hi) = self._prepare(X, y, groups)
        epsilon, delta = self._check_privacy_params(require_delta=True)
        k = None if codes is None else self.max_rows_per_group
        plan = self._plan(epsilon, delta, edges, Z.shape[1], k)
        streams = fit_streams(
            self.random_state,
            ["baseline", "hessian", "gradient", "groups", "centre"],
            estimator=self,
            X=Z,
            y=np.column_stack([event, time]),
            groups=codes,
            # bounding a patient's rows depends on the row order
            order_invariant=codes is None,
        )
        if codes is not None:  # at most k rows per patient, chosen at random
            keep = bound_contributions(codes, k, streams["groups"])
            Z, event, time = Z[keep], event[keep], time[keep]
            codes = np.unique(codes[keep], return_inverse=True)[1].ravel()
        data = pe_data(Z, event, time, edges, codes)
        released = {}
        if plan.private:
            alpha, beta = noisy_newton(
                data,
                plan,
                streams,
                step_size=self.step_size,
                log=self._logger(plan),
                record=released,
            )
        else:
            alpha, beta = exact_newton(data)
            released = exact_statistics(data, alpha, beta)
        self.released_statistics_ = released
        self._record(plan, alpha, beta, edges, (lo, hi))
        if self.inference and plan.private:  # post-processing of the same releases
            move_to_interval_centre(self)
        return self

    def _prepare(self, X, y, groups):
        """Validated inputs: ``Z`` in ``[-1, 1]``, the target, the patients, the grid
        and the bounds (all refusals before any noise is drawn)."""
        if self.bounds_X is None:
            raise ValueError(
                "bounds_X is required: declare public bounds of the features "
                "(doc/choosing_bounds.rst); a private estimate is not implemented here"
            )
        if self.max_time is None:
            raise ValueError("max_time is required: the public study horizon")
        if isinstance(self.bounds_X, str):
            raise ValueError("bounds_X must be declared (lo, hi) bounds, not a string")
        if y is None:  # scikit-learn's wording for a supervised estimator
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None: "
                "give the (event, time) target (skdp.survival.make_survival_target)"
            )
        X = validate_data(self, X, dtype=np.float64)
        event, time = check_survival_target(y)
        if event.shape[0] != X.shape[0]:
            raise ValueError(f"y has {event.shape[0]} rows for {X.shape[0]} rows of X")
        edges = time_grid_edges(self.max_time, self.time_grid, n_intervals=self.n_intervals)
        columns = list(getattr(self, "feature_names_in_", range(X.shape[1])))
        lo, hi = check_bounds(self.bounds_X, X.shape[1], name="bounds_X", columns=columns)
        codes, _ = patient_codes(self, groups, X.shape[0])
        centre, half = lo / 2 + hi / 2, hi / 2 - lo / 2
        Z = np.clip((np.clip(X, lo, hi) - centre) / half, -1.0, 1.0)
        return Z, event, time, codes, edges, (lo, hi)

    def _plan(self, epsilon, delta, edges, n_features, k):
        return CoxPlan.build(
            epsilon=epsilon,
            delta=delta,
            edges=edges,
            n_features=n_features,
            n_iter=self.n_iter,
            max_grad_norm=self.max_grad_norm,
            hessian_clip=self.hessian_clip,
            baseline_fraction=self.baseline_fraction,
            hessian_fraction=self.hessian_fraction,
            centre_fraction=self.centre_fraction,
            max_rows_per_group=k,
        )

    def _logger(self, plan):
        def log(step):
            log_progress(
                _LOG,
                estimator=type(self).__name__,
                step=step,
                total=plan.n_iter,
                phase="newton",
                epsilon_spent=None,
            )

        return log

    def _record(self, plan, alpha, beta, edges, bounds):
        """The fitted attributes: post-processing of the releases, and the plan's
        privacy facts (their only source)."""
        lo, hi = bounds
        half = hi / 2 - lo / 2
        if not (np.isfinite(alpha).all() and np.isfinite(beta).all()):
            raise RuntimeError("DPCoxPH: the Newton steps diverged (not finite)")
        with np.errstate(over="ignore"):
            baseline = np.exp(alpha) / float(edges[-1])
        if not np.isfinite(baseline).all():  # post-processing of the releases
            raise ValueError(
                "DPCoxPH: the baseline hazard overflows in floating point: max_time is "
                "far from the scale of the follow-up times (give both in one unit, e.g. days)"
            )
        self.coef_ = beta / half
        self.baseline_hazard_ = baseline
        self.time_grid_ = edges
        self.bounds_X_ = (lo, hi)
        self.n_iter_ = plan.n_iter if plan.private else 0
        self.loss_curve_ = np.empty(0)  # a private fit's loss is an un-noised statistic
        self.noise_scale_ = plan.noise_scale()
        self.rho_breakdown_ = plan.rho_breakdown()
        self.privacy_unit_ = plan.privacy_unit
        self.max_rows_per_group_ = plan.max_rows_per_group
        guarantee = "exact" if plan.private else "none"
        return self._record_privacy_spent(
            plan.epsilon, plan.delta_spent, guarantee=guarantee, breakdown=plan.breakdown()
        )

    # ----------------------------------------------------------------- prediction
    def _risk(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        lo, hi = self.bounds_X_
        return (np.clip(X, lo, hi) - (lo / 2 + hi / 2)) @ self.coef_

    def predict(self, X):
        """Risk scores (log relative hazards, higher = riskier), relative to a
        patient at the centre of ``bounds_X`` (features clipped to the bounds).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        return self._risk(X)

    def predict_cumulative_hazard_function(self, X, times):
        """Cumulative hazards ``H(t | x) = H_0(t) exp(predict(x))`` at ``times``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        times : array-like of shape (n_times,)
            Within ``[0, max_time]``.

        Returns
        -------
        ndarray of shape (n_samples, n_times)
        """
        risk = self._risk(X)
        times = self._check_times(times)
        base = exposure_matrix(times, self.time_grid_) @ self.baseline_hazard_
        return np.exp(risk)[:, None] * base[None, :]

    def predict_survival_function(self, X, times):
        """Survival probabilities ``S(t | x) = exp(-H(t | x))`` at ``times``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        times : array-like of shape (n_times,)
            Within ``[0, max_time]`` (the model says nothing past the horizon).

        Returns
        -------
        ndarray of shape (n_samples, n_times)
        """
        return np.exp(-self.predict_cumulative_hazard_function(X, times))

    def _check_times(self, times):
        try:
            times = np.asarray(times, dtype=np.float64).reshape(-1)
        except (TypeError, ValueError):
            raise TypeError("times must be an array-like of numbers") from None
        if not np.isfinite(times).all():
            raise ValueError("times must be finite")
        if (times < 0).any() or (times > self.time_grid_[-1]).any():
            raise ValueError("times must lie within [0, max_time]")
        return times

    def score(self, X, y):
        """Harrell's concordance index of ``predict(X)`` on ``y`` (non-private).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : structured array of shape (n_samples,)

        Returns
        -------
        float
        """
        risk = self._risk(X)
        event, time = check_survival_target(y)
        if event.shape[0] != risk.shape[0]:
            raise ValueError(f"y has {event.shape[0]} rows for {risk.shape[0]} rows of X")
        return concordance_index(event, time, risk)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        return tags
