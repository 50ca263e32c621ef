"""MADE: masked autoencoder for distribution estimation (Germain et al., 2015).

Masks as in Germain et al. (2015), with the sequential degrees of the DP-NF code of Su et al.
(2023).
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F

from skdp.flows._base import _check_n_features

__all__ = ["MaskedLinear", "MADE", "resolve_order"]

_ACTIVATIONS = {"relu": F.relu, "tanh": torch.tanh}


def resolve_order(order, n_features: int) -> torch.Tensor:
    """Turn an ``order`` argument into a long tensor of input degrees.

    Parameters
    ----------
    order : None, "reversed" or sequence/tensor of int
        ``None`` gives ``0, 1, ..., d-1``; ``"reversed"`` gives ``d-1, ..., 0``; otherwise a
        permutation of ``0..d-1`` where ``order[i]`` is the position of feature ``i`` in the
        autoregressive ordering.
    n_features : int
        ``d``.

    Returns
    -------
    torch.Tensor of shape (d,), dtype long
    """
    if order is None:
        return torch.arange(n_features)
    if isinstance(order, str):
        if order == "reversed":
            return torch.arange(n_features - 1, -1, -1)
        raise ValueError(f"order must be None, 'reversed' or a permutation, got {order!r}.")
    deg = torch.as_tensor(order).detach().to(device="cpu", dtype=torch.long).reshape(-1)
    if deg.numel() != n_features or not torch.equal(
        torch.sort(deg).values, torch.arange(n_features)
    ):
        raise ValueError(f"order must be a permutation of 0..{n_features - 1}.")
    return deg.clone()


class MaskedLinear(nn.Module):
    """Linear layer whose weight is multiplied by a fixed binary mask (a buffer).

    Parameters
    ----------
    mask : torch.Tensor of shape (out_features, in_features)
        Binary connectivity; stored as a floating buffer (never a parameter), so it follows
        ``.to(dtype)`` and per-sample gradient norms only count effective weights (masked entries
        always get a zero gradient).
    generator : torch.Generator, optional
        Source of the initial weights (``nn.Linear``'s default uniform init). ``None`` uses
        torch's default generator.

    Attributes
    ----------
    weight : torch.nn.Parameter of shape (out_features, in_features)
    bias : torch.nn.Parameter of shape (out_features,)
    mask : torch.Tensor (buffer)
    """

    def __init__(self, mask: torch.Tensor, generator: torch.Generator | None = None) -> None:
        super().__init__()
        mask = torch.as_tensor(mask, dtype=torch.get_default_dtype())
        out_features, in_features = mask.shape
        self.in_features = int(in_features)
        self.out_features = int(out_features)
        self.weight = nn.Parameter(torch.empty(out_features, in_features))
        self.bias = nn.Parameter(torch.empty(out_features))
        self.register_buffer("mask", mask.clone())
        self.reset_parameters(generator)

    def reset_parameters(self, generator: torch.Generator | None = None) -> None:
        """Re-initialise like ``nn.Linear`` (uniform in ``±1/sqrt(fan_in)``), data-independent."""
        bound = 1.0 / math.sqrt(self.in_features) if self.in_features > 0 else 0.0
        with torch.no_grad():
            nn.init.uniform_(self.weight, -bound, bound, generator=generator)
            nn.init.uniform_(self.bias, -bound, bound, generator=generator)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Return ``x @ (weight * mask).T + bias``."""
        return F.linear(x, self.weight * self.mask, self.bias)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}"


