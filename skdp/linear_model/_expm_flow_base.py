"""Shared fitting code and docstring fragments of the ExpMFlow estimators (not public).

:class:`_BaseExpMFlow` holds what :class:`~skdp.linear_model.ExpMFlowClassifier` and
:class:`~skdp.linear_model.ExpMFlowRegressor` share: the parameter constraints, the call to
the layer-3 engine :mod:`skdp.variational` (which imports torch), the non-private opt-ins
and :meth:`sample_models`. The public estimators live in :mod:`skdp.linear_model._expm_flow`.
"""

from __future__ import annotations

import math
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning

from skdp.base import DPEstimatorMixin
from skdp.exceptions import ApproximateGuaranteeWarning, PrivacyLeakWarning
from skdp.utils._deprecation import DEPRECATED, renamed_parameter
from skdp.utils._keyword_init import keyword_init
from skdp.utils._patient_facts import PatientFactsMixin
from skdp.utils._random import make_rng
from skdp.utils._sklearn_compat import (
    Interval,
    StrOptions,
    check_is_fitted,
    validate_data,
)
from skdp.variational import draw_from_flow, sample_expm_linear

_STREAMS = ["init", "train", "diagnostics", "release", "batches", "bounds", "groups"]

_APPROX_MSG = (
    "ExpMFlow: epsilon is the nominal budget of the exponential mechanism; the released "
    "parameters are sampled from a trained flow, not from the exact mechanism, so the "
    "guarantee is approximate (privacy_guarantee_='approximate'; see flow_diagnostics_)."
)


def default_n_iter(n_iter, n_params):
    """Reverse-KL steps: ``n_iter``, or for ``None`` ``min(500, 100 + 10 n_params)``.

    A public rule (the stopping rule reads no private data: it is a fixed step count from
    the number of parameters ``d + 1``). Measured with ``diagnostics=True`` on logistic
    simulators (``benchmarks/expm_flow.py``, d = 5, 10, 20; epsilon = 0.1, 1, 10): the
    importance-sampling ESS fraction and the test AUC after 100-200 steps were within the
    run-to-run spread of those after 500 steps.
    """
    if n_iter is None:
        return min(500, 100 + 10 * int(n_params))
    return int(n_iter)


def _sigmoid(a):
    return 0.5 * (1.0 + np.tanh(0.5 * a))


#: the shared parameters they take last (as the DP-SGD estimators, less ``accountant``)
_TORCH_SHARED = ("device", "dtype", "n_jobs", "verbose", "random_state")
#: the parameters both estimators take after ``epsilon`` and their own one, in order
_SHARED_PARAMS = (
    ("alpha", 1.0),
    ("penalty", "l2"),
    ("fit_intercept", True),
    ("n_release_samples", 1),
    ("n_layers", 4),
    ("n_flows", DEPRECATED),
    ("flow_rank", 2),
    ("n_householder", 2),
    ("n_iter", None),
    ("batch_size", 128),
    ("data_batch_size", None),
    ("learning_rate", 1e-2),
    ("init", "laplace"),
    ("keep_flow", False),
    ("diagnostics", False),
    ("n_diagnostic_samples", 2048),
    ("max_rows_per_group", None),
    *DPEstimatorMixin._common_params(*_TORCH_SHARED),
)


def expm_flow_init(class_name, own):
    """``__init__(self, *, epsilon=1.0, <own>=None, <the shared parameters>)``.

    The scikit-learn ``__init__`` of an ExpM+NF estimator (it stores the parameters only;
    :func:`skdp.utils._keyword_init.keyword_init`); ``own`` is its one parameter of its
    own (``classes`` or ``bounds_y``).
    """
    return keyword_init(
        [("epsilon", 1.0), (own, None), *_SHARED_PARAMS], qualname=f"{class_name}.__init__"
    )


