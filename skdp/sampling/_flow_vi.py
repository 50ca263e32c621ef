"""DPFlowVI: differentially private variational inference with normalizing flows (DP-NF-VI).

DP-NF-VI of Su, Wang, Schiavazzi & Liu (2023), Section 4 (Algorithm 2). The estimator
lives in :mod:`skdp.sampling`, has ``log_prob(theta)`` and
no ``score``/``score_samples``, uses no BatchNorm (``normalization="affine"`` replaces the
paper's BN), and trains the flow's sampling direction (``inverse_and_ladj``) with the shared
DP-SGD engine of :mod:`skdp.training`.

Also here: the closed-form Gaussian divergence profiles of Su et al. (2023), §4.3
(:func:`gaussian_divergence`, :func:`gaussian_divergence_profile`).
"""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils import Bunch

from skdp.base import DPEstimatorMixin
from skdp.utils._random import fit_streams, make_rng
from skdp.utils._sklearn_compat import (
    Interval,
    StrOptions,
    _fit_context,
    check_is_fitted,
    validate_data,
)

__all__ = [
    "DPFlowVI",
    "GaussianLocationLogLik",
    "NonlinearRepeatedMeasuresLogLik",
    "gaussian_divergence",
    "gaussian_divergence_profile",
    "paper_reg_dp_vi",
]

_STREAMS = ["init", "sampling", "noise", "mc"]
_LOG_2PI = math.log(2.0 * math.pi)
_OPTIMIZERS = {"adam": "Adam", "sgd": "SGD", "rmsprop": "RMSprop"}


# ------------------------------------------------------------------ likelihoods
class GaussianLocationLogLik:
    """Per-record log-likelihood of the Gaussian location model ``x_i ~ N(theta, scale^2 I)``.

    The default ``log_lik`` of :class:`DPFlowVI` (then ``theta`` has the dimension of a
    record). A picklable callable: ``log_lik(theta, X) -> (m, b)`` with ``theta`` of shape
    ``(m, d)`` and ``X`` of shape ``(b, d)``.

    Parameters
    ----------
    scale : float, default=1.0
        Known (public) noise standard deviation.

    Examples
    --------
    >>> import torch
    >>> from skdp.sampling import GaussianLocationLogLik
    >>> ll = GaussianLocationLogLik()(torch.zeros(3, 2), torch.zeros(4, 2))
    >>> tuple(ll.shape)
    (3, 4)
    """

    def __init__(self, scale=1.0):
        scale = float(scale)
        if not (0 < scale < math.inf):
            raise ValueError("scale must be a positive finite number")
        self.scale = scale

    def __call__(self, theta, X):
        r = (X[None, :, :] - theta[:, None, :]) / self.scale
        d = X.shape[-1]
        return -0.5 * (r * r).sum(-1) - d * (math.log(self.scale) + 0.5 * _LOG_2PI)

    def __repr__(self):
        return f"GaussianLocationLogLik(scale={self.scale!r})"


class NonlinearRepeatedMeasuresLogLik:
    """Per-subject log-likelihood of the simulated nonlinear model (Su et al. 2023, §4.2).

    ``log N_5(x_i; f(w_i, beta) 1, sigma^2 I + sigma0^2 1 1^T)`` with
    ``f(w, beta) = beta0 + exp(beta1 w1) + log(w2 + exp(beta2)) + beta3 exp(w3)
    + log(w4 + exp(beta4))`` (paper Eq. (12) with its typo fixed). Records are
    ``[w1..w4, x1..x5]`` as made by :func:`skdp.datasets.make_nonlinear_repeated_measures`;
    ``sigma`` and ``sigma0`` are known constants (never estimated from the data, H12).
    The torch twin of :func:`skdp.datasets.nonlinear_log_likelihood`.

    Parameters
    ----------
    sigma, sigma0 : float, default=0.2

    Examples
    --------
    >>> import torch
    >>> from skdp.sampling import NonlinearRepeatedMeasuresLogLik
    >>> ll = NonlinearRepeatedMeasuresLogLik()(torch.zeros(2, 5), torch.ones(3, 9))
    >>> tuple(ll.shape)
    (2, 3)
    """

    def __init__(self, sigma=0.2, sigma0=0.2):
        self.sigma = float(sigma)
        self.sigma0 = float(sigma0)

    def __call__(self, theta, X):
        import torch

        w1, w2, w3, w4 = (X[None, :, j] for j in range(4))
        b = [theta[:, j, None] for j in range(5)]
        f = (
            b[0]
            + torch.exp(b[1] * w1)
            + torch.log(w2 + torch.exp(b[2]))
            + b[3] * torch.exp(w3)
            + torch.log(w4 + torch.exp(b[4]))
        )  # (m, b)
        r = X[None, :, 4:9] - f[..., None]
        s2, t2, k = self.sigma**2, self.sigma0**2, 5
        quad = ((r * r).sum(-1) - t2 / (s2 + k * t2) * r.sum(-1) ** 2) / s2
        logdet = k * math.log(s2) + math.log1p(k * t2 / s2)
        return -0.5 * (quad + logdet + k * _LOG_2PI)

    def __repr__(self):
        return f"NonlinearRepeatedMeasuresLogLik(sigma={self.sigma!r}, sigma0={self.sigma0!r})"


