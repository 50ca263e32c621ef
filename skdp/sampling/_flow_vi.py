"""DPFlowVI: differentially private variational inference with normalizing flows (DP-NF-VI).

DP-NF-VI of Su, Wang, Schiavazzi & Liu (2023), Section 4 (Algorithm 2). The estimator
lives in :mod:`skdp.sampling`, has ``log_prob(theta)`` and
no ``score``/``score_samples``, uses no BatchNorm (``normalization="affine"`` replaces the
paper's BN), and trains the flow's sampling direction (``inverse_and_ladj``) with the shared
DP-SGD step of :mod:`skdp.training` (a :class:`~skdp.training.DPStep` built by
:func:`~skdp.training.make_dp_step`: Poisson batch, noise once, accountant), its own
per-record free-energy gradients giving the clipped sum.

The likelihood models live in :mod:`skdp.datasets`; the paper's divergence profiles (§4.3)
and its "Reg DP-VI" preset are benchmark helpers (``benchmarks/_flow_vi_paper.py``).
"""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator

from skdp.base import _DPSGD_SHARED, DPEstimatorMixin
from skdp.sampling._free_energy import mc_elbo
from skdp.sampling._vi_fit import plan_vi_fit, train_vi
from skdp.utils._docstrings import insert_docs
from skdp.utils._keyword_init import keyword_init
from skdp.utils._logging import get_logger, log_step_progress
from skdp.utils._random import fit_streams, make_rng
from skdp.utils._sklearn_compat import (
    Interval,
    StrOptions,
    _fit_context,
    check_is_fitted,
    validate_data,
)
from skdp.utils.validation import as_float_array, check_finite_release, check_n_samples

__all__ = ["DPFlowVI"]

_logger = get_logger(__name__)

_STREAMS = ["init", "sampling", "noise", "mc", "groups"]
_DIVERGED = (
    "the variational flow diverged (its parameters are not finite): lower learning_rate, or "
    "use dtype='float64'"
)


