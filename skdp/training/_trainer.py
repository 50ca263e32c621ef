"""DPSGDTrainer: DP-SGD over an ``nn.Module`` and a per-record loss, on :class:`DPStep`.

The trainer computes the clipped sum of one batch (ghost, vmap or loop per-sample
gradients, :mod:`skdp.training._per_sample`, :mod:`skdp.training._ghost`) and hands it to a
:class:`~skdp.training.DPStep`, which draws the batch and the noise and steps the
accountant.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence

import numpy as np
import torch
from torch import nn
from torch.func import vmap

from skdp.training._ghost import GhostClippingUnsupported, ghost_clip_and_sum, linear_layers
from skdp.training._patients import RecordGroups, ghost_group_clip_and_sum, group_clip_and_sum
from skdp.training._per_sample import check_per_record_module, per_sample_gradients
from skdp.training._privatizer import clip_and_sum
from skdp.training._step import make_dp_step
from skdp.utils._random import spawn_streams

__all__ = ["DPSGDTrainer"]

_METHODS = ("auto", "ghost", "vmap", "loop")

_OPTIMIZERS = {
    "adam": torch.optim.Adam,
    "sgd": torch.optim.SGD,
    "rmsprop": torch.optim.RMSprop,
}


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
    optimizer : {"adam", "sgd", "rmsprop"} or torch.optim.Optimizer, default="adam"
        A name (built with ``learning_rate``), or any optimizer over the module's trainable
        parameters (``learning_rate`` is then ignored).
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
    groups : RecordGroups, optional
        Patient-level DP-SGD (:mod:`skdp.training._patients`): the sampler draws patients
        at rate ``q`` (``n_samples`` stays the number of rows of ``data``), each sampled
        patient's gradient sum divided by ``k = groups.max_rows_per_group`` is clipped to
        ``max_grad_norm`` as one vector (exactly, also by ``"ghost"``), and the noisy sum
        is divided by the expected number of sampled patients ``q n_patients``. The
        sensitivity is ``max_grad_norm`` per patient.

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
    dp_step : DPStep
        The step object that samples, privatises, accounts and applies (``optimizer``,
        ``accountant``, ``n_steps`` and ``n_nonfinite_grads`` are its own).
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
        optimizer: str | torch.optim.Optimizer = "adam",
        learning_rate: float = 1e-3,
        accountant: str = "rdp",
        random_state=None,
        method: str = "auto",
        batch_transform: Callable | None = None,
        groups: RecordGroups | None = None,
    ):
        if not (isinstance(n_samples, int | np.integer) and n_samples >= 1):
            raise ValueError(f"n_samples must be a positive integer, got {n_samples!r}")
        if groups is not None and not isinstance(groups, RecordGroups):
            raise TypeError("groups must be a RecordGroups (or None)")
        if groups is not None and groups.n_rows != int(n_samples):
            raise ValueError("groups must give the patient of each of the n_samples rows")
        if not (0.0 < float(sample_rate) <= 1.0):
            raise ValueError(f"sample_rate must be in (0, 1], got {sample_rate!r}")
        if private:
            if max_grad_norm is None or not (0 < float(max_grad_norm) < math.inf):
                raise ValueError("DP-SGD needs a finite max_grad_norm > 0")
            if not (0 <= float(noise_multiplier) < math.inf):
                raise ValueError(f"noise_multiplier must be >= 0, got {noise_multiplier!r}")
            check_per_record_module(module)
        if not isinstance(optimizer, torch.optim.Optimizer) and optimizer not in _OPTIMIZERS:
            raise ValueError(f"optimizer must be one of {sorted(_OPTIMIZERS)}, got {optimizer!r}")
        if method not in _METHODS:
            raise ValueError(f"method must be one of {_METHODS}, got {method!r}")
        self.module = module
        self.loss_fn = loss_fn
        self.n_samples = int(n_samples)
        self.groups = groups
        #: the sampled (and clipped) units: rows, or patients with ``groups``
        self.n_units = self.n_samples if groups is None else groups.n_groups
        self.sample_rate = float(sample_rate)
        self.expected_batch_size = self.sample_rate * self.n_units
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
        if not isinstance(optimizer, torch.optim.Optimizer):
            optimizer = _OPTIMIZERS[optimizer](list(self.params.values()), lr=learning_rate)
        streams = spawn_streams(random_state, ["sampling", "noise"])
        self.dp_step = make_dp_step(
            self.params,
            optimizer,
            n_samples=self.n_units,
            sample_rate=self.sample_rate,
            noise_multiplier=self.noise_multiplier,
            max_grad_norm=self.max_grad_norm,
            private=self.private,
            accountant=accountant,
            sampling_rng=streams["sampling"],
            noise_rng=streams["noise"],
            device=self.device,
        )
        self._module_checked = False

    # ------------------------------------------------- the step object's state
    @property
    def optimizer(self) -> torch.optim.Optimizer:
        """The optimizer (replaceable by any optimizer over the trainable parameters)."""
        return self.dp_step.optimizer

    @optimizer.setter
    def optimizer(self, optimizer: torch.optim.Optimizer) -> None:
        self.dp_step.optimizer = optimizer

    @property
    def accountant(self):
        return self.dp_step.accountant

    @property
    def n_steps(self) -> int:
        return self.dp_step.n_steps

    @property
    def n_nonfinite_grads(self) -> int:
        return self.dp_step.n_nonfinite_grads

    # ------------------------------------------------------------------ pieces
    def sample_batch(self) -> np.ndarray:
        """Indices of one Poisson batch (each record, or patient with ``groups``,
        independently with probability q)."""
        return self.dp_step.sampler.sample()

    def noisy_gradient(
        self, data: Sequence[torch.Tensor], *, extra_grad: Callable | None = None
    ) -> dict[str, torch.Tensor]:
        """Release one privatised gradient ``g_hat`` and account for it.

        Draws a Poisson batch, clips each record's gradient to ``max_grad_norm``, adds
        ``N(0, sigma^2 C^2 I)`` to the sum once, divides by the *expected* batch size and
        steps the accountant (private mode), all through :meth:`DPStep.noisy_gradient`:
        every call is one accounted step (``n_steps`` and ``accountant.n_steps`` grow by
        one). No optimizer step: use :meth:`step` for that, or apply ``g_hat`` yourself.

        Parameters
        ----------
        data : sequence of torch.Tensor
            ``(inputs, *targets)``, each with the ``n_samples`` records along the first axis.
        extra_grad : callable ``() -> {name: tensor}``, optional
            A public term added to ``g_hat`` after the noise, unclipped and un-noised (e.g. a
            GAN critic's gradient on fake rows): it must not read the private records.

        Returns
        -------
        g_hat : dict {name: torch.Tensor}
            One entry per trainable parameter. The realised batch size is private (it tells
            whether a record was sampled) and is not returned.
        """
        return self.dp_step.noisy_gradient(self._grad_sum(data), extra_grad=extra_grad)

    def _noisy_gradient(
        self, data: Sequence[torch.Tensor], idx: np.ndarray | None = None
    ) -> tuple[dict[str, torch.Tensor], int]:
        """``(g_hat, realised batch size)`` without accounting (white-box tests only).

        ``idx`` replaces the Poisson batch, which the accountant's analysis assumes: never
        release a gradient computed from a given ``idx``.
        """
        return self.dp_step._release(self._grad_sum(data), idx=idx)

    def _grad_sum(self, data: Sequence[torch.Tensor]):
        """``grad_sum(idx)`` for :class:`DPStep`: the batch's clipped (or, non-private, plain)
        gradient sum and its non-finite count."""

        def grad_sum(idx):
            seg = None
            if self.groups is not None:  # the sampled patients' rows
                idx, seg = self.groups.rows(idx)
            index = torch.as_tensor(idx, dtype=torch.long, device=data[0].device)
            batch = [t.index_select(0, index) for t in data]
            if self.batch_transform is not None:
                batch = list(self.batch_transform(batch))
            if not self.private:
                return self._plain_sum(batch), 0
            if not self._module_checked:
                self._check_module(batch)
                self._module_checked = True
            return self._clipped_sum(batch, seg)

        return grad_sum

    def _clipped_sum(self, batch, seg=None) -> tuple[dict[str, torch.Tensor], int]:
        """The clipped sum of one batch by ``self.method`` (sensitivity ``max_grad_norm``);
        with ``seg`` (the sampled patient of each row) clipped per patient."""
        if self.method == "ghost":
            try:
                summed, _, n_bad = self._ghost_sum(batch, seg)
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
        summed, _, n_bad = self._clip_rows(per_sample, seg)
        return summed, n_bad

    def _n_seg(self, seg) -> int:
        return int(seg.max()) + 1 if len(seg) else 0

    def _clip_rows(self, per_sample, seg):
        """``clip_and_sum`` per row, or per patient (``seg``; scaled by ``1 / k``)."""
        if seg is None:
            return clip_and_sum(per_sample, self.max_grad_norm)
        return group_clip_and_sum(
            per_sample,
            seg,
            self._n_seg(seg),
            self.max_grad_norm,
            scale=1.0 / self.groups.max_rows_per_group,
        )

    def _ghost_sum(self, batch, seg):
        """The book-keeping clipped sum per row, or per patient (``seg``)."""
        if seg is None:
            return ghost_clip_and_sum(
                self.module,
                self.loss_fn,
                *batch,
                max_grad_norm=self.max_grad_norm,
                layers=self._linear_layers,
            )
        return ghost_group_clip_and_sum(
            self.module,
            self.loss_fn,
            *batch,
            seg=seg,
            n_groups=self._n_seg(seg),
            max_grad_norm=self.max_grad_norm,
            scale=1.0 / self.groups.max_rows_per_group,
            layers=self._linear_layers,
        )

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
        # with groups: two public patients of two probe rows each
        seg = None if self.groups is None else np.arange(_N_PROBE) // 2
        try:
            got, got_norms, _ = self._ghost_sum(probe, seg)
            ps = per_sample_gradients(
                self.module, self.loss_fn, *probe, params=params, method="loop"
            )
        except GhostClippingUnsupported:
            self.method = "vmap"
            return
        except Exception:  # noqa: BLE001 - a probe the module rejects checks nothing
            return
        ref, ref_norms, _ = self._clip_rows(ps, seg)
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

    def _plain_sum(self, batch) -> dict[str, torch.Tensor]:
        """Unclipped gradient of the batch's summed loss (non-private mode)."""
        x, targets = batch[0], batch[1:]
        if x.shape[0] == 0:
            return {k: torch.zeros_like(p) for k, p in self.params.items()}
        out = self.module(x)
        losses = vmap(self.loss_fn)(out, *targets)
        total = losses.sum()
        if self.groups is not None:  # the patient-level objective's 1 / k
            total = total / self.groups.max_rows_per_group
        grads = torch.autograd.grad(total, list(self.params.values()), allow_unused=True)
        return {
            k: (g if g is not None else torch.zeros_like(p))
            for (k, p), g in zip(self.params.items(), grads, strict=True)
        }

    def step(self, data: Sequence[torch.Tensor], *, extra_grad: Callable | None = None) -> None:
        """One full step: :meth:`noisy_gradient` (batch, ``g_hat``, accountant step, the
        optional public ``extra_grad`` term), then the optimizer step on ``g_hat``
        (:meth:`DPStep.step`)."""
        self.dp_step.step(self._grad_sum(data), extra_grad=extra_grad)

    def epsilon(self, delta: float) -> float:
        """The accountant's epsilon after the executed steps (``inf`` if not private)."""
        if not self.private:
            return math.inf
        return float(self.accountant.get_epsilon(delta))