# --------------------------------------------------------------- the per-record loss
def _record_free_energy_module(flow, log_lik, log_prior, n, include_data_free):
    """``nn.Module`` whose call on a batch of records returns their free-energy terms ``l_i``.

    ``l_i = mean_j[(1/n)(log q0(z_j) - log|det dtheta/dz|_j - log p(theta_j))
    - log p(x_i | theta_j)]`` with the MC draws ``z`` held in the buffer ``z`` (the same for
    every record of a step and independent of the data); ``include_data_free=False`` drops
    the ``1/n`` data-free part (it is then handled separately).

    ``module(x, what="sampling")`` returns the flow's sampling map ``(theta, log|det|)`` of
    ``x`` (MC draws) and ``module(None, what="data_free")`` the per-draw data-free term, so
    that both can be evaluated with ``torch.func.functional_call``.
    """
    import torch
    from torch import nn

    from skdp.flows import standard_normal_log_prob

    class _RecordFreeEnergy(nn.Module):
        def __init__(self):
            super().__init__()
            self.flow = flow
            self.log_lik_fn = log_lik
            self.register_buffer("z", torch.zeros(1, flow.n_features))

        def data_free(self):
            theta, ladj = self.flow.inverse_and_ladj(self.z)
            term = standard_normal_log_prob(self.z) - ladj
            if log_prior is not None:
                term = term - log_prior(theta)
            return theta, term  # (m, p), (m,)

        def forward(self, x, what="loss"):
            if what == "sampling":
                return self.flow.inverse_and_ladj(x)
            theta, term = self.data_free()
            if what == "data_free":
                return term
            ll = self.log_lik_fn(theta, x)  # (m, b)
            loss = -ll.mean(0)
            if include_data_free:
                loss = loss + term.mean() / n
            return loss

    return _RecordFreeEnergy()


def _identity(v):
    return v


#: Largest ``n_mc * n_params * n_flow_parameters`` for which the per-row Jacobian path is used.
_JACOBIAN_MAX_ENTRIES = 20_000_000


class _FreeEnergyGradients:
    """Per-record gradients of the free-energy terms ``l_i`` for one set of MC draws ``z``.

    Two exact paths (tested against each other and against a per-record loop):

    * ``"jacobian"``: the flow maps every MC draw separately, so ``d theta_j / d lambda`` is a
      per-row Jacobian (``vmap(jacrev(...))`` over the draws, independent of the records);
      record ``i``'s likelihood gradient is then
      ``-(1/m) sum_j (d log p(x_i | theta_j) / d theta_j)^T d theta_j / d lambda``: one matrix
      product for the whole batch;
    * ``"records"``: ``vmap(grad(...))`` over the records of the module whose call returns
      ``l_i`` (:func:`skdp.training.per_sample_gradients`); ``"loop"`` is its reference loop.

    The data-free part ``(1/n) grad mean_j[log q0(z_j) - log|det|_j - log p(theta_j)]`` is the
    same for every record and is returned separately, so that ``privatize`` can add it to
    every record before clipping or once after the noise.
    """

    def __init__(self, flow, log_lik, log_prior, n, method="auto"):
        self.flow = flow
        self.log_lik = log_lik
        self.n = float(n)
        self.module = _record_free_energy_module(flow, log_lik, log_prior, n, False)
        self.params = {k: p for k, p in self.module.named_parameters() if p.requires_grad}
        self.n_par = sum(p.numel() for p in self.params.values())
        if method not in ("auto", "jacobian", "records", "loop"):
            raise ValueError(f"unknown gradient method {method!r}")
        self.method = method

    def resolve_method(self, m):
        if self.method != "auto":
            return self.method
        size = m * self.flow.n_features * self.n_par
        return "jacobian" if size <= _JACOBIAN_MAX_ENTRIES else "records"

    def data_free_gradient(self):
        """``(1/n) grad_lambda mean_j[log q0(z_j) - log|det|_j - log p(theta_j)]``."""
        import torch

        with torch.enable_grad():
            term = self.module(None, what="data_free")
            grads = torch.autograd.grad(
                term.mean() / self.n, list(self.params.values()), allow_unused=True
            )
        return {
            k: (g.detach() if g is not None else torch.zeros_like(v))
            for (k, v), g in zip(self.params.items(), grads, strict=True)
        }

    def non_private_gradient(self, X, expected_batch_size):
        """``sum_i grad l_i^lik / B + data-free gradient`` in one backward pass (no privacy)."""
        import torch

        with torch.enable_grad():
            term = self.module(None, what="data_free").mean() / self.n
            if X.shape[0]:
                term = term + self.module(X).sum() / expected_batch_size
            grads = torch.autograd.grad(term, list(self.params.values()), allow_unused=True)
        return {
            k: (g.detach() if g is not None else torch.zeros_like(v))
            for (k, v), g in zip(self.params.items(), grads, strict=True)
        }

    def likelihood_gradients(self, X):
        """Per-record gradients of ``-mean_j log p(x_i | theta_j)``: ``{name: (b, *shape)}``."""
        import torch
        from torch.func import functional_call, grad, jacrev, vmap

        from skdp.training import per_sample_gradients

        params = {k: v.detach() for k, v in self.params.items()}
        b = X.shape[0]
        method = self.resolve_method(self.module.z.shape[0])
        if method in ("records", "loop"):
            return per_sample_gradients(
                self.module,
                _identity,
                X,
                params=params,
                method="vmap" if method == "records" else "loop",
            )
        if b == 0:
            return {
                k: torch.zeros((0, *v.shape), dtype=v.dtype, device=v.device)
                for k, v in params.items()
            }
        buffers = {k: v.detach() for k, v in self.module.named_buffers()}
        module = self.module
        z = module.z

        def theta_of_row(prm, zj):
            return functional_call(module, (prm, buffers), (zj,), {"what": "sampling"})[0]

        J = vmap(jacrev(theta_of_row), in_dims=(None, 0))(params, z)  # {name: (m, p, *shape)}
        with torch.no_grad():
            theta = module.flow.inverse_and_ladj(z)[0]
        log_lik = self.log_lik

        def record_ll(th, x):
            return log_lik(th, x[None]).sum()

        G = vmap(grad(record_ll), in_dims=(None, 0))(theta, X)  # (b, m, p)
        m = z.shape[0]
        Gf = G.reshape(b, -1)
        return {
            k: (-(Gf @ Jk.reshape(Gf.shape[1], -1)) / m).reshape(b, *Jk.shape[2:])
            for k, Jk in J.items()
        }


