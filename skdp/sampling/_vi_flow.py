"""DPFlowVI's public set-up: its default step count and its variational flow."""

from __future__ import annotations

import math

__all__ = ["build_vi_flow", "default_n_iter", "default_n_mc"]


def default_n_iter(n_iter, n, batch_size):
    """DP-SGD steps: ``n_iter``, or for ``None`` ``min(800, max(200, ceil(10 n / B)))``.

    A public rule: it reads the row count ``n`` (public under skdp's relation, and
    released by the sampling rate anyway) and the expected batch size ``B``.
    """
    if n_iter is None:
        return int(min(800, max(200, math.ceil(10 * n / batch_size))))
    return int(n_iter)


def default_n_mc(n_mc, private):
    """Monte Carlo draws per step: ``n_mc``, or for ``None`` 16 (private) or 100 (not).

    A public rule: it reads only whether the fit is private (``epsilon`` finite). A
    private step's cost is linear in the draws (the per-record chain rule) and its
    gradient noise is dominated by the DP noise; a non-private step costs about the same
    at any count, and the draws are its only noise besides the batch sampling.
    """
    if n_mc is None:
        return 16 if private else 100
    return int(n_mc)


def build_vi_flow(flow_kind, p, *, n_layers, hidden_size, normalization, generator):
    """The variational flow over ``p`` parameters (DPFlowVI's ``flow``, ``n_layers``,
    ``hidden_size`` and ``normalization`` parameters); no data is read."""
    from skdp.flows import Affine, Flow, make_flow

    if flow_kind == "planar":
        flow = make_flow("planar", p, n_layers=int(n_layers), generator=generator)
    else:
        hidden = hidden_size if hidden_size is not None else max(10, p)
        if flow_kind in ("iaf", "maf") and p > 1 and hidden < p - 1:
            raise ValueError(
                f"hidden_size={hidden} is too small for n_params={p}: an autoregressive "
                f"flow needs hidden_size >= {p - 1}"
            )
        flow = make_flow(
            flow_kind,
            p,
            n_layers=int(n_layers),
            hidden_features=(int(hidden),),
            generator=generator,
            zero_init_output=True,
        )
    if normalization == "affine":
        # first in the data -> latent order = last step of the sampling direction:
        # theta = loc + exp(log_scale) * F(z). (An affine placed inside an IAF would be
        # inverted, theta = (u - loc) exp(-log_scale), which couples location and scale
        # and makes small posterior scales unreachable at usual learning rates.)
        flow = Flow([Affine(p), *flow.transforms], n_features=p)
    return flow
