"""RealNVP affine coupling flows (Dinh et al., 2017), without BatchNorm.

BatchNorm is left out because it mixes the rows of a batch (unusable under DP-SGD); the
direction convention is skdp's (:doc:`architecture`, "Flow direction").
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F

from skdp.flows._base import Flow, Transform, _check_n_features
from skdp.flows._elementwise import Affine
from skdp.flows._maf import _check_clamp, _stack, soft_clamp

__all__ = ["AffineCoupling", "RealNVP"]

_ACTIVATIONS = {"relu": F.relu, "tanh": torch.tanh}


def _init_linear(layer: nn.Linear, generator: torch.Generator | None) -> None:
    bound = 1.0 / math.sqrt(layer.in_features)
    with torch.no_grad():
        nn.init.uniform_(layer.weight, -bound, bound, generator=generator)
        nn.init.uniform_(layer.bias, -bound, bound, generator=generator)


class AffineCoupling(Transform):
    """Affine coupling layer with a fixed binary mask.

    With ``m`` the mask (1 = passed through, used as conditioner input)::

        (mu, a) = net(m * x);  alpha = (1 - m) * c * tanh(a / c);  mu = (1 - m) * mu
        z = m * x + (1 - m) * (x - mu) * exp(-alpha),   log|det dz/dx| = -sum(alpha)

    The inverse is parallel: ``x = m * z + (1 - m) * (z * exp(alpha) + mu)`` with the
    conditioner evaluated at ``m * z = m * x``.

    Parameters
    ----------
    n_features : int
        Dimension ``d``.
    mask : sequence of bool/int of length d
        Binary mask ``m``; stored as a buffer. It must contain at least one 0 (otherwise the layer
        is the identity); an all-zero mask gives an input-independent elementwise affine map.
    hidden_features : tuple of int, default=(64, 64)
        Hidden widths of the conditioner MLP.
    activation : {"relu", "tanh"}, default="relu"
    alpha_clamp : float or None, default=3.0
        Soft-clamp bound of the log-scale (see :class:`skdp.flows.MAFLayer`).
    generator : torch.Generator, optional
        Source of the initial weights.
    zero_init_output : bool, default=False
        Start as the identity map.

    Attributes
    ----------
    mask : torch.Tensor (buffer)
    net : torch.nn.ModuleList of torch.nn.Linear
        Conditioner layers; the last one outputs ``2 * d`` values (``mu`` then ``a``).
    """

    def __init__(
        self,
        n_features: int,
        mask,
        hidden_features: tuple[int, ...] = (64, 64),
        activation: str = "relu",
        alpha_clamp: float | None = 3.0,
        *,
        generator: torch.Generator | None = None,
        zero_init_output: bool = False,
    ) -> None:
        super().__init__(n_features)
        mask = torch.as_tensor(mask).detach().to("cpu").reshape(-1)
        if mask.numel() != self.n_features:
            raise ValueError(f"mask must have length n_features={self.n_features}.")
        if not bool(((mask == 0) | (mask == 1)).all()):
            raise ValueError("mask must be binary.")
        if bool((mask == 1).all()):
            raise ValueError("mask must leave at least one feature to transform.")
        if activation not in _ACTIVATIONS:
            raise ValueError(
                f"activation must be one of {sorted(_ACTIVATIONS)}, got {activation!r}."
            )
        hidden_features = tuple(int(h) for h in hidden_features)
        if any(h < 1 for h in hidden_features):
            raise ValueError("hidden_features must be positive integers.")
        self.alpha_clamp = _check_clamp(alpha_clamp)
        self.activation = activation
        self._act = _ACTIVATIONS[activation]
        self.register_buffer("mask", mask.to(torch.get_default_dtype()))
        widths = [self.n_features, *hidden_features, 2 * self.n_features]
        self.net = nn.ModuleList(
            nn.Linear(a, b) for a, b in zip(widths[:-1], widths[1:], strict=True)
        )
        for layer in self.net:
            _init_linear(layer, generator)
        if zero_init_output:
            with torch.no_grad():
                self.net[-1].weight.zero_()
                self.net[-1].bias.zero_()

    def _mu_alpha(self, x_masked: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = x_masked
        for layer in self.net[:-1]:
            h = self._act(layer(h))
        out = self.net[-1](h)
        d = self.n_features
        keep = 1.0 - self.mask
        mu = out[..., :d] * keep
        alpha = soft_clamp(out[..., d:], self.alpha_clamp) * keep
        return mu, alpha

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        mu, alpha = self._mu_alpha(x * self.mask)
        z = (x - mu) * torch.exp(-alpha)  # identity on masked coords: mu = alpha = 0 there
        return z, -alpha.sum(-1)

    def inverse_and_ladj(self, z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        mu, alpha = self._mu_alpha(z * self.mask)
        x = z * torch.exp(alpha) + mu
        return x, alpha.sum(-1)


class RealNVP(Flow):
    """RealNVP: a stack of :class:`AffineCoupling` layers with alternating binary masks.

    Layer ``k`` passes through the features ``i`` with ``(i + k) % 2 == 0`` and transforms the
    others, so consecutive layers swap roles (checkerboard masks).

    Parameters
    ----------
    n_features : int
        Data dimension ``d``. For ``d = 1`` there is nothing to condition on: every layer is then
        an input-independent elementwise :class:`Affine` map, and the flow's density is Gaussian
        (documented fallback).
    n_layers : int, default=6
        Number of coupling layers.
    hidden_features : tuple of int, default=(64, 64)
        Hidden widths of each conditioner MLP.
    activation : {"relu", "tanh"}, default="relu"
    alpha_clamp : float or None, default=3.0
        Soft-clamp bound of the log-scales.
    normalization : {"none", "affine"}, default="none"
        ``"affine"`` appends an :class:`Affine` layer (identity init) after each coupling layer.
        No BatchNorm (it mixes records; the original RealNVP uses it).
    generator : torch.Generator, optional
        Source of the initial weights.
    zero_init_output : bool, default=False
        Start every layer as the identity.

    Attributes
    ----------
    transforms : torch.nn.ModuleList
        The layers in data -> latent order.

    Notes
    -----
    Both directions are one parallel pass per layer (sampling is as fast as density
    evaluation), at the cost of less expressive layers than the MAF.

    References
    ----------
    .. [1] L. Dinh, J. Sohl-Dickstein, S. Bengio, "Density estimation using Real NVP",
       ICLR 2017.

    Examples
    --------
    >>> import torch
    >>> from skdp.flows import RealNVP
    >>> flow = RealNVP(3, n_layers=2, hidden_features=(8,)).double()
    >>> x = torch.randn(4, 3, dtype=torch.float64)
    >>> torch.allclose(flow.inverse(flow(x)[0]), x)
    True
    """

    def __init__(
        self,
        n_features: int,
        n_layers: int = 6,
        hidden_features: tuple[int, ...] = (64, 64),
        activation: str = "relu",
        alpha_clamp: float | None = 3.0,
        *,
        normalization: str = "none",
        generator: torch.Generator | None = None,
        zero_init_output: bool = False,
    ) -> None:
        _check_n_features(n_features)
        _check_clamp(alpha_clamp)  # the coupling layers check it too; here before any layer

        def layer(k):
            if n_features == 1:
                return Affine(1)
            mask = [(i + k) % 2 == 0 for i in range(n_features)]
            return AffineCoupling(
                n_features,
                mask,
                hidden_features,
                activation=activation,
                alpha_clamp=alpha_clamp,
                generator=generator,
                zero_init_output=zero_init_output,
            )

        super().__init__(_stack(n_features, n_layers, normalization, layer), n_features=n_features)
