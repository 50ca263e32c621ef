"""Fit a normalizing flow to an unnormalised log-density by reverse KL (no privacy concepts).

Shared by the flow-sampled exponential mechanism (:mod:`skdp.variational._expm`) and any other
variational sampler over parameters. The flow is a :class:`skdp.flows.Flow` in the library's
convention; samples come from its closed-form sampling direction ``inverse_and_ladj``.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from skdp.flows import BoxSigmoid, CholeskyAffine, Flow, Sylvester
from skdp.utils._logging import get_logger, log_progress, verbose_handler

__all__ = ["build_sampling_flow", "fit_reverse_kl", "importance_diagnostics"]

_logger = get_logger(__name__)


def build_sampling_flow(
    n_features: int,
    *,
    loc=None,
    scale_tril=None,
    n_flows: int = 4,
    flow_rank: int = 2,
    n_householder: int = 2,
    box=None,
    generator: torch.Generator | None = None,
) -> Flow:
    """Affine + Householder-Sylvester flow for sampling ``theta`` (after Bridges et al. 2023).

    Sampling direction: ``z ~ N(0, I)`` -> ``n_flows`` :class:`skdp.flows.Sylvester` layers
    (invertibility enforced, initialised near the identity) -> :class:`~skdp.flows.CholeskyAffine`
    (``loc``, ``scale_tril``) -> optionally :class:`~skdp.flows.BoxSigmoid` onto ``box = (lo, hi)``.
    At initialisation the flow is (almost exactly) ``N(loc, L L^T)``.

    Parameters
    ----------
    n_features : int
    loc, scale_tril : array-like, optional
        Initial Gaussian (default ``N(0, I)``).
    n_flows : int, default=4
        Number of Sylvester layers (0 gives a pure Gaussian family).
    flow_rank : int, default=2
        Sylvester rank ``m`` (capped at ``n_features``).
    n_householder : int, default=2
        Householder reflections per Sylvester layer.
    box : None or (lo, hi)
        Confine samples to the open box (the affine part then acts on the logit scale).
    generator : torch.Generator, optional
        Initial Sylvester parameters.

    Returns
    -------
    Flow
        In torch's default dtype on the CPU; call ``.to(dtype=..., device=...)``.

    Examples
    --------
    >>> import torch
    >>> from skdp.variational import build_sampling_flow
    >>> flow = build_sampling_flow(3, n_flows=2, generator=torch.Generator().manual_seed(0))
    >>> flow.sample(4, generator=torch.Generator().manual_seed(1)).shape
    torch.Size([4, 3])
    """
    d = int(n_features)
    layers = []
    if box is not None:
        layers.append(BoxSigmoid(d, *box))
    layers.append(CholeskyAffine(d, loc=loc, scale_tril=scale_tril))
    m = max(1, min(int(flow_rank), d))
    for _ in range(int(n_flows)):
        layer = Sylvester(d, m, int(n_householder), generator=generator)
        with torch.no_grad():  # near-identity start: R ~ 0
            layer.r_upper.mul_(1e-2)
            layer.rho.mul_(1e-2)
        layers.append(layer)
    return Flow(layers, n_features=d)


def fit_reverse_kl(
    flow: Flow,
    log_density: Callable[[torch.Tensor], torch.Tensor],
    *,
    n_iter: int = 1000,
    batch_size: int = 128,
    learning_rate: float = 1e-2,
    generator: torch.Generator | None = None,
    lr_schedule: str = "cosine",
    verbose: int = 0,
) -> list[float]:
    """Train ``flow`` by Monte-Carlo reverse KL against an unnormalised log-density.

    Minimises ``mean_i [log q(theta_i) - log p~(theta_i)]`` over ``theta_i = g(z_i)``,
    ``z_i ~ N(0, I)`` fresh each step (Bridges et al. 2023, Sec. 2.2; the ``log p_z`` term is
    kept, so the value is ``KL(q || p) - log Z``), with Adam.

    Parameters
    ----------
    flow : skdp.flows.Flow
        Trained in place; its sampling direction must be closed form.
    log_density : callable
        ``theta`` of shape ``(N, d)`` -> unnormalised log-density of shape ``(N,)``
        (differentiable in ``theta``). It may be stochastic (mini-batches).
    n_iter : int, default=1000
    batch_size : int, default=128
        Number of flow samples per step.
    learning_rate : float, default=1e-2
    generator : torch.Generator, optional
        Source of the base noise (on the flow's device).
    lr_schedule : {"cosine", "constant"}, default="cosine"
        Cosine decay of the learning rate to 5 % of its start (less Monte-Carlo jitter in
        the final flow) or a constant rate.
    verbose : int, default=0
        When positive, show the progress on standard error (a handler on the ``"skdp"``
        logger; the progress records, every ``max(1, n_iter // 10)`` steps, are logged
        either way). The loss is not in them: the target is built from the training
        data, so its loss is an un-noised function of it.

    Returns
    -------
    list of float
        The loss of every step (``KL(q || p) - log Z`` estimates).

    Raises
    ------
    ValueError
        If a step's loss is not finite (the flow diverged: a learning rate too large
        for the target, or float32 overflow).

    Examples
    --------
    >>> import torch
    >>> from skdp.variational import build_sampling_flow, fit_reverse_kl
    >>> flow = build_sampling_flow(2, n_flows=0).double()
    >>> target = lambda t: -0.5 * ((t - 3.0) ** 2).sum(-1)
    >>> hist = fit_reverse_kl(flow, target, n_iter=100, learning_rate=0.1,
    ...                       generator=torch.Generator().manual_seed(0))
    >>> bool(abs(flow.transforms[0].loc.mean().item() - 3.0) < 0.2)
    True
    """
    params = [p for p in flow.parameters() if p.requires_grad]
    opt = torch.optim.Adam(params, lr=learning_rate)
    if lr_schedule not in ("cosine", "constant"):
        raise ValueError("lr_schedule must be 'cosine' or 'constant'")
    sched = None
    if lr_schedule == "cosine" and n_iter > 0:
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(
            opt, T_max=int(n_iter), eta_min=0.05 * learning_rate
        )
    history: list[float] = []
    every = max(1, n_iter // 10)
    with verbose_handler(verbose):
        for step in range(int(n_iter)):
            opt.zero_grad(set_to_none=True)
            theta, log_q = flow.sample_and_log_prob(batch_size, generator=generator)
            loss = (log_q - log_density(theta)).mean()
            if not torch.isfinite(loss):
                # a parameter choice (an overflowing step), not a data fact: the flow
                # diverged. ValueError, as for any bad parameter
                raise ValueError(
                    f"the reverse-KL fit diverged at step {step + 1} (its loss is not "
                    "finite): lower learning_rate, or use dtype='float64'"
                )
            loss.backward()
            opt.step()
            if sched is not None:
                sched.step()
            history.append(float(loss.detach()))
            if step % every == 0 or step == n_iter - 1:
                # the target is built from the training data: its loss is not logged
                log_progress(
                    _logger,
                    estimator="reverse-KL",
                    phase="reverse-KL",
                    step=step + 1,
                    total=int(n_iter),
                )
    return history


@torch.no_grad()
def importance_diagnostics(
    flow: Flow,
    log_density: Callable[[torch.Tensor], torch.Tensor],
    *,
    n_samples: int = 4096,
    generator: torch.Generator | None = None,
    log_normalizer_upper: float | None = None,
) -> dict:
    """How well ``q`` (the flow) fits ``p ∝ exp(log_density)``, from importance weights.

    With ``w_i = p~(theta_i) / q(theta_i)``, ``theta_i ~ q``:

    * ``elbo`` = ``mean log w`` (``= log Z - KL(q || p)``);
    * ``log_z_estimate`` = ``log mean w``;
    * ``kl_estimate`` = ``log_z_estimate - elbo`` (importance-sampling estimate of
      ``KL(q || p)``; biased low when ``q`` misses mass of ``p``);
    * ``kl_upper_bound`` = ``log_normalizer_upper - elbo`` when an upper bound on ``log Z`` is
      known (valid up to the Monte-Carlo error of ``elbo``); else ``nan``;
    * ``ess`` = ``(sum w)^2 / sum w^2`` and ``ess_fraction`` = ``ess / n_samples``
      (near 1: good fit; near ``1/n_samples``: one sample carries all the weight).

    Parameters
    ----------
    flow : skdp.flows.Flow
    log_density : callable
        Deterministic unnormalised log-density (``(N, d) -> (N,)``).
    n_samples : int, default=4096
    generator : torch.Generator, optional
    log_normalizer_upper : float, optional
        Known upper bound on ``log Z``.

    Returns
    -------
    dict
        The keys above plus ``"n_samples"``.
    """
    theta, log_q = flow.sample_and_log_prob(n_samples, generator=generator)
    log_w = (log_density(theta) - log_q).to(torch.float64)
    elbo = float(log_w.mean())
    log_z = float(torch.logsumexp(log_w, 0) - math.log(n_samples))
    log_w_n = log_w - torch.logsumexp(log_w, 0)
    ess = float(torch.exp(-torch.logsumexp(2 * log_w_n, 0)))
    upper = math.nan if log_normalizer_upper is None else float(log_normalizer_upper) - elbo
    return {
        "elbo": elbo,
        "log_z_estimate": log_z,
        "kl_estimate": log_z - elbo,
        "kl_upper_bound": upper,
        "ess": ess,
        "ess_fraction": ess / n_samples,
        "n_samples": int(n_samples),
    }
