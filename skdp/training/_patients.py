"""Patient-level DP-SGD: the patient (a group of rows) as the unit that is sampled and clipped.

Neighbouring relation: add or remove **one patient with all their rows** (user-level DP-SGD,
McMahan et al. 2018; Levy et al. 2021; Charles et al. 2024's user-level sampling). A step
Poisson-samples patients at rate ``q``; each sampled patient's term is the sum of the
gradients of their rows divided by the public bound ``k = max_rows_per_group``,

``u_p = (1 / k) sum_{i in p} g_i``,

clipped as one vector to L2 norm ``C``. The sum over the sampled patients then has L2
sensitivity ``C`` under add/remove-one-patient (whatever the rows of a patient do), the
noise ``N(0, sigma^2 C^2 I)`` is drawn once on it and the result is divided by the
expected number of sampled patients ``q n_patients``
(:class:`~skdp.training.GaussianPrivatizer`); the accountant's sampling rate is ``q``.

Why ``1 / k``: the objective stays the row-level one (each kept row's loss counts once, a
patient with one row weighs as one row), and ``C`` keeps its per-row meaning: a patient
whose ``k`` rows share one gradient ``g`` contributes exactly ``g`` (clipped to ``C``), so
``max_grad_norm`` and the learning rate tuned for a row-level fit carry over. The released
mean ``sum_p u_p / (q n_patients)`` estimates the mean row gradient times ``m / k`` (``m``
the mean number of kept rows per patient, at most ``k``). ``k`` is public: neither the
scaling nor the divisor reads the data; rows beyond ``k`` are dropped uniformly at random
before training (:func:`skdp.utils._groups.bound_contributions`), which bounds the work of
a patient (the sensitivity ``C`` does not need it).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch
from torch import nn

from skdp.training._ghost import ghost_terms, layer_masks, zero_sums
from skdp.training._privatizer import clip_and_sum

__all__ = ["RecordGroups", "ghost_group_clip_and_sum", "group_clip_and_sum", "segment_sum"]


class RecordGroups:
    """The rows of every patient of a patient-level DP-SGD fit.

    Parameters
    ----------
    codes : array-like of int of shape (n_rows,)
        The patient of each (kept) row, any integer labels; every patient keeps at most
        ``max_rows_per_group`` rows (bound them first with
        :func:`skdp.utils._groups.bound_contributions`).
    max_rows_per_group : int
        The public contribution bound ``k``.

    Attributes
    ----------
    n_groups : int
        Number of patients (the population the sampler draws from).
    n_rows : int
    max_rows_per_group : int

    Examples
    --------
    >>> from skdp.training import RecordGroups
    >>> g = RecordGroups([0, 1, 0, 2, 1], max_rows_per_group=2)
    >>> g.n_groups
    3
    >>> rows, seg = g.rows([0, 2])
    >>> rows.tolist(), seg.tolist()
    ([0, 2, 3], [0, 0, 1])
    """

    def __init__(self, codes, max_rows_per_group: int):
        codes = np.asarray(codes)
        if codes.ndim != 1 or codes.shape[0] == 0 or codes.dtype.kind not in "iu":
            raise ValueError("codes must be a non-empty 1-d array of integer patient codes")
        k = int(max_rows_per_group)
        if k < 1:
            raise ValueError("max_rows_per_group must be a whole number >= 1")
        _, inverse, counts = np.unique(codes, return_inverse=True, return_counts=True)
        if counts.max() > k:
            raise ValueError(
                "a patient has more rows than max_rows_per_group: bound the contributions "
                "first (skdp.utils._groups.bound_contributions)"
            )
        self.n_rows = int(codes.shape[0])
        self.n_groups = int(counts.shape[0])
        self.max_rows_per_group = k
        self._order = np.argsort(inverse, kind="stable")  # rows grouped by patient
        self._counts = counts
        self._starts = np.r_[0, np.cumsum(counts)[:-1]]

    def rows(self, idx) -> tuple[np.ndarray, np.ndarray]:
        """``(rows, seg)`` of the patients ``idx``: their row indices, grouped by patient in
        the order of ``idx``, and the position in ``idx`` of each row's patient."""
        idx = np.asarray(idx, dtype=np.int64)
        counts = self._counts[idx]
        seg = np.repeat(np.arange(idx.shape[0]), counts)
        within = np.arange(seg.shape[0]) - np.repeat(np.cumsum(counts) - counts, counts)
        rows = self._order[np.repeat(self._starts[idx], counts) + within]
        return rows, seg


def segment_sum(per_row: dict, seg, n_seg: int, scale: float = 1.0) -> dict:
    """``{name: (n_seg, *shape)}``: ``scale`` times the per-row tensors summed by segment
    (the patient of each row, ``seg``), i.e. one unclipped term per patient."""
    if not isinstance(seg, torch.Tensor):
        ref = next(iter(per_row.values()))
        seg = torch.as_tensor(np.asarray(seg), dtype=torch.long, device=ref.device)
    out = {}
    for k, v in per_row.items():
        acc = torch.zeros((n_seg, *v.shape[1:]), dtype=v.dtype, device=v.device)
        out[k] = acc.index_add_(0, seg, v) * scale
    return out


