"""The DP-SGD engine: Poisson sampling, per-sample gradients, flat clipping, noise once.

The step (DP-SGD of Abadi et al. 2016, with Poisson sampling as analysed by Mironov,
Talwar & Zhang 2019): for
parameters ``w``, a per-record loss ``l(w; x_i)``, public ``n``, sample rate ``q`` and
expected batch size ``B = q n``:

1. Poisson mask ``m_i ~ Bernoulli(q)`` i.i.d. from the ``sampling`` stream (an empty batch
   is a legal step);
2. per-sample gradients ``g_i`` with ``torch.func.vmap(torch.func.grad(...))`` over
   ``torch.func.functional_call`` (a microbatch loop is the reference fallback), or, for
   modules whose parameters all sit in linear / masked-linear layers, the exact
   book-keeping ("ghost clipping") path that never materialises them
   (:func:`ghost_clip_and_sum`; tested against the same oracle). Every path runs the
   module on each record alone, so a module that mixes the rows of a batch cannot couple
   one record's clipped term to another record;
3. flat L2 clipping over all parameters ``g_i * min(1, C / ||g_i||)`` (zero norm kept,
   non-finite gradients replaced by 0 and counted);
4. one Gaussian draw ``N(0, sigma^2 C^2 I)`` on the sum, from the ``noise`` stream;
5. division by the *expected* batch size ``B`` (never the realised one, which is private);
6. one accountant step ``accountant.step(noise_multiplier=sigma, sample_rate=q)``
   (steps 1-6 are :meth:`DPSGDTrainer.noisy_gradient`: no unaccounted release);
7. the optimizer step (post-processing).

Nothing here knows about flows (layer L3 imports only torch, L0 and L1).
"""

from __future__ import annotations

import math
import warnings
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
    data. Any layer that tracks running
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
    if method not in ("vmap", "loop"):
        raise ValueError(f"method must be 'vmap' or 'loop', got {method!r}")
    if params is None:
        params = {k: v.detach() for k, v in module.named_parameters() if v.requires_grad}
    if inputs.shape[0] == 0:
        # an empty Poisson batch is a legal step; vmap over zero records is not (a module's
        # ``reshape(b, -1)`` cannot infer -1 from zero elements), so never call the module
        return {
            k: torch.zeros((0, *v.shape), dtype=v.dtype, device=v.device) for k, v in params.items()
        }
    buffers = {k: v.detach() for k, v in module.named_buffers()}
    g = grad(_record_loss_fn(module, loss_fn))
    if method == "vmap":
        in_dims = (None, None, 0) + (0,) * len(targets)
        return vmap(g, in_dims=in_dims)(params, buffers, inputs, *targets)
    rows = [g(params, buffers, inputs[i], *(t[i] for t in targets)) for i in range(len(inputs))]
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


# -------------------------------------------------------------- pre-training check
#: Records in the public probe of :meth:`DPSGDTrainer._check_module`.
_N_PROBE = 4
#: Public seed of that probe (a constant: the probe must not depend on the data).
_PROBE_SEED = 20240615


def _probe_like(batch: Sequence[torch.Tensor]) -> list[torch.Tensor] | None:
    """``_N_PROBE`` public records shaped like ``batch`` (``None`` for unsupported dtypes)."""
    gen = torch.Generator().manual_seed(_PROBE_SEED)
    half = _N_PROBE // 2
    out = []
    for t in batch:
        shape = (_N_PROBE, *t.shape[1:])
        if t.dtype.is_floating_point:
            p = torch.rand(shape, generator=gen, dtype=torch.float64)
            p[half:] = torch.randn((_N_PROBE - half, *t.shape[1:]), generator=gen).double()
        elif t.dtype.is_complex:
            return None
        else:
            p = torch.zeros(shape)
        out.append(p.to(dtype=t.dtype, device=t.device))
    return out


def _check_tol(dtype: torch.dtype) -> float:
    """Relative tolerance of the probe comparisons: ``sqrt(100 eps)`` of the dtype."""
    return math.sqrt(100 * torch.finfo(dtype).eps)