class _BaseExpMFlow(PatientFactsMixin, DPEstimatorMixin, BaseEstimator):
    """Shared fitting code (not public)."""

    #: {deprecated name: name}: seeds keep the old name (skdp.utils._random.fit_streams)
    _renamed_parameters = {"n_flows": "n_layers"}

    _parameter_constraints: dict = {
        # pure epsilon: no delta parameter
        "epsilon": DPEstimatorMixin._privacy_parameter_constraints["epsilon"],
        "alpha": [Interval(Real, 0, None, closed="neither")],
        "penalty": [StrOptions({"l2", "l1"})],
        "fit_intercept": ["boolean"],
        "n_release_samples": [Interval(Integral, 1, None, closed="left")],
        "n_layers": [Interval(Integral, 0, None, closed="left")],
        "n_flows": [StrOptions({DEPRECATED}), Interval(Integral, 0, None, closed="left")],
        "flow_rank": [Interval(Integral, 1, None, closed="left")],
        "n_householder": [Interval(Integral, 1, None, closed="left")],
        "n_iter": [None, Interval(Integral, 0, None, closed="left")],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "data_batch_size": [None, Interval(Integral, 1, None, closed="left")],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "init": [StrOptions({"laplace", "prior"})],
        "keep_flow": ["boolean"],
        "diagnostics": ["boolean"],
        "n_diagnostic_samples": [Interval(Integral, 2, None, closed="left")],
        "max_rows_per_group": [None, Interval(Integral, 1, None, closed="left")],
        **DPEstimatorMixin._common_constraints(*_TORCH_SHARED),
    }

    def _extra_nonprivate_options(self):
        # the diagnostics and the trained flow are un-noised functions of the data
        return [name for name in ("diagnostics", "keep_flow") if getattr(self, name)]

    def _mechanism_guarantee(self):
        return "approximate"  # the flow approximates the exponential mechanism's law

    def _warn_nonprivate_options(self):
        for name in self._extra_nonprivate_options():
            warnings.warn(
                f"ExpMFlow: {name}=True keeps un-noised functions of the private data on the "
                "fitted model (flow_diagnostics_ / flow_); the fit is reported as not "
                "private (epsilon_spent_=inf, privacy_guarantee_='none').",
                PrivacyLeakWarning,
                stacklevel=3,
            )

    def _record(self, plan):
        """The privacy facts of the fit, from ``plan`` alone (warns that the guarantee
        of a private fit is approximate)."""
        if plan.private:
            warnings.warn(_APPROX_MSG, ApproximateGuaranteeWarning, stacklevel=3)
        self._max_rows_per_group = plan.max_rows_per_group  # privacy_unit_, max_rows_...
        self._record_privacy_spent(
            plan.epsilon_spent,
            plan.delta_spent,
            guarantee=plan.guarantee,
            breakdown=plan.breakdown(),
        )

    def _fit_expm(self, X, y01, plan, streams):
        """Sample ``n_release_samples`` parameter vectors at ``plan.epsilon_per_sample``
        each (``plan``: the fit's :class:`ExpMFlowPlan`)."""
        self._warn_nonprivate_options()
        from skdp.utils.validation import check_magnitude

        check_magnitude(X, dtype=self.dtype)
        k = plan.n_release_samples
        out = sample_expm_linear(
            X,
            y01,
            # epsilon_per_sample at the plan's sensitivity (k per patient, 1 per row)
            epsilon=plan.exponent_epsilon,
            rngs=streams,
            alpha=self.alpha,
            penalty=self.penalty,
            fit_intercept=self.fit_intercept,
            n_release=k,
            data_batch_size=self.data_batch_size,
            # exponent epsilon / (2 s): epsilon-DP under add/remove AND replace-one (the
            # project's recorded resolution); the monotone epsilon / s holds under
            # add/remove only and is not used by the estimators; see _PRIVACY_NOTES
            monotone=False,
            device=self.device,
            dtype=self.dtype,
            n_jobs=self.n_jobs,
            n_flows=renamed_parameter(self, "n_flows", "n_layers"),
            flow_rank=self.flow_rank,
            n_householder=self.n_householder,
            n_iter=default_n_iter(self.n_iter, X.shape[1] + int(self.fit_intercept)),
            batch_size=self.batch_size,
            learning_rate=self.learning_rate,
            init=self.init,
            n_diagnostic_samples=self.n_diagnostic_samples,
            diagnostics=self.diagnostics,
            verbose=self.verbose,
        )
        thetas = out["samples"]
        # the reverse-KL losses are un-noised functions of the training rows: kept only
        # for a fit that is not private anyway (epsilon=inf or a non-private opt-in)
        nonprivate = bool(self._nonprivate_options()) or math.isinf(plan.eps_mechanism)
        self.loss_curve_ = np.asarray(out["history"] if nonprivate else [], dtype=float)
        d = X.shape[1]
        self.sampled_coefs_ = thetas[:, :d].copy()
        self.sampled_intercepts_ = (
            thetas[:, d].copy() if self.fit_intercept else np.zeros(thetas.shape[0])
        )
        self.coef_ = self.sampled_coefs_[0].copy()
        self.intercept_ = float(self.sampled_intercepts_[0])
        self.flow_diagnostics_ = out["diagnostics"]
        self.n_iter_ = len(out["history"])
        self.sensitivity_ = plan.sensitivity
        self.epsilon_per_sample_ = plan.epsilon_per_sample
        if self.keep_flow and out["flow"] is not None:
            self.flow_ = out["flow"]
        if out["diagnostics"] is not None and out["diagnostics"]["collapsed"]:
            # only with the diagnostics=True opt-in; no data-dependent value in the text
            warnings.warn(
                "ExpMFlow: the trained flow is collapsed or measurably far from the "
                "exponential-mechanism density (see flow_diagnostics_). The released model "
                "may be less noisy than the mechanism requires; increase n_iter or n_layers, "
                "use init='laplace', or treat the guarantee as void.",
                ConvergenceWarning,
                stacklevel=3,
            )

    def _decision(self, X):
        check_is_fitted(self, "coef_")
        X = validate_data(self, X, reset=False)
        return X @ self.coef_ + self.intercept_

    def sample_models(self, n_models=None):
        """Released parameter vectors: ``(coefs, intercepts)``.

        ``fit`` drew ``n_release_samples`` models, each at ``epsilon / n_release_samples``, and
        all of them are covered by ``epsilon_spent_`` (``coef_`` is the first). Asking for
        more requires ``keep_flow=True``: every extra model is another sample of the same
        mechanism and costs another ``epsilon / n_release_samples`` that ``epsilon_spent_``
        does **not** include, so a :class:`~skdp.exceptions.PrivacyLeakWarning` is emitted.

        Parameters
        ----------
        n_models : int, optional
            Number of models (default: the ``n_release_samples`` released at fit).

        Returns
        -------
        coefs : ndarray of shape (n_models, n_features)
        intercepts : ndarray of shape (n_models,)
        """
        check_is_fitted(self, "coef_")
        k = self.sampled_coefs_.shape[0]
        n = k if n_models is None else int(n_models)
        if n < 1:
            raise ValueError("n_models must be >= 1")
        if n <= k:
            return self.sampled_coefs_[:n].copy(), self.sampled_intercepts_[:n].copy()
        if not hasattr(self, "flow_"):
            raise ValueError(
                f"only {k} model(s) were released at fit; drawing more needs keep_flow=True "
                "(and each extra model costs another epsilon / n_release_samples)"
            )
        extra = n - k
        warnings.warn(
            f"ExpMFlow.sample_models: {extra} extra model(s) beyond the {k} released at fit; "
            f"each costs another epsilon={self.epsilon_per_sample_:g} (total extra "
            f"{extra * self.epsilon_per_sample_:g}), which epsilon_spent_ does not include.",
            PrivacyLeakWarning,
            stacklevel=2,
        )
        # fresh OS entropy: a seeded draw from a non-private flow would be a
        # deterministic function of the training data
        thetas = draw_from_flow(self.flow_, extra, make_rng(None))
        d = self.coef_.shape[0]
        ints = thetas[:, d] if self.fit_intercept else np.zeros(extra)
        return (
            np.vstack([self.sampled_coefs_, thetas[:, :d]]),
            np.concatenate([self.sampled_intercepts_, ints]),
        )