def group_clip_and_sum(
    per_row: dict[str, torch.Tensor],
    seg,
    n_groups: int,
    max_grad_norm: float,
    *,
    scale: float = 1.0,
) -> tuple[dict[str, torch.Tensor], torch.Tensor, int]:
    """Per-patient clipping: ``sum_p clip_C(scale * sum_{i in p} g_i)``.

    Parameters
    ----------
    per_row : dict {name: tensor of shape (b, *param.shape)}
        Per-row gradients (:func:`~skdp.training.per_sample_gradients`).
    seg : array-like of int of shape (b,)
        The patient (``0 .. n_groups - 1``) of each row.
    n_groups : int
    max_grad_norm : float
        ``C``, flat over all parameters, applied to each patient's scaled sum.
    scale : float, default=1.0
        ``1 / k`` in the DP-SGD engine (module docstring).

    Returns
    -------
    summed : dict {name: tensor of shape param.shape}
    norms : torch.Tensor of shape (n_groups,)
        The unclipped per-patient norms (private: never release them).
    n_nonfinite : int
        Patients whose term was not finite (replaced by 0).
    """
    ref = next(iter(per_row.values()))
    seg = torch.as_tensor(np.asarray(seg), dtype=torch.long, device=ref.device)
    return clip_and_sum(segment_sum(per_row, seg, int(n_groups), scale), max_grad_norm)


def _padded(seg: np.ndarray, n_groups: int) -> tuple[np.ndarray, int]:
    """Each row's position within its patient, and the largest patient's row count."""
    order = np.argsort(seg, kind="stable")
    counts = np.bincount(seg, minlength=n_groups)
    starts = np.r_[0, np.cumsum(counts)[:-1]]
    pos = np.empty_like(seg)
    pos[order] = np.arange(seg.shape[0]) - starts[seg[order]]
    return pos, int(counts.max()) if counts.size else 0


def _per_group_layer_grads(layers, masks, acts, gouts, seg, n_groups, scale):
    """``{param name: (n_groups, *shape)}``: each patient's scaled gradient sum, from the
    book-keeping terms (``G_p = sum_{i in p} g_i a_i^T``, a batched matrix product over
    patients padded to their row count: memory per patient, not per row)."""
    pos, width = _padded(seg, n_groups)
    flat = torch.as_tensor(seg * width + pos, dtype=torch.long)
    out = {}
    for lname, layer in layers.items():
        a, g = acts[lname], gouts[lname] * scale
        flat_d = flat.to(a.device)
        prefix = f"{lname}." if lname else ""
        if layer.weight.requires_grad:
            ap = a.new_zeros((n_groups * width, a.shape[1])).index_copy_(0, flat_d, a)
            gp = g.new_zeros((n_groups * width, g.shape[1])).index_copy_(0, flat_d, g)
            ap = ap.reshape(n_groups, width, -1)
            gp = gp.reshape(n_groups, width, -1)
            w = torch.bmm(gp.transpose(1, 2), ap)
            out[prefix + "weight"] = w * masks[lname] if masks[lname] is not None else w
        bias = getattr(layer, "bias", None)
        if isinstance(bias, torch.Tensor) and bias.requires_grad:
            segd = torch.as_tensor(seg, dtype=torch.long, device=g.device)
            acc = g.new_zeros((n_groups, g.shape[1]))
            out[prefix + "bias"] = acc.index_add_(0, segd, g)
    return out


def ghost_group_clip_and_sum(
    module: nn.Module,
    loss_fn: Callable,
    inputs: torch.Tensor,
    *targets: torch.Tensor,
    seg,
    n_groups: int,
    max_grad_norm: float,
    scale: float = 1.0,
    layers: dict[str, nn.Module] | None = None,
) -> tuple[dict[str, torch.Tensor], torch.Tensor, int]:
    """Same result as ``group_clip_and_sum(per_sample_gradients(...), ...)`` for modules
    whose trainable parameters all sit in linear-like layers, without per-row gradients.

    The book-keeping terms of every row (its layer inputs ``a_i`` and output gradients
    ``g_i``, computed on the row alone, :func:`~skdp.training.ghost_clip_and_sum`) give
    each patient's weight gradient ``G_p = (sum_{i in p} g_i a_i^T) * M`` as one batched
    matrix product; the per-patient norm is the norm of that very tensor (no Gram-matrix
    cancellation: the clipped term's norm is at most ``C`` up to one rounding), and the
    clipped sum is ``sum_p c_p G_p``. Memory: one gradient per sampled patient, ``k``
    times less than per-row gradients of full patients.

    Parameters
    ----------
    module, loss_fn, inputs, *targets, layers
        As :func:`~skdp.training.ghost_clip_and_sum`.
    seg : array-like of int of shape (b,)
        The patient (``0 .. n_groups - 1``) of each row.
    n_groups : int
    max_grad_norm : float
    scale : float, default=1.0
        ``1 / k`` in the DP-SGD engine.

    Returns
    -------
    summed, norms, n_nonfinite
        As :func:`group_clip_and_sum`.
    """
    layers, masks = layer_masks(module, layers)
    n_groups = int(n_groups)
    if inputs.shape[0] == 0 or n_groups == 0:
        zero = torch.zeros(n_groups, dtype=inputs.dtype, device=inputs.device)
        return zero_sums(layers), zero, 0
    seg = np.asarray(seg, dtype=np.int64)
    acts, gouts = ghost_terms(module, loss_fn, layers, inputs, targets)
    per_group = _per_group_layer_grads(layers, masks, acts, gouts, seg, n_groups, scale)
    return clip_and_sum(per_group, max_grad_norm)