def _close(a: torch.Tensor, b: torch.Tensor, tol: float, floor: float = 0.0) -> bool:
    """Same non-finite pattern and ``|a - b| <= tol * max(|b|, floor, tiny)`` elsewhere."""
    a, b = torch.as_tensor(a).detach(), torch.as_tensor(b).detach()
    if a.shape != b.shape:
        return False
    fa, fb = torch.isfinite(a), torch.isfinite(b)
    if not torch.equal(fa, fb):
        return False
    a, b = a[fa], b[fb]
    scale = torch.clamp(b.abs(), min=max(floor, 1e-12))
    return bool(((a - b).abs() <= tol * scale).all())


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
        Seeds the ``sampling`` and ``noise`` streams (spawned in that order). The
        trainer sees the data one batch at a time, so it cannot bind the seed to the
        training set as the estimators do (:func:`skdp.utils._random.fit_streams`): the
        same int seed on two data sets draws the same noise. Pass ``None`` for a release,
        or a ``Generator`` derived per training set, as the estimators do.
    method : {"auto", "ghost", "vmap", "loop"}, default="auto"
        How the clipped sum is computed. ``"vmap"``: per-sample gradients with
        ``torch.func.vmap(grad(...))``; ``"loop"``: one ``grad`` per record (reference);
        ``"ghost"``: the exact book-keeping path of :func:`ghost_clip_and_sum` (every
        trainable parameter in a linear or masked-linear layer); ``"auto"``: ghost when the
        module qualifies, else vmap. Before the first private step, ghost is checked
        against a per-sample loop on a public probe (no private record) and replaced by
        vmap, with a warning, if they differ; it is replaced silently if the forward pass
        turns out not to fit. Every method differentiates each record on its own, so the
        clipped sum's sensitivity is ``max_grad_norm`` whichever one runs.
    batch_transform : callable, optional
        ``batch_transform(tensors) -> tensors`` applied to the sampled records outside vmap
        (e.g. dequantisation noise from a separate stream). It must act on each record
        separately.

    Attributes
    ----------
    accountant : skdp.accounting.Accountant
        Stepped once per released gradient (private mode).
    n_steps : int
        Released gradients (calls of :meth:`noisy_gradient`, each :meth:`step` is one).
    method : str
        The method in use (``"auto"`` resolved; ``"vmap"`` after a ghost fallback).
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
        self._module_checked = False

    # ------------------------------------------------------------------ pieces
    def sample_batch(self) -> np.ndarray:
        """Indices of one Poisson batch (each record independently with probability q)."""
        mask = self._sampling_rng.random(self.n_samples) < self.sample_rate
        return np.flatnonzero(mask)

    def noisy_gradient(self, data: Sequence[torch.Tensor]) -> dict[str, torch.Tensor]:
        """Release one privatised gradient ``g_hat`` and account for it.

        Draws a Poisson batch, clips each record's gradient to ``max_grad_norm``, adds
        ``N(0, sigma^2 C^2 I)`` to the sum once, divides by the *expected* batch size and
        steps the accountant (private mode): every call is one accounted step
        (``n_steps`` and ``accountant.n_steps`` grow by one). No optimizer step: use
        :meth:`step` for that, or apply ``g_hat`` yourself.

        Parameters
        ----------
        data : sequence of torch.Tensor
            ``(inputs, *targets)``, each with the ``n_samples`` records along the first axis.

        Returns
        -------
        g_hat : dict {name: torch.Tensor}
            One entry per trainable parameter. The realised batch size is private (it tells
            whether a record was sampled) and is not returned.
        """
        g_hat, _ = self._noisy_gradient(data)
        if self.private:
            self.accountant.step(
                noise_multiplier=self.noise_multiplier, sample_rate=self.sample_rate
            )
        self.n_steps += 1
        return g_hat

    def _noisy_gradient(
        self, data: Sequence[torch.Tensor], idx: np.ndarray | None = None
    ) -> tuple[dict[str, torch.Tensor], int]:
        """``(g_hat, realised batch size)`` without accounting (white-box tests only).

        ``idx`` replaces the Poisson batch, which the accountant's analysis assumes: never
        release a gradient computed from a given ``idx``.
        """
        if idx is None:
            idx = self.sample_batch()
        index = torch.as_tensor(idx, dtype=torch.long, device=data[0].device)
        batch = [t.index_select(0, index) for t in data]
        if self.batch_transform is not None:
            batch = list(self.batch_transform(batch))
        if not self.private:
            return self._plain_gradient(batch), len(idx)
        if not self._module_checked:
            self._check_module(batch)
            self._module_checked = True
        summed, n_bad = self._clipped_sum(batch)
        self.n_nonfinite_grads += n_bad
        std = self.noise_multiplier * self.max_grad_norm
        out = {}
        for k, s in summed.items():  # fixed (named_parameters) order: reproducible noise
            noise = torch.randn(
                s.shape, generator=self._noise_gen, device=self.device, dtype=self.dtype
            )
            out[k] = (s + std * noise) / self.expected_batch_size
        return out, len(idx)

    def _clipped_sum(self, batch) -> tuple[dict[str, torch.Tensor], int]:
        """The clipped sum of one batch by ``self.method`` (sensitivity ``max_grad_norm``)."""
        if self.method == "ghost":
            try:
                summed, _, n_bad = ghost_clip_and_sum(
                    self.module,
                    self.loss_fn,
                    *batch,
                    max_grad_norm=self.max_grad_norm,
                    layers=self._linear_layers,
                )
                return {k: summed[k] for k in self.params}, n_bad
            except GhostClippingUnsupported:
                self.method = "vmap"  # the forward pass does not fit; exact fallback
        per_sample = per_sample_gradients(
            self.module,
            self.loss_fn,
            *batch,
            params={k: p.detach() for k, p in self.params.items()},
            method=self.method,
        )
        summed, _, n_bad = clip_and_sum(per_sample, self.max_grad_norm)
        return summed, n_bad

    def _check_module(self, batch) -> None:
        """Check the module on a public probe before the first private step.

        The probe has ``_N_PROBE`` records shaped like the (transformed) batch, drawn from a
        fixed public seed (floating columns half uniform on [0, 1), half standard normal;
        integer and boolean columns 0), so what this check decides depends on no private
        record. Two checks, each a warning, neither needed for privacy (every method clips
        the term of each record computed on that record alone):

        * the module's batched output equals its output on one record at a time (else it
          mixes records, and what DP-SGD trains is the one-record-at-a-time module);
        * ``method="ghost"``: :func:`ghost_clip_and_sum` equals the clipped per-sample
          gradients of a ``torch.func.grad`` loop (else a linear-like layer does not compute
          ``F.linear(x, weight * mask, bias)``, and the trainer falls back to
          ``method="vmap"``).

        A probe the module cannot evaluate (it raises) checks nothing; a module whose
        behaviour depends on its input values may pass on the probe and differ on the data.
        Either way the sensitivity of every method stays ``max_grad_norm``.
        """
        probe = _probe_like(batch)
        if probe is None:
            return
        x, targets = probe[0], probe[1:]
        tol = _check_tol(self.dtype)
        try:
            with torch.no_grad():
                batched = vmap(self.loss_fn)(self.module(x), *targets)
                alone = torch.stack(
                    [
                        torch.as_tensor(
                            self.loss_fn(self.module(x[i : i + 1])[0], *(t[i] for t in targets))
                        )
                        for i in range(x.shape[0])
                    ]
                )
        except Exception:  # noqa: BLE001 - a probe the module rejects checks nothing
            return
        if not _close(batched, alone, tol, floor=1.0):
            warnings.warn(
                "the module's output on a batch differs from its output on one record at a "
                "time: it mixes the records of a batch. DP-SGD bounds each record's influence "
                "by differentiating each record alone, so it trains the one-record-at-a-time "
                "module; remove the cross-record operation.",
                UserWarning,
                stacklevel=4,
            )
        if self.method != "ghost":
            return
        c = self.max_grad_norm
        params = {k: p.detach() for k, p in self.params.items()}
        try:
            got, got_norms, _ = ghost_clip_and_sum(
                self.module, self.loss_fn, *probe, max_grad_norm=c, layers=self._linear_layers
            )
            ps = per_sample_gradients(
                self.module, self.loss_fn, *probe, params=params, method="loop"
            )
        except GhostClippingUnsupported:
            self.method = "vmap"
            return
        except Exception:  # noqa: BLE001 - a probe the module rejects checks nothing
            return
        ref, ref_norms, _ = clip_and_sum(ps, c)
        finite = ref_norms[torch.isfinite(ref_norms)]
        scale = 1e-3 * min(c, float(finite.max())) if finite.numel() else 0.0  # roundoff floor
        same = set(got) >= set(ref) and _close(got_norms, ref_norms, tol, floor=scale)
        if same:
            flat_got = torch.cat([got[k].reshape(-1) for k in ref])
            flat_ref = torch.cat([v.reshape(-1) for v in ref.values()])
            err = float((flat_got - flat_ref).norm())
            same = err <= tol * max(float(flat_ref.norm()), scale, 1e-12)
        if not same:
            warnings.warn(
                "ghost clipping does not match per-sample gradients for this module (a "
                "linear-like layer does not compute F.linear(x, weight * mask, bias)); "
                "falling back to method='vmap'.",
                UserWarning,
                stacklevel=4,
            )
            self.method = "vmap"

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

    def step(self, data: Sequence[torch.Tensor]) -> None:
        """One full step: :meth:`noisy_gradient` (batch, ``g_hat``, accountant step), then
        the optimizer step on ``g_hat``."""
        g_hat = self.noisy_gradient(data)
        for k, p in self.params.items():
            p.grad = g_hat[k].detach()
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)

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
    """``nn.Linear``, or a layer with ``weight`` (out, in), optional ``bias`` (out,) and a
    ``mask`` buffer of the weight's shape, declaring that it computes
    ``F.linear(x, weight * mask, bias)``.

    The declaration is not trusted for privacy (:func:`ghost_clip_and_sum` clips the term it
    computes by that term's exact norm, whatever the layer does); :class:`DPSGDTrainer`
    checks it against per-sample gradients before using the ghost path.
    """
    direct = dict(layer.named_parameters(recurse=False))
    if not direct or set(direct) - {"weight", "bias"}:
        return False
    w = direct.get("weight")
    if w is None or w.ndim != 2:
        return False
    bias = direct.get("bias")
    if bias is not None and tuple(bias.shape) != (w.shape[0],):
        return False
    if type(layer).forward is nn.Linear.forward:
        return True
    mask = dict(layer.named_buffers(recurse=False)).get("mask")
    return mask is not None and tuple(mask.shape) == tuple(w.shape)