_COMMON_PARAMS_DOC = """
    alpha : float, default=1.0
        Regulariser strength, ``> 0``. ``u(theta) = -(sum_i l_i + alpha r(theta))``, so the
        regulariser is inside the utility and scaled by ``epsilon`` like the loss: the
        data-independent prior is ``pi ∝ exp(-epsilon alpha r)`` (``alpha = 0`` would make
        the target improper: McSherry & Talwar need a finite base measure). Scale features
        with *public* constants: the prior acts on the raw coefficients. The prior's rate
        (``epsilon alpha / (2 s)`` per released sample) must lie in ``[1e-12, 1e12]``;
        outside, the target overflows and ``fit`` raises ``ValueError``.
    penalty : {"l2", "l1"}, default="l2"
        ``r = ||theta||_2^2`` or ``||theta||_1`` over all coefficients and the intercept.
    fit_intercept : bool, default=True
    n_release_samples : int, default=1
        Number ``k`` of models released by ``fit``; each is sampled at ``epsilon / k``
        (exponent ``epsilon / (s k)``) so that the total stays ``epsilon``.
    n_layers : int, default=4
        Householder-Sylvester layers after the full-covariance affine layer (the
        name of :class:`~skdp.density.DPFlowDensity`'s layer count).
    n_flows : int
        Deprecated name of ``n_layers`` (``FutureWarning``; removed in 0.2).
    flow_rank : int, default=2
        Sylvester rank ``m``.
    n_householder : int, default=2
        Householder reflections per Sylvester layer.
    n_iter : int or None, default=None
        Reverse-KL optimizer (Adam) steps, a fixed count (no data-dependent stopping).
        ``None``: ``min(500, 100 + 10 D)`` for ``D = n_features + fit_intercept``
        parameters (160 steps at 5 features, 310 at 20), from public inputs only.
    batch_size : int, default=128
        Flow samples per step.
    data_batch_size : int or None, default=None
        ``None`` uses all rows each step; an integer ``b`` uses the unbiased estimate
        ``(n / b) * sum_batch l_i`` of the summed loss (cheaper steps, but the target's noise
        grows like ``(epsilon * n)^2 / b``: at large ``epsilon * n`` the flow can drift from
        its Laplace start; check ``flow_diagnostics_``). Diagnostics always use all rows.
    learning_rate : float, default=1e-2
        Adam's step size for the reverse-KL fit. A fit whose loss stops being finite (a
        step too large) raises ``ValueError`` asking for a smaller one.
    init : {"laplace", "prior"}, default="laplace"
        Start of the flow's affine layer: the Laplace approximation of the target (its mode
        and inverse Hessian; part of the sampler, it sees the same private data as the
        reverse-KL training) or the data-independent prior.
    keep_flow : bool, default=False
        Keep the trained flow as ``flow_`` (needed by :meth:`sample_models` beyond the
        released models). The flow is an un-noised function of the private data, so this
        is a non-private opt-in: :class:`~skdp.exceptions.PrivacyLeakWarning`,
        ``epsilon_spent_ = inf`` and ``privacy_guarantee_ = "none"``.
    diagnostics : bool, default=False
        Compute ``flow_diagnostics_`` (how well the flow fits the mechanism's density on
        this data set). They are un-noised functions of the private data (``log_z_estimate``
        alone tells a data set from its neighbour), so this is a non-private opt-in for
        the data curator: :class:`~skdp.exceptions.PrivacyLeakWarning`,
        ``epsilon_spent_ = inf`` and ``privacy_guarantee_ = "none"``. A collapsed flow then
        also triggers a :class:`~sklearn.exceptions.ConvergenceWarning`.
    n_diagnostic_samples : int, default=2048
        Flow samples used by ``flow_diagnostics_`` (two draws of this size).
    max_rows_per_group : int or None, default=None
        The public number of rows one patient may contribute when ``fit`` gets
        ``groups`` (from the visit schedule or the study protocol, never from the
        data): rows beyond it are dropped at random and the utility's sensitivity is
        that many times the row's, so ``epsilon`` is per patient (:doc:`/patients`;
        approximate, as every ExpMFlow guarantee). Required with ``groups``.
    device : {"auto", "cpu", "cuda"}, default="auto"
    dtype : {"float32", "float64"}, default="float32"
    {param_n_jobs_torch}
        ``batch_size`` flow samples times the rows per step times ``n_features + 1``,
        e.g. 10,000 rows of 10 features at the limit),
        {n_jobs_torch_end}
    verbose : int, default=0
        Show the reverse-KL training progress (steps only; the loss, an un-noised
        function of the training data, is not shown) on standard error: attaches a
        handler to the ``"skdp"`` logger for the duration of ``fit``.
    random_state : None, int or Generator, default=None
        Seeds the flow initialisation, training noise, diagnostics and the release draw.
        The seed must stay secret for a real release."""

