"""Per-sample gradients, and the check that a module treats every record on its own.

Per-record gradients with ``torch.func.vmap(torch.func.grad(...))`` over
``torch.func.functional_call`` (a microbatch loop is the reference). Every path runs the
module on each record alone (a batch of one), so a module that mixes the rows of a batch
cannot couple one record's clipped term to another record's.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn
from torch.func import functional_call, grad, vmap

__all__ = ["check_per_record_module", "per_sample_gradients"]


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