def linear_layers(module: nn.Module) -> dict[str, nn.Module] | None:
    """``{name: layer}`` if every trainable parameter is in a linear-like layer, else ``None``.

    ``None`` too when one parameter is shared by two layers (its per-record gradient is then
    the sum of two outer products, which the book-keeping path does not compute).
    """
    layers = {}
    seen: set[int] = set()
    for name, sub in module.named_modules(remove_duplicate=False):
        direct = [p for p in sub.parameters(recurse=False) if p.requires_grad]
        if not direct:
            continue
        if not _is_linear_like(sub) or any(id(p) in seen for p in direct):
            return None
        seen.update(id(p) for p in direct)
        layers[name] = sub
    return layers or None


class GhostClippingUnsupported(RuntimeError):
    """The module's forward pass does not fit the book-keeping path (use vmap)."""


def _ghost_terms(
    module: nn.Module,
    loss_fn: Callable,
    layers: dict[str, nn.Module],
    inputs: torch.Tensor,
    targets: Sequence[torch.Tensor],
) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]]:
    """Per-record layer inputs ``a_i`` and output gradients ``g_i``, one record at a time.

    ``torch.func.vmap`` runs the module on each record alone (a batch of one), so ``a_i``
    and ``g_i`` are functions of record ``i`` only, whatever the module does across the rows
    of a batch (``x - x.mean(0)``, batch statistics, ...). ``g_i`` is the gradient of record
    ``i``'s loss with respect to a zero offset added to the layer's output.
    """
    names = list(layers)
    calls: dict[str, int] = {}
    misfits: list[str] = []

    def record(deltas, x, *t):
        acts = {}

        def make_hook(lname):
            def hook(mod, inp, out):
                calls[lname] = calls.get(lname, 0) + 1
                w = mod.weight
                a = inp[0] if inp else None
                if not (
                    isinstance(a, torch.Tensor)
                    and isinstance(out, torch.Tensor)
                    and tuple(a.shape) == (1, w.shape[1])
                    and tuple(out.shape) == (1, w.shape[0])
                ):
                    misfits.append(lname)
                    return None
                acts[lname] = a[0]
                return out + deltas[lname]

            return hook

        handles = [layers[n].register_forward_hook(make_hook(n)) for n in names]
        try:
            out = module(x.unsqueeze(0))
        finally:
            for h in handles:
                h.remove()
        if misfits or any(calls.get(n, 0) != 1 for n in names):
            raise GhostClippingUnsupported(
                "every linear layer must be called exactly once per forward, on a "
                "(batch, in_features) input, giving a (batch, out_features) output"
            )
        return loss_fn(out[0], *t), acts

    deltas = {
        n: torch.zeros(layers[n].weight.shape[0], dtype=inputs.dtype, device=inputs.device)
        for n in names
    }
    in_dims = (None, 0) + (0,) * len(targets)
    with torch.no_grad():  # torch.func.grad ignores it; no graph for the real parameters
        gouts, acts = vmap(grad(record, has_aux=True), in_dims=in_dims)(deltas, inputs, *targets)
    return acts, gouts