class MADE(nn.Module):
    """Masked autoencoder with the autoregressive property (Germain et al., 2015).

    Output block ``k`` (``k < n_outputs_per_feature``), entry ``i`` depends only on the input
    features ``j`` with ``order[j] < order[i]``; the feature first in the order gets outputs that
    are functions of nothing (bias-only).

    Parameters
    ----------
    n_features : int
        Input dimension ``d`` (``d = 1`` is allowed: all outputs are then bias-only).
    hidden_features : tuple of int
        Widths of the hidden layers (may be empty). For ``d >= 2`` every width must be at least
        ``d - 1`` so that every degree ``0..d-2`` has a hidden unit.
    n_outputs_per_feature : int, default=2
        Number of outputs per feature (2 for the affine MAF: shift ``mu`` and log-scale).
    order : None, "reversed" or permutation, default=None
        Input degrees: ``order[i]`` is feature ``i``'s position in the autoregressive order.
    activation : {"relu", "tanh"}, default="relu"
        Hidden non-linearity; the output layer is linear.
    generator : torch.Generator, optional
        Source of the initial weights (data-independent).
    zero_init_output : bool, default=False
        Initialise the output layer's weights and bias to zero (the outputs then start at 0).

    Attributes
    ----------
    input_degrees : torch.Tensor of shape (d,), dtype long (buffer)
    layers : torch.nn.ModuleList of MaskedLinear
        The hidden layers followed by the output layer.

    Notes
    -----
    Hidden degrees are assigned deterministically ("sequential", as in the code of Su et al.
    2023): in every hidden
    layer unit ``u`` gets degree ``u mod (d - 1)``. Masks: hidden ``M[u, v] = 1[m(u) >= m(v)]``;
    output (strict) ``M[i, v] = 1[order[i] > m(v)]``, repeated for each output block. With no
    hidden layers the single masked layer has mask ``1[order[i] > order[j]]``. For ``d = 1``
    hidden units get degree 0 and the output mask is all zero.

    The output has shape ``(..., n_outputs_per_feature * d)``: block ``k`` occupies columns
    ``k*d .. (k+1)*d - 1`` (first ``mu``, then the log-scale, for the MAF).

    References
    ----------
    .. [1] M. Germain, K. Gregor, I. Murray, H. Larochelle, "MADE: Masked Autoencoder for
       Distribution Estimation", ICML 2015.

    Examples
    --------
    >>> import torch
    >>> from skdp.flows import MADE
    >>> made = MADE(3, (8,)).double()
    >>> made(torch.zeros(4, 3, dtype=torch.float64)).shape
    torch.Size([4, 6])
    """

    def __init__(
        self,
        n_features: int,
        hidden_features: tuple[int, ...] = (64,),
        n_outputs_per_feature: int = 2,
        order=None,
        activation: str = "relu",
        *,
        generator: torch.Generator | None = None,
        zero_init_output: bool = False,
    ) -> None:
        super().__init__()
        _check_n_features(n_features)
        hidden_features = tuple(int(h) for h in hidden_features)
        if any(h < 1 for h in hidden_features):
            raise ValueError("hidden_features must be positive integers.")
        if n_features >= 2 and any(h < n_features - 1 for h in hidden_features):
            raise ValueError(
                f"every hidden width must be >= n_features - 1 = {n_features - 1} "
                f"(got {hidden_features}); otherwise some conditionals lose inputs."
            )
        if int(n_outputs_per_feature) < 1:
            raise ValueError("n_outputs_per_feature must be a positive integer.")
        if activation not in _ACTIVATIONS:
            raise ValueError(
                f"activation must be one of {sorted(_ACTIVATIONS)}, got {activation!r}."
            )
        self.n_features = n_features
        self.hidden_features = hidden_features
        self.n_outputs_per_feature = int(n_outputs_per_feature)
        self.activation = activation
        self._act = _ACTIVATIONS[activation]

        deg_in = resolve_order(order, n_features)
        self.register_buffer("input_degrees", deg_in)
        degrees = [deg_in]
        for h in hidden_features:
            degrees.append(torch.arange(h) % max(n_features - 1, 1))
        masks = []
        for prev, nxt in zip(degrees[:-1], degrees[1:], strict=True):
            masks.append(nxt[:, None] >= prev[None, :])
        out_mask = deg_in[:, None] > degrees[-1][None, :]
        masks.append(out_mask.repeat(self.n_outputs_per_feature, 1))
        self.layers = nn.ModuleList(
            MaskedLinear(m.to(torch.get_default_dtype()), generator=generator) for m in masks
        )
        if zero_init_output:
            with torch.no_grad():
                self.layers[-1].weight.zero_()
                self.layers[-1].bias.zero_()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Return the conditioner outputs, shape ``(..., n_outputs_per_feature * d)``."""
        h = x
        for layer in self.layers[:-1]:
            h = self._act(layer(h))
        return self.layers[-1](h)
