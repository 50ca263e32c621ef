"""Ghost ("book-keeping") clipping: the exact clipped sum for linear-layer modules.

The clipped sum of per-record gradients without materialising them, for modules whose
trainable parameters all sit in linear or masked-linear layers (Bu et al. 2023).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
from torch import nn
from torch.func import grad, vmap

__all__ = [
    "GhostClippingUnsupported",
    "ghost_clip_and_sum",
    "ghost_terms",
    "layer_masks",
    "linear_layers",
    "zero_sums",
]


# ------------------------------------------------------------ ghost (book-keeping) path
def _is_linear_like(layer: nn.Module) -> bool:
    """``nn.Linear``, or a layer with ``weight`` (out, in), optional ``bias`` (out,) and a
    ``mask`` buffer of the weight's shape, declaring that it computes
    ``F.linear(x, weight * mask, bias)``.

    The declaration is not trusted for privacy (:func:`ghost_clip_and_sum` clips the term it
    computes by that term's exact norm, whatever the layer does);
    :class:`~skdp.training.DPSGDTrainer` checks it against per-sample gradients before using
    the ghost path.
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


def ghost_terms(
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


def layer_masks(
    module: nn.Module, layers: dict[str, nn.Module] | None
) -> tuple[dict[str, nn.Module], dict[str, torch.Tensor | None]]:
    """``(layers, {name: mask or None})`` of the book-keeping path (``None`` for
    ``nn.Linear``); :class:`GhostClippingUnsupported` when a parameter lives outside a
    linear-like layer or a mask is not finite."""
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
    return layers, masks


def zero_sums(layers: dict[str, nn.Module]) -> dict[str, torch.Tensor]:
    """A zero sum for every trainable parameter of ``layers`` (an empty batch)."""
    summed = {}
    for lname, layer in layers.items():
        for pname, p in layer.named_parameters(recurse=False):
            if p.requires_grad:
                summed[f"{lname}.{pname}" if lname else pname] = torch.zeros_like(p)
    return summed


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
    :class:`~skdp.training.DPSGDTrainer` detects before using this path, but its sensitivity
    still holds).

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
    layers, masks = layer_masks(module, layers)
    b = inputs.shape[0]
    if b == 0:
        zero = torch.zeros(0, dtype=inputs.dtype, device=inputs.device)
        return zero_sums(layers), zero, 0
    acts, gouts = ghost_terms(module, loss_fn, layers, inputs, targets)
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