def ghost_clip_and_sum(
    module: nn.Module,
    loss_fn: Callable,
    inputs: torch.Tensor,
    *targets: torch.Tensor,
    max_grad_norm: float,
    layers: dict[str, nn.Module] | None = None,
) -> tuple[dict[str, torch.Tensor], torch.Tensor, int]:
    """Same result as ``clip_and_sum(per_sample_gradients(...))`` without per-sample gradients.

    For a linear layer ``F.linear(a, W * M, b)`` (``M`` a mask, all ones for
    ``nn.Linear``), record ``i``'s weight gradient is ``(g_i a_i^T) * M``, where ``a_i`` is
    the layer input and ``g_i`` the gradient of record ``i``'s loss with respect to the
    layer output. Its squared Frobenius norm is
    ``sum_jk g_ij^2 a_ik^2 M_jk^2 = (g_i^2)^T (M * M) (a_i^2)`` -- the *square* of the mask
    (for the usual 0/1 masks ``M * M = M``; any finite mask is handled exactly) -- and the
    clipped sum is ``((c * G)^T A) * M`` with ``c_i = min(1, C / ||g_i||)`` over all layers
    together ("book-keeping" ghost clipping, Bu et al. 2023).

    Records are isolated by construction: ``a_i`` and ``g_i`` come from running the module on
    record ``i`` alone (``torch.func.vmap`` over batches of one), exactly as
    :func:`per_sample_gradients` does, and each record's term is clipped by its exact norm.
    Adding or removing one record therefore changes the sum by at most ``max_grad_norm``
    for *any* module, even one that mixes the rows of a batch or whose "masked" layer does
    not compute what it declares (the result is then not that module's gradient, which
    :class:`DPSGDTrainer` detects before using this path, but its sensitivity still holds).

    Parameters
    ----------
    module : torch.nn.Module
        Every trainable parameter in a linear-like layer (:func:`linear_layers`).
    loss_fn : callable ``(output_row, *target_rows) -> scalar tensor``
        The per-record loss.
    inputs : torch.Tensor of shape (b, ...)
        The records (``b = 0`` gives zero sums).
    *targets : torch.Tensor of shape (b, ...)
        Per-record extra data.
    max_grad_norm : float
        Clipping norm ``C`` (flat over all parameters).
    layers : dict, optional
        ``linear_layers(module)``, if already computed.

    Returns
    -------
    summed : dict {name: tensor of shape param.shape}
        The clipped sum (names as in ``module.named_parameters()``).
    norms : torch.Tensor of shape (b,)
        The unclipped per-record norms (private: never release them).
    n_nonfinite : int
        Records whose gradient was not finite (replaced by 0).

    Raises
    ------
    GhostClippingUnsupported
        If a parameter lives outside a linear-like layer, a layer is called other than once
        per forward or on a non-(1, in_features) record, or a mask is not finite.
    """
    if layers is None:
        layers = linear_layers(module)
    if not layers:
        raise GhostClippingUnsupported("not every trainable parameter is in a linear layer")
    masks = {}
    for lname, layer in layers.items():
        mask = dict(layer.named_buffers(recurse=False)).get("mask")
        if type(layer).forward is nn.Linear.forward:
            mask = None
        if mask is not None and not bool(torch.isfinite(mask).all()):
            raise GhostClippingUnsupported(f"layer {lname!r} has a non-finite mask")
        masks[lname] = mask
    b = inputs.shape[0]
    if b == 0:
        summed = {}
        for lname, layer in layers.items():
            for pname, p in layer.named_parameters(recurse=False):
                if p.requires_grad:
                    summed[f"{lname}.{pname}" if lname else pname] = torch.zeros_like(p)
        zero = torch.zeros(0, dtype=inputs.dtype, device=inputs.device)
        return summed, zero, 0
    acts, gouts = _ghost_terms(module, loss_fn, layers, inputs, targets)
    sq = torch.zeros(b, dtype=inputs.dtype, device=inputs.device)
    for lname, layer in layers.items():
        a, g, mask = acts[lname], gouts[lname], masks[lname]
        g2, a2 = g * g, a * a
        if layer.weight.requires_grad:
            if mask is None:
                sq = sq + g2.sum(1) * a2.sum(1)
            else:
                sq = sq + ((g2 @ (mask * mask)) * a2).sum(1)
        bias = getattr(layer, "bias", None)
        if isinstance(bias, torch.Tensor) and bias.requires_grad:
            sq = sq + g2.sum(1)
    norms = sq.sqrt()
    finite = torch.isfinite(norms)
    safe = torch.where(finite & (norms > 0), norms, torch.ones_like(norms))
    factor = torch.where(finite, torch.clamp(max_grad_norm / safe, max=1.0), 0.0)
    summed = {}
    for lname, layer in layers.items():
        a, g, mask = acts[lname], gouts[lname], masks[lname]
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
