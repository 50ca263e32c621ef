"""The exponential mechanism over the parameters of a bounded-output linear model, sampled by a
normalizing flow trained by reverse KL (ExpM+NF, Bridges, Tombs & Stanley 2023).

Target (Bridges et al. 2023, Sec. 3; McSherry & Talwar 2007):

``log p~(theta) = beta * u(theta),  u(theta) = -(sum_i l_i(theta) + alpha r(theta))``

with ``beta = epsilon / (2 s)`` (any neighbouring relation) or ``beta = epsilon / s`` when the
utility is monotone (``monotone=True``: under add/remove, adding a row only subtracts its loss
``l >= 0`` from every ``u(theta)``, so the density ratio and the normaliser ratio move in
opposite directions and the factor 2 is not needed; McSherry & Talwar 2007, Dwork & Roth 2014
Thm 3.10 remark),

with ``l_i = (sigmoid(x_i^T w + b) - y_i)^2`` for ``y_i`` in ``[0, 1]`` (targets rescaled by
public bounds), so ``l_i`` is in ``[0, 1]`` and ``s = 1`` (Thm 3.1, under add/remove *and*
replace-one; :func:`skdp.mechanisms.sensitivity.expm_squared_loss_sensitivity`), and
``r = ||theta||_2^2`` or ``||theta||_1`` (data independent; ``alpha > 0`` keeps the target
proper). ``epsilon`` here is the budget of **one** released sample.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from skdp.variational._reverse_kl import build_sampling_flow, fit_reverse_kl, importance_diagnostics

__all__ = [
    "ExpMLinearTarget",
    "expm_diagnostics",
    "fit_expm_flow",
    "MIN_ESS_FRACTION",
    "SANDWICH_SLACK",
]

# Below this importance-sampling ESS fraction the flow is reported as collapsed.
MIN_ESS_FRACTION = 0.01
# ... or when max |log q - log pi| exceeds the utility range R by more than this (nats).
SANDWICH_SLACK = 1.0
# Largest n * N evaluated at once (memory of the (n, N) logit matrix).
_CHUNK = 2**23
# The rate of the ExpM prior, beta * alpha, must lie in this range: its scale
# 1 / sqrt(rate) and its Hessian 2 * rate stay far inside float32 (samples of 1e150 at
# epsilon = 1e-300 gave non-finite losses, alpha = 1e300 a failed eigendecomposition)
_MIN_PRIOR_RATE = 1e-12
_MAX_PRIOR_RATE = 1e12


class ExpMLinearTarget:
    """Unnormalised exponential-mechanism log-density over ``theta = (w, b)``.

    Parameters
    ----------
    X : torch.Tensor of shape (n, d)
    y01 : torch.Tensor of shape (n,)
        Targets in ``[0, 1]`` (already clipped/rescaled by public bounds).
    epsilon : float
        Budget of one released sample (finite, > 0).
    sensitivity : float, default=1.0
        ``s`` of the summed loss (``1`` for losses in ``[0, 1]``).
    alpha : float, default=1.0
        Regulariser strength (``> 0``).
    penalty : {"l2", "l1"}, default="l2"
    fit_intercept : bool, default=True
        ``theta`` has ``d + 1`` coordinates, the last one the intercept (penalised too).
    data_batch_size : int or None, default=None
        During training, estimate the summed loss from a random batch of this many rows,
        scaled by ``n / b`` (unbiased). Diagnostics always use all rows.
    generator : torch.Generator, optional
        Source of the data batches.
    monotone : bool, default=False
        ``beta = epsilon / s`` instead of ``epsilon / (2 s)``: epsilon-DP under add/remove
        only (the summed loss is monotone there); ``2 epsilon`` under replace-one.

    Raises
    ------
    ValueError
        If the prior's rate ``beta * alpha`` lies outside ``[1e-12, 1e12]``: the prior's
        scale or curvature would overflow float32/float64 (NaN losses, a failed
        eigendecomposition) instead of giving a usable target.

    Examples
    --------
    >>> import torch
    >>> from skdp.variational import ExpMLinearTarget
    >>> X = torch.zeros(3, 1, dtype=torch.float64); y = torch.tensor([0.0, 1.0, 1.0]).double()
    >>> t = ExpMLinearTarget(X, y, epsilon=2.0)
    >>> float(t.log_density(torch.zeros(1, 2, dtype=torch.float64))[0])  # -(3 * 0.25) * 2 / 2
    -0.75
    """

    def __init__(
        self,
        X,
        y01,
        *,
        epsilon,
        sensitivity=1.0,
        alpha=1.0,
        penalty="l2",
        fit_intercept=True,
        data_batch_size=None,
        generator=None,
        monotone=False,
    ):
        if not (math.isfinite(epsilon) and epsilon > 0):
            raise ValueError("epsilon must be finite and > 0 for the sampled target")
        if not alpha > 0:
            raise ValueError("alpha must be > 0 (alpha = 0 makes the target improper)")
        rate = float(epsilon) / ((1.0 if monotone else 2.0) * float(sensitivity)) * float(alpha)
        if not _MIN_PRIOR_RATE <= rate <= _MAX_PRIOR_RATE:
            # the prior's scale 1/sqrt(rate) (samples of ~1e150 at epsilon = 1e-300) or its
            # Hessian (~1e300 at alpha = 1e300) overflows: NaN losses, a failed eigh
            raise ValueError(
                f"epsilon * alpha / ({'1' if monotone else '2'} sensitivity), the rate of the "
                f"ExpM prior, must lie in [{_MIN_PRIOR_RATE:g}, {_MAX_PRIOR_RATE:g}] (got "
                f"{rate:.3g}): a rate outside makes the target overflow float64; choose "
                "epsilon and alpha nearer 1"
            )
        if penalty not in ("l2", "l1"):
            raise ValueError("penalty must be 'l2' or 'l1'")
        self.X = X
        self.y = y01
        self.epsilon = float(epsilon)
        self.sensitivity = float(sensitivity)
        self.alpha = float(alpha)
        self.penalty = penalty
        self.fit_intercept = bool(fit_intercept)
        self.data_batch_size = data_batch_size
        self.generator = generator
        self.monotone = bool(monotone)
        self.n = int(X.shape[0])
        self.dim = int(X.shape[1]) + int(self.fit_intercept)

    @property
    def beta(self) -> float:
        """Inverse temperature ``epsilon / (2 s)`` (``epsilon / s`` when ``monotone``)."""
        return self.epsilon / ((1.0 if self.monotone else 2.0) * self.sensitivity)

    # -- pieces -----------------------------------------------------------------------------
    def _split(self, theta):
        if self.fit_intercept:
            return theta[..., :-1], theta[..., -1]
        return theta, torch.zeros(theta.shape[:-1], dtype=theta.dtype, device=theta.device)

    def summed_loss(self, theta, X=None, y=None):
        """``sum_i (sigmoid(x_i^T w + b) - y_i)^2`` per row of ``theta`` (``(N, D) -> (N,)``)."""
        X = self.X if X is None else X
        y = self.y if y is None else y
        w, b = self._split(theta)
        n = X.shape[0]
        step = max(1, _CHUNK // max(n, 1))
        out = []
        for s in range(0, theta.shape[0], step):
            logits = X @ w[s : s + step].T + b[s : s + step]  # (n, N)
            out.append(((torch.sigmoid(logits) - y[:, None]) ** 2).sum(0))
        return torch.cat(out) if out else theta.new_zeros(0)

    def regulariser(self, theta):
        """``r(theta)``: ``||theta||_2^2`` or ``||theta||_1`` (all coordinates)."""
        return (theta * theta).sum(-1) if self.penalty == "l2" else theta.abs().sum(-1)

    def log_density(self, theta, *, full=False):
        """``(epsilon / 2s) * u(theta)``; a mini-batch estimate unless ``full`` or no batching."""
        b = self.data_batch_size
        if full or b is None or b >= self.n:
            loss = self.summed_loss(theta)
        else:
            idx = torch.randperm(self.n, generator=self.generator, device=self.X.device)[:b]
            loss = self.summed_loss(theta, self.X[idx], self.y[idx]) * (self.n / b)
        return -self.beta * (loss + self.alpha * self.regulariser(theta))

    def __call__(self, theta):
        return self.log_density(theta)

    # -- prior and bounds --------------------------------------------------------------------
    def _prior_rate(self):
        return self.beta * self.alpha

    def log_prior(self, theta):
        """Normalised ``log pi(theta)``, ``pi ∝ exp(-(epsilon / 2s) alpha r(theta))``."""
        c, D = self._prior_rate(), self.dim
        if self.penalty == "l2":
            return -c * (theta * theta).sum(-1) + 0.5 * D * math.log(c / math.pi)
        return -c * theta.abs().sum(-1) + D * math.log(c / 2.0)

    def log_normalizer_upper(self):
        """``log Z_pi~ >= log Z`` (the loss term is ``<= 0``)."""
        c, D = self._prior_rate(), self.dim
        if self.penalty == "l2":
            return 0.5 * D * math.log(math.pi / c)
        return D * math.log(2.0 / c)

    def prior_std(self):
        """Per-coordinate standard deviation of ``pi``."""
        c = self._prior_rate()
        return math.sqrt(0.5 / c) if self.penalty == "l2" else math.sqrt(2.0) / c

    def utility_range(self):
        """``R = beta * n * l_max`` with ``l_max = 1`` (see :func:`expm_diagnostics`)."""
        return self.beta * self.n

    # -- Laplace approximation ---------------------------------------------------------------
    def mode(self, max_iter=200):
        """``argmin sum_i l_i + alpha r`` by L-BFGS from 0 (the ``epsilon -> inf`` limit)."""
        theta = torch.zeros(self.dim, dtype=self.X.dtype, device=self.X.device, requires_grad=True)
        opt = torch.optim.LBFGS(
            [theta], lr=1.0, max_iter=max_iter, line_search_fn="strong_wolfe", tolerance_grad=1e-9
        )
        scale = 1.0 / max(self.n, 1)

        def closure():
            opt.zero_grad()
            t = theta[None]
            f = (self.summed_loss(t) + self.alpha * self.regulariser(t))[0] * scale
            f.backward()
            return f

        opt.step(closure)
        return theta.detach()

    def laplace(self, theta0):
        """Gaussian approximation ``N(theta0, H^-1)`` of the target (``H`` floored to PD)."""

        def neg(t):
            return -self.log_density(t[None], full=True)[0]

        H = torch.autograd.functional.hessian(neg, theta0)
        H = 0.5 * (H + H.T)
        if not bool(torch.isfinite(H).all()):
            raise ValueError(
                "the ExpM target's Hessian at its mode is not finite: choose epsilon and alpha "
                "nearer 1, or rescale the bounds"
            )
        try:
            evals, evecs = torch.linalg.eigh(H)
        except RuntimeError:  # torch's LinAlgError: the eigensolver did not converge
            raise ValueError(
                "the Laplace approximation of the ExpM target failed (its Hessian is too ill "
                "conditioned): choose epsilon and alpha nearer 1, or init='prior'"
            ) from None
        floor = (
            2.0 * self._prior_rate()
            if self.penalty == "l2"
            else 1e-6 * max(float(evals.abs().max()), 1.0)
        )
        evals = torch.clamp(evals, min=floor)
        cov = (evecs / evals) @ evecs.T
        cov = 0.5 * (cov + cov.T)
        return torch.linalg.cholesky(cov)


@torch.no_grad()
def expm_diagnostics(flow, target, *, n_samples=2048, generator=None) -> dict:
    """Fit of a sampling flow ``q`` to the ExpM target ``p`` (see :func:`fit_expm_flow`).

    :func:`skdp.variational.importance_diagnostics` (full data, ``kl_upper_bound`` from
    ``log Z <= log Z_prior``) plus the utility-range sandwich: exact ExpM has
    ``|log p(theta) - log pi(theta)| <= R = epsilon n / (2 s)`` everywhere, so a larger
    ``max |log q - log pi|`` over flow samples proves ``q`` is not the mechanism's density.
    Uses ``generator`` for two draws of ``n_samples`` (importance weights, then the sandwich).
    """
    diag = importance_diagnostics(
        flow,
        lambda t: target.log_density(t, full=True),
        n_samples=n_samples,
        generator=generator,
        log_normalizer_upper=target.log_normalizer_upper(),
    )
    theta, log_q = flow.sample_and_log_prob(n_samples, generator=generator)
    gap = float((log_q - target.log_prior(theta)).abs().max())
    R = target.utility_range()
    diag["utility_range"] = R
    diag["max_abs_log_ratio_to_prior"] = gap
    diag["sandwich_violated"] = bool(gap > R)
    # sup |log q - log p| >= gap - R on this dataset (exact ExpM has |log p - log pi| <= R)
    diag["dp_distance_lower_bound"] = max(0.0, gap - R)
    diag["collapsed"] = bool(gap > R + SANDWICH_SLACK or diag["ess_fraction"] < MIN_ESS_FRACTION)
    return diag


def fit_expm_flow(
    target: ExpMLinearTarget,
    *,
    n_release: int = 1,
    n_flows: int = 4,
    flow_rank: int = 2,
    n_householder: int = 2,
    n_iter: int = 500,
    batch_size: int = 128,
    learning_rate: float = 1e-2,
    init: str = "laplace",
    n_diagnostic_samples: int = 2048,
    diagnostics: bool = True,
    streams: dict,
    device=None,
    dtype=torch.float64,
    verbose: int = 0,
) -> dict:
    """Train the sampling flow on ``target`` and draw ``n_release`` parameter vectors.

    Parameters
    ----------
    target : ExpMLinearTarget
    n_release : int, default=1
        Samples drawn from the trained flow (the caller budgets ``target.epsilon`` each).
    n_flows, flow_rank, n_householder
        Flow architecture (:func:`skdp.variational.build_sampling_flow`).
    n_iter, batch_size, learning_rate
        Reverse-KL training (:func:`skdp.variational.fit_reverse_kl`).
    init : {"laplace", "prior"}, default="laplace"
        Start the affine layer at the Laplace approximation of the target (mode and inverse
        Hessian, computed on the same private data as the training that follows) or at the
        data-independent prior.
    n_diagnostic_samples : int, default=2048
    diagnostics : bool, default=True
        Compute the diagnostics (un-noised functions of the private data); ``False``
        returns ``None`` in their place.
    streams : dict of torch.Generator
        Keys ``"init"``, ``"train"``, ``"diagnostics"``, ``"release"``.
    device, dtype
        Where the flow lives.
    verbose : int, default=0

    Returns
    -------
    dict
        ``samples`` (ndarray ``(n_release, D)``), ``flow`` (trained, eval mode),
        ``diagnostics`` (dict: :func:`skdp.variational.importance_diagnostics` plus
        ``utility_range`` ``R``, ``max_abs_log_ratio_to_prior`` (over flow samples),
        ``sandwich_violated`` (that max ``> R``: ``q`` is certainly not the ExpM density),
        ``dp_distance_lower_bound`` (``max(0, that max - R)``, a lower bound on
        ``sup |log q - log p|`` for this dataset), ``collapsed`` (that max ``> R +``
        :data:`SANDWICH_SLACK` or ESS fraction ``<`` :data:`MIN_ESS_FRACTION`)),
        ``history`` (losses).
    """
    D = target.dim
    if init == "laplace":
        loc = target.mode()
        L = target.laplace(loc)
    elif init == "prior":
        loc = torch.zeros(D, dtype=torch.float64)
        L = torch.eye(D, dtype=torch.float64) * target.prior_std()
    else:
        raise ValueError("init must be 'laplace' or 'prior'")
    flow = build_sampling_flow(
        D,
        loc=loc.detach().cpu().double(),
        scale_tril=L.detach().cpu().double(),
        n_flows=n_flows,
        flow_rank=flow_rank,
        n_householder=n_householder,
        generator=streams["init"],
    ).to(dtype=dtype, device=device)
    history = fit_reverse_kl(
        flow,
        target,
        n_iter=n_iter,
        batch_size=batch_size,
        learning_rate=learning_rate,
        generator=streams["train"],
        verbose=verbose,
    )
    flow.eval()
    for p in flow.parameters():
        p.requires_grad_(False)
    diag = (
        expm_diagnostics(
            flow, target, n_samples=n_diagnostic_samples, generator=streams["diagnostics"]
        )
        if diagnostics
        else None
    )
    with torch.no_grad():
        released = flow.sample(n_release, generator=streams["release"])
    return {
        "samples": released.detach().cpu().double().numpy(),
        "flow": flow,
        "diagnostics": diag,
        "history": history,
    }


def sample_expm_linear(
    X,
    y01,
    *,
    epsilon,
    rngs,
    alpha=1.0,
    penalty="l2",
    fit_intercept=True,
    n_release=1,
    data_batch_size=None,
    monotone=False,
    device="cpu",
    dtype="float64",
    n_jobs=None,
    **flow_kwargs,
) -> dict:
    """Numpy front end of :func:`fit_expm_flow` (what the estimators call).

    Parameters
    ----------
    X : ndarray of shape (n, d)
    y01 : ndarray of shape (n,)
        Targets already in ``[0, 1]``.
    epsilon : float
        Budget of **one** released sample; ``inf`` returns the mode (no flow).
    rngs : dict of numpy.random.Generator
        Keys ``"init"``, ``"train"``, ``"diagnostics"``, ``"release"``, ``"batches"``; each
        seeds one ``torch.Generator``.
    alpha, penalty, fit_intercept, data_batch_size, monotone
        See :class:`ExpMLinearTarget`.
    n_release : int, default=1
    device, dtype
        Torch device and dtype (strings as in :mod:`skdp.utils._torch`).
    n_jobs : int or None, default=None
        Torch CPU threads during the work (:func:`skdp.utils._torch.resolve_n_threads`
        with ``batch_size * rows per step * (d + 1)`` as the step's size); the previous
        count is restored afterwards, also on an exception.
    **flow_kwargs
        ``n_flows``, ``flow_rank``, ``n_householder``, ``n_iter``, ``batch_size``,
        ``learning_rate``, ``init``, ``n_diagnostic_samples``, ``verbose``.

    Returns
    -------
    dict
        As :func:`fit_expm_flow` (``flow`` and ``diagnostics`` are ``None`` for ``epsilon=inf``).
    """
    from skdp.utils._torch import resolve_device, resolve_n_threads, torch_threads

    dev = resolve_device(device)
    n, d = np.shape(X)
    rows = n if data_batch_size is None else min(int(data_batch_size), n)
    step_work = int(flow_kwargs.get("batch_size", 128)) * rows * (d + 1)
    with torch_threads(resolve_n_threads(n_jobs, step_work=step_work, device=dev)):
        return _sample_expm_linear(
            X,
            y01,
            epsilon=epsilon,
            rngs=rngs,
            alpha=alpha,
            penalty=penalty,
            fit_intercept=fit_intercept,
            n_release=n_release,
            data_batch_size=data_batch_size,
            monotone=monotone,
            dev=dev,
            dtype=dtype,
            **flow_kwargs,
        )


def _sample_expm_linear(
    X,
    y01,
    *,
    epsilon,
    rngs,
    alpha,
    penalty,
    fit_intercept,
    n_release,
    data_batch_size,
    monotone,
    dev,
    dtype,
    **flow_kwargs,
) -> dict:
    from skdp.utils._torch import resolve_dtype, to_tensor, torch_generator

    tdt = resolve_dtype(dtype)
    Xt = to_tensor(np.array(X, dtype=np.float64), device=dev, dtype=tdt)
    yt = to_tensor(np.array(y01, dtype=np.float64), device=dev, dtype=tdt)
    gens = {k: torch_generator(rngs[k], dev) for k in ("init", "train", "diagnostics", "release")}
    gens["init"] = torch_generator(rngs["init"], "cpu")  # parameters are built on the CPU
    batch_gen = torch_generator(rngs["batches"], dev)
    finite = math.isfinite(epsilon)
    target = ExpMLinearTarget(
        Xt,
        yt,
        epsilon=epsilon if finite else 1.0,
        alpha=alpha,
        penalty=penalty,
        fit_intercept=fit_intercept,
        data_batch_size=data_batch_size,
        generator=batch_gen,
        monotone=monotone,
    )
    if not finite:
        mode = target.mode().detach().cpu().double().numpy()
        return {
            "samples": np.repeat(mode[None], n_release, 0),
            "flow": None,
            "diagnostics": None,
            "history": [],
        }
    return fit_expm_flow(
        target, n_release=n_release, streams=gens, device=dev, dtype=tdt, **flow_kwargs
    )


def draw_from_flow(flow, n_samples, rng) -> np.ndarray:
    """Draw ``n_samples`` parameter vectors from a trained sampling flow (numpy out)."""
    from skdp.utils._torch import to_numpy, torch_generator

    ref = next(flow.parameters())
    gen = torch_generator(rng, ref.device)
    with torch.no_grad():
        return to_numpy(flow.sample(int(n_samples), generator=gen))


__all__ += ["sample_expm_linear", "draw_from_flow"]