# --------------------------------------------------------------------- estimator
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
        model :class:`GaussianLocationLogLik` ``x_i ~ N(theta, I)``.
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
        Per-record clipping norm ``C`` (flat L2 norm over all flow parameters).
    batch_size : int, default=256
        Expected number of records per step; Poisson rate ``q = min(1, batch_size / n)``.
    n_iter : int, default=2000
        Optimizer steps, all accounted.
    n_mc : int, default=100
        Monte Carlo draws ``m`` of ``z0`` per step (shared by the step's records).
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
        flow reach posterior locations and scales far from those of ``N(0, I)``.
    optimizer : {"rmsprop", "adam", "sgd"}, default="rmsprop"
    learning_rate : float, default=0.01
    lr_decay : float, default=1.0
        Per-step exponential learning-rate decay (the paper uses 0.999 over 8000 steps).
    privatize : {"per_record_full", "likelihood_only"}, default="per_record_full"
        ``"per_record_full"``: each record's gradient of its whole term ``l_i`` is clipped
        and noised (the paper's Algorithm 2). ``"likelihood_only"``: only the likelihood
        part is clipped and noised; the exact gradient of the data-free part (entropy and
        prior, weight ``1/n``) is added afterwards (same privacy: post-processing, since
        that part does not touch the data).
    accountant : {"pld", "rdp", "gdp_clt"}, default="pld"
        Registry key (:func:`skdp.accounting.get_accountant`). ``"pld"``: numerical
        composition of privacy loss distributions, reported as ``min(PLD, RDP)``, a
        proven bound that is tighter than ``"rdp"`` (less noise for the same budget);
        ``"rdp"``: the Rényi-DP bound alone; ``"gdp_clt"``: the DP-NF paper's CLT
        approximation (``privacy_guarantee_="approximate"``).
    device : {"auto", "cpu", "cuda"}, default="auto"
    dtype : {"float32", "float64"}, default="float32"
    n_jobs : int or None, default=None
        Torch CPU threads used by ``fit`` (``torch.set_num_threads``); the previous count
        is restored afterwards, also when ``fit`` raises. ``None``: one thread on the CPU
        when a step is small (expected batch size times the number of flow parameters plus
        ``n_mc`` likelihood terms per record, ``B (n_flow_params + n_mc n_params)``, at most
        :data:`skdp.utils._torch.SMALL_STEP_WORK` = 2**24), where an OpenMP pool costs
        more than it saves and collapses when other processes keep the cores busy;
        otherwise torch's current setting. An int: that many threads; negative values
        count back from the available CPUs (``-1``: all). Under an int ``random_state``
        the value is part of the seed material, like every parameter.
    verbose : int, default=0
        Print the step and the epsilon spent so far (and the ELBO when ``epsilon=inf``).
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
    n_steps_ : int
        Executed (and accounted) steps.
    epsilon_spent_, delta_spent_ : float
    privacy_guarantee_ : {"exact", "approximate"}
    mu_gdp_ : float
        The paper's CLT mu-GDP of the run (informational only; ``inf`` if non-private).
    history_ : dict
        ``"step"`` and ``"epsilon"`` at the logged steps; no quantity of the data.
    elbo_curve_ : ndarray
        MC estimate of the ELBO on the training data at the logged steps, for
        ``epsilon=inf`` only; empty for a private fit (it would be an un-noised statistic
        of the data).
    elbo_ : float
        Last value of ``elbo_curve_``; ``nan`` for a private fit (use :meth:`elbo` on data
        whose ELBO may be released).

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
    by post-processing). The flow has no BatchNorm or other cross-record layer, and
    ``log_lik`` must not mix records. Accountant (default ``"pld"``): the privacy loss
    distribution of the subsampled Gaussian composed numerically, reported as the minimum
    with the RDP bound (both proven bounds, ``"exact"``); ``"gdp_clt"`` is the paper's CLT
    approximation (``"approximate"``).
    What is released: the flow's parameters, hence :meth:`sample` and :meth:`log_prob`
    (post-processing). The fitted object keeps no un-noised statistic of the data (no
    training loss or ELBO of a private fit, no realised batch sizes). :meth:`elbo` evaluates
    whatever data it is given; calling it on the private data and publishing the value is a
    further release that is not covered by ``epsilon``.

    **Floating point.** No release is exact in floating point: the DP-SGD Gaussian noise
    (torch) and Poisson sampling are drawn in floating point; the guarantee is for the
    mathematical mechanism (Mironov 2012).

    **Accuracy.** Clipping and noise inflate the variational variances; with the free
    energy (KL(q||p)) as loss the inflated optimum also distorts the correlations (paper
    §4.2-4.3, :func:`gaussian_divergence_profile`). The paper's alternative losses (the
    reverse KL, l1 and Wasserstein distances) need the target posterior's samples or
    normalised density and do not split into per-record terms, so they cannot be trained
    with DP-SGD here; they are available as analysis tools in
    :func:`gaussian_divergence`.

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
        "n_iter": [Interval(Integral, 1, None, closed="left")],
        "n_mc": [Interval(Integral, 1, None, closed="left")],
        "flow": [StrOptions({"iaf", "maf", "realnvp", "planar"})],
        "n_layers": [Interval(Integral, 1, None, closed="left")],
        "hidden_size": [None, Interval(Integral, 1, None, closed="left")],
        "normalization": [StrOptions({"affine", "none"})],
        "optimizer": [StrOptions({"rmsprop", "adam", "sgd"})],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "lr_decay": [Interval(Real, 0, 1, closed="right")],
        "privatize": [StrOptions({"per_record_full", "likelihood_only"})],
        "accountant": [StrOptions({"pld", "rdp", "gdp_clt"})],
        "device": [StrOptions({"auto", "cpu", "cuda"})],
        "dtype": [StrOptions({"float32", "float64"})],
        "n_jobs": [None, Integral],
        "verbose": ["verbose"],
        "random_state": ["random_state", np.random.Generator, np.random.SeedSequence],
    }

    def __init__(
        self,
        *,
        log_lik=None,
        log_prior=None,
        n_params=None,
        epsilon=1.0,
        delta=1e-5,
        noise_multiplier=None,
        max_grad_norm=10.0,
        batch_size=256,
        n_iter=2000,
        n_mc=100,
        flow="iaf",
        n_layers=1,
        hidden_size=None,
        normalization="affine",
        optimizer="rmsprop",
        learning_rate=0.01,
        lr_decay=1.0,
        privatize="per_record_full",
        accountant="pld",
        device="auto",
        dtype="float32",
        n_jobs=None,
        verbose=0,
        random_state=None,
    ):
        self.log_lik = log_lik
        self.log_prior = log_prior
        self.n_params = n_params
        self.epsilon = epsilon
        self.delta = delta
        self.noise_multiplier = noise_multiplier
        self.max_grad_norm = max_grad_norm
        self.batch_size = batch_size
        self.n_iter = n_iter
        self.n_mc = n_mc
        self.flow = flow
        self.n_layers = n_layers
        self.hidden_size = hidden_size
        self.normalization = normalization
        self.optimizer = optimizer
        self.learning_rate = learning_rate
        self.lr_decay = lr_decay
        self.privatize = privatize
        self.accountant = accountant
        self.device = device
        self.dtype = dtype
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.random_state = random_state

    # ----------------------------------------------------------------- helpers
    def _resolve_model(self, n_features):
        if self.log_lik is None:
            if self.n_params is not None and self.n_params != n_features:
                raise ValueError(
                    f"the default log_lik (Gaussian location model) has n_params = "
                    f"n_features = {n_features}; got n_params={self.n_params}"
                )
            return GaussianLocationLogLik(), n_features
        if self.n_params is None:
            raise ValueError("n_params is required with a custom log_lik")
        return self.log_lik, int(self.n_params)

    def _build_flow(self, p, generator):
        from skdp.flows import Affine, Flow, make_flow

        if self.flow == "planar":
            flow = make_flow("planar", p, n_layers=int(self.n_layers), generator=generator)
        else:
            hidden = self.hidden_size if self.hidden_size is not None else max(10, p)
            if self.flow in ("iaf", "maf") and p > 1 and hidden < p - 1:
                raise ValueError(
                    f"hidden_size={hidden} is too small for n_params={p}: an autoregressive "
                    f"flow needs hidden_size >= {p - 1}"
                )
            flow = make_flow(
                self.flow,
                p,
                n_layers=int(self.n_layers),
                hidden_features=(int(hidden),),
                generator=generator,
                zero_init_output=True,
            )
        if self.normalization == "affine":
            # first in the data -> latent order = last step of the sampling direction:
            # theta = loc + exp(log_scale) * F(z). (An affine placed inside an IAF would be
            # inverted, theta = (u - loc) exp(-log_scale), which couples location and scale
            # and makes small posterior scales unreachable at usual learning rates.)
            flow = Flow([Affine(p), *flow.transforms], n_features=p)
        return flow

    # ---------------------------------------------------------------------- fit
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Fit the variational flow with DP-SGD on the free energy.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            One row per privacy unit; passed to ``log_lik`` as a torch tensor. NaN/inf
            raise ``ValueError``.
        y : None
            Ignored.

        Returns
        -------
        self
        """
        import torch

        from skdp.accounting import gdp_clt_mu, get_accountant, resolve_noise_multiplier
        from skdp.training import check_per_record_module, clip_and_sum
        from skdp.utils._torch import (
            n_parameters,
            resolve_device,
            resolve_dtype,
            resolve_n_threads,
            to_tensor,
            torch_generator,
            torch_threads,
        )

        if (
            math.isinf(self.epsilon)
            and self.noise_multiplier is not None
            and self.noise_multiplier > 0
        ):
            raise ValueError("noise_multiplier must be None when epsilon=inf (no privacy)")
        X = validate_data(self, X, reset=True, dtype="numeric")
        n, d = X.shape
        log_lik, p = self._resolve_model(d)
        private = math.isfinite(self.epsilon)
        epsilon, delta = self._check_privacy_params(n_samples=n, require_delta=private)
        q = min(1.0, float(self.batch_size) / n)
        T = int(self.n_iter)
        if private:
            sigma, _ = resolve_noise_multiplier(
                epsilon=epsilon,
                delta=delta,
                sample_rate=q,
                steps=T,
                noise_multiplier=self.noise_multiplier,
                accountant=self.accountant,
            )
        else:
            sigma = 0.0
        C = float(self.max_grad_norm)
        B = q * n  # expected batch size (public)
        streams = fit_streams(self.random_state, _STREAMS, estimator=self, X=X)
        device = resolve_device(self.device)
        tdtype = resolve_dtype(self.dtype)
        m = int(self.n_mc)
        full = self.privatize == "per_record_full"
        accountant = get_accountant(self.accountant)

        devices = [device.index or 0] if device.type == "cuda" else []
        with torch.random.fork_rng(devices=devices), torch_threads() as set_threads:
            flow = self._build_flow(p, torch_generator(streams["init"], "cpu"))
            flow = check_per_record_module(flow.to(device=device, dtype=tdtype))
            step_work = max(1, round(B)) * (n_parameters(flow) + m * p)
            set_threads(resolve_n_threads(self.n_jobs, step_work=step_work, device=device))
            grads = _FreeEnergyGradients(flow, log_lik, self.log_prior, n, self._grad_method)
            Xt = to_tensor(X, device=device, dtype=tdtype)
            mc_gen = torch_generator(streams["mc"], device)
            noise_gen = torch_generator(streams["noise"], device)
            sampling_rng = streams["sampling"]
            grads.module.z = torch.randn((m, p), generator=mc_gen, device=device, dtype=tdtype)
            self._check_log_lik(grads.module, Xt, m)
            params = grads.params
            optimizer = getattr(torch.optim, _OPTIMIZERS[self.optimizer])(
                list(params.values()), lr=float(self.learning_rate)
            )
            scheduler = None
            if self.lr_decay < 1.0:
                scheduler = torch.optim.lr_scheduler.ExponentialLR(
                    optimizer, gamma=float(self.lr_decay)
                )
            log_every = max(1, T // 50)
            history = {"step": [], "epsilon": []}
            elbo_curve = []
            n_steps = 0
            flow.train()
            for t in range(1, T + 1):
                # 1. Poisson batch; 2. MC draws shared by the batch (data-independent)
                idx = np.flatnonzero(sampling_rng.random(n) < q)
                grads.module.z = torch.randn((m, p), generator=mc_gen, device=device, dtype=tdtype)
                batch = Xt.index_select(0, torch.as_tensor(idx, dtype=torch.long, device=device))
                if private:
                    per = grads.likelihood_gradients(batch)
                    free = grads.data_free_gradient()
                    if full:  # the paper's Algorithm 2: clip each record's whole term
                        per = {k: g + free[k].unsqueeze(0) for k, g in per.items()}
                    # 3. flat L2 clipping, 4. one Gaussian draw, 5. divide by q n
                    summed, _, _ = clip_and_sum(per, C)
                    g_hat = {}
                    for k, s_k in summed.items():  # fixed (named_parameters) order
                        noise = torch.randn(
                            s_k.shape, generator=noise_gen, device=device, dtype=tdtype
                        )
                        g_hat[k] = (s_k + sigma * C * noise) / B
                        if not full:  # data-free part added exactly (post-processing)
                            g_hat[k] = g_hat[k] + free[k]
                else:
                    g_hat = grads.non_private_gradient(batch, B)
                # 6. optimizer step (post-processing); 7. one accountant step
                for k, prm in params.items():
                    prm.grad = g_hat[k].detach()
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)
                if scheduler is not None:
                    scheduler.step()
                if private:
                    accountant.step(noise_multiplier=sigma, sample_rate=q)
                n_steps += 1
                if t % log_every == 0 or t == T:
                    history["step"].append(t)
                    history["epsilon"].append(
                        float(accountant.get_epsilon(delta)) if private else math.inf
                    )
                    if not private:
                        elbo_curve.append(
                            self._elbo(flow, log_lik, Xt, min(m, 256), mc_gen, tdtype)
                        )
                    if self.verbose:
                        self._progress(t, history, elbo_curve)
        flow.eval()
        for prm in flow.parameters():
            prm.requires_grad_(False)

        self.n_params_ = p
        self.flow_ = flow
        self._log_lik = log_lik
        self.device_ = str(device)
        self.noise_multiplier_ = float(sigma)
        self.sample_rate_ = q
        self.n_steps_ = n_steps
        self.history_ = history
        self.elbo_curve_ = np.asarray(elbo_curve, dtype=float)
        self.elbo_ = float(elbo_curve[-1]) if elbo_curve else math.nan
        if private:
            self.mu_gdp_ = float(gdp_clt_mu(noise_multiplier=sigma, sample_rate=q, steps=T))
            self._record_privacy_spent(
                float(accountant.get_epsilon(delta)), delta, guarantee=accountant.guarantee
            )
        else:
            self.mu_gdp_ = math.inf
            self._record_privacy_spent(math.inf, 0.0, guarantee="exact")
        return self

    #: Per-record gradient path (tests switch it; "auto" picks the per-row Jacobian when small).
    _grad_method = "auto"

    @staticmethod
    def _check_log_lik(module, X, m):
        """Check the output shape of ``log_lik`` on one record (shape only, no values)."""
        import torch

        with torch.no_grad():
            theta, _ = module.data_free()
            ll = module.log_lik_fn(theta, X[:1])
        if not isinstance(ll, torch.Tensor) or tuple(ll.shape) != (m, 1):
            shape = tuple(ll.shape) if isinstance(ll, torch.Tensor) else type(ll).__name__
            raise ValueError(
                "log_lik(theta, X) must return a tensor of shape (n_theta, n_records); got "
                f"{shape} for theta of shape {tuple(theta.shape)} and one record"
            )

    def _elbo(self, flow, log_lik, X, m, gen, tdtype):
        import torch

        from skdp.flows import standard_normal_log_prob

        with torch.no_grad():
            z = torch.randn((m, flow.n_features), generator=gen, device=X.device, dtype=tdtype)
            theta, ladj = flow.inverse_and_ladj(z)
            log_q = standard_normal_log_prob(z) - ladj
            ll = torch.zeros(m, dtype=tdtype, device=X.device)
            for start in range(0, X.shape[0], 4096):
                ll = ll + log_lik(theta, X[start : start + 4096]).sum(1)
            lp = self.log_prior(theta) if self.log_prior is not None else 0.0
            return float((ll + lp - log_q).mean().item())

    def _progress(self, step, history, elbo_curve):
        msg = f"[DPFlowVI] step {step}/{self.n_iter}"
        if math.isfinite(history["epsilon"][-1]):
            msg += f"  epsilon spent {history['epsilon'][-1]:.4f}"
        if elbo_curve:
            msg += f"  ELBO {elbo_curve[-1]:.4f}"
        print(msg, flush=True)

    # ---------------------------------------------------------------- outputs
    def _param_tensor(self):
        return next(self.flow_.parameters())

    def sample(self, n_samples=1, random_state=None):
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
        if isinstance(n_samples, bool) or not isinstance(n_samples, Integral) or n_samples < 0:
            raise ValueError(f"n_samples must be a non-negative integer, got {n_samples!r}")
        from skdp.utils.validation import check_n_samples

        check_n_samples(n_samples, self.n_params_)
        rng = make_rng(random_state)
        z = rng.standard_normal((int(n_samples), self.n_params_))
        ref = self._param_tensor()
        with torch.no_grad():
            theta = self.flow_.inverse(to_tensor(z, device=ref.device, dtype=ref.dtype))
        return to_numpy(theta)

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
        theta = np.asarray(theta, dtype=float)
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


def paper_reg_dp_vi(**overrides):
    """:class:`DPFlowVI` with the paper's "Reg DP-VI" settings (Su et al. 2023, Table 9).

    1 MADE block with 10 hidden units, m = 1000 MC draws, q = 500/6000 (``batch_size=500``
    for the paper's n = 6000), RMSprop with learning rate 0.01 and decay 0.999, T = 8000,
    C = 10, and the likelihood of the simulated nonlinear model
    (:class:`NonlinearRepeatedMeasuresLogLik`). Deviation: the paper's BatchNorm layer is
    replaced by a learnable affine layer (``normalization="affine"``; BatchNorm mixes records).

    Parameters
    ----------
    **overrides
        Any :class:`DPFlowVI` parameter (e.g. ``epsilon``, ``random_state``).

    Returns
    -------
    DPFlowVI
        Unfitted.

    Examples
    --------
    >>> from skdp.sampling import paper_reg_dp_vi
    >>> paper_reg_dp_vi(epsilon=5.0).n_iter
    8000
    """
    params = dict(
        log_lik=NonlinearRepeatedMeasuresLogLik(),
        n_params=5,
        epsilon=1.0,
        delta=1e-5,
        max_grad_norm=10.0,
        batch_size=500,
        n_iter=8000,
        n_mc=1000,
        flow="iaf",
        n_layers=1,
        hidden_size=10,
        normalization="affine",
        optimizer="rmsprop",
        learning_rate=0.01,
        lr_decay=0.999,
    )
    params.update(overrides)
    return DPFlowVI(**params)


# -------------------------------------- divergence profiles (Su et al. 2023, §4.3)
_METRICS = ("kl", "reverse_kl", "w2", "l1")


def _eigen_variances(rho, sigma):
    """Variances of ``N(0, sigma^2[(1-rho)I + rho 11^T])`` along (1, 1)/√2 and (1, -1)/√2."""
    s2 = np.asarray(sigma, dtype=float) ** 2
    rho = np.asarray(rho, dtype=float)
    return s2 * (1 + rho), s2 * (1 - rho)


def _l1_1d_pair(A, B, s1, s2):
    """``∫ |A N(v; 0, s1²) - B N(v; 0, s2²)| dv`` in closed form (arrays broadcast)."""
    from scipy.special import ndtr

    A, B, s1, s2 = np.broadcast_arrays(*(np.asarray(a, dtype=float) for a in (A, B, s1, s2)))
    out = np.abs(A - B)
    c = 0.5 * (1.0 / s2**2 - 1.0 / s1**2)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.log(B * s1) - np.log(A * s2)
        v2 = t / c
    cross = (c != 0) & np.isfinite(v2) & (v2 > 0) & (A > 0) & (B > 0)
    v = np.sqrt(np.where(cross, v2, 1.0))
    inner = np.abs(A * (2 * ndtr(v / s1) - 1) - B * (2 * ndtr(v / s2) - 1))
    outer = np.abs(A * 2 * ndtr(-v / s1) - B * 2 * ndtr(-v / s2))
    return np.where(cross, inner + outer, out)


def _l1_distance(lp, lm, mp, mm, n_nodes=2001):
    """``∫|p - q|`` for ``p = N(0, diag(mp, mm))``, ``q = N(0, diag(lp, lm))`` (rotated axes).

    The inner integral is exact (:func:`_l1_1d_pair`); the outer one uses the trapezoid rule
    on ``n_nodes`` points over ±10 of the larger standard deviation.
    """
    lp, lm, mp, mm = np.broadcast_arrays(*(np.asarray(a, dtype=float) for a in (lp, lm, mp, mm)))
    L = 10.0 * np.sqrt(np.maximum(lp, mp))
    u = np.linspace(-1.0, 1.0, n_nodes)[:, None] * L.reshape(1, -1)  # (nodes, k)
    lp_, mp_ = lp.reshape(1, -1), mp.reshape(1, -1)
    A = np.exp(-0.5 * u**2 / mp_) / np.sqrt(2 * np.pi * mp_)
    B = np.exp(-0.5 * u**2 / lp_) / np.sqrt(2 * np.pi * lp_)
    inner = _l1_1d_pair(A, B, np.sqrt(mm).reshape(1, -1), np.sqrt(lm).reshape(1, -1))
    return np.trapezoid(inner, u, axis=0).reshape(lp.shape)


def gaussian_divergence(rho, sigma, *, rho0=0.0, sigma0=1.0, metric="kl"):
    """Divergence between two equicorrelated bivariate Gaussians (Su et al. 2023, §4.3).

    Target ``p = N(0, Sigma0)``, ``Sigma0 = sigma0^2[(1 - rho0)I + rho0 11^T]``;
    approximation ``q = N(0, Sigma)``, ``Sigma = sigma^2[(1 - rho)I + rho 11^T]``. Both share
    the eigenvectors ``(1, ±1)/√2`` (variances ``s^2(1 ± r)``), which gives closed forms.

    Parameters
    ----------
    rho, sigma : float or array-like
        Correlation in (-1, 1) and marginal SD > 0 of ``q`` (broadcast together).
    rho0 : float in (-1, 1), default=0.0
    sigma0 : float > 0, default=1.0
    metric : {"kl", "reverse_kl", "w2", "l1"}, default="kl"
        ``"kl"``: ``D(q||p)``, what the free energy minimises; ``"reverse_kl"``: ``D(p||q)``;
        ``"w2"``: the squared 2-Wasserstein distance
        ``sum_± (sqrt(lambda_±) - sqrt(mu_±))^2`` (the paper's printed "W2" formula is this
        square; same argmin); ``"l1"``: ``∫|p - q|`` (= 2 TV; inner integral exact, outer by
        quadrature, absolute error below about 1e-8).

    Returns
    -------
    ndarray
        Non-negative; zero iff ``(rho, sigma) == (rho0, sigma0)``.

    Examples
    --------
    >>> from skdp.sampling import gaussian_divergence
    >>> float(gaussian_divergence(0.5, 1.0, rho0=0.5, sigma0=1.0, metric="kl"))
    0.0
    >>> round(float(gaussian_divergence(0.0, 2.0, metric="w2")), 6)
    2.0
    """
    if metric not in _METRICS:
        raise ValueError(f"metric must be one of {_METRICS}, got {metric!r}")
    rho = np.asarray(rho, dtype=float)
    sigma = np.asarray(sigma, dtype=float)
    if np.any(np.abs(rho) >= 1) or abs(float(rho0)) >= 1:
        raise ValueError("correlations must lie in (-1, 1)")
    if np.any(sigma <= 0) or not float(sigma0) > 0:
        raise ValueError("standard deviations must be positive")
    lp, lm = _eigen_variances(rho, sigma)
    mp, mm = _eigen_variances(rho0, sigma0)
    if metric == "kl":
        r1, r2 = lp / mp, lm / mm
    elif metric == "reverse_kl":
        r1, r2 = mp / lp, mm / lm
    elif metric == "w2":
        return (np.sqrt(lp) - np.sqrt(mp)) ** 2 + (np.sqrt(lm) - np.sqrt(mm)) ** 2
    else:
        return _l1_distance(lp, lm, mp, mm)
    return 0.5 * (r1 - 1 - np.log(r1)) + 0.5 * (r2 - 1 - np.log(r2))


def gaussian_divergence_profile(
    sigma_hat, *, rho0=0.0, sigma0=1.0, metric="kl", grid_step=0.001, rtol=1e-7
):
    """The paper's Fig. 4 red curves: ``rho*(sigma_hat) = argmin_rho L(rho, sigma_hat)``.

    For each inflated (or deflated) marginal SD ``sigma_hat`` the divergence of
    :func:`gaussian_divergence` is minimised over ``rho`` in (-1, 1): a grid search with
    step ``grid_step``, then a bounded scalar refinement around every grid-local minimum.
    Minima whose values agree within ``rtol`` (relative) are all reported: the reverse KL
    and l1 optima are non-unique (``±rho``) when ``rho0 = 0`` and ``sigma_hat`` is large.

    Parameters
    ----------
    sigma_hat : float or array-like
        Marginal SDs of the approximation.
    rho0, sigma0 : float
        Target correlation and marginal SD.
    metric : {"kl", "reverse_kl", "w2", "l1"}, default="kl"
    grid_step : float, default=0.001
    rtol : float, default=1e-7

    Returns
    -------
    sklearn.utils.Bunch
        ``sigma_hat`` (ndarray), ``rho_star`` (ndarray: the minimiser closest to ``rho0``,
        the larger one on a tie), ``rho_star_all`` (list of ndarrays: every global
        minimiser), ``value`` (ndarray: the minimum), ``n_minima`` (ndarray of int).

    Examples
    --------
    >>> from skdp.sampling import gaussian_divergence_profile
    >>> prof = gaussian_divergence_profile([1.0, 2.0], rho0=0.5, metric="w2")
    >>> [round(float(r), 4) for r in prof.rho_star]
    [0.5, 0.5]
    """
    from scipy.optimize import minimize_scalar

    if metric not in _METRICS:
        raise ValueError(f"metric must be one of {_METRICS}, got {metric!r}")
    if not 0 < grid_step < 0.5:
        raise ValueError("grid_step must be in (0, 0.5)")
    sig = np.atleast_1d(np.asarray(sigma_hat, dtype=float))
    grid = np.arange(-1 + grid_step, 1 - grid_step / 2, grid_step)
    grid = np.clip(grid, -1 + 1e-9, 1 - 1e-9)
    rho_star, values, all_minima = [], [], []
    for s in sig:
        vals = gaussian_divergence(grid, s, rho0=rho0, sigma0=sigma0, metric=metric)
        cand = [
            i
            for i in range(len(grid))
            if (i == 0 or vals[i] <= vals[i - 1]) and (i == len(grid) - 1 or vals[i] <= vals[i + 1])
        ]
        found = []
        for i in cand:
            lo = grid[max(i - 1, 0)] if i > 0 else -1 + 1e-9
            hi = grid[min(i + 1, len(grid) - 1)] if i < len(grid) - 1 else 1 - 1e-9
            res = minimize_scalar(
                lambda r, s=s: float(
                    gaussian_divergence(r, s, rho0=rho0, sigma0=sigma0, metric=metric)
                ),
                bounds=(lo, hi),
                method="bounded",
                options={"xatol": 1e-10},
            )
            x, v = float(res.x), float(res.fun)
            if vals[i] < v:
                x, v = float(grid[i]), float(vals[i])
            found.append((x, v))
        vmin = min(v for _, v in found)
        tol = rtol * max(abs(vmin), 1e-12) + 1e-12
        minima = sorted({round(x, 8) for x, v in found if v <= vmin + tol})
        minima = np.asarray(minima)
        best = minima[np.lexsort((-minima, np.abs(minima - rho0)))[0]]
        rho_star.append(best)
        values.append(vmin)
        all_minima.append(minima)
    return Bunch(
        sigma_hat=sig,
        rho_star=np.asarray(rho_star),
        rho_star_all=all_minima,
        value=np.asarray(values),
        n_minima=np.asarray([len(a) for a in all_minima]),
    )
