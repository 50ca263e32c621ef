"""train_dpsgd: calibrate the noise, run exactly ``n_iter`` accounted DP-SGD steps."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch
from torch import nn
from torch.func import vmap

from skdp.accounting import calibrate_noise_multiplier, compute_epsilon, get_accountant
from skdp.training._loop import run_steps
from skdp.training._trainer import DPSGDTrainer

__all__ = ["TrainingResult", "train_dpsgd"]


@dataclass
class TrainingResult:
    """What :func:`train_dpsgd` did (all privacy-safe: no statistic of the data).

    Attributes
    ----------
    noise_multiplier, sample_rate : float
    n_steps : int
        Executed (and accounted) steps.
    epsilon_spent, delta_spent : float
        The accountant's epsilon after ``n_steps`` at ``delta_spent`` (``inf`` if not private).
    guarantee : {"exact", "approximate"}
    history : dict
        ``{"step": [...], "epsilon": [...]}`` at the logged steps; for non-private runs also
        ``"loss"`` (mean training loss of the batch, which is fine without privacy).
    """

    noise_multiplier: float
    sample_rate: float
    n_steps: int
    epsilon_spent: float
    delta_spent: float
    guarantee: str
    history: dict = field(default_factory=dict)


def train_dpsgd(
    module: nn.Module,
    loss_fn: Callable,
    data: Sequence[torch.Tensor],
    *,
    epsilon: float,
    delta: float,
    n_iter: int,
    sample_rate: float | None = None,
    batch_size: float | None = None,
    noise_multiplier: float | None = None,
    max_grad_norm: float = 1.0,
    optimizer: str | torch.optim.Optimizer = "adam",
    learning_rate: float = 1e-3,
    accountant: str = "rdp",
    random_state=None,
    method: str = "auto",
    batch_transform: Callable | None = None,
    callback: Callable | None = None,
    log_every: int | None = None,
    groups=None,
) -> TrainingResult:
    """Train ``module`` with DP-SGD for exactly ``n_iter`` accounted steps.

    Parameters
    ----------
    module : torch.nn.Module
        On its device and dtype; trained in place.
    loss_fn : callable ``(output_row, *target_rows) -> scalar``
        Per-record loss.
    data : sequence of torch.Tensor
        ``(inputs, *targets)``, each with the records along the first axis.
    epsilon : float
        Total epsilon of this training (``inf``: non-private training, no clipping or noise).
    delta : float
    n_iter : int
        Number of optimizer steps (each one accounted).
    sample_rate, batch_size : float, optional
        Poisson rate ``q``, or the expected batch size (``q = min(1, batch_size / n)``;
        with ``groups`` the expected number of patients, ``n`` the number of patients).
    noise_multiplier : float, optional
        ``None`` calibrates the smallest sigma whose ``n_iter`` steps meet
        ``(epsilon, delta)``; a given value whose epsilon exceeds ``epsilon`` raises
        ``ValueError`` before any training.
    max_grad_norm : float
    optimizer, learning_rate, accountant, random_state, method, batch_transform
        See :class:`DPSGDTrainer`.
    callback : callable, optional
        ``callback(step, trainer, result_history)`` after every logged step.
    log_every : int, optional
        Log every that many steps (default ``max(1, n_iter // 50)``) and at the last step.
    groups : RecordGroups, optional
        Patient-level DP-SGD (:class:`DPSGDTrainer`): patients are sampled and clipped,
        and ``(epsilon, delta)`` hold per patient.

    Returns
    -------
    TrainingResult

    Notes
    -----
    Add/remove-one-record neighbours with ``n`` public. Each step is the Poisson-subsampled
    Gaussian mechanism on the sum of per-record gradients clipped to L2 norm
    ``max_grad_norm`` (its L2 sensitivity), with noise ``N(0, sigma^2 C^2 I)`` added once;
    ``n_iter`` steps are composed by the accountant (RDP by default: a proven bound,
    ``guarantee="exact"``; ``"gdp_clt"`` is approximate). The module must not mix records.
    With ``groups`` the neighbours differ by one patient with all their rows, the sampled
    unit is the patient and each patient's gradient sum (divided by the public bound
    ``k``) is clipped to ``max_grad_norm`` (:mod:`skdp.training._patients`).

    Examples
    --------
    >>> import torch
    >>> from skdp.training import train_dpsgd
    >>> gen = torch.Generator().manual_seed(0)
    >>> X = torch.randn(200, 3, generator=gen, dtype=torch.float64)
    >>> y = X.sum(1)
    >>> model = torch.nn.Linear(3, 1).double()
    >>> res = train_dpsgd(model, lambda out, yi: (out[0] - yi) ** 2, (X, y), epsilon=2.0,
    ...                   delta=1e-5, n_iter=50, batch_size=40, learning_rate=0.05,
    ...                   random_state=0)
    >>> res.n_steps, res.epsilon_spent <= 2.0, res.guarantee
    (50, True, 'exact')
    """
    n = int(data[0].shape[0]) if groups is None else int(groups.n_groups)
    if sample_rate is None:
        if batch_size is None:
            raise ValueError("give sample_rate or batch_size")
        sample_rate = min(1.0, float(batch_size) / n)
    q = float(sample_rate)
    if not 0 < q <= 1:
        raise ValueError(f"sample_rate must be in (0, 1], got {q}")
    n_iter = int(n_iter)
    if n_iter < 1:
        raise ValueError("n_iter must be >= 1")
    private = math.isfinite(epsilon)
    guarantee = get_accountant(accountant).guarantee
    sigma = 0.0
    if private:
        sigma = _noise_multiplier(epsilon, delta, q, n_iter, noise_multiplier, accountant)
    trainer = DPSGDTrainer(
        module,
        loss_fn,
        n_samples=int(data[0].shape[0]),
        sample_rate=q,
        noise_multiplier=sigma,
        max_grad_norm=max_grad_norm if private else None,
        private=private,
        optimizer=optimizer,
        learning_rate=learning_rate,
        accountant=accountant,
        random_state=random_state,
        method=method,
        batch_transform=batch_transform,
        groups=groups,
    )
    history: dict[str, list] = {"step": [], "epsilon": []}
    if not private:
        history["loss"] = []

    def record_loss(t):  # non-private runs only: a loss of the training data
        history["loss"].append(_mean_loss(trainer, data))

    devices = [trainer.device.index or 0] if trainer.device.type == "cuda" else []
    with torch.random.fork_rng(devices=devices):
        module.train()
        run_steps(
            lambda t: trainer.step(data),
            n_iter,
            epsilon=(lambda: trainer.epsilon(delta)) if private else None,
            history=history,
            every=log_every,
            on_log=None if private else record_loss,
            progress=None if callback is None else (lambda t: callback(t, trainer, history)),
        )
    module.eval()
    return TrainingResult(
        noise_multiplier=sigma,
        sample_rate=q,
        n_steps=trainer.n_steps,
        epsilon_spent=trainer.epsilon(delta),
        delta_spent=float(delta) if private else 0.0,
        guarantee=guarantee if private else "exact",
        history=history,
    )


def _noise_multiplier(epsilon, delta, q, n_iter, noise_multiplier, accountant) -> float:
    """The smallest sigma whose ``n_iter`` steps meet ``(epsilon, delta)``, or the given
    one (``ValueError`` before any training when it spends more than ``epsilon``)."""
    if noise_multiplier is None:
        return calibrate_noise_multiplier(
            epsilon=epsilon, delta=delta, sample_rate=q, steps=n_iter, accountant=accountant
        )
    sigma = float(noise_multiplier)
    if sigma <= 0:
        raise ValueError("noise_multiplier must be > 0 for a private fit")
    planned = compute_epsilon(
        noise_multiplier=sigma, sample_rate=q, steps=n_iter, delta=delta, accountant=accountant
    )
    if planned > epsilon * (1 + 1e-12):
        raise ValueError(
            f"noise_multiplier={sigma:g} gives epsilon={planned:.4g} over {n_iter} "
            f"steps, more than the budget epsilon={epsilon:g}; raise noise_multiplier "
            "or leave it None to calibrate it"
        )
    return sigma


def _mean_loss(trainer: DPSGDTrainer, data, max_rows: int = 4096) -> float:
    """Mean loss over (up to ``max_rows`` of) the data; non-private runs only."""
    with torch.no_grad():
        x = data[0][:max_rows]
        targets = [t[:max_rows] for t in data[1:]]
        out = trainer.module(x)
        return float(vmap(trainer.loss_fn)(out, *targets).mean().item())
