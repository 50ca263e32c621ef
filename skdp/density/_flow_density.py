"""DPFlowDensity: a normalizing flow trained with DP-SGD, for density estimation and data synthesis.

DP-NF density estimation of Su, Wang, Schiavazzi & Liu (2023), Section 3, with the changes
listed in the class Notes (Poisson sampling, division by the expected batch size, PLD
accounting, no BatchNorm, declared or privately estimated bounds).
"""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, DensityMixin

from skdp.base import _DPSGD_SHARED, DPEstimatorMixin
from skdp.density._flow_fit import (
    NUMERIC_RANGE,
    bound_patients,
    dequantiser,
    flow_patient_codes,
)
from skdp.mechanisms._bounds import BOUNDS_FRACTION
from skdp.mechanisms._front_end import TabularFrontEnd
from skdp.utils._docstrings import insert_docs
from skdp.utils._keyword_init import keyword_init
from skdp.utils._logging import get_logger, log_step_progress
from skdp.utils._random import fit_streams, make_rng
from skdp.utils._sklearn_compat import (
    Interval,
    StrOptions,
    _fit_context,
    check_is_fitted,
)
from skdp.utils._tabular.constraints import tabular_constraints, tabular_params
from skdp.utils.validation import check_n_samples

__all__ = ["DPFlowDensity"]

_logger = get_logger(__name__)

#: Expected passes over the data of the default step count (``n_iter=None``).
FLOW_EPOCHS = 30
_STREAMS = ["bounds", "init", "training", "dequant", "groups", "base"]


