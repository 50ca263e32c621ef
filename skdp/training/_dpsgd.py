"""The DP-SGD engine: Poisson sampling, per-sample gradients, flat clipping, noise once.

Normative step (spec ``dp_flow.md`` §2.5; spec README §3 S1; ``dp_gan.md`` §6.6): for
parameters ``w``, a per-record loss ``l(w; x_i)``, public ``n``, sample rate ``q`` and
expected batch size ``B = q n``:

1. Poisson mask ``m_i ~ Bernoulli(q)`` i.i.d. from the ``sampling`` stream (an empty batch
   is a legal step);
2. per-sample gradients ``g_i`` with ``torch.func.vmap(torch.func.grad(...))`` over
   ``torch.func.functional_call`` (a microbatch loop is the reference fallback), or, for
   modules whose parameters all sit in linear / masked-linear layers, the exact
   book-keeping ("ghost clipping") path that never materialises them
   (:func:`ghost_clip_and_sum`; tested against the same oracle);
3. flat L2 clipping over all parameters ``g_i * min(1, C / ||g_i||)`` (zero norm kept,
   non-finite gradients replaced by 0 and counted);
4. one Gaussian draw ``N(0, sigma^2 C^2 I)`` on the sum, from the ``noise`` stream;
5. division by the *expected* batch size ``B`` (never the realised one);
6. the optimizer step (post-processing);
7. one accountant step ``accountant.step(noise_multiplier=sigma, sample_rate=q)``.

Nothing here knows about flows (layer L3 imports only torch, L0 and L1).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn
from torch.func import functional_call, grad, vmap

from skdp.accounting import calibrate_noise_multiplier, compute_epsilon, get_accountant
from skdp.utils._random import spawn_streams
from skdp.utils._torch import torch_generator

__all__ = [
    "DPSGDTrainer",
    "TrainingResult",
    "check_per_record_module",
    "clip_and_sum",
    "per_sample_gradients",
    "train_dpsgd",
]

_METHODS = ("auto", "ghost", "vmap", "loop")

_OPTIMIZERS = {
    "adam": torch.optim.Adam,
    "sgd": torch.optim.SGD,
    "rmsprop": torch.optim.RMSprop,
}


# --------------------------------------------------------------------------- checks
def check_per_record_module(module: nn.Module) -> nn.Module:
    """Raise ``ValueError`` if ``module`` holds a layer that mixes records or keeps data statistics.

    BatchNorm (any variant) couples the rows of a batch, so one record's clipped gradient no
    longer bounds its influence, and its running statistics are un-noised functions of the
    data (spec ``dp_flow.md`` §2.4 H1, ``dp_gan.md`` H3). Any layer that tracks running
    statistics (``track_running_stats=True``, ``running_mean`` buffers) is refused for the
    second reason.
    """
    for name, sub in module.named_modules():
        label = name or type(module).__name__
        if isinstance(sub, nn.modules.batchnorm._BatchNorm | nn.modules.batchnorm._LazyNormBase):
            raise ValueError(
                f"module {label!r} ({type(sub).__name__}) mixes the records of a batch; "
                "BatchNorm cannot be trained with DP-SGD. Use LayerNorm/GroupNorm or none."
            )
        if getattr(sub, "track_running_stats", False) or any(
            b in dict(sub.named_buffers(recurse=False)) for b in ("running_mean", "running_var")
        ):
            raise ValueError(
                f"module {label!r} ({type(sub).__name__}) keeps running statistics of the "
                "data, which would be released without noise; it cannot be used with DP-SGD."
            )
    return module


# ----------------------------------------------------------------- per-sample pieces
def _record_loss_fn(module: nn.Module, loss_fn: Callable) -> Callable:
    def record_loss(params, buffers, x, *targets):
        out = functional_call(module, (params, buffers), (x.unsqueeze(0),))
        return loss_fn(out[0], *targets)

    return record_loss


def per_sample_gradients(
    module: nn.Module,
    loss_fn: Callable,
    inputs: torch.Tensor,
    *targets: torch.Tensor,
    params: dict | None = None,
    method: str = "vmap",
) -> dict[str, torch.Tensor]:
    """Per-record gradients ``{name: tensor of shape (b, *param.shape)}``.

    Parameters
    ----------
    module : torch.nn.Module
        Called on a batch of one record, ``module(x[None])``; its output's first row is
        passed to ``loss_fn``.
    loss_fn : callable ``(output_row, *target_rows) -> scalar tensor``
        The per-record loss (e.g. ``lambda lp: -lp`` for a log-likelihood module).
    inputs : torch.Tensor of shape (b, ...)
        The records (``b = 0`` is allowed and gives empty gradients).
    *targets : torch.Tensor of shape (b, ...)
        Per-record extra data (labels, per-record noise drawn outside vmap, ...).
    params : dict, optional
        Parameters to differentiate (default: the module's trainable parameters, detached).
    method : {"vmap", "loop"}
        ``"vmap"``: ``torch.func.vmap(torch.func.grad(...))``; ``"loop"``: one
        ``torch.func.grad`` call per record (the reference fallback).
    """
    if params is None:
        params = {k: v.detach() for k, v in module.named_parameters() if v.requires_grad}
    buffers = {k: v.detach() for k, v in module.named_buffers()}
    g = grad(_record_loss_fn(module, loss_fn))
    if method == "vmap":
        in_dims = (None, None, 0) + (0,) * len(targets)
        return vmap(g, in_dims=in_dims)(params, buffers, inputs, *targets)
    if method != "loop":
        raise ValueError(f"method must be 'vmap' or 'loop', got {method!r}")
    rows = [g(params, buffers, inputs[i], *(t[i] for t in targets)) for i in range(len(inputs))]
    if not rows:
        return {
            k: torch.zeros((0, *v.shape), dtype=v.dtype, device=v.device) for k, v in params.items()
        }
    return {k: torch.stack([r[k] for r in rows]) for k in params}


def clip_and_sum(
    per_sample: dict[str, torch.Tensor], max_grad_norm: float
) -> tuple[dict[str, torch.Tensor], torch.Tensor, int]:
    """Flat L2 clipping of every record's gradient, then the sum over records.

    Returns
    -------
    summed : dict {name: tensor of shape param.shape}
        ``sum_i g_i min(1, C / ||g_i||)`` with the norm over all parameters together.
    norms : torch.Tensor of shape (b,)
        The unclipped per-record norms (private: never release them).
    n_nonfinite : int
        Records whose gradient was not finite (replaced by 0).
    """
    ref = next(iter(per_sample.values()))
    b = ref.shape[0]
    if b == 0:
        zero = torch.zeros(0, dtype=ref.dtype, device=ref.device)
        summed = {
            k: torch.zeros(v.shape[1:], dtype=v.dtype, device=v.device)
            for k, v in per_sample.items()
        }
        return summed, zero, 0
    flat = [g.reshape(b, -1) for g in per_sample.values()]
    sq = torch.stack([(f * f).sum(1) for f in flat]).sum(0)
    norms = sq.sqrt()
    finite = torch.isfinite(norms)
    safe = torch.where(finite & (norms > 0), norms, torch.ones_like(norms))
    factor = torch.clamp(max_grad_norm / safe, max=1.0)
    factor = torch.where(finite, factor, torch.zeros_like(factor))
    summed = {}
    for k, g in per_sample.items():
        gf = g.reshape(b, -1)
        gf = torch.where(finite[:, None], gf, torch.zeros_like(gf))
        summed[k] = (factor @ gf).reshape(g.shape[1:])
    return summed, norms, int((~finite).sum().item())


# ------------------------------------------------------------------------- trainer
class DPSGDTrainer:
    """One DP-SGD step at a time over a module and a per-record loss.

    Parameters
    ----------
    module : torch.nn.Module
        Already on its device and dtype. Must not mix records (see
        :func:`check_per_record_module`).
    loss_fn : callable ``(output_row, *target_rows) -> scalar``
        Per-record loss of the module's output on one record.
    n_samples : int
        Public number of records ``n``.
    sample_rate : float
        Poisson sampling probability ``q`` in (0, 1].
    noise_multiplier : float
        ``sigma`` >= 0. The noise SD on the summed clipped gradients is ``sigma * C``.
    max_grad_norm : float or None
        Clipping norm ``C``. ``None`` (only with ``private=False``) disables clipping.
    private : bool, default=True
        ``False``: ordinary mini-batch training (Poisson batches, mean of the summed
        gradients over the expected batch size, no clipping, no noise, no accounting).
    optimizer : {"adam", "sgd", "rmsprop"}, default="adam"
    learning_rate : float, default=1e-3
    accountant : str, default="rdp"
        Registry key (:func:`skdp.accounting.get_accountant`).
    random_state : None, int, SeedSequence or Generator
        Seeds the ``sampling`` and ``noise`` streams (spawned in that order).
    method : {"auto", "ghost", "vmap", "loop"}, default="auto"
        How the clipped sum is computed. ``"vmap"``: per-sample gradients with
        ``torch.func.vmap(grad(...))``; ``"loop"``: one ``grad`` per record (reference);
        ``"ghost"``: the exact book-keeping path of :func:`ghost_clip_and_sum` (every
        trainable parameter in a linear or masked-linear layer); ``"auto"``: ghost when the
        module qualifies, else vmap (and vmap if the forward pass turns out not to fit).
    batch_transform : callable, optional
        ``batch_transform(tensors) -> tensors`` applied to the sampled records outside vmap
        (e.g. dequantisation noise from a separate stream). It must act on each record
        separately.

    Attributes
    ----------
    accountant : skdp.accounting.Accountant
        Stepped once per executed step (private mode).
    n_steps : int
        Executed steps.
    n_nonfinite_grads : int
        Records whose per-sample gradient was not finite and was replaced by 0. A count
        over private records: diagnostics only, never release it.
    """

    def __init__(
        self,
        module: nn.Module,
        loss_fn: Callable,
        *,
        n_samples: int,
        sample_rate: float,
        noise_multiplier: float,
        max_grad_norm: float | None,
        private: bool = True,
        optimizer: str = "adam",
        learning_rate: float = 1e-3,
        accountant: str = "rdp",
        random_state=None,
        method: str = "auto",
        batch_transform: Callable | None = None,
    ):
        if not (isinstance(n_samples, int | np.integer) and n_samples >= 1):
            raise ValueError(f"n_samples must be a positive integer, got {n_samples!r}")
        if not (0.0 < float(sample_rate) <= 1.0):
            raise ValueError(f"sample_rate must be in (0, 1], got {sample_rate!r}")
        if private:
            if max_grad_norm is None or not (0 < float(max_grad_norm) < math.inf):
                raise ValueError("DP-SGD needs a finite max_grad_norm > 0")
            if not (0 <= float(noise_multiplier) < math.inf):
                raise ValueError(f"noise_multiplier must be >= 0, got {noise_multiplier!r}")
            check_per_record_module(module)
        if optimizer not in _OPTIMIZERS:
            raise ValueError(f"optimizer must be one of {sorted(_OPTIMIZERS)}, got {optimizer!r}")
        if method not in _METHODS:
            raise ValueError(f"method must be one of {_METHODS}, got {method!r}")
        self.module = module
        self.loss_fn = loss_fn
        self.n_samples = int(n_samples)
        self.sample_rate = float(sample_rate)
        self.expected_batch_size = self.sample_rate * self.n_samples
        self.noise_multiplier = float(noise_multiplier) if private else 0.0
        self.max_grad_norm = None if max_grad_norm is None else float(max_grad_norm)
        self.private = bool(private)
        self._linear_layers = linear_layers(module) if method in ("auto", "ghost") else None
        if method == "ghost" and self._linear_layers is None:
            raise ValueError(
                "method='ghost' needs every trainable parameter in a linear layer "
                "(nn.Linear or a masked linear layer); use method='vmap'"
            )
        if method == "auto":
            method = "ghost" if self._linear_layers is not None else "vmap"
        self.method = method
        self.batch_transform = batch_transform
        self.params = {k: p for k, p in module.named_parameters() if p.requires_grad}
        if not self.params:
            raise ValueError("module has no trainable parameters")
        ref = next(iter(self.params.values()))
        self.device, self.dtype = ref.device, ref.dtype
        self.optimizer = _OPTIMIZERS[optimizer](list(self.params.values()), lr=learning_rate)
        self.accountant = get_accountant(accountant)
        streams = spawn_streams(random_state, ["sampling", "noise"])
        self._sampling_rng = streams["sampling"]
        self._noise_gen = torch_generator(streams["noise"], self.device)
        self.n_steps = 0
        self.n_nonfinite_grads = 0

    # ------------------------------------------------------------------ pieces
    def sample_batch(self) -> np.ndarray:
        """Indices of one Poisson batch (each record independently with probability q)."""
        mask = self._sampling_rng.random(self.n_samples) < self.sample_rate
        return np.flatnonzero(mask)

    def noisy_gradient(
        self, data: Sequence[torch.Tensor], idx: np.ndarray | None = None
    ) -> tuple[dict[str, torch.Tensor], int]:
        """The privatised gradient ``g_hat`` of one step (no optimizer or accountant step).

        Returns ``(g_hat, realised batch size)``; the realised size is private and only for
        tests and diagnostics.
        """
        if idx is None:
            idx = self.sample_batch()
        index = torch.as_tensor(idx, dtype=torch.long, device=data[0].device)
        batch = [t.index_select(0, index) for t in data]
        if self.batch_transform is not None:
            batch = list(self.batch_transform(batch))
        if not self.private:
            return self._plain_gradient(batch), len(idx)
        summed = None
        if self.method == "ghost":
            try:
                summed, _, n_bad = ghost_clip_and_sum(
                    self.module,
                    self.loss_fn,
                    *batch,
                    max_grad_norm=self.max_grad_norm,
                    layers=self._linear_layers,
                )
            except GhostClippingUnsupported:
                self.method = "vmap"  # the forward pass does not fit; exact fallback
        if summed is None:
            per_sample = per_sample_gradients(
                self.module,
                self.loss_fn,
                *batch,
                params={k: p.detach() for k, p in self.params.items()},
                method=self.method,
            )
            summed, _, n_bad = clip_and_sum(per_sample, self.max_grad_norm)
        self.n_nonfinite_grads += n_bad
        std = self.noise_multiplier * self.max_grad_norm
        out = {}
        for k, s in summed.items():  # fixed (named_parameters) order: reproducible noise
            noise = torch.randn(
                s.shape, generator=self._noise_gen, device=self.device, dtype=self.dtype
            )
            out[k] = (s + std * noise) / self.expected_batch_size
        return out, len(idx)

    def _plain_gradient(self, batch) -> dict[str, torch.Tensor]:
        x, targets = batch[0], batch[1:]
        if x.shape[0] == 0:
            return {k: torch.zeros_like(p) for k, p in self.params.items()}
        out = self.module(x)
        losses = vmap(self.loss_fn)(out, *targets)
        total = losses.sum() / self.expected_batch_size
        grads = torch.autograd.grad(total, list(self.params.values()), allow_unused=True)
        return {
            k: (g if g is not None else torch.zeros_like(p))
            for (k, p), g in zip(self.params.items(), grads, strict=True)
        }

    def step(self, data: Sequence[torch.Tensor]) -> int:
        """One full step: batch, ``g_hat``, optimizer step, accountant step.

        Returns the realised batch size (private; for diagnostics and tests only).
        """
        g_hat, b = self.noisy_gradient(data)
        for k, p in self.params.items():
            p.grad = g_hat[k].detach()
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        if self.private:
            self.accountant.step(
                noise_multiplier=self.noise_multiplier, sample_rate=self.sample_rate
            )
        self.n_steps += 1
        return b

    def epsilon(self, delta: float) -> float:
        """The accountant's epsilon after the executed steps (``inf`` if not private)."""
        if not self.private:
            return math.inf
        return float(self.accountant.get_epsilon(delta))


# ----------------------------------------------------------------------- the loop
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
    optimizer: str = "adam",
    learning_rate: float = 1e-3,
    accountant: str = "rdp",
    random_state=None,
    method: str = "auto",
    batch_transform: Callable | None = None,
    callback: Callable | None = None,
    log_every: int | None = None,
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
        Poisson rate ``q``, or the expected batch size (``q = min(1, batch_size / n)``).
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
    n = int(data[0].shape[0])
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
    if private:
        if noise_multiplier is None:
            sigma = calibrate_noise_multiplier(
                epsilon=epsilon, delta=delta, sample_rate=q, steps=n_iter, accountant=accountant
            )
        else:
            sigma = float(noise_multiplier)
            if sigma <= 0:
                raise ValueError("noise_multiplier must be > 0 for a private fit")
            planned = compute_epsilon(
                noise_multiplier=sigma,
                sample_rate=q,
                steps=n_iter,
                delta=delta,
                accountant=accountant,
            )
            if planned > epsilon * (1 + 1e-12):
                raise ValueError(
                    f"noise_multiplier={sigma:g} gives epsilon={planned:.4g} over {n_iter} "
                    f"steps, more than the budget epsilon={epsilon:g}; raise noise_multiplier "
                    "or leave it None to calibrate it"
                )
    else:
        sigma = 0.0
    trainer = DPSGDTrainer(
        module,
        loss_fn,
        n_samples=n,
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
    )
    log_every = max(1, n_iter // 50) if log_every is None else max(1, int(log_every))
    history: dict[str, list] = {"step": [], "epsilon": []}
    if not private:
        history["loss"] = []
    devices = [trainer.device.index or 0] if trainer.device.type == "cuda" else []
    with torch.random.fork_rng(devices=devices):
        module.train()
        for t in range(1, n_iter + 1):
            trainer.step(data)
            if t % log_every == 0 or t == n_iter:
                history["step"].append(t)
                history["epsilon"].append(trainer.epsilon(delta) if private else math.inf)
                if not private:
                    history["loss"].append(_mean_loss(trainer, data))
                if callback is not None:
                    callback(t, trainer, history)
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


def _mean_loss(trainer: DPSGDTrainer, data, max_rows: int = 4096) -> float:
    """Mean loss over (up to ``max_rows`` of) the data; non-private runs only."""
    with torch.no_grad():
        x = data[0][:max_rows]
        targets = [t[:max_rows] for t in data[1:]]
        out = trainer.module(x)
        return float(vmap(trainer.loss_fn)(out, *targets).mean().item())


# ------------------------------------------------------------ ghost (book-keeping) path
def _is_linear_like(layer: nn.Module) -> bool:
    """``nn.Linear``, or a layer with ``weight`` (out, in), optional ``bias`` and a ``mask``
    buffer of the weight's shape computing ``F.linear(x, weight * mask, bias)``."""
    direct = dict(layer.named_parameters(recurse=False))
    if not direct or set(direct) - {"weight", "bias"}:
        return False
    w = direct.get("weight")
    if w is None or w.ndim != 2:
        return False
    if type(layer).forward is nn.Linear.forward:
        return True
    mask = dict(layer.named_buffers(recurse=False)).get("mask")
    return mask is not None and tuple(mask.shape) == tuple(w.shape)


def linear_layers(module: nn.Module) -> dict[str, nn.Module] | None:
    """``{name: layer}`` if every trainable parameter is in a linear-like layer, else ``None``."""
    layers = {}
    for name, sub in module.named_modules():
        direct = [p for p in sub.parameters(recurse=False) if p.requires_grad]
        if not direct:
            continue
        if not _is_linear_like(sub):
            return None
        layers[name] = sub
    return layers or None


class GhostClippingUnsupported(RuntimeError):
    """The module's forward pass does not fit the book-keeping path (use vmap)."""


def ghost_clip_and_sum(
    module: nn.Module,
    loss_fn: Callable,
    inputs: torch.Tensor,
    *targets: torch.Tensor,
    max_grad_norm: float,
    layers: dict[str, nn.Module] | None = None,
) -> tuple[dict[str, torch.Tensor], torch.Tensor, int]:
    """Same result as ``clip_and_sum(per_sample_gradients(...))`` without per-sample gradients.

    For a linear layer applied once to a ``(b, in)`` input, record ``i``'s weight gradient
    is the outer product ``g_i a_i^T`` (times the mask), where ``a_i`` is the layer input and
    ``g_i`` the gradient of record ``i``'s loss with respect to the layer output (records are
    processed independently, so ``g_i`` comes from one backward pass of the summed loss). Its
    squared norm is ``(g_i^2)^T M (a_i^2)`` and the clipped sum is
    ``((c * G)^T A) * M`` with ``c_i = min(1, C / ||g_i||)``: one forward, one backward and two
    matrix products per layer ("book-keeping" ghost clipping, Bu et al. 2023).

    Raises
    ------
    GhostClippingUnsupported
        If a parameter lives outside a linear-like layer, a layer is called more than once,
        or its input is not two-dimensional.
    """
    if layers is None:
        layers = linear_layers(module)
    if not layers:
        raise GhostClippingUnsupported("not every trainable parameter is in a linear layer")
    b = inputs.shape[0]
    if b == 0:
        summed = {}
        for lname, layer in layers.items():
            for pname, p in layer.named_parameters(recurse=False):
                if p.requires_grad:
                    summed[f"{lname}.{pname}" if lname else pname] = torch.zeros_like(p)
        zero = torch.zeros(0, dtype=inputs.dtype, device=inputs.device)
        return summed, zero, 0
    acts: dict[str, torch.Tensor] = {}
    outs: dict[str, torch.Tensor] = {}
    calls: dict[str, int] = {}

    def make_hook(lname):
        def hook(mod, inp, out):
            calls[lname] = calls.get(lname, 0) + 1
            acts[lname] = inp[0].detach()
            outs[lname] = out

        return hook

    handles = [layer.register_forward_hook(make_hook(n)) for n, layer in layers.items()]
    try:
        with torch.enable_grad():
            out = module(inputs)
            losses = vmap(loss_fn)(out, *targets)
    finally:
        for h in handles:
            h.remove()
    for lname in layers:
        if calls.get(lname, 0) != 1 or acts[lname].ndim != 2 or acts[lname].shape[0] != b:
            raise GhostClippingUnsupported(
                f"layer {lname!r} must be called once per forward on a (batch, features) input"
            )
    names = list(layers)
    gouts = torch.autograd.grad(
        losses.sum(), [outs[n] for n in names], allow_unused=True, materialize_grads=True
    )
    sq = torch.zeros(b, dtype=inputs.dtype, device=inputs.device)
    parts = {}
    for lname, g in zip(names, gouts, strict=True):
        layer, a = layers[lname], acts[lname]
        g = g.detach()
        mask = dict(layer.named_buffers(recurse=False)).get("mask")
        g2, a2 = g * g, a * a
        if mask is None:
            w_sq = g2.sum(1) * a2.sum(1)
        else:
            w_sq = ((g2 @ mask) * a2).sum(1)
        sq = sq + w_sq
        bias = getattr(layer, "bias", None)
        if isinstance(bias, torch.Tensor) and bias.requires_grad:
            sq = sq + g2.sum(1)
        parts[lname] = (layer, a, g, mask)
    norms = sq.sqrt()
    finite = torch.isfinite(norms)
    safe = torch.where(finite & (norms > 0), norms, torch.ones_like(norms))
    factor = torch.where(finite, torch.clamp(max_grad_norm / safe, max=1.0), 0.0)
    summed = {}
    for lname, (layer, a, g, mask) in parts.items():
        a = torch.where(finite[:, None], a, torch.zeros_like(a))
        cg = torch.where(finite[:, None], g, torch.zeros_like(g)) * factor[:, None]
        prefix = f"{lname}." if lname else ""
        if layer.weight.requires_grad:
            w = cg.T @ a
            summed[prefix + "weight"] = w * mask if mask is not None else w
        bias = getattr(layer, "bias", None)
        if isinstance(bias, torch.Tensor) and bias.requires_grad:
            summed[prefix + "bias"] = cg.sum(0)
    return summed, norms.detach(), int((~finite).sum().item())


__all__ += ["GhostClippingUnsupported", "ghost_clip_and_sum", "linear_layers"]