# --------------------------------------------------------------------- estimator
@insert_docs
class DPFlowVI(DPEstimatorMixin, BaseEstimator):
    """Differentially private variational inference with a normalizing flow (DP-NF-VI).

    The variational posterior ``q(theta)`` is a normalizing flow ``theta = F(z0)``,
    ``z0 ~ N(0, I)``, fitted by minimising the free energy (negative ELBO)
    ``E_q[log q(theta) - log p(theta) - sum_i log p(x_i | theta)]`` with DP-SGD. The free
    energy is split into one term per record (paper Eq. (4), with the prior also weighted by
    ``1/n``):

    ``l_i = E_z[(1/n)(log q0(z) - log|det dtheta/dz| - log p(theta)) - log p(x_i | theta)]``,

    estimated with ``n_mc`` draws of ``z`` shared by the records of a step, so each record's
    gradient can be clipped and the sum noised (paper Algorithm 2).

    Parameters
    ----------
    log_lik : callable or None, default=None
        ``log_lik(theta, X) -> Tensor (m, b)``: ``log p(x_i | theta_j)`` for parameter draws
        ``theta`` of shape ``(m, n_params)`` and records ``X`` of shape ``(b, n_features)``
        (torch tensors). It must treat every record separately (no cross-record sums), be
        differentiable in ``theta``, and work under ``torch.func.vmap`` (no ``.item()``, no
        data-dependent Python control flow). Its constants (noise scales, ...) must be
        public, never estimated from the private data. ``None``: the Gaussian location
        model :class:`skdp.datasets.GaussianLocationLogLik` ``x_i ~ N(theta, I)``.
    log_prior : callable or None, default=None
        ``log_prior(theta) -> Tensor (m,)``; ``None`` is a flat (improper) prior.
    n_params : int or None, default=None
        Dimension of ``theta``. Required with a custom ``log_lik``; with the default it is
        the number of features.
    epsilon : float, default=1.0
        Total privacy budget of one ``fit`` (``math.inf``: ordinary, non-private VI).
    delta : float, default=1e-5
    noise_multiplier : float or None, default=None
        ``sigma``; ``None`` calibrates the smallest one meeting the budget. A given value
        whose epsilon exceeds the budget raises ``ValueError`` before training.
    max_grad_norm : float, default=10.0
        Per-record clipping norm ``C`` (flat L2 norm over all flow parameters). The noise
        scales with ``C``: choose it from the public scale of one record's gradient,
        which depends on ``log_lik``. For a logistic likelihood with features in
        ``[-1, 1]``, ``C = 1`` reached non-private test AUC at n = 2,000 and d = 10 where
        the default 10 lost 0.04 (``benchmarks/flow_vi_logistic.py``).
    batch_size : int, default=256
        Expected number of records per step; Poisson rate ``q = min(1, batch_size / n)``.
    n_iter : int or None, default=None
        Optimizer steps, all accounted: a fixed count (no data-dependent stopping).
        ``None``: ``min(800, max(200, ceil(10 n / batch_size)))`` from the public ``n``
        and ``batch_size`` (about 10 expected passes over the data, at least 200 and at
        most 800 steps), which keeps a default fit under a minute on one CPU core for
        ``n <= 10,000`` and up to 21 parameters (``benchmarks/flow_vi_logistic.py``).
    n_mc : int or None, default=None
        Monte Carlo draws ``m`` of ``z0`` per step (shared by the step's records).
        ``None``: 16 for a private fit, 100 for ``epsilon=inf``, a public rule. A private
        step's cost is about linear in ``m`` (the per-record chain rule) and its gradient
        noise is dominated by the DP noise: on Bayesian logistic regressions (d = 5, 10,
        20; epsilon 0.3, 1, 3; clipping norm 10, and 1 at d <= 10) ``m`` from 4 to 100 gave the
        same test AUC, log loss and posterior calibration against the exact posterior's
        Laplace approximation within seed noise, and ``m=16`` took 0.3-0.8 of the time of
        ``m=100`` (``benchmarks/flow_vi_logistic.py --n-mc``, :ref:`flow-vi-n-mc`). A
        non-private step costs about the same at any ``m`` (no per-record gradients),
        and the draws are then its only noise besides the batch sampling: on a conjugate
        Gaussian model trained to convergence ``m=100`` kept the posterior sds within
        about 3 % where ``m=16`` kept them within about 6 %, hence 100 there.
    flow : {"iaf", "maf", "realnvp", "planar"}, default="iaf"
        Flow family. ``"iaf"`` samples in one parallel pass (the paper's VI flow);
        :meth:`log_prob` is then sequential.
    n_layers : int, default=1
        Flow layers (the paper's "Reg DP-VI": 1 MADE block).
    hidden_size : int or None, default=None
        Width of each conditioner's hidden layer; ``None`` gives ``max(10, n_params)``.
    normalization : {"affine", "none"}, default="affine"
        ``"affine"`` ends the sampling direction with a learnable elementwise location-scale
        map ``theta = loc + exp(log_scale) * F(z)`` (identity initialisation, never
        data-driven); it replaces the paper's BatchNorm (which mixes records) and lets the
        flow reach posterior locations and scales far from those of ``N(0, I)``. A
        non-private fit (``epsilon=inf``) starts it at the public scale ``1/sqrt(n)`` and
        adds a unit lower-triangular map, ``theta = loc + exp(log_scale) * (I + M) F(z)``,
        so that this part is a full-covariance Gaussian (see Notes, "Non-private fits").
    optimizer : {"rmsprop", "adam", "sgd"}, default="rmsprop"
    learning_rate : float, default=0.01
        In a non-private fit with ``normalization="affine"`` the flow's conditioners use
        this rate and the Gaussian part ``min(30 * learning_rate, 0.3)``, on a schedule
        (see Notes).
    learning_rate_decay : float, default=1.0
        Per-step exponential learning-rate decay (the paper uses 0.999 over 8000 steps).
        A non-private fit with ``normalization="affine"`` also lowers its rates along a
        cosine to ``min(0.1, 50 / n)`` of their start over the run (see Notes).
    privatize : {"per_record_full", "likelihood_only"}, default="per_record_full"
        ``"per_record_full"``: each record's gradient of its whole term ``l_i`` is clipped
        and noised (the paper's Algorithm 2). ``"likelihood_only"``: only the likelihood
        part is clipped and noised; the exact gradient of the data-free part (entropy and
        prior, weight ``1/n``) is added afterwards (same privacy: post-processing, since
        that part does not touch the data).
    {param_max_rows_per_group_dpsgd}
    {param_accountant_dpsgd}
    device : {"auto", "cpu", "cuda"} or "cuda:N", default="auto"
        ``"auto"`` uses CUDA when available.
    dtype : {"float32", "float64"}, default="float32"
    {param_n_jobs_torch}
        the expected batch size times the number of flow parameters plus ``n_mc``
        likelihood terms per record, ``B (n_flow_params + n_mc n_params)``),
        {n_jobs_torch_end}
    verbose : int, default=0
        Print the step and the epsilon spent so far (and the loss when ``epsilon=inf``).
    random_state : None, int, SeedSequence or Generator, default=None
        Seeds the flow initialisation, Poisson sampling, DP noise, MC draws and
        :meth:`sample`. Keep it secret for a real release.

    Attributes
    ----------
    n_features_in_ : int
    n_params_ : int
        Dimension of ``theta``.
    flow_ : skdp.flows.Flow
        The fitted variational flow (sampling direction ``inverse``), in eval mode.
    device_ : str
    noise_multiplier_ : float
        ``sigma`` used (0 for a non-private fit).
    sample_rate_ : float
    n_iter_ : int
        Executed (and accounted) steps.
    n_mc_ : int
        Monte Carlo draws per step used (``n_mc``, or its default rule's value).
    epsilon_spent_, delta_spent_ : float
    privacy_breakdown_ : dict
        ``{"dpsgd": epsilon}``: all of ``epsilon_spent_`` goes to the DP-SGD steps.
    privacy_guarantee_ : {"exact", "approximate"}
    mu_gdp_ : float
        The paper's CLT mu-GDP of the run (informational only; ``inf`` if non-private).
    history_ : dict
        ``"step"`` and ``"epsilon"`` at the logged steps; no quantity of the data.
    privacy_unit_ : {"row", "group"}
        What ``epsilon_spent_`` protects: one record (row), or one patient (``groups``).
    max_rows_per_group_ : int or None
        The contribution bound of a patient-level fit (``None`` per row).
    loss_curve_ : ndarray of shape ``(n_iter_,)`` or ``(0,)``
        The loss (negative ELBO, i.e. the free energy) of every step, estimated on that
        step's batch and MC draws (``(n / B) sum_batch l_i`` plus the data-free term), for
        ``epsilon=inf`` only; empty for a private fit (it would be an un-noised statistic
        of the data).
    elbo_ : float
        MC estimate of the ELBO on the training data after the last step, for
        ``epsilon=inf`` only; ``nan`` for a private fit (use :meth:`elbo` on data whose
        ELBO may be released).

    Notes
    -----
    **Privacy.** Neighbouring datasets differ by adding or removing one record (one privacy
    unit: for repeated measures, one subject with all its rows); ``n`` is treated as public,
    since the per-record terms carry ``1/n`` weights (:ref:`neighbouring-relation`).
    Mechanism: ``n_iter`` steps of the Poisson-subsampled Gaussian mechanism: each sampled
    record's gradient of its own term ``l_i`` (with ``privatize="likelihood_only"``: of its
    likelihood part) is clipped to L2 norm ``max_grad_norm`` -- the L2 sensitivity of the
    summed gradient under add/remove -- ``N(0, sigma^2 C^2 I)`` is added once to the sum and
    the result is divided by the expected batch size ``q n``. The MC draws ``z0``, the
    entropy and prior terms are independent of the data (their exact gradient may be added
    by post-processing). ``n_mc`` does not enter the sensitivity: a record's term is
    averaged over the step's draws before its gradient is clipped, so the clipped gradient
    has norm at most ``max_grad_norm`` whatever ``n_mc`` is. The flow has no BatchNorm or
    other cross-record layer, and ``log_lik`` must not mix records. Accountant (default
    ``"pld"``): the privacy loss distribution of the subsampled Gaussian composed
    numerically, reported as the minimum with the RDP bound (both proven bounds,
    ``"exact"``); ``"gdp_clt"`` is the paper's CLT approximation (``"approximate"``).
    What is released: the flow's parameters, hence :meth:`sample` and :meth:`log_prob`
    (post-processing). The fitted object keeps no un-noised statistic of the data (no
    training loss or ELBO of a private fit, no realised batch sizes). :meth:`elbo` evaluates
    whatever data it is given; calling it on the private data and publishing the value is a
    further release that is not covered by ``epsilon``.

    **Patients.** With ``groups`` the neighbouring relation is add or remove one patient
    with all their rows (``n`` counts patients and is public). Each patient keeps at most
    ``k = max_rows_per_group`` rows, chosen uniformly at random inside the mechanism; a
    patient's record is the sum of their rows' likelihood terms (the likelihood of all
    their kept rows, so the target stays the posterior given those rows) plus, with
    ``"per_record_full"``, the ``1/n`` data-free share. Each step Poisson-samples patients
    at ``q = batch_size / n``, clips each sampled patient's gradient to
    ``max_grad_norm`` as one vector (sensitivity ``max_grad_norm`` per patient), adds the
    noise once and divides by ``q n``; ``epsilon_spent_`` holds per patient
    (``privacy_unit_ = "group"``; :mod:`skdp.training._patients`).

    **Non-private fits** (:ref:`flow-vi-gaussian-start`). With ``epsilon=inf`` (and
    ``normalization="affine"``) the fit starts from a Gaussian: the affine layer at
    ``N(0, I / n)`` (the ``1/sqrt(n)`` contraction rate of a regular posterior with ``n``
    records, a public function of ``n``) followed by a unit lower-triangular map (a full
    covariance). For the first half of the steps only this Gaussian part trains, at
    ``min(30 * learning_rate, 0.3)`` after a linear ramp over the first tenth; then the
    whole flow. The rates follow a cosine down to ``min(0.1, 50 / n)`` of their start.
    Without it RMSprop moved each parameter by about ``learning_rate`` per step, so in the
    200 default steps the log-scale travelled about 2 of the ``log(sqrt(n))`` it needs
    (3.8 at ``n = 2,000``) while the conditioner took over the location: a flat-prior
    Gaussian location model at ``n = 2,000`` got posterior SDs 5-7 times the exact
    ``1/sqrt(n)``. With it they are within 16 % (most within 5 %) at ``n`` from 20 to
    100,000 and ``d`` up to 10 for every ``flow`` and ``optimizer``, the means within 3
    posterior SDs, and Bayesian logistic regressions match the Laplace approximation of
    their posterior. Limits: at correlation 0.9 the SDs came out 0.74-0.94 of the exact
    ones; the location travels about 30 units in 200 steps, so a posterior mean far from 0
    needs more ``n_iter`` (or a parametrisation centred by public knowledge). A private fit
    keeps the identity start, one learning rate and ``learning_rate_decay`` alone: with
    the Gaussian start the DP noise drove its log-scales down, an over-confident release.

    **Floating point.** No release is exact in floating point: the DP-SGD Gaussian noise
    (torch) and Poisson sampling are drawn in floating point; the guarantee is for the
    mathematical mechanism (Mironov 2012).

    **Accuracy.** Clipping and noise inflate the variational variances; with the free
    energy (KL(q||p)) as loss the inflated optimum also distorts the correlations (paper
    §4.2-4.3). The paper's alternative losses (the
    reverse KL, l1 and Wasserstein distances) need the target posterior's samples or
    normalised density and do not split into per-record terms, so they cannot be trained
    with DP-SGD here.

    References
    ----------
    .. [1] B. Su, Y. Wang, D. E. Schiavazzi, F. Liu, "Differentially Private Normalizing Flows
       for Density Estimation, Data Synthesis, and Variational Inference with Application
       to Electronic Health Records", 2023 (Sections 4.1-4.3, Algorithm 2).
    .. [2] D. Rezende, S. Mohamed, "Variational Inference with Normalizing Flows", ICML 2015.
    .. [3] M. Abadi et al., "Deep Learning with Differential Privacy", CCS 2016.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.sampling import DPFlowVI
    >>> X = np.random.default_rng(0).normal(loc=1.0, size=(200, 2))
    >>> vi = DPFlowVI(epsilon=5.0, n_iter=100, n_mc=16, batch_size=50, learning_rate=0.05,
    ...               device="cpu", random_state=0).fit(X)
    >>> vi.epsilon_spent_ <= 5.0
    True
    >>> theta = vi.sample(4)
    >>> theta.shape, vi.log_prob(theta).shape
    ((4, 2), (4,))
    """

    _parameter_constraints: dict = {
        **DPEstimatorMixin._privacy_parameter_constraints,
        "log_lik": [None, callable],
        "log_prior": [None, callable],
        "n_params": [None, Interval(Integral, 1, None, closed="left")],
        "noise_multiplier": [None, Interval(Real, 0, None, closed="neither")],
        "max_grad_norm": [Interval(Real, 0, None, closed="neither")],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "n_iter": [None, Interval(Integral, 1, None, closed="left")],
        "n_mc": [None, Interval(Integral, 1, None, closed="left")],
        "flow": [StrOptions({"iaf", "maf", "realnvp", "planar"})],
        "n_layers": [Interval(Integral, 1, None, closed="left")],
        "hidden_size": [None, Interval(Integral, 1, None, closed="left")],
        "normalization": [StrOptions({"affine", "none"})],
        "optimizer": [StrOptions({"rmsprop", "adam", "sgd"})],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "learning_rate_decay": [Interval(Real, 0, 1, closed="right")],
        "privatize": [StrOptions({"per_record_full", "likelihood_only"})],
        "max_rows_per_group": [None, Interval(Integral, 1, None, closed="left")],
        **DPEstimatorMixin._common_constraints(*_DPSGD_SHARED),
    }

    __init__ = keyword_init(
        [
            ("log_lik", None),
            ("log_prior", None),
            ("n_params", None),
            ("epsilon", 1.0),
            ("delta", 1e-5),
            ("noise_multiplier", None),
            ("max_grad_norm", 10.0),
            ("batch_size", 256),
            ("n_iter", None),
            ("n_mc", None),
            ("flow", "iaf"),
            ("n_layers", 1),
            ("hidden_size", None),
            ("normalization", "affine"),
            ("optimizer", "rmsprop"),
            ("learning_rate", 0.01),
            ("learning_rate_decay", 1.0),
            ("privatize", "per_record_full"),
            ("max_rows_per_group", None),
            *DPEstimatorMixin._common_params(*_DPSGD_SHARED),
        ],
        qualname="DPFlowVI.__init__",
    )

    # ----------------------------------------------------------------- helpers
    def _resolve_model(self, n_features):
        if self.log_lik is None:
            if self.n_params is not None and self.n_params != n_features:
                raise ValueError(
                    f"the default log_lik (Gaussian location model) has n_params = "
                    f"n_features = {n_features}; got n_params={self.n_params}"
                )
            from skdp.datasets import GaussianLocationLogLik

            return GaussianLocationLogLik(), n_features
        if self.n_params is None:
            raise ValueError("n_params is required with a custom log_lik")
        return self.log_lik, int(self.n_params)

    # ---------------------------------------------------------------------- fit
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, *, groups=None):
        """Fit the variational flow with DP-SGD on the free energy.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            One row per privacy unit; passed to ``log_lik`` as a torch tensor. NaN/inf
            raise ``ValueError``.
        y : None
            Ignored.
        groups : array-like of shape (n_samples,), default=None
            The patient of each row, as in scikit-learn's ``GroupKFold``: the guarantee
            is then per patient (each keeps at most ``max_rows_per_group`` rows, chosen
            at random; a patient's likelihood is the sum over their rows; Notes).

        Returns
        -------
        self
        """
        from skdp.training import RecordGroups
        from skdp.training._fit_context import check_noise_multiplier, freeze, torch_fit
        from skdp.utils._groups import bound_contributions, patient_codes

        check_noise_multiplier(self.epsilon, self.noise_multiplier)
        X = validate_data(self, X, reset=True, dtype="numeric")
        n, d = X.shape
        codes, k = patient_codes(self, groups, n)
        n = n if codes is None else int(codes.max()) + 1  # records, or patients
        log_lik, p = self._resolve_model(d)
        epsilon, delta = self._check_privacy_params(
            n_samples=n, require_delta=math.isfinite(self.epsilon)
        )
        plan = plan_vi_fit(self, n, p, epsilon, delta, max_rows_per_group=k)
        streams = fit_streams(self.random_state, _STREAMS, estimator=self, X=X, groups=codes)
        units = None
        if codes is not None:  # at most k rows per patient, chosen at random
            keep = bound_contributions(codes, k, streams["groups"])
            X, units = X[keep], RecordGroups(codes[keep], k)
        with torch_fit(self, streams) as env:
            run = train_vi(self, env, plan, X, log_lik, groups=units)
        freeze(run.flow, diverged=_DIVERGED)
        self._record(plan, run, log_lik, env.device)
        return self

    def _record(self, plan, run, log_lik, device):
        """The fitted attributes, the DP-SGD facts and the spend (``record_dpsgd_fit``)."""
        from skdp.accounting import gdp_clt_mu
        from skdp.training._fit_context import record_dpsgd_fit

        private, q, sigma, T = plan.private, plan.sample_rate, plan.noise_multiplier, plan.n_iter
        self.n_params_ = plan.n_params
        self.flow_ = run.flow
        self._log_lik = log_lik
        self.n_mc_ = plan.n_mc
        self.elbo_ = float(run.elbo)
        mu = gdp_clt_mu(noise_multiplier=sigma, sample_rate=q, steps=T) if private else math.inf
        self.mu_gdp_ = float(mu)  # the paper's CLT mu-GDP, informational
        self.privacy_unit_ = plan.privacy_unit
        self.max_rows_per_group_ = plan.max_rows_per_group
        accountant = run.step.accountant
        record_dpsgd_fit(
            self,
            noise_multiplier=sigma,
            sample_rate=q,
            n_iter=run.step.n_steps,
            history=run.history,
            loss_curve=run.loss_curve,  # kept for epsilon=inf only
            device=device,
            breakdown={"dpsgd": float(accountant.get_epsilon(plan.delta)) if private else math.inf},
            delta=plan.delta,
            guarantee=accountant.guarantee if private else "exact",
            private=private,
        )

    #: Per-record gradient path (tests switch it; "auto" picks the per-row Jacobian when small).
    _grad_method = "auto"

    def _elbo(self, flow, log_lik, X, m, gen, tdtype):
        return mc_elbo(flow, log_lik, self.log_prior, X, m, gen, tdtype)

    def _progress(self, step, total, history, loss_curve, private):
        # the loss (negative ELBO on a batch) is logged for epsilon=inf only
        log_step_progress(
            _logger,
            estimator="DPFlowVI",
            step=step,
            total=total,
            epsilons=history["epsilon"],
            losses=loss_curve,
            private=private,
        )

    # ---------------------------------------------------------------- outputs
    def _param_tensor(self):
        return next(self.flow_.parameters())

    def sample(self, n_samples=1, *, random_state=None):
        """Draw parameter vectors from the variational posterior (post-processing).

        Parameters
        ----------
        n_samples : int, default=1
        random_state : None, int, SeedSequence or Generator, default=None
            ``None`` continues the stream spawned at ``fit``; a value makes the draw
            reproducible on its own.

        Returns
        -------
        ndarray of shape (n_samples, n_params)
        """
        import torch

        from skdp.utils._torch import to_numpy, to_tensor

        check_is_fitted(self)
        n_samples = check_n_samples(n_samples, self.n_params_)
        rng = make_rng(random_state)
        z = rng.standard_normal((n_samples, self.n_params_))
        ref = self._param_tensor()
        with torch.no_grad():
            theta = to_numpy(self.flow_.inverse(to_tensor(z, device=ref.device, dtype=ref.dtype)))
        check_finite_release(
            theta,
            what="the posterior samples",
            fix="the flow's transform is too steep for its dtype; refit with a lower "
            "learning_rate or dtype='float64'",
        )
        return theta

    def log_prob(self, theta):
        """Log-density of the variational posterior at parameter vectors ``theta``.

        Parameters
        ----------
        theta : array-like of shape (n, n_params)

        Returns
        -------
        ndarray of shape (n,)
        """
        import torch

        from skdp.utils._torch import to_numpy, to_tensor

        check_is_fitted(self)
        theta = as_float_array(theta, name="theta")
        if theta.ndim != 2 or theta.shape[1] != self.n_params_:
            raise ValueError(f"theta must have shape (n, {self.n_params_}), got {theta.shape}")
        if not np.all(np.isfinite(theta)):
            raise ValueError("theta contains NaN or infinity")
        ref = self._param_tensor()
        with torch.no_grad():
            lp = self.flow_.log_prob(to_tensor(theta, device=ref.device, dtype=ref.dtype))
        return to_numpy(lp)

    def elbo(self, X, n_mc=1000, random_state=None):
        """Monte Carlo estimate of the ELBO ``E_q[log p(theta) + sum_i log p(x_i|theta)
        - log q(theta)]`` on ``X``.

        This reads ``X`` without privacy: publishing the ELBO of the private training
        data is a release not covered by ``epsilon``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        n_mc : int, default=1000
            Draws from ``q``.
        random_state : None, int, SeedSequence or Generator, default=None

        Returns
        -------
        float
        """
        from skdp.utils._torch import to_tensor, torch_generator

        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype="numeric")
        if isinstance(n_mc, bool) or not isinstance(n_mc, Integral) or n_mc < 1:
            raise ValueError(f"n_mc must be a positive integer, got {n_mc!r}")
        ref = self._param_tensor()
        gen = torch_generator(make_rng(random_state), ref.device)
        Xt = to_tensor(X, device=ref.device, dtype=ref.dtype)
        return self._elbo(self.flow_, self._log_lik, Xt, int(n_mc), gen, ref.dtype)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        tags.non_deterministic = False
        return tags