_COMMON_ATTRS_DOC = """
    coef_ : ndarray of shape (n_features,)
        Released coefficients (first released model).
    intercept_ : float
        Released intercept (0 without ``fit_intercept``).
    sampled_coefs_ : ndarray of shape (n_release_samples, n_features)
    sampled_intercepts_ : ndarray of shape (n_release_samples,)
        All models released by ``fit`` (covered by ``epsilon_spent_``).
    sensitivity_ : float
        Sensitivity ``s`` of the summed loss in ``[0, 1]``-scaled units: 1 per row,
        ``k`` per patient (``groups``).
    {attr_patient_facts}
    epsilon_per_sample_ : float
        ``epsilon / n_release_samples``.
    epsilon_spent_ : float
        ``epsilon`` (nominal: see ``privacy_guarantee_``).
    delta_spent_ : float
        ``0.0``.
    privacy_guarantee_ : str
        ``"approximate"`` (flow sampling; ``"exact"`` with ``epsilon=inf``, non-private).
    flow_diagnostics_ : dict or None
        Fit of the flow ``q`` to the exact target ``p`` on the training data: ``elbo``,
        ``log_z_estimate``, ``kl_estimate`` (importance-sampling estimate of ``KL(q||p)``),
        ``kl_upper_bound`` (``log Z_prior - elbo``, a bound up to Monte-Carlo error),
        ``ess``/``ess_fraction`` (importance-weight effective sample size),
        ``utility_range`` ``R = epsilon n / k``, ``max_abs_log_ratio_to_prior``
        (``max |log q - log pi|`` over flow samples; exact ExpM has it ``<= R``),
        ``sandwich_violated`` (that max exceeds ``R``: ``q`` is certainly not the mechanism's
        density), ``dp_distance_lower_bound`` (``max(0, max - R)``, a lower bound on
        ``sup |log q - log p|`` on this dataset), ``collapsed`` (the max exceeds ``R`` by more
        than 1 nat, or the ESS fraction is below :data:`skdp.variational.MIN_ESS_FRACTION`;
        a :class:`~sklearn.exceptions.ConvergenceWarning` is emitted). These
        are un-noised functions of the private data for the data curator: do not publish
        them. ``None`` unless ``diagnostics=True``, and for ``epsilon=inf``.
    n_iter_ : int
        Reverse-KL steps run.
    loss_curve_ : ndarray of shape ``(n_iter_,)`` or ``(0,)``
        The reverse-KL loss per step, only for a fit that is not private anyway
        (``epsilon=inf`` or a non-private opt-in such as ``diagnostics=True``); empty
        otherwise: the losses are un-noised functions of the training data.
    privacy_breakdown_ : dict
        ``{"exponential_mechanism": epsilon}`` (plus ``"bounds"`` for a private estimate
        of ``bounds_y``); the values add up to ``epsilon_spent_``.
    flow_ : skdp.flows.Flow
        Only with ``keep_flow=True``.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features,)
        Only when ``X`` has string column names."""

