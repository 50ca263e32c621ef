"""Constrained transforms: a full-covariance affine layer and a sigmoid onto a box.

Used by the reverse-KL samplers of :mod:`skdp.variational`; they follow the :mod:`skdp.flows`
convention.

``forward(x) -> (z, log|det dz/dx|)`` maps a parameter vector to the latent space;
``inverse_and_ladj(z) -> (x, log|det dx/dz|)`` is the sampling direction.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from skdp.flows._base import Transform

__all__ = ["CholeskyAffine", "BoxSigmoid"]


class CholeskyAffine(Transform):
    """Full-covariance affine transform ``x = L z + loc`` (sampling direction).

    ``L`` is lower triangular with a positive diagonal ``exp(log_diag)``, so a standard normal
    ``z`` becomes ``N(loc, L L^T)``: on its own this layer represents every Gaussian exactly.

    Parameters
    ----------
    n_features : int
        Dimension ``d``.
    loc : array-like of shape (d,), optional
        Initial location (default 0).
    scale_tril : array-like of shape (d, d), optional
        Initial lower-triangular factor with a positive diagonal (default identity).

    Attributes
    ----------
    loc : torch.nn.Parameter of shape (d,)
    tril : torch.nn.Parameter of shape (d, d)
        Strictly lower part of ``L`` (the diagonal and upper part are unused).
    log_diag : torch.nn.Parameter of shape (d,)

    Examples
    --------
    >>> import torch
    >>> from skdp.flows import CholeskyAffine
    >>> t = CholeskyAffine(2, loc=[1.0, 2.0], scale_tril=[[2.0, 0.0], [1.0, 1.0]]).double()
    >>> x, ladj = t.inverse_and_ladj(torch.zeros(1, 2, dtype=torch.float64))
    >>> x.tolist(), round(float(ladj[0].detach()), 6)
    ([[1.0, 2.0]], 0.693147)
    """

    def __init__(self, n_features: int, loc=None, scale_tril=None) -> None:
        super().__init__(n_features)
        d = self.n_features
        loc_t = torch.zeros(d) if loc is None else torch.as_tensor(loc, dtype=torch.float64)
        L = torch.eye(d) if scale_tril is None else torch.as_tensor(scale_tril, dtype=torch.float64)
        if loc_t.shape != (d,) or L.shape != (d, d):
            raise ValueError("loc must have shape (d,) and scale_tril shape (d, d)")
        diag = torch.diagonal(L)
        if not bool((diag > 0).all()):
            raise ValueError("scale_tril must have a positive diagonal")
        dt = torch.get_default_dtype()
        self.loc = nn.Parameter(loc_t.to(dt).clone())
        self.tril = nn.Parameter(torch.tril(L, diagonal=-1).to(dt).clone())
        self.log_diag = nn.Parameter(torch.log(diag).to(dt).clone())
        self.register_buffer("_mask", torch.tril(torch.ones(d, d), diagonal=-1))

    def scale_tril(self) -> torch.Tensor:
        """The current factor ``L`` (lower triangular, positive diagonal)."""
        return self.tril * self._mask + torch.diag(torch.exp(self.log_diag))

    def inverse_and_ladj(self, z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        L = self.scale_tril()
        x = z @ L.T + self.loc
        return x, self.log_diag.sum().expand(z.shape[:-1])

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        L = self.scale_tril()
        r = (x - self.loc).unsqueeze(-1)
        z = torch.linalg.solve_triangular(L.expand(r.shape[:-2] + L.shape), r, upper=False)
        return z.squeeze(-1), (-self.log_diag.sum()).expand(x.shape[:-1])


class BoxSigmoid(Transform):
    """Fixed bijection between the open box ``(lo, hi)^d`` and ``R^d``.

    Sampling direction: ``x = lo + (hi - lo) * sigmoid(y)``; ``forward`` is the logit map.
    Put it first in a :class:`skdp.flows.Flow` (data -> latent order) to confine samples to a
    box (truncated targets).

    Parameters
    ----------
    n_features : int
    lo, hi : float or array-like of shape (d,)
        Public box, ``lo < hi``, finite.

    Examples
    --------
    >>> import torch
    >>> from skdp.flows import BoxSigmoid
    >>> t = BoxSigmoid(1, 0.0, 2.0).double()
    >>> t.inverse(torch.zeros(1, 1, dtype=torch.float64)).tolist()
    [[1.0]]
    """

    def __init__(self, n_features: int, lo=0.0, hi=1.0) -> None:
        super().__init__(n_features)
        lo_t = torch.as_tensor(lo, dtype=torch.float64).expand(self.n_features).clone()
        hi_t = torch.as_tensor(hi, dtype=torch.float64).expand(self.n_features).clone()
        if not bool(torch.isfinite(lo_t).all() and torch.isfinite(hi_t).all()):
            raise ValueError("box bounds must be finite")
        if not bool((lo_t < hi_t).all()):
            raise ValueError("box bounds need lo < hi")
        dt = torch.get_default_dtype()
        self.register_buffer("lo", lo_t.to(dt))
        self.register_buffer("hi", hi_t.to(dt))

    def inverse_and_ladj(self, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        width = self.hi - self.lo
        x = self.lo + width * torch.sigmoid(y)
        ladj = (torch.log(width) + F.logsigmoid(y) + F.logsigmoid(-y)).sum(-1)
        return x, ladj

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        width = self.hi - self.lo
        t = (x - self.lo) / width
        y = torch.log(t) - torch.log1p(-t)
        ladj = (-torch.log(width) - torch.log(t) - torch.log1p(-t)).sum(-1)
        return y, ladj
