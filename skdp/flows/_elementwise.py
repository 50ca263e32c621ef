"""Elementwise and permutation transforms (data-independent initialisation)."""

from __future__ import annotations

import torch
from torch import nn

from skdp.flows._base import Transform
from skdp.flows._made import resolve_order

__all__ = ["Affine", "InverseTransform", "Permutation"]


class Affine(Transform):
    """Elementwise affine transform with learnable location and log-scale.

    ``z = (x - loc) * exp(-log_scale)``, ``log|det dz/dx| = -sum(log_scale)``.

    Parameters
    ----------
    n_features : int
        Dimension ``d``.
    loc : float, default=0.0
        Initial location (same for every feature; fixed, never data-driven).
    log_scale : float, default=0.0
        Initial log-scale (fixed, never data-driven).

    Attributes
    ----------
    loc : torch.nn.Parameter of shape (d,)
    log_scale : torch.nn.Parameter of shape (d,)

    Notes
    -----
    This is the DP-safe replacement for BatchNorm/ActNorm (``normalization='affine'``): it does not
    mix records and its initialisation does not look at data.

    Examples
    --------
    >>> import torch
    >>> from skdp.flows import Affine
    >>> z, ladj = Affine(2, log_scale=1.0)(torch.ones(1, 2))
    >>> ladj.tolist()
    [-2.0]
    """

    def __init__(self, n_features: int, loc: float = 0.0, log_scale: float = 0.0) -> None:
        super().__init__(n_features)
        self.loc = nn.Parameter(torch.full((self.n_features,), float(loc)))
        self.log_scale = nn.Parameter(torch.full((self.n_features,), float(log_scale)))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        z = (x - self.loc) * torch.exp(-self.log_scale)
        ladj = (-self.log_scale).sum().expand(x.shape[:-1])
        return z, ladj

    def inverse_and_ladj(self, z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x = z * torch.exp(self.log_scale) + self.loc
        ladj = self.log_scale.sum().expand(z.shape[:-1])
        return x, ladj


class Permutation(Transform):
    """Fixed permutation of the features (volume preserving).

    ``z[..., i] = x[..., perm[i]]``.

    Parameters
    ----------
    n_features : int
        Dimension ``d``.
    permutation : None, "reversed" or permutation of ``0..d-1``, default="reversed"
        The fixed permutation (``None`` = identity). Stored as a long buffer.

    Attributes
    ----------
    permutation : torch.Tensor (buffer)
    inverse_permutation : torch.Tensor (buffer)
    """

    def __init__(self, n_features: int, permutation="reversed") -> None:
        super().__init__(n_features)
        perm = resolve_order(permutation, self.n_features)
        self.register_buffer("permutation", perm)
        self.register_buffer("inverse_permutation", torch.argsort(perm))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        z = x.index_select(-1, self.permutation)
        return z, torch.zeros(x.shape[:-1], dtype=x.dtype, device=x.device)

    def inverse_and_ladj(self, z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x = z.index_select(-1, self.inverse_permutation)
        return x, torch.zeros(z.shape[:-1], dtype=z.dtype, device=z.device)


class InverseTransform(Transform):
    """Swap the two directions of a transform.

    ``InverseTransform(t).forward = t.inverse_and_ladj`` and vice versa. An IAF layer is
    ``InverseTransform(MAFLayer(...))`` (Kingma et al. 2016): its sampling direction is then
    one parallel pass and its density direction is sequential.

    Parameters
    ----------
    transform : Transform
        The transform to invert (not copied).

    Attributes
    ----------
    transform : Transform

    Examples
    --------
    >>> import torch
    >>> from skdp.flows import Affine, InverseTransform
    >>> t = InverseTransform(Affine(1, log_scale=1.0))
    >>> t(torch.zeros(1, 1))[1].tolist()
    [1.0]
    """

    def __init__(self, transform: Transform) -> None:
        if not isinstance(transform, Transform):
            raise TypeError("transform must be a skdp.flows.Transform.")
        super().__init__(transform.n_features)
        self.transform = transform

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.transform.inverse_and_ladj(x)

    def inverse_and_ladj(self, z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.transform(z)