_PRIVACY_NOTES = """
    **Privacy.** Exponential mechanism (McSherry and Talwar) over the parameters
    ``theta = (coef, intercept)`` with utility ``u = -(sum_i l_i + alpha r)``, ``l_i`` the
    squared error of a sigmoid-bounded output against a target in ``[0, 1]``, density
    ``∝ exp(epsilon u / (2 s k))`` for each of the ``k = n_release_samples`` released
    models. Neighbouring relation: add/remove one row (library default,
    :ref:`neighbouring-relation`) with ``n`` public; the sensitivity is ``s = 1`` (Bridges
    et al. Thm 3.1; :func:`skdp.mechanisms.sensitivity.expm_squared_loss_sensitivity`). With
    the factor 2 the release is ``epsilon``-DP under add/remove *and* under replace-one (a
    replaced row changes every ``u(theta)`` by at most ``s``), so the same guarantee holds
    under either relation. Under add/remove alone the utility is monotone (adding a row
    subtracts its loss in ``[0, 1]`` from every ``u(theta)``) and ``exp(epsilon u / s)``
    would already be ``epsilon``-DP (McSherry and Talwar 2007; Dwork and Roth 2014, remark
    after Thm 3.10); the engine offers it (``skdp.variational.ExpMLinearTarget(...,
    monotone=True)``) but the estimators keep the factor 2, as :doc:`/expm_flow_privacy`
    explains. No bound on the features is needed (the output is squashed).
    Accounting: basic composition of ``k`` pure-DP samples at ``epsilon / k``,
    ``epsilon_spent_ = epsilon``, ``delta_spent_ = 0``.

    **Patients.** With ``groups`` the neighbouring relation is add or remove one
    patient with all their rows (:doc:`/patients`). Each patient keeps at most ``k =
    max_rows_per_group`` rows, chosen uniformly at random inside the mechanism; a
    patient then changes every ``u(theta)`` by at most ``k`` (``k`` losses in ``[0,
    1]``), so the plan sets ``s = k`` and the density is ``∝ exp(epsilon u / (2 k
    n_release_samples))``: exact sampling would be ``epsilon``-DP per patient. The
    release is still sampled from a trained flow, so the per-patient guarantee is
    approximate exactly as the per-row one is (below). ``bounds_y`` must be declared
    (a private estimate per patient is not implemented).

    **The guarantee is approximate** (``privacy_guarantee_ = "approximate"``, an
    :class:`~skdp.exceptions.ApproximateGuaranteeWarning` at every fit). Exact sampling from
    the mechanism would be ``epsilon``-DP; the released model is instead sampled from a
    normalizing flow trained by reverse KL on the private data, and no proof covers that
    approximation (the paper claims none, Bridges et al. §1.2, §4.1): a flow more peaked than
    the target leaks more. ``flow_diagnostics_`` measures the fit on this dataset only (the
    guarantee would need it for every dataset). Also not covered: hyperparameters tuned
    on the private data, pickles of ``flow_``, extra models from :meth:`sample_models`, and
    the diagnostics themselves.

    **Floating point.** No release is exact in floating point: the flow is trained and
    sampled in floating point (torch), and a private bound estimate (the regressor's
    ``bounds_y=None``) draws sparse-vector Laplace noise in floating point; even an exact
    sampler would give the guarantee only for the mathematical mechanism (Mironov 2012)."""