@insert_docs
class DPFlowDensity(TabularFrontEnd, DPEstimatorMixin, DensityMixin, BaseEstimator):
    """Differentially private normalizing-flow density estimator and synthesizer.

    A masked autoregressive flow (MAF) or RealNVP is fitted by maximum likelihood with
    DP-SGD (Poisson sampling, per-sample gradient clipping, Gaussian noise once per step on
    the sum, division by the expected batch size). By default (``base="copula"``) it sits
    on a private Gaussian copula: two fixed layers released first from noisy sufficient
    statistics (per-column histograms that Gaussianise the marginals, then a noisy
    correlation that whitens them), so the flow starts as a DP Gaussian copula and DP-SGD
    learns only the residual structure. The fitted flow gives log-densities in
    the original units (:meth:`score_samples`) and synthetic records (:meth:`sample`) of the
    input's type: a DataFrame in gives a DataFrame out with the same columns and dtypes.

    Parameters
    ----------
    epsilon : float, default=1.0
        Total privacy budget of one ``fit``, including the private bounds estimate when
        ``bounds=None``. ``math.inf`` gives ordinary (non-private) maximum likelihood.
    delta : float, default=1e-5
        Total delta: all to DP-SGD with ``base="none"``; half to the copula base and half
        to DP-SGD by default (all to the base with ``n_layers=0``). Keep it well below
        ``1 / n_samples``.
    bounds : None, "private", "data", (lo, hi) or dict {column: (lo, hi)}, default=None
        Public bounds of the numeric columns; values outside are clipped (silently).
        ``None``: a private estimate spending ``0.1 * epsilon`` (pure DP,
        :func:`skdp.mechanisms.resolve_bounds`); a dict may give some columns and leave
        the rest to that estimate. The estimate is made
        {param_bounds_estimate}
    categories : None, dict {column: list} or list of lists, default=None
        Declared levels of the categorical columns (pandas ``Categorical`` columns carry
        their own). Missing categories raise ``ValueError``; ``"data"`` reads them off the
        data with a :class:`~skdp.exceptions.PrivacyLeakWarning`.
    {param_column_types}
    schema : TabularSchema or dict, default=None
        A complete public schema (:class:`skdp.utils.schema.TabularSchema`, or its
        :meth:`~skdp.utils.schema.TabularSchema.to_dict` form) instead of
        ``bounds``/``categories``/``column_types``; passing both raises ``ValueError``.
        Numeric columns it leaves without bounds are estimated privately, as with
        ``bounds=None``.
        {param_schema_data_derived}
    flow : {"maf", "realnvp"}, default="maf"
        Flow family (:func:`skdp.flows.make_flow`).
    base : {"copula", "none"}, default="copula"
        ``"copula"``: the private Gaussian-copula layers (Notes) in front of the flow,
        spending 30 % of the budget left after the bounds estimate (all of it with
        ``n_layers=0``); with trainable layers it falls back to ``"none"`` where the
        histogram noise SD would exceed 0.3 times the mean count per bin, or the
        correlation noise SD 0.1 times ``n`` (a public rule of
        ``n``, ``d``, ``epsilon``, ``delta``; small tables at small budgets, where the
        noisy marginals were worse than none). ``"none"``: the seed paper's ``N(0, I)``
        base on the scaled columns, the whole budget to DP-SGD; with the other defaults
        this is the paper's setting (Su et al. 2023, Section 3), kept for reproducing
        its experiment.
    n_layers : int, default=5
        Number of trainable flow layers (MADE blocks or coupling layers). ``0`` (only
        with ``base="copula"``): no DP-SGD; the model is the DP Gaussian copula.
    hidden_size : int or None, default=None
        Width of the single hidden layer of each conditioner; ``None`` gives
        ``max(64, n_encoded_features)``. A MAF needs at least ``n_encoded_features - 1``.
    max_grad_norm : float, default=1.0
        Per-sample clipping norm ``C`` (flat L2 norm over all parameters).
    noise_multiplier : float or None, default=None
        ``sigma``; ``None`` calibrates the smallest one that meets the budget. A given value
        whose epsilon exceeds the budget raises ``ValueError`` before training.
    batch_size : int or None, default=None
        Expected batch size; the Poisson sampling rate is ``q = min(1, batch_size / n)``.
        ``None``: about ``sqrt(8 n)``, a power of two between 64 and 1024 (at most ``n``):
        64 for ``n <= 724``, 128 at ``n = 2,000``, 256 at ``n = 9,000``.
    n_iter : int or None, default=None
        Number of optimizer (DP-SGD) steps, all accounted. ``None``: a rule on public
        quantities only (``n``, the batch size and the flow's parameter count ``P``):
        ``T = max(100, min(ceil(30 / q), 2**32 / (batch_size * P)))``, i.e. 30 expected
        passes over the data, within about half a minute of per-record gradients on one
        core. ``T`` does not depend on ``epsilon``; the noise multiplier is calibrated
        to it and falls as the budget grows, so more budget does not make the default
        fit worse (tested on simulated data over a grid of ``n`` and ``epsilon``). A cap
        on the noise multiplier (fewer steps at a small budget) made the held-out
        log-likelihood worse in every measured case, so there is none. ``n_iter_`` holds
        the count used.
    {param_max_rows_per_group_dpsgd}
    learning_rate : float or None, default=None
        Adam learning rate. ``None``: ``3e-4`` with ``base="copula"`` (the flow only
        corrects a fitted base; at ``1e-3`` DP-SGD noise sometimes pulled it below its
        own starting point at ``epsilon = 1``), ``1e-3`` (the paper's) with
        ``base="none"``. A fit that diverges (non-finite parameters, or a flow that
        keeps producing non-finite samples) raises ``ValueError`` asking for a smaller one.
    {param_accountant_dpsgd}
    device : {"auto", "cpu", "cuda"}, default="auto"
        ``"auto"`` uses CUDA when available.
    dtype : {"float32", "float64"}, default="float32"
    {param_n_jobs_torch}
        the expected batch size times the number of flow parameters, which covers the
        default flow on tables of up to about 60 encoded features),
        {n_jobs_torch_end}
    verbose : int, default=0
        Show progress on standard error (step, epsilon spent so far; the training loss
        only when ``epsilon=inf``): attaches a handler to the ``"skdp"`` logger for the
        duration of ``fit`` (see :mod:`logging`; the records are logged either way).
    random_state : None, int, SeedSequence or Generator, default=None
        Seeds every random stream (bounds estimate, initialisation, sampling, noise,
        dequantisation, synthetic samples). Keep it secret for real releases: anyone
        holding it can regenerate and subtract the noise.

    Attributes
    ----------
    {attr_features_in}
    schema_ : skdp.utils.schema.TabularSchema
        Public description of the columns (with the bounds used).
    {attr_bounds_tabular}
    n_encoded_features_ : int
        Dimension the flow works in (one-hot blocks expanded).
    flow_ : skdp.flows.Flow
        The fitted flow, in ``eval`` mode, on ``device_``.
    device_ : str
    noise_multiplier_ : float
        ``sigma`` used (0 for a non-private fit).
    sample_rate_ : float
        Poisson sampling rate ``q``.
    n_iter_ : int
        Executed (and accounted) DP-SGD steps.
    epsilon_spent_, delta_spent_ : float
        Total spend of the fit (bounds estimate + DP-SGD); ``inf`` when ``epsilon=inf``.
    privacy_breakdown_ : dict
        ``{"bounds", "marginals", "correlation", "dpsgd"}`` epsilons (``{"bounds",
        "dpsgd"}`` with ``base="none"``; basic composition: they add up).
    privacy_guarantee_ : {"exact", "approximate"}
    history_ : dict
        ``"step"`` and ``"epsilon"`` (DP-SGD epsilon spent so far) at the logged steps: no
        quantity computed from the training data.
    privacy_unit_ : {"row", "group"}
        What ``epsilon_spent_`` protects: one row, or one patient (``groups``).
    max_rows_per_group_ : int or None
        The contribution bound of a patient-level fit (``None`` per row).
    loss_curve_ : ndarray
        Mean training negative log-likelihood (encoded space) at the logged steps, for
        ``epsilon=inf`` only; empty for a private fit, whose real-data loss is never
        recorded.

    Notes
    -----
    **Privacy.** Neighbouring datasets differ by adding or removing one row; ``n`` is
    treated as public. Mechanism: ``n_iter`` steps of the Poisson-subsampled Gaussian
    mechanism (DP-SGD): each record's gradient of its own negative log-likelihood is clipped
    to L2 norm ``max_grad_norm`` (the L2 sensitivity of the summed gradient under
    add/remove), ``N(0, sigma^2 C^2 I)`` is added once to the sum, and the result is
    divided by the expected batch size ``q n``. The flow has no BatchNorm or other
    cross-record layer. Accountant (default ``"pld"``): the privacy loss distribution of the
    subsampled Gaussian composed numerically (pessimistic discretisation, both neighbouring
    directions), reported as the minimum with the RDP bound (exact integer and fractional
    orders, improved conversion); both are proven bounds (``"exact"``); ``"gdp_clt"`` is
    approximate. With ``bounds=None`` the missing numeric bounds are estimated with a
    pure-DP mechanism at ``0.1 * epsilon`` and DP-SGD is calibrated to the rest; the two
    spends add up (sequential composition). Every preprocessing step (clipping to bounds,
    affine scaling, one-hot encoding with declared categories, dequantisation noise from its
    own stream, drawn outside ``vmap``) is a per-record map with public constants and costs
    nothing. Sampling is post-processing. The fitted object stores no un-noised statistic of
    the data: no training loss of a private fit, no realised batch sizes.

    **Copula base** (``base="copula"``). Before DP-SGD, two Gaussian mechanisms (analytic
    calibration, Balle & Wang 2018) release the fixed layers from the encoded rows
    (numeric columns scaled onto ``[-2, 2]``, integers dequantised once from their own
    stream): (1) one histogram per numeric column on a public grid of ``[-2, 2]``
    (``B`` bins, a power of two near ``sqrt(n) / 3`` between 8 and 64), L2 sensitivity
    ``sqrt(d_num)`` (one count per column); the noisy counts, floored at 0, normalised and
    mixed with 5 % of the uniform, give a piecewise-linear CDF ``F`` and the map
    ``g = Phi^{-1}(u0 + (1 - 2 u0) F(x))`` (``u0 = 10^-3``, linear beyond the grid);
    (2) the upper triangle of ``sum_i c_i c_i^T`` over the Gaussianised numeric rows
    scaled to L2 norm at most ``R`` (the 99th percentile of a chi distribution with
    ``d_num`` degrees of freedom), L2 sensitivity ``R^2``; its noisy value, turned into a
    correlation matrix (eigenvalues floored at 0.02), gives the whitening ``L^{-1}``.
    Each takes half of 30 % of ``epsilon`` (after the bounds estimate) and a quarter of
    ``delta``; DP-SGD then runs at the rest. The three spends add up (basic sequential
    composition; adaptive: the correlation reads the released ``F``). Neither statistic
    divides by a count, so no row count is released. Li, Xiong & Jiang (2014) use the
    same marginal-then-correlation construction for synthesis.

    **Patients.** With ``groups`` the neighbouring relation is add or remove one patient
    with all their rows, and the number of patients is public. Each patient keeps at most
    ``k = max_rows_per_group`` rows, chosen uniformly at random inside the mechanism;
    each step Poisson-samples *patients* at rate ``q = batch_size / n_patients``, clips
    each sampled patient's gradient sum divided by ``k`` to ``max_grad_norm`` as one
    vector (L2 sensitivity ``max_grad_norm`` per patient, whatever ``k``), adds the noise
    once and divides by ``q n_patients``; the accountant (unchanged) composes these
    steps at sampling rate ``q``; the copula base's two statistics have ``k`` times
    the per-row sensitivity (``k sqrt(d_num)`` and ``k R^2``) and their noise scales by
    ``k``; so ``epsilon_spent_`` holds per patient
    (``privacy_unit_ = "group"``; user-level DP-SGD, McMahan et al. 2018). Numeric bounds
    must be declared. See :mod:`skdp.training._patients` and :doc:`/patients`.

    **Floating point.** No release is exact in floating point: the DP-SGD Gaussian noise
    (torch) and Poisson sampling, and with ``bounds=None`` the sparse-vector Laplace noise
    of the bound estimate, are drawn in floating point; the guarantee is for the
    mathematical mechanism (Mironov 2012).

    **Densities.** ``score_samples`` returns ``log p(x)`` in the original units: the flow's
    log-density of the encoded record plus the log-Jacobian of the affine scaling of the
    numeric columns. Numeric values outside the declared bounds are evaluated where they
    are, not clipped. For integer, binary and categorical columns it is the density of the
    dequantised encoding at the record's cell centre, not a probability mass.

    References
    ----------
    .. [1] B. Su, Y. Wang, D. E. Schiavazzi, F. Liu, "Differentially Private Normalizing Flows
       for Density Estimation, Data Synthesis, and Variational Inference with Application
       to Electronic Health Records", 2023.
    .. [2] M. Abadi et al., "Deep Learning with Differential Privacy", CCS 2016.
    .. [3] G. Papamakarios, T. Pavlakou, I. Murray, "Masked Autoregressive Flow for Density
       Estimation", NeurIPS 2017.
    .. [4] I. Mironov, K. Talwar, L. Zhang, "Rényi Differential Privacy of the Sampled
       Gaussian Mechanism", 2019.
    .. [5] H. Li, L. Xiong, X. Jiang, "Differentially Private Synthesization of
       Multi-Dimensional Data using Copula Functions", EDBT 2014.
    .. [6] B. Balle, Y.-X. Wang, "Improving the Gaussian Mechanism for Differential
       Privacy: Analytical Calibration and Optimal Denoising", ICML 2018.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.density import DPFlowDensity
    >>> X = np.random.default_rng(0).normal(size=(500, 2))
    >>> est = DPFlowDensity(epsilon=3.0, bounds=(-4.0, 4.0), n_layers=2, hidden_size=16,
    ...                     n_iter=50, batch_size=100, device="cpu", random_state=0).fit(X)
    >>> est.epsilon_spent_ <= 3.0
    True
    >>> est.sample(3).shape
    (3, 2)
    >>> est.score_samples(X[:4]).shape
    (4,)
    """

    _parameter_constraints: dict = {
        **DPEstimatorMixin._privacy_parameter_constraints,
        **tabular_constraints(),
        "flow": [StrOptions({"maf", "realnvp"})],
        "base": [StrOptions({"copula", "none"})],
        "n_layers": [Interval(Integral, 0, None, closed="left")],
        "hidden_size": [None, Interval(Integral, 1, None, closed="left")],
        "max_grad_norm": [Interval(Real, 0, None, closed="neither")],
        "noise_multiplier": [None, Interval(Real, 0, None, closed="neither")],
        "batch_size": [None, Interval(Integral, 1, None, closed="left")],
        "n_iter": [None, Interval(Integral, 1, None, closed="left")],
        "max_rows_per_group": [None, Interval(Integral, 1, None, closed="left")],
        "learning_rate": [None, Interval(Real, 0, None, closed="neither")],
        **DPEstimatorMixin._common_constraints(*_DPSGD_SHARED),
    }

    __init__ = keyword_init(
        [
            ("epsilon", 1.0),
            ("delta", 1e-5),
            *tabular_params(),
            ("flow", "maf"),
            ("base", "copula"),
            ("n_layers", 5),
            ("hidden_size", None),
            ("max_grad_norm", 1.0),
            ("noise_multiplier", None),
            ("batch_size", None),
            ("n_iter", None),
            ("max_rows_per_group", None),
            ("learning_rate", None),
            *DPEstimatorMixin._common_params(*_DPSGD_SHARED),
        ],
        qualname="DPFlowDensity.__init__",
    )

    # ----------------------------------------------------------------------- fit
    @_fit_context(prefer_skip_nested_validation=True)
    @insert_docs
    def fit(self, X, y=None, *, groups=None):
        """Fit the flow with DP-SGD.

        Parameters
        ----------
        {param_X_private_records}
        y : None
            Ignored.
        {param_groups_dpsgd_tabular}

        Returns
        -------
        self
        """
        from skdp.training._fit_context import check_noise_multiplier, freeze, torch_fit

        check_noise_multiplier(self.epsilon, self.noise_multiplier)
        if self.n_layers == 0 and self.base == "none":
            raise ValueError("n_layers=0 needs base='copula' (the flow would have no layer)")
        X = self._validate_X(X, reset=True)
        codes, k = flow_patient_codes(self, X, groups, int(X.shape[0]))
        n = int(X.shape[0]) if codes is None else int(codes.max()) + 1  # rows or patients
        epsilon, delta = self._check_privacy_params(
            n_samples=n, require_delta=math.isfinite(self.epsilon)
        )
        streams = fit_streams(self.random_state, _STREAMS, estimator=self, X=X, groups=codes)
        if codes is not None:  # at most k rows per patient, chosen at random
            X, codes = bound_patients(X, codes, k, streams["groups"])

        # public schema; missing numeric bounds estimated privately inside the budget
        schema, eps_bounds, encoder = self._prepare_table(
            X,
            epsilon=epsilon,
            rng=streams["bounds"],
            fraction=BOUNDS_FRACTION,
            encoder={
                "categorical": "onehot",
                "numeric_range": NUMERIC_RANGE,
                "integer_margin": 0.5,
            },
        )
        Z = encoder.transform(X)
        hidden = self._hidden_size(encoder.n_encoded_features_)
        with torch_fit(self, streams) as env:
            budget = (epsilon, delta, eps_bounds > 0.0)
            units = None if codes is None else (codes, k)
            flow, plan, result = self._train(env, Z, encoder, schema, hidden, budget, units)
        freeze(flow, diverged=_DIVERGED)
        self._record(schema, encoder, flow, plan, result, env.device)
        return self

    def _hidden_size(self, D):
        """``hidden_size`` or ``max(64, D)``; ``ValueError`` if a MAF cannot have it."""
        hidden = self.hidden_size if self.hidden_size is not None else max(64, D)
        if self.flow == "maf" and D > 1 and hidden < D - 1:
            raise ValueError(
                f"hidden_size={hidden} is too small for {D} encoded features: a MAF needs "
                f"hidden_size >= {D - 1}"
            )
        return int(hidden)

    def _train(self, env, Z, encoder, schema, hidden, budget, units=None):
        """``(flow, FlowDensityPlan, result)`` (:func:`skdp.density._flow_train.train_flow`)."""
        from skdp.density._flow_train import train_flow

        epochs = FLOW_EPOCHS
        return train_flow(
            self, env, Z, encoder, schema, hidden, budget, units,
            epochs=epochs, nll=_negative_log_likelihood,
        )  # fmt: skip

    def _record(self, schema, encoder, flow, plan, result, device):
        """The fitted attributes, the DP-SGD facts and the spend (``record_dpsgd_fit``);
        every privacy fact comes from ``plan``."""
        from skdp.training._fit_context import record_dpsgd_fit

        self.schema_ = schema
        self.bounds_ = {c.name: c.bounds for c in schema if c.is_numeric}
        self._encoder = encoder
        self.n_encoded_features_ = encoder.n_encoded_features_
        self.flow_ = flow
        record_dpsgd_fit(
            self,
            noise_multiplier=plan.noise_multiplier,
            sample_rate=plan.sample_rate,
            n_iter=plan.n_iter,
            history={k: list(result.history[k]) for k in ("step", "epsilon")},
            loss_curve=result.history.get("loss", []),  # kept for epsilon=inf only
            device=device,
            breakdown=plan.breakdown(),
            delta=plan.delta,
            guarantee=result.guarantee,
            private=plan.private,
        )
        self.privacy_unit_ = plan.privacy_unit
        self.max_rows_per_group_ = plan.max_rows_per_group

    _dequantiser = staticmethod(dequantiser)

    def _progress(self, step, trainer, history, *, total):
        # the training loss is recorded (and logged) for epsilon=inf only
        log_step_progress(
            _logger,
            estimator="DPFlowDensity",
            step=step,
            total=total,
            epsilons=history["epsilon"],
            losses=history.get("loss"),
            private=math.isfinite(self.epsilon),
        )

    # ------------------------------------------------------------------ densities
    def _encode_for_density(self, X):
        enc = self._encoder
        Z = enc.transform(X)  # validates columns, categories, NaN; clips numeric
        num = self.schema_.numeric_names
        if num:
            V = self.schema_.numeric_matrix(X, num)  # unclipped values
            for j, name in enumerate(num):
                Z[:, enc.slices_[name].start] = enc.scale_[name] * V[:, j] + enc.offset_[name]
        return Z

    def score_samples(self, X):
        """Log-density of each record in the original units.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        import torch

        from skdp.utils._torch import to_numpy, to_tensor

        check_is_fitted(self)
        X = self._validate_X(X, reset=False)
        Z = self._encode_for_density(X)
        p = self.flow_._reference_tensor()
        out = []
        with torch.no_grad():
            for start in range(0, Z.shape[0], 65536):
                t = to_tensor(Z[start : start + 65536], device=p.device, dtype=p.dtype)
                out.append(to_numpy(self.flow_.log_prob(t)))
        lp = np.concatenate(out) if out else np.zeros(0)
        return lp + self._encoder.log_jacobian_

    def score(self, X, y=None):
        """Mean log-likelihood of ``X`` (the mean, as ``GaussianMixture.score``).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
        y : None
            Ignored.

        Returns
        -------
        float
        """
        return float(np.mean(self.score_samples(X)))

    # ------------------------------------------------------------------- sampling
    def sample(self, n_samples=1, *, random_state=None):
        """Draw synthetic records (post-processing: costs no privacy).

        Parameters
        ----------
        n_samples : int, default=1
        random_state : None, int, SeedSequence or Generator, default=None
            ``None`` draws fresh OS entropy (the fitted model keeps no generator); a
            value makes the draw reproducible. Sampling is post-processing of the
            private fit.

        Returns
        -------
        DataFrame or ndarray of shape (n_samples, n_features)
            The input's type; numeric columns clipped to the bounds, integers rounded,
            categorical levels decoded by argmax to the declared categories.
        """
        import torch

        from skdp.utils._torch import to_numpy, to_tensor

        check_is_fitted(self)
        n_samples = check_n_samples(n_samples, getattr(self, "n_features_in_", 1))
        rng = make_rng(random_state)
        p = self.flow_._reference_tensor()
        D = self.n_encoded_features_
        Z = np.empty((n_samples, D))
        todo = np.arange(n_samples)
        for _ in range(10):
            if todo.size == 0:
                break
            z = rng.standard_normal((todo.size, D))
            with torch.no_grad():
                x = to_numpy(self.flow_.inverse(to_tensor(z, device=p.device, dtype=p.dtype)))
            Z[todo] = x
            todo = todo[~np.all(np.isfinite(x), axis=1)]
        if todo.size:
            raise ValueError(_DIVERGED)
        return self._encoder.inverse_transform(Z)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        return tags


_DIVERGED = (
    "the flow diverged (its parameters or samples are not finite): refit with a lower "
    "learning_rate, or dtype='float64'"
)


def _negative_log_likelihood(log_prob):
    return -log_prob
